#!/usr/bin/env python3
"""What a person waits for at the prompt: the CPU of `envcheck plan --gpu sm_90`, `check` with
flags, `explain` of one error line and `--help`, against the interpreter's own start-up
(`python -c pass`), with the load average beside the figures. Targets (issue 26): plan <= 0.2 s,
check / explain / --help <= 0.15 s on a 2-core machine.

    python3 bench/cli_cpu.py [--quick] [--runs N] [--against DIR]

The installed envcheck (`python -m envcheck` with this interpreter, from a neutral directory, so a
checkout is not imported by accident). --against DIR: also an envcheck package unpacked in DIR
(a wheel of main: `pip wheel --no-deps -w W REPO && unzip W/*.whl -d DIR`), run with
PYTHONPATH=DIR, interleaved with this one in random order so both see the same load; each command
then also gets the median of its paired differences (this run minus the other, in the same round),
which a loaded machine disturbs far less than either median. CPU is user +
system of the process (os.wait4), the median of the runs: a busy machine inflates it far less
than wall time, but it still does (shared caches, SMT siblings): read the `python -c pass` row
as the scale. --quick: one run each (what CI runs, tests/test_bench.py). Then the modules each
command imports, the 12 costliest by -X importtime (cumulative, ms; one run).
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys

COMMANDS = [("plan --gpu sm_90", ["plan", "--gpu", "sm_90"], 200),
            ("check (flags)", ["check", "--driver", "535.104.05", "--cuda", "12.4", "--torch", "2.5.1+cu124",
                               "--gpu", "sm_90"], 150),
            ("explain (one line)", ["explain", "no kernel image is available for execution on the device"], 150),
            ("--help", ["--help"], 150)]


def cpu_ms(argv, env):
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.chdir("/")
        os.execve(argv[0], argv, env)
    ru = os.wait4(pid, 0)[2]
    return (ru.ru_utime + ru.ru_stime) * 1000


def variants(against):
    base = dict(os.environ)
    base.pop("PYTHONPATH", None)
    out = [("python -c pass", [sys.executable, "-c", "pass"], base, None)]
    for who, env in [("this", base)] + ([("against", dict(base, PYTHONPATH=against))] if against else []):
        for name, args, target in COMMANDS:
            out.append((f"{name} ({who})" if against else name, [sys.executable, "-m", "envcheck"] + args, env, target))
    return out


def top_imports(args, env, n=12):
    err = subprocess.run([sys.executable, "-X", "importtime", "-m", "envcheck"] + args, env=env, cwd="/",
                         capture_output=True, text=True).stderr
    rows = [m.groups() for m in re.finditer(r"import time:\s+\d+ \|\s+(\d+) \| (\s*)(\S+)", err)]
    return sorted(((int(c) / 1000, name) for c, _, name in rows), reverse=True)[:n], len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--quick", action="store_true", help="one run each (CI)")
    ap.add_argument("--against", help="a directory holding another envcheck package, to compare")
    a = ap.parse_args()
    runs = 1 if a.quick else a.runs
    todo = variants(a.against)
    got = {name: [] for name, _, _, _ in todo}
    loads = []
    for _ in range(runs):
        random.shuffle(todo)
        for name, argv, env, _ in todo:
            got[name].append(cpu_ms(argv, env))
        loads.append(os.getloadavg()[0])
    print(f"{os.cpu_count()} CPUs, load average (1 min) {min(loads):.1f}-{max(loads):.1f} during the runs; "
          f"median of {runs} run(s), interleaved; Python {sys.version.split()[0]}")
    print(f"{'CPU per run':<44} {'ms':>7} {'min':>7} {'target':>7}")
    for name, _, _, target in sorted(todo, key=lambda v: v[0]):
        v = got[name]
        print(f"{name:<44} {statistics.median(v):>7.1f} {min(v):>7.1f} {target or '':>7}")
    if a.against:
        for name, _, _ in COMMANDS:
            pairs = [t - o for t, o in zip(got[f"{name} (this)"], got[f"{name} (against)"])]
            print(f"{name:<44} this minus against, median of the {runs} paired difference(s): "
                  f"{statistics.median(pairs):+.1f} ms")
    base = dict(os.environ)
    base.pop("PYTHONPATH", None)
    for name, args, _ in COMMANDS[:1] + COMMANDS[3:]:
        top, count = top_imports(args, base)
        print(f"`envcheck {' '.join(args)}` imports {count} modules; costliest (cumulative ms, one run): "
              + ", ".join(f"{mod} {ms:.0f}" for ms, mod in top))


if __name__ == "__main__":
    main()
