# envcheck probe, part userspace: which NVIDIA driver userspace is installed (read without the
# kernel module) and which of the driver's states the node is in
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
from kept import NVML_DRIVER_NOT_LOADED, NVML_LIB_RM_VERSION_MISMATCH
from ldconfig import lib_version
from run import read

# driver["state"]: what the rules tell apart, each with its own fix
#   working            NVML or nvidia-smi answered with a driver version
#   module-not-loaded  userspace installed (libnvidia-ml loads), no kernel module to talk to
#   mismatch           the loaded kernel module and the userspace are different versions
#   no-userspace       no libnvidia-ml, no nvidia-smi, no kernel module: a CPU machine, or no driver
#   module-only        a kernel module is loaded but no userspace answered (a container without it)
#   unknown            something else failed (NVML hung, an error we do not know)
# (NVML's codes for the two failures to start, NVML_DRIVER_NOT_LOADED and
# NVML_LIB_RM_VERSION_MISMATCH, are part kept's: it keeps them)


def parse_nvml_version(text):
    """nvmlSystemGetNVMLVersion: '12.535.261.03' -> '535.261.03' (NVML's own major, then the
    version of the driver the library belongs to, whose major has three digits); anything else,
    a bare driver version included, -> None."""
    m = re.match(r"^\d{1,2}\.(\d{3}\.\d{1,3}(?:\.\d{1,3})?)$", (text or "").strip())
    return m.group(1) if m else None


def parse_smi_failure(text):
    """What a failing nvidia-smi says -> (state, the library version it names or None)."""
    text = text or ""
    lib = re.search(r"NVML library version:\s*(\d+(?:\.\d+)+)", text)
    if "Driver/library version mismatch" in text or "NVML/RM version mismatch" in text:
        return "mismatch", lib.group(1) if lib else None
    if "couldn't communicate with the NVIDIA driver" in text or "Driver Not Loaded" in text:
        return "module-not-loaded", lib.group(1) if lib else None
    return None, lib.group(1) if lib else None


def mapped_file(stem):
    """The real path of a shared library this process has loaded, from /proc/self/maps: the file
    the loader really opened, whatever chain of links (/etc/alternatives ...) led there."""
    for line in (read("/proc/self/maps") or "").splitlines():
        parts = line.split(None, 5)  # address perms offset dev inode [path]
        path = parts[5].strip() if len(parts) == 6 else ""
        if os.path.basename(path).startswith(stem + ".so"):
            return path
    return None


def driver_file_version(path):
    """'/x/libnvidia-ml.so.535.261.03' -> '535.261.03'; a soname-only file ('.so.1') says nothing."""
    v = lib_version(path, "libnvidia-ml")
    return v if v and "." in v else None


def collect_userspace():
    """{"version", "source": "library-file"|"nvml-version", "library"} of the installed NVML, or
    None when libnvidia-ml.so.1 does not load. Needs no kernel module: loading the library and
    nvmlSystemGetNVMLVersion work without one.
    The library is loaded by _ctypes.dlopen, what ctypes.CDLL calls (RTLD_NOW | RTLD_LOCAL): the
    file name says the version on every packaged driver, and importing ctypes costs ~1.7 ms of
    CPU (bench/probe_cpu.py), paid only where the library is called (here, or NVML's session)."""
    import _ctypes
    try:
        _ctypes.dlopen("libnvidia-ml.so.1")
    except OSError:
        return None
    path = mapped_file("libnvidia-ml")
    out = {"version": driver_file_version(path), "source": "library-file", "library": path}
    if out["version"] is None:
        import ctypes
        lib = ctypes.CDLL("libnvidia-ml.so.1")   # loaded above: the same handle again
        if hasattr(lib, "nvmlSystemGetNVMLVersion"):
            buf = ctypes.create_string_buffer(80)
            if lib.nvmlSystemGetNVMLVersion(buf, 80) == 0:
                out["version"] = parse_nvml_version(buf.value.decode("ascii", "replace"))
                out["source"] = "nvml-version"
    if out["version"] is None:
        out["source"] = None
    return out


def driver_state(driver, smi_found):
    """One of the states above, from what collect_driver gathered."""
    if driver.get("version") and driver.get("source") != "proc":
        return "working"
    user = (driver.get("userspace") or {}).get("version")
    module = driver.get("kernel_module")
    nvml_code = (driver.get("nvml_error") or {}).get("code")
    smi_state = driver.get("smi_state")
    if nvml_code == NVML_LIB_RM_VERSION_MISMATCH or smi_state == "mismatch" or \
            (user and module and user != module):
        return "mismatch"
    if module:
        return "module-only" if not driver.get("userspace") and not smi_found else "unknown"
    if nvml_code == NVML_DRIVER_NOT_LOADED or smi_state == "module-not-loaded":
        return "module-not-loaded"
    if not driver.get("userspace") and not smi_found:
        return "no-userspace"
    return "unknown"


def nvml_error(e):
    """{"code", "text"} of an NVML failure (pynvml's NVMLError or NvmlCtypes'), or None."""
    code = getattr(e, "code", None)
    if code is None:
        code = getattr(e, "value", None)  # pynvml's NVMLError
    if not isinstance(code, int):
        return None
    text = str(e).split(": ", 1)[-1]
    return {"code": code, "text": text}
