"""`doctor --drain-failed` / `--resume-passed`: the doctor's verdicts acted on from the controller,
with the hook's reason format and ownership rules (envcheck/slurm/policy.py): a FAIL node is
drained with `envcheck: <code>: <summary>` unless it has a reason envcheck did not write or is
down/maint/reserved; a PASS (or WARN) node drained by envcheck is resumed; UNKNOWN is left alone.

Without the rights to change nodes (scontrol says "Invalid user id" or "Access/permission
denied"), or without scontrol at all, nothing is changed and each action comes back with the
exact `scontrol update …` line for a Slurm operator to run.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, List

from envcheck.doctor.health import DoctorReport
from envcheck.slurm.nodes import Scontrol, command_line, drain_args, resume_args
from envcheck.slurm.policy import DRAIN, NOTHING, RESUME, decide, wanted


@dataclass
class NodeAction:
    node: str
    action: str            # DRAIN, RESUME, NOTHING
    why: str
    reason: str = ""       # for DRAIN
    command: str = ""      # the exact scontrol line (run, or to be run by an operator)
    done: bool = False
    error: str = ""        # why the command was not run, or failed

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def act(report: DoctorReport, *, drain: bool, resume: bool, strict: bool = False,
        scontrol: str = "scontrol", timeout: float = 10.0) -> List[NodeAction]:
    """Drain the FAIL nodes (drain) and resume the passing ones envcheck drained (resume)."""
    sc = Scontrol(scontrol, timeout)
    states, call = sc.show()          # every node: a host that is not a Slurm node is simply absent
    out: List[NodeAction] = []
    denied = ""
    for n in report.nodes:
        want, reason = wanted(n.verdict, [c for c in report.checks if c.host == n.host], strict)
        if (want == DRAIN and not drain) or (want == RESUME and not resume) or want == NOTHING:
            continue
        st = states.get(n.host)
        if st is None and call.ok:
            out.append(NodeAction(n.host, NOTHING, "not a node of this Slurm cluster"))
            continue
        if st is None and want == RESUME:   # who drained it cannot be told: never resume blind
            out.append(NodeAction(n.host, NOTHING, f"Slurm's view of the nodes could not be read ({call.why()}): "
                                                   f"whether envcheck drained it cannot be told"))
            continue
        if st is None:    # no scontrol here, or no answer: the line for someone who has one
            out.append(NodeAction(n.host, DRAIN, "check first that the node has no reason envcheck did not write",
                                  reason, command_line(drain_args(n.host, reason)),
                                  error=f"Slurm's view of the nodes could not be read ({call.why()}): run the "
                                        f"line where scontrol works"))
            continue
        d = decide(want, st, reason, None)
        args = drain_args(n.host, d.reason) if d.action == DRAIN else resume_args(n.host)
        a = NodeAction(n.host, d.action, d.why, d.reason, command_line(args, scontrol) if d.action != NOTHING else "")
        out.append(a)
        if d.action == NOTHING:
            continue
        if denied:
            a.error = denied
            continue
        done = sc.drain(n.host, d.reason) if d.action == DRAIN else sc.resume(n.host)
        a.done, a.error = done.ok, ("" if done.ok else done.why())
        if not done.ok and _cannot_update(done.stderr + done.stdout + done.error):
            denied = f"not allowed to change nodes ({done.why()}): run the line as a Slurm operator"
            a.error = denied
    return out


def _cannot_update(text: str) -> bool:
    """scontrol refused for lack of rights (or vanished): the rest would fail the same way."""
    low = text.lower()
    return any(w in low for w in ("invalid user id", "access/permission denied", "permission denied",
                                  "not found", "no such file"))
