"""Turning what the audit and the all-reduce found into doctor checks, and comparing a run with
a saved good one (--baseline). Pure functions over plain data (envcheck/model.py,
envcheck/doctor/health.py); envcheck/doctor/run.py runs things and calls these."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, Iterable, List, Optional, Tuple

from envcheck.facts import schema as F
from envcheck.facts import views
from envcheck.doctor.health import FAIL, PASS, UNKNOWN, WARN, CheckResult, DoctorReport, Measurement, measurement
from envcheck.model import ERROR, INFO, WARNING, Finding, HostResult, skipped_summary
from envcheck.rules.health import bdf

# one doctor check per component, per host (JUnit: a testcase each); torchaudio only when it
# has something to say, since most training nodes do not install it
AUDIT_CHECKS = ("driver", "gpu", "health", "cuda", "cudnn", "torch", "torchvision", "python", "gcc",
                "env", "nccl", "host")
OPTIONAL_CHECKS = ("torchaudio",)

BUSBW = "allreduce_busbw_gbps"
BUSBW_ALLOWED = "allreduce_allowed_gbps"   # what the links allow one rank (envcheck/allreduce/linkrate.py)

# findings that only matter when the nodes are meant to have GPUs: with --no-expect-gpus (a
# CPU-only or gloo cluster, CI) they are kept as information and do not make a node WARN. As
# errors (NVIDIA GPUs on the node's PCI bus and no working driver) they count all the same.
GPU_ONLY_CODES = ("driver-not-found", "driver-module-not-loaded",
                  # ... and checks skipped for want of a GPU or driver (matched in the reason)
                  "no GPU", "no driver version")


def _status(findings: List[Finding]) -> str:
    if any(f.severity == ERROR for f in findings):
        return FAIL
    if any(f.severity == WARNING for f in findings):
        return WARN
    return PASS


def expecting_gpus(f: Finding) -> Finding:
    """The audit calls a machine with no driver and no NVIDIA GPU on the bus a CPU machine (a
    note); doctor, told GPUs are expected (its default), warns about the same node."""
    if f.code != "driver-not-found" or f.severity != INFO:
        return f
    return replace(f, severity=WARNING,
                   # not the audit's own words, which end 'a CPU machine, nothing to fix'
                   message="No NVIDIA driver found and no NVIDIA GPU on the PCI bus (a CPU machine), but doctor "
                           "expects GPUs on every node: a training run asking for GPUs fails here.",
                   fix="run the job on GPU nodes, or pass --no-expect-gpus for a CPU-only (gloo) cluster")


def checks_from_audit(results: Iterable[HostResult], ignore: Iterable[str] = (),
                      expect_gpus: bool = False) -> List[CheckResult]:
    """One check per component per host; warnings whose code is in `ignore` do not count (errors
    always do), nor skipped checks whose reason contains one of its entries. `expect_gpus`: a node with no GPU at
    all is a warning (see expecting_gpus)."""
    ignore = set(ignore)
    out: List[CheckResult] = []
    for r in results:
        if not r.reachable:
            out.append(CheckResult(r.host, "reach", UNKNOWN, r.error or "could not be audited",
                                   fix="check that the host is up and sshd answers (ssh HOST true)"))
            continue
        out.append(CheckResult(r.host, "reach", PASS, "audited"))
        by_comp: Dict[str, List[Finding]] = {}
        for f in (map(expecting_gpus, r.findings) if expect_gpus else r.findings):
            by_comp.setdefault(f.component, []).append(f)
        for comp in AUDIT_CHECKS + tuple(c for c in OPTIONAL_CHECKS if c in by_comp):
            fs = [f for f in by_comp.get(comp, []) if f.severity == ERROR
                  or (f.severity == WARNING and f.code not in ignore)]
            status = _status(fs)
            shown = [f for f in fs if (f.severity == ERROR) == (status == FAIL)] or fs
            skipped = [s for s in r.skipped if s.component == comp and not any(i in s.reason for i in ignore)]
            message = "; ".join(f.message for f in shown) if shown else _fact_line(r.facts or {}, comp)
            if skipped:
                message += ("; " if message else "") + skipped_summary(skipped, limit=2)
            out.append(CheckResult(
                r.host, comp, status, message,
                fix="; ".join(dict.fromkeys(f.fix for f in shown if f.fix)),
                code=",".join(dict.fromkeys(f.code for f in shown)), skipped=len(skipped)))
    return out


TORCH_CODE = "torch-not-importable"
TORCH_FIX = "pass --node-python with the venv or conda env that has torch, or install torch there"


def torch_from_deep(facts: Optional[Dict[str, Any]]) -> Optional[Tuple[Optional[str], Optional[str]]]:
    """(version, None) or (None, why) when the audit imported torch (--deep); None when it did not try."""
    deep = (facts or {}).get("deep")
    if not isinstance(deep, dict) or not ({"torch", "error"} & set(deep)):
        return None
    if deep.get("torch"):
        return str(deep["torch"]), None
    return None, str(deep.get("error") or "unknown error")


def require_torch(checks: List[CheckResult], imports: Dict[str, Tuple[Optional[str], Optional[str]]],
                  results: Iterable[HostResult]) -> None:
    """Every rank of a training run imports torch: a node where it does not import is FAIL
    (never PASS, whatever else the audit found), on its "torch" check, with the fix."""
    python = {r.host: F.python_executable(r.facts or {}) for r in results}
    for c in checks:
        version, why = imports.get(c.host, ("", None))
        if c.check != "torch" or version:
            continue
        was = c.message if c.status != PASS or c.code else (f"installed: {c.message}" if c.message else "")
        c.status, c.fix = FAIL, "; ".join(x for x in (TORCH_FIX, c.fix) if x)
        c.code = ",".join(x for x in (TORCH_CODE, c.code) if x)
        c.message = (f"torch does not import under {python.get(c.host) or 'the node python'}: {why}; "
                     f"a training rank cannot start here" + (f"; {was}" if was else ""))


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
        "gpu": f"{views.gpu_count(facts)}x {gpus[0].get('name')}" if gpus else None,
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


def health_measurements(results: Iterable[HostResult]) -> List[Measurement]:
    """The hardware numbers dashboards graph per node and GPU (Prometheus gauges): uncorrectable
    ECC errors, PCIe link width, Xid events since boot, GPUs the driver lost. Only what the probe
    read: a host without health facts gives no samples rather than zeros."""
    out: List[Measurement] = []
    for r in results:
        f = r.facts or {}
        if not r.reachable or not F.health_probed(f):
            continue
        for g in F.gpus(f):
            vol = (F.gpu_health(g).get("ecc") or {}).get("volatile_uncorrected")
            if isinstance(vol, int):
                out.append(Measurement("gpu_ecc_uncorrected_volatile", float(vol),
                                       {"host": r.host, "gpu": bdf(g.get("pci_bus_id")) or str(g.get("index"))},
                                       "Uncorrectable ECC errors since the driver loaded (NVML volatile counter)."))
        for d in F.pci_links(f):
            if isinstance(d["link"].get("width"), int):
                out.append(Measurement("gpu_pcie_link_width", float(d["link"]["width"]),
                                       {"host": r.host, "gpu": bdf(d.get("address")) or str(d.get("address"))},
                                       "Current PCIe link width (lanes) of the GPU, from sysfs."))
        for e in F.xid_events(f):
            out.append(Measurement("xid_events", float(e.get("count") or 0),
                                   {"host": r.host, "xid": str(e["xid"]), "gpu": str(e.get("pci"))},
                                   "NVRM Xid events in the kernel log since boot, per code and GPU."))
        pci = F.pci_gpus(f)
        given = (F.env(f).get("NVIDIA_VISIBLE_DEVICES") or "all").strip().lower()
        if pci is not None and F.driver_version(f) and given in ("all", "void", "none"):  # not a partial container
            seen = {bdf(g.get("pci_bus_id")) for g in F.gpus(f)}
            out.append(Measurement("gpus_missing_from_driver",
                                   float(sum(1 for d in pci if bdf(d.get("address")) not in seen)),
                                   {"host": r.host}, "NVIDIA GPUs on the PCI bus the driver does not list."))
    return out
