"""Plain data for `envcheck doctor` and the rules that turn check results into verdicts.

A CheckResult is one check on one host (an audit component, the preflight, the all-reduce);
a node's verdict is the worst of its checks; the run's verdict is the worst of its nodes, with
FAIL (a definite problem, named) above UNKNOWN (a host we could not check) above WARN.
Pure: no I/O, so the renderers (envcheck/doctor/render.py) and the tests use it directly.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from envcheck.model import FAIL, PASS, UNKNOWN, WARN, Outcome  # noqa: F401 - re-exported

SKIP = "SKIP"          # a check that did not apply (no torch: no --deep); never changes a verdict
VERDICTS = (PASS, WARN, FAIL, UNKNOWN)

_RANK = {SKIP: -1, PASS: 0, WARN: 1, UNKNOWN: 2, FAIL: 3}


@dataclass
class CheckResult:
    host: str
    check: str            # "driver", "cuda", "torch" …, "reach", "preflight", "allreduce"
    status: str           # PASS / WARN / FAIL / UNKNOWN / SKIP
    message: str = ""
    fix: str = ""
    duration: float = 0.0
    code: str = ""        # the finding code when the check came from an audit finding
    skipped: int = 0      # audit checks of this component that could not run (lacking facts)

    def __post_init__(self) -> None:
        if self.status not in _RANK:
            raise ValueError(f"status {self.status!r} not in {tuple(_RANK)}")

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


@dataclass
class Measurement:
    """A number worth graphing over time (Prometheus) and comparing to a baseline."""
    name: str             # "allreduce_busbw_gbps"
    value: float
    labels: Dict[str, str] = field(default_factory=dict)
    help: str = ""


@dataclass
class NodeVerdict:
    host: str
    verdict: str
    reasons: List[str] = field(default_factory=list)   # the failing/warning checks' messages


@dataclass
class DoctorReport:
    hosts: List[str]
    checks: List[CheckResult] = field(default_factory=list)
    measurements: List[Measurement] = field(default_factory=list)
    nodes: List[NodeVerdict] = field(default_factory=list)
    verdict: str = UNKNOWN
    suspects: List[str] = field(default_factory=list)    # hosts the pair rounds or the bisection named
    inventory: Dict[str, Dict[str, str]] = field(default_factory=dict)  # host -> key versions
    notes: List[str] = field(default_factory=list)
    duration: float = 0.0
    slurm: Dict[str, Any] = field(default_factory=dict)   # --launcher srun: job_id, steps
    pairs: Dict[str, Any] = field(default_factory=dict)  # the pair rounds (allreduce.pairs.PairVerdict.to_dict)

    def to_dict(self) -> Dict[str, Any]:
        return {**({"slurm": dict(self.slurm)} if self.slurm else {}),
            "verdict": self.verdict,
            "hosts": list(self.hosts),
            "nodes": [asdict(n) for n in self.nodes],
            "checks": [c.to_dict() for c in self.checks],
            "measurements": [asdict(m) for m in self.measurements],
            "suspects": list(self.suspects),
            "inventory": {h: dict(v) for h, v in self.inventory.items()},
            "notes": list(self.notes),
            "duration": round(self.duration, 3),
            "pairs": dict(self.pairs),
        }


def worst(statuses: List[str]) -> str:
    real = [s for s in statuses if s != SKIP]
    if not real:
        return PASS
    return max(real, key=lambda s: _RANK[s])


def node_verdicts(hosts: List[str], checks: List[CheckResult]) -> List[NodeVerdict]:
    out = []
    for h in hosts:
        mine = [c for c in checks if c.host == h]
        v = worst([c.status for c in mine])
        reasons = [f"{c.check}: {c.message}" for c in mine if c.status == v and v != PASS]
        out.append(NodeVerdict(h, v, reasons))
    return out


def overall(nodes: List[NodeVerdict]) -> str:
    if not nodes:
        return UNKNOWN
    return worst([n.verdict for n in nodes])


def outcome(report: "DoctorReport") -> Outcome:
    """The report counted: FAIL nodes are errors, WARN ones warnings, UNKNOWN ones unknown."""
    by = [n.verdict for n in report.nodes]
    return Outcome(by.count(FAIL), by.count(WARN), sum(c.skipped for c in report.checks), by.count(UNKNOWN))


def exit_code(verdict: str, strict: bool = False, skipped: int = 0) -> int:
    """The exit code of a run whose overall verdict is `verdict` (model.Outcome decides)."""
    return Outcome(verdict == FAIL, verdict == WARN, skipped, verdict == UNKNOWN).exit_code(strict)


def finalize(report: DoctorReport) -> DoctorReport:
    report.nodes = node_verdicts(report.hosts, report.checks)
    report.verdict = overall(report.nodes)
    return report


def from_dict(doc: Dict[str, Any]) -> DoctorReport:
    """Read back a saved `doctor --json` (for --baseline)."""
    r = DoctorReport(hosts=list(doc.get("hosts") or []))
    for c in doc.get("checks") or []:
        r.checks.append(CheckResult(**{k: c[k] for k in c if k in CheckResult.__dataclass_fields__}))
    for m in doc.get("measurements") or []:
        r.measurements.append(Measurement(m["name"], float(m["value"]), dict(m.get("labels") or {}),
                                          m.get("help", "")))
    r.verdict = doc.get("verdict", UNKNOWN)
    r.suspects = list(doc.get("suspects") or [])
    r.inventory = {h: dict(v) for h, v in (doc.get("inventory") or {}).items()}
    for n in doc.get("nodes") or []:
        r.nodes.append(NodeVerdict(n["host"], n["verdict"], list(n.get("reasons") or [])))
    return r


def measurement(report: DoctorReport, name: str) -> Optional[Measurement]:
    for m in report.measurements:
        if m.name == name:
            return m
    return None
