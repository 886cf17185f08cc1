"""Rendering of a fleet audit (several hosts), text only, built to be read at a glance on five
hosts or five hundred — the way `pdsh … | dshbak -c` and `clush -b` group identical output:

- a table with one row per distinct stack (driver, GPUs, CUDA, cuDNN, torch, NCCL, Python and
  the host's status), identical rows grouped under a compressed hostlist (`node[001-480]`), a
  value that is not the fleet's majority marked with `*`;
- each finding once, with the hostlist of the hosts that have it (the host's own name in the
  message stands for all of them), errors first;
- the hosts that could not be audited, grouped by reason (`node[07,19]: connection refused`);
- a summary line.

`full=True` gives one row per host instead (the CLI prints every host's facts table before it).
Grouping is a rendering choice only: the JSON (to_json below) keeps every
host's facts and findings. Nothing here decides anything; colour is on only when asked.
"""
from __future__ import annotations

import re
import textwrap
from collections import Counter
from typing import Dict, List, Optional, Sequence, Tuple

from envcheck.facts import schema as F
from envcheck.hostlist import compress_hostlist
from envcheck.model import ERROR, INFO, WARNING, Finding, HostResult, skipped_summary, sort_findings
from envcheck.render import HOSTS_HERE, host_names, plural, stand_in as _stand_in, summary_line
from envcheck.report import audit_json, paint, pci_gpus_summary, severity_label
from envcheck.rules.fleet import CHECKS, MISSING

_ADDR = re.compile(r"\[?\b(?:\d{1,3}\.){3}\d{1,3}\b\]?|\[[0-9A-Fa-f:.%]+\]")
_GET = {c.key: c.get for c in CHECKS}

# table column -> the cross-node checks (envcheck/rules/fleet.py) whose odd hosts it marks
COLUMNS: Tuple[Tuple[str, Tuple[str, ...]], ...] = (
    ("DRIVER", ("driver",)), ("GPUS", ("gpu_model", "gpu_count")), ("CUDA", ("cuda",)),
    ("CUDNN", ("cudnn",)), ("TORCH", ("torch",)), ("NCCL", ("nccl",)), ("PYTHON", ("python",)),
)


def _gpus(f: Dict) -> str:
    """`8 x A100-SXM4-80GB`: the count and the model, without the vendor's prefix. A node whose
    driver lists none but whose PCI bus holds NVIDIA GPUs (cards in, driver not installed yet)
    shows those: `none (PCI: 2 x NVIDIA H100 SXM5 80GB (GH100, sm_90))`."""
    names = Counter(re.sub(r"^(NVIDIA|Tesla)\s+", "", g.get("name") or "?") for g in F.gpus(f))
    listed = ", ".join(f"{n} x {name}" for name, n in sorted(names.items()))
    on_bus = None if listed else pci_gpus_summary(f)
    if on_bus:
        return f"none (PCI: {on_bus})"
    if not F.gpus_reported(f):
        return MISSING
    return listed or "none"


def _cells(f: Dict) -> List[str]:
    values = {"GPUS": _gpus(f)}
    for col, keys in COLUMNS:
        if col not in values:
            values[col] = _GET[keys[0]](f) or MISSING
    return [values[col] for col, _ in COLUMNS]


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def host_status(r: HostResult) -> str:
    errs = sum(1 for f in r.findings if f.severity == ERROR)
    warns = sum(1 for f in r.findings if f.severity == WARNING)
    parts = ([_count(errs, "error")] if errs else []) + ([_count(warns, "warning")] if warns else [])
    if r.skipped:  # "ok" would claim more than was looked at
        return ", ".join(parts or ["0 errors"]) + ", " + skipped_summary(r.skipped, limit=2)
    return ", ".join(parts) or "ok"


