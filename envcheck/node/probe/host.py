# envcheck probe, part host: the host: its name, machine id and OS, the interpreter, the environment
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
import sys
from base import safely, section
from run import read, which


ENV_NAMES = ("PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "VIRTUAL_ENV",
             "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "WORLD_SIZE", "RANK", "LOCAL_RANK",
             "OMP_NUM_THREADS")
TOOLS = ("curl", "wget")   # what a node downloads a runfile with
ENV_PREFIXES = ("CUDA_", "CUDNN_", "NCCL_", "GLOO_", "MASTER_", "TORCH_", "PYTORCH_", "NVIDIA_", "NVCC_")


def parse_os_release(text):
    out = {}
    for line in (text or "").splitlines():
        m = re.match(r'^([A-Z_][A-Z0-9_]*)=(.*)$', line.strip())
        if m:
            out[m.group(1)] = m.group(2).strip().strip('"').strip("'")
    return out


def collect_os():
    rel = parse_os_release(read("/etc/os-release") or "")
    uname = os.uname()
    return {"name": rel.get("NAME") or uname[0], "version": rel.get("VERSION_ID"),
            "pretty": rel.get("PRETTY_NAME"), "kernel": uname[2], "arch": uname[4]}


@section("host", keys=("hostname", "machine_id", "os"))
def collect_host(facts):
    return (safely("hostname", lambda: os.uname()[1]),  # = gethostname()
            safely("machine_id", lambda: (read("/etc/machine-id") or "").strip() or None),
            safely("os", collect_os))


@section("python")
def collect_python(facts):
    return {"version": sys.version.split()[0], "executable": sys.executable,
            "prefix": sys.prefix}


@section("resources")
def collect_resources(facts=None):
    """{"cpus", "mem_available"} (bytes, MemAvailable): what a launcher sizes its ranks by."""
    mem = None
    for line in (read("/proc/meminfo", 1 << 16) or "").splitlines():
        if line.startswith("MemAvailable:"):
            mem = int(line.split()[1]) * 1024
    return {"cpus": os.cpu_count(), "mem_available": mem}


@section("tools")
def collect_tools(facts=None):
    """Where the commands an installer would use are (None: not on PATH)."""
    return dict((name, which(name)) for name in TOOLS)


@section("env")
def collect_env(facts):
    return dict((k, v) for k, v in os.environ.items()
                if k in ENV_NAMES or k.startswith(ENV_PREFIXES))
