"""`envcheck slurm-check`: the node-local hook Slurm runs as HealthCheckProgram, Prolog or Epilog.

The local audit (the same probe, rules and doctor verdicts as `envcheck doctor --local --quick`,
no network test), then what Slurm needs done about it:
- healthcheck: FAIL drains the node with `envcheck: <code>: <summary>`; PASS resumes a node that
  envcheck drained. A failing HealthCheckProgram only makes slurmd log `health_check failed`, so
  the hook calls scontrol itself.
- prolog: never calls scontrol. A failing Prolog makes Slurm drain the node ("Prolog error") and
  requeue the job; the hook records its reason locally so the next healthcheck puts envcheck's
  reason in place of "Prolog error", or resumes the node once the fault is gone.
- epilog: as healthcheck, plus the job's processes still holding a GPU (the probe's gpu_processes section).
Ownership of reasons and the decision: envcheck/slurm/policy.py. Every subprocess (the probe,
scontrol, nvidia-smi) has its own timeout, all inside one deadline well within Slurm's 60 s.
"""
from __future__ import annotations

import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional

from envcheck.audit.probe import judge_result, probe_host, run_probe
from envcheck.doctor.checks import GPU_ONLY_CODES, checks_from_audit
from envcheck.doctor.health import FAIL, PASS, SKIP, UNKNOWN, CheckResult, exit_code, node_verdicts
from envcheck.errors import RemoteError
from envcheck.facts import views
from envcheck.facts.recent import drop_stale_xids
from envcheck.remote import LocalRemote
from envcheck.slurm.nodes import Call, NodeState, Scontrol
from envcheck.slurm.policy import (DRAIN, NOTHING, SCRIPT_REASONS, Decision, clear_record, decide, read_record,
                                   wanted, write_record)

DEFAULT_DEADLINE = 40.0           # Slurm kills a HealthCheckProgram, Prolog or Epilog at 60 s
DEFAULT_XID_SINCE = 24 * 3600.0
STATE_DIR = "/var/lib/envcheck"


@dataclass
class HookOptions:
    mode: str
    node: str
    deadline: float = DEFAULT_DEADLINE
    strict: bool = False            # WARN drains too
    drain_unknown: bool = False     # a probe that crashed or timed out drains too
    expect_gpus: bool = True
    xid_since: float = DEFAULT_XID_SINCE
    state_dir: str = STATE_DIR
    scontrol: str = "scontrol"
    scontrol_timeout: float = 5.0
    node_python: str = sys.executable
    job_id: str = ""                # the job an Epilog ends (SLURM_JOB_ID)
    dry_run: bool = False           # decide and say, never call scontrol


@dataclass
class HookReport:
    node: str
    mode: str
    verdict: str = UNKNOWN
    checks: List[CheckResult] = field(default_factory=list)
    want: str = NOTHING             # what the verdict asks for: DRAIN, RESUME, NOTHING
    reason: str = ""                # envcheck's reason for a drain
    decision: Optional[Decision] = None
    calls: List[Call] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    exit_code: int = 0
    duration: float = 0.0

    def to_dict(self) -> Dict[str, Any]:
        return {"node": self.node, "mode": self.mode, "verdict": self.verdict, "want": self.want,
                "reason": self.reason, "decision": asdict(self.decision) if self.decision else None,
                "checks": [c.to_dict() for c in self.checks if c.status != PASS],
                "scontrol": [{"command": c.line(), "ok": c.ok, "error": "" if c.ok else c.why()}
                             for c in self.calls],
                "notes": list(self.notes), "exit_code": self.exit_code,
                "duration": round(self.duration, 3)}


def run_hook(opts: HookOptions, matrix) -> HookReport:
    t0 = time.monotonic()
    deadline = t0 + opts.deadline
    rep = HookReport(opts.node, opts.mode)
    sc = Scontrol(opts.scontrol, opts.scontrol_timeout, deadline=deadline)
    rep.calls = sc.calls
    node = None
    if opts.mode != "prolog":        # a Prolog never calls scontrol
        nodes, call = sc.show([opts.node])
        node = nodes.get(opts.node)
        if node is None:
            rep.notes.append(f"cannot read the node's state from Slurm ({call.why()})")
    rep.checks = local_checks(opts, matrix, deadline, rep.notes, gpu_job(opts, node))
    rep.verdict = node_verdicts([opts.node], rep.checks)[0].verdict
    rep.want, rep.reason = wanted(rep.verdict, rep.checks, opts.strict, opts.drain_unknown)
    if opts.mode == "prolog":
        _prolog(opts, rep)
    else:
        _act(opts, rep, sc, node)
    rep.duration = time.monotonic() - t0
    return rep


def gpu_job(opts: HookOptions, node: Optional[NodeState]) -> Optional[str]:
    """Whose GPU processes are leftovers: in an Epilog the job's (every one without a job id);
    in a health check every one, when the node runs no job; None: not checked."""
    if opts.mode == "epilog":
        return opts.job_id
    if opts.mode == "healthcheck" and node is not None and node.base == "IDLE" and "COMPLETING" not in node.flags:
        return ""
    return None


