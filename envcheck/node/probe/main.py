# envcheck probe, part main: arguments, which sections run, the document, printing it
# Node side, stdlib only, Python >= 3.6. Shipped joined with the other parts of
# envcheck/node/probe/ as ONE script on stdin (envcheck/audit/probe.py: probe_source()), where
# the imports from other parts are dropped: each part still reads, and runs, on its own.

import json
import os
import sys
import time
from kept import save_answers
from base import ERRORS, HELP, SECTIONS, Settings, safely
from run import prestart, reap
# the parts that register sections: imported for that when this file runs on its own
import cuda, cuda_compat, cudnn, deep, disk, driver, gcc, gpu_processes, health, host, login  # noqa: F401,E401
import manifest, nccl, net, numpy_version, nvlink, owner, packages, pci, pip_cudnn, port, privilege  # noqa: F401,E401
import rcfile, torch_version  # noqa: F401,E401

USAGE = ("usage: probe.py [--deep] [--timeout SECONDS] [--only SECTION,...] [--path PATH]... "
         "[--file PATH]... [--lines]")
# The sections an audit reads, in the order of the document ("deep" only with --deep, before
# "torch", which takes the CUDA of the torch build from it). A section this script lacks (a
# part left out) is not run. The other sections (privilege, login, disk, port, resources, tools,
# gpu_processes, toolkit, manifest, owner, pip_cudnn, rcfile) run only when --only names them:
# the commands that need them ask.
DOCUMENT = ("host", "python", "gpus", "cuda", "cudnn", "packages", "deep", "torch", "nccl", "gcc",
            "env", "net", "health", "numpy", "pci_gpus", "cuda_compat")


def usage_error(message):
    sys.stderr.write("%s\nprobe.py: error: %s\n" % (USAGE, message))
    raise SystemExit(2)  # argparse's code for a usage error


def option_value(a, args):
    return a.partition("=")[2] if "=" in a else (args.pop(0) if args else "")


def parse_args(argv):
    """(with_deep, timeout, as_lines) from the command line, --only, --path and --file into
    Settings; argparse alone would cost ~7 ms of start-up."""
    with_deep, timeout, as_lines, args = False, Settings.timeout, False, list(argv)
    while args:
        a = args.pop(0)
        if a == "--deep":
            with_deep = True
        elif a == "--lines":
            as_lines = True
        elif a == "--only" or a.startswith("--only="):
            names = [n for n in option_value(a, args).split(",") if n]
            unknown = [n for n in names if n not in SECTIONS]
            if unknown or not names:
                usage_error("--only takes sections among %s, got %r"
                            % (",".join(sorted(SECTIONS)), ",".join(unknown or names)))
            Settings.only = (Settings.only or []) + names
        elif a == "--path" or a.startswith("--path="):
            value = option_value(a, args)
            if not value.startswith("/"):
                usage_error("--path needs an absolute path, got %r" % value)
            Settings.paths.append(value)
        elif a == "--file" or a.startswith("--file="):
            value = option_value(a, args)
            if not value.startswith(("/", "~/")):
                usage_error("--file needs an absolute path or one under ~/, got %r" % value)
            Settings.files.append(value)
        elif a == "--timeout" or a.startswith("--timeout="):
            value = option_value(a, args)
            try:
                timeout = float(value)
            except ValueError:
                timeout = -1.0
            if not timeout > 0:
                usage_error("--timeout needs a number of seconds > 0, got %r" % value)
        elif a in ("-h", "--help"):
            sys.stdout.write("%s\n\n%s\n" % (USAGE, HELP.strip()))
            raise SystemExit(0)
        else:
            usage_error("unknown argument %r" % a)
    return with_deep, timeout, as_lines


def main(argv=None):
    with_deep, Settings.timeout, as_lines = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        facts = collect(with_deep)
    finally:
        reap()  # nothing the probe started outlives it, even when it crashes
    if as_lines:
        sys.stdout.write("".join(line + "\n" for line in flat_lines(facts)))
    else:
        sys.stdout.write(json.dumps(facts, default=str) + "\n")
    try:  # after the document: the version answers learnt, for the next run (part kept)
        save_answers()
    except Exception:  # noqa: BLE001 - a cache must never cost the facts already printed
        pass
    return 0


def flat_lines(value, key=""):
    """--lines: the document as `section.key=value` lines (list items by index: toolkit.0.path),
    for a shell script on the node that reads one value with sed: install-cuda's check of the
    toolkit it just installed. A value's backslashes and newlines are escaped (\\\\, \\n); None is
    empty, true/false/numbers as JSON writes them."""
    if isinstance(value, dict):
        return [l for k in value for l in flat_lines(value[k], "%s.%s" % (key, k) if key else str(k))]
    if isinstance(value, list):
        return [l for i, v in enumerate(value) for l in flat_lines(v, "%s.%d" % (key, i) if key else str(i))]
    if value is None:
        text = ""
    elif isinstance(value, str):
        text = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    else:
        text = json.dumps(value, default=str)
    return ["%s=%s" % (key, text)]


def plan(names):
    """The registered sections to run for `names`, each after the sections it needs."""
    order = []

    def add(name):
        if name in SECTIONS and name not in order:
            for need in SECTIONS[name].needs:
                add(need)
            order.append(name)
    for name in names:
        add(name)
    return [SECTIONS[n] for n in order]


def collect(with_deep):
    start = time.time()
    if Settings.only is None:
        sections = plan([n for n in DOCUMENT if with_deep or n != "deep"])
    else:  # deep first: torch takes the CUDA of the torch build from it
        sections = plan((["deep"] if with_deep else []) + Settings.only)
        Settings.only = [s.name for s in sections]  # what runs, what they need included
    for s in sections:  # these commands run while the driver is read
        cmd = s.starts() if s.starts else None
        if cmd:
            safely("start", lambda: prestart(cmd))
    facts = {"schema": 1, "origin": "probe",
             "probe": {"deep": with_deep, "seconds": None}}
    Settings.running = [s.name for s in sections]   # whose per-GPU readers the driver's session runs
    if Settings.only:
        facts["probe"]["only"] = Settings.only
    for s in sections:
        value = safely(s.keys[0], lambda: s.fn(facts), s.default)
        if len(s.keys) == 1:
            facts[s.keys[0]] = value
        else:
            facts.update(zip(s.keys, value or (None,) * len(s.keys)))
    reap()
    facts["errors"] = ERRORS
    facts["probe"]["seconds"] = round(time.time() - start, 3)
    return facts


def exit_now(code):
    """Exit without the interpreter's teardown (freeing every module and object, unloading NVML):
    ~2.5 ms of a probe's CPU (bench/probe_cpu.py). Only once all is written out: a flush
    that fails (a closed pipe) takes the ordinary way out, which reports it."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - the ordinary exit says what went wrong
        sys.exit(code)
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
