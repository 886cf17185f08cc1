# envcheck probe, part gcc: the gcc first on PATH
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

from base import first_number, section
from run import run, which


def gcc_argv():
    gcc = which("gcc")
    return [gcc, "-dumpfullversion", "-dumpversion"] if gcc else None


@section("gcc", starts=gcc_argv)
def collect_gcc(facts=None):
    argv = gcc_argv()
    gcc = argv[0] if argv else None
    res = run(argv) if argv else None
    return {"version": first_number(res[1]) if res and res[0] == 0 else None, "path": gcc}
