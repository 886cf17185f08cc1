"""bench/doctor_quick: wall time of `envcheck doctor --local --quick`, the form meant for a Slurm
node's HealthCheckProgram or prolog (Slurm kills those after 60 s; the target is a few seconds).

Runs the installed console script N times (the whole process: interpreter start, imports, the
probe, the rules), prints each time, the median and the max, and the verdict/exit code of the
last run. No network test and no GPU op are part of --quick; one `import torch` is (a PASS
says a rank can start).

Usage: python bench/doctor_quick.py [--runs 5] [--envcheck PATH] [--quick]   (--quick: 1 run, CI)
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--envcheck", default=str(Path(sys.executable).parent / "envcheck"))
    ap.add_argument("--quick", action="store_true", help="1 run (what CI runs, tests/test_bench.py)")
    a = ap.parse_args()
    if a.quick:
        a.runs = 1
    exe = a.envcheck if Path(a.envcheck).exists() else shutil.which("envcheck")
    if not exe:
        print("envcheck console script not found (pip install .)")
        return 2
    times, last = [], None
    for _ in range(a.runs):
        t0 = time.monotonic()
        last = subprocess.run([exe, "doctor", "--local", "--quick", "--json"], capture_output=True, text=True)
        times.append(time.monotonic() - t0)
    verdict = "?"
    try:
        import json
        verdict = json.loads(last.stdout)["verdict"]
    except Exception:  # noqa: BLE001 - a bench prints what it got
        pass
    print(f"envcheck doctor --local --quick, {a.runs} runs")
    print("  runs (s):  " + "  ".join(f"{t:.2f}" for t in times))
    print(f"  median:    {statistics.median(times):.2f} s")
    print(f"  max:       {max(times):.2f} s   (Slurm HealthCheckProgram/prolog limit: 60 s; target: a few s)")
    print(f"  last run:  verdict {verdict}, exit {last.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
