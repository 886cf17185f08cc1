"""How the harness starts and stops a host's launcher (envcheck/ranks/start.py): the run's own
directory on the node and the command that stops the launcher and its ranks, as strings and run
for real on this machine through LocalRemote (/bin/sh, as a node's login shell would) with a
stand-in launcher; tests/allreduce and tests/launch run the real launchers on simulated hosts."""
import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from envcheck.ranks.start import NODE_DIR, Starter, kill_cmd, launcher_cmd, node_files, run_dir
from envcheck.remote import LocalRemote


def test_the_run_directory_and_the_kill_command_name_the_run(tmp_path):
    d = run_dir("envcheck-ar-ab", 3)
    # under $TMPDIR when it is a directory, else /tmp (a TMPDIR naming nothing is never created)
    for tmpdir, want in ((str(tmp_path), f"{tmp_path}/envcheck-ar-ab-3"), (str(tmp_path / "no"), "/tmp/envcheck-ar-ab-3"),
                         ("", "/tmp/envcheck-ar-ab-3")):
        out = subprocess.run(["sh", "-c", f'printf %s "{d}"'], env={"PATH": "/usr/bin:/bin", "TMPDIR": tmpdir},
                             capture_output=True, text=True, timeout=10).stdout
        assert out == want, (tmpdir, out)
    cmd = kill_cmd("envcheck-ar-ab", 3, wait_s=2.0)
    assert cmd.startswith(f'd="{d}"; p=$(cat "$d/launcher.pid" 2>/dev/null); ')
    assert "[ $i -lt 20 ]" in cmd and 'kill -KILL -"$p"' in cmd and cmd.endswith('rm -rf "$d"; true')


def test_the_launcher_starts_in_that_directory_which_expands_on_the_node():
    cmd = launcher_cmd("python3", "allreduce_launcher.py", "envcheck-ar-ab", 1, ["--nproc", 2, "--", "a b"])
    assert cmd.startswith("python3 -c ")
    assert cmd.endswith(f" launch --dir \"{run_dir('envcheck-ar-ab', 1)}\" --nproc 2 -- 'a b'")


# ---- the Starter run for real on this machine (LocalRemote: /bin/sh, as SSH would run it)

# a stand-in launcher: says where it runs and what it was given, then does what --mode says
ENTRY = r'''
import json, os, signal, sys, time
a = sys.argv
d = a[a.index("--dir") + 1]
mode = a[a.index("--mode") + 1]
signal.alarm(600)        # never outlives its test by long, even where a planted bug hung that test
if mode == "ignore-term":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode != "hang":        # (hang: stays in start's process group, which its timeout kills)
    try:
        os.setsid()      # as rank_supervisor.lead_process_group: the group the stop signals
    except OSError:
        pass
with open(os.path.join(d, "launcher.pid"), "w") as f:
    f.write(str(os.getpid()))
print(json.dumps({"argv": a[1:], "script": a[0], "python": sys.executable, "files": sorted(os.listdir(d)),
                  "mode": oct(os.stat(d).st_mode & 0o777), "notes": open(os.path.join(d, "notes.txt")).read(),
                  "flag": os.environ.get("RUN_FLAG")}), flush=True)
if mode != "print":
    while True:
        signal.pause()
'''


@pytest.fixture
def run_id():
    """A run id for one test; whatever process still names it at the end is killed, so a test
    that fails (or a planted bug in the stop) leaves nothing running."""
    rid = f"envcheck-st-{uuid.uuid4().hex[:8]}"
    yield rid
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if rid.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(int(pid), signal.SIGKILL)
        except OSError:
            pass


def starter(monkeypatch, tmp_path, run_id, hosts=2):
    # the node's TMPDIR, as both the start and the stop command see it on a host
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    python = tmp_path / "node-python"      # --node-python: a name no PATH lookup would give
    if not python.exists():
        python.symlink_to(sys.executable)
    return Starter([LocalRemote(f"h{i}") for i in range(hosts)], str(python), "entry.py",
                   {"entry.py": ENTRY, "notes.txt": "shipped"}, run_id)


def test_a_host_s_launcher_becomes_the_entry_in_the_run_s_own_directory_with_the_shipped_files(tmp_path, monkeypatch, run_id):
    s, out = starter(monkeypatch, tmp_path, run_id), []
    r = s.start(1, ["--mode", "print", "--", "my DIR", 3], {"RUN_FLAG": "on"}, 30,
                on_stdout=out.append)
    d = f"{tmp_path}/{s.run_id}-1"
    assert (r.exit_code, r.error, r.stdout) == (0, None, "")      # stdout went to on_stdout, as it came
    said = json.loads(b"".join(out))
    assert said == {"argv": ["launch", "--dir", d, "--mode", "print", "--", "my DIR", "3"],
                    "script": f"{d}/entry.py", "python": f"{tmp_path}/node-python", "files": ["entry.py", "launcher.pid", "notes.txt"],
                    "mode": "0o700", "notes": "shipped", "flag": "on"}
    assert s.stop(1, 0, 30).exit_code == 0
    assert not (tmp_path / f"{s.run_id}-1").exists()          # the stop removes the run's directory


def running(s, i, mode):
    """Host i's launcher started in --mode MODE, in a thread, once it has said it runs: (the
    thread, a list that gets start's RunResult)."""
    ready, got = threading.Event(), []
    t = threading.Thread(target=lambda: got.append(s.start(i, ["--mode", mode], {"RUN_FLAG": "on"}, 120,
                                                           on_stdout=lambda b: ready.set())), daemon=True)
    t.start()
    assert ready.wait(60)
    return t, got


def test_stop_ends_a_running_launcher_and_its_directory(tmp_path, monkeypatch, run_id):
    s = starter(monkeypatch, tmp_path, run_id)
    t, got = running(s, 0, "wait")
    assert (tmp_path / f"{s.run_id}-0" / "launcher.pid").exists()
    assert s.stop(0, 5, 60).exit_code == 0
    t.join(60)
    assert not t.is_alive() and got[0].exit_code != 0            # TERMed, not run out
    assert not (tmp_path / f"{s.run_id}-0").exists()


def test_a_launcher_that_ignores_term_is_killed_after_wait_s_and_each_run_is_bounded(tmp_path, monkeypatch, run_id):
    s = starter(monkeypatch, tmp_path, run_id)
    t, got = running(s, 1, "ignore-term")
    # the stop waits wait_s (30 s) for a TERMed launcher: its own timeout ends it first
    assert s.stop(1, 30, 0.5).error == "timed out after 0.5 s"
    assert t.is_alive()
    assert s.stop(1, 0, 60).exit_code == 0                        # no wait: KILL at once
    t.join(60)
    assert not t.is_alive() and got[0].exit_code in (-9, 128 + 9)     # KILLed (as the shell reports it)
    # a launcher that never ends is ended by start's own timeout
    r = s.start(0, ["--mode", "hang"], {}, 0.5)
    assert r.error == "timed out after 0.5 s"


def test_node_files_are_the_packaged_node_scripts():
    assert node_files("script_launcher.py", "rank_protocol.py") == {
        n: (NODE_DIR / n).read_text() for n in ("script_launcher.py", "rank_protocol.py")}
    assert NODE_DIR.name == "node" and (NODE_DIR / "rank_supervisor.py").is_file()
