#!/usr/bin/env python3
"""Wall time of a local `envcheck audit --json` (whole process, as a user runs it) and of the
bare probe, over N runs. Target: the audit under 3 s on a GPU-less machine.

Usage: python bench/audit_local.py [N]   (uses the `envcheck` next to this interpreter, else PATH)
"""
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

N = int(sys.argv[1]) if len(sys.argv) > 1 else 10
exe = Path(sys.executable).parent / "envcheck"
exe = str(exe) if exe.exists() else shutil.which("envcheck")
if not exe:
    sys.exit("bench/audit_local.py: no envcheck console script; pip install . first")
from envcheck.audit.probe import probe_source  # noqa: E402  (the script envcheck ships)

probe = probe_source().encode()


def timed(argv, stdin=None):
    t = time.perf_counter()
    p = subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.returncode


rows = [("envcheck audit --json", [exe, "audit", "--json"], None),
        ("python3 - < probe.py", ["python3", "-"], probe)]
print(f"{'what':<24} {'runs':>4} {'median s':>9} {'max s':>7}  exit")
for name, argv, stdin in rows:
    times, codes = [], set()
    for _ in range(N):
        dt, rc = timed(argv, stdin)
        times.append(dt)
        codes.add(rc)
    print(f"{name:<24} {N:>4} {statistics.median(times):>9.3f} {max(times):>7.3f}  {sorted(codes)}")
print(f"(cpus: {os.cpu_count()}; target: audit under 3 s)")
