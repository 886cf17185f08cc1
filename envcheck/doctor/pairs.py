"""The pair rounds' verdict (envcheck/allreduce/pairs.py) in the doctor's terms: one `pairs`
check per host with its figures and what they were compared with, the gauges dashboards graph
(each pair's busbw and the median), and the hosts named. Pure."""
from __future__ import annotations

from typing import List, Sequence

from envcheck.allreduce.bandwidth import human_size
from envcheck.allreduce.pairs import Call, PairVerdict, against, call_message, with_peers
from envcheck.doctor.health import FAIL, PASS, WARN, CheckResult, Measurement

FIX_NODE = ("look at this node's NIC and cable (`ip -s link`, `ethtool -S`, `ibstat`, port errors on its switch); "
            "run `envcheck nccl-test --pairs` again after a fix")
FIX_LINK = "look at the path between the two nodes (switch ports, cables, routing); run `envcheck nccl-test --pairs`"


def named(v: PairVerdict) -> List[str]:
    """The hosts the pairs name, a node before the ends of a link."""
    out: List[str] = []
    for c in sorted(v.calls, key=lambda c: c.kind != "node"):
        out += [h for h in c.hosts if h not in out]
    return out


def pair_checks(hosts: Sequence[str], v: PairVerdict) -> List[CheckResult]:
    out = []
    for h in hosts:
        mine: List[Call] = [c for c in v.calls if h in c.hosts]
        figs = v.of(h)
        if not figs:
            continue
        if mine:
            worst = next((c for c in mine if c.fails), mine[0])
            out.append(CheckResult(h, "pairs", FAIL if worst.fails else WARN,
                                   "; ".join(call_message(c, v) for c in mine),
                                   fix=FIX_NODE if worst.kind == "node" else FIX_LINK))
        else:
            out.append(CheckResult(h, "pairs", PASS, f"{with_peers(h, figs)}, against {against(v, figs)}"))
    return out


def pair_measurements(v: PairVerdict) -> List[Measurement]:
    out = [Measurement("allreduce_pair_median_busbw_gbps", v.median, {"pairs": str(v.pairs)},
                       "Median bus bandwidth of the node pairs all-reducing at the same time, GB/s.")]
    for f in v.best:
        a, b = f.hosts
        out.append(Measurement("allreduce_pair_busbw_gbps", f.figure, {"host": a, "peer": b, "rail": str(f.rail)},
                               "Bus bandwidth of one node pair (one rail), best of its tries, GB/s "
                               "(nccl-tests definition)."))
    return out


def pair_notes(v: PairVerdict) -> List[str]:
    notes = []
    if v.latency_bound:
        size = human_size(max(f.bytes for f in v.best))
        notes.append(f"pairs: {v.latency_bound} of {len(v.best)} pair(s) took less than 10x their 8-byte latency at "
                     f"{size}B: the figures measure latency more than the link (raise --max-bytes)")
    if v.retried:
        notes.append(f"pairs: a pair was slow at the first try: its round ran again ({v.retried} pair(s) measured "
                     "twice); each pair counts with its best try")
    return notes
