#!/usr/bin/env python3
"""Fleet audit fan-out on the simulated cluster: wall time of `envcheck audit` on 1, 8 and 32
hosts, SSH execs per host counted from each sshd's own log, versus a sequential `ssh` loop
running the same probe; a dead (hung) host's extra cost; ansible/pyinfra only when installed.

    python3 bench/audit_fanout.py [--quick]   (root; uses the envcheck next to this python)
    (--quick: 1 and 2 hosts, one run each, no Fabric/ansible/pyinfra: what CI runs, tests/test_bench.py)

Targets: 32 hosts in <= 1.5x the time of 1; exactly 1 exec per host; a hung host
adds no more than --connect-timeout.

Every simulated node runs on this machine's cores, so the audit rows are the median of 3 runs
with the 1-minute load average at their start, and the CPU they used is accounted: the
controller process (RUSAGE_CHILDREN) and each node's SSH sessions (its sshd listener's reaped
children: sshd, the shell, the probe and the probe's commands). CPU / cores is a floor on wall
time that no fan-out can beat, which is what bounds the 32-vs-1 ratio here.
"""
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.cluster import sim, standins  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _tools  # noqa: E402

from envcheck.audit.probe import probe_command, shipped_source  # noqa: E402
CONNECT_TIMEOUT = 2.0
REPEAT = 3


def envcheck_cmd():
    exe = Path(sys.executable).parent / "envcheck"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "envcheck"]


def setup(h):
    standins.plant_driver(h, "535.104.05", standins.gpu_list("A100", 8))
    standins.plant_toolkit(h, "12.1.0")
    standins.plant_cudnn(h, "8.9.7", "/usr/local/cuda-12.1")


def execs(c):
    return [h.exec_count() for h in c]


HZ = os.sysconf("SC_CLK_TCK")


def node_cpu(c):
    """CPU seconds of every finished SSH session on each host (sshd, the shell, the probe and its
    commands): the listener sshd's reaped-children time, /proc/PID/stat cutime + cstime."""
    time.sleep(0.3)  # let the sessions of the run just finished exit and be reaped
    out = []
    for h in c:
        try:
            f = Path(f"/proc/{h.sshd.pid}/stat").read_text().rsplit(")", 1)[1].split()
            out.append((int(f[13]) + int(f[14])) / HZ)
        except (OSError, AttributeError, IndexError, ValueError):
            out.append(float("nan"))
    return out


def children_cpu():
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def load1():
    return os.getloadavg()[0]


