"""Rules: small pure functions from facts (envcheck/facts/schema.py) to findings (envcheck/model.py),
one module per component; the drift rule across nodes: fleet.py; hardware thresholds and
NVIDIA's Xid catalogue: health_catalog.yaml; a fix tried before it is offered: remedy.py, fixcheck.py.

One module per component; each exports RULES, a list of `(facts, matrix) -> List[Finding |
Skipped]`. REGISTRY is all of them in order. A rule reads facts only through envcheck.facts
accessors. Unknown is never OK: a rule declares the facts it cannot judge without
(@needs in rules/common.py) and the registry records a Skipped check when one is missing; a rule
that has its facts but no data to decide from (an arch list the matrix lacks, a GPU it cannot
place) derives a bound or returns a Skipped itself. judge() gives both; evaluate() the findings.

A rule's fix is data too (Finding.remedies, envcheck/rules/remedy.py): judge() tries each error's
fix on a copy of the facts and runs the rules again before offering it (envcheck/rules/fixcheck.py).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Union

from envcheck.errors import VersionError
from envcheck.facts import schema as F
from envcheck.facts.schema import Facts
from envcheck.matrix.load import Matrix
from envcheck.model import COMPONENTS, WARNING, Finding, Skipped, sort_findings
from envcheck.rules import (cuda, cudnn, driver, driver_state, env, fabric, fixcheck, gcc, gpu, health, nccl,
                            python, torch)
from envcheck.rules.common import missing, needs_text

Rule = Callable[[Facts, Matrix], List[Union[Finding, Skipped]]]
REGISTRY: List[Rule] = [*driver.RULES, *driver_state.RULES, *gpu.RULES, *health.RULES, *fabric.RULES,
                        *cuda.RULES, *cudnn.RULES, *torch.RULES,
                        *python.RULES, *gcc.RULES, *env.RULES, *nccl.RULES]


@dataclass
class Judgement:
    """What the rules said about one host: findings (errors first) and the checks that could not run."""

    findings: List[Finding] = field(default_factory=list)
    skipped: List[Skipped] = field(default_factory=list)


def _component(rule: Rule) -> str:
    name = rule.__module__.rsplit(".", 1)[-1]
    return name if name in COMPONENTS else "env"


def judge(facts: Facts, matrix: Matrix, *, verify_fixes: bool = True) -> Judgement:
    """Every rule over one host's facts, each error's fix tried before it is offered (unless
    verify_fixes is False). Never raises: one host's odd facts must not stop an audit of a hundred."""
    out = _run(facts, matrix)
    if verify_fixes:
        out.findings = fixcheck.verify(facts, matrix, out.findings, lambda f: _run(f, matrix).findings)
    return out


def _run(facts: Facts, matrix: Matrix) -> Judgement:
    out = Judgement()
    for rule in REGISTRY:
        lacking = missing(rule, facts)
        if lacking and "env" in lacking and F.origin(facts) == "flags":
            continue  # a stack given by flags has no host, so no environment to judge: not applicable
        if lacking:
            out.skipped.append(Skipped(rule.__name__, _component(rule), *needs_text(lacking)))
            continue
        try:
            said = rule(facts, matrix)
        except VersionError:
            # an unreadable version in the facts: the *-unknown rule of that component reports it
            out.skipped.append(Skipped(rule.__name__, _component(rule), "a version in the facts cannot be read",
                                       "see the *-unknown finding"))
            continue
        except Exception as e:  # noqa: BLE001 - reported as a finding, not lost, not a traceback
            component = _component(rule)
            out.findings.append(Finding(
                WARNING, "rule-crashed", component,
                f"envcheck's {rule.__name__} rule could not judge these facts ({type(e).__name__}: {e}); "
                f"the {component} checks are incomplete for this host.",
                "report this with the facts file (envcheck audit --json)", ""))
            out.skipped.append(Skipped(rule.__name__, component, "the rule crashed", "report it"))
            continue
        for item in said:
            (out.skipped if isinstance(item, Skipped) else out.findings).append(item)
    out.findings = sort_findings(out.findings)
    return out


def evaluate(facts: Facts, matrix: Matrix, *, verify_fixes: bool = False) -> List[Finding]:
    """The findings of judge(), errors first, for callers that read the verdict and not the fixes
    (plan, provision: many stacks each), so the fixes are not tried unless asked."""
    return judge(facts, matrix, verify_fixes=verify_fixes).findings
