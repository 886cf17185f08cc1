"""Python rule: does the torch release publish wheels for this interpreter."""
from __future__ import annotations

from typing import List

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, Finding, Skipped
from envcheck.rules import remedy
from envcheck.rules.common import mm, needs, torch_build


@needs("python", "torch")
def python_has_torch_wheel(f: F.Facts, m: Matrix) -> List[Finding]:
    py, tb = F.python_version(f), torch_build(f, m)
    if not py or not tb:
        return []
    if not tb.record:
        return [Skipped("python_has_torch_wheel", "python", f"torch {tb.version} not in the matrix",
                        "update envcheck (or --matrix FILE)")]
    try:
        want = mm(py)
    except VersionError:
        return []
    var = (tb.record["variants"].get(tb.tag) or {}) if tb.tag else {}
    wheels = var.get("python") or tb.record["python"]  # a variant's own wheels, where they differ
    source = var.get("python_source") or tb.record["source"]
    if want in wheels:
        return []
    bound = ("older than" if _key(want) < _key(wheels[0]) else "newer than" if _key(want) > _key(wheels[-1])
             else "not among")
    serving = [r["version"] for r in m.data["torch"]["releases"] if want in r["python"]]
    alt = (f", or a torch release with wheels for Python {want} ({serving[0]} - {serving[-1]})" if serving
           else f"; no torch release in the matrix has wheels for Python {want}")
    use = f"use Python {wheels[-1]} (e.g. python{wheels[-1]} -m venv venv)"
    fix = use + alt
    what = f"torch {tb.label()}" if var.get("python") else f"torch {tb.version}"
    return [Finding(ERROR, "python-no-torch-wheel", "python",
                    f"{what} has no wheel for Python {want}, {bound} its wheels' Pythons ({', '.join(wheels)}): pip "
                    f"fails with "
                    f"'ERROR: Could not find a version that satisfies the requirement torch=={tb.version}' / 'No "
                    f"matching distribution found'.",
                    fix, source,
                    remedies=(remedy.python(wheels[-1], use,
                                            f"torch {tb.version} has wheels for Python {wheels[-1]}"),))]


def _key(py: str) -> tuple:
    return tuple(int(x) for x in py.split("."))


RULES = [python_has_torch_wheel]
