# envcheck probe, part cuda: CUDA toolkits and cuDNN
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

def toolkit_version(path):
    for name, parser in (("version.json", parse_version_json), ("version.txt", parse_version_txt)):
        text = read(os.path.join(path, name))
        if text is not None:
            v = parser(text)
            if v:
                return v, name, text.strip()[:2000]
            ERRORS.append("%s/%s: unreadable version (raw kept)" % (path, name))
    nvcc = os.path.join(path, "bin", "nvcc")
    res = run([nvcc, "-V"]) if os.access(nvcc, os.X_OK) else None
    parsed = parse_nvcc(res[1]) if res else None
    if parsed:
        return parsed["version"], "nvcc", res[1].strip()[:2000]
    v = parse_cuda_h(read(os.path.join(path, "include", "cuda.h"), 1 << 16))
    if v:
        return v, "cuda.h", None
    return None, None, (res[1] + res[2]).strip()[:2000] if res else None


def looks_like_toolkit(path):
    return any(os.path.exists(os.path.join(path, f))
               for f in ("version.json", "version.txt", os.path.join("include", "cuda.h")))


def collect_cuda():
    link = "/usr/local/cuda"
    target = os.path.realpath(link) if os.path.islink(link) or os.path.isdir(link) else None
    nvcc_path = which("nvcc")
    nvcc = {"path": nvcc_path, "version": None}
    if nvcc_path:
        res = run([nvcc_path, "-V"])
        parsed = parse_nvcc(res[1]) if res else None
        if parsed:
            nvcc.update(parsed)
            nvcc["host_compiler"] = nvcc_host_compiler(nvcc_path)
        elif res:
            nvcc["raw"] = (res[1] + res[2]).strip()[:2000]
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    nvcc_home = None
    if nvcc_path:
        real_bin = os.path.dirname(os.path.realpath(nvcc_path))
        if os.path.basename(real_bin) == "bin" and looks_like_toolkit(os.path.dirname(real_bin)):
            nvcc_home = os.path.dirname(real_bin)
    candidates = sorted(p for p in ls("/usr/local", r"^cuda-") if os.path.isdir(p))
    candidates += [p for p in (target, home, nvcc_home) if p and os.path.isdir(p)]
    toolkits, seen = [], set()
    for path in candidates:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        version, source, raw = toolkit_version(real)
        toolkits.append({"path": real, "version": version, "source": source, "raw": raw})
        toolkits[-1].update(toolkit_layout(real))
    by_path = dict((t["path"], t) for t in toolkits)
    in_use, via = None, None
    for path, how in ((nvcc_home, "PATH"), (home, "CUDA_HOME"), (target, "/usr/local/cuda")):
        if path and os.path.realpath(path) in by_path:
            in_use, via = by_path[os.path.realpath(path)], how
            break
    version = in_use["version"] if in_use else None
    if nvcc["version"] and (via != "PATH"):
        version, via = nvcc["version"], "PATH"  # an nvcc outside any toolkit tree still rules
        in_use = None
    return {"toolkits": toolkits, "symlink": {"path": link, "target": target}, "nvcc": nvcc,
            "version": version, "in_use": {"path": in_use["path"] if in_use else None, "via": via},
            "torch_cuda_home": torch_cuda_home()}


def collect_cudnn(cuda, ldconfig_libs):
    homes = [t["path"] for t in cuda["toolkits"]]
    dirs = [os.path.join(h, "include") for h in homes] + ["/usr/include"]
    dirs += ls("/usr/include", r"^[^.].*-linux-gnu$")
    headers, seen = [], set()
    for d in dirs:
        if os.path.realpath(d) in seen:
            continue
        seen.add(os.path.realpath(d))
        names = ["cudnn_version.h"] + [os.path.basename(p) for p in ls(d, r"^cudnn_version_v.*\.h$")]
        names.append("cudnn.h")  # 7.x keeps the macros here; 8+ only includes cudnn_version.h
        for name in names:
            path = os.path.join(d, name)
            text = read(path, 1 << 18)
            v = parse_cudnn_header(text) if text else None
            if v:
                headers.append({"path": path, "version": v})
                break
    libs, seen = [], set()
    paths = [l["path"] for l in ldconfig_libs if re.match(r"^libcudnn\.so(\.\d+)*$", l["name"])]
    for h in homes:
        paths += ls(os.path.join(h, "lib64"), r"^libcudnn\.so")
        paths += ls(os.path.join(h, "lib"), r"^libcudnn\.so")
    for p in paths:
        real = os.path.realpath(p)
        if real in seen or not os.path.exists(real):
            continue
        seen.add(real)
        libs.append({"path": p, "version": lib_version(real, "libcudnn") or lib_version(p, "libcudnn")})
    in_use_home = cuda.get("in_use", {}).get("path")
    version = None
    for h in headers:
        if in_use_home and h["path"].startswith(in_use_home.rstrip("/") + "/"):
            version = h["version"]
    if version is None and headers:
        system = [h for h in headers if h["path"].startswith("/usr/include")]
        version = (system or headers)[0]["version"]
    if version is None:
        full = [l["version"] for l in libs if l["version"] and l["version"].count(".") == 2]
        version = full[0] if full else None
    return {"version": version, "headers": headers, "libs": libs}
