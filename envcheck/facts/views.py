"""Typed views of a facts document for the commands: what install-cuda, install-cudnn, env,
nccl-test, launch and doctor read from the probe, each read one way, here. A view never raises
on a odd document: what is missing or of the wrong type is None (or 0 GPUs, no interfaces).

One GPU count everywhere: the GPUs the driver lists (NVML, else nvidia-smi, as the probe read
them), the number `audit` shows and the number of ranks nccl-test and launch start.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from envcheck.facts.schema import Facts, _dict, _dicts, _get, _str, gpus, interfaces

__all__ = ["gpu_count", "interfaces", "Node", "node", "Privilege", "privilege", "Toolkit",
           "toolkit_at", "PathAt", "path_at", "tools", "GpuProcess", "gpu_processes", "TorchImport", "torch_import"]


def gpu_count(f: Facts) -> int:
    """How many GPUs the node's driver lists (0: none, or no driver answered)."""
    return len(gpus(f))


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


def node(f: Facts) -> Node:
    res = _dict(_get(f, "resources"))
    return Node(hostname=_str(_get(f, "hostname")) or "", gpus=gpu_count(f), interfaces=interfaces(f),
                free_port=_int(_get(f, "port", "free")), cpus=_int(res.get("cpus")),
                mem_available=_int(res.get("mem_available")), ib_ports=_dicts(_get(f, "ib_ports")))


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
class Toolkit:
    """A CUDA toolkit at a path, as the probe's toolkit section read it."""
    path: str
    exists: bool
    version: Optional[str]            # what the audit reads (version file, else nvcc, else cuda.h)
    version_file: Optional[str]       # "version.json" | "version.txt" | None
    file_version: Optional[str]       # as the file writes it (12.1.20230222 kept whole)
    nvcc_release: Optional[str]       # "12.1" from its own bin/nvcc -V


def toolkit_at(f: Facts, path: str) -> Optional[Toolkit]:
    """The toolkit section's entry for `path` (None: the probe was not asked about it)."""
    for t in _dicts(_get(f, "toolkit")):
        if t.get("path") == path:
            vf, nvcc = _dict(t.get("version_file")), _dict(t.get("nvcc"))
            return Toolkit(path, t.get("exists") is True, _str(t.get("version")), _str(vf.get("name")),
                           _str(vf.get("version")), _str(nvcc.get("release")))
    return None


@dataclass(frozen=True)
class PathAt:
    """What is at a path (the probe's disk section) and the free space where a file there goes."""
    path: str
    kind: Optional[str]               # dir | file | link | other | None (absent)
    link: Optional[str]
    uid: Optional[int]
    writable: bool
    free_bytes: Optional[int]


def path_at(f: Facts, path: str) -> Optional[PathAt]:
    for d in _dicts(_get(f, "disk")):
        if d.get("path") == path:
            kb = _int(d.get("free_kb"))
            return PathAt(path, _str(d.get("kind")), _str(d.get("link")), _int(d.get("uid")),
                          d.get("writable") is True, kb * 1024 if kb is not None else None)
    return None


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
