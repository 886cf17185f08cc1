#!/usr/bin/env python3
"""envcheck probe: read what this node has for GPU training and print it as ONE JSON document.

Read-only. It installs nothing and sends nothing anywhere, and writes nothing but its own
cache in ~/.cache/envcheck: its compiled code (kept by the loader envcheck ships in front of it,
envcheck/node/probe_loader.py) and the answers of nvcc -V and gcc -dumpversion per program file
and ldconfig -p, NVML's failure to start (part kept); ENVCHECK_PROBE_CACHE=off: none. It reads
files, asks the kernel's rtnetlink for the IPv4 addresses, asks
the driver's NVML library (libnvidia-ml.so.1, through pynvml or ctypes, in a thread given up after
the timeout) and runs a few read-only commands, each with a timeout: nvidia-smi (only when NVML
did not answer), nvcc -V, ldconfig -p, gcc -dumpversion (and that of the compiler nvcc runs),
ip -o -4 addr (only where rtnetlink does not answer), and dpkg-query for a
distribution-packaged CUDA toolkit. It loads
libnvidia-ml.so.1 even without a kernel module, to tell which driver userspace is installed.
With --deep it also imports torch in a child process (so a crash or hang there cannot lose the
rest) and runs a tiny tensor op on every GPU.

The sections a command asks for by name (--only) read more, and only then: privilege runs
`sudo -n true`, owner `dpkg-query -S` (or `rpm -qf`) on a toolkit's nvcc and cuda.h, rcfile reads
the shell start-up files named by --file (their text: env edits them), manifest the file
install-cudnn keeps in a toolkit. --lines prints `section.key=value` lines instead of JSON.

Usage: python3 probe.py [--deep]     or, as envcheck ships it:  python3 - [--deep] < probe.py
Stdlib only, Python >= 3.6. Schema: envcheck/facts/schema.py. Imports nothing from envcheck.
"""
# Few and light imports on purpose: 32 nodes that share a machine, or one busy node, pay for
# every module (argparse, glob, shutil, platform, importlib.metadata cost ~40 ms of a ~100 ms run)
import os
import re
import sys

if sys.version_info < (3, 6):  # this file stays ASCII and parseable by 2.7 so it can say so
    sys.stderr.write("envcheck probe: needs Python >= 3.6, this is %s (%s); point "
                     "--node-python at a newer interpreter\n" % (sys.version.split()[0], sys.executable))
    sys.exit(3)

HELP = __doc__
DEEP_FACTOR = 12     # --deep gets 12x the command timeout: CUDA init on many GPUs can be slow
ERRORS = []


class Settings(object):
    """What main sets from the command line, read by every part (a class, not a module-level
    name, so that a part that imported it sees the value main set)."""
    timeout = 15.0   # seconds for any one command (--timeout)
    paths = []       # --path: the places the disk, toolkit, manifest and owner sections look at
    files = []       # --file: the shell start-up files the rcfile section reads (~/ is the home)
    only = None      # --only: the sections asked for (None: the audit's document)
    running = None   # the sections this run collects (None: not planned by main, e.g. a part on its own)


# ---- the registry: every collector is a section, registered the same way ----

class Section(object):
    def __init__(self, name, fn, keys, default, needs, starts, per_gpu):
        self.name, self.fn, self.keys, self.default = name, fn, keys, default
        self.needs, self.starts, self.per_gpu = needs, starts, per_gpu


SECTIONS = {}   # name -> Section; main says which run, in which order


def section(name, keys=None, default=None, needs=(), starts=None, per_gpu=None):
    """Register fn(facts) as the collector of section `name`. fn gets the document so far and
    returns the value of its key (`keys`: the document keys it fills, (name,) by default; with
    several, a tuple of values). It runs under safely(), so one failing section costs only its
    own keys (`default`). needs: sections whose keys fn reads, run first. starts: a function
    giving the argv of a command fn will run, started ahead so commands run side by side.
    per_gpu: fn(nv, handle) read for every GPU inside the driver's NVML session (no second
    nvmlInit); its value goes under gpus[i][name]. Only NVML fills them: nvidia-smi alone gives none."""
    def register(fn):
        SECTIONS[name] = Section(name, fn, tuple(keys or (name,)), default, tuple(needs), starts, per_gpu)
        return fn
    return register


def safely(name, fn, default=None):
    try:
        return fn()
    except Exception as e:  # one odd fact must never cost the whole document
        ERRORS.append("%s: %s: %s" % (name, type(e).__name__, e))
        return default


def first_number(text):
    m = re.search(r"\d+(?:\.\d+)*", text or "")
    return m.group(0) if m else None


def which(name, extra=()):
    """The file `name` runs as, found on PATH as the shell finds it (then in `extra`), or None.
    Here, not in part run, because part kept looks programs up too (and run imports kept)."""
    for d in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(d or ".", name)
        if os.access(path, os.X_OK) and not os.path.isdir(path):
            return path
    for d in extra:  # sbin is often missing from a non-interactive PATH
        if os.access(os.path.join(d, name), os.X_OK):
            return os.path.join(d, name)
    return None
