"""LocalRemote, the Remote for a command given no hosts: its timeout is a promise."""
from __future__ import annotations

import time

from envcheck.remote import LocalRemote


def test_a_timeout_returns_even_when_a_grandchild_left_the_group_holding_the_pipes(tmp_path):
    pidfile = tmp_path / "pid"
    # the escaped grandchild keeps stdout open for 60 s; the shell itself runs past the timeout
    cmd = f"setsid sh -c 'echo $$ > {pidfile}; sleep 60' & sleep 30"
    t = time.monotonic()
    res = LocalRemote().run(cmd, timeout=1)
    took = time.monotonic() - t
    try:
        assert res.exit_code is None and res.error == "timed out after 1 s"
        assert took < 15, took
    finally:
        import os
        import signal
        if pidfile.exists():
            try:
                os.killpg(int(pidfile.read_text()), signal.SIGKILL)  # the escaped session, sleep included
            except (ProcessLookupError, ValueError):
                pass


def test_a_command_within_its_timeout_returns_its_output():
    res = LocalRemote().run("echo out; echo err >&2; exit 3", timeout=10)
    assert (res.exit_code, res.stdout, res.stderr) == (3, "out\n", "err\n")
