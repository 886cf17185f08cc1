"""Rendering of an all-reduce report: the nccl-tests-like table, the rank table, the summary, the
plot. Nothing here runs anything."""
from __future__ import annotations

import io
import os
from typing import Any, Dict, List, Optional

from envcheck.allreduce.run import Report
from envcheck.allreduce.bandwidth import human_size
from envcheck.allreduce.linkrate import pct, percent
from envcheck.allreduce.pairs import PairVerdict, against, call_message
from envcheck.allreduce.verdict import judge_report
from envcheck.model import Outcome
from envcheck.render import fold_blocks, plural, summary_line
from envcheck.errors import UsageError
from envcheck.paths import write_output

_TYPE_NAMES = {"float32": "float", "float": "float", "float16": "half", "half": "half",
               "bfloat16": "bfloat16", "float64": "double", "double": "double",
               "int32": "int32", "int": "int32"}


def render_text(rep: Report, verdict=None, summarize: bool = True) -> str:
    """nccl-tests' `#` table and lines (parseable as nccl-tests' are), then the summary line
    (summarize=False: --pairs, whose pair table ends with its own)."""
    lines: List[str] = []
    where = f"{rep.master_addr}:{rep.master_port}" if rep.master_addr else "-"
    lines.append(f"# envcheck nccl-test: all_reduce sum, {rep.world_size} rank(s) on "
                 f"{len(rep.hosts)} host(s), backend {rep.backend or '-'}, MASTER {where}"
                 + (f", ifname {rep.ifname}" if rep.ifname else ""))
    for n in rep.notes:
        lines.append(f"# note: {n}")
    lines += nvlink_lines(rep)
    if rep.ranks:
        lines.append("#")
        lines.append(f"# {'rank':>5}  {'host':<20} {'local_rank':>10}  {'pid':>8}  device")
        for r in rep.ranks:
            lines.append(f"# {r['rank']:>5}  {r.get('node', r.get('host', '?')):<20} "
                         f"{r.get('local_rank', '?'):>10}  {r.get('pid', ''):>8}  "
                         f"{r.get('device', '?')}")
    if rep.rows:
        lines.append("#")
        lines.append(f"# {'size':>12} {'count':>13} {'type':>9} {'time':>10} {'algbw':>8} "
                     f"{'busbw':>8} {'#wrong':>7}")
        lines.append(f"# {'(B)':>12} {'(elements)':>13} {'':>9} {'(us)':>10} {'(GB/s)':>8} "
                     f"{'(GB/s)':>8} {'':>7}")
        for row in rep.rows:
            wrong = "N/A" if row.get("wrong") is None else str(row["wrong"])
            lines.append(f"  {row['bytes']:>12} {row['count']:>13} "
                         f"{_TYPE_NAMES.get(row['type'], row['type']):>9} "
                         f"{row['time_us']:>10.1f} {row['algbw']:>8.2f} {row['busbw']:>8.2f} "
                         f"{wrong:>7}")
        s = rep.summary
        lines.append("#")
        lines.append(f"# Bus bandwidth at the largest size ({human_size(s['largest_bytes'])}B): "
                     f"{s['busbw']:.3f} GB/s (algbw {s['algbw']:.3f} GB/s; nccl-tests' average "
                     f"over the sweep would say {s['avg_busbw']:.3f})")
        lines += allowed_lines(s)
        if rep.world_size == 1:
            lines.append("# One rank: nothing crosses a bus, busbw is 0 by definition; a single "
                         "GPU cannot show multi-GPU bandwidth.")
        lines.append(f"# Wrong elements: {s['wrong']}"
                     + ("  DATA CORRUPTION: the all-reduce returned wrong sums" if s["wrong"]
                        else " OK"))
    if rep.failure:
        f = rep.failure
        lines.append(f"# FAILED ({f.kind}): {f.message}")
        if f.suspects:
            lines.append(f"#   look at: {', '.join(f.suspects)}")
        if f.fix:
            lines.append(f"#   fix: {f.fix}")
        for e in rep.preflight_errors[1:]:
            lines.append(f"#   also: {e['message']}")
        for where, (status,) in fold_blocks((h, [st]) for h, st in rep.host_status.items()):
            lines.append(f"#   {where}: {status}")
        for host, log in rep.logs.items():
            if log.strip() and rep.host_status.get(host) != "ok":
                lines.append(f"# --- {host}: log tail ---")
                lines.extend(log.splitlines()[-20:])
    if summarize:
        lines.append("# " + summary(rep, verdict))
    return "\n".join(lines)


def nvlink_lines(rep: Report) -> List[str]:
    """Each node's NVLink figure (hosts with the same one on one line): what an intra-node
    all-reduce can reach."""
    texts = ((host, [f"{nv['gpus']}x {nv['gpu']}, NVLink {nv['generation']}, {nv['links']} of {nv['links_max']} "
                     f"links up: {nv['gbps']:g} GB/s per GPU and direction"]) for host, nv in rep.nvlinks.items() if nv)
    return [f"# nvlink: {where}: {text}" for where, (text,) in fold_blocks(texts)]


