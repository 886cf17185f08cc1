"""The Epilog's own check: processes of the job that just ended still holding a GPU. The next job
on the node then finds the GPU's memory taken ('CUDA out of memory' on an empty job, or 'all
CUDA-capable devices are busy' in exclusive mode).

nvidia-smi lists the compute processes; each is the job's when its environment carries the
job's SLURM_JOB_ID or its cgroup path names `job_<id>` (read from /proc as root, as an Epilog
runs). Without a job id (run by hand) every compute process counts.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from envcheck.slurm.nodes import run_bounded

QUERY = ["--query-compute-apps=pid,process_name,used_memory,gpu_bus_id", "--format=csv,noheader,nounits"]


@dataclass
class GpuProcess:
    pid: int
    name: str
    memory_mib: Optional[int]
    gpu: str

    def describe(self) -> str:
        mem = f"{self.memory_mib} MiB" if self.memory_mib is not None else "memory unknown"
        return f"{self.pid} {self.name} ({mem} on {self.gpu})"


def parse_compute_apps(text: str) -> List[GpuProcess]:
    """`nvidia-smi --query-compute-apps=pid,process_name,used_memory,gpu_bus_id
    --format=csv,noheader,nounits` lines -> processes ("[N/A]" memory in containers -> None)."""
    out = []
    for line in text.splitlines():
        pid, _, rest = line.partition(",")
        parts = [p.strip() for p in rest.rsplit(",", 2)]
        if len(parts) < 3 or not pid.strip().isdigit():
            continue
        mem = int(parts[1]) if parts[1].isdigit() else None
        out.append(GpuProcess(int(pid), parts[0] or "?", mem, parts[2]))
    return out


def belongs_to_job(pid: int, job_id: str, proc: str = "/proc") -> bool:
    try:
        with open(f"{proc}/{pid}/environ", "rb") as f:
            if f"SLURM_JOB_ID={job_id}".encode() in f.read().split(b"\0"):
                return True
    except OSError:
        pass
    try:
        with open(f"{proc}/{pid}/cgroup", encoding="utf-8", errors="replace") as f:
            return f"/job_{job_id}/" in f.read() + "/"
    except OSError:
        return False


def leftover(job_id: str, nvidia_smi: str, timeout: float, env: Optional[Dict[str, str]] = None,
             proc: str = "/proc") -> Tuple[Optional[List[GpuProcess]], str]:
    """(the job's GPU processes still running, '') or (None, why they could not be listed)."""
    if not os.path.isabs(nvidia_smi):
        from shutil import which
        found = which(nvidia_smi, path=(env or os.environ).get("PATH"))
        if not found:
            return None, f"{nvidia_smi} not found"
        nvidia_smi = found
    call = run_bounded([nvidia_smi, *QUERY], timeout, env)
    if not call.ok:
        return None, f"nvidia-smi --query-compute-apps: {call.why()}"
    procs = parse_compute_apps(call.stdout)
    if job_id:
        procs = [p for p in procs if belongs_to_job(p.pid, job_id, proc)]
    return procs, ""
