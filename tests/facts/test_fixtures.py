"""Fact fixtures, as pyinfra keeps tests/facts/<fact>/<case>.json: raw collector input beside the
section it must give. One folder per probe part (tests/facts/<part>/ for
envcheck/node/probe/<part>.py), one file per case: {"why", "function", "input", "expected"}. The
inputs are captured real outputs (tests/fixtures/) or real file formats; adding a case is adding
a file."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from envcheck.audit.probe import PROBE_DIR
from tests.node.probe_helpers import load_probe

HERE = Path(__file__).resolve().parent
CASES = sorted(HERE.glob("*/*.json"))
probe = load_probe()


def test_there_are_cases_for_several_parts():
    assert len({c.parent.name for c in CASES}) >= 8


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.stem}" for c in CASES])
def test_raw_input_gives_the_expected_section(case):
    doc = json.loads(case.read_text())
    assert doc["why"].strip(), "a case says what it shows"
    part = PROBE_DIR / f"{case.parent.name}.py"
    defined = {n.name for n in ast.parse(part.read_text()).body if isinstance(n, ast.FunctionDef)}
    assert doc["function"] in defined, f"{doc['function']} is not in {part.name}: the case sits beside its part"
    got = getattr(probe, doc["function"])(*doc["input"])
    assert json.loads(json.dumps(got)) == doc["expected"]
