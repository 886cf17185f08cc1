"""envcheck/rules/python.py, the rule called alone and each finding compared whole (severity, code,
component, message, fix, source) with its remedy (label, fix, edits, why). The expected values come
from the rule's docstring, docs/check-and-matrix.md (`python-no-torch-wheel`: torch X publishes no
Linux x86_64 wheel for this Python, older or newer than its wheels'; the lists per release, and per
variant where a variant's wheels differ) and compat_matrix.yaml's torch releases (`python`, `source`),
not from what the code printed."""
from __future__ import annotations

import copy

import pytest

from envcheck.model import ERROR, Finding, Remedy, Skipped
from envcheck.rules.python import python_has_torch_wheel

PIP = ("pip fails with 'ERROR: Could not find a version that satisfies the requirement torch=={}' / 'No "
       "matching distribution found'.")


def facts(python, torch):
    """A host with this Python and this torch wheel (X.Y.Z or X.Y.Z+tag)."""
    version, _, tag = torch.partition("+")
    return {"schema": 1, "origin": "probe", "hostname": "n1", "python": {"version": python},
            "packages": {"torch": {"version": torch}},
            "torch": {"version": version, "local": tag or None, "cuda": None, "cuda_source": None}}


def edited(m, edit):
    """The matrix with its data changed by edit(data): a case the shipped data does not hold."""
    data = copy.deepcopy(m.data)
    edit(data)
    return type(m)(data, m.path)


def no_wheel(torch, want, bound, wheels, use, alt, source, version=None):
    """The finding, as docs/check-and-matrix.md describes it: `torch` as named (X or X+tag)."""
    version = version or torch
    return Finding(ERROR, "python-no-torch-wheel", "python",
                   f"torch {torch} has no wheel for Python {want}, {bound} its wheels' Pythons "
                   f"({', '.join(wheels)}): " + PIP.format(version),
                   f"use Python {use} (e.g. python{use} -m venv venv)" + alt, source)


def test_a_python_older_than_the_release_wheels(m):
    # torch 2.4.1: python ["3.8" .. "3.12"]; Python 3.7 had wheels from 0.4.1 to 1.13.1 (the last
    # release listing it); the release named by its version, not its variant (the variant has no
    # list of its own)
    found = python_has_torch_wheel(facts("3.7.9", "2.4.1+cu121"), m)
    assert found == [no_wheel("2.4.1", "3.7", "older than", ["3.8", "3.9", "3.10", "3.11", "3.12"], "3.12",
                              ", or a torch release with wheels for Python 3.7 (0.4.1 - 1.13.1)",
                              "https://pypi.org/project/torch/2.4.1/")]
    assert found[0].remedies == (Remedy("use Python 3.12", "use Python 3.12 (e.g. python3.12 -m venv venv)",
                                        (("python", "3.12"),), "torch 2.4.1 has wheels for Python 3.12"),)


def test_a_python_newer_than_the_release_wheels_compares_numbers_not_text(m):
    # torch 1.10.0: python ["3.6" .. "3.9"]; 3.10 sorts before 3.6 as text, after 3.9 as a version.
    # Python 2.7 is the other way round: older. 2.7's wheels: 0.4.1 to 1.4.0.
    found = python_has_torch_wheel(facts("3.10.4", "1.10.0"), m)
    assert len(found) == 1 and found[0].message == (
        "torch 1.10.0 has no wheel for Python 3.10, newer than its wheels' Pythons (3.6, 3.7, 3.8, 3.9): "
        + PIP.format("1.10.0"))
    assert found[0].fix.startswith("use Python 3.9 (e.g. python3.9 -m venv venv), or a torch release with "
                                   "wheels for Python 3.10 (1.11.0 - ")
    assert python_has_torch_wheel(facts("2.7.18", "1.10.0"), m) == [
        no_wheel("1.10.0", "2.7", "older than", ["3.6", "3.7", "3.8", "3.9"], "3.9",
                 ", or a torch release with wheels for Python 2.7 (0.4.1 - 1.4.0)",
                 "https://pypi.org/project/torch/1.10.0/")]


def test_a_python_between_the_release_wheels_that_no_release_serves(m):
    # torch 1.0.0: python ["2.7", "3.5", "3.6", "3.7"]: 3.4 lies between, and no release lists it
    found = python_has_torch_wheel(facts("3.4.10", "1.0.0+cu100"), m)
    assert found == [no_wheel("1.0.0", "3.4", "not among", ["2.7", "3.5", "3.6", "3.7"], "3.7",
                              "; no torch release in the matrix has wheels for Python 3.4",
                              "https://pypi.org/project/torch/1.0.0/")]
    assert found[0].remedies == (Remedy("use Python 3.7", "use Python 3.7 (e.g. python3.7 -m venv venv)",
                                        (("python", "3.7"),), "torch 1.0.0 has wheels for Python 3.7"),)


