"""`envcheck nccl-test` on this machine (LocalRemote): real torch.distributed gloo ranks over
loopback, started by the real launcher, checked through the installed console script."""
import json
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

from tests.conftest import envcheck_exe, run_cli

pytest.importorskip("torch")
pytestmark = pytest.mark.torch

TINY = ["--max-bytes", "64K", "--warmup", "1", "--iters", "3", "--collective-timeout", "20"]


def strays(marker: str) -> list:
    r = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return [int(p) for p in r.stdout.split()]


@pytest.fixture
def tmpenv(tmp_path):
    """A TMPDIR of this test's own: every run directory (and so every launcher's and worker's
    command line) contains it, so pgrep finds exactly this test's processes."""
    d = tmp_path / "nodetmp"
    d.mkdir()
    return {"TMPDIR": str(d)}, str(d)


def test_two_gloo_ranks_print_a_sane_table_with_no_wrong_elements(tmpenv):
    env, marker = tmpenv
    r = run_cli("nccl-test", "--backend", "gloo", "--nproc-per-node", "2", *TINY, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line for line in r.stdout.splitlines() if not line.startswith("#")]
    assert len(lines) == 14          # 8 B .. 64 KiB, doubling
    first, last = lines[0].split(), lines[-1].split()
    assert first[:3] == ["8", "2", "float"]
    assert last[:3] == ["65536", "16384", "float"]
    # time > 0; the printed bandwidths follow nccl-tests' formulas from it (at 2 ranks busbw ==
    # algbw). Not "> 0": a slow machine prints 0.00 GB/s for 64 KiB in 13 ms, and rightly.
    time_us, algbw, busbw = float(last[3]), float(last[4]), float(last[5])
    assert time_us > 0 and last[6] == "0"
    assert algbw == pytest.approx(65536 / time_us / 1e3, abs=0.011, rel=0.01)
    assert busbw == algbw
    assert "Wrong elements: 0 OK" in r.stdout
    assert "localhost" in r.stdout and "local_rank" in r.stdout
    assert strays(marker) == []
    assert os.listdir(marker) == []   # the run directory is gone


