# envcheck probe, part gcc: the gcc first on PATH, and the versioned gcc-N installed beside it
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import os
import re
from base import first_number, section
from run import ls, run, which


def gcc_argv():
    gcc = which("gcc")
    return [gcc, "-dumpfullversion", "-dumpversion"] if gcc else None


@section("gcc", starts=gcc_argv)
def collect_gcc(facts=None):
    argv = gcc_argv()
    gcc = argv[0] if argv else None
    res = run(argv) if argv else None
    return {"version": first_number(res[1]) if res and res[0] == 0 else None, "path": gcc,
            "installed": installed_gccs()}


def installed_gccs(limit=8):
    """[{"path", "version"}] for the gcc-N on PATH (and in /usr/bin): a fix can then name a gcc
    that is already there instead of asking to install one."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d] + ["/usr/bin"]
    found, seen, listed = [], set(), set()
    for d in dirs:
        real = os.path.realpath(d)
        if real in listed:  # /bin is /usr/bin on a merged /usr: a name there is seen already
            continue
        listed.add(real)
        for path in ls(d, r"^gcc-[0-9]+$"):
            name = os.path.basename(path)
            if name in seen or not os.access(path, os.X_OK):
                continue
            seen.add(name)
            res = run([path, "-dumpfullversion", "-dumpversion"])
            if res and res[0] == 0 and re.match(r"^\d", res[1].strip()):
                found.append({"path": path, "version": first_number(res[1])})
            if len(found) >= limit:
                return found
    return found
