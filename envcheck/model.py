"""Plain data shared by every part of the controller: findings and their severities."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from envcheck.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREACHABLE

ERROR = "error"
WARNING = "warning"
INFO = "info"
SEVERITIES = (ERROR, WARNING, INFO)
_SEVERITY_RANK = {ERROR: 0, WARNING: 1, INFO: 2}

COMPONENTS = (
    "driver", "cuda", "cudnn", "torch", "torchvision", "torchaudio",
    "gpu", "python", "gcc", "env", "nccl",
    # fleet-level findings that concern the host itself rather than one component
    "host",
    # the hardware itself: GPUs missing from the driver, memory errors, Xids, PCIe links, throttling
    "health",
)


def _known_component(component: str) -> None:
    if component not in COMPONENTS:
        raise ValueError(f"component {component!r} not in {COMPONENTS}")


def _dict_of(item: Any) -> Dict[str, Any]:
    """A finding or skipped check as a dict; "host" only when it names one (fleet findings)."""
    d = asdict(item)
    if d["host"] is None:
        del d["host"]
    return d


@dataclass(frozen=True)
class Finding:
    """One thing that is wrong (or worth knowing) and how to fix it.

    message names the error the user would otherwise meet ("CUDA driver version is insufficient");
    fix is the exact command or change; source is the URL of the fact the rule relied on.
    """

    severity: str
    code: str
    component: str
    message: str
    fix: str = ""
    source: str = ""
    host: Optional[str] = None

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} not in {SEVERITIES}")
        _known_component(self.component)

    def to_dict(self) -> Dict[str, Any]:
        return _dict_of(self)


@dataclass(frozen=True)
class Skipped:
    """A check that did not run, and why. "No findings" is only true when no check was skipped:
    a verdict over missing facts would be a guess, so the reports count these and --strict fails
    on them.

    check: the rule that did not run ("gpu_vs_torch"); reason: what it lacked ("no GPU in the
    facts", "the arch list of torch 1.3.0+cu92 is not in the matrix"); needs: what would let it
    run ("--gpu NAME|sm_XY", "audit --deep on the host").
    """

    check: str
    component: str
    reason: str
    needs: str = ""
    host: Optional[str] = None

    def __post_init__(self) -> None:
        _known_component(self.component)

    def to_dict(self) -> Dict[str, Any]:
        return _dict_of(self)


def skipped_summary(skipped: List[Skipped], limit: int = 4) -> str:
    """'3 checks skipped (no GPU, no driver version)': what they lacked, the most frequent
    first, at most `limit` of them."""
    if not skipped:
        return ""
    counts: Dict[str, int] = {}
    for s in skipped:
        for part in s.reason.split(", "):
            counts[part] = counts.get(part, 0) + 1
    reasons = sorted(counts, key=lambda r: (-counts[r], r))
    shown = ", ".join(reasons[:limit])
    more = f", {len(reasons) - limit} more" if len(reasons) > limit else ""
    n = len(skipped)
    return f"{n} check{'s' if n != 1 else ''} skipped ({shown}{more})"


def sort_findings(findings: List[Finding]) -> List[Finding]:
    return sorted(findings, key=lambda f: (_SEVERITY_RANK[f.severity], f.component, f.code))


def has_errors(findings: List[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)


def verdict_exit_code(findings: List[Finding], *, unknown: bool = False) -> int:
    """The exit code of every command that judges a stack (audit, check): 3 when something
    could not be checked (its state is unknown), else 1 on an error finding, else 0."""
    if unknown:
        return EXIT_UNREACHABLE
    return EXIT_FINDINGS if has_errors(findings) else EXIT_OK


@dataclass
class HostResult:
    """What an audit learnt about one host: its facts and findings, or why it could not."""

    host: str
    facts: Optional[Dict[str, Any]] = None
    findings: List[Finding] = field(default_factory=list)
    skipped: List[Skipped] = field(default_factory=list)
    error: Optional[str] = None  # set when the host could not be audited (unreachable, auth, timeout …)

    @property
    def reachable(self) -> bool:
        return self.error is None