def local_checks(opts: HookOptions, matrix, deadline: float, notes: List[str],
                 job: Optional[str] = None) -> List[CheckResult]:
    """The local audit as doctor checks, plus (job not None) the GPU processes left behind."""
    # what the calls after the probe may need, so the probe's timeout leaves time for them
    reserve = 1.0 + (0 if opts.mode == "prolog" else opts.scontrol_timeout) \
        + (opts.scontrol_timeout if job is not None else 0)
    budget = max(1.0, deadline - time.monotonic() - reserve)
    result = probe_host(LocalRemote(opts.node), node_python=opts.node_python, timeout=budget)
    if not result.reachable:
        return [CheckResult(opts.node, "probe", UNKNOWN, f"the probe did not finish: {result.error}",
                            fix="run `envcheck audit` on the node to see why", code="probe-failed")]
    stale = drop_stale_xids(result.facts, opts.xid_since)
    if stale:
        notes.append(f"{stale} Xid event(s) last logged more than {opts.xid_since:g} s ago ignored (--xid-since)")
    judge_result(result, matrix)
    checks = checks_from_audit([result], () if opts.expect_gpus else GPU_ONLY_CODES, opts.expect_gpus)
    checks = [c for c in checks if c.check != "reach"]
    if job is not None:
        timeout = max(0.5, min(opts.scontrol_timeout, deadline - time.monotonic() - opts.scontrol_timeout))
        # first: the drain reason names the first failing check, and what the job just left
        # behind is the fault this Epilog exists for (the others add "(+N more)")
        checks.insert(0, gpu_process_check(opts, job, timeout))
    return checks


def gpu_process_check(opts: HookOptions, job: str, timeout: float) -> CheckResult:
    """The probe's gpu_processes section: the GPU processes of `job` (of any job when '': the
    node runs none) still there."""
    try:
        procs, why = views.gpu_processes(run_probe(LocalRemote(opts.node), node_python=opts.node_python,
                                                   only=["gpu_processes"], timeout=timeout))
    except RemoteError as e:   # ProbeError included
        procs, why = None, e.one_line()
    node, whose = opts.node, (f"job {job}" if job else "no running job")
    if procs is None:
        return CheckResult(node, "gpu-processes", SKIP, f"not checked: {why}")
    left = [p for p in procs if not job or p.slurm_job == job]
    if not left:
        return CheckResult(node, "gpu-processes", PASS, f"no GPU process of {whose} left")
    shown = ", ".join(p.describe() for p in left[:4]) + (f" and {len(left) - 4} more" if len(left) > 4 else "")
    return CheckResult(
        node, "gpu-processes", FAIL,
        f"{len(left)} GPU process(es) of {whose} still running{' after it ended' if job else ''}: {shown}; "
        f"the next job finds that GPU memory taken", code="gpu-processes-left",
        fix=f"kill -9 {' '.join(str(p.pid) for p in left)}; a process that does not die (state D) "
            f"needs a GPU reset or a reboot")


def _prolog(opts: HookOptions, rep: HookReport) -> None:
    rep.decision = Decision(NOTHING, "a Prolog never calls scontrol: a non-zero exit makes Slurm drain "
                                     "the node ('Prolog error') and requeue the job")
    if rep.want == DRAIN:
        rep.exit_code = 1
        err = None if opts.dry_run else write_record(opts.state_dir, "prolog", rep.reason, opts.job_id)
        rep.notes.append(err or f"recorded in {opts.state_dir}: the next health check replaces 'Prolog error' "
                                f"with {rep.reason!r}, or resumes the node once the fault is gone")
    elif not opts.dry_run:
        clear_record(opts.state_dir)


def _act(opts: HookOptions, rep: HookReport, sc: Scontrol, node: Optional[NodeState]) -> None:
    """healthcheck and epilog: from the node's state, decide; drain or resume (or say why not)."""
    rep.exit_code = exit_code(rep.verdict, opts.strict) if opts.mode == "healthcheck" else 0
    if rep.want == NOTHING:
        rep.decision = Decision(NOTHING, "the probe did not finish (UNKNOWN): no drain unless --drain-unknown")
        return
    if node is None:
        rep.decision = Decision(NOTHING, "Slurm's view of the node could not be read")
        _fallback(opts, rep)
        return
    record = read_record(opts.state_dir)
    if record and node.reason.strip() != SCRIPT_REASONS.get(str(record.get("mode"))) and not opts.dry_run:
        clear_record(opts.state_dir)     # that Prolog/Epilog error is gone (resumed by someone)
        record = None
    rep.decision = decide(rep.want, node, rep.reason, record)
    if opts.dry_run or rep.decision.action == NOTHING:
        return
    done = sc.drain(opts.node, rep.decision.reason) if rep.decision.action == DRAIN else sc.resume(opts.node)
    if done.ok:
        clear_record(opts.state_dir)
    else:
        rep.notes.append(f"scontrol failed ({done.why()})")
        if rep.decision.action == DRAIN:
            _fallback(opts, rep)


def _fallback(opts: HookOptions, rep: HookReport) -> None:
    """The node should be drained and scontrol could not do it. An Epilog then exits 1 so that
    Slurm drains it ("Epilog error"), recording envcheck's reason for the next health check."""
    if opts.mode == "epilog" and rep.want == DRAIN:
        rep.exit_code = 1
        if not opts.dry_run:
            err = write_record(opts.state_dir, "epilog", rep.reason, opts.job_id)
            rep.notes.append(err or "exit 1: Slurm drains the node ('Epilog error'); recorded for the next health check")
