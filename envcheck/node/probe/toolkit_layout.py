# envcheck probe, part toolkit_layout: a distribution-packaged CUDA toolkit (Debian/Ubuntu's
# nvidia-cuda-toolkit) and the CUDA_HOME that torch's cpp_extension derives
# Node side, stdlib only, Python >= 3.6. Not a module: envcheck ships the parts of
# envcheck/node/probe/ as ONE script (base, parse, run, the other parts A-Z, main last; see
# envcheck/audit/probe.py: probe_source()), so names defined in earlier parts are in scope.

# A packaged toolkit is spread over the system's own directories, not one tree: nvcc in /usr/bin
# (a wrapper for /usr/lib/nvidia-cuda-toolkit/bin/nvcc, whose nvcc.profile puts gcc/g++ wrappers
# first on its PATH), headers in /usr/include, libraries in the multiarch directory. Its root, as
# nvcc on PATH makes it, is /usr; /usr/lib/cuda holds links to part of it.
DISTRO_ROOTS = ("/usr", "/usr/lib/cuda")


def cudart_dirs():
    """Where the system's own libcudart.so* lie (multiarch first, then /usr/lib64)."""
    dirs = [d for d in ls("/usr/lib", r"^[^.].*-linux-gnu$") if ls(d, r"^libcudart\.so")]
    return dirs + [d for d in ("/usr/lib64",) if ls(d, r"^libcudart\.so")]


def distro_package(name):
    """The installed version of a dpkg package, or None (no dpkg, not installed)."""
    dq = which("dpkg-query", ["/usr/bin", "/bin"])
    res = run([dq, "-W", "-f=${Status}|${Version}", name]) if dq else None
    if not res or res[0] != 0:
        return None
    status, _, version = res[1].partition("|")
    return version.strip() or None if status.strip() == "install ok installed" else None


def toolkit_layout(path):
    """What a toolkit entry gains when it is the distribution's: {"layout": "distro", "package",
    "include", "lib"}; nothing for a toolkit in a tree of its own."""
    if path not in DISTRO_ROOTS:
        return {}
    version = distro_package("nvidia-cuda-toolkit")
    libs = cudart_dirs()
    return {"layout": "distro",
            "package": {"name": "nvidia-cuda-toolkit", "version": version} if version else None,
            "include": "/usr/include" if os.path.exists("/usr/include/cuda_runtime_api.h") else None,
            "lib": libs[0] if libs else None}


def torch_cuda_home():
    """CUDA_HOME as torch.utils.cpp_extension derives it (CUDA_HOME, else CUDA_PATH, else the
    parent of the directory of `which nvcc`, unresolved, else /usr/local/cuda if it exists):
    {"path", "via"}. With Debian's nvcc first on PATH that is /usr."""
    for name in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(name):
            return {"path": os.environ[name], "via": name}
    nvcc = which("nvcc")
    if nvcc:
        return {"path": os.path.dirname(os.path.dirname(nvcc)), "via": "nvcc on PATH"}
    if os.path.exists("/usr/local/cuda"):
        return {"path": "/usr/local/cuda", "via": "/usr/local/cuda"}
    return {"path": None, "via": None}


def real_nvcc(nvcc_path):
    """The nvcc binary behind `nvcc_path`: links resolved, and a shell wrapper (Debian's
    /usr/bin/nvcc: `exec /usr/lib/nvidia-cuda-toolkit/bin/nvcc "$@"`) followed once."""
    real = os.path.realpath(nvcc_path)
    head = read(real, 4096) or ""
    if head.startswith("#!"):
        m = re.search(r"^\s*exec\s+(/\S+/nvcc)\b", head, re.M)
        if m and os.access(m.group(1), os.X_OK):
            return os.path.realpath(m.group(1))
    return real


def profile_path_dirs(profile_text, here):
    """The directories nvcc.profile puts first on nvcc's PATH (`PATH += dir:` prepends)."""
    dirs = []
    for line in (profile_text or "").splitlines():
        m = re.match(r"^\s*PATH\s*\+=\s*(\S+)", line)
        if m:
            for d in m.group(1).replace("$(_HERE_)", here).split(":"):
                if d and "$" not in d:
                    dirs.append(d)
    return dirs


def nvcc_host_compiler(nvcc_path):
    """{"path", "version", "how"}: the host compiler nvcc itself runs. -ccbin in
    NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS, else NVCC_CCBIN, else `gcc` on the PATH its nvcc.profile
    builds (Debian's puts gcc/g++ wrappers for g++-11 first), else the first gcc on PATH."""
    path, how = None, None
    for name in ("NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS"):
        m = re.search(r"(?:-ccbin|--compiler-bindir)[= ]\s*(\S+)", os.environ.get(name, ""))
        if m:
            path, how = m.group(1), "-ccbin in " + name
            break
    if path is None and os.environ.get("NVCC_CCBIN"):
        path, how = os.environ["NVCC_CCBIN"], "NVCC_CCBIN"
    if path is None:
        here = os.path.dirname(real_nvcc(nvcc_path))
        for d in profile_path_dirs(read(os.path.join(here, "nvcc.profile"), 1 << 16), here):
            if os.access(os.path.join(d, "gcc"), os.X_OK):
                path, how = os.path.join(d, "gcc"), "nvcc.profile PATH"
                break
    if path is None:
        path, how = which("gcc"), "PATH"
    elif "/" not in path:
        path = which(path) or path
    if os.path.isdir(path or ""):  # -ccbin may name the directory that holds gcc
        path = os.path.join(path, "gcc")
    res = run([path, "-dumpfullversion", "-dumpversion"]) if path else None
    return {"path": path, "version": _num(res[1]) if res and res[0] == 0 else None, "how": how}
