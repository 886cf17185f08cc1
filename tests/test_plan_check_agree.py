"""plan and check agree (issue 21, item 8): over GPUs x drivers, the first stack `plan` recommends
passes `check` with no error and no warning, or plan says why none can (its note, or every stack
excluded with its reasons). `check` is the same facts builder and rules the command runs; one
combination also goes through the installed console script."""
from __future__ import annotations

import json

import pytest

from envcheck.facts.from_flags import stack_facts
from envcheck.matrix.load import load_matrix
from envcheck.plan import make_plan
from envcheck.rules import judge
from tests.conftest import REPO, run_cli

GPUS = ["3.7", "6.1", "7.0", "7.5", "8.0", "8.6", "9.0", "12.0"]   # Kepler to Blackwell
DRIVERS = [None, "470.57.02", "550.54.15"]                          # none given, an R470 LTS, an R550


@pytest.fixture(scope="module")
def m():
    return load_matrix(REPO / "compat_matrix.yaml")


def _check_args(s, gpu, driver):
    return dict(driver=driver or s.driver_min, cuda=s.cuda, cudnn=s.cudnn, torch=f"{s.torch}+{s.tag}",
                torchvision=s.torchvision, gpu=gpu, python=s.python[-1] if s.python else None)


def _said(m, args):
    f = stack_facts(matrix=m, **{k: v for k, v in args.items() if v})
    return [(x.severity, x.code) for x in judge(f, m, verify_fixes=False).findings if x.severity in ("error", "warning")]


@pytest.mark.parametrize("gpu", GPUS)
def test_the_first_stack_plan_recommends_passes_check_clean(m, gpu):
    for driver in DRIVERS:
        p = make_plan(m, gpu, driver=driver)
        if not p.allowed:
            assert p.excluded and all(s.reasons for s in p.excluded), (gpu, driver)
            continue
        first = p.allowed[0]
        # without --driver plan names the driver itself (DRIVER>=), so it can always be a clean one
        assert driver or not first.warnings, (gpu, first.label, first.driver_min, first.warnings)
        if first.warnings:
            assert p.note and first.warnings[0] in p.note, (gpu, driver)
            continue
        assert _said(m, _check_args(first, gpu, driver)) == [], (gpu, driver, first.label, first.driver_min)


def test_where_no_stack_is_clean_plan_says_so_first(m):
    # every CUDA build of torch 2.8 wants a newer driver than 535: minor-version compatibility only
    p = make_plan(m, "A100", driver="535.54.03", torch="2.8.0")
    assert p.allowed and all(s.warnings for s in p.allowed)
    assert p.note and "no allowed stack runs without a warning on driver 535.54.03" in p.note
    # and with torch free, a clean older stack comes first
    p = make_plan(m, "A100", driver="535.54.03")
    assert p.note is None and not p.allowed[0].warnings and any(s.warnings for s in p.allowed)


def test_the_console_script_agrees(m):
    first = make_plan(m, "sm_86").allowed[0]
    args = [x for k, v in _check_args(first, "sm_86", None).items() if v for x in (f"--{k}", v)]
    r = run_cli("check", "--json", *args)
    doc = json.loads(r.stdout)
    assert r.returncode == 0 and [f for f in doc["findings"] if f["severity"] != "info"] == [], r.stdout
