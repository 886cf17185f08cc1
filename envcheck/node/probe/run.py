# envcheck probe, part run: running commands with timeouts, reading files
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
import signal
import subprocess
from base import ERRORS, Settings

# ---- running things: every command has a timeout, a missing one is not an error ----

STARTED = {}  # argv tuple -> Popen started ahead by prestart(), for run() to finish


def start(argv):
    """Popen of argv in its own session (on timeout the whole tree goes, or a grandchild would
    hold the pipes), or None when the program is not there."""
    env = dict(os.environ, LC_ALL="C")
    try:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError:
        return None


def prestart(argv):
    """Start a command now that run() will ask for later, so the node's commands run side by
    side (nvidia-smi alone can take a second on a node without persistence mode)."""
    if tuple(argv) not in STARTED:
        STARTED[tuple(argv)] = start(argv)


def run(argv, timeout=None):
    """(exit code, stdout, stderr), or None when the program is not there or timed out.
    The timeout counts from when we begin to wait: a prestarted command may have sat blocked on
    a full pipe while we waited for another, which must not count against it."""
    timeout = timeout or Settings.timeout
    key = tuple(argv)
    proc = STARTED.pop(key) if key in STARTED else start(argv)
    if proc is None:
        return None
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill(proc)
        ERRORS.append("%s: timed out after %g s" % (" ".join(argv), timeout))
        return None
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    # a grandchild that left the group may still hold the pipes: never wait on them, and bound
    # the wait for the child itself
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


def which(name, extra=()):
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    for d in extra:  # sbin is often missing from a non-interactive PATH
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None
