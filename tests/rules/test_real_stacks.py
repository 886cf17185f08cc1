"""The rules against a public corpus of real stacks (tests/cases/real-stacks.jsonl): each case is
a stack users reported in a public issue thread (`source`), the versions they gave (`inputs`, as
`check` flags), and what they saw: "works", or the error and the component it came from. Every
case goes through `envcheck check --json`: in-process through the command line app (Typer's
runner), and every tenth one also through the installed console script, which must give the
same errors.

A case agrees when a known-good stack gets no error finding, and a failing one gets an error
finding of the component the thread blamed. The test prints the agreement and fails below 95 %,
or on any error for a stack its users ran fine (a false alarm is worse than a miss: it sends
people to fix what works).

Inputs hold only what mattered to what the users did: a run of torch is judged on torch, GPU,
driver and Python (collect_env's nvcc, gcc and system cuDNN play no part in running a wheel, and
`check --cudnn` means the cuDNN the process loads); toolkit and gcc appear for build reports.

Cases added for issue 21 carry `batch` and `first_scored`: each was scored once, when it was added
and before any rule change it prompted. issue21-a was collected before that issue's rule changes,
issue21-b and issue21-c after them (issue21-c prompted one more: forward compatibility per CUDA
release), issue21-d after cuda-compat became a fact (it prompted none), issue21-e (30 stacks,
half known-good, 2017-2026) with the fourth held-out round, scored once with no rule changed for
it (it then prompted two: board names from the PCI ID table, numpy's C API for 0.2.0); the test prints each batch's first-scored and current agreement, so the out-of-sample figure
(b to e as first scored) stays visible beside the overall one.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import REPO, run_cli

CASES = REPO / "tests" / "cases" / "real-stacks.jsonl"
FLAGS = ("driver", "cuda", "cudnn", "torch", "torchvision", "torchaudio", "gpu", "python", "gcc", "numpy", "cuda-compat")
BATCHES = ("issue21-a", "issue21-b", "issue21-c", "issue21-d", "issue21-e")
OUT_OF_SAMPLE = BATCHES[1:]  # collected after the rule changes they are scored against


def load_cases(path: Path = CASES):
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for c in cases:
        assert set(c) >= {"id", "source", "inputs", "saw", "why"}, c.get("id")
        assert c["source"].startswith("https://"), c["id"]
        assert set(c["inputs"]) <= set(FLAGS), c["id"]
        assert c["saw"] == "works" or set(c["saw"]) == {"error", "component"}, c["id"]
        assert ("batch" in c) == ("first_scored" in c), c["id"]
        assert c.get("batch", "issue21-a") in BATCHES and c.get("first_scored", "agree") in ("agree", "disagree"), c["id"]
    return cases


def stack_kwargs(case):
    """The case's inputs as stack_facts() keywords (the flag --cuda-compat is cuda_compat)."""
    return {k.replace("-", "_"): v for k, v in case["inputs"].items()}


def _args(case):
    args = ["check", "--json"]
    for k, v in case["inputs"].items():
        args += [f"--{k}", v]
    return args


def _errors(case, code, stdout, stderr=""):
    assert code in (0, 1), f"{case['id']}: exit {code}: {stderr}"
    return [f for f in json.loads(stdout)["findings"] if f["severity"] == "error"]


def verdict(case):
    """Through the installed console script, as a user runs it."""
    r = run_cli(*_args(case))
    return case, _errors(case, r.returncode, r.stdout, r.stderr)


def verdict_in_process(case):
    from typer.testing import CliRunner

    from envcheck.cli import app
    r = CliRunner().invoke(app, _args(case))
    return case, _errors(case, r.exit_code, r.stdout, repr(r.exception))


def agrees(case, errors) -> bool:
    if case["saw"] == "works":
        return not errors
    return any(f["component"] == case["saw"]["component"] for f in errors)


def test_the_corpus_is_large_varied_and_sourced():
    cases = load_cases()
    assert len(cases) >= 250, f"{len(cases)} cases"
    assert len({c["source"] for c in cases}) >= 200
    assert len({c["id"] for c in cases}) == len(cases)
    good = [c for c in cases if c["saw"] == "works"]
    assert len(good) * 3 >= len(cases), f"{len(good)} known-good of {len(cases)}"
    minors = {".".join(c["inputs"]["torch"].split(".")[:2]) for c in cases if "torch" in c["inputs"]}
    assert minors >= {"0.4", "1.0", "1.3", "1.7", "1.12", "2.0", "2.4", "2.9"}  # every era


def test_the_rules_agree_with_what_users_saw(matrix_parsed_once):
    cases = load_cases()
    # in-process, the matrix is parsed once, not once per case (two thirds of a case's time); the
    # installed runs below load it as every user's process does
    results = [verdict_in_process(c) for c in cases]
    with ThreadPoolExecutor(max_workers=4) as pool:
        installed = list(pool.map(verdict, cases[::10]))
    by_id = {c["id"]: errs for c, errs in results}
    for c, errs in installed:
        assert {e["code"] for e in errs} == {e["code"] for e in by_id[c["id"]]}, c["id"]
    wrong = [(c, errs) for c, errs in results if not agrees(c, errs)]
    false_alarms = [(c, errs) for c, errs in wrong if c["saw"] == "works"]
    agreement = 100.0 * (len(cases) - len(wrong)) / len(cases)
    print(f"\nreal stacks: {len(cases) - len(wrong)}/{len(cases)} agree ({agreement:.1f} %), "
          f"{len(false_alarms)} false error(s) on known-good stacks")
    for batch in BATCHES:
        group = [(c, errs) for c, errs in results if c.get("batch") == batch]
        first = sum(c["first_scored"] == "agree" for c, _ in group)
        now = sum(agrees(c, errs) for c, errs in group)
        print(f"  {batch}: {len(group)} cases, first scored {first}/{len(group)}, now {now}/{len(group)}")
    unseen = [c for c, _ in results if c.get("batch") in OUT_OF_SAMPLE]
    print(f"  out of sample ({', '.join(OUT_OF_SAMPLE)} as first scored): "
          f"{sum(c['first_scored'] == 'agree' for c in unseen)}/{len(unseen)}")
    for c, errs in wrong:
        print(f"  disagree {c['id']}: saw {c['saw']!r}; envcheck: "
              f"{[e['code'] for e in errs] or 'no error'}  ({c['source']})")
    assert false_alarms == []
    assert agreement >= 95.0
