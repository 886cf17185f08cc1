"""envcheck rank supervisor: what the node-side launchers share, stdlib only, Python >= 3.6.

allreduce_launcher.py (nccl-test, doctor) and script_launcher.py (launch) start a node's ranks
and supervise them alike. This file is shipped beside them in the run's own directory and
imported by their `launch` mode only (their other modes run alone, from stdin); the controller
never imports it.

A launcher leads a process group that holds its ranks (one kill from the controller reaches them
all) and writes its pid into the run directory for that kill. Then it watches: the first reason
to stop wins (a signal, being orphaned, its deadline, its ranks' own end), and a heartbeat on
stdout fails as soon as the controller's connection is gone. Last, every rank still running gets
SIGTERM and, after a grace period, SIGKILL. What a launcher writes is rank_protocol.py's.
"""
import os
import signal
import time

import rank_protocol as rp

HEARTBEAT_S = 2.0


class Rank(object):
    """One rank a launcher started: its global and local rank, its process, and the thread that
    forwards its output (launch), joined before its exit is reported."""

    def __init__(self, rank, local, proc, reader=None, log=None):
        self.rank, self.local, self.proc, self.reader, self.log = rank, local, proc, reader, log
        self.reported = False


def report_exits(ranks, stopping):
    """An exit record for every rank that ended since the last call (after its output); returns
    those that failed. The time is when we saw it end: across ranks and hosts it says which one
    failed first (the controller's rule, envcheck/ranks/failure.py, names it)."""
    ended = [(r, time.time()) for r in ranks if not r.reported and r.proc.poll() is not None]
    failed = []
    for r, when in ended:
        if r.reader is not None:
            r.reader.join(2)
        r.reported = True
        rp.exited(r.rank, r.local, r.proc.returncode, when, stopping)
        if r.proc.returncode != 0:
            failed.append(r)
    return failed


def lead_process_group(run_dir):
    try:
        os.setsid()   # one process group for us and our ranks: one kill reaches them all
    except OSError:
        pass          # already a group leader
    with open(os.path.join(run_dir, "launcher.pid"), "w") as f:
        f.write(str(os.getpid()))


def catch_stop_signals():
    """A list that gets "signal N" when we are told to stop (SIGTERM, SIGHUP, SIGINT)."""
    stop = []
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: stop.append("signal %d" % signum))
    return stop


def watch(stop, deadline_s, poll, on_stopped, on_deadline, beat, tick):
    """Wait until the first reason to stop; returns the launcher's exit code.

    stop: catch_stop_signals()'s list; poll(): None while the ranks run, else the exit code
    their end means; on_stopped(why) and on_deadline(): the record to write; beat(): write a
    heartbeat, False when the controller is gone. Told to stop, orphaned, or past the deadline: 3."""
    ppid = os.getppid()
    end = time.monotonic() + deadline_s
    last_beat = time.monotonic()
    while True:
        if stop:
            on_stopped(stop[0])
            return 3
        if os.getppid() != ppid:
            return 3
        if time.monotonic() > end:
            on_deadline()
            return 3
        code = poll()
        if code is not None:
            return code
        if time.monotonic() - last_beat > HEARTBEAT_S:
            if not beat():
                return 3
            last_beat = time.monotonic()
        time.sleep(tick)


def stop_all(procs, grace_s, kill_group=False):
    """SIGTERM to every process still running, SIGKILL after grace_s to any that is left; with
    kill_group, then SIGKILL to whatever else is left in our process group."""
    for p in procs:
        if p.poll() is None:
            try:
                p.terminate()
            except OSError:
                pass
    end = time.monotonic() + grace_s
    while any(p.poll() is None for p in procs) and time.monotonic() < end:
        time.sleep(0.02)
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    if kill_group:
        kill_group_members()


def kill_group_members():
    """SIGKILL what the ranks left in our process group (a DataLoader worker, a shell child)."""
    me, group = os.getpid(), os.getpgrp()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            if os.getpgid(int(name)) == group:
                os.kill(int(name), signal.SIGKILL)
        except OSError:
            pass

