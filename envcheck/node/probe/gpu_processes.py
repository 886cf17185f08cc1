# envcheck probe, part gpu_processes: the compute processes holding a GPU now, each with the
# Slurm job it belongs to (its environment's SLURM_JOB_ID, else a `job_<id>` in its cgroup)
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import re
from base import section
from run import run

QUERY = ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory,gpu_bus_id",
         "--format=csv,noheader,nounits"]


def parse_compute_apps(text):
    """nvidia-smi's CSV lines -> [{"pid", "name", "memory_mib", "gpu"}]; a name may hold commas,
    the memory may be "[N/A]" (None)."""
    out = []
    for line in (text or "").splitlines():
        pid, _, rest = line.partition(",")
        parts = [p.strip() for p in rest.rsplit(",", 2)]
        if len(parts) < 3 or not pid.strip().isdigit():
            continue
        out.append({"pid": int(pid), "name": parts[0] or "?",
                    "memory_mib": int(parts[1]) if parts[1].isdigit() else None, "gpu": parts[2]})
    return out


def slurm_job(pid, proc="/proc"):
    """The Slurm job id a process belongs to, or None (readable as root, as a Prolog runs)."""
    try:
        with open("%s/%d/environ" % (proc, pid), "rb") as f:
            for kv in f.read().split(b"\0"):
                if kv.startswith(b"SLURM_JOB_ID="):
                    return kv.split(b"=", 1)[1].decode("ascii", "replace")
    except (OSError, IOError):
        pass
    try:
        with open("%s/%d/cgroup" % (proc, pid)) as f:
            m = re.search(r"/job_(\d+)(?:/|$)", f.read(), re.M)
            return m.group(1) if m else None
    except (OSError, IOError):
        return None


@section("gpu_processes")
def collect_gpu_processes(facts=None):
    """{"processes": [{"pid", "name", "memory_mib", "gpu", "slurm_job"}] | None, "error": str|None}."""
    res = run(QUERY)
    if res is None:
        return {"processes": None, "error": "nvidia-smi not found or timed out"}
    if res[0] != 0:
        return {"processes": None, "error": "nvidia-smi exit %d: %s" % (res[0], (res[2] or res[1]).strip()[:200])}
    procs = parse_compute_apps(res[1])
    for p in procs:
        p["slurm_job"] = slurm_job(p["pid"])
    return {"processes": procs, "error": None}
