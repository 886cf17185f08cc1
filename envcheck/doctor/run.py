"""`envcheck doctor`: the pre-training health check. Audit -> connectivity preflight -> a short
all-reduce (one large size plus the check pass) -> one verdict per node and overall.

The steps themselves belong to other modules (the fleet audit, envcheck/allreduce/run.py); they
are reached through a Backend (envcheck/doctor/backend.py binds the real ones), so this module
is only the order of things and the bookkeeping: what failed where, which node the bisection
names, what regressed against the baseline. Never prints; progress goes to a callback.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Protocol, Sequence, Tuple

from envcheck.allreduce.bandwidth import human_size
from envcheck.allreduce.linkrate import pct, percent
from envcheck.allreduce.pairs import PairFigure, judge as judge_pairs
from envcheck.doctor import health
from envcheck.doctor.pairs import named as pairs_named, pair_checks, pair_measurements, pair_notes
from envcheck.doctor.checks import (BUSBW, BUSBW_ALLOWED, GPU_ONLY_CODES, checks_from_audit, compare_baseline,
                                    health_measurements, inventory_of, require_torch, torch_from_deep)
from envcheck.doctor.health import FAIL, PASS, SKIP, CheckResult, DoctorReport, Measurement
from envcheck.allreduce.verdict import judge
from envcheck.doctor.isolate import isolate
from envcheck.model import HostResult

Progress = Callable[[str], None]


@dataclass
class AllreduceOutcome:
    """What one all-reduce run says, in the doctor's terms (the backend translates)."""
    hosts: List[str]
    ok: bool                                   # ran, correct, and fast enough
    busbw_gbps: Optional[float] = None         # at the largest size
    wrong: int = 0                             # elements wrong in the check pass
    preflight: Dict[str, str] = field(default_factory=dict)   # host -> why it cannot take part
    missing: List[str] = field(default_factory=list)          # hosts whose ranks never joined / died
    error: str = ""                            # one line: why it failed
    exit_code: int = 0
    pairs: List[PairFigure] = field(default_factory=list)     # the pair rounds' figures, every try
    allowed_gbps: Optional[float] = None       # what one rank's share of the slowest link allows
    allowed_by: str = ""                       # what says so: "NVLink 4 × 18", "eth0 10 Gb/s"


class Backend(Protocol):
    def audit(self, hosts: Sequence[str], deep: bool) -> List[HostResult]: ...

    def allreduce(self, hosts: Sequence[str], max_bytes: int, quick: bool = False,
                  pairs: bool = False) -> AllreduceOutcome: ...

    def dcgm(self, hosts: Sequence[str], level: int) -> List[CheckResult]: ...

    def torch_import(self, hosts: Sequence[str]) -> Dict[str, Tuple[Optional[str], Optional[str]]]: ...


@dataclass
class DoctorOptions:
    deep: bool = True
    quick: bool = False                 # no network test (a Slurm HealthCheckProgram has 60 s)
    max_bytes: int = 64 << 20           # "one large size"
    min_busbw: Optional[float] = None   # GB/s; below it the all-reduce counts as failed
    bisect: bool = True                 # when the all-reduce fails and names no node
    pairs: bool = True                  # rounds of node pairs after the fleet all-reduce (3+ hosts)
    baseline: Optional[DoctorReport] = None
    baseline_tolerance: float = 0.2
    max_isolation_tests: int = 16
    expect_gpus: bool = True            # False: a CPU-only cluster, no driver is not a warning
    dcgm: Optional[int] = None          # run `dcgmi diag -r N` on every reachable node


def run_doctor(hosts: Sequence[str], opts: DoctorOptions, backend: Backend,
               progress: Optional[Progress] = None) -> DoctorReport:
    say = progress or (lambda _msg: None)
    t0 = time.monotonic()
    report = DoctorReport(hosts=list(hosts))

    say(f"audit: {len(hosts)} host(s){' (deep)' if opts.deep and not opts.quick else ''}")
    results = backend.audit(list(hosts), opts.deep and not opts.quick)
    report.checks += checks_from_audit(results, () if opts.expect_gpus else GPU_ONLY_CODES, opts.expect_gpus)
    report.inventory = {r.host: inventory_of(r.facts) for r in results if r.reachable and r.facts}
    report.measurements += health_measurements(results)
    reachable = [r.host for r in results if r.reachable]
    no_torch = _torch_requirement(report, results, reachable, backend)
    if opts.dcgm and reachable:
        say(f"dcgm: dcgmi diag -r {opts.dcgm} on {len(reachable)} host(s)")
        dcgm = backend.dcgm(reachable, opts.dcgm)
        report.checks += dcgm
        skipped = [c.host for c in dcgm if c.status == SKIP]
        if skipped:
            report.notes.append(f"dcgm: skipped on {', '.join(skipped)} (dcgmi not found)")

    if opts.quick:
        report.notes.append("network test skipped (--quick)")
        report.checks += [CheckResult(h, "allreduce", SKIP, "--quick") for h in reachable]
    else:
        report.checks += [CheckResult(h, "allreduce", SKIP, "torch does not import here") for h in no_torch]
        ready = [h for h in reachable if h not in no_torch]
        if ready:
            _network(report, ready, opts, backend, say)

    health.finalize(report)
    if opts.baseline is not None:
        report.checks += compare_baseline(report, opts.baseline, opts.baseline_tolerance)
        health.finalize(report)
    report.duration = time.monotonic() - t0
    return report


