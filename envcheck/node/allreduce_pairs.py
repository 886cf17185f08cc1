"""envcheck pair rounds: disjoint groups of ranks (node pairs, one group per rail: the same local
GPU index on both nodes) all-reducing at the same time, like nccl-tests' NCCL_TESTS_SPLIT, so
every pair is measured under the same conditions and can be compared with the others' median.

Node side: stdlib + torch >= 1.1, Python >= 3.6. Imported by allreduce_worker.py from the run
directory; the worker passes itself as the harness `h` (emit, the watchdog'd collective, the
check pattern). The spec (JSON, written by the controller, envcheck/allreduce/pairs.py) is:
  {"rounds": [[[r0, r1], [r2, r3], ...], ...],   # per round, disjoint groups of global ranks
   "bytes": S, "first_bytes": S1,                 # the size, and the short first measurement's
   "budget": B, "iters": I, "stop": K,            # seconds of timed loop, at most I iterations;
   "retry": R}                                    # a group K x slower than the median stops early;
                                                  # a round with one R x slower runs once more
Per round: a world sync, then every group measures its latency (8 B) and all-reduces S1 3 times;
the first figures go round the world, so every rank knows their median; a group more than K
times slower than it stops there (a slow link named in seconds, not after minutes of full-size
all-reduces through it), the others time S for as many iterations as fit the budget (reckoned from
their own first figure). Then a check pass per group and one record per group from rank 0. After the last
round, the rounds that hold a slow group run once more (the one retry before a verdict), this time
without the early stop.
"""
import json

FIELDS = ("first_s", "time_s", "bytes", "wrong", "lat_s", "iters", "stopped")
LAT_ITERS = 5


def load(path):
    with open(path) as f:
        return json.load(f)


def median(times):
    """The lower median of the times: the upper median of the bandwidths, as the controller's
    (envcheck/allreduce/pairs.py: upper_median), so one slow node (two of a ring's pairs) does
    not drag it down."""
    v = sorted(times)
    return v[(len(v) - 1) // 2] if v else 0.0


def run_rounds(h, spec):
    """Every round once; then, once more, every round that holds a slow group (stopped early,
    or `retry` times slower than the median of all groups): noise only slows a run down, so the
    controller takes each pair's best try."""
    pgs, rows = [], []
    for groups in spec["rounds"]:
        # every rank creates every group, in the same order (torch.distributed requires it)
        pgs.append([h.dist.new_group(ranks=list(g)) for g in groups])
        rows.append(measure_round(h, spec, groups, pgs[-1]))
        report(h, spec, len(rows) - 1, 0, rows[-1])
    times = median([r[FIELDS.index("time_s")] for rnd in rows for r in rnd if not r[FIELDS.index("stopped")]])
    for index, rnd in enumerate(rows):
        if any(r[FIELDS.index("stopped")] or r[FIELDS.index("time_s")] > spec["retry"] * times for r in rnd):
            # no early stop this time: the retry of a pair stopped at the first measurement (a
            # slow link, or one descheduled moment on a busy node) times the full size
            report(h, spec, index, 1, measure_round(h, spec, spec["rounds"][index], pgs[index], stop=False))


def report(h, spec, index, attempt, rows):
    if h.rank != 0:
        return
    for k, g in enumerate(spec["rounds"][index]):
        rec = dict(zip(FIELDS, rows[k]))
        h.emit({"type": "pair", "round": index, "attempt": attempt, "group": k, "ranks": list(g),
                "bytes": int(rec["bytes"]), "time_us": rec["time_s"] * 1e6,
                "first_bytes": int(spec["first_bytes"]), "first_us": rec["first_s"] * 1e6,
                "lat_us": rec["lat_s"] * 1e6, "iters": int(rec["iters"]),
                "stopped": bool(rec["stopped"]), "wrong": int(rec["wrong"])})


def world_sum(h, values, phase):
    """Every group's leader contributes its slots, the others zeros: after the sum every rank
    knows every group's figures (no all_gather_object before torch 1.8)."""
    t = h.torch.tensor(values, dtype=h.torch.float64, device=h.device)
    h.collective(phase, t, h.ops.SUM, len(values) * 8)
    return [float(x) for x in t.tolist()]


def measure_round(h, spec, groups, pgs, stop=True):
    n = len(groups)
    mine = [i for i, g in enumerate(groups) if h.rank in g]
    k = mine[0] if mine else None
    world_sum(h, [0.0], "pairs sync")      # every group starts together
    lead = k is not None and groups[k][0] == h.rank
    first = [0.0] * n
    lat = t1 = 0.0
    if k is not None:
        lat = timed(h, 8, LAT_ITERS, pgs[k], best=True)
        t1 = timed(h, int(spec["first_bytes"]), 3, pgs[k], best=True)
        if lead:
            first[k] = t1
    first = world_sum(h, first, "pairs first")
    m1 = median([x for x in first if x > 0])
    stopped = stop and k is not None and m1 > 0 and t1 > spec["stop"] * m1
    row = [0.0] * len(FIELDS)
    if k is not None:
        size, t, iters = int(spec["first_bytes"]), t1, 1
        if not stopped:
            size = int(spec["bytes"])
            # from the group's own first figure (the same on its ranks: a MAX): a slow pair timed
            # at the full size (the retry) gets one iteration, not the healthy pairs' twenty
            expect = t1 * size / float(spec["first_bytes"])
            iters = max(1, min(int(spec["iters"]), int(spec["budget"] / expect) if expect > 0 else 1))
            t = timed(h, size, iters, pgs[k])
        wrong = check(h, size, groups[k], pgs[k])
        row = [t1, t, size, wrong, lat, iters, 1.0 if stopped else 0.0]
    flat = [0.0] * (n * len(FIELDS))
    if lead:
        flat[k * len(FIELDS):(k + 1) * len(FIELDS)] = row
    flat = world_sum(h, flat, "pairs result")
    return [flat[i * len(FIELDS):(i + 1) * len(FIELDS)] for i in range(n)]


def timed(h, nbytes, iters, pg, best=False):
    """One untimed all-reduce, then `iters` timed ones: the slowest rank's time per operation,
    over the loop, or (best) of the quickest single one — one iteration of a short measurement
    can be held up by anything else on the machine."""
    count = max(1, nbytes // h.elem)
    buf = h.torch.zeros(count, dtype=h.dtype, device=h.device)
    h.collective("pairs warmup", buf, h.ops.SUM, nbytes, pg)
    if best:
        t = min(h.time_loop(buf, 1, nbytes, pg) for _ in range(iters))
    else:
        t = h.time_loop(buf, iters, nbytes, pg)
    m = h.torch.tensor([t], dtype=h.torch.float64, device=h.device)
    h.collective("pairs time", m, h.ops.MAX, nbytes, pg)
    return float(m.item())


def check(h, nbytes, group, pg):
    """The worker's check pass within the group: wrong elements, summed over the group."""
    count = max(1, nbytes // h.elem)
    idx = h.torch.arange(count, device=h.device, dtype=h.torch.int32)
    contrib, expected = h.pattern(h.torch, idx, group.index(h.rank), len(group))
    data = contrib.to(h.dtype)
    if h.perturb:
        data[count // 2] += 1
    h.collective("pairs check", data, h.ops.SUM, nbytes, pg)
    bad = h.torch.tensor([int((data != expected.to(h.dtype)).sum().item())],
                         dtype=h.torch.float64, device=h.device)
    h.collective("pairs check", bad, h.ops.SUM, nbytes, pg)
    return float(bad.item())
