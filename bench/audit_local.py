#!/usr/bin/env python3
"""Wall time of a local `envcheck audit --json` (whole process, as a user runs it) and of the
bare probe as the audit ships it, over N runs. Target: the audit under 3 s on a GPU-less machine.

Usage: python bench/audit_local.py [N] [--quick]   (uses the `envcheck` next to this interpreter,
else PATH; --quick: 1 run, what CI runs, tests/test_bench.py)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

from envcheck.audit.probe import BOOTSTRAP, shipped_source  # the script envcheck ships


def timed(argv, stdin=None):
    t = time.perf_counter()
    p = subprocess.run(argv, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", nargs="?", type=int, default=10, help="runs of each (default 10)")
    ap.add_argument("--quick", action="store_true", help="1 run (CI)")
    a = ap.parse_args()
    n = 1 if a.quick else a.n
    exe = Path(sys.executable).parent / "envcheck"
    exe = str(exe) if exe.exists() else shutil.which("envcheck")
    if not exe:
        sys.exit("bench/audit_local.py: no envcheck console script; pip install . first")
    rows = [("envcheck audit --json", [exe, "audit", "--json"], None),
            ("python3 -c BOOTSTRAP < probe", ["python3", "-c", BOOTSTRAP], shipped_source().encode())]
    print(f"{'what':<30} {'runs':>4} {'median s':>9} {'max s':>7}  exit")
    for name, argv, stdin in rows:
        times, codes = [], set()
        for _ in range(n):
            dt, rc = timed(argv, stdin)
            times.append(dt)
            codes.add(rc)
        print(f"{name:<30} {n:>4} {statistics.median(times):>9.3f} {max(times):>7.3f}  {sorted(codes)}")
    print(f"(cpus: {os.cpu_count()}, load average {os.getloadavg()[0]:.1f}; target: audit under 3 s)")


if __name__ == "__main__":
    main()
