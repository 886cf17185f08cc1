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


def test_fan_out_keeps_input_order_and_turns_an_exception_into_that_items_outcome():
    import threading as _th
    from envcheck.remote import fan_out

    # The last item finishes first, by construction rather than by sleeps: the others wait
    # until on_done has seen it (a sleep-ordered version failed under CI load).
    first_done = _th.Event()

    def fn(i):
        if i != 4:
            assert first_done.wait(timeout=30), "item 4 never reported done"
        if i == 2:
            raise ValueError("boom")
        return i * 10

    seen = []

    def on_done(o):
        seen.append(o.item)
        first_done.set()

    group = fan_out([0, 1, 2, 3, 4], fn, forks=5, on_done=on_done)
    assert [o.item for o in group] == [0, 1, 2, 3, 4]
    assert [o.value for o in group if o.ok] == [0, 10, 30, 40]
    assert [(o.item, str(o.error)) for o in group.failed] == [(2, "boom")]
    assert group.values_or(lambda item, e: f"{item}: {e}") == [0, 10, "2: boom", 30, 40]
    assert sorted(seen) == [0, 1, 2, 3, 4] and seen[0] == 4   # on_done as each one finishes


def test_fan_out_runs_at_most_forks_items_at_once():
    import threading as _th
    from envcheck.remote import fan_out
    running, peak, lock = [0], [0], _th.Lock()

    together = _th.Barrier(3, timeout=30)   # 3 at once, whatever the scheduling: no sleep race

    def fn(_):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        together.wait()
        with lock:
            running[0] -= 1

    group = fan_out(list(range(12)), fn, forks=3)
    assert peak[0] == 3 and not group.failed
