"""The rules against a public corpus of real stacks (tests/cases/real-stacks.jsonl): each case is
a stack users reported in a public issue thread (`source`), the versions they gave (`inputs`, as
`check` flags), and what they saw: "works", or the error and the component it came from. Every
case goes through the installed `envcheck check --json`.

A case agrees when a known-good stack gets no error finding, and a failing one gets an error
finding of the component the thread blamed. The test prints the agreement and fails below 95 %,
or on any error for a stack its users ran fine (a false alarm is worse than a miss: it sends
people to fix what works).

Inputs hold only what mattered to what the users did: a run of torch is judged on torch, GPU,
driver and Python (collect_env's nvcc, gcc and system cuDNN play no part in running a wheel, and
`check --cudnn` means the cuDNN the process loads); toolkit and gcc appear for build reports.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import REPO, run_cli

CASES = REPO / "tests" / "cases" / "real-stacks.jsonl"
FLAGS = ("driver", "cuda", "cudnn", "torch", "torchvision", "torchaudio", "gpu", "python", "gcc", "numpy")


def load_cases(path: Path = CASES):
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for c in cases:
        assert set(c) >= {"id", "source", "inputs", "saw", "why"}, c.get("id")
        assert c["source"].startswith("https://"), c["id"]
        assert set(c["inputs"]) <= set(FLAGS), c["id"]
        assert c["saw"] == "works" or set(c["saw"]) == {"error", "component"}, c["id"]
    return cases


def verdict(case):
    args = ["check", "--json"]
    for k, v in case["inputs"].items():
        args += [f"--{k}", v]
    r = run_cli(*args)
    assert r.returncode in (0, 1), f"{case['id']}: exit {r.returncode}: {r.stderr}"
    doc = json.loads(r.stdout)
    return case, [f for f in doc["findings"] if f["severity"] == "error"]


def agrees(case, errors) -> bool:
    if case["saw"] == "works":
        return not errors
    return any(f["component"] == case["saw"]["component"] for f in errors)


def test_the_corpus_is_large_varied_and_sourced():
    cases = load_cases()
    assert len(cases) >= 120, f"{len(cases)} cases"
    assert len({c["id"] for c in cases}) == len(cases)
    good = [c for c in cases if c["saw"] == "works"]
    assert len(good) * 3 >= len(cases), f"{len(good)} known-good of {len(cases)}"
    majors = {c["inputs"]["torch"].split(".")[0] for c in cases if "torch" in c["inputs"]}
    assert majors >= {"1", "2"}


def test_the_rules_agree_with_what_users_saw():
    cases = load_cases()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(verdict, cases))
    wrong = [(c, errs) for c, errs in results if not agrees(c, errs)]
    false_alarms = [(c, errs) for c, errs in wrong if c["saw"] == "works"]
    agreement = 100.0 * (len(cases) - len(wrong)) / len(cases)
    print(f"\nreal stacks: {len(cases) - len(wrong)}/{len(cases)} agree ({agreement:.1f} %), "
          f"{len(false_alarms)} false error(s) on known-good stacks")
    for c, errs in wrong:
        print(f"  disagree {c['id']}: saw {c['saw']!r}; envcheck: "
              f"{[e['code'] for e in errs] or 'no error'}  ({c['source']})")
    assert false_alarms == []
    assert agreement >= 95.0
