"""Python vs the torch wheels that exist (issue 21, item 4): the matrix's per-release `python`
lists are exactly the CPython tags of the Linux x86_64 wheels in the wheel index (PyPI's files
for torch, kept in tests/fixtures/wheel-index/), so python_has_torch_wheel's lower and upper
bounds are the index's; and the rule uses a variant's own list where the matrix gives one."""
from __future__ import annotations

import importlib.util

import yaml

from envcheck.facts.from_flags import stack_facts
from envcheck.matrix.load import load_matrix
from envcheck.rules import evaluate
from tests.conftest import REPO

NAMES = REPO / "tests" / "fixtures" / "wheel-index" / "pypi-torch-linux-x86_64.txt"


def _tool():
    spec = importlib.util.spec_from_file_location("torch_pythons", REPO / "tools" / "torch_pythons.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod


def test_every_pypi_releases_python_list_is_its_wheel_tags():
    tool = _tool()
    names = [l for l in NAMES.read_text().splitlines() if l and not l.startswith("#")]
    found = tool.tags(names)
    matrix = yaml.safe_load((REPO / "compat_matrix.yaml").read_text())
    assert tool.mismatches(found, matrix) == []
    on_pypi = [r["version"] for r in matrix["torch"]["releases"] if r["pypi"]]
    assert len([v for v in on_pypi if (v, "") in found]) >= 50  # the excerpt covers them
    assert tool.tags(["torch-1.0.0-cp27-cp27mu-manylinux1_x86_64.whl", "torch-2.5.1-cp313-cp313t-manylinux1_x86_64.whl",
                      "torch-2.5.1+cu121-cp312-cp312-linux_x86_64.whl", "torch-2.5.1-cp312-none-macosx_11_0_arm64.whl"]) \
        == {("1.0.0", ""): {"2.7"}, ("2.5.1", "cu121"): {"3.12"}}


def test_both_bounds_and_a_variants_own_list():
    m = load_matrix(REPO / "compat_matrix.yaml")
    codes = lambda **kw: [x.code for x in evaluate(stack_facts(matrix=m, **kw), m) if x.severity == "error"]
    assert codes(torch="1.13.1", python="3.11") == []                      # cp311 on PyPI since 1.13.0
    assert codes(torch="1.13.1", python="3.12") == ["python-no-torch-wheel"]  # too new
    assert codes(torch="2.5.1", python="3.8") == ["python-no-torch-wheel"]    # too old
    rec = m.torch("2.5.1")
    rec["variants"]["cu118"] = dict(rec["variants"]["cu118"], python=["3.10"])
    try:
        assert codes(torch="2.5.1+cu118", python="3.11") == ["python-no-torch-wheel"]
        assert codes(torch="2.5.1+cu124", python="3.11") == []
    finally:
        del rec["variants"]["cu118"]["python"]
