"""Typed views of a facts document for the commands: what install-cuda, install-cudnn, env,
nccl-test, launch and doctor read from the probe, and what audit's facts table (report.py) shows
beyond the rules' accessors (facts/schema.py), each read one way, here. A view never raises
on a odd document: what is missing or of the wrong type is None (or 0 GPUs, no interfaces).

The sections a command asks for by name (`--only`), beside the audit's document: privilege
{"uid", "mode"}; login {"user", "uid", "home", "shell"}; per --path: disk [{"path", "kind",
"link", "real", "uid", "writable", "executable", "free_kb"}], toolkit [{"path", "exists",
"version", "source", "version_file": {"name", "version"}, "nvcc": {"release", "build",
"version"}, "cudnn"}], manifest [{"path", "lines"}], owner [{"path", "file", "package",
"version"}]; per --file: rcfile [{"given", "path", "kind", "link", "writable", "sha256", "text",
"utf8"}]; pip_cudnn [path]; tools {"curl", "wget"}; port {"free"}; resources {"cpus",
"mem_available"}; gpu_processes {"processes", "error"}.

One GPU count everywhere: the GPUs the driver lists (NVML, else nvidia-smi, as the probe read
them), the number `audit` shows and the number of ranks nccl-test and launch start.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from envcheck.facts.schema import Facts, _dict, _dicts, _get, _str, gpus, interfaces

__all__ = ["gpu_count", "gpu_models", "hostname", "machine_id", "arch", "interfaces", "Node", "node", "Privilege",
           "privilege", "Login", "login", "Toolkit", "toolkit_at", "PathAt", "path_at", "manifest_at", "Owner",
           "owner_at", "pip_cudnn", "RcFile", "rc_file", "tools", "GpuProcess", "gpu_processes", "TorchImport",
           "torch_import", "driver_reported", "driver_cuda", "driver_source", "pci_gpus_section", "cuda_in_use",
           "cudnn_torch_loads", "deep", "host_os", "python_executable", "gcc_path", "probe_errors"]


def gpu_count(f: Facts) -> int:
    """How many GPUs the node's driver lists (0: none, or no driver answered)."""
    return len(gpus(f))


def gpu_models(f: Facts) -> List[Tuple[str, Optional[str]]]:
    """(name, compute capability "X.Y" or None) of each GPU the driver lists, in its order."""
    return [(_str(g.get("name")) or "GPU", _str(g.get("compute_capability"))) for g in gpus(f)]


def hostname(f: Facts) -> Optional[str]:
    """The node's own name (uname -n), which launchers and `hostname`-keyed tools go by."""
    return _str(_get(f, "hostname"))


def machine_id(f: Facts) -> Optional[str]:
    """/etc/machine-id: the same on two nodes means one machine, or a cloned image."""
    return _str(_get(f, "machine_id"))


def arch(f: Facts) -> Optional[str]:
    """The machine (uname -m: x86_64, aarch64), from the host section."""
    return _str(_get(f, "os", "arch"))


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


@dataclass(frozen=True)
class Node:
    """What a rank launcher sizes and wires its ranks by."""
    hostname: str
    gpus: int
    interfaces: List[Dict[str, Any]]
    free_port: Optional[int]
    cpus: Optional[int]
    mem_available: Optional[int]      # bytes (MemAvailable)
    ib_ports: List[Dict[str, Any]]    # active InfiniBand/RoCE ports with rate_gbps (section ib)
    gpu_links: List[Dict[str, Any]]   # per GPU: name, compute_capability, nvlink (section nvlink)


def node(f: Facts) -> Node:
    res = _dict(_get(f, "resources"))
    return Node(hostname=hostname(f) or "", gpus=gpu_count(f), interfaces=interfaces(f),
                free_port=_int(_get(f, "port", "free")), cpus=_int(res.get("cpus")),
                mem_available=_int(res.get("mem_available")), ib_ports=_dicts(_get(f, "ib_ports")),
                gpu_links=[{"name": _str(g.get("name")), "compute_capability": _str(g.get("compute_capability")),
                            "nvlink": _dict(g.get("nvlink")) or None} for g in gpus(f)])


@dataclass(frozen=True)
class TorchImport:
    """Whether `import torch` works under the node interpreter (section torch_import)."""
    version: Optional[str]            # what torch.__version__ said; None: it did not import
    error: Optional[str]              # why not (the exception's last line, or the timeout)
    executable: str                   # the interpreter that tried, as sys.executable there


