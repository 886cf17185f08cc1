# envcheck probe, part nvcc: nvcc: its version, and the host compiler it runs
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
from base import first_number
from run import read, run, which


def parse_nvcc(text):
    """`nvcc -V` -> {"release": "12.1", "build": "12.1.66", "version": toolkit version}.
    Up to 10.2 the V number is the toolkit version; from 11.0 it is nvcc's own component
    version (12.1.0 ships V12.1.66), so only the release X.Y is the toolkit's."""
    m = re.search(r"release (\d+\.\d+), V(\d+(?:\.\d+)+)", text or "")
    if not m:
        return None
    release, build = m.group(1), m.group(2)
    version = build if int(release.split(".")[0]) <= 10 else release
    return {"release": release, "build": build, "version": version}


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
    return {"path": path, "version": first_number(res[1]) if res and res[0] == 0 else None, "how": how}
