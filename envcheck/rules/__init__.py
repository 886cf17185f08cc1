"""Rules: small pure functions from facts (envcheck/facts/schema.py) to findings (envcheck/model.py).

One module per component; each exports RULES, a list of `(facts, matrix) -> List[Finding]`.
REGISTRY is all of them in order. A rule reads facts only through envcheck.facts.schema accessors and
says nothing when a fact it needs is missing (`check --cuda 10.0` judges only the toolkit).
"""
from __future__ import annotations

from typing import Callable, List

from envcheck.errors import VersionError
from envcheck.facts.schema import Facts
from envcheck.matrix.load import Matrix
from envcheck.model import COMPONENTS, WARNING, Finding, sort_findings
from envcheck.rules import cuda, cudnn, driver, driver_state, env, fabric, gcc, gpu, health, nccl, python, torch

Rule = Callable[[Facts, Matrix], List[Finding]]
REGISTRY: List[Rule] = [*driver.RULES, *driver_state.RULES, *gpu.RULES, *health.RULES, *fabric.RULES,
                        *cuda.RULES, *cudnn.RULES, *torch.RULES,
                        *python.RULES, *gcc.RULES, *env.RULES, *nccl.RULES]


def evaluate(facts: Facts, matrix: Matrix) -> List[Finding]:
    """Every rule over one host's facts, errors first. Never raises: one host's odd facts must
    not stop an audit of a hundred."""
    out: List[Finding] = []
    for rule in REGISTRY:
        try:
            out.extend(rule(facts, matrix))
        except VersionError:
            # an unreadable version in the facts: the *-unknown rule of that component reports it
            continue
        except Exception as e:  # noqa: BLE001 - reported as a finding, not lost, not a traceback
            component = rule.__module__.rsplit(".", 1)[-1]
            out.append(Finding(
                WARNING, "rule-crashed", component if component in COMPONENTS else "env",
                f"envcheck's {rule.__name__} rule could not judge these facts ({type(e).__name__}: {e}); "
                f"the {component} checks are incomplete for this host.",
                "report this with the facts file (envcheck audit --json)", ""))
    return sort_findings(out)
