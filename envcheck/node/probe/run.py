# envcheck probe, part run: running commands with timeouts, reading files
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
import select
import time
try:  # the C module: signal.py turns its constants into enums at import, ~0.4 ms a probe
    import _signal as signal
except ImportError:  # an interpreter without it
    import signal
from base import ERRORS, Settings, which  # noqa: F401 - which: base's, the parts import it from here
from kept import keep_answer, kept_part, known_answer, stable_key

# ---- running things: every command has a timeout, a missing one is not an error ----
# os.posix_spawn and a poll loop, not subprocess: importing subprocess (selectors, threading,
# contextlib ...) costs a node ~4 ms of CPU on every probe; Python 3.6/3.7, which lack
# posix_spawn, and C libraries without POSIX_SPAWN_SETSID use subprocess as before.

STARTED = {}  # argv tuple -> the command started ahead by prestart(), for run() to finish
DONE = {}     # argv tuple -> what run() gave: a command is run once per probe, however many ask
KEYS = {}     # argv tuple -> its key among the answers the node keeps (part kept), worked out once
RESTORED = ("SIGPIPE", "SIGXFSZ")   # ignored by Python, default again in the commands (as Popen does)


class Spawned(object):
    """A command started with posix_spawn: its pid (the leader of a session of its own) and the
    read ends of its stdout and stderr."""

    def __init__(self, pid, out, err):
        self.pid, self.out, self.err = pid, out, err


def start(argv):
    """The command started in its own session (on timeout the whole tree goes, or a grandchild
    would hold the pipes), stdin /dev/null, LC_ALL=C; None when the program is not there."""
    if "/" not in argv[0]:
        path = which(argv[0])
        if path is None:
            return None
        argv = [path] + list(argv[1:])
    env = dict(os.environ, LC_ALL="C")
    if hasattr(os, "posix_spawn"):
        out, err = os.pipe(), os.pipe()   # not inherited: only the copies made 1 and 2 are
        try:
            pid = os.posix_spawn(  # novermin (3.8+, guarded)
                argv[0], argv, env, setsid=True,
                setsigdef=[getattr(signal, n) for n in RESTORED if hasattr(signal, n)],
                file_actions=[(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),  # novermin
                              (os.POSIX_SPAWN_DUP2, out[1], 1), (os.POSIX_SPAWN_DUP2, err[1], 2)])  # novermin
            return Spawned(pid, out[0], err[0])
        except NotImplementedError:  # no POSIX_SPAWN_SETSID in this C library: Popen below
            os.close(out[0])
            os.close(err[0])
        except OSError:
            os.close(out[0])
            os.close(err[0])
            return None
        finally:
            os.close(out[1])
            os.close(err[1])
    import subprocess
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError:
        return None


def prestart(argv):
    """Start a command now that run() will ask for later, so the node's commands run side by
    side (nvidia-smi alone can take a second on a node without persistence mode)."""
    if tuple(argv) not in STARTED and tuple(argv) not in DONE and known_answer(kept_key(argv)) is None:
        STARTED[tuple(argv)] = start(argv)


def kept_key(argv):
    """stable_key(argv) (part kept), once per probe: ldconfig -p is prestarted for three sections
    and run for one, gcc prestarted and run, and each look reads and stats the program's files
    (~0.15 ms of CPU; bench/probe_cpu.py)."""
    if tuple(argv) not in KEYS:
        KEYS[tuple(argv)] = stable_key(argv)
    return KEYS[tuple(argv)]


def run(argv, timeout=None):
    """(exit code, stdout, stderr), or None when the program is not there or timed out; the
    same answer again when another section asks for the same argv (nvcc -V of the toolkit in
    use and of the toolkit tree it belongs to, one process). The timeout counts from when we
    begin to wait: a prestarted command may have sat blocked on a full pipe while we waited
    for another, which must not count against it. A version query whose program answers by
    itself is answered from what the node kept for that very file (part kept)."""
    key = tuple(argv)
    if key not in DONE:
        stable = kept_key(argv)
        DONE[key] = known_answer(stable)
        if DONE[key] is None:
            DONE[key] = finish_command(key, STARTED.pop(key) if key in STARTED else start(argv),
                                       timeout or Settings.timeout)
            keep_answer(stable, kept_part(argv, DONE[key]))
    return DONE[key]


def finish_command(argv, proc, timeout):
    if proc is None:
        return None
    if isinstance(proc, Spawned):
        got = drain(proc, time.monotonic() + timeout)
    else:
        got = popen_result(proc, timeout)
    if got is None:
        kill(proc)
        ERRORS.append("%s: timed out after %g s" % (" ".join(argv), timeout))
        return None
    return got[0], got[1].decode("utf-8", "replace"), got[2].decode("utf-8", "replace")


def drain(proc, deadline):
    """(exit code, stdout bytes, stderr bytes) of a Spawned command, both pipes read as they
    fill; None at the deadline."""
    chunks = {proc.out: [], proc.err: []}
    poller = select.poll()
    for fd in chunks:
        poller.register(fd, select.POLLIN)
    live = len(chunks)
    while live:
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        for fd, _ in poller.poll(left * 1000):
            data = os.read(fd, 1 << 16)
            if data:
                chunks[fd].append(data)
            else:  # end of file: the command closed it (exited, mostly)
                poller.unregister(fd)
                live -= 1
    code = wait_exit(proc.pid, deadline)
    if code is None:
        return None
    close_pipes(proc)
    return code, b"".join(chunks[proc.out]), b"".join(chunks[proc.err])


def wait_exit(pid, deadline):
    """The exit code of child `pid` (-N: killed by signal N, as Popen says), None if it is
    still running at the deadline."""
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.002)


def popen_result(proc, timeout):
    import subprocess
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    return proc.returncode, out, err


def close_pipes(proc):
    for fd in (proc.out, proc.err):
        try:
            os.close(fd)
        except OSError:
            pass


def kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    # a grandchild that left the group may still hold the pipes: never wait on them, and bound
    # the wait for the child itself
    if isinstance(proc, Spawned):
        close_pipes(proc)
        try:
            wait_exit(proc.pid, time.monotonic() + 5)  # a zombie that does not go: give up, go on
        except OSError:
            pass
        return
    for pipe in (proc.stdout, proc.stderr):
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass
    try:
        proc.wait(timeout=5)
    except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: give up on a zombie, go on
        pass


def reap():
    """Stop what was prestarted but never asked for (a collector that failed early)."""
    while STARTED:
        proc = STARTED.popitem()[1]
        if proc is not None:
            kill(proc)


def ls(directory, pattern):
    """Sorted paths of the entries of `directory` whose names match the regex `pattern` (what
    glob would give, without importing glob and fnmatch)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    rx = re.compile(pattern) if isinstance(pattern, str) else pattern
    return sorted(os.path.join(directory, n) for n in names if rx.match(n))


def read(path, limit=1 << 20):
    try:
        with open(path, "rb") as f:
            return f.read(limit).decode("utf-8", "replace")
    except OSError:
        return None
