"""Per host, per matched cause: what the audit's checks say about it. Pure: the fleet audit's
results in, verdicts out.

confirmed   the audit found an error or warning in a component that diagnoses this cause
ruled out   the host was audited and those components are clean
unknown     the host could not be audited, or the cause has no component the audit checks
            (the program's own faults, a peer that died mid-run)
"""
from __future__ import annotations

from typing import Any, Dict, List, Sequence

from envcheck.explain.match import Explanation

SHOWN = ("error", "warning")


def verdicts(found: Sequence[Explanation], results: Sequence[Any]) -> List[Dict[str, Any]]:
    """[{host, error, causes: [{id, verdict, findings}], findings}] for audit results that carry
    .host, .error and .findings (envcheck.model.Finding)."""
    comps = {c for e in found for c in e.components}
    out = []
    for r in results:
        causes = []
        for e in found:
            if r.error:
                verdict, hits = "unknown", []
            elif not e.components:
                verdict, hits = "unknown", []
            else:
                hits = [f for f in r.findings if f.component in e.components and f.severity in SHOWN]
                verdict = "confirmed" if hits else "ruled out"
            causes.append({"id": e.id, "verdict": verdict, "findings": [f.to_dict() for f in hits]})
        out.append({"host": r.host, "error": r.error, "causes": causes,
                    "findings": [f.to_dict() for f in (r.findings or []) if f.component in comps]})
    return out


def exit_code(diagnosis: Sequence[Dict[str, Any]]) -> int:
    """3 when a host could not be audited, 1 when a cause is confirmed by an error, else 0."""
    if any(d["error"] for d in diagnosis):
        return 3
    if any(f["severity"] == "error" for d in diagnosis for c in d["causes"] for f in c["findings"]):
        return 1
    return 0