def stack_rows(audit, full: bool = False) -> List[Tuple[List[str], List[str], List[bool]]]:
    """(hosts, cells, odd per cell) per distinct stack and status, the largest group first; with
    full, one row per host in the order given. Hosts that were not audited have no row."""
    odd_hosts = {row.key: set(row.odd) for row in audit.drift}
    groups: Dict[Tuple, Tuple[List[str], List[bool], List[str]]] = {}
    for r in audit.results:
        if not r.reachable:
            continue
        cells = _cells(r.facts or {}) + [host_status(r)]
        odd = [any(r.host in odd_hosts.get(k, ()) for k in keys) for _, keys in COLUMNS] + [False]
        key = (r.host,) if full else (tuple(cells), tuple(odd))
        groups.setdefault(key, (cells, odd, []))[2].append(r.host)
    rows = [(hosts, cells, odd) for cells, odd, hosts in groups.values()]
    if not full:
        rows.sort(key=lambda row: -len(row[0]))  # stable: equal sizes keep the hosts' order
    return rows


def render_table(audit, full: bool = False, color: bool = False) -> List[str]:
    rows = stack_rows(audit, full)
    if not rows:
        return []
    header = ["HOSTS"] + [c for c, _ in COLUMNS] + ["STATUS"]
    body = [[compress_hostlist(h) if not full else h[0]] + [v + (" *" if o else "") for v, o in zip(c, odd)]
            for h, c, odd in rows]
    widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
    out = ["  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip()]
    for (hosts, cells, odd), texts in zip(rows, body):
        line = []
        for i, (text, w) in enumerate(zip(texts, widths)):
            pad = text.ljust(w) if i < len(texts) - 1 else text
            if i and odd[i - 1]:
                pad = paint(pad, "odd", color)
            elif i == len(texts) - 1:
                pad = paint(pad, ERROR if "error" in text else WARNING if "warning" in text else "ok", color)
            line.append(pad)
        out.append("  ".join(line))
    if any(any(odd) for _, _, odd in rows):
        out.append("(* differs from the majority of the audited hosts)")
    return out


def _host_names(r: HostResult) -> List[str]:
    """The names a host's findings call it: as given, and as it calls itself."""
    return host_names(r.host, str((r.facts or {}).get("hostname") or ""))


def group_findings(audit, severities=(ERROR, WARNING)) -> List[Tuple[Finding, List[str]]]:
    """Each distinct finding once with the hosts that have it, in severity order. Two findings
    are the same when code, component, severity, message and fix agree once each host's own name
    is replaced by HOSTS_HERE (in the returned Finding too). Findings about the fleet as a whole
    come with no hosts."""
    seen: Dict[Tuple, Tuple[Finding, List[str]]] = {}
    for r in audit.results:
        names = _host_names(r)
        for f in r.findings:
            if f.severity not in severities:
                continue
            g = Finding(f.severity, f.code, f.component, _stand_in(f.message, names),
                        _stand_in(f.fix, names), f.source)
            seen.setdefault((g.severity, g.code, g.component, g.message, g.fix), (g, []))[1].append(r.host)
    out = list(seen.values()) + [(f, []) for f in audit.fleet if f.severity in severities]
    order = {id(f): i for i, f in enumerate(sort_findings([f for f, _ in out]))}
    return sorted(out, key=lambda item: order[id(item[0])])


def render_findings(audit, width: int = 100, color: bool = False) -> List[str]:
    lines: List[str] = []
    for f, hosts in group_findings(audit):
        where = compress_hostlist(hosts) if hosts else "fleet"
        head = f"{paint(severity_label(f.severity), f.severity, color)} {where}:"
        body = f"{f.component}: {f.message.replace(HOSTS_HERE, where)} [{f.code}]"
        if len(where) + 10 > width // 2:  # a long hostlist gets a line of its own
            lines.append(head)
            head, first = "", " " * 8
        else:
            first = " " * (len(where) + 10)
        wrapped = textwrap.wrap(body, width, initial_indent=first, subsequent_indent=" " * 8,
                                break_on_hyphens=False, break_long_words=False)
        lines.append((head + " " + wrapped[0].lstrip()) if head else wrapped[0])
        lines.extend(wrapped[1:])
        if f.fix:   # one line: a command broken across lines cannot be copied whole
            lines.append(" " * 8 + "fix: " + f.fix.replace(HOSTS_HERE, where))
    return lines


def group_unreachable(audit) -> List[Tuple[str, List[str]]]:
    """(reason, hosts) for the hosts that could not be audited; reasons that differ only in the
    host's name or address are one reason (shown as `…`)."""
    groups: Dict[str, Tuple[str, List[str]]] = {}
    for r in audit.unreachable:
        key = _ADDR.sub("…", _stand_in(r.error or "", _host_names(r)))
        groups.setdefault(key, (r.error or "", []))[1].append(r.host)
    return [(first if len(hosts) == 1 else key, hosts) for key, (first, hosts) in groups.items()]


def render_unreachable(audit, color: bool = False) -> List[str]:
    groups = group_unreachable(audit)
    if not groups:
        return []
    lines = [paint(f"Not audited ({len(audit.unreachable)}):", ERROR, color)]
    for reason, hosts in groups:
        where = compress_hostlist(hosts)
        lines.append(f"  {where}: {reason.replace(HOSTS_HERE, where)}")
    return lines


def render_summary(audit, full: bool = False, strict: bool = False, color: bool = False) -> str:
    """`FAIL: 32 hosts: 28 without errors, 2 with errors, 2 not audited; 1 fleet finding`."""
    n = len(audit.results)
    bad = len(audit.unreachable)
    with_err = sum(1 for r in audit.results if r.reachable and any(f.severity == ERROR for f in r.findings))
    notes = sum(1 for r in audit.results for f in r.findings if f.severity == INFO)
    tail = "; ".join(x for x in (plural(len(audit.fleet), "fleet finding") if audit.fleet else "",
                                 f"{plural(notes, 'note')} not shown (--full)" if notes and not full else "") if x)
    return summary_line(audit.outcome().verdict(strict), plural(n, "host"),
                        [(n - bad - with_err, "without errors"), (with_err, "with errors"), (bad, "not audited")],
                        tail, paint=lambda t, st: paint(t, st, color))


def render_one_summary(audit, strict: bool = False, color: bool = False) -> str:
    """One host's summary line: `WARN: node01: 0 errors, 1 warning, 2 notes; 3 checks skipped (…)`."""
    r = audit.results[0]
    fs = audit.all_findings
    counts = [plural(sum(f.severity == s for f in fs), w) for s, w in ((ERROR, "error"), (WARNING, "warning"), (INFO, "note"))]
    head = f"{r.host}: not audited" if not r.reachable else f"{r.host}: {', '.join(counts)}"
    return summary_line(audit.outcome().verdict(strict), head, [], skipped_summary(r.skipped),
                        paint=lambda t, st: paint(t, st, color))


def render(audit, full: bool = False, color: bool = False, width: Optional[int] = None, strict: bool = False) -> str:
    """The fleet report: table, findings, hosts not audited, summary (module docstring)."""
    findings = [] if full else render_findings(audit, width or 100, color)
    if full and audit.fleet:  # every host's findings are in its facts block; these are not
        findings = render_findings(type(audit)(results=[], fleet=audit.fleet), width or 100, color)
    blocks = [render_table(audit, full, color), findings, render_unreachable(audit, color),
              [render_summary(audit, full, strict, color)]]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def to_json(audit) -> Dict:
    """The audit JSON document of envcheck/report.py, plus the drift table."""
    doc = audit_json(audit.results, audit.fleet)
    doc["drift"] = [{"component": row.key, "label": row.label, "values": row.values,
                     "majority": row.majority, "odd": row.odd} for row in audit.drift]
    return doc
