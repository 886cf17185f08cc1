"""Pairwise all-reduce: which node or link is slow, judged against the fleet, no number given.

Rounds of disjoint node pairs all-reduce at the same time (one group per rail: the same local
rank, i.e. GPU index, on both nodes), like nccl-tests' NCCL_TESTS_SPLIT and the pairwise and
rail-aligned tests of Azure's and imbue's health checks. Every pair's bus bandwidth is compared
with the median of all pairs: a node whose pairs (with two different partners) are all slow is
the slow node; a slow pair between two nodes that are fine elsewhere is a link. A first
measurement finds the pairs far below the median; one retry of every round that holds a slow pair
stands between a slow figure and a verdict (noise only ever slows a run down, so a pair counts
with its best try). Both happen inside the one run (the worker decides from the figures every
rank holds), so naming a slow link costs seconds, not another launch.

The rounds: the ring 0-1-2-...-(n-1)-0 cut into matchings, so every node meets its two ring
neighbours; two rounds for an even n, three for an odd one — the same few rounds for 8 nodes or
800, each bounded by the worker (envcheck/node/allreduce_pairs.py). Pure: reports in, verdicts
out; the launch itself is envcheck/allreduce/run.py's (Options.pairs).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce.linkrate import of_run, pct, percent

SLOW = 0.5       # a pair below half the median is slow ...
FAR = 0.25       # ... and below a quarter of it far too slow to be noise (FAIL, not WARN)
STOP = 4.0       # the worker stops a pair whose first measurement is this much slower than the median
BUDGET = 1.0     # seconds of timed all-reduces per round
ITERS = 20       # at most this many timed all-reduces per round
LATENCY_BOUND = 10.0   # a time within 10x of the 8-byte latency measures latency, not the link

FAR_BELOW, SLOW_BUT_CLOSE, CORRUPT, BELOW_MIN = "far-below", "slow-but-close", "corrupt", "below-min-busbw"


@dataclass
class PairSpec:
    bytes: int
    first_bytes: int
    budget: float = BUDGET
    iters: int = ITERS
    stop: float = STOP
    retry: float = 1 / SLOW     # a round with a pair this much slower than the median runs again


def pair_spec(nbytes: int, budget: float = BUDGET, iters: int = ITERS) -> PairSpec:
    """The short first measurement is 1/16 of the size (64 KiB at least): through a link 20x
    slower than the rest it costs 1/16 of a full-size all-reduce."""
    return PairSpec(nbytes, min(nbytes, max(64 << 10, nbytes // 16)), budget, iters)


def schedule(n: int) -> List[List[Tuple[int, int]]]:
    """Rounds of disjoint host pairs (host indices); none under three hosts (one pair has
    nothing to be compared with)."""
    if n < 3:
        return []
    ring = [(i, (i + 1) % n) for i in range(n)]
    if n % 2 == 0:
        return [ring[0::2], ring[1::2]]
    return [ring[0:n - 1:2], ring[1:n - 1:2], [ring[n - 1]]]


def rank_groups(rounds: Sequence[Sequence[Tuple[int, int]]], nprocs: Sequence[int]) -> List[List[List[int]]]:
    """The rounds in global ranks: a group per pair and rail (local rank k on both hosts)."""
    bases = [sum(nprocs[:i]) for i in range(len(nprocs))]
    return [[[bases[a] + k, bases[b] + k] for a, b in rnd for k in range(min(nprocs[a], nprocs[b]))]
            for rnd in rounds]


def spec_doc(spec: PairSpec, nprocs: Sequence[int]) -> Dict[str, Any]:
    """What the worker reads (envcheck/node/allreduce_pairs.py)."""
    return {"rounds": rank_groups(schedule(len(nprocs)), nprocs), "bytes": spec.bytes,
            "first_bytes": spec.first_bytes, "budget": spec.budget, "iters": spec.iters, "stop": spec.stop,
            "retry": spec.retry}


@dataclass
class PairFigure:
    hosts: Tuple[str, str]
    rail: int
    round: int
    attempt: int
    bytes: int
    time_us: float
    busbw: float                 # GB/s at `bytes` (nccl-tests' busbw; for a pair, = algbw)
    algbw: float
    first_bytes: int
    first_busbw: float           # the short first measurement
    lat_us: float                # one 8-byte all-reduce: the latency the figure carries
    iters: int
    stopped: bool                # far below the median at the first measurement: not timed further
    wrong: int
    allowed: Optional[float] = None   # GB/s per rank the slower end's link allows
    ratio: float = 1.0           # against the median of its attempt (at the first size if stopped)

    @property
    def key(self) -> Tuple[Tuple[str, str], int]:
        return tuple(sorted(self.hosts)), self.rail

    @property
    def figure(self) -> float:
        return self.first_busbw if self.stopped else self.busbw

    @property
    def latency_bound(self) -> bool:
        return 0 < self.time_us < LATENCY_BOUND * self.lat_us

    def peer(self, host: str) -> str:
        return self.hosts[1] if self.hosts[0] == host else self.hosts[0]

    def to_dict(self) -> Dict[str, Any]:
        d = asdict(self)
        d["hosts"] = list(self.hosts)
        d["percent_of_link"] = percent(self.figure, self.allowed)
        return d


def upper_median(values: Sequence[float]) -> float:
    """The upper median: one slow node slows two of a ring's n pairs, so for n >= 4 this is
    still a healthy pair's figure."""
    v = sorted(values)
    return v[len(v) // 2] if v else 0.0


def figures_of(rep: Any) -> List[PairFigure]:
    """The pair records of one run (allreduce.run.Report), as figures with their ratio."""
    host_of = {r["rank"]: r.get("node", r.get("host")) for r in rep.ranks}
    local = {r["rank"]: int(r.get("local_rank", 0)) for r in rep.ranks}
    out = []
    for rec in rep.pairs:
        ranks = rec["ranks"]
        if any(k not in host_of for k in ranks):
            continue
        hosts = tuple(host_of[k] for k in ranks)
        t, t1 = float(rec["time_us"]) / 1e6, float(rec["first_us"]) / 1e6
        allowed = of_run(rep.links or {}, rep.ranks, hosts)
        out.append(PairFigure(
            hosts, local[ranks[0]], int(rec["round"]), int(rec.get("attempt", 0)), int(rec["bytes"]), float(rec["time_us"]),
            am.busbw(int(rec["bytes"]), t, len(ranks)), am.algbw(int(rec["bytes"]), t),
            int(rec["first_bytes"]), am.busbw(int(rec["first_bytes"]), t1, len(ranks)), float(rec["lat_us"]),
            int(rec["iters"]), bool(rec["stopped"]), int(rec["wrong"]), allowed))
    return out


def medians(figs: Sequence[PairFigure], assign: Sequence[PairFigure]) -> float:
    """Set the ratio of every figure in `assign` against the median of `figs` (at the first
    size for one stopped there); returns the median busbw."""
    m = upper_median([f.busbw for f in figs if not f.stopped])
    m1 = upper_median([f.first_busbw for f in figs])
    for f in assign:
        ref = m1 if f.stopped else m
        f.ratio = f.figure / ref if ref > 0 else 1.0
    return m


@dataclass
class Call:
    """A node or a link the pairs name."""
    kind: str                    # "node" | "link"
    hosts: List[str]
    rail: int
    why: str                     # FAR_BELOW | SLOW_BUT_CLOSE | CORRUPT | BELOW_MIN
    figures: List[PairFigure]    # its pairs, best attempt each

    @property
    def fails(self) -> bool:
        return self.why != SLOW_BUT_CLOSE

    def to_dict(self) -> Dict[str, Any]:
        return {"kind": self.kind, "hosts": list(self.hosts), "rail": self.rail, "why": self.why,
                "fails": self.fails, "pairs": [f.to_dict() for f in self.figures]}


@dataclass
class PairVerdict:
    figures: List[PairFigure] = field(default_factory=list)   # every try
    best: List[PairFigure] = field(default_factory=list)      # one per pair and rail: its best try
    median: float = 0.0          # GB/s, of the pairs' first tries
    pairs: int = 0
    retried: int = 0             # pairs measured twice (their round held a slow pair)
    calls: List[Call] = field(default_factory=list)
    latency_bound: int = 0       # pairs whose time is within 10x of their latency

    def of(self, host: str) -> List[PairFigure]:
        return [f for f in self.best if host in f.hosts]

    def to_dict(self) -> Dict[str, Any]:
        return {"median_busbw": self.median, "pairs": self.pairs, "retried": self.retried,
                "latency_bound": self.latency_bound, "calls": [c.to_dict() for c in self.calls],
                "figures": [f.to_dict() for f in self.best]}


def judge(figures: Sequence[PairFigure], min_busbw: Optional[float] = None) -> PairVerdict:
    """Name the slow (or corrupting) nodes and links. A first try is compared with the median of
    all first tries; a retry with the median of every pair's latest try."""
    v = PairVerdict(figures=list(figures))
    by_key: Dict[Any, List[PairFigure]] = {}
    for f in sorted(figures, key=lambda f: f.attempt):
        by_key.setdefault(f.key, []).append(f)
    if not by_key:
        return v
    first = [fs[0] for fs in by_key.values()]
    v.median, v.pairs = medians(first, first), len(first)
    again = [fs[-1] for fs in by_key.values() if len(fs) > 1]
    medians([fs[-1] for fs in by_key.values()], again)
    v.retried = len(again)
    best = {k: max(fs, key=lambda f: f.ratio) for k, fs in by_key.items()}
    v.best = list(best.values())
    v.latency_bound = sum(1 for f in v.best if f.latency_bound and not f.stopped)
    corrupt = {k for k, fs in by_key.items() if any(f.wrong for f in fs)}
    slow = {k for k, f in best.items() if f.ratio < SLOW or (min_busbw is not None and f.figure < min_busbw)}
    v.calls = _calls(best, corrupt, lambda fs: CORRUPT) + _calls(best, slow - corrupt, lambda fs: _why(fs, min_busbw))
    return v


def _why(figs: List[PairFigure], min_busbw: Optional[float]) -> str:
    if any(f.ratio < SLOW for f in figs):
        return FAR_BELOW if max(f.ratio for f in figs) < FAR else SLOW_BUT_CLOSE
    return BELOW_MIN if min_busbw is not None else SLOW_BUT_CLOSE


def _calls(best: Dict[Any, PairFigure], bad: set, why) -> List[Call]:
    """Nodes all of whose pairs (two partners at least) are bad; then the bad pairs neither of
    whose ends is such a node: links."""
    mine: Dict[Tuple[str, int], List[Any]] = {}
    for (hosts, rail) in best:
        for h in hosts:
            mine.setdefault((h, rail), []).append((hosts, rail))
    nodes = [(h, rail) for (h, rail), keys in mine.items() if len(keys) >= 2 and all(k in bad for k in keys)]
    calls = [Call("node", [h], rail, why([best[k] for k in mine[(h, rail)]]), [best[k] for k in mine[(h, rail)]])
             for h, rail in nodes]
    for k in sorted(bad):
        hosts, rail = k
        if not any((h, rail) in nodes for h in hosts):
            calls.append(Call("link", list(hosts), rail, why([best[k]]), [best[k]]))
    return calls


# ---------------------------------------------------------------- wording (doctor and nccl-test)
def _gb(x: float) -> str:
    return f"{x:.3g} GB/s"


def with_peers(host: str, figs: Sequence[PairFigure]) -> str:
    """'0.0049 GB/s with node04, 0.0051 GB/s with node06 (stopped at the first measurement)'"""
    return ", ".join(f"{_gb(f.figure)} with {f.peer(host)}" + (" (stopped early)" if f.stopped else "")
                     + (f" ({f.wrong} wrong)" if f.wrong else "") for f in figs)


def against(v: PairVerdict, figs: Sequence[PairFigure] = ()) -> str:
    """What a figure was compared with: the median, the tries, the link."""
    text = f"the median {_gb(v.median)} of {v.pairs} pairs"
    if any(f.attempt for f in v.figures if f.key in {g.key for g in figs}):
        text += ", best of 2 tries"
    allowed = [f for f in figs if f.allowed]
    if allowed:
        f = max(allowed, key=lambda x: x.figure)
        text += f"; {pct(percent(f.figure, f.allowed))}% of the {_gb(f.allowed)} the link allows"
    return text


def call_message(c: Call, v: PairVerdict) -> str:
    rail = f" (rail {c.rail})" if any(f.rail for f in v.best) else ""
    if c.kind == "node":
        h = c.hosts[0]
        what = {CORRUPT: "data corruption in every pair with this node",
                FAR_BELOW: "slow node: every pair with it is far below the median",
                SLOW_BUT_CLOSE: "slow but close: every pair with it is below half the median",
                BELOW_MIN: "every pair with this node is below --min-busbw"}[c.why]
        return f"{what}{rail}: {with_peers(h, c.figures)}, against {against(v, c.figures)}"
    a, b = c.hosts
    what = {CORRUPT: "data corruption", FAR_BELOW: "slow, far below the median", SLOW_BUT_CLOSE: "slow but close",
            BELOW_MIN: "below --min-busbw"}[c.why]
    return (f"link {a}-{b}{rail}: {what}, {with_peers(a, c.figures)} (both ends are fine with their "
            f"other partner), against {against(v, c.figures)}")
