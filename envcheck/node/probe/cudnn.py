# envcheck probe, part cudnn: cuDNN: headers and libraries, and the one in use
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
from base import section
from ldconfig import ldconfig_argv, ldconfig_libs, lib_version
from run import ls, read


@section("cudnn", needs=("cuda",), starts=ldconfig_argv)
def collect_cudnn_section(facts):
    return collect_cudnn(facts["cuda"] or {"toolkits": []}, ldconfig_libs())


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


def header_version(include):
    """The cuDNN the headers in `include` say (cudnn_version.h, else cudnn.h for 7.x), or None."""
    for name in ("cudnn_version.h", "cudnn.h"):
        text = read(os.path.join(include, name), 1 << 18)
        if text is not None:
            return parse_cudnn_header(text)
    return None


def parse_cudnn_header(text):
    """cudnn.h (7.x) or cudnn_version.h (8+) -> '7.6.5'; None when the macros are not there."""
    got = {}
    for key in ("MAJOR", "MINOR", "PATCHLEVEL"):
        m = re.search(r"#define\s+CUDNN_%s\s+(\d+)" % key, text or "")
        if not m:
            return None
        got[key] = m.group(1)
    return "%s.%s.%s" % (got["MAJOR"], got["MINOR"], got["PATCHLEVEL"])
