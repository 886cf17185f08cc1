"""Plain data shared by every part of the controller: findings and their severities."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Tuple

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
class Remedy:
    """What a fix changes in the facts, as data, so the fix can be tried before it is offered.

    label: the change in a few words ("install CUDA 11.7.1"); fix: the instruction the user reads;
    why: what calls for it, said when it is added to another fix ("CUDA 11.7.1 needs gcc <= 11");
    edits: (fact, value) pairs that envcheck.facts.edit.apply() makes on a copy of the facts:
    driver V, cuda V (a toolkit installed at /usr/local/cuda-X.Y and used), host_compiler N
    (gcc-N given to nvcc with -ccbin), cudnn V (the system cuDNN), loaded_cudnn V (the cuDNN the
    torch process loads), torch V+tag (that wheel and what the matrix says it brings), torchvision
    V, torchaudio V, python X.Y, env:NAME value ('' unsets it), cuda_compat X.Y (NVIDIA's
    cuda-compat-X-Y loaded first).
    """

    label: str
    fix: str
    edits: Tuple[Tuple[str, str], ...]
    why: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"label": self.label, "edits": dict(self.edits)}


# what trying a finding's fix on a copy of the facts found (FixCheck.status)
VERIFIED = "verified"      # applied as given: this finding goes and no new error comes
EXTENDED = "extended"      # it brought a new error; the fix of that error was added to it
REPLACED = "replaced"      # the rule's first fix did not hold; a later candidate of the rule did
UNVERIFIED = "unverified"  # no candidate could be made clean within the bounds; offered with why
NO_FIX = "none"            # every candidate changes nothing (the same wheel again): none offered


@dataclass(frozen=True)
class FixCheck:
    """The outcome of trying a finding's fix: its status, the changes the offered fix makes in
    order (steps, each a Remedy label; edits, all of them together), and notes saying why it was
    extended or replaced, or why it is unverified."""

    status: str
    steps: Tuple[str, ...] = ()
    edits: Tuple[Tuple[str, str], ...] = ()
    notes: Tuple[str, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        return {"status": self.status, "verified": self.status in (VERIFIED, EXTENDED, REPLACED),
                "extended": len(self.steps) > 1, "steps": list(self.steps), "edits": dict(self.edits),
                "notes": list(self.notes)}


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
    # the fixes the rule can offer, best first, as data (tried by envcheck/rules/fixcheck.py),
    # and what trying them found; neither makes two findings different
    remedies: Tuple[Remedy, ...] = field(default=(), compare=False, repr=False)
    fix_check: Optional[FixCheck] = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r} not in {SEVERITIES}")
        _known_component(self.component)

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {k: getattr(self, k) for k in ("severity", "code", "component", "message", "fix", "source")}
        if self.host is not None:
            d["host"] = self.host
        if self.fix_check is not None:
            d["fix_check"] = self.fix_check.to_dict()
        return d


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


# One vocabulary for every command's verdict (doctor's own words) and the one place an outcome
# becomes an exit code: FAIL 1 when anything definite is wrong; else UNKNOWN 3 when something
# could not be checked at all; else WARN or PASS, 0 (WARN and skipped checks are 1 under --strict).
PASS, WARN, FAIL, UNKNOWN = "PASS", "WARN", "FAIL", "UNKNOWN"


@dataclass(frozen=True)
class Outcome:
    """What a command found, counted: errors (an error finding, a FAIL node, corrupt sums, a
    failed install or script), warnings, skipped (checks that could not run for lack of facts)
    and unknown (what could not be checked at all: an unreachable host, a lost or hung rank).
    `--strict` has one meaning everywhere: a warning or a skipped check fails as an error does."""

    errors: int = 0
    warnings: int = 0
    skipped: int = 0
    unknown: int = 0

    @classmethod
    def of(cls, findings: List[Finding], skipped: int = 0, unknown: int = 0) -> "Outcome":
        return cls(sum(f.severity == ERROR for f in findings), sum(f.severity == WARNING for f in findings),
                   skipped, unknown)

    def __add__(self, other: "Outcome") -> "Outcome":
        return Outcome(self.errors + other.errors, self.warnings + other.warnings,
                       self.skipped + other.skipped, self.unknown + other.unknown)

    def verdict(self, strict: bool = False) -> str:
        if self.errors or (strict and (self.warnings or self.skipped)):
            return FAIL
        if self.unknown:
            return UNKNOWN
        return WARN if self.warnings or self.skipped else PASS

    def exit_code(self, strict: bool = False) -> int:
        return {FAIL: EXIT_FINDINGS, UNKNOWN: EXIT_UNREACHABLE}.get(self.verdict(strict), EXIT_OK)


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
