"""The facts document: what the node-side probe prints, what `envcheck check` builds from flags,
what `--save` writes and `envcheck check FILE` reads. Plain JSON-able dicts, one schema.

Every key is optional: `check --cuda 10.0` gives a document with only the toolkit in it, and a
rule that needs a fact it does not have says nothing. A fact the probe could not read is None
(or missing) and, where it had raw text, that text is kept under "raw" so nothing is lost.

    {
      "schema": 1,
      "origin": "probe" | "flags",
      "probe": {"deep": bool, "seconds": float},   # how the probe ran (probe only)
      "hostname": str, "machine_id": str,
      "os": {"name": str, "version": str, "pretty": str, "kernel": str, "arch": str},
      "python": {"version": "3.7.3", "executable": str, "prefix": str},
      "driver": {"version": "410.48" | None,
                 "source": "nvml"|"nvml-ctypes"|"nvidia-smi"|"proc"|None,  # nvml: via pynvml;
                     # nvml-ctypes: the same libnvidia-ml.so.1 read with ctypes (no pynvml on the node)
                 "cuda": "10.0" | None,            # max CUDA the driver supports (NVML / nvidia-smi header)
                 "error": str | None, "raw": str | None,
                 "kernel_module": "410.48" | None,   # /proc/driver/nvidia/version, when loaded
                 "userspace": {"version": "535.261.03" | None,   # the installed NVML, read without
                     "source": "library-file"|"nvml-version"|"nvidia-smi"|None,   # the kernel module
                     "library": "/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.535.261.03"
                 } | None,                         # None: libnvidia-ml.so.1 does not load
                 "nvml_error": {"code": 9, "text": "Driver Not Loaded"} | None,
                 "smi_state": "module-not-loaded"|"mismatch"|None,   # what a failing nvidia-smi said
                 "state": "working"|"module-not-loaded"|"mismatch"|"no-userspace"|"module-only"|"unknown"},
      "gpus": [{"index": 0, "name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0" | None,
                "memory_mib": int | None, "uuid": str | None, "pci_bus_id": str | None}],
      "pci_gpus": [{"address": "0000:3b:00.0", "vendor_id": "0x10de", "device_id": "0x2330",
                    "class": "0x030200"}] | None,   # NVIDIA display devices in sysfs: there with
                    # or without a driver; None (or missing): not known (no readable sysfs).
                    # The controller adds "name", "chip", "compute_capability".
      "cuda": {
        "toolkits": [{"path": "/usr/local/cuda-10.0", "version": "10.0.130" | None,
                      "source": "version.json"|"version.txt"|"nvcc"|"cuda.h", "raw": str | None}],
        "symlink": {"path": "/usr/local/cuda", "target": "/usr/local/cuda-10.0" | None},
        "nvcc": {"path": str | None, "version": "10.0.130" | None,   # the nvcc first on PATH
                 "release": "10.0", "build": "10.0.130",   # `release X.Y, VZ` (V is nvcc's own from 11.0)
                 "host_compiler": {"path": str, "version": "11.4.0" | None,   # the compiler that nvcc
                     "how": "-ccbin in NVCC_PREPEND_FLAGS"|"NVCC_CCBIN"|"nvcc.profile PATH"|"PATH"}},
                     # itself will run: -ccbin in NVCC_{PREPEND,APPEND}_FLAGS, else NVCC_CCBIN,
                     # else gcc on the PATH that nvcc.profile beside the real nvcc builds
        "version": "10.0.130" | None,   # the toolkit in use (nvcc on PATH, else CUDA_HOME, else symlink)
        "in_use": {"path": str | None, "via": "PATH"|"CUDA_HOME"|"/usr/local/cuda"|None},
      },
      "cudnn": {
        "version": "7.6.5" | None,       # the system cuDNN in use (header next to the toolkit in use)
        "headers": [{"path": str, "version": "7.6.5" | None}],
        "libs": [{"path": str, "version": "7.6.5" | None}],        # from `ldconfig -p` / toolkit lib64
      },
      "packages": {"torch": {"version": "1.1.0+cu100", "location": str}, "torchvision": {...},
                   "torchaudio": {...}, "nvidia-cudnn-cu12": {...}, "nvidia-nccl-cu12": {...}, ...},
                   # a package installed twice: the first on sys.path wins, the others are
                   # listed under "shadows": [{"version", "location"}]
      "torch": {                          # derived: what torch is and which CUDA it was built for
        "version": "1.1.0", "local": "cu100" | "cpu" | None,
        "cuda": "10.0" | None, "cuda_source": "local-tag"|"deep"|"pypi-default"|"flag"|None,
      },
      "deep": {  # only with --deep: facts read by importing torch
        "torch": "1.1.0+cu100", "torch_cuda": "10.0", "cudnn": 7605, "nccl": "2.4.8",
        "cuda_available": bool, "device_count": int, "arch_list": ["sm_37", ...],
        "ops": [{"device": 0, "ok": bool, "error": str | None, "name": str, "capability": "7.0"}],
        "error": str | None,           # torch could not be imported / the check crashed or hung
        "errors": [str],               # single calls that failed (e.g. nccl on a CPU build)
      },
      "numpy": {"version": "2.0.2" | None, "location": str | None},   # the numpy torch's interpreter
                                          # imports (metadata, not imported); None: none installed
      "nccl": {"version": "2.4.8" | None, "source": "torch"|"libnccl"|"wheel"|"matrix"|None, "path": str,
             "note": str, "ignored": {"version", "source", "path"}},   # matrix: no --deep, torch
                                          # links NCCL statically, and the controller took the version
                                          # that build bundles from the matrix; ignored: what the probe
                                          # found that torch does not load (rules/nccl.py: torch_nccl)
      "gcc": {"version": "7.5.0" | None, "path": str | None},
      "cuda_compat": {                    # NVIDIA's forward-compatibility libcuda (cuda-compat-X-Y)
        "version": "550.54.15" | None,    # the driver the compat libcuda the loader takes was built
                                          # from; None: the loader takes the driver's own (or none)
        "path": str | None, "via": "LD_LIBRARY_PATH"|"ldconfig"|"flag"|None,
        "cuda": "12.4" | None,            # `check --cuda-compat 12.4`: the package's CUDA release
        "installed": [{"path": str, "version": str | None}],   # every compat libcuda on disk
      },                                  # absent: not known (check without --cuda-compat)
      "env": {"PATH": str, "LD_LIBRARY_PATH": str, "CUDA_HOME": str, "CUDA_PATH": str,
              "NCCL_SOCKET_IFNAME": str, "GLOO_SOCKET_IFNAME": str, ...},   # as the probe saw them:
                                                   # over SSH that is the NON-interactive environment
      "interfaces": [{"name": "eth0", "addrs": ["10.0.0.1/24"], "state": "up"|"down"|"unknown"|None,
                      "speed": 10000 | None}],   # Mb/s, sysfs speed
      "ib_ports": [{... as health.ib, "rate_gbps": 400.0}],   # only with --only ib: the active ports
      "torch_import": {"version": "2.3.1" | None, "error": str | None,   # only with --only torch_import:
                       "executable": str},   # `import torch` in a child of the probe's interpreter
      "health": {                         # hardware health (probe only; absent: not probed)
        "pci": [{"address": "0000:07:00.0", "vendor_id": "0x10de", "device_id": "0x20b2",
                 "class": "0x030200",      # NVIDIA VGA/3D functions on the bus, driver or not
                 "link": {"speed": "16.0 GT/s PCIe", "max_speed": "16.0 GT/s PCIe",
                          "width": 16, "max_width": 16}}],          # sysfs current_/max_link_*
        "kernel_log": {"source": "/dev/kmsg"|"dmesg"|"journalctl"|None, "error": str | None,
                       "events": [{"xid": 79, "pci": "0000:2b:00", "count": 1, "first": str,
                                   "last": str, "no_xid_line": bool,     # NVRM Xids since boot
                                   "first_s": float | None, "last_s": float | None}],  # logged at,
                       "dropped": int, "uptime_s": float | None},   # s since boot (kmsg/dmesg stamps)
        "ib": [{"device": "mlx5_0", "port": 1, "state": "4: ACTIVE", "phys_state": "5: LinkUp",
                "rate": "400 Gb/sec (4X NDR)", "link_layer": "InfiniBand"|"Ethernet"}],
        "modules": {"nvidia_peermem": bool, "nv_peer_mem": bool},   # GPUDirect RDMA loaded
        "nvswitches": int,                # NVIDIA bridge-class (0x0680) functions: NVSwitches
        "fabric_manager": {"running": bool, "version": str | None, "path": str | None},
                                          # only when nvswitches > 0
        "seconds": float,                 # what collecting all this cost
      },
      # and per GPU, from NVML (None: not supported by this GPU/driver):
      #   gpus[i]["health"] = {"ecc_mode": 0|1, "ecc": {"volatile_uncorrected": int,
      #     "aggregate_uncorrected": int, "volatile_corrected": int},
      #     "remapped_rows": {"correctable", "uncorrectable", "pending", "failure"} | None,
      #     "retired_pages_pending": 0|1, "throttle_reasons": int (nvmlClocksEventReasons bits),
      #     "temperature_c": int, "slowdown_temperature_c": int, "persistence_mode": 0|1,
      #     "mig_mode": 0|1, "compute_mode": 0..3,
      #     "nvlink": {"up": int, "down": [link, ...]} | None (no NVLink)}
      # only with --only nvlink (the rank commands' preflight), per GPU from NVML:
      #   gpus[i]["nvlink"] = {"links": int, "up": int, "nvml_version": int | None} | None (no NVLink)
      # and "nvlink": {"read": bool, "error": str | None}   # False: NVML did not answer, unknown
      "gpu_processes": {"processes": [{"pid": int, "name": str, "memory_mib": int | None, "gpu": str,
                                       "slurm_job": str | None}] | None, "error": str | None},
                                          # only with --only gpu_processes (slurm-check's Epilog)
      "errors": [str],                    # what the probe could not do, in one line each
    }

Rules read facts through the accessors below, never by digging, so the schema lives here once.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

Facts = Dict[str, Any]

SCHEMA = 1


def _get(facts: Facts, *path: str) -> Any:
    cur: Any = facts
    for p in path:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(p)
    return cur


# Accessors return the type the schema promises or nothing: a facts document from a broken probe
# or a hand-edited file must not crash a rule (a number becomes its text, anything else None).
def _str(v: Any) -> Optional[str]:
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return None


def text(v: Any) -> Optional[str]:
    """A field inside an accessor's dicts (gpu name, toolkit path …), typed like the accessors."""
    return _str(v)


