"""Real Slurm on the simulated cluster (tests/cluster/slurm.py): what the Slurm tests rely on."""
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.cluster import slurm


def test_sinfo_shows_every_node_idle_in_one_partition(slurm_cluster):
    out = slurm_cluster.run("sinfo", "-h", "-o", "%P %D %T %N").stdout.split()
    assert out == ["debug*", "3", "idle", slurm_cluster.hostlist]


def test_srun_runs_one_task_per_node_inside_that_hosts_namespaces(slurm_cluster):
    s = slurm_cluster
    s[1].write_file("/tmp/only-on-node02", "planted\n")
    r = s.run("srun", "-N3", "--ntasks-per-node=1", "sh", "-c",
              'echo "$(hostname) $(cat /etc/machine-id) $(readlink /proc/self/ns/net) '
              '$SLURM_NODEID $(cat /tmp/only-on-node02 2>/dev/null || echo -)"', timeout=60)
    rows = sorted(line.split() for line in r.stdout.splitlines())
    want = [[h.name, h.read_file("/etc/machine-id").strip(), os.readlink(f"/proc/{h.anchor.pid}/ns/net"),
             str(i), "planted" if h.name == "node02" else "-"] for i, h in enumerate(s)]
    assert rows == want


def test_scontrol_inside_a_host_finds_the_hosts_own_slurm_conf(slurm_cluster):
    # a HealthCheckProgram gets no SLURM_CONF: on a node the default /etc/slurm/slurm.conf serves
    r = slurm_cluster[0].run_local("scontrol -o show node node01", env={})
    assert "NodeName=node01" in r.stdout and "State=IDLE" in r.stdout


def test_two_slurm_clusters_run_side_by_side_with_their_own_ports_keys_and_sockets(slurm_cluster, slurm_factory):
    other = slurm_factory(1)
    try:
        assert other.port != slurm_cluster.port
        assert other.munge_socket != slurm_cluster.munge_socket
        key = lambda s: (s.dir / "munge" / "munge.key").read_bytes()
        assert key(other) != key(slurm_cluster)
        assert other.run("srun", "-N1", "hostname").stdout.strip() == "node01"
        assert other.wait_nodes(lambda st: st == "idle") == {"node01": "idle"}
        assert len(slurm_cluster.node_states()) == 3
    finally:
        other.close()


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_close_stops_every_daemon_and_removes_the_files(slurm_factory):
    s = slurm_factory(1)
    pids = [p.pid for p in s.procs.values()]
    assert len(pids) == 3 and all(_alive(p) for p in pids)   # munged, slurmctld, slurmd
    s.close()
    assert not any(_alive(p) for p in pids)
    assert not s.dir.exists()


def test_sweep_stops_the_daemons_of_a_run_that_died(slurm_factory):
    s = slurm_factory(1)
    try:
        dead = subprocess.Popen(["true"])
        dead.wait()
        (s.dir / "owner.pid").write_text(str(dead.pid))     # as if the test run had been killed
        pids = {k: p.pid for k, p in s.procs.items()}
        assert s.cluster.id in slurm.sweep_stale()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_alive(pids["slurmctld"]) or _alive(pids["munged"])):
            time.sleep(0.1)
        assert not _alive(pids["slurmctld"]) and not _alive(pids["munged"])
        assert not s.dir.exists()
    finally:
        s.close()


def test_a_killed_slurmd_fails_srun_on_that_node_and_comes_back(slurm_cluster):
    s = slurm_cluster
    s.kill_slurmd(s[2])
    try:
        r = s.run("srun", "-N3", "hostname", check=False, timeout=60)
        assert r.returncode != 0 and "node03" in r.stderr, r.stderr
    finally:
        s.start_slurmd(s[2])
    s.wait_nodes(lambda st: st == "idle", timeout=60)
    assert sorted(s.run("srun", "-N3", "hostname").stdout.split()) == s.names
    assert {h.name: s.strays(h) for h in s} == {h.name: [] for h in s}
