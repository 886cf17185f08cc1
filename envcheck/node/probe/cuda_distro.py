# envcheck probe, part cuda_distro: a distribution-packaged CUDA toolkit (Debian/Ubuntu's nvidia-cuda-toolkit)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
from run import ls, run, which


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
