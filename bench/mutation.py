"""Test strength of the code that decides answers, measured by mutmut (issue 24, item 8).

For each module below, mutmut plants every mutant it knows (a flipped comparison, a changed
number or string, a dropped argument, `and` for `or` ...) one at a time and runs the fast,
non-cluster tests mapped to that module; a mutant no test fails on "survived". Prints the kill
rate per module and in total, mutmut's own figure: (killed + timeout) / (mutants - skipped);
a mutant no mapped test even runs ("no tests") counts as not killed.

Outside CI's time budget: a module takes from a minute (launch/outcome.py) to an hour or more
(rules/gpu.py) on one core; the whole set several hours (docs/test-strength.md).

    python3 bench/mutation.py --list                 # the modules and the tests mapped to each
    python3 bench/mutation.py versions hostlist      # some modules (names as --list shows them)
    python3 bench/mutation.py                        # all of them
    python3 bench/mutation.py rules/health --survivors   # and each survivor's diff

mutmut is a bench-only tool, never an envcheck dependency: it lives in its own venv
($ENVCHECK_MUTATION_VENV, default ~/.cache/envcheck-bench/mutmut), made on first use with
envcheck's test dependencies and matplotlib (the plot extra) but not envcheck itself, so the
only envcheck the tests import is mutmut's mutated copy. Each module is measured in a scratch
copy of this checkout (tracked and untracked files, as they are now) under --work (default: a
temp dir, removed unless --keep).
Results also go to WORK/results.json. Mutants judged equivalent (no behaviour can tell them
apart) are listed in bench/mutation_equivalent.txt with why; the second rate leaves them out.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MUTMUT = "mutmut==3.8.1"
EQUIVALENT = REPO / "bench" / "mutation_equivalent.txt"

NOTHING = "tests/allreduce/test_verdict.py"   # a fast file, for a module no test file is mapped to yet
RULES = ["tests/rules/test_rules.py", "tests/rules/test_boundaries.py", "tests/rules/test_unknown_is_never_ok.py",
         "tests/rules/test_documented.py"]
# module -> the fast, non-cluster tests that exercise it (mutmut then runs, per mutant, only
# those of them that reached the mutated function)
MODULES = {
    "versions": ["tests/test_versions.py", "tests/test_version_boundaries.py"],
    "hostlist": ["tests/test_hostlist.py", "tests/test_hostlist_edges.py", "tests/test_version_boundaries.py"],
    "inputs": ["tests/test_inputs.py"],
    "launch/outcome": ["tests/launch/test_outcome.py", "tests/launch/test_stream.py", "tests/ranks/test_failure.py"],
    "allreduce/bandwidth": ["tests/allreduce/test_bandwidth.py", "tests/allreduce/test_cause.py"],
    "allreduce/cause": ["tests/allreduce/test_cause.py"],
    "allreduce/verdict": ["tests/allreduce/test_verdict.py"],
    "allreduce/preflight": ["tests/allreduce/test_preflight.py", "tests/allreduce/test_ranks_per_host.py"],
    "allreduce/render": ["tests/allreduce/test_render.py"],
    "allreduce/pairs": ["tests/allreduce/test_pairs.py", "tests/allreduce/test_pairs_judge.py"],
    "allreduce/linkrate": ["tests/allreduce/test_linkrate.py", "tests/allreduce/test_nvlink.py"],
    "allreduce/nvlink": ["tests/allreduce/test_nvlink.py"],
    "allreduce/run": ["tests/allreduce/test_preflight.py", "tests/allreduce/test_run_analyse.py",
                      "tests/allreduce/test_run_local.py", "tests/allreduce/test_run_hosts.py"],
    "ranks/failure": ["tests/ranks/test_failure.py", "tests/launch/test_outcome.py", "tests/allreduce/test_cause.py"],
    "ranks/records": ["tests/ranks/test_protocol.py", "tests/allreduce/test_cause.py",
                      "tests/allreduce/test_run_analyse.py"],
    "ranks/start": ["tests/ranks/test_start.py"],
    "rules/__init__": RULES + ["tests/rules/test_registry.py", "tests/rules/test_fixcheck.py"],
    "rules/common": RULES + ["tests/rules/test_pci_gpus.py", "tests/rules/test_common_rules.py"],
    "rules/cuda": RULES + ["tests/rules/test_cuda_rules.py"],
    "rules/cudnn": RULES + ["tests/rules/test_facts_from_wheels.py", "tests/rules/test_cudnn_rules.py"],
    "rules/driver": RULES + ["tests/rules/test_driver_rules.py", "tests/matrix/test_driver_minima.py",
                             "tests/rules/test_cuda_compat.py", "tests/rules/test_driver_state.py"],
    "rules/driver_state": ["tests/rules/test_driver_state.py"],
    "rules/env": RULES + ["tests/rules/test_env_rules.py"],
    "rules/fabric": ["tests/rules/test_fabric.py"],
    "rules/fixcheck": ["tests/rules/test_fixcheck.py", "tests/rules/test_boundaries.py"],
    "rules/fleet": ["tests/rules/test_fleet.py"],
    "rules/gcc": RULES + ["tests/rules/test_gcc_rules.py"],
    "rules/gpu": RULES + ["tests/rules/test_pci_gpus.py", "tests/rules/test_gpu_rules.py"],
    "rules/health": ["tests/rules/test_health.py", "tests/rules/test_boundaries.py", "tests/rules/test_documented.py"],
    "rules/kernels": RULES + ["tests/rules/test_kernels_rules.py", "tests/rules/test_gpu_rules.py"],
    "rules/nccl": RULES + ["tests/rules/test_facts_from_wheels.py", "tests/rules/test_nccl_rules.py"],
    "rules/python": RULES + ["tests/rules/test_python_rules.py"],
    "rules/remedy": ["tests/rules/test_fixcheck.py"],
    "rules/torch": RULES + ["tests/rules/test_facts_from_wheels.py", "tests/rules/test_torch_rules.py"],
}


def venv_python() -> Path:
    """mutmut's venv (made on first use): mutmut, envcheck's dependencies, test and plot extras
    (allreduce/render.py's --plot needs matplotlib; without it its tests skip, its mutants "no tests")."""
    home = Path(os.environ.get("ENVCHECK_MUTATION_VENV") or Path.home() / ".cache/envcheck-bench/mutmut")
    py = home / "bin" / "python"
    if not (home / "bin" / "mutmut").exists():
        print(f"bench/mutation.py: making {home} ({MUTMUT} and envcheck's test dependencies)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(home)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", MUTMUT, f"{REPO}[test,plot]"], check=True)
        # the tests must import mutmut's mutated copy, never an installed envcheck
        subprocess.run([str(py), "-m", "pip", "uninstall", "-q", "-y", "envcheck"], check=True)
    return py


