"""The hook's report as text: what slurmd's log (and a person running it by hand) reads."""
from __future__ import annotations

from typing import List

from envcheck.doctor.health import PASS, SKIP
from envcheck.slurm.drain import NodeAction
from envcheck.slurm.hook import HookReport


def render_hook(rep: HookReport) -> str:
    lines: List[str] = [f"envcheck slurm-check --mode {rep.mode} on {rep.node}: {rep.verdict} "
                        f"({rep.duration:.1f} s)"]
    for c in rep.checks:
        if c.status in (PASS, SKIP) and not c.message.startswith("not checked"):
            continue
        lines.append(f"  {c.status} {c.check}: {c.message}" + (f" [{c.code}]" if c.code else ""))
        if c.fix:
            lines.append(f"      fix: {c.fix}")
    if rep.reason:
        lines.append(f"reason: {rep.reason}")
    if rep.decision:
        lines.append(f"action: {rep.decision.action}: {rep.decision.why}")
    for c in rep.calls:
        lines.append(f"  {c.line()} -> {'ok' if c.ok else c.why()}")
    lines += [f"note: {n}" for n in rep.notes]
    return "\n".join(lines) + "\n"


def render_actions(actions: List[NodeAction]) -> str:
    """doctor --drain-failed / --resume-passed: what was done to which node, and the scontrol
    lines left for an operator."""
    lines: List[str] = []
    for a in actions:
        if a.action == "nothing":
            lines.append(f"slurm: {a.node}: nothing done: {a.why}")
        elif a.done:
            lines.append(f"slurm: {a.node}: {'drained' if a.action == 'drain' else 'resumed'} ({a.why})")
        else:
            lines.append(f"slurm: {a.node}: not {'drained' if a.action == 'drain' else 'resumed'}: {a.error}")
    todo = [a.command for a in actions if a.command and not a.done]
    if todo:
        lines.append("As a Slurm operator, run:")
        lines += [f"  {c}" for c in todo]
    return "\n".join(lines) + ("\n" if lines else "")
