# envcheck probe, part cuda_compat: NVIDIA's CUDA forward-compatibility libraries (cuda-compat)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import sys
from base import section
from ldconfig import ldconfig_argv, ldconfig_libs, lib_version
from run import ls

# The cuda-compat-X-Y package puts a libcuda built from a newer driver in /usr/local/cuda-X.Y/compat
# (NGC containers: /usr/local/cuda/compat/lib); conda-forge's cuda-compat in $PREFIX/cuda-compat.
# It runs that CUDA on an older driver branch of a data-center GPU only when the loader takes
# its libcuda.so.1 before the driver's own (LD_LIBRARY_PATH, or the ldconfig cache).
COMPAT_ROOTS = ("/usr/local",)
LIBCUDA = r"^libcuda\.so\.\d+\.\d+(?:\.\d+)?$"   # compiled where a compat directory is there


@section("cuda_compat", starts=ldconfig_argv)
def collect_cuda_compat_section(facts=None):
    return collect_cuda_compat(os.environ.get("LD_LIBRARY_PATH", ""), ldconfig_libs(), compat_dirs())


def is_compat_dir(path):
    return any(p in ("compat", "cuda-compat") for p in os.path.normpath(path).split(os.sep))


def compat_dirs(roots=COMPAT_ROOTS, prefix=sys.prefix):
    """The directories a cuda-compat package installs its libraries in, that exist here."""
    out = []
    for root in roots:
        for cuda in ls(root, r"^cuda(?:-\d+(?:\.\d+)?)?$"):
            for sub in ("compat", os.path.join("compat", "lib"), os.path.join("compat", "lib.real")):
                out.append(os.path.join(cuda, sub))
    out.append(os.path.join(prefix, "cuda-compat"))
    return [d for d in out if os.path.isdir(d)]


def compat_lib(directory):
    """{"path", "version"} of the versioned libcuda in a compat directory (the driver it was
    built from: libcuda.so.550.54.15), or None."""
    for path in [os.path.join(directory, "libcuda.so.1")] + ls(directory, LIBCUDA):
        real = os.path.realpath(path)
        if os.path.isfile(real):
            return {"path": real, "version": lib_version(real, "libcuda") or lib_version(path, "libcuda")}
    return None


def loaded_libcuda(ld_library_path, ldconfig_libs):
    """(directory, via) of the libcuda.so.1 the dynamic loader takes: the first LD_LIBRARY_PATH
    entry holding one, else the first the ldconfig cache lists; (None, None) when neither has it."""
    for entry in (ld_library_path or "").split(":"):
        if entry and os.path.exists(os.path.join(entry, "libcuda.so.1")):
            return entry, "LD_LIBRARY_PATH"
    cached = [lib for lib in ldconfig_libs if lib["name"] == "libcuda.so.1"]
    cached.sort(key=lambda lib: "64" not in lib.get("flags", ""))  # the 64-bit one, not i386's
    if cached:
        return os.path.dirname(cached[0]["path"]), "ldconfig"
    return None, None


def collect_cuda_compat(ld_library_path, ldconfig_libs, dirs):
    """{"version", "path", "via", "installed"}: the compat libcuda the loader takes (version: the
    driver it was built from; None when the loader takes the driver's own libcuda, or none), how
    it reaches the loader, and every compat libcuda installed here. Present with version None:
    the probe looked and no compat library is loaded, which differs from a document without it."""
    installed = []
    for d in dirs:
        lib = compat_lib(d)
        if lib and lib["path"] not in [i["path"] for i in installed]:
            installed.append(lib)
    directory, via = loaded_libcuda(ld_library_path, ldconfig_libs)
    lib = compat_lib(directory) if directory and is_compat_dir(directory) else None
    if lib is None:
        return {"version": None, "path": None, "via": None, "installed": installed}
    return {"version": lib["version"], "path": lib["path"], "via": via, "installed": installed}
