#!/usr/bin/env python3
"""install-cuda on 8 simulated hosts, then the same command again: the second run must upload
0 bytes and run 0 installers (facts say everything is in place). Prints wall time, bytes
uploaded, installer runs and SSH execs per host (from each sshd's own log) for both runs.

    python3 bench/provision_rerun.py [--hosts 8] [--pad-mb 64] [--quick]   (root; the simulated cluster)
    (--quick: 1 host, a 1 MB payload; prints the figures and exits 0 either way: what CI runs)
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.provision.standins import cuda_runfile, sha256  # noqa: E402
from tests.cluster import sim, standins  # noqa: E402

GCC7 = "#!/bin/sh\necho 7.5.0\n"


def envcheck_cmd():
    exe = Path(sys.executable).parent / "envcheck"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "envcheck"]


def setup(h):
    h.write_file("/usr/local/bin/gcc", GCC7, 0o755)
    standins.set_driver(h, "535.104.05", standins.gpu_list("V100", 8))


def run(c, argv):
    before = [h.exec_count() for h in c]
    t = time.perf_counter()
    p = subprocess.run(envcheck_cmd() + argv, capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t
    execs = [a - b for a, b in zip([h.exec_count() for h in c], before)]
    try:   # the JSON outcomes, not the human summary, whose wording may change
        nodes = json.loads(p.stdout)
    except ValueError:
        nodes = None
    if p.returncode != 0 or not isinstance(nodes, list):
        sys.exit(f"envcheck failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return wall, sum(n["bytes_uploaded"] for n in nodes), sum(n["installers_run"] for n in nodes), execs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--pad-mb", type=int, default=64, help="size of the stand-in runfile's payload")
    ap.add_argument("--quick", action="store_true", help="1 host, 1 MB, exit 0 either way (CI)")
    a = ap.parse_args()
    if a.quick:
        a.hosts, a.pad_mb = 1, 1
    why = sim.available()
    if why:
        sys.exit(f"bench/provision_rerun: the simulated cluster cannot run here: {why}")
    with tempfile.TemporaryDirectory(prefix="envcheck-bench-") as d:
        runfile = cuda_runfile(Path(d), "10.0.130", pad_bytes=a.pad_mb * 1024 * 1024)
        c = sim.make_cluster(a.hosts, per_host_setup=setup)
        try:
            c.trust_all_host_keys()
            argv = ["install-cuda", "10.0", c.hostlist, "--runfile", str(runfile), "--sha256", sha256(runfile),
                    "--ssh-config", str(c.ssh_config), "--tmpdir", "/tmp", "--json"]
            first = run(c, argv)
            second = run(c, argv)
        finally:
            c.close()
    size = runfile_size = first[1] // max(1, a.hosts)
    print(f"install-cuda 10.0 on {a.hosts} simulated hosts, stand-in runfile {runfile_size / 1e6:.1f} MB")
    print(f"{'run':<8}{'wall s':>8}{'bytes uploaded':>16}{'installers':>12}{'ssh execs/host':>16}")
    for label, (wall, up, inst, execs) in (("first", first), ("second", second)):
        per = f"{min(execs)}-{max(execs)}" if min(execs) != max(execs) else str(execs[0])
        print(f"{label:<8}{wall:>8.2f}{up:>16}{inst:>12}{per:>16}")
    ok = second[1] == 0 and second[2] == 0 and size > 0
    print("target: second run uploads 0 bytes and runs 0 installers:", "met" if ok else "NOT met")
    sys.exit(0 if ok or a.quick else 1)


if __name__ == "__main__":
    main()
