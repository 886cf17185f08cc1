"""`envcheck doctor --dcgm N`: NVIDIA DCGM's active diagnostic (`dcgmi diag -r N -j`) on every
node, folded into the verdict as one `dcgm` check per host. A node without dcgmi gets SKIP with
that reason (never a silent pass); a test that fails makes the node FAIL, one that warns WARN.

Levels (DCGM user guide): 1 = deployment checks (seconds), 2 = + short PCIe/memory/stress
(about 2 min), 3 = + long stress (about 30 min), 4 = extended. Opt-in because levels 2+ load the
GPUs: never run it under a training job.
Source of the output format: https://docs.nvidia.com/datacenter/dcgm/latest/user-guide/dcgm-diagnostics.html
(3.x: "DCGM GPU Diagnostic" with per-GPU results; 4.x: "DCGM Diagnostic" with test_summary).
"""
from __future__ import annotations

import json
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from envcheck.doctor.health import FAIL, PASS, SKIP, UNKNOWN, WARN, CheckResult
from envcheck.remote import Remote, fan_out

NO_DCGMI = "ENVCHECK-NO-DCGMI"
# seconds per level: the documented run times with room for an 8-GPU node
TIMEOUTS = {1: 120.0, 2: 600.0, 3: 3600.0, 4: 7200.0}
FIX = "see `dcgmi diag -r {level}` on the node; reset the GPU or drain the node and open a hardware ticket"


def command(level: int) -> str:
    """One shell line: say so when dcgmi is absent instead of failing with 127."""
    return f"command -v dcgmi >/dev/null 2>&1 || {{ echo {NO_DCGMI}; exit 0; }}; exec dcgmi diag -r {int(level)} -j"


def _tests(doc: Dict[str, Any]) -> Iterator[Tuple[str, List[Dict[str, Any]], Optional[str]]]:
    """(test name, per-GPU results, summary status) from either format."""
    top = doc.get("DCGM GPU Diagnostic") or doc.get("DCGM Diagnostic") or {}
    for cat in top.get("test_categories") or []:
        for t in cat.get("tests") or []:
            if isinstance(t, dict):
                summary = (t.get("test_summary") or {}).get("status") if isinstance(t.get("test_summary"), dict) else None
                yield str(t.get("name") or "?"), [r for r in t.get("results") or [] if isinstance(r, dict)], summary


def _why(results: List[Dict[str, Any]]) -> str:
    texts = []
    for r in results:
        for w in r.get("warnings") or []:
            texts.append(str(w.get("warning") if isinstance(w, dict) else w))
        if r.get("info") and str(r.get("status", "")).lower() == "fail":
            texts.append(str(r["info"]) if not isinstance(r["info"], list) else "; ".join(map(str, r["info"])))
    return "; ".join(dict.fromkeys(t.strip() for t in texts if t and t.strip()))[:400]


def parse(text: str, level: int) -> Tuple[str, str, str]:
    """dcgmi's JSON -> (status, message, fix) for the host's `dcgm` check."""
    try:
        doc = json.loads(text[text.index("{"):]) if "{" in text else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return UNKNOWN, f"dcgmi diag -r {level} printed no JSON: {text.strip()[:200]!r}", "run `dcgmi diag -r 1` on the node (is nv-hostengine running?)"
    failed, warned, ran = [], [], 0
    for name, results, summary in _tests(doc):
        states = {str(r.get("status", "")).lower() for r in results}
        if summary:
            states.add(str(summary).lower())
        ran += 1
        gpus = ",".join(str(r.get("gpu_id")) for r in results if str(r.get("status", "")).lower() in ("fail", "warn"))
        label = f"{name}" + (f" (GPU {gpus})" if gpus else "")
        why = _why(results)
        if "fail" in states:
            failed.append(label + (f": {why}" if why else ""))
        elif "warn" in states:
            warned.append(label + (f": {why}" if why else ""))
    if not ran:
        return UNKNOWN, f"dcgmi diag -r {level} reported no tests", "run `dcgmi diag -r 1` on the node"
    if failed:
        return FAIL, f"DCGM level {level} failed: " + "; ".join(failed), FIX.format(level=level)
    if warned:
        return WARN, f"DCGM level {level} warned: " + "; ".join(warned), FIX.format(level=level)
    return PASS, f"DCGM level {level}: {ran} test(s) passed or skipped", ""


def run_dcgm(remotes: Sequence[Remote], level: int, forks: int = 32) -> List[CheckResult]:
    timeout = TIMEOUTS.get(level, TIMEOUTS[4])

    def one(r: Remote) -> CheckResult:
        res = r.run(command(level), timeout=timeout)
        if res.error and not res.stdout.strip():
            return CheckResult(r.name, "dcgm", UNKNOWN, f"dcgmi diag -r {level}: {res.error}",
                               fix="run `dcgmi diag -r 1` on the node")
        if res.stdout.strip() == NO_DCGMI:
            return CheckResult(r.name, "dcgm", SKIP, "skipped: dcgmi not found on the node",
                               fix="install DCGM (datacenter-gpu-manager) to run its diagnostic")
        status, message, fix = parse(res.stdout, level)
        return CheckResult(r.name, "dcgm", status, message, fix=fix, duration=res.duration)

    return fan_out(list(remotes), one, forks).values_or(
        lambda r, e: CheckResult(r.name, "dcgm", UNKNOWN, f"internal error: {type(e).__name__}: {e}"))
