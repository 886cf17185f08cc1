"""Rendering of a launch report: the header, the per-rank table, the failure with its log tail.
Nothing here runs anything."""
from __future__ import annotations

import datetime
from typing import List, Optional

from envcheck.launch.run import Report
from envcheck.model import FAIL, PASS, UNKNOWN
from envcheck.render import plural, summary_line


def _clock(t: Optional[float]) -> str:
    if t is None:
        return "-"
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).strftime("%H:%M:%S.%f")[:-3]


def render_text(rep: Report) -> str:
    lines: List[str] = []
    where = f"{rep.master_addr}:{rep.master_port}" if rep.master_addr else "-"
    lines.append(f"# envcheck launch: {rep.script} {' '.join(rep.args)}".rstrip()
                 + f", {rep.world_size} rank(s) on {len(rep.hosts)} host(s), MASTER {where}"
                 + (f", ifname {rep.ifname}" if rep.ifname else ""))
    if rep.interpreter:
        lines.append(f"# interpreter: {rep.interpreter} ({rep.interpreter_why}); torch "
                     + ", ".join(sorted(set(v for v in rep.torch.values() if v))))
    for n in rep.notes:
        lines.append(f"# note: {n}")
    for a in rep.audit_errors:
        lines.append(f"# audit error on {a['host']}: {a['message']}"
                     + (f" (fix: {a['fix']})" if a.get("fix") else ""))
    if rep.ranks:
        lines.append(f"# {'rank':>5}  {'host':<20} {'local':>5}  {'pid':>8}  {'start':>12}  "
                     f"{'end':>12}  status")
        for r in rep.ranks:
            lines.append(f"# {r['rank']:>5}  {r['host']:<20} {r['local_rank']:>5}  "
                         f"{r['pid'] or '':>8}  {_clock(r['start']):>12}  {_clock(r['end']):>12}  "
                         f"{r['status']}" + (" (stopped)" if r["stopped"] and r["exit_code"] else ""))
    if rep.log_dir:
        lines.append(f"# logs: {rep.log_dir}")
    f = rep.failure
    if f:
        lines.append(f"# FAILED: {f.message}" + (f" (fix: {f.fix})" if f.fix else ""))
        for e in rep.preflight_errors[1:]:
            lines.append(f"#   also: {e['message']}")
        tail = f.log_tail or []
        if tail:
            who = f"rank {f.rank} on {f.host}" if f.rank is not None else f.host
            lines.append(f"# last lines of {who}:")
            lines.extend(f"#   {x}" for x in tail)
    head = f"{plural(len(rep.hosts), 'host')}, {plural(rep.world_size, 'rank')}"
    word = {0: PASS, 1: FAIL}.get(rep.exit_code, UNKNOWN)   # 3, and 130 (interrupted): not finished
    lines.append("# " + summary_line(word, head, [], "all exited 0" if not f else f"{f.message} (exit {rep.exit_code})"))
    return "\n".join(lines)