def _torch_requirement(report: DoctorReport, results: List[HostResult], reachable: List[str],
                       backend: Backend) -> List[str]:
    """Whether torch imports on every reachable node: from the deep audit where it tried, else
    one `import torch` per node (--quick and --no-deep too: a PASS says a rank can start). The
    nodes where it does not are FAIL (checks.require_torch); returned, so no rank starts there."""
    imports = {r.host: torch_from_deep(r.facts) for r in results if r.reachable}
    todo = [h for h in reachable if imports.get(h) is None]
    if todo:
        imports.update(backend.torch_import(todo))
    require_torch(report.checks, imports, results)
    return [h for h in reachable if not (imports.get(h) or (None, None))[0]]


def _judge(out: AllreduceOutcome, min_busbw: Optional[float]) -> AllreduceOutcome:
    """A backend's passing outcome held to --min-busbw (the backends report without it)."""
    if out.ok:
        v = judge(rows=1, wrong=out.wrong, busbw=out.busbw_gbps, min_busbw=min_busbw)
        out.ok, out.error = v.ok, ("" if v.ok else v.message)
    return out


def _describe(out: AllreduceOutcome) -> str:
    if out.error:
        return out.error
    if out.wrong:
        return judge(rows=1, wrong=out.wrong, busbw=None).message
    if out.missing:
        return "rank(s) on " + ", ".join(out.missing) + " never joined or died"
    return "failed"


def _network(report: DoctorReport, hosts: List[str], opts: DoctorOptions, backend: Backend,
             say: Progress) -> None:
    with_pairs = opts.pairs and len(hosts) >= 3
    say(f"all-reduce: {len(hosts)} host(s), {opts.max_bytes >> 20} MiB + check pass"
        + (", then rounds of node pairs" if with_pairs else ""))
    out = _judge(backend.allreduce(hosts, opts.max_bytes, pairs=with_pairs), opts.min_busbw)
    if out.busbw_gbps is not None:
        report.measurements.append(Measurement(
            BUSBW, out.busbw_gbps, {"hosts": ",".join(hosts)},
            "All-reduce bus bandwidth at the largest size, GB/s (nccl-tests definition)."))
    if out.allowed_gbps:
        report.measurements.append(Measurement(
            BUSBW_ALLOWED, out.allowed_gbps, {"hosts": ",".join(hosts), "by": out.allowed_by},
            "What the hardware allows one rank, GB/s per direction: the slowest link's share, or NVLink's on one node."))
    if out.preflight:
        # the preflight already names the hosts and why: no point bisecting
        for h in hosts:
            if h in out.preflight:
                report.checks.append(CheckResult(h, "preflight", FAIL, out.preflight[h],
                                                 fix="see `envcheck nccl-test` preflight: reachability of MASTER_ADDR:PORT, --ifname"))
            else:
                report.checks.append(CheckResult(h, "preflight", PASS, "reaches the master"))
        return
    for h in hosts:
        report.checks.append(CheckResult(h, "preflight", PASS, "reaches the master"))
    by_pairs = _pairs(report, hosts, out, opts)
    if out.ok:
        msg = f"busbw {out.busbw_gbps:.3g} GB/s, 0 wrong" if out.busbw_gbps is not None else "correct"
        if out.allowed_gbps and out.busbw_gbps is not None:
            msg += (f" ({pct(percent(out.busbw_gbps, out.allowed_gbps))}% of the {out.allowed_gbps:.3g} GB/s that "
                    f"{out.allowed_by or 'the link'} allows one rank, at {human_size(opts.max_bytes)}B)")
        report.checks += [CheckResult(h, "allreduce", PASS, msg) for h in hosts]
        return
    why = _describe(out)
    named = [h for h in out.missing if h in hosts]
    if not named and by_pairs is not None:
        named = report.suspects = by_pairs
        if not named:
            report.notes.append("pairs: every pair is fine: the fault needs the full set of hosts (a link or scale problem)")
    elif not named and opts.bisect and len(hosts) > 1:
        say(f"all-reduce failed ({why}); isolating the node")
        # the bisection runs a smaller size: it only has to tell good from bad
        small = max(1 << 20, opts.max_bytes // 16)
        iso = isolate(hosts, lambda hs: _judge(backend.allreduce(hs, small, quick=True), opts.min_busbw).ok,
                      max_tests=opts.max_isolation_tests)
        named = iso.suspects
        report.suspects = list(named)
        if iso.note:
            report.notes.append(f"isolation: {iso.note}")
    elif named:
        report.suspects = list(named)
    for h in hosts:
        if not named or h in named:
            where = "the pair rounds name this node" if by_pairs else "isolated to this node"
            report.checks.append(CheckResult(h, "allreduce", FAIL, why if not named else f"{why} ({where})",
                                             fix="run `envcheck nccl-test` on this host with NCCL_DEBUG=INFO; "
                                                 "compare with a good node's audit"))
        else:
            report.checks.append(CheckResult(h, "allreduce", PASS, "passes without the suspect node(s)"))


def _pairs(report: DoctorReport, hosts: List[str], out: AllreduceOutcome, opts: DoctorOptions) -> Optional[List[str]]:
    """Judge the pair rounds: their checks, gauges and notes go into the report; returns the
    hosts they name, None when no pair was measured."""
    if not out.pairs:
        return None
    v = judge_pairs(out.pairs, opts.min_busbw)
    report.checks += pair_checks(hosts, v)
    report.measurements += pair_measurements(v)
    report.notes += pair_notes(v)
    report.pairs = v.to_dict()
    report.suspects = pairs_named(v)
    return list(report.suspects)