def allowed_lines(s: Dict[str, Any]) -> List[str]:
    """The summary's share of what the hardware allows, at the size it was measured, and where
    the sweep's busbw stops rising (small sizes measure latency, not the link)."""
    lines = []
    if s.get("percent_of_allowed") is not None:
        lines.append(f"# That is {pct(s['percent_of_allowed'])}% of the {s['allowed_gbps']:.3g} GB/s that "
                     f"{s['allowed_by']} allows one rank, at {human_size(s['largest_bytes'])}B")
    if s.get("still_rising"):
        lines.append(f"# busbw is still rising at {human_size(s['largest_bytes'])}B: the link allows more than this "
                     f"measures; raise --max-bytes to reach the plateau")
    elif s.get("plateau_bytes"):
        lines.append(f"# busbw is within 10% of its best from {human_size(s['plateau_bytes'])}B: smaller sizes "
                     f"measure latency more than the link")
    return lines


def summary(rep: Report, verdict=None) -> str:
    """`PASS: 2 hosts, 4 ranks: busbw 1.23 GB/s at 64 MiB, 0 wrong` (a `#` line, as nccl-tests' own)."""
    v = verdict or judge_report(rep)
    head = f"{plural(len(rep.hosts), 'host')}, {plural(rep.world_size, 'rank')}"
    return summary_line(v.outcome.verdict(), head, [], v.message)


def pairs_outcome(rep: Report, v: PairVerdict) -> Outcome:
    """nccl-test --pairs counted: a node or link the pairs fail is an error, one they only warn
    about a warning; rounds that could not run leave the fleet unknown."""
    return Outcome(sum(c.fails for c in v.calls), sum(not c.fails for c in v.calls), 0, 1 if rep.failure else 0)


def render_pairs(rep: Report, v: PairVerdict) -> str:
    """nccl-test --pairs: a line per pair and rail (its best try), the named ones marked, then
    what they were compared with and what the pairs name."""
    lines = ["#", "# Pairs: disjoint node pairs all-reducing at the same time, one group per rail (best of its tries)",
             f"# {'round':>5} {'rail':>4}  {'pair':<27} {'size':>6} {'time':>10} {'algbw':>8} {'busbw':>8} "
             f"{'%link':>6} {'#wrong':>6}",
             f"# {'':>5} {'':>4}  {'':<27} {'(B)':>6} {'(us)':>10} {'(GB/s)':>8} {'(GB/s)':>8} {'':>6} {'':>6}"]
    for f in sorted(v.best, key=lambda f: (f.round, f.rail, f.hosts)):
        calls = [c for c in v.calls if c.rail == f.rail and set(c.hosts) <= set(f.hosts)]
        pct = percent(f.figure, f.allowed)
        size, t, alg = (f.first_bytes, "stopped", f.first_busbw) if f.stopped else (f.bytes, f"{f.time_us:.1f}", f.algbw)
        mark = "  {} {}".format("FAIL" if any(c.fails for c in calls) else "WARN",
                                 ", ".join(c.hosts[0] if c.kind == "node" else "link" for c in calls)) if calls else ""
        lines.append(f"  {f.round:>5} {f.rail:>4}  {'-'.join(f.hosts):<27} {human_size(size):>6} {t:>10} "
                     f"{alg:>8.3f} {f.figure:>8.3f} {(f'{pct:.0f}%' if pct is not None else '-'):>6} {f.wrong:>6}{mark}")
    lines.append("#")
    lines.append(f"# Compared with {against(v)}" + ("" if v.calls else ": no node or link stands out"))
    lines += [f"# {'FAIL' if c.fails else 'WARN'} {call_message(c, v)}" for c in v.calls]
    head = f"{plural(len(rep.hosts), 'host')}, pair rounds"
    lines.append("# " + summary_line(pairs_outcome(rep, v).verdict(), head, [],
                                     rep.failure.message if rep.failure else ""))
    return "\n".join(lines)


def plot(rep: Report, path: str) -> None:
    """busbw against message size, log2 x axis. matplotlib is an optional extra."""
    mpl = require_matplotlib()
    mpl.use("Agg")
    # lazy: matplotlib.pyplot costs ~750 ms CPU (-X importtime), an optional extra for --plot only
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot([r["bytes"] for r in rep.rows], [r["busbw"] for r in rep.rows], marker="o")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_title(f"all_reduce, {rep.world_size} ranks on {len(rep.hosts)} host(s), "
                 f"{rep.backend}")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format=_format(path))
    plt.close(fig)
    # written like every report: a file replaced atomically, a device or FIFO in place
    write_output(path, buf.getvalue(), "--plot")


def _format(path: str) -> str:
    return os.path.splitext(path)[1].lstrip(".").lower() or "png"


def require_matplotlib(path: Optional[str] = None):
    """matplotlib, and that it can write the image format `path` names (before any run)."""
    try:
        import matplotlib  # lazy: ~750 ms CPU with pyplot, an optional extra for --plot only
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed",
                         "pip install 'envcheck[plot]' (or pip install matplotlib)") from None
    if path is not None:
        # lazy: matplotlib costs ~750 ms CPU at start-up (-X importtime, issue 26); only --plot needs it
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        known = FigureCanvasAgg(Figure()).get_supported_filetypes()
        if _format(path) not in known:
            raise UsageError(f"--plot {path}: matplotlib cannot write .{_format(path)} images",
                             f"name a file ending in one of .{', .'.join(sorted(known))}")
    return matplotlib