def test_a_python_just_below_the_first_wheel_is_older_not_among(m):
    # torch 1.5.0: python ["3.5" .. "3.8"]; 3.4 is below the first (no release serves it)
    assert python_has_torch_wheel(facts("3.4", "1.5.0"), m) == [
        no_wheel("1.5.0", "3.4", "older than", ["3.5", "3.6", "3.7", "3.8"], "3.8",
                 "; no torch release in the matrix has wheels for Python 3.4", "https://pypi.org/project/torch/1.5.0/")]


@pytest.mark.parametrize("python,torch", [
    ("3.8.10", "2.4.1+cu121"),   # patch releases are judged by major.minor
    ("3.12", "2.4.1"),           # the last of the list
    ("3.8", "2.4.1+cu118"),      # the first
    ("2.7.18", "0.4.1"),
])
def test_a_python_the_release_has_wheels_for_is_no_finding(m, python, torch):
    assert python_has_torch_wheel(facts(python, torch), m) == []


def test_nothing_to_judge_without_a_readable_python_or_torch(m):
    assert python_has_torch_wheel(facts(None, "2.4.1"), m) == []
    assert python_has_torch_wheel(dict(facts("3.7", "2.4.1"), packages={}, torch={}), m) == []
    assert python_has_torch_wheel(facts("3.7", "two"), m) == []   # no readable torch version
    assert python_has_torch_wheel(facts("three", "2.4.1"), m) == []   # no readable Python version


def test_a_torch_release_the_matrix_lacks_is_a_skipped_check(m):
    assert python_has_torch_wheel(facts("3.7", "9.9.0+cu121"), m) == [
        Skipped("python_has_torch_wheel", "python", "torch 9.9.0 not in the matrix",
                "update envcheck (or --matrix FILE)")]


def own_wheels(pythons, source=None):
    """torch 2.4.1's cu121 variant with wheels of its own (the shipped matrix has no such variant)."""
    def edit(d):
        var = next(r for r in d["torch"]["releases"] if r["version"] == "2.4.1")["variants"]["cu121"]
        var["python"] = pythons
        if source:
            var["python_source"] = source
    return edit


def test_a_variant_with_its_own_wheels_is_judged_by_them_and_named_with_its_tag(m):
    mm = edited(m, own_wheels(["3.9", "3.10"], "https://download.pytorch.org/whl/cu121/torch/"))
    # 3.8 is among the release's Pythons but not the variant's; 3.8's wheels: 1.4.0 to 2.4.1
    found = python_has_torch_wheel(facts("3.8", "2.4.1+cu121"), mm)
    assert found == [no_wheel("2.4.1+cu121", "3.8", "older than", ["3.9", "3.10"], "3.10",
                              ", or a torch release with wheels for Python 3.8 (1.4.0 - 2.4.1)",
                              "https://download.pytorch.org/whl/cu121/torch/", version="2.4.1")]
    assert found[0].remedies == (Remedy("use Python 3.10", "use Python 3.10 (e.g. python3.10 -m venv venv)",
                                        (("python", "3.10"),), "torch 2.4.1 has wheels for Python 3.10"),)
    # another variant of the release keeps the release's list
    assert python_has_torch_wheel(facts("3.8", "2.4.1+cu118"), mm) == []


def test_a_variant_with_its_own_wheels_but_no_source_of_its_own_cites_the_release(m):
    mm = edited(m, own_wheels(["3.7", "3.8"]))
    assert python_has_torch_wheel(facts("3.7", "2.4.1+cu121"), mm) == []   # the variant's, not the release's
    found = python_has_torch_wheel(facts("3.9", "2.4.1+cu121"), mm)
    assert [(x.message.split(":")[0], x.source) for x in found] == [
        ("torch 2.4.1+cu121 has no wheel for Python 3.9, newer than its wheels' Pythons (3.7, 3.8)",
         "https://pypi.org/project/torch/2.4.1/")]


def test_a_python_in_a_gap_before_the_last_wheel_is_not_among(m):
    # a variant with wheels for 3.7, 3.8 and 3.10: 3.9 lies between its last two (after its second);
    # 3.9's wheels: 1.7.1 to 2.8.0
    mm = edited(m, own_wheels(["3.7", "3.8", "3.10"], "https://download.pytorch.org/whl/cu121/torch/"))
    assert python_has_torch_wheel(facts("3.9", "2.4.1+cu121"), mm) == [
        no_wheel("2.4.1+cu121", "3.9", "not among", ["3.7", "3.8", "3.10"], "3.10",
                 ", or a torch release with wheels for Python 3.9 (1.7.1 - 2.8.0)",
                 "https://download.pytorch.org/whl/cu121/torch/", version="2.4.1")]
