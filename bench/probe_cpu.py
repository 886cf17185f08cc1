#!/usr/bin/env python3
"""Where one host's share of an audit goes, in CPU: the probe run on a simulated node (as
envcheck ships it, `python3 - < probe.py`), the interpreter's start alone, the probe without
the driver's nvidia-smi stand-in, and one SSH session through envcheck's transport (node side:
sshd, shell; controller side: paramiko).

    python3 bench/probe_cpu.py [PROBE.py]      (root; PROBE defaults to the shipped probe script)

On 2 cores shared by 32 simulated nodes, CPU per host is what bounds bench/audit_fanout.py's
32-vs-1 ratio; this splits it up. Pass an older probe file to compare.
"""
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from envcheck.audit.probe import probe_source  # noqa: E402
from tests.cluster import sim, standins  # noqa: E402

RUNS = 20
HZ = os.sysconf("SC_CLK_TCK")


def setup(h):
    standins.plant_driver(h, "535.104.05", standins.gpu_list("A100", 8))
    standins.plant_toolkit(h, "12.1.0")
    standins.plant_cudnn(h, "8.9.7", "/usr/local/cuda-12.1")


def cpu_per_run(h, script, runs=RUNS):
    """(CPU ms, wall ms) per `python3 - < script` on host h, children included, median of 3."""
    h.write_file("/tmp/bench-probe.py", script)
    got = []
    for _ in range(3):
        p = h.run_local("/usr/bin/time -f '%%U %%S %%e' sh -c 'for i in $(seq %d); do "
                        "python3 - < /tmp/bench-probe.py >/dev/null; done'" % runs)
        user, system, wall = (float(x) for x in p.stderr.strip().splitlines()[-1].split())
        got.append(((user + system) * 1000 / runs, wall * 1000 / runs))
    return sorted(got)[1]


def sshd_cpu(h):
    f = Path(f"/proc/{h.sshd.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[13]) + int(f[14])) / HZ


def ssh_session_cpu(c, stdin=None, runs=RUNS):
    """(node CPU ms, controller CPU ms) per connect + one command + close, through envcheck.hosts."""
    from envcheck.hostlist import parse_targets
    from envcheck.hosts import SSHOptions, make_remotes
    from envcheck.audit.probe import probe_command
    h = c[0]
    node0, ctrl0 = sshd_cpu(h), time.process_time()
    for _ in range(runs):
        rs = make_remotes(parse_targets([h.name]), SSHOptions(ssh_config=str(c.ssh_config)))
        r = rs[0].run(probe_command() if stdin else "true", stdin=stdin)
        if r.exit_code != 0:
            raise SystemExit(f"bench/probe_cpu: the command failed on {h.name}: {r.error or r.stderr}")
        rs[0].close()
    ctrl = time.process_time() - ctrl0
    time.sleep(0.5)  # let the last session be reaped
    return (sshd_cpu(h) - node0) * 1000 / runs, ctrl * 1000 / runs


def main():
    why = sim.available()
    if why:
        sys.exit(f"bench/probe_cpu: {why}")
    probe = Path(sys.argv[1]).read_text() if len(sys.argv) > 1 else probe_source()
    no_smi = probe.replace('which("nvidia-smi", ["/usr/bin", "/usr/local/bin"])', "None")
    c = sim.make_cluster(1, per_host_setup=setup)
    try:
        c.trust_all_host_keys()
        h = c[0]
        out = json.loads(h.run_local("python3 -", input=probe).stdout.strip().splitlines()[-1])
        load = os.getloadavg()[0]
        rows = [("python3 - (an empty script)", cpu_per_run(h, "pass\n")),
                (f"probe ({probe_path.name})", cpu_per_run(h, probe))]
        if no_smi != probe:
            rows.append(("probe, nvidia-smi stand-in hidden", cpu_per_run(h, no_smi)))
        true_node, true_ctrl = ssh_session_cpu(c)
        probe_node, probe_ctrl = ssh_session_cpu(c, stdin=probe)
    finally:
        c.close()
    print(f"one simulated node, {RUNS} runs each, median of 3; {os.cpu_count()} CPUs, "
          f"load average {load:.1f}; probe subprocesses: "
          f"{'nvidia-smi x2, ' if out['driver'].get('source') == 'nvidia-smi' else ''}gcc, ip, ldconfig "
          f"(driver source here: {out['driver'].get('source')})")
    print(f"{'on the node':<44} {'CPU ms':>7} {'wall ms':>8}")
    for name, (cpu, wall) in rows:
        print(f"{name:<44} {cpu:>7.1f} {wall:>8.1f}")
    print(f"{'one SSH session (connect, command, close)':<44} {'node ms':>7} {'ctrl ms':>8}")
    print(f"{'  running `true`':<44} {true_node:>7.1f} {true_ctrl:>8.1f}")
    print(f"{'  running the probe (as envcheck audit does)':<44} {probe_node:>7.1f} {probe_ctrl:>8.1f}")


if __name__ == "__main__":
    main()