def _dicts(v: Any) -> List[Dict[str, Any]]:
    return [x for x in v if isinstance(x, dict)] if isinstance(v, list) else []


def _dict(v: Any) -> Dict[str, Any]:
    return dict(v) if isinstance(v, dict) else {}


def driver_version(f: Facts) -> Optional[str]:
    return _str(_get(f, "driver", "version"))


def gpus(f: Facts) -> List[Dict[str, Any]]:
    return _dicts(_get(f, "gpus"))


def gpus_reported(f: Facts) -> bool:
    """Whether the document lists GPUs at all (an empty list: the probe looked and found none)."""
    return _get(f, "gpus") is not None


def cuda_version(f: Facts) -> Optional[str]:
    """The toolkit in use."""
    return _str(_get(f, "cuda", "version"))


def cuda_toolkits(f: Facts) -> List[Dict[str, Any]]:
    return _dicts(_get(f, "cuda", "toolkits"))


def cudnn_version(f: Facts) -> Optional[str]:
    return _str(_get(f, "cudnn", "version"))


def package_version(f: Facts, name: str) -> Optional[str]:
    return _str(_get(f, "packages", name, "version"))


def torch_version(f: Facts) -> Optional[str]:
    return _str(_get(f, "torch", "version"))


def torch_cuda(f: Facts) -> Optional[str]:
    return _str(_get(f, "torch", "cuda"))


