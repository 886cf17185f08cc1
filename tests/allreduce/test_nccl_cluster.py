"""`envcheck nccl-test` across the simulated cluster: real sshd per host, gloo ranks talking real
TCP between network namespaces, faults made with real processes and routes. After every test,
no process of the test is left on any host."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import envcheck_exe, run_cli

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.cluster]

TINY = ["--max-bytes", "64K", "--warmup", "1", "--iters", "3", "--collective-timeout", "20",
        "--backend", "gloo"]


@pytest.fixture(scope="module")
def cl(cluster_factory):
    c = cluster_factory(3)
    c.trust_all_host_keys()
    yield c
    c.close()


def ours(host):
    return [p for p in host.processes() if "envcheck-ar-" in p or "allreduce" in p]


@pytest.fixture(autouse=True)
def no_strays(cl):
    yield
    deadline = time.monotonic() + 10
    while any(ours(h) for h in cl) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert {h.name: ours(h) for h in cl} == {h.name: [] for h in cl}
    left = {h.name: h.run_local("ls /tmp | grep envcheck-ar- || true").stdout.split() for h in cl}
    assert left == {h.name: [] for h in cl}   # every run directory removed


def nccl_test(cl, hosts, *args, env=None, timeout=180):
    return run_cli("nccl-test", *hosts, "--ssh-config", str(cl.ssh_config), "--node-python",
                   sys.executable, *TINY, *args, env=env, timeout=timeout)


def test_two_hosts_with_two_ranks_each_print_the_table_and_exit_0(cl):
    r = nccl_test(cl, ["node[01-02]"], "--nproc-per-node", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    rows = [line.split() for line in r.stdout.splitlines() if not line.startswith("#")]
    assert len(rows) == 14 and all(row[6] == "0" for row in rows)
    # the printed bandwidths follow nccl-tests' formulas from the printed time (4 ranks: busbw =
    # algbw * 2*3/4); not "> 0", which a loaded machine's 0.00 GB/s would fail
    time_us, algbw, busbw = (float(x) for x in rows[-1][3:6])
    assert time_us > 0
    assert algbw == pytest.approx(65536 / time_us / 1e3, abs=0.011, rel=0.01)
    assert busbw == pytest.approx(algbw * 1.5, abs=0.02, rel=0.01)
    ranks = [line.split() for line in r.stdout.splitlines()
             if line.startswith("#") and "cpu" in line]
    assert [(x[1], x[2], x[3]) for x in ranks] == [("0", "node01", "0"), ("1", "node01", "1"),
                                                   ("2", "node02", "0"), ("3", "node02", "1")]
    # eth0 is the only interface joining the hosts: suggested and used; MASTER is node01's
    assert "using eth0" in r.stdout
    assert f"MASTER {cl['node01'].ip}:" in r.stdout


def test_three_hosts_one_rank_each_agree_with_the_busbw_formula(cl):
    r = nccl_test(cl, ["node[01-03]"], "--nproc-per-node", "1", "--json")
    # a failure's own record in the message: a CI run once exited 3 here with stderr empty
    assert r.returncode == 0, r.stderr + json.dumps(json.loads(r.stdout or "{}").get("failure"))
    d = json.loads(r.stdout)
    assert d["world_size"] == 3
    assert [(x["rank"], x["node"], x["host"]) for x in d["ranks"]] == [
        (0, "node01", "node01"), (1, "node02", "node02"), (2, "node03", "node03")]
    for row in d["rows"]:
        assert row["wrong"] == 0
        assert row["busbw"] == pytest.approx(row["algbw"] * 4 / 3)


def test_a_perturbed_rank_across_hosts_is_data_corruption(cl):
    r = nccl_test(cl, ["node[01-02]"], "--nproc-per-node", "1", "--max-bytes", "1K",
                  env={"ENVCHECK_TEST_PERTURB_RANK": "1"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "DATA CORRUPTION" in r.stdout


def worker_pids(host):
    pids = subprocess.run(["ip", "netns", "pids", host.ns], capture_output=True,
                          text=True).stdout.split()
    out = []
    for pid in pids:
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if b"allreduce_worker.py" in cmd:
            out.append(int(pid))
    return out


def joined(host):
    r = host.run_local("cat /tmp/envcheck-ar-*/rank*.log 2>/dev/null", check=False)
    return "joined:" in r.stdout


def start_and_wait_for_worker(cl, host, extra, until_joined=True):
    p = subprocess.Popen([envcheck_exe(), "nccl-test", "node[01-02]", "--ssh-config",
                          str(cl.ssh_config), "--node-python", sys.executable,
                          "--nproc-per-node", "1", "--json", "--max-bytes", "64K",
                          "--iters", "400", "--backend", "gloo", *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 90
    while not worker_pids(host) and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.1)
    pids = worker_pids(host)
    assert pids, "the worker never started on " + host.name
    while until_joined and not joined(host) and time.monotonic() < deadline:
        time.sleep(0.1)
    return p, pids[0]


def test_a_worker_killed_on_one_host_stops_every_host_with_exit_3_naming_it(cl):
    start = time.monotonic()
    p, pid = start_and_wait_for_worker(cl, cl["node02"], ["--collective-timeout", "15"])
    os.kill(pid, signal.SIGKILL)
    out, err = p.communicate(timeout=90)
    assert p.returncode == 3, out + err
    d = json.loads(out)
    assert d["failure"]["host"] == "node02" and d["failure"]["rank"] == 1
    assert "killed by signal 9" in d["failure"]["message"]
    assert time.monotonic() - start < 90


def test_a_frozen_rank_makes_the_others_time_out_and_is_named_as_the_silent_one(cl):
    p, pid = start_and_wait_for_worker(cl, cl["node02"], ["--collective-timeout", "4"])
    os.kill(pid, signal.SIGSTOP)   # alive, holding its sockets, answering nothing
    try:
        out, err = p.communicate(timeout=90)
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert p.returncode == 3, out + err
    d = json.loads(out)
    assert d["failure"]["kind"] == "timeout"
    assert "1 (node02)" in d["failure"]["message"]
    assert d["failure"]["suspects"] == ["node02"]


def test_a_rank_that_never_joins_is_named_after_the_rendezvous_timeout(cl):
    start = time.monotonic()
    p, pid = start_and_wait_for_worker(cl, cl["node02"], ["--collective-timeout", "4",
                                                           "--rendezvous-timeout", "4"],
                                       until_joined=False)
    os.kill(pid, signal.SIGSTOP)   # before it imports torch: it never reaches the store
    try:
        out, err = p.communicate(timeout=90)
    finally:
        try:
            os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert p.returncode == 3, out + err
    d = json.loads(out)
    assert d["failure"]["kind"] == "rendezvous"
    assert d["failure"]["message"].endswith("ranks that never joined: 1 (node02)")
    assert d["failure"]["suspects"] == ["node02"]
    assert time.monotonic() - start < 60


def test_a_host_that_cannot_reach_the_master_port_is_named_and_no_worker_starts(cl):
    node03 = cl["node03"]
    node03.run_local(f"ip route add unreachable {cl['node01'].ip}/32")
    try:
        r = nccl_test(cl, ["node[01-03]"], "--nproc-per-node", "1", "--connect-timeout", "15",
                      "--json")
    finally:
        node03.run_local(f"ip route del unreachable {cl['node01'].ip}/32")
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "preflight" and d["failure"]["host"] == "node03"
    assert f"node03 cannot reach MASTER_ADDR {cl['node01'].ip}:" in d["failure"]["message"]
    assert [e["host"] for e in d["preflight_errors"]] == ["node03"]
    assert d["ranks"] == [] and d["run_id"] == ""


def test_an_ifname_missing_on_one_host_is_named_before_anything_starts(cl):
    for h in (cl["node01"], cl["node02"]):
        h.run_local("ip link add ecsif0 type veth peer name ecsif0p && "
                    f"ip addr add 192.168.250.{h.index + 1}/24 dev ecsif0 && "
                    "ip link set ecsif0 up")
    try:
        r = nccl_test(cl, ["node[01-03]"], "--ifname", "ecsif0", "--json")
    finally:
        for h in (cl["node01"], cl["node02"]):
            h.run_local("ip link del ecsif0", check=False)
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "preflight" and d["failure"]["host"] == "node03"
    assert "interface 'ecsif0'" in d["failure"]["message"] and "eth0" in d["failure"]["message"]
    assert d["ranks"] == []


def test_an_unreachable_host_is_named_and_the_others_start_nothing(cl):
    cl["node02"].stop_sshd()
    try:
        r = nccl_test(cl, ["node[01-02]"], "--connect-timeout", "3", "--json")
    finally:
        cl["node02"].start_sshd()
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["host"] == "node02" and d["ranks"] == []


def test_killing_the_controller_mid_run_leaves_nothing_on_any_host(cl):
    p, _ = start_and_wait_for_worker(cl, cl["node02"], ["--collective-timeout", "30"])
    p.kill()   # SIGKILL: no cleanup from the controller; the SSH connections just drop
    p.communicate(timeout=30)
    # the autouse fixture then waits up to 10 s and asserts no process or run directory is
    # left on any host: each launcher sees its stdout (the SSH channel) close and stops its ranks


def test_a_node_python_without_torch_is_refused_before_any_rank_starts_as_launch_does(cl):
    before = [h.exec_count() for h in (cl["node01"], cl["node02"])]
    r = run_cli("nccl-test", "node[01-02]", "--ssh-config", str(cl.ssh_config),
                "--node-python", "/usr/bin/python3", *TINY, "--json", timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "preflight" and d["ranks"] == []
    assert [e["host"] for e in d["preflight_errors"]] == ["node01", "node02"]
    assert all("torch does not import under /usr/bin/python3: ModuleNotFoundError: No module named 'torch'"
               in e["message"] and "--node-python" in e["fix"] for e in d["preflight_errors"])
    # one exec per host (the facts), nothing launched
    assert [h.exec_count() - b for h, b in zip((cl["node01"], cl["node02"]), before)] == [1, 1]


def test_gpu_nodes_get_nccl_and_a_cpu_torch_or_too_many_ranks_are_named(cl):
    from tests.cluster.standins import gpu_list, set_driver
    for h in (cl["node01"], cl["node02"]):
        set_driver(h, "535.104.05", gpu_list("A100", 2))
    try:
        base = ["node[01-02]", "--ssh-config", str(cl.ssh_config), "--node-python",
                sys.executable, "--max-bytes", "64", "--collective-timeout", "20", "--json"]
        too_many = run_cli("nccl-test", *base, "--nproc-per-node", "3", timeout=120)
        auto = run_cli("nccl-test", *base, timeout=120)
    finally:
        for h in (cl["node01"], cl["node02"]):
            set_driver(h, None)
    d = json.loads(too_many.stdout)
    assert too_many.returncode == 3 and d["failure"]["kind"] == "preflight"
    assert "3 rank(s) for nccl but 2 GPU(s): two ranks would share a GPU" in d["failure"]["message"]
    assert d["ranks"] == []
    # the stand-in driver shows 2 GPUs per node, so auto picks nccl with one rank per GPU; the
    # CPU-only torch here then cannot use them, and says so
    d = json.loads(auto.stdout)
    assert auto.returncode == 3 and d["backend"] == "nccl" and d["world_size"] == 4
    assert d["failure"]["kind"] == "setup" and "use --backend gloo" in d["failure"]["message"]