def torch_import(f: Facts) -> Optional[TorchImport]:
    """None when the probe was not asked (no torch_import section)."""
    t = _get(f, "torch_import")
    if not isinstance(t, dict):
        return None
    return TorchImport(_str(t.get("version")), _str(t.get("error")), _str(t.get("executable")) or "")


@dataclass(frozen=True)
class Privilege:
    uid: Optional[int]
    mode: str                          # root | sudo-nopasswd | sudo-password | none


def privilege(f: Facts) -> Privilege:
    p = _dict(_get(f, "privilege"))
    mode = _str(p.get("mode"))
    return Privilege(_int(p.get("uid")), mode if mode in ("root", "sudo-nopasswd", "sudo-password") else "none")


@dataclass(frozen=True)
class Login:
    """The login the probe ran as (the passwd entry)."""
    user: Optional[str]
    home: Optional[str]
    shell: Optional[str]              # the login shell: which start-up file it reads


def login(f: Facts) -> Login:
    d = _dict(_get(f, "login"))
    return Login(_str(d.get("user")), _str(d.get("home")), _str(d.get("shell")))


@dataclass(frozen=True)
class Toolkit:
    """A CUDA toolkit at a path, as the probe's toolkit section read it."""
    path: str
    exists: bool
    version: Optional[str]            # what the audit reads (version file, else nvcc, else cuda.h)
    version_file: Optional[str]       # "version.json" | "version.txt" | None
    file_version: Optional[str]       # as the file writes it (12.1.20230222 kept whole)
    nvcc_release: Optional[str]       # "12.1" from its own bin/nvcc -V
    cudnn: Optional[str]              # what its include/cudnn_version.h (cudnn.h) says


def _entry(f: Facts, section: str, path: str, key: str = "path") -> Optional[Dict[str, Any]]:
    """The entry of a per-path section for `path` (None: the probe was not asked about it)."""
    return next((d for d in _dicts(_get(f, section)) if d.get(key) == path), None)


def toolkit_at(f: Facts, path: str) -> Optional[Toolkit]:
    """The toolkit section's entry for `path` (None: the probe was not asked about it)."""
    t = _entry(f, "toolkit", path)
    if t is None:
        return None
    vf, nvcc = _dict(t.get("version_file")), _dict(t.get("nvcc"))
    return Toolkit(path, t.get("exists") is True, _str(t.get("version")), _str(vf.get("name")),
                   _str(vf.get("version")), _str(nvcc.get("release")), _str(t.get("cudnn")))


@dataclass(frozen=True)
class PathAt:
    """What is at a path (the probe's disk section) and the free space where a file there goes."""
    path: str
    kind: Optional[str]               # dir | file | link | other | None (absent)
    link: Optional[str]               # a link's target as written
    uid: Optional[int]                # of the path itself (a link's own owner)
    writable: bool
    free_bytes: Optional[int]
    real: Optional[str] = None        # every link resolved
    executable: bool = False


def path_at(f: Facts, path: str) -> Optional[PathAt]:
    d = _entry(f, "disk", path)
    if d is None:
        return None
    kb = _int(d.get("free_kb"))
    return PathAt(path, _str(d.get("kind")), _str(d.get("link")), _int(d.get("uid")), d.get("writable") is True,
                  kb * 1024 if kb is not None else None, _str(d.get("real")), d.get("executable") is True)


def manifest_at(f: Facts, path: str) -> Optional[List[str]]:
    """The lines of the install-cudnn manifest in the toolkit at `path` (None: there is none)."""
    lines = _dict(_entry(f, "manifest", path)).get("lines")
    return [x for x in lines if isinstance(x, str)] if isinstance(lines, list) else None


@dataclass(frozen=True)
class Owner:
    """The distribution package that owns a toolkit's bin/nvcc or include/cuda.h."""
    package: str
    version: Optional[str]
    file: Optional[str]

    def describe(self) -> str:
        return f"{self.package} {self.version}" if self.version else self.package


def owner_at(f: Facts, path: str) -> Optional[Owner]:
    """The package owning the toolkit at `path` (None: none does, or the probe was not asked)."""
    d = _dict(_entry(f, "owner", path))
    pkg = _str(d.get("package"))
    return Owner(pkg, _str(d.get("version")), _str(d.get("file"))) if pkg else None


def pip_cudnn(f: Facts) -> List[str]:
    """The cuDNN libraries pip installed on the probe's interpreter path."""
    v = _get(f, "pip_cudnn")
    return [p for p in v if isinstance(p, str)] if isinstance(v, list) else []