def python_version(f: Facts) -> Optional[str]:
    return _str(_get(f, "python", "version"))


def python_executable(f: Facts) -> Optional[str]:
    return _str(_get(f, "python", "executable"))


def gcc_version(f: Facts) -> Optional[str]:
    return _str(_get(f, "gcc", "version"))


def installed_gccs(f: Facts) -> List[Dict[str, Any]]:
    """The versioned gcc-N the probe found on PATH ([{"path", "version"}])."""
    return _dicts(_get(f, "gcc", "installed"))


def env(f: Facts) -> Dict[str, str]:
    return {k: v for k, v in _dict(_get(f, "env")).items() if isinstance(k, str) and isinstance(v, str)}


def nccl_version(f: Facts) -> Optional[str]:
    return _str(_get(f, "nccl", "version"))


def nccl_source(f: Facts) -> Optional[str]:
    return _str(_get(f, "nccl", "source"))


def nccl(f: Facts) -> Dict[str, Any]:
    return _dict(_get(f, "nccl"))


def cuda_compat(f: Facts) -> Optional[Dict[str, Any]]:
    """The cuda-compat facts (see the schema); None when nobody looked (`check` without
    --cuda-compat, an older probe): whether forward compatibility can run is then unknown."""
    v = _get(f, "cuda_compat")
    return dict(v) if isinstance(v, dict) else None


