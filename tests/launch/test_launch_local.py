"""`envcheck launch` with no hosts (this machine): the node launcher for real, through the
installed console script; scripts that need no torch keep these tests fast. The run's own
processes are found by the run id every launcher and rank carries on its command line."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import envcheck_exe, run_cli

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.torch   # the preflight imports torch under the ranks' interpreter

HELLO = """import os, sys
print("hello rank", os.environ["RANK"], "of", os.environ["WORLD_SIZE"], "local",
      os.environ["LOCAL_RANK"], "/", os.environ["LOCAL_WORLD_SIZE"], "args", sys.argv[1:])
"""
SELF_KILL = """import os, signal, time
if os.environ["RANK"] == "1":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(600)
"""
SLEEP = """import time
print("up", flush=True)
time.sleep(600)
"""


def ours(where=None):
    """The launch processes on this machine; with `where`, only those of this test: its ranks run
    in its --chdir and its run directory is under its TMPDIR (another module's launches, on
    another xdist worker, are not this test's)."""
    out = subprocess.run(["pgrep", "-af", "envcheck-launch-"], capture_output=True, text=True)
    found = [x for x in out.stdout.splitlines() if "pgrep" not in x]
    if where is None:
        return found
    mine = []
    for line in found:
        try:
            cwd = os.readlink(f"/proc/{line.split()[0]}/cwd")
        except OSError:
            continue        # gone meanwhile
        if cwd == str(where) or cwd.startswith(str(where) + "/") or str(where) in line:
            mine.append(line)
    return mine


@pytest.fixture(autouse=True)
def no_strays(tmp_path):
    pytest.importorskip("torch")
    yield
    deadline = time.monotonic() + 15
    while ours(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ours(tmp_path) == []


def launch(tmp_path, text, *args, timeout=120):
    (tmp_path / "s.py").write_text(text)
    # the run directory under this test's own TMPDIR: its launcher is found by no_strays too
    return run_cli("launch", "--no-audit", "--chdir", str(tmp_path), *args, "--", "s.py",
                   "--x", "1 2", env={"TMPDIR": str(tmp_path)}, timeout=timeout)


def test_no_hosts_runs_the_ranks_here_under_the_interpreter_envcheck_runs_under(tmp_path):
    r = launch(tmp_path, HELLO, "--nproc-per-node", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[localhost:0] hello rank 0 of 2 local 0 / 2 args ['--x', '1 2']" in r.stdout
    assert "[localhost:1] hello rank 1 of 2 local 1 / 2 args ['--x', '1 2']" in r.stdout
    # envcheck's own venv (its console script may name that venv's python or python3)
    assert f"# interpreter: {Path(sys.executable).parent}/python" in r.stdout
    assert "(this machine: ranks run under" in r.stdout
    assert "torch is installed there" in r.stdout
    assert r.stdout.splitlines()[-1] == "# PASS: 1 host, 2 ranks; all exited 0"


def test_quiet_others_streams_rank_0_only_and_the_log_dir_keeps_every_rank(tmp_path):
    r = launch(tmp_path, HELLO, "--nproc-per-node", "2", "--quiet-others", "--log-dir",
               str(tmp_path / "logs"), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[localhost:0] hello" in r.stderr and "[localhost:1]" not in r.stderr
    d = json.loads(r.stdout)
    assert [x["status"] for x in d["ranks"]] == ["ok", "ok"]
    assert all(x["start"] <= x["end"] for x in d["ranks"])
    log = Path(d["ranks"][1]["log"])
    assert log.parent == Path(d["log_dir"]) and log.name == "rank1.localhost.log"
    assert log.read_text().startswith("hello rank 1 of 2")


def test_a_rank_killed_by_a_signal_is_named_with_exit_3_and_the_others_stopped(tmp_path):
    start = time.monotonic()
    r = launch(tmp_path, SELF_KILL, "--nproc-per-node", "3", "--json", "--grace", "1")
    assert r.returncode == 3, r.stdout + r.stderr
    d = json.loads(r.stdout)
    f = d["failure"]
    assert (f["kind"], f["rank"], f["signal"]) == ("rank_killed", 1, 9)
    assert "rank 1 on localhost was killed by signal 9 (SIGKILL)" in f["message"]
    assert [x["stopped"] for x in d["ranks"]] == [True, False, True]
    assert time.monotonic() - start < 60


def test_ctrl_c_stops_every_rank_and_exits_130(tmp_path):
    (tmp_path / "s.py").write_text(SLEEP)
    p = subprocess.Popen([envcheck_exe(), "launch", "--no-audit", "--chdir", str(tmp_path),
                          "--nproc-per-node", "2", "--", "s.py"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    seen = ""
    while seen.count("] up") < 2 and time.monotonic() < deadline:
        seen += p.stdout.readline()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, seen + out + err
    assert "interrupted (Ctrl-C): every rank on every host was stopped" in out


@pytest.mark.parametrize("args, words", [
    ([], "no script to launch (fix: put it after --"),
    (["--env", "RANK=3", "--", "s.py"], "--env RANK is set by envcheck launch"),
    (["--env", "NOEQUALS", "--", "s.py"], "--env 'NOEQUALS' is not NAME=VALUE"),
    (["--sync", "/nonexistent/x", "--no-audit", "--", "s.py"], "--sync '/nonexistent/x': no such"),
])
def test_bad_input_is_one_line_and_exit_2(args, words):
    r = run_cli("launch", *args, timeout=60)
    assert r.returncode == 2, r.stdout + r.stderr
    assert words in r.stderr and len(r.stderr.strip().splitlines()) <= 4


def test_the_node_launcher_is_python_36_syntax():
    vermin = Path(sys.executable).parent / "vermin"
    exe = str(vermin) if vermin.exists() else "vermin"
    try:
        r = subprocess.run([exe, "-t=3.6-", "--no-tips", "--violations",
                            str(REPO / "envcheck" / "node" / "script_launcher.py"),
                            str(REPO / "envcheck" / "node" / "rank_supervisor.py"),
                            str(REPO / "envcheck" / "node" / "rank_protocol.py"),
                            str(REPO / "tests" / "launch" / "scripts" / "ddp_tiny.py")],
                           capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("vermin is not installed")
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_shipped_launcher_finds_its_supervisor_even_under_pythonsafepath(tmp_path):
    """As the controller ships it: the boot writes the payload into the run directory and becomes
    the launcher, which imports the shared supervision from there; PYTHONSAFEPATH=1 (the
    script's directory not on sys.path) must not hide it."""
    import os
    from envcheck.ranks.start import boot
    from envcheck.launch.preflight import node_sources
    script = tmp_path / "hello.py"
    script.write_text("print('hello from rank', __import__('os').environ['RANK'])\n")
    run_dir = tmp_path / "run"
    payload = json.dumps(node_sources())
    p = subprocess.run([sys.executable, "-c", boot("script_launcher.py"), "launch", "--dir", str(run_dir),
                        "--nproc", "2", "--local-world-size", "2", "--deadline", "60", "--", str(script)],
                       input=payload, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, PYTHONSAFEPATH="1", MASTER_ADDR="127.0.0.1", WORLD_SIZE="2"))
    recs = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(r["line"] for r in recs if r["type"] == "out") == ["hello from rank 0", "hello from rank 1"]
    assert [r["code"] for r in recs if r["type"] == "exit"] == [0, 0]
    assert recs[-1]["type"] == "launcher" and recs[-1]["status"] == "done"
    assert not run_dir.exists()   # the launcher removed its run directory


def test_sync_is_built_only_for_another_host_and_bounded(tmp_path, monkeypatch):
    from envcheck.errors import UsageError
    from envcheck.launch import preflight as lp
    from envcheck.remote import LocalRemote
    built = []
    monkeypatch.setattr(lp, "sync_archive", lambda paths: built.append(paths) or (b"", []))
    assert lp.sync([LocalRemote()], ["/usr"], 10, 1) == [] and built == []   # nothing to copy to
    monkeypatch.undo()
    monkeypatch.setattr(lp, "MAX_SYNC_FILES", 50)
    start = time.monotonic()
    with pytest.raises(UsageError, match="--sync /usr: more than"):
        lp.sync_archive(["/usr"])
    assert time.monotonic() - start < 5        # the walk stops at the bound
    (tmp_path / "train.py").write_text("print(1)\n")
    data, names = lp.sync_archive([str(tmp_path / "train.py")])
    assert names == [str(tmp_path / "train.py")] and data[:2] == b"\x1f\x8b"
