#!/usr/bin/env python3
"""A fleet audit at scale: `envcheck audit` of 256 simulated hosts in one run (real sshd in a
network namespace each, a driver stand-in with 8 A100s, CUDA 12.1 and cuDNN planted on each), its
wall time, the controller's CPU per host and peak memory, and the probe's share of all the CPU
the run took; beside it, in the same run on the same hosts, the anchors: OpenSSH's own client
running the same probe on every host (32 at a time), pyinfra reading one fact, ansible gathering
its facts (-m setup, 32 forks). The anchors are bench-only tools, never envcheck dependencies:
found next to this interpreter, on PATH or in $ENVCHECK_BENCH_TOOLS (bench/_tools.py); a missing
one is reported as missing.

    python3 bench/audit_scale.py [--hosts 256] [--forks 32] [--no-anchors] [--quick]   (root)

Every simulated node runs on this machine's cores: the nodes' CPU (each host's sshd and what its
sessions ran, from the listener's reaped-children time) is counted apart from the controller's
(the envcheck process: /usr/bin/time's user+sys and maximum resident set size). Per host: the
controller's CPU over the hosts, and beyond the first (the N-host run less a 1-host run: what one
more host costs). --quick: 4 hosts, OpenSSH as the only anchor (what CI runs, tests/test_bench.py).
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _tools  # noqa: E402
from envcheck.audit.probe import probe_command, shipped_source  # noqa: E402
from tests.cluster import sim, standins  # noqa: E402

HZ = os.sysconf("SC_CLK_TCK")
TIME = "/usr/bin/time"


def setup(h):
    standins.plant_driver(h, "535.104.05", standins.gpu_list("A100", 8))
    standins.plant_toolkit(h, "12.1.0")
    standins.plant_cudnn(h, "8.9.7", "/usr/local/cuda-12.1")


def envcheck_cmd():
    exe = Path(sys.executable).parent / "envcheck"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "envcheck"]


def node_cpu(c):
    """CPU seconds of every finished SSH session on every host (sshd, the shell, what ran)."""
    time.sleep(0.5)  # let the sessions just finished exit and be reaped
    total = 0.0
    for h in c:
        f = Path(f"/proc/{h.sshd.pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(f[13]) + int(f[14])) / HZ
    return total


TIMEFMT = "envcheck-bench-time %U %S %M"


def parse_time(stderr):
    """(CPU s, peak RSS MB) from /usr/bin/time -f TIMEFMT: the process and the children it waited
    for; the peak is the largest single process's."""
    line = [x for x in stderr.splitlines() if x.startswith("envcheck-bench-time ")][-1].split()
    return float(line[1]) + float(line[2]), int(line[3]) / 1024


def audit(c, hosts, forks):
    nodes, t = node_cpu(c), time.perf_counter()
    p = subprocess.run([TIME, "-f", TIMEFMT] + envcheck_cmd() + [
        "audit", "--ssh-config", str(c.ssh_config), "--json", "--forks", str(forks), "--connect-timeout", "30",
        "--timeout", "600", *hosts], capture_output=True, text=True, timeout=3600)
    wall = time.perf_counter() - t
    ctrl, rss = parse_time(p.stderr)
    doc = json.loads(p.stdout)
    probe_s = sum(((h.get("facts") or {}).get("probe") or {}).get("seconds") or 0 for h in doc["hosts"])
    bad = [h["host"] for h in doc["hosts"] if h.get("error")]
    return {"wall": wall, "rc": p.returncode, "ctrl": ctrl, "rss": rss, "nodes": node_cpu(c) - nodes,
            "probe_s": probe_s, "bad": bad, "note": "one process"}


def openssh(c, hosts, forks):
    """`ssh -F CONFIG HOST <the probe's command>` with the probe on stdin, `forks` at a time: the
    same work on the nodes as envcheck's audit, through OpenSSH's own client (curve25519)."""
    command, probe = probe_command(), shipped_source()
    nodes = node_cpu(c)

    def one(h):
        r = subprocess.run([TIME, "-f", TIMEFMT, "ssh", "-F", str(c.ssh_config), "-o", "ConnectTimeout=30", h,
                            command], input=probe, capture_output=True, text=True, timeout=600)
        return (r.returncode == 0 and r.stdout.strip().startswith("{"),) + parse_time(r.stderr)
    t = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(forks) as pool:
        got = list(pool.map(one, hosts))
    wall = time.perf_counter() - t
    return {"wall": wall, "rc": 0 if all(g[0] for g in got) else 1, "ctrl": sum(g[1] for g in got),
            "rss": max(g[2] for g in got), "nodes": node_cpu(c) - nodes,
            "note": f"{sum(g[0] for g in got)}/{len(hosts)} probes; peak: one ssh client, {forks} at once"}


