"""Rendering of an all-reduce report: the nccl-tests-like table, the rank table, the summary, the
plot. Nothing here runs anything."""
from __future__ import annotations

from typing import List

from envcheck.allreduce.run import Report
from envcheck.allreduce.bandwidth import human_size
from envcheck.allreduce.verdict import judge_report
from envcheck.render import fold_blocks, plural, summary_line
from envcheck.errors import UsageError

_TYPE_NAMES = {"float32": "float", "float": "float", "float16": "half", "half": "half",
               "bfloat16": "bfloat16", "float64": "double", "double": "double",
               "int32": "int32", "int": "int32"}


def render_text(rep: Report, verdict=None) -> str:
    """nccl-tests' `#` table and lines (parseable as nccl-tests' are), then the summary line."""
    lines: List[str] = []
    where = f"{rep.master_addr}:{rep.master_port}" if rep.master_addr else "-"
    lines.append(f"# envcheck nccl-test: all_reduce sum, {rep.world_size} rank(s) on "
                 f"{len(rep.hosts)} host(s), backend {rep.backend or '-'}, MASTER {where}"
                 + (f", ifname {rep.ifname}" if rep.ifname else ""))
    for n in rep.notes:
        lines.append(f"# note: {n}")
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
        if rep.world_size == 1:
            lines.append("# One rank: nothing crosses a bus, busbw is 0 by definition; a single "
                         "GPU cannot show multi-GPU bandwidth.")
        lines.append(f"# Wrong elements: {s['wrong']}"
                     + ("  DATA CORRUPTION: the all-reduce returned wrong sums" if s["wrong"]
                        else " OK"))
    if rep.failure:
        f = rep.failure
        lines.append(f"# FAILED ({f['kind']}): {f['message']}")
        if f.get("suspects"):
            lines.append(f"#   look at: {', '.join(f['suspects'])}")
        if f.get("fix"):
            lines.append(f"#   fix: {f['fix']}")
        for e in rep.preflight_errors[1:]:
            lines.append(f"#   also: {e['message']}")
        for where, (status,) in fold_blocks((h, [st]) for h, st in rep.host_status.items()):
            lines.append(f"#   {where}: {status}")
        for host, log in rep.logs.items():
            if log.strip() and rep.host_status.get(host) != "ok":
                lines.append(f"# --- {host}: log tail ---")
                lines.extend(log.splitlines()[-20:])
    lines.append("# " + summary(rep, verdict))
    return "\n".join(lines)


def summary(rep: Report, verdict=None) -> str:
    """`PASS: 2 hosts, 4 ranks: busbw 1.23 GB/s at 64 MiB, 0 wrong` (a `#` line, as nccl-tests' own)."""
    v = verdict or judge_report(rep)
    head = f"{plural(len(rep.hosts), 'host')}, {plural(rep.world_size, 'rank')}"
    return summary_line(v.outcome.verdict(), head, [], v.message)


def plot(rep: Report, path: str) -> None:
    """busbw against message size, log2 x axis. matplotlib is an optional extra."""
    mpl = require_matplotlib()
    mpl.use("Agg")
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
    fig.savefig(path)
    plt.close(fig)


def require_matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise UsageError("--plot needs matplotlib, which is not installed",
                         "pip install 'envcheck[plot]' (or pip install matplotlib)") from None
    return matplotlib
