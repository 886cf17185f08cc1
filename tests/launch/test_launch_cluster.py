"""`envcheck launch` across the simulated cluster: real sshd per host, the user's own DDP script
(tests/launch/scripts/) training over real gloo between network namespaces, faults made with
real processes. After every test, no process of the run is left on any host."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import envcheck_exe, run_cli

pytest.importorskip("torch")
pytestmark = [pytest.mark.torch, pytest.mark.cluster]

SCRIPTS = Path(__file__).resolve().parent / "scripts"
RANK_LINE = re.compile(r"^\[(node\d+):(\d+)\] (.*)$")


@pytest.fixture(scope="module")
def cl(cluster_factory):
    c = cluster_factory(2)
    c.trust_all_host_keys()
    yield c
    c.close()


def ours(host):
    return [p for p in host.processes() if "envcheck-launch-" in p or "scripts" in p
            or "ddp_tiny" in p or "local_rank_script" in p]


@pytest.fixture(autouse=True)
def no_strays(cl):
    yield
    deadline = time.monotonic() + 20
    while any(ours(h) for h in cl) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert {h.name: ours(h) for h in cl} == {h.name: [] for h in cl}
    left = {h.name: h.run_local("ls /tmp | grep envcheck-launch- || true").stdout.split()
            for h in cl}
    assert left == {h.name: [] for h in cl}   # every run directory removed


@pytest.fixture
def workdir(tmp_path):
    """The scripts in a directory under /tmp: private to each simulated host, so only --sync
    puts them there."""
    for name in ("ddp_tiny.py", "local_rank_script.py"):
        shutil.copy(SCRIPTS / name, tmp_path / name)
    return tmp_path


def base(cl, workdir, *extra, nproc=2):
    return ["launch", "node[01-02]", "--ssh-config", str(cl.ssh_config), "--node-python",
            sys.executable, "--nproc-per-node", str(nproc), "--chdir", str(workdir), "--sync",
            str(workdir / "ddp_tiny.py"), "--sync", str(workdir / "local_rank_script.py"),
            "--json", *extra]


def rank_lines(text):
    out = {}
    for line in text.splitlines():
        m = RANK_LINE.match(line)
        if m:
            out.setdefault((m.group(1), int(m.group(2))), []).append(m.group(3))
    return out


def params_of(lines):
    return [json.loads(x[len("PARAMS "):]) for x in lines if x.startswith("PARAMS ")]


def test_ddp_on_two_hosts_by_two_ranks_ends_with_the_parameters_of_one_process(cl, workdir):
    ref = subprocess.run([sys.executable, str(SCRIPTS / "ddp_tiny.py"), "--single", "--world",
                          "4"], capture_output=True, text=True, timeout=120)
    want = params_of(ref.stdout.splitlines())[0]
    # the issue's own command, no --force: the simulated hosts are hermetic, the audit clean
    r = run_cli(*base(cl, workdir, "--log-dir", str(workdir / "logs"), "--",
                      "ddp_tiny.py"), timeout=400)
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["audit_errors"] == [] and not any(n.startswith("--force") for n in d["notes"])
    assert [(x["rank"], x["host"], x["local_rank"], x["status"]) for x in d["ranks"]] == [
        (0, "node01", 0, "ok"), (1, "node01", 1, "ok"), (2, "node02", 0, "ok"),
        (3, "node02", 1, "ok")]
    assert all(x["start"] <= x["end"] for x in d["ranks"])
    assert d["master_addr"] == cl["node01"].ip and d["ifname"] == "eth0"
    assert d["interpreter"] == sys.executable and d["failure"] is None
    lines = rank_lines(r.stderr)   # with --json the ranks' output goes to stderr
    assert sorted(lines) == [("node01", 0), ("node01", 1), ("node02", 2), ("node02", 3)]
    for (host, rank), got in lines.items():
        assert (f"env MASTER_ADDR={cl['node01'].ip} LOCAL_RANK={rank % 2} LOCAL_WORLD_SIZE=2 "
                f"WORLD_SIZE=4") in got
        (p,) = params_of(got)
        flat_got = [v for t in p for v in t]
        flat_want = [v for t in want for v in t]
        assert flat_got == pytest.approx(flat_want, abs=1e-5), (host, rank)
    logs = sorted(os.listdir(d["log_dir"]))
    assert logs == ["rank0.node01.log", "rank1.node01.log", "rank2.node02.log",
                    "rank3.node02.log"]
    assert "PARAMS " in (Path(d["log_dir"]) / "rank3.node02.log").read_text()


def test_a_script_written_for_torch_distributed_launch_runs_unchanged(cl, workdir):
    r = run_cli(*base(cl, workdir, "--no-audit", "--local-rank-arg", "--",
                      "local_rank_script.py", "--tag", "x y"), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = rank_lines(r.stderr)
    assert [lines[("node01", 0)][-1], lines[("node02", 3)][-1]] == [
        "local_rank=0 rank=0 sum=6 tag=x y", "local_rank=1 rank=3 sum=6 tag=x y"]


def test_a_rank_that_raises_fails_the_run_with_exit_1_naming_it(cl, workdir):
    r = run_cli(*base(cl, workdir, "--no-audit", "--", "ddp_tiny.py", "--raise-rank", "2"),
                timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    f = json.loads(r.stdout)["failure"]
    assert (f["kind"], f["rank"], f["host"], f["exit_code"]) == ("rank_failed", 2, "node02", 1)
    assert f["message"].startswith("rank 2 on node02 exited with code 1")
    assert "RuntimeError: boom from rank 2" in "\n".join(f["log_tail"])


def test_a_rank_that_hangs_is_stopped_at_the_timeout_and_named(cl, workdir):
    start = time.monotonic()
    r = run_cli(*base(cl, workdir, "--no-audit", "--run-timeout", "90", "--", "ddp_tiny.py",
                      "--hang-rank", "3"), timeout=300)
    assert r.returncode == 3, r.stdout + r.stderr
    f = json.loads(r.stdout)["failure"]
    assert (f["kind"], f["rank"], f["host"]) == ("timeout", 3, "node02")
    assert f["message"].startswith("rank 3 on node02 hung")
    assert any("ddp_tiny.py" in x and "in train" in x for x in f["log_tail"])
    assert time.monotonic() - start < 90 + 60


def kill_sshd(host):
    pids = subprocess.run(["ip", "netns", "pids", host.ns], capture_output=True,
                          text=True).stdout.split()
    for pid in pids:
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if cmd.startswith(b"sshd") or b"/usr/sbin/sshd" in cmd:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_node_whose_sshd_dies_mid_run_is_a_lost_host_exit_3(cl, workdir):
    node02 = cl["node02"]
    p = subprocess.Popen([envcheck_exe(), *base(cl, workdir, "--no-audit", "--run-timeout", "200",
                                                "--", "ddp_tiny.py", "--hang-rank", "0")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        # the ranks (RANK_BOOT registers faulthandler), not the preflight's check of the script
        while (len([x for x in node02.processes() if "faulthandler" in x]) < 2
               and time.monotonic() < deadline and p.poll() is None):
            time.sleep(0.2)
        assert p.poll() is None, p.communicate()
        kill_sshd(node02)   # the listener and every session: the connection drops mid-run
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
        node02.start_sshd()
    assert p.returncode == 3, out + err
    f = json.loads(out)["failure"]
    assert (f["kind"], f["host"]) == ("host_lost", "node02")


def test_audit_errors_are_shown_and_refused_before_any_rank_starts(cl, workdir):
    from tests.cluster.standins import gpu_list, plant_toolkit, set_driver
    # a CUDA 12.1 toolkit on node02 whose driver is far too old for it
    for h in cl:
        set_driver(h, "410.48", gpu_list("V100", 2))
    plant_toolkit(cl["node02"], "12.1.105")
    try:
        r = run_cli(*base(cl, workdir, "--", "ddp_tiny.py"), timeout=300)
    finally:
        cl["node02"].run_local("rm -rf /usr/local/cuda /usr/local/cuda-12.1")
        for h in cl:
            set_driver(h, None)
    assert r.returncode == 1, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "audit" and d["ranks"] == [] and d["run_id"] == ""
    old = [a["host"] for a in d["audit_errors"] if a["code"] == "driver-too-old-for-toolkit"]
    assert old == ["node02"], d["audit_errors"]
    assert "pass --force" in d["failure"]["fix"]


def test_a_node_python_without_torch_is_refused_before_any_rank_starts(cl, workdir):
    r = run_cli("launch", "node[01-02]", "--ssh-config", str(cl.ssh_config), "--node-python",
                "/usr/bin/python3", "--no-audit", "--json", "--", "ddp_tiny.py", timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "preflight" and d["ranks"] == []
    assert "torch does not import under /usr/bin/python3" in d["failure"]["message"]


def test_more_ranks_than_gpus_is_refused_naming_the_host(cl, workdir):
    from tests.cluster.standins import gpu_list, set_driver
    set_driver(cl["node01"], "535.104.05", gpu_list("A100", 4))
    set_driver(cl["node02"], "535.104.05", gpu_list("A100", 2))
    try:
        r = run_cli(*base(cl, workdir, "--no-audit", "--", "ddp_tiny.py", nproc=3),
                    timeout=120)
    finally:
        for h in cl:
            set_driver(h, None)
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert [e["host"] for e in d["preflight_errors"]] == ["node02"]
    assert "node02: 3 rank(s) but 2 GPU(s): two ranks would share a GPU" in d["failure"]["message"]
    assert d["ranks"] == []


def test_an_ifname_missing_everywhere_is_named_before_anything_starts(cl, workdir):
    r = run_cli(*base(cl, workdir, "--no-audit", "--ifname", "ib0", "--", "ddp_tiny.py"),
                timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert [e["host"] for e in d["preflight_errors"]] == ["node01", "node02"]
    assert "interface 'ib0'" in d["failure"]["message"] and "eth0" in d["failure"]["message"]
