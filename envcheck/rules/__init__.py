"""Rules: small pure functions from facts (envcheck/facts.py) to findings (envcheck/model.py).
One module per component; REGISTRY lists them. (Being built: issue 2.)"""
from __future__ import annotations

from typing import Callable, List

from envcheck.facts import Facts
from envcheck.matrix import Matrix
from envcheck.model import Finding, sort_findings

Rule = Callable[[Facts, Matrix], List[Finding]]
REGISTRY: List[Rule] = []


def evaluate(facts: Facts, matrix: Matrix) -> List[Finding]:
    """Every rule over one host's facts, errors first."""
    out: List[Finding] = []
    for rule in REGISTRY:
        out.extend(rule(facts, matrix))
    return sort_findings(out)