def copy_checkout(dest: Path) -> None:
    """The checkout's tracked and untracked (not ignored) files, as they are now."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                           capture_output=True, text=True).stdout.split("\0")
    for rel in filter(None, files):
        src = REPO / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)


NEEDS = re.compile(r"^@needs\((?P<args>[^)]*)\)[ \t]*(#.*)?\n(?=def (?P<name>\w+)\()", re.M)


def undecorated(text: str):
    """mutmut (3.8.1) never mutates a decorated function, so every rule declared with @needs(...)
    would go unmeasured: in the scratch copy, apply the decorator after the module instead (it only
    marks the function and returns it), keeping the line numbers. (new text, how many were moved)."""
    moved = [(mt.group("name"), mt.group("args")) for mt in NEEDS.finditer(text)]
    if moved:
        text = NEEDS.sub("# @needs(...): applied at the end by bench/mutation.py\n", text)
        text += "\n" + "".join(f"{name} = needs({args})({name})\n" for name, args in moved)
    return text, len(moved)


def configure(dest: Path, module: str, tests: list) -> None:
    toml = dest / "pyproject.toml"
    toml.write_text(toml.read_text() + "\n[tool.mutmut]\n" + "\n".join([
        'source_paths = ["envcheck"]',
        f'only_mutate = ["envcheck/{module}.py"]',
        f"pytest_add_cli_args_test_selection = {json.dumps(tests)}",
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]',
        'also_copy = ["compat_matrix.yaml", "playbooks", "docs"]',  # docs: tests/rules/test_documented.py reads the tables
    ]) + "\n")


def mutmut(py: Path, work: Path, *args: str, timeout: float = 24 * 3600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{py.parent}:{os.environ.get('PATH', '')}")
    env.pop("PYTHONPATH", None)
    return subprocess.run([str(py.parent / "mutmut"), *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=timeout)


def equivalent() -> dict:
    """mutant name -> (the '+' line its diff must show, why it is equivalent)."""
    out = {}
    if EQUIVALENT.exists():
        for line in EQUIVALENT.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                name, plus, why = (x.strip() for x in line.split(" | ", 2))
                out[name] = (plus, why)
    return out


def measure(py: Path, module: str, tests: list, root: Path, children: int, show: bool) -> dict:
    work = root / module.replace("/", "-")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    copy_checkout(work)
    missing = [t for t in tests if not (work / t).exists()]
    tests = [t for t in tests if t not in missing]
    if not tests:
        # still measured, so its mutants count: a test file that reaches none of them makes
        # every one "no tests" (never an empty selection: pytest would then run the whole suite)
        tests = [NOTHING]
    configure(work, module, tests)
    src = work / "envcheck" / f"{module}.py"
    src.write_text(undecorated(src.read_text())[0])
    t0 = time.monotonic()
    run = mutmut(py, work, "run", "--max-children", str(children))
    took = time.monotonic() - t0
    if run.returncode != 0:
        tail = "\n".join((run.stdout + run.stderr).splitlines()[-15:])
        return {"module": module, "error": f"mutmut run exited {run.returncode}", "tail": tail, "seconds": took}
    mutmut(py, work, "export-cicd-stats")
    stats = json.loads((work / "mutants" / "mutmut-cicd-stats.json").read_text())
    status = {}
    for line in mutmut(py, work, "results", "--all", "true").stdout.splitlines():
        name, _, st = line.strip().rpartition(": ")
        if name:
            status[name] = st
    eq, equiv = equivalent(), []
    survivors = sorted(n for n, s in status.items() if s in ("survived", "no tests", "suspicious"))
    diffs = {}
    for n in survivors:
        if n in eq or show:
            diffs[n] = mutmut(py, work, "show", n).stdout
        if n in eq and ("+" + eq[n][0]).replace(" ", "") in diffs[n].replace(" ", ""):
            equiv.append(n)
    tested = stats["total"] - stats["skipped"]
    killed = stats["killed"] + stats["timeout"]
    return {"module": module, "tests": tests, "missing_tests": missing, "seconds": round(took),
            "mutants": stats["total"], "killed": stats["killed"], "timeout": stats["timeout"],
            "survived": stats["survived"], "no_tests": stats["no_tests"], "suspicious": stats["suspicious"],
            "skipped": stats["skipped"], "tested": tested, "killed_or_timeout": killed,
            "equivalent": equiv, "survivors": [n for n in survivors if n not in equiv],
            "diffs": {n: d for n, d in diffs.items() if show and n not in equiv}}


def rate(killed: int, tested: int) -> str:
    return f"{100.0 * killed / tested:5.1f} %" if tested else "    -  "


def report(results: list) -> None:
    print(f"\n{'module':<22} {'mutants':>7} {'killed':>7} {'surv':>5} {'no-t':>5} {'equiv':>5} "
          f"{'kill rate':>9} {'w/o equiv':>9} {'time':>6}")
    tk = tt = te = 0
    for r in results:
        if "error" in r:
            print(f"{r['module']:<22} ERROR: {r['error']}\n{r['tail']}")
            continue
        e = len(r["equivalent"])
        tk, tt, te = tk + r["killed_or_timeout"], tt + r["tested"], te + e
        print(f"{r['module']:<22} {r['mutants']:>7} {r['killed_or_timeout']:>7} {r['survived']:>5} "
              f"{r['no_tests']:>5} {e:>5} {rate(r['killed_or_timeout'], r['tested']):>9} "
              f"{rate(r['killed_or_timeout'], r['tested'] - e):>9} {r['seconds']:>5}s")
    print(f"{'total':<22} {tt:>7} {tk:>7} {'':>5} {'':>5} {te:>5} {rate(tk, tt):>9} {rate(tk, tt - te):>9}")


def quick() -> int:
    """What CI can afford: every mapped module and test file exists and the equivalent list
    parses; mutmut itself (minutes to hours) is not run."""
    bad = [f"envcheck/{mod}.py" for mod in MODULES if not (REPO / "envcheck" / f"{mod}.py").exists()]
    bad += sorted({t for tests in MODULES.values() for t in tests if not (REPO / t).exists()})
    eq = equivalent()
    for mod in MODULES:   # every @needs rule is moved (so measured), and the module still compiles
        path = REPO / "envcheck" / f"{mod}.py"
        if path.exists():
            text = path.read_text()
            new, n = undecorated(text)
            if n != len(re.findall(r"^@needs\(", text, re.M)) or compile(new, str(path), "exec") is None:
                bad.append(f"{path} (its @needs rules cannot be undecorated for mutmut)")
    for p in bad:
        print(f"bench/mutation.py: mapped but missing: {p}", file=sys.stderr)
    print(f"bench/mutation.py --quick: {len(MODULES)} modules mapped to "
          f"{len({t for v in MODULES.values() for t in v})} test files, {len(eq)} equivalent mutants listed; "
          f"mutmut not run (python3 bench/mutation.py runs it)")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("modules", nargs="*", help="modules as --list names them (default: all)")
    ap.add_argument("--list", action="store_true", help="print the modules and their tests")
    ap.add_argument("--children", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="mutants at once")
    ap.add_argument("--work", help="scratch directory (default: a temp dir)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch copies (mutmut show/browse there)")
    ap.add_argument("--survivors", action="store_true", help="print each survivor's diff")
    ap.add_argument("--quick", action="store_true",
                    help="check the map (modules, tests, equivalent list) without running mutmut (tests/test_bench.py)")
    a = ap.parse_args()
    if a.quick:
        return quick()
    if a.list:
        for mod, tests in MODULES.items():
            print(f"{mod:<22} {' '.join(tests)}")
        return 0
    unknown = [x for x in a.modules if x not in MODULES]
    if unknown:
        print(f"bench/mutation.py: unknown module(s) {', '.join(unknown)}; --list shows them", file=sys.stderr)
        return 2
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    print(f"bench/mutation.py: {MUTMUT} on {head}{' + uncommitted changes' if dirty else ''}", flush=True)
    py = venv_python()
    root = Path(a.work) if a.work else Path(tempfile.mkdtemp(prefix="envcheck-mutation-"))
    root.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for mod in a.modules or list(MODULES):
            r = measure(py, mod, MODULES[mod], root, a.children, a.survivors)
            results.append(r)
            print(f"  {mod}: " + (r.get("error") or f"{r['killed_or_timeout']}/{r['tested']} killed "
                                  f"({rate(r['killed_or_timeout'], r['tested']).strip()}) in {r['seconds']} s"), flush=True)
            for n in r.get("survivors", []):
                print(f"    survived: {n}" + ("\n" + r["diffs"][n] if n in r.get("diffs", {}) else ""), flush=True)
            (root / "results.json").write_text(json.dumps({"commit": head, "dirty": bool(dirty), "results": results},
                                                          indent=1))
    finally:
        if not a.keep and not a.work:
            shutil.rmtree(root, ignore_errors=True)
    report(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
