#!/usr/bin/env python3
"""envcheck probe: read what this node has for GPU training and print it as ONE JSON document.

Read-only. It writes nothing, installs nothing and sends nothing anywhere; it reads files, asks
the driver's NVML library (libnvidia-ml.so.1, through pynvml or ctypes, in a thread given up after
the timeout) and runs a few read-only commands, each with a timeout: nvidia-smi (only when NVML
did not answer), nvcc -V, ldconfig -p, gcc -dumpversion (and that of the compiler nvcc runs),
ip -o -4 addr, and dpkg-query for a distribution-packaged CUDA toolkit. It loads
libnvidia-ml.so.1 even without a kernel module, to tell which driver userspace is installed.
With --deep it also imports torch in a child process (so a crash or hang there cannot lose the
rest) and runs a tiny tensor op on every GPU.

Usage: python3 probe.py [--deep]     or, as envcheck ships it:  python3 - [--deep] < probe.py
Stdlib only, Python >= 3.6. Schema: envcheck/facts/schema.py. Imports nothing from envcheck.
"""
# Few and light imports on purpose: 32 nodes that share a machine, or one busy node, pay for
# every module (argparse, glob, shutil, platform, importlib.metadata cost ~40 ms of a ~100 ms run)
import json
import os
import re
import signal
import subprocess
import sys
import time

if sys.version_info < (3, 6):  # this file stays ASCII and parseable by 2.7 so it can say so
    sys.stderr.write("envcheck probe: needs Python >= 3.6, this is %s (%s); point "
                     "--node-python at a newer interpreter\n" % (sys.version.split()[0], sys.executable))
    sys.exit(3)

TIMEOUT = 15.0       # seconds for any one command (--timeout)
DEEP_FACTOR = 12     # --deep gets 12x that: CUDA init on many GPUs can be slow
ERRORS = []
ENV_NAMES = ("PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "PYTHONPATH", "VIRTUAL_ENV",
             "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "WORLD_SIZE", "RANK", "LOCAL_RANK",
             "OMP_NUM_THREADS")
ENV_PREFIXES = ("CUDA_", "CUDNN_", "NCCL_", "GLOO_", "MASTER_", "TORCH_", "PYTORCH_", "NVIDIA_", "NVCC_")
SMI_FIELDS = ["driver_version", "name", "compute_cap", "memory.total", "uuid", "pci.bus_id"]
# Facts beyond the core document: a part appends (key, fn); fn(facts) gets the document so far
# and returns the value stored under key. Each runs under safely(), so one failing part costs
# only its own key. This keeps every collector in its own file without editing collect().
SECTIONS = []
# Per-GPU facts read inside the driver part's NVML session (no second nvmlInit): (key, fn(nv, handle));
# fn's value goes under gpus[i][key]. Only NVML fills them: nvidia-smi alone gives none.
NVML_PER_GPU = []


def safely(name, fn, default=None):
    try:
        return fn()
    except Exception as e:  # one odd fact must never cost the whole document
        ERRORS.append("%s: %s: %s" % (name, type(e).__name__, e))
        return default
