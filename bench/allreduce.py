"""bench/allreduce: the worker's busbw against a bare torch.distributed all_reduce loop.

Both run gloo with 2 ranks, on the same sizes (16, 64, 256 MiB float32), with the same warmup
and iterations, and take the slowest rank's mean time, as the worker does: by default 2 local
processes over loopback; with --cluster, 2 simulated hosts (network namespaces, real sshd; needs
root), one rank each, over real TCP between them — the worker through `envcheck nccl-test` over
SSH, the bare loop started in the same namespaces directly. The overhead of envcheck's harness (watchdog, launcher, check pass outside the
timed loop) should be within noise; target <= 5 %.

Usage: python bench/allreduce.py [--iters 5] [--warmup 2] [--repeat 2] [--cluster] [--quick]
(--quick: one 64 KiB size, 1 iteration, no warmup, one repetition: what CI runs, tests/test_bench.py)
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from envcheck.allreduce.run import Options, run_allreduce  # noqa: E402
from envcheck.allreduce.bandwidth import busbw  # noqa: E402
from envcheck.remote import LocalRemote  # noqa: E402

MIB = 1024 ** 2
SIZES = [16 * MIB, 64 * MIB, 256 * MIB]

BARE = textwrap.dedent("""
    import os, sys, time, json, torch, torch.distributed as dist
    dist.init_process_group("gloo", init_method="env://")
    warmup, iters = int(sys.argv[1]), int(sys.argv[2])
    for nbytes in [int(x) for x in sys.argv[3:]]:
        buf = torch.zeros(nbytes // 4)
        for _ in range(warmup):
            dist.all_reduce(buf)
        t0 = time.perf_counter()
        for _ in range(iters):
            dist.all_reduce(buf)
        t = torch.tensor([(time.perf_counter() - t0) / iters], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        if dist.get_rank() == 0:
            print(json.dumps({"bytes": nbytes, "seconds": t.item()}), flush=True)
    dist.destroy_process_group()
""")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def bare(warmup, iters, cluster=None):
    port = str(free_port())
    procs = []
    for rank in range(2):
        addr = cluster[0].ip if cluster else "127.0.0.1"
        env = dict(os.environ, MASTER_ADDR=addr, MASTER_PORT=port, RANK=str(rank),
                   WORLD_SIZE="2")
        if cluster:   # what the worker gets from the preflight's interface choice
            env["GLOO_SOCKET_IFNAME"] = "eth0"
        argv = [sys.executable, "-c", BARE, str(warmup), str(iters)] + [str(s) for s in SIZES]
        if cluster:   # into that host's namespaces, as its sshd would start it
            argv = ["nsenter", "-t", str(cluster[rank].anchor.pid), "-m", "-u", "-n"] + argv
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True))
    out = procs[0].communicate(timeout=900)[0]
    procs[1].wait(timeout=60)
    return {d["bytes"]: busbw(d["bytes"], d["seconds"], 2)
            for d in (json.loads(line) for line in out.splitlines() if line.strip())}


def worker(warmup, iters, cluster=None):
    opts = Options(backend="gloo", nproc_per_node=1 if cluster else 2, min_bytes=SIZES[0],
                   max_bytes=SIZES[-1], factor=4, warmup=warmup, iters=iters, timeout=300,
                   node_python=sys.executable)
    if cluster:
        from envcheck.hosts import SSHOptions, SSHRemote
        so = SSHOptions(ssh_config=str(cluster.ssh_config))
        remotes = [SSHRemote(h.name, so) for h in list(cluster)[:2]]
    else:
        remotes = [LocalRemote()]
    rep = run_allreduce(remotes, opts)
    if rep.failure:
        sys.exit(f"worker run failed: {rep.failure.message}")
    assert rep.wrong == 0
    return {r["bytes"]: r["busbw"] for r in rep.rows}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2, help="alternate runs; the best of each")
    ap.add_argument("--cluster", action="store_true", help="2 simulated hosts instead of local")
    ap.add_argument("--quick", action="store_true", help="64 KiB, 1 iteration, no warmup, 1 repetition (CI)")
    a = ap.parse_args()
    if a.quick:
        SIZES[:] = [64 * 1024]
        a.iters, a.warmup, a.repeat = 1, 0, 1
    cluster = None
    if a.cluster:
        from tests.cluster import sim
        why = sim.available()
        if why:
            sys.exit(f"--cluster: {why}")
        cluster = sim.make_cluster(2, expose=tuple(
            p for p in {sys.base_prefix, sys.prefix} if p.startswith(("/root/", "/usr/local/"))))
        cluster.trust_all_host_keys()
    try:
        run(a, cluster)
    finally:
        if cluster:
            cluster.close()


def run(a, cluster):
    runs_w, runs_b = {}, {}
    t0 = time.monotonic()
    for _ in range(a.repeat):   # alternate, so a noisy neighbour hurts both sides alike
        for k, v in worker(a.warmup, a.iters, cluster).items():
            runs_w.setdefault(k, []).append(v)
        for k, v in bare(a.warmup, a.iters, cluster).items():
            runs_b.setdefault(k, []).append(v)
    where = "2 simulated hosts x 1 rank" if cluster else "2 local ranks"
    print(f"all_reduce gloo, {where}, float32, warmup {a.warmup}, iters {a.iters}, "
          f"best of {a.repeat} ({time.monotonic() - t0:.0f} s; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    print(f"{'size':>8} {'worker busbw':>13} {'(range)':>13} {'bare busbw':>11} {'(range)':>13} "
          f"{'overhead':>9}")
    worst = None
    for s in SIZES:
        w, b = max(runs_w[s]), max(runs_b[s])
        over = (b - w) / b * 100 if b else 0.0
        worst = over if worst is None else max(worst, over)
        print(f"{s / MIB:>5.3g}MiB {w:>10.3f}GB/s {min(runs_w[s]):>6.3f}-{w:<6.3f} "
              f"{b:>7.3f}GB/s {min(runs_b[s]):>6.3f}-{b:<6.3f} {over:>8.1f}%")
    print(f"worst overhead {worst:.1f}% (target <= 5%): {'met' if worst <= 5 else 'NOT met'}; "
          "when the ranges overlap, the difference is noise")


if __name__ == "__main__":
    main()
