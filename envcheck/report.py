"""Rendering only: findings (and, from the probe side, facts) as text for people."""
from __future__ import annotations

import shutil
import textwrap
from typing import Iterable, List

from envcheck.model import ERROR, INFO, WARNING, Finding


def render_findings(findings: Iterable[Finding], width: int = 0) -> str:
    """A short table: severity, component, message, and the fix under it; then a count line."""
    items: List[Finding] = list(findings)
    width = width or max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
    if not items:
        return "No findings: nothing in this stack is known to break.\n"
    lines = [f"{'SEVERITY':<8} {'COMPONENT':<11} MESSAGE"]
    indent = " " * 21
    for f in items:
        head = f"{f.severity:<8} {f.component:<11} "
        body = f"{f.message} [{f.code}]" + (f" ({f.host})" if f.host else "")
        lines.extend(textwrap.wrap(body, width, initial_indent=head, subsequent_indent=indent))
        if f.fix:
            lines.extend(textwrap.wrap(f.fix, width, initial_indent=indent + "fix: ",
                                       subsequent_indent=indent + "     ", break_on_hyphens=False))
    n = {s: sum(1 for f in items if f.severity == s) for s in (ERROR, WARNING, INFO)}
    lines.append("")
    lines.append(f"{n[ERROR]} error(s), {n[WARNING]} warning(s), {n[INFO]} note(s)")
    return "\n".join(lines) + "\n"
