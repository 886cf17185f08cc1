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
DISTRO_NVCC = "/usr/lib/nvidia-cuda-toolkit/bin/nvcc"


def installed_distro_root():
    """/usr when the distribution's toolkit is installed, whether or not its nvcc is first on PATH
    (a /usr/local/cuda-X.Y/bin before /usr/bin hides it from `which nvcc`, not from the disk)."""
    if os.access(DISTRO_NVCC, os.X_OK) and os.path.exists("/usr/include/cuda.h"):
        return "/usr"
    return None


def cudart_dirs():
    """Where the system's own libcudart.so* lie (multiarch first, then /usr/lib64)."""
    dirs = [d for d in ls("/usr/lib", r"^[^.].*-linux-gnu$") if has_cudart(d)]
    return dirs + [d for d in ("/usr/lib64",) if has_cudart(d)]


def has_cudart(d):
    """Whether directory `d` lists a libcudart.so*. The development link libcudart.so, looked up
    by name in a directory we may list, answers for every packaged toolkit; listing the multiarch
    directory (~1,200 entries) costs ~0.5 ms of CPU (bench/probe_cpu.py). Else the listing."""
    if os.access(d, os.R_OK) and os.path.lexists(os.path.join(d, "libcudart.so")):
        return True
    return bool(ls(d, r"^libcudart\.so"))


DPKG_STATUS = "/var/lib/dpkg/status"
DPKG_UPDATES = "/var/lib/dpkg/updates"


def distro_package(name):
    """The installed version of a dpkg package, or None (no dpkg, not installed). Read from dpkg's
    status file, what dpkg-query reads (it costs ~10 ms of CPU to parse all of it); dpkg-query
    itself where that is not the whole story: another admin directory, or changes dpkg has
    journalled in updates/ and not yet written back."""
    dq = which("dpkg-query", ["/usr/bin", "/bin"])
    if not dq:
        return None
    pending = ls(DPKG_UPDATES, r"^\d+$")
    data = None if pending or os.environ.get("DPKG_ADMINDIR") else read_bytes(DPKG_STATUS)
    if data is not None:
        status, version = dpkg_status_fields(data, name)
    else:
        res = run([dq, "-W", "-f=${Status}|${Version}", name])
        if not res or res[0] != 0:
            return None
        status, _, version = res[1].partition("|")
    return version.strip() or None if (status or "").strip() == "install ok installed" else None


def read_bytes(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def dpkg_status_fields(data, name):
    """(Status, Version) of package `name` in dpkg's status file (its bytes), (None, None) when
    it has no paragraph there. Only that paragraph is decoded: all of a status file, ~1 ms of CPU."""
    data = b"\n" + data
    at = data.find(("\nPackage: %s\n" % name).encode("utf-8"))  # only at the start of a line
    if at < 0:
        return None, None
    end = data.find(b"\n\n", at + 1)
    fields = {}
    for line in data[at + 1:end if end >= 0 else len(data)].decode("utf-8", "replace").splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in ("Status", "Version") and key not in fields:
            fields[key] = value
    return fields.get("Status"), fields.get("Version")


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
