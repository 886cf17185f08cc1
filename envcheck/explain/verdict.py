"""Per host, per matched cause: what the audit's checks say about it. Pure: the fleet audit's
results (envcheck.model.HostResult) in, verdicts out.

confirmed    the audit found an error or warning in a component that diagnoses this cause
ruled out    the audit saw every such component on the host (its facts are there) and found
             nothing wrong with them
not checked  the host could not be audited, a component has no facts there (no driver, no
             torch found: the rules had nothing to judge), the cause happens at run time (a
             peer that died, a collective that hung: doctor's job), or it is the program's own
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Sequence

from envcheck.explain.match import Explanation
from envcheck.facts import schema as F
from envcheck.model import Outcome

SHOWN = ("error", "warning")
Facts = F.Facts

# the facts without which the audit's rules for a component have nothing to judge
EVIDENCE: Dict[str, Callable[[Facts], bool]] = {
    "driver": lambda f: bool(F.driver_version(f)),
    "gpu": lambda f: bool(F.gpus(f)),
    "torch": lambda f: bool(F.torch_version(f)),
    "torchvision": lambda f: bool(F.packages(f).get("torchvision")),
    "cuda": lambda f: bool(F.cuda_version(f)),
    "cudnn": lambda f: bool(F.cudnn_version(f)),
    "nccl": lambda f: bool(F.nccl_version(f)),
    "gcc": lambda f: bool(F.gcc_version(f)),
    "env": lambda f: F.has(f, "env"),
}


def _verdict(e: Explanation, r: Any) -> Dict[str, Any]:
    if r.error:
        return {"id": e.id, "verdict": "not checked", "why": "the host could not be audited", "findings": []}
    if e.kind != "environment":
        return {"id": e.id, "verdict": "not checked", "why": "the program's own fault; no host check applies",
                "findings": []}
    if not e.components:
        return {"id": e.id, "verdict": "not checked", "why": "no audit check covers this cause; see the check above",
                "findings": []}
    hits = [f for f in r.findings if f.component in e.components and f.severity in SHOWN]
    if hits:
        return {"id": e.id, "verdict": "confirmed", "why": "", "findings": [f.to_dict() for f in hits]}
    if "host" in e.components:
        return {"id": e.id, "verdict": "not checked", "findings": [],
                "why": "a run-time cause a static audit cannot rule out; `envcheck doctor HOSTS` can"}
    facts = r.facts or {}
    unseen = [c for c in e.components if not EVIDENCE.get(c, lambda f: False)(facts)]
    if unseen:
        return {"id": e.id, "verdict": "not checked", "findings": [],
                "why": f"no {', '.join(unseen)} found on the host to check"}
    return {"id": e.id, "verdict": "ruled out", "findings": [],
            "why": f"{', '.join(e.components)} checked, nothing wrong"}


def verdicts(found: Sequence[Explanation], results: Sequence[Any]) -> List[Dict[str, Any]]:
    """[{host, error, causes: [{id, verdict, why, findings}], findings}], causes in the order
    of `found`; findings: every finding of a component that diagnoses any of them."""
    comps = {c for e in found for c in e.components}
    return [{"host": r.host, "error": r.error, "causes": [_verdict(e, r) for e in found],
             "findings": [f.to_dict() for f in (r.findings or []) if f.component in comps]}
            for r in results]


def exit_code(diagnosis: Sequence[Dict[str, Any]]) -> int:
    """FAIL (1) when a cause is confirmed by an error on a host, else UNKNOWN (3) when a host
    could not be audited, else 0 (model.Outcome)."""
    confirmed = sum(any(f["severity"] == "error" for c in d["causes"] for f in c["findings"]) for d in diagnosis)
    return Outcome(errors=confirmed, unknown=sum(bool(d["error"]) for d in diagnosis)).exit_code()