def audit(c, hosts, extra=()):
    """(wall s, exit code, execs per host, error tail, probe seconds summed, controller CPU s,
    node CPU s summed over the hosts, load average at the start)"""
    before, cpu_before, nodes_before, load = execs(c), children_cpu(), node_cpu(c), load1()
    t = time.perf_counter()
    p = subprocess.run(envcheck_cmd() + ["audit", "--ssh-config", str(c.ssh_config), "--json",
                                         "--connect-timeout", str(CONNECT_TIMEOUT), *extra, *hosts],
                       capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t
    ctrl = children_cpu() - cpu_before
    nodes = sum(a - b for a, b in zip(node_cpu(c), nodes_before))
    per = [a - b for a, b in zip(execs(c), before)]
    try:
        node_s = sum(((h.get("facts") or {}).get("probe") or {}).get("seconds") or 0
                     for h in json.loads(p.stdout)["hosts"])
    except ValueError:
        node_s = float("nan")
    err = p.stderr.strip().splitlines()[-1:] if p.returncode not in (0, 1, 3) else []
    return wall, p.returncode, per, err, node_s, ctrl, nodes, load


def ssh_loop(c, hosts):
    before = execs(c)
    probe, command = shipped_source(), probe_command()  # what envcheck audit sends
    t = time.perf_counter()
    for h in hosts:
        subprocess.run(["ssh", "-F", str(c.ssh_config), h, command], input=probe,
                       capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - t
    return wall, [a - b for a, b in zip(execs(c), before)]


def main():
    quick = "--quick" in sys.argv[1:]   # CI (tests/test_bench.py): 2 hosts, one run each, no anchors
    mid, big, repeat = (2, 2, 1) if quick else (8, 32, REPEAT)
    sizes = sorted({1, mid, big})
    why = sim.available()
    if why:
        sys.exit(f"bench/audit_fanout: {why}")
    load_start = os.getloadavg()[0]
    t = time.perf_counter()
    c = sim.make_cluster(big, per_host_setup=setup)
    build = time.perf_counter() - t
    rows = []
    try:
        c.trust_all_host_keys()
        names = c.names
        if not quick:
            audit(c, names[:1])  # warm the page cache and the interpreter once
        node_seconds, cpu = {}, {}
        for n in sizes:
            # the median of REPEAT runs: other work may share these cores
            runs = sorted((audit(c, names[:n]) for _ in range(repeat)), key=lambda r: r[0])
            wall, rc, per, err, node_s, ctrl, nodes, load = runs[len(runs) // 2]
            node_seconds[n], cpu[n] = node_s, (ctrl, nodes, load)
            sel = per[:n]
            rows.append((f"envcheck audit, {n} host(s)", wall, rc,
                         f"{min(sel)}..{max(sel)}" if sel else "-", err, load))
        # the transport alone: the same fan-out running `true` (in-process, no CLI start-up)
        from envcheck.hostlist import parse_targets
        from envcheck.hosts import SSHOptions, make_remotes
        from envcheck.remote import fan_out
        for n in (1, big):
            rs = make_remotes(parse_targets(names[:n]), SSHOptions(ssh_config=str(c.ssh_config)))
            before, load = execs(c), load1()
            t = time.perf_counter()
            res = fan_out(rs, lambda r: r.run("true"), 32)
            wall = time.perf_counter() - t
            [r.close() for r in rs]
            per = [a - b for a, b in zip(execs(c), before)][:n]
            rows.append((f"fan_out(run 'true'), {n} host(s)", wall, 0 if all(r.ok for r in res) else 1,
                         f"{min(per)}..{max(per)}", [], load))
        for n in sizes:
            load = load1()
            wall, per = ssh_loop(c, names[:n])
            rows.append((f"sequential ssh loop, {n} host(s)", wall, 0, f"{min(per[:n])}..{max(per[:n])}", [], load))
        # reference: a bare Fabric fan-out of one trivial command, whole process (the brief quotes
        # 1.6 s for 32 hosts on a testbed like this); Fabric accepts any host key, so no setup
        fab = ("import sys; from fabric import ThreadingGroup; "
               "g = ThreadingGroup(*sys.argv[2:], user='root', connect_kwargs={'key_filename': sys.argv[1]}); "
               "r = g.run('python3 -c pass', hide=True); sys.exit(0 if len(r.succeeded) == len(sys.argv) - 2 else 1)")
        for n in () if quick else (1, big):
            before, load = execs(c), load1()
            t = time.perf_counter()
            p = subprocess.run([sys.executable, "-c", fab, str(c.client_key), *[h.ip for h in c.hosts[:n]]],
                               capture_output=True, text=True, timeout=300)
            wall = time.perf_counter() - t
            per = [a - b for a, b in zip(execs(c), before)][:n]
            rows.append((f"bare Fabric fan-out 'python3 -c pass', {n}", wall, p.returncode, f"{min(per)}..{max(per)}", [], load))
        hung_host = c[min(3, mid - 1)]
        hung_host.freeze_sshd()
        try:
            wall, rc, per, err, _, _, _, load = audit(c, names[:mid])
        finally:
            hung_host.thaw_sshd()
        rows.append((f"envcheck audit, {mid} hosts, {hung_host.name} hung", wall, rc,
                     f"{min(per[:mid])}..{max(per[:mid])}", err, load))
        # the tools the issue compares against: bench-only, found on PATH or in
        # $ENVCHECK_BENCH_TOOLS / /opt/benchtools/bin (see bench/_tools.py), never dependencies
        for label, fn, n in () if quick else (("ansible all -m setup -f 32", _tools.ansible_setup, 32),
                                             ("pyinfra INVENTORY fact server.Os", _tools.pyinfra_fact, 32)):
            load = load1()
            got = fn(c, names[:n])
            if got is None:
                rows.append((f"{label.split()[0]}: not installed, skipped", float("nan"), None, "-", [], float("nan")))
            else:
                rows.append((f"{label}, {n}", got[0], got[1], "-", [], load))
    finally:
        c.close()
    load_end = os.getloadavg()[0]

    print(f"simulated cluster: {big} hosts built in {build:.2f} s; connect timeout {CONNECT_TIMEOUT:g} s; "
          f"{os.cpu_count()} CPUs; load average {load_start:.1f} at start, {load_end:.1f} at end")
    print(f"{'run':<42} {'wall s':>7} {'exit':>5} {'execs/host':>11} {'load':>5}")
    for name, wall, rc, per, err, load in rows:
        print(f"{name:<42} {wall:>7.2f} {'' if rc is None else rc:>5} {per:>11} {load:>5.1f}"
              + (f"  {err[0]}" if err else ""))
    by = {r[0]: r[1] for r in rows}
    one, thirty_two = by["envcheck audit, 1 host(s)"], by[f"envcheck audit, {big} host(s)"]
    eight, hung = by[f"envcheck audit, {mid} host(s)"], next(r[1] for r in rows if r[0].endswith(" hung"))
    print(f"{big} hosts / 1 host: {thirty_two / one:.2f}x (target at 32: <= 1.5x); "
          f"hung host added {hung - eight:.2f} s (bound: connect timeout {CONNECT_TIMEOUT:g} s); "
          f"sequential ssh loop / envcheck at {big}: {by[f'sequential ssh loop, {big} host(s)'] / thirty_two:.1f}x")
    cpus = os.cpu_count() or 1
    print(f"CPU of the median runs (controller process; every node's SSH sessions: sshd, shell, probe, "
          f"its commands), all on this machine's {cpus} cores:")
    for n in sizes:
        ctrl, nodes, _ = cpu[n]
        print(f"  {n:>2} host(s): controller {ctrl:.2f} s, nodes {nodes:.2f} s ({nodes / n * 1000:.0f} ms/host), "
              f"total {ctrl + nodes:.2f} s = at least {(ctrl + nodes) / cpus:.2f} s of wall")
    total32 = sum(cpu[big][:2])
    extra = (total32 - sum(cpu[1][:2])) / (big - 1)
    print(f"each host beyond the first costs {extra * 1000:.0f} ms CPU; the {big}-host run needs "
          f"{total32:.2f} s of CPU, so on {cpus} cores it cannot take less than {total32 / cpus:.2f} s = "
          f"{total32 / cpus / one:.2f}x the 1-host run; 1.5x would need <= {1.5 * one * cpus:.2f} s of CPU")
    for label, factor in (("ansible all -m setup -f 32, 32", 10.0), ("pyinfra INVENTORY fact server.Os, 32", 1.0)):
        if label in by:
            print(f"{label.rsplit(',', 1)[0]} / envcheck at 32: {by[label] / thirty_two:.1f}x "
                  f"(target: envcheck at least {factor:g}x faster)")
    print("node-side probe time summed over hosts (all simulated nodes share this machine's CPUs): "
          + ", ".join(f"{n}: {node_seconds[n]:.2f} s" for n in sizes))


if __name__ == "__main__":
    main()
