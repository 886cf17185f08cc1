"""Rendering of a fleet audit: per-host findings, the drift table, a summary. Text only."""
from __future__ import annotations

from typing import List, Sequence

from envcheck.model import ERROR, WARNING, Finding, skipped_summary

MAX_HOST_COLUMNS = 8  # beyond this the drift table shows the majority plus the odd hosts


def _table(rows: Sequence[Sequence[str]]) -> List[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]


def render_drift(audit, all_rows: bool = False) -> List[str]:
    """Rows: components; columns: hosts; `*` marks a value that is not the majority's.
    Only rows that differ, unless all_rows. With many hosts: a majority column and the odd hosts."""
    rows = [r for r in audit.drift if all_rows or r.differs]
    if not audit.drift:
        return []
    if not rows:
        n = len(audit.drift[0].values)
        return [f"No drift: {', '.join(r.label for r in audit.drift)} are the same on all {n} hosts."]
    hosts = list(audit.drift[0].values)
    many = len(hosts) > MAX_HOST_COLUMNS
    if many:
        odd_hosts = [h for h in hosts if any(h in r.odd for r in rows)]
        header = ["component", "majority"] + odd_hosts
    else:
        header = ["component"] + hosts
    out = [header]
    for r in rows:
        def cell(h: str) -> str:
            v = r.values[h]
            return f"{v} *" if h in r.odd else v
        if many:
            agree = sum(1 for v in r.values.values() if v == r.majority)
            maj = f"{r.majority} ({agree}/{len(hosts)})" if r.majority is not None else "(no majority)"
            out.append([r.label, maj] + [cell(h) if h in r.odd else "=" for h in odd_hosts])
        else:
            out.append([r.label] + [cell(h) for h in hosts])
    lines = ["Drift across hosts (* = differs from the majority):"] + ["  " + l for l in _table(out)]
    if many:
        lines.append("  (= : same as the majority)")
    return lines


def _finding_lines(f: Finding) -> List[str]:
    lines = [f"  {f.severity:<7} {f.component}: {f.message}"]
    if f.fix:
        lines.append(f"          fix: {f.fix}")
    return lines


def render_hosts(audit, show_warnings: bool = True) -> List[str]:
    lines: List[str] = []
    for r in audit.results:
        if not r.reachable:
            lines.append(f"{r.host}: NOT AUDITED — {r.error}")
            continue
        shown = [f for f in r.findings if f.severity == ERROR or (show_warnings and f.severity == WARNING)]
        errs = sum(1 for f in r.findings if f.severity == ERROR)
        warns = sum(1 for f in r.findings if f.severity == WARNING)
        status = "ok" if not errs and not warns else f"{errs} error(s), {warns} warning(s)"
        if r.skipped:
            # "ok" would claim more than was looked at
            status = (f"{errs} error(s), {warns} warning(s), " if errs or warns else "0 errors, ") + \
                skipped_summary(r.skipped, limit=2)
        lines.append(f"{r.host}: {status}")
        for f in shown:
            lines.extend(_finding_lines(f))
    if audit.fleet:
        lines.append("fleet:")
        for f in audit.fleet:
            lines.extend(_finding_lines(f))
    return lines


def render_summary(audit) -> str:
    n = len(audit.results)
    bad = len(audit.unreachable)
    with_err = sum(1 for r in audit.results if r.reachable and any(f.severity == ERROR for f in r.findings))
    clean = n - bad - with_err
    parts = [f"{n} host(s): {clean} without errors"]
    if with_err:
        parts.append(f"{with_err} with errors")
    if bad:
        parts.append(f"{bad} not audited")
    if audit.fleet:
        parts.append(f"{len(audit.fleet)} fleet finding(s)")
    return ", ".join(parts)


def render(audit, all_rows: bool = False) -> str:
    blocks = [render_hosts(audit), render_drift(audit, all_rows), [render_summary(audit)]]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"
