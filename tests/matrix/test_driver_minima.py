"""Driver minimums: a CUDA runfile's own bundled driver is enough for that toolkit, and where
NVIDIA's tables give two minimums the matrix keeps the lower one and records the other with its
source (min_driver_elsewhere), which validation checks."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from envcheck.errors import MatrixError
from envcheck.facts.from_flags import stack_facts
from envcheck.matrix.load import load_matrix
from envcheck.model import ERROR, WARNING
from envcheck.rules import evaluate
from tests.conftest import REPO, run_cli

TOP = REPO / "compat_matrix.yaml"
BUNDLED = [(r["version"], r["bundled_driver"]) for r in yaml.safe_load(TOP.read_text())["cuda"]["releases"]
           if r.get("bundled_driver")]


@pytest.fixture(scope="module")
def m():
    return load_matrix(TOP)


def test_most_releases_name_the_driver_their_runfile_bundles():
    assert len(BUNDLED) >= 50


@pytest.mark.parametrize("cuda,bundled", BUNDLED)
def test_the_driver_a_cuda_runfile_bundles_is_never_too_old_for_that_toolkit(m, cuda, bundled):
    findings = evaluate(stack_facts(matrix=m, driver=bundled, cuda=cuda), m)
    assert [f for f in findings if f.component == "driver" and f.severity in (ERROR, WARNING)] == []


def test_cuda_9_1_runs_on_the_387_26_driver_its_runfile_ships_although_table_3_now_says_390_46(m):
    r = run_cli("check", "--json", "--driver", "387.26", "--cuda", "9.1.85")
    assert r.returncode == 0, r.stdout + r.stderr
    assert [f for f in json.loads(r.stdout)["findings"] if f["component"] == "driver"] == []
    assert m.driver_need("9.1.85").release_min == "387.26"
    r = run_cli("check", "--driver", "384.81", "--cuda", "9.1.85")
    assert r.returncode == 1 and "(387.26)" in r.stdout


def test_where_nvidia_tables_disagree_the_lower_minimum_is_used_and_the_other_is_kept_with_its_source():
    data = yaml.safe_load(TOP.read_text())
    fams = {f["major"]: f for f in data["cuda"]["families"]}
    assert fams[11]["min_driver"] == "450" and fams[12]["min_driver"] == "525"
    others = [(f["major"], a) for f in fams.values() for a in f.get("min_driver_elsewhere", [])]
    others += [(r["version"], a) for r in data["cuda"]["releases"] for a in r.get("min_driver_elsewhere", [])]
    assert {str(k) for k, _ in others} >= {"11", "12", "9.1.85"}
    for _, a in others:
        assert a["source"].startswith("https://") and a["note"]


def test_a_driver_between_the_two_published_12x_minimums_runs_cuda_12_through_compatibility(m):
    r = run_cli("check", "--json", "--driver", "525.20", "--cuda", "12.2")
    (f,) = json.loads(r.stdout)["findings"]
    assert r.returncode == 0 and f["severity"] == "warning" and "minor-version compatibility" in f["message"]


def _write(tmp_path: Path, old: str, new: str) -> Path:
    text = TOP.read_text()
    assert old in text, old
    p = tmp_path / "m.yaml"
    p.write_text(text.replace(old, new, 1))
    return p


def _error(p: Path) -> str:
    with pytest.raises(MatrixError) as e:
        load_matrix(p)
    return e.value.message


def test_an_elsewhere_minimum_below_min_driver_is_refused_because_min_driver_must_be_the_lowest(tmp_path):
    msg = _error(_write(tmp_path, 'min_driver_elsewhere: [{value: "450.80.02"', 'min_driver_elsewhere: [{value: "440.33"'))
    assert "cuda.families[" in msg and "min_driver_elsewhere[0].value" in msg and "must be the lowest" in msg


def test_an_elsewhere_minimum_without_a_source_is_refused(tmp_path):
    msg = _error(_write(tmp_path, 'value: "525.60.13", source: *rn_12_0, ', 'value: "525.60.13", '))
    assert msg.endswith("min_driver_elsewhere[0].source: missing")


def test_a_chip_with_a_suffix_letter_or_listed_twice_is_refused(tmp_path):
    assert "without suffix letters" in _error(_write(tmp_path, "{chip: GF100,", "{chip: GF100B,"))
    assert "duplicate chip GF110" in _error(_write(tmp_path, "{chip: GF100,", "{chip: GF110,"))


def test_a_chip_with_a_compute_capability_missing_from_archs_is_refused(tmp_path):
    msg = _error(_write(tmp_path, '{chip: GF100, cc: "2.0"', '{chip: GF100, cc: "2.5"'))
    assert "chips[0].cc" in msg and "not in archs" in msg
