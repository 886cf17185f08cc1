"""How install-cuda, install-cudnn, env and provision print what happened on each node, in the
one grammar (envcheck/render.py): identical outcomes once under the folded hostlist of their
hosts, then the summary line. 32 identical dry runs print as one."""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

from envcheck.install.common import NodeOutcome, outcome_of
from envcheck.render import fold_blocks, human_bytes, plural, summary_line

# outcome statuses, as painted: what went as planned, and what did not
STYLE = {"changed": "ok", "unchanged": "ok", "would-change": "ok", "refused": "error", "failed": "error",
         "unreachable": "error"}


def outcome_body(out: Any, indent: str = "  ", log_header: bool = True,
                 log_lines: Optional[int] = None) -> List[str]:
    """The lines under a host's status for one install/env/provision step outcome (NodeOutcome):
    what it did, problems, the error and the installer log's tail."""
    text: List[str] = []
    for line in out.lines:
        for i, part in enumerate(str(line).splitlines()):
            text.append((indent if i == 0 else indent + "  ") + part)
    text.extend(f"{indent}problem: {p}" for p in out.problems)
    if out.error:
        text.append(f"{indent}error: {out.error}")
    if out.log_tail:
        if log_header:
            text.append(f"{indent}installer log (tail):")
        tail = out.log_tail.splitlines()
        prefix = indent + ("  | " if log_header else "| ")
        text.extend(prefix + line for line in (tail[-log_lines:] if log_lines else tail))
    return text


def status_line(out: NodeOutcome, paint: Callable[[str, str], str] = lambda t, s: t) -> str:
    return paint(out.status, STYLE.get(out.status, "")) + (
        f" ({human_bytes(out.bytes_uploaded)} uploaded)" if out.bytes_uploaded else "")


def render_outcomes(outcomes: Sequence[NodeOutcome], paint: Callable[[str, str], str] = lambda t, s: t) -> List[str]:
    """Each distinct outcome once: `node[01-32]: would-change` and what it would do."""
    lines: List[str] = []
    for where, block in fold_blocks((o.host, [status_line(o, paint)] + outcome_body(o)) for o in outcomes):
        lines.append(f"{where}: {block[0]}")
        lines.extend(block[1:])
    return lines


def outcomes_summary(outcomes: Sequence[NodeOutcome], dry_run: bool = False,
                     paint: Optional[Callable[[str, str], str]] = None) -> str:
    """`PASS: 32 hosts: 32 would change (dry run)` / `FAIL: 4 hosts: 3 changed, 1 failed; 4.1 GB uploaded, 3 installers run`."""
    count = {s: sum(o.status == s for o in outcomes) for s in STYLE}
    parts: List[Tuple[int, str]] = [(count["changed"], "changed"), (count["would-change"], "would change"),
                                    (count["unchanged"], "already in place"), (count["refused"], "refused"),
                                    (count["failed"], "failed"), (count["unreachable"], "unreachable")]
    up, runs = sum(o.bytes_uploaded for o in outcomes), sum(o.installers_run for o in outcomes)
    tail = "; ".join(x for x in (f"{human_bytes(up)} uploaded" if up else "",
                                 f"{plural(runs, 'installer')} run" if runs else "", "dry run" if dry_run else "") if x)
    return summary_line(outcome_of(outcomes).verdict(), plural(len(outcomes), "host"), parts, tail, paint=paint)
