# envcheck probe, part ldconfig: the dynamic loader's cache (ldconfig -p), shared by the cuDNN and NCCL parts
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
from base import safely
from kept import WANTED_LIBS
from run import run, which


_LIBS = []   # the one `ldconfig -p` of a run, parsed (only the lines of WANTED_LIBS: part kept's)


def ldconfig_argv():
    ldc = which("ldconfig", ["/sbin", "/usr/sbin"])
    return [ldc, "-p"] if ldc else None


def ldconfig_libs():
    """The WANTED_LIBS `ldconfig -p` lists, read once per run ([] when it cannot run)."""
    if not _LIBS:
        ldc = ldconfig_argv()
        res = safely("ldconfig", lambda: run(ldc) if ldc else None)
        _LIBS.append(parse_ldconfig(res[1], WANTED_LIBS) if res and res[0] == 0 else [])
    return _LIBS[0]


def parse_ldconfig(text, wanted=None):
    """`ldconfig -p` -> [{"name": "libcudnn.so.7", "path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.7"}];
    with `wanted` (name prefixes), only the lines that mention one of them."""
    libs = []
    for line in (text or "").splitlines():
        if wanted and not any(w in line for w in wanted):
            continue
        m = re.match(r"^\s+(\S+)\s+\(([^)]*)\)\s+=>\s+(\S+)\s*$", line)
        if m:
            libs.append({"name": m.group(1), "flags": m.group(2), "path": m.group(3)})
    return libs


def lib_version(path, stem):
    """'/x/libcudnn.so.7.6.5', 'libcudnn' -> '7.6.5'; '/x/libcudnn.so' -> None."""
    m = re.match(r"^%s\.so\.(\d+(?:\.\d+)*)$" % re.escape(stem), os.path.basename(path or ""))
    return m.group(1) if m else None