@dataclass(frozen=True)
class RcFile:
    """A shell start-up file as the probe's rcfile section read it (env's target)."""
    given: str
    path: str                         # where it really is (links resolved)
    kind: str                         # file | none | other | nohome (a ~/ path without HOME)
    link: str                         # no | in (home or /etc/profile.d) | out
    writable: bool                    # replaceable without root (its directory is writable)
    sha256: Optional[str]
    text: Optional[str]               # None: absent, not UTF-8, or too large
    utf8: bool


def rc_file(f: Facts, given: str) -> Optional[RcFile]:
    d = _entry(f, "rcfile", given, key="given")
    if d is None:
        return None
    return RcFile(given, _str(d.get("path")) or given, _str(d.get("kind")) or "none", _str(d.get("link")) or "no",
                  d.get("writable") is True, _str(d.get("sha256")), _str(d.get("text")), d.get("utf8") is not False)


def tools(f: Facts) -> Dict[str, Optional[str]]:
    """Where each tool the probe looked for is ({"curl": "/usr/bin/curl", "wget": None})."""
    return {k: _str(v) for k, v in _dict(_get(f, "tools")).items()}


@dataclass(frozen=True)
class GpuProcess:
    """A compute process holding a GPU (the probe's gpu_processes section), with its Slurm job."""
    pid: int
    name: str
    memory_mib: Optional[int]
    gpu: str
    slurm_job: Optional[str]

    def describe(self) -> str:
        mem = f"{self.memory_mib} MiB" if self.memory_mib is not None else "memory unknown"
        return f"{self.pid} {self.name} ({mem} on {self.gpu})"


def gpu_processes(f: Facts) -> "tuple[Optional[List[GpuProcess]], str]":
    """(the processes, '') or (None, why they could not be listed)."""
    sec = _dict(_get(f, "gpu_processes"))
    procs = sec.get("processes")
    if not isinstance(procs, list):
        return None, _str(sec.get("error")) or "the probe's gpu_processes section did not run"
    return [GpuProcess(p["pid"], _str(p.get("name")) or "?", _int(p.get("memory_mib")), _str(p.get("gpu")) or "?",
                       _str(p.get("slurm_job"))) for p in _dicts(procs) if _int(p.get("pid")) is not None], ""


# What audit's facts table (report.py) shows beyond the rules' accessors in schema.py.
def driver_reported(f: Facts) -> bool:
    """The document says anything about the driver (flags without --driver, an old file: not)."""
    return bool(_dict(_get(f, "driver")))


def driver_cuda(f: Facts) -> Optional[str]:
    """The newest CUDA the driver supports (NVML / the nvidia-smi header)."""
    return _str(_get(f, "driver", "cuda"))


def driver_source(f: Facts) -> Optional[str]:
    """How the driver was read: nvml, nvml-ctypes, nvidia-smi, proc."""
    return _str(_get(f, "driver", "source"))


def pci_gpus_section(f: Facts) -> List[Dict[str, Any]]:
    """The probe's pci_gpus section alone: the table shows what the GPU identification read,
    where schema.pci_gpus (the rules') falls back to the health collector's list."""
    return _dicts(_get(f, "pci_gpus"))


def cuda_in_use(f: Facts) -> Dict[str, Optional[str]]:
    """{"path", "via"}: where the toolkit in use is and how it was found ({}: none is)."""
    return {k: _str(v) for k, v in _dict(_get(f, "cuda", "in_use")).items()}


def cudnn_torch_loads(f: Facts) -> Dict[str, Any]:
    """{"version", "how", "from"}: the cuDNN torch loads, as facts/load.py derived it ({}: not known)."""
    return _dict(_get(f, "cudnn", "torch_loads"))


def deep(f: Facts) -> Dict[str, Any]:
    """What --deep read by importing torch, as torch said it ({}: audited without --deep)."""
    return _dict(_get(f, "deep"))


def host_os(f: Facts) -> Dict[str, Optional[str]]:
    """{"name", "version", "pretty", "kernel", "arch"} of the host section."""
    return {k: _str(v) for k, v in _dict(_get(f, "os")).items()}


def python_executable(f: Facts) -> Optional[str]:
    return _str(_get(f, "python", "executable"))


def gcc_path(f: Facts) -> Optional[str]:
    return _str(_get(f, "gcc", "path"))


def probe_errors(f: Facts) -> List[str]:
    """What the probe could not do, one line each."""
    v = _get(f, "errors")
    return [str(e) for e in v] if isinstance(v, list) else []