def test_json_report_agrees_with_the_nccl_tests_formulas(tmpenv):
    env, _ = tmpenv
    r = run_cli("nccl-test", "--backend", "gloo", "--nproc-per-node", "2", "--json", *TINY,
                env=env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["world_size"] == 2 and d["exit_code"] == 0
    assert [x["rank"] for x in d["ranks"]] == [0, 1]
    assert {x["local_rank"] for x in d["ranks"]} == {0, 1}
    for row in d["rows"]:
        assert row["count"] * 4 == row["bytes"]
        algbw = row["bytes"] / (row["time_us"] / 1e6) / 1e9
        assert row["algbw"] == pytest.approx(algbw)
        assert row["busbw"] == pytest.approx(algbw * 2 * (2 - 1) / 2)
        assert row["wrong"] == 0
    assert d["summary"]["busbw"] == d["rows"][-1]["busbw"]


def test_a_perturbed_rank_is_reported_as_data_corruption_with_exit_1(tmpenv):
    env, marker = tmpenv
    env = dict(env, ENVCHECK_TEST_PERTURB_RANK="1")
    r = run_cli("nccl-test", "--backend", "gloo", "--nproc-per-node", "2", *TINY, env=env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "DATA CORRUPTION" in r.stdout
    rows = [line.split() for line in r.stdout.splitlines() if not line.startswith("#")]
    assert all(int(row[6]) > 0 for row in rows)   # one wrong element, seen by both ranks
    assert strays(marker) == []


def test_a_worker_killed_mid_run_stops_the_run_with_exit_3_naming_the_rank(tmpenv):
    env, marker = tmpenv
    full = dict(os.environ, **env)
    start = time.monotonic()
    p = subprocess.Popen([envcheck_exe(), "nccl-test", "--backend", "gloo", "--nproc-per-node",
                          "2", "--max-bytes", "64K", "--iters", "400", "--collective-timeout", "15",
                          "--json"], env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    victim = None
    try:
        while victim is None and time.monotonic() - start < 60:
            for pid in strays(marker):
                try:
                    cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
                    environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
                except OSError:
                    continue
                if any(c.endswith(b"allreduce_worker.py") for c in cmd) and b"RANK=1" in environ:
                    victim = pid
            time.sleep(0.1)
        assert victim, "rank 1 never started"
        time.sleep(1.0)   # let it get into the sweep
        os.kill(victim, signal.SIGKILL)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    elapsed = time.monotonic() - start
    assert p.returncode == 3, out + err
    d = json.loads(out)
    assert d["failure"]["rank"] == 1 and d["failure"]["host"] == "localhost"
    assert "rank 1 on localhost was killed by signal 9" in d["failure"]["message"]
    assert elapsed < 15 + 20
    time.sleep(0.2)
    assert strays(marker) == []


def test_a_busy_master_port_is_named_by_the_preflight_and_no_worker_starts(tmpenv):
    env, marker = tmpenv
    s = socket.socket()
    s.bind(("0.0.0.0", 0))
    s.listen(1)
    port = s.getsockname()[1]
    try:
        r = run_cli("nccl-test", "--backend", "gloo", "--master-port", str(port), "--json", *TINY,
                    env=env)
    finally:
        s.close()
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "preflight" and d["failure"]["host"] == "localhost"
    assert f"cannot listen on :{port}" in d["failure"]["message"]
    assert d["run_id"] == "" and d["ranks"] == []     # no worker was started
    assert strays(marker) == []


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"),
                    reason="needs root, unshare and ip for a private network namespace")
def test_a_master_address_nothing_can_reach_is_named_before_any_worker_starts(tmpenv):
    env, marker = tmpenv
    # a private network namespace with only lo: 10.255.255.1 has no route, nothing leaves it
    cmd = ("ip link set lo up && exec " + envcheck_exe() + " nccl-test --backend gloo "
           "--master-addr 10.255.255.1 --connect-timeout 2 --json " + " ".join(TINY))
    r = subprocess.run(["unshare", "-n", "sh", "-c", cmd], capture_output=True, text=True,
                       env=dict(os.environ, **env), timeout=60)
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "preflight"
    assert "localhost cannot reach MASTER_ADDR 10.255.255.1:" in d["failure"]["message"]
    assert d["ranks"] == [] and d["run_id"] == ""
    assert strays(marker) == []


def test_plot_without_matplotlib_is_a_clear_error_before_anything_runs(tmpenv, tmp_path):
    env, _ = tmpenv
    try:
        import matplotlib  # noqa: F401
        pytest.skip("matplotlib is installed here")
    except ImportError:
        pass
    r = run_cli("nccl-test", "--plot", str(tmp_path / "bw.png"), *TINY, env=env)
    assert r.returncode == 2
    assert "--plot needs matplotlib" in r.stderr and "pip install" in r.stderr
    assert "preflight" not in r.stderr


def test_plot_writes_busbw_against_size_as_an_image(tmpenv, tmp_path):
    pytest.importorskip("matplotlib")
    env, _ = tmpenv
    out = tmp_path / "bw.png"
    r = run_cli("nccl-test", "--backend", "gloo", "--plot", str(out), *TINY, env=env)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_past_its_run_timeout_is_stopped_by_the_node_side_deadline(tmpenv):
    env, marker = tmpenv
    start = time.monotonic()
    r = run_cli("nccl-test", "--backend", "gloo", "--max-bytes", "64K", "--iters", "20000",
                "--run-timeout", "6", "--json", env=env, timeout=120)
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["failure"]["kind"] == "timeout" and d["failure"]["host"] == "localhost"
    assert "ran past 6s (--run-timeout)" in d["failure"]["message"]
    assert time.monotonic() - start < 30
    assert strays(marker) == []


@pytest.mark.parametrize("args,named", [
    (["--max-bytes", "lots"], "size 'lots'"),
    (["--dtype", "complex"], "dtype 'complex'"),
    (["--backend", "mpi"], "--backend 'mpi'"),
    (["--min-bytes", "1M", "--max-bytes", "1K"], "--min-bytes 1048576 is above --max-bytes 1024"),
    (["--factor", "1"], "--factor 1"),
])
def test_bad_arguments_are_one_line_usage_errors_before_anything_runs(args, named, tmpenv):
    env, marker = tmpenv
    r = run_cli("nccl-test", *args, env=env)
    assert r.returncode == 2
    assert named in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "preflight" not in r.stderr and strays(marker) == []


@pytest.fixture
def bare_path(tmp_path):
    """A PATH whose python3 has no torch (a fresh venv of the base interpreter), as on a machine
    where torch lives only in the venv envcheck was installed into."""
    import sys
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True)
    return os.pathsep.join([str(tmp_path / "bare" / "bin"), "/usr/bin", "/bin"])


def test_a_local_run_uses_the_interpreter_envcheck_runs_under_when_torch_is_there(tmpenv, bare_path):
    import sys
    env, marker = tmpenv
    r = run_cli("nccl-test", "--backend", "gloo", "--json", *TINY, env=dict(env, PATH=bare_path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["world_size"] == 2
    venv_bin = os.path.dirname(sys.executable)   # the console script may name python or python3
    assert f"this machine: workers run under {venv_bin}/python" in r.stderr
    assert "(torch is installed there" in r.stderr
    assert strays(marker) == []


def test_a_local_run_without_torch_beside_envcheck_falls_back_to_python3_and_says_so(tmpenv, bare_path):
    import sys
    env, marker = tmpenv
    # envcheck itself run where torch cannot be imported (None in sys.modules blocks the import)
    code = ("import sys; sys.modules['torch'] = None; from envcheck.cli import main; "
            "sys.argv = ['envcheck'] + sys.argv[1:]; main()")
    r = subprocess.run([sys.executable, "-c", code, "nccl-test", "--backend", "gloo", "--json", *TINY],
                       capture_output=True, text=True, env=dict(os.environ, **env, PATH=bare_path),
                       timeout=120)
    assert "this machine: workers run under python3 (no torch beside envcheck" in r.stderr
    d = json.loads(r.stdout)
    assert r.returncode == 3 and "torch" in json.dumps(d["failure"]), d["failure"]
    assert strays(marker) == []


def test_a_tmpdir_that_names_nothing_is_never_created(tmp_path):
    """TMPDIR=/nonexistent used to create /nonexistent (the run directory was made with its
    parents); the run now goes under /tmp and creates nothing else."""
    missing = tmp_path / "no" / "such" / "tmp"
    r = run_cli("nccl-test", "--backend", "gloo", "--nproc-per-node", "1", "--max-bytes", "64",
                "--warmup", "1", "--iters", "1", env={"TMPDIR": str(missing)})
    assert r.returncode == 0, r.stdout[-500:] + r.stderr[-1500:]
    assert not (tmp_path / "no").exists()


def test_the_run_directory_is_made_with_no_parents(tmp_path):
    from envcheck.ranks.start import boot
    # the boot code alone: a --dir whose parent is missing fails, creating nothing
    r = subprocess.run(["python3", "-c", boot("x.py"), "--dir", str(tmp_path / "a" / "b")], input="{}",
                       capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "FileNotFoundError" in r.stderr and not (tmp_path / "a").exists()