def numpy_version(f: Facts) -> Optional[str]:
    """The numpy torch's interpreter imports (`check --numpy`, or the probe's package metadata)."""
    return _str(_get(f, "numpy", "version")) or package_version(f, "numpy")


# Accessors for the rules. Presence matters as much as value: a section the probe
# wrote but left empty ("the probe looked and found nothing") differs from one it never wrote
# (`check --cuda 10.0` says nothing about drivers).
def origin(f: Facts) -> Optional[str]:
    return _str(_get(f, "origin"))


def has(f: Facts, *path: str) -> bool:
    """Whether the document contains this key at all (its value may be None or empty)."""
    cur: Any = f
    for p in path:
        if not isinstance(cur, dict) or p not in cur:
            return False
        cur = cur[p]
    return True


def driver_error(f: Facts) -> Optional[str]:
    return _str(_get(f, "driver", "error"))


def torch_local(f: Facts) -> Optional[str]:
    return _str(_get(f, "torch", "local"))


def torch_cuda_source(f: Facts) -> Optional[str]:
    return _str(_get(f, "torch", "cuda_source"))


def _strings(d: Dict[str, Any]) -> Dict[str, Optional[str]]:
    return {k: _str(v) for k, v in d.items()}


def cuda_symlink(f: Facts) -> Dict[str, Optional[str]]:
    return _strings(_dict(_get(f, "cuda", "symlink")))


def nvcc(f: Facts) -> Dict[str, Optional[str]]:
    return _strings(_dict(_get(f, "cuda", "nvcc")))


def deep_cudnn(f: Facts) -> Optional[str]:
    """torch.backends.cudnn.version() from --deep, as X.Y.Z (8xxx: M*1000+m*100+p; 9xxxx: M*10000+m*100+p)."""
    v = _get(f, "deep", "cudnn")
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        return None
    if v >= 10000:
        return f"{v // 10000}.{v // 100 % 100}.{v % 100}"
    return f"{v // 1000}.{v // 100 % 10}.{v % 100}"