def anchor(c, fn, hosts, note):
    nodes = node_cpu(c)
    got = fn(c, hosts, wrap=(TIME, "-f", TIMEFMT))
    if got is None:
        return {"missing": True}
    ctrl, rss = parse_time(got[2])
    return {"wall": got[0], "rc": got[1], "ctrl": ctrl, "rss": rss, "nodes": node_cpu(c) - nodes, "note": note}


def row(name, n, r, one=None):
    if r.get("missing"):
        return f"{name:<40} {n:>5}  not installed here: skipped"
    beyond = f"{(r['ctrl'] - one['ctrl']) / (n - 1) * 1000:>8.1f}" if one and n > 1 else f"{'-':>8}"
    return (f"{name:<40} {n:>5} {r['wall']:>7.1f} {r['rc']:>4} {r['ctrl']:>7.2f} {r['ctrl'] / n * 1000:>8.1f} "
            f"{beyond} {r['rss']:>7.0f} {r['nodes']:>7.1f}  {r.get('note', '')}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hosts", type=int, default=256)
    ap.add_argument("--forks", type=int, default=32)
    ap.add_argument("--no-anchors", action="store_true", help="envcheck only")
    ap.add_argument("--quick", action="store_true", help="4 hosts, OpenSSH the only anchor (CI)")
    a = ap.parse_args()
    if a.quick:
        a.hosts = 4
    why = sim.available() or (None if os.path.exists(TIME) else f"{TIME} is needed (apt-get install time)")
    if why:
        sys.exit(f"bench/audit_scale: {why}")
    load0, t = os.getloadavg()[0], time.perf_counter()
    c = sim.make_cluster(a.hosts, per_host_setup=setup, workers=32)
    build = time.perf_counter() - t
    rows = []
    try:
        c.trust_all_host_keys()
        names = c.names
        one = audit(c, names[:1], a.forks)
        full = audit(c, names, a.forks)
        rows += [row("envcheck audit", 1, one), row("envcheck audit", a.hosts, full, one)]
        rows.append(row(f"OpenSSH ssh, the same probe, {a.forks} at once", a.hosts, openssh(c, names, a.forks)))
        if not (a.quick or a.no_anchors):
            rows.append(row("pyinfra INVENTORY fact server.Os", a.hosts,
                            anchor(c, _tools.pyinfra_fact, names, "one process (gevent)")))
            rows.append(row(f"ansible all -m setup -f {a.forks}", a.hosts, anchor(
                c, lambda cl, hs, wrap: _tools.ansible_setup(cl, hs, a.forks, wrap), names,
                f"peak: its largest process, {a.forks} forks and their ssh at once")))
    finally:
        c.close()
    cpus = os.cpu_count() or 1
    print(f"{a.hosts} simulated hosts (8 x A100 stand-ins, CUDA 12.1, cuDNN 8.9.7 each) built in {build:.0f} s; "
          f"{cpus} CPUs shared by the controller and every node; load average {load0:.1f} at start, "
          f"{os.getloadavg()[0]:.1f} at end")
    print(f"{'run':<40} {'hosts':>5} {'wall s':>7} {'exit':>4} {'ctrl s':>7} {'ms/host':>8} {'beyond1':>8} "
          f"{'peak MB':>7} {'nodes s':>7}")
    print("\n".join(rows))
    node_share = full["nodes"] / (full["nodes"] + full["ctrl"]) if full["nodes"] + full["ctrl"] else float("nan")
    print(f"envcheck at {a.hosts}: {len(full['bad'])} host(s) not audited{': ' + ', '.join(full['bad'][:5]) if full['bad'] else ''}; "
          f"of the {full['ctrl'] + full['nodes']:.1f} s of CPU the run took, the nodes' SSH sessions and probes "
          f"took {node_share:.0%} ({full['nodes'] / a.hosts * 1000:.0f} ms per host), the controller the rest "
          f"({(full['ctrl'] - one['ctrl']) / max(1, a.hosts - 1) * 1000:.1f} ms per host beyond the first; "
          f"start-up {one['ctrl']:.2f} s); the probes' own wall time summed: {full['probe_s']:.1f} s; "
          f"CPU / cores bounds the wall time from below: {(full['ctrl'] + full['nodes']) / cpus:.1f} s")


if __name__ == "__main__":
    main()
