"""The pair rounds on the simulated cluster (root): does `doctor` name the slow node, and only it,
and how long does it take; do healthy runs name nobody; what do the pairs save against bisection.

  healthy   N unshaped nodes (gloo on shared CPUs: the noisiest case), --runs times in a row
  slow      every link at 800 Mbit/s (tc), node05's at 40 Mbit/s (1/20)
  corrupt   3 nodes, node02's ranks contribute a wrong element: pairs vs --no-pairs (bisection)

Prints one line per doctor run: what it named, the pairs' median and lowest ratio, the wall time.
Run it with the suite's interpreter: .venv/bin/python bench/pairs.py [--nodes 8] [--runs 5]
[--only healthy,slow,corrupt] [--quick]; BENCH_PAIRS_KEEP=DIR keeps the JSON of every run that named a node.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.cluster import sim  # noqa: E402
from tests.cluster.fixtures import DEFAULT_EXPOSE  # noqa: E402

EXE = str(Path(sys.executable).parent / "envcheck")
PERTURB = "import os\nif 'RANK' in os.environ:\n    os.environ['ENVCHECK_TEST_PERTURB_RANK'] = os.environ['RANK']\n"


def doctor(c, *extra):
    t0 = time.monotonic()
    p = subprocess.run([EXE, "doctor", c.hostlist, "--ssh-config", str(c.ssh_config), "--node-python", sys.executable,
                        "--backend", "gloo", "--nproc-per-node", "1", "--max-bytes", "4M", "--collective-timeout", "30",
                        "--no-expect-gpus", "--no-deep", "--json", *extra], capture_output=True, text=True, timeout=900)
    wall = time.monotonic() - t0
    doc = json.loads(p.stdout)
    figs = doc["pairs"].get("figures", [])
    low = min((f["ratio"] for f in figs), default=None)
    named = [n["host"] + ":" + n["verdict"] for n in doc["nodes"] if n["verdict"] != "PASS"]
    if named and os.environ.get("BENCH_PAIRS_KEEP"):
        Path(os.environ["BENCH_PAIRS_KEEP"]).mkdir(exist_ok=True)
        (Path(os.environ["BENCH_PAIRS_KEEP"]) / f"doctor-{time.time():.0f}.json").write_text(p.stdout)
    print(f"  exit {p.returncode}  named {named or 'nobody'}  median {doc['pairs'].get('median_busbw', 0):.3g} GB/s  "
          f"lowest ratio {low if low is None else round(low, 2)}  retried {doc['pairs'].get('retried', 0)}  "
          f"{wall:.1f} s", flush=True)
    return doc, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=8)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="healthy,slow,corrupt")
    ap.add_argument("--quick", action="store_true", help="one healthy run on 3 nodes (what CI runs so the bench cannot rot)")
    args = ap.parse_args()
    if args.quick:
        args.nodes, args.runs, args.only = 3, 1, "healthy"
    if sim.available():
        sys.exit(f"bench/pairs.py: {sim.available()}")
    os.environ["PATH"] = f"{REPO}/.venv/bare/bin:" + os.environ["PATH"]   # a python3 without torch, as in the tests
    todo = args.only.split(",")
    c = sim.make_cluster(args.nodes, expose=DEFAULT_EXPOSE)
    try:
        c.trust_all_host_keys()
        if "healthy" in todo:
            print(f"healthy: {args.nodes} unshaped nodes, {args.runs} runs")
            for _ in range(args.runs):
                doctor(c)
        if "slow" in todo:
            print(f"slow: every link 800 Mbit/s, node05 40 Mbit/s, {args.runs} runs")
            for h in c:
                h.shape("800mbit", burst="512kb")
            c["node05"].shape("40mbit")
            for _ in range(args.runs):
                doctor(c)
            for h in c:
                h.unshape()
    finally:
        c.close()
    if "corrupt" in todo:
        c = sim.make_cluster(3, expose=DEFAULT_EXPOSE)
        try:
            c.trust_all_host_keys()
            h = c["node02"]
            h.write_file("/opt/fault/sitecustomize.py", PERTURB)
            h.write_file("/root/.bashrc", "export PYTHONPATH=/opt/fault\n" + h.read_file("/root/.bashrc"))
            print("corrupt: node02 on 3 nodes, named by the pairs")
            doctor(c)
            print("corrupt: node02 on 3 nodes, --no-pairs (bisection)")
            doctor(c, "--no-pairs")
        finally:
            c.close()


if __name__ == "__main__":
    main()