def host_compiler(f: Facts) -> Dict[str, Optional[str]]:
    """The host compiler nvcc will use ({} when the probe did not resolve it)."""
    return _strings(_dict(_get(f, "cuda", "nvcc", "host_compiler")))


def cudnn_libs(f: Facts) -> List[Dict[str, Any]]:
    return _dicts(_get(f, "cudnn", "libs"))


def cudnn_headers(f: Facts) -> List[Dict[str, Any]]:
    return _dicts(_get(f, "cudnn", "headers"))


def packages(f: Facts) -> Dict[str, Dict[str, Any]]:
    return {k: v for k, v in _dict(_get(f, "packages")).items() if isinstance(v, dict)}


def deep_arch_list(f: Facts) -> Optional[List[str]]:
    """torch.cuda.get_arch_list() as read by `--deep`; None without it."""
    arch = _get(f, "deep", "arch_list")
    return [a for a in arch if isinstance(a, str)] or None if isinstance(arch, list) else None


def deep_torch_cuda(f: Facts) -> Optional[str]:
    return _str(_get(f, "deep", "torch_cuda"))


def interfaces(f: Facts) -> List[Dict[str, Any]]:
    return _dicts(_get(f, "interfaces"))


# The driver's state (the probe's driver.state) decides which driver finding a host gets; facts
# from flags or from older probes have none, and the rules then judge the version alone.
DRIVER_STATES = ("working", "module-not-loaded", "mismatch", "no-userspace", "module-only", "unknown")


def driver_state(f: Facts) -> Optional[str]:
    state = _str(_get(f, "driver", "state"))
    return state if state in DRIVER_STATES else None


def driver_userspace(f: Facts) -> Dict[str, Optional[str]]:
    """The installed NVIDIA userspace ({} when none was found or the probe did not look)."""
    return _strings(_dict(_get(f, "driver", "userspace")))


def kernel_module(f: Facts) -> Optional[str]:
    return _str(_get(f, "driver", "kernel_module"))


def pci_gpus(f: Facts) -> Optional[List[Dict[str, Any]]]:
    """NVIDIA GPUs on the PCI bus: the GPU-identification list when the probe has one, else the
    health collector's; None when neither was read."""
    for path in (("pci_gpus",), ("health", "pci")):
        v = _get(f, *path)
        if isinstance(v, list):
            return _dicts(v)
    return None


def pci_links(f: Facts) -> List[Dict[str, Any]]:
    """[{"address": ..., "link": {"speed", "max_speed", "width", "max_width"}}] from sysfs."""
    return [d for d in _dicts(_get(f, "health", "pci")) if isinstance(d.get("link"), dict)]


def gpu_health(gpu: Dict[str, Any]) -> Dict[str, Any]:
    return _dict(gpu.get("health")) if isinstance(gpu, dict) else {}


def kernel_log(f: Facts) -> Dict[str, Any]:
    return _dict(_get(f, "health", "kernel_log"))


def xid_events(f: Facts) -> List[Dict[str, Any]]:
    return [e for e in _dicts(kernel_log(f).get("events")) if isinstance(e.get("xid"), int)]


def ib_ports(f: Facts) -> List[Dict[str, Any]]:
    return _dicts(_get(f, "health", "ib"))


def peer_memory_loaded(f: Facts) -> Optional[bool]:
    """nvidia_peermem (or the older nv_peer_mem) loaded; None when not probed."""
    mods = _get(f, "health", "modules")
    return any(bool(v) for v in mods.values()) if isinstance(mods, dict) else None


def nvswitches(f: Facts) -> int:
    n = _get(f, "health", "nvswitches")
    return n if isinstance(n, int) else 0


def fabric_manager(f: Facts) -> Dict[str, Any]:
    return _dict(_get(f, "health", "fabric_manager"))


def health_probed(f: Facts) -> bool:
    """The probe looked at the hardware (an older probe, or `check` flags, did not)."""
    return isinstance(_get(f, "health"), dict)
