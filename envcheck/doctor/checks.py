"""Turning what the audit and the all-reduce found into doctor checks, and comparing a run with
a saved good one (--baseline). Pure functions over plain data (envcheck/model.py,
envcheck/doctor/health.py); envcheck/doctor/run.py runs things and calls these."""
from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional

from envcheck.facts import schema as F
from envcheck.doctor.health import FAIL, PASS, UNKNOWN, WARN, CheckResult, DoctorReport, measurement
from envcheck.model import ERROR, WARNING, Finding, HostResult

# one doctor check per component, per host (JUnit: a testcase each); torchaudio only when it
# has something to say, since most training nodes do not install it
AUDIT_CHECKS = ("driver", "gpu", "cuda", "cudnn", "torch", "torchvision", "python", "gcc", "env",
                "nccl", "host")
OPTIONAL_CHECKS = ("torchaudio",)

BUSBW = "allreduce_busbw_gbps"

# findings that only matter when the nodes are meant to have GPUs: with --no-expect-gpus (a
# CPU-only or gloo cluster, CI) they are kept as information and do not make a node WARN
GPU_ONLY_CODES = ("driver-not-found", "driver-module-not-loaded")


def _status(findings: List[Finding]) -> str:
    if any(f.severity == ERROR for f in findings):
        return FAIL
    if any(f.severity == WARNING for f in findings):
        return WARN
    return PASS


def checks_from_audit(results: Iterable[HostResult], ignore: Iterable[str] = ()) -> List[CheckResult]:
    """One check per component per host; findings whose code is in `ignore` do not count."""
    ignore = set(ignore)
    out: List[CheckResult] = []
    for r in results:
        if not r.reachable:
            out.append(CheckResult(r.host, "reach", UNKNOWN, r.error or "could not be audited",
                                   fix="check that the host is up and sshd answers (ssh HOST true)"))
            continue
        out.append(CheckResult(r.host, "reach", PASS, "audited"))
        by_comp: Dict[str, List[Finding]] = {}
        for f in r.findings:
            by_comp.setdefault(f.component, []).append(f)
        for comp in AUDIT_CHECKS + tuple(c for c in OPTIONAL_CHECKS if c in by_comp):
            fs = [f for f in by_comp.get(comp, []) if f.severity in (ERROR, WARNING) and f.code not in ignore]
            status = _status(fs)
            shown = [f for f in fs if (f.severity == ERROR) == (status == FAIL)] or fs
            out.append(CheckResult(
                r.host, comp, status,
                "; ".join(f.message for f in shown) if shown else _fact_line(r.facts or {}, comp),
                fix="; ".join(dict.fromkeys(f.fix for f in shown if f.fix)),
                code=",".join(dict.fromkeys(f.code for f in shown))))
    return out


def _fact_line(facts: Dict[str, Any], comp: str) -> str:
    inv = inventory_of(facts)
    return inv.get(comp, "")


def inventory_of(facts: Dict[str, Any]) -> Dict[str, str]:
    """The versions that must not change silently between a good run and now."""
    inv: Dict[str, str] = {}
    gpus = F.gpus(facts)
    values = {
        "driver": F.driver_version(facts),
        "cuda": F.cuda_version(facts),
        "cudnn": F.cudnn_version(facts),
        "torch": F.package_version(facts, "torch") or F.torch_version(facts),
        "torchvision": F.package_version(facts, "torchvision"),
        "nccl": F.nccl_version(facts),
        "python": F.python_version(facts),
        "gcc": F.gcc_version(facts),
        "gpu": f"{len(gpus)}x {gpus[0].get('name')}" if gpus else None,
    }
    for k, v in values.items():
        if v:
            inv[k] = str(v)
    return inv


def compare_baseline(current: DoctorReport, baseline: DoctorReport, tolerance: float = 0.2) -> List[CheckResult]:
    """Regressions against a saved good run, as WARN checks (FAIL stays the business of the
    checks themselves): versions that changed on a host, a node that was PASS and is not,
    all-reduce bus bandwidth more than `tolerance` below the baseline's."""
    out: List[CheckResult] = []
    for host, now in current.inventory.items():
        then = baseline.inventory.get(host)
        if then is None:
            continue
        changed = [f"{k} {then[k]} -> {now.get(k, 'absent')}" for k in then if now.get(k) != then[k]]
        changed += [f"{k} absent -> {now[k]}" for k in now if k not in then]
        if changed:
            out.append(CheckResult(host, "baseline", WARN, "changed since the baseline: " + ", ".join(changed),
                                   fix="if intended, save this run as the new baseline (--json > FILE)"))
        else:
            out.append(CheckResult(host, "baseline", PASS, "same versions as the baseline"))
    was = {n.host: n.verdict for n in baseline.nodes}
    for n in current.nodes:
        if was.get(n.host) == PASS and n.verdict in (FAIL, UNKNOWN):
            out.append(CheckResult(n.host, "baseline", WARN, f"regressed: PASS in the baseline, {n.verdict} now"))
    b_now: Optional[float] = getattr(measurement(current, BUSBW), "value", None)
    b_then: Optional[float] = getattr(measurement(baseline, BUSBW), "value", None)
    if b_now is not None and b_then:
        hosts = [h for h in current.hosts if h in current.inventory] or list(current.hosts)
        if b_now < b_then * (1.0 - tolerance):
            msg = (f"all-reduce busbw {b_now:.3g} GB/s is {100 * (1 - b_now / b_then):.0f}% below the "
                   f"baseline {b_then:.3g} GB/s")
            status = WARN
        else:
            msg, status = f"all-reduce busbw {b_now:.3g} GB/s (baseline {b_then:.3g} GB/s)", PASS
        for h in hosts:
            out.append(CheckResult(h, "baseline-busbw", status, msg))
    return out
