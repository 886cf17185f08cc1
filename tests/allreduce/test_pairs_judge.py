"""The pair judgement at its edges, on figures written by hand (envcheck/allreduce/pairs.py): the
thresholds at their exact value (half and a quarter of the median, --min-busbw), a stopped pair
held against the first-size median, a median of zero or under 1 GB/s, the latest of several tries,
the retried count, what is latency-bound, the rail and the link rate in a call's words, and the figures read from the
workers' records field by field. test_pairs.py drives the same code through simulated runs; these
pin what its cases leave open (each seen to fail on a planted change: bench/mutation.py)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from envcheck.allreduce.bandwidth import algbw, busbw
from envcheck.allreduce.pairs import (BELOW_MIN, CORRUPT, FAR_BELOW, SLOW_BUT_CLOSE, PairFigure, PairSpec,
                                      call_message, figures_of, judge, pair_spec, rank_groups, schedule, spec_doc,
                                      upper_median)

MB = 1 << 20
HOSTS = [f"node{i:02d}" for i in range(1, 9)]
RING = [(HOSTS[i], HOSTS[(i + 1) % 8]) for i in range(8)]   # the pairs schedule(8) makes, by name


def fig(a, b, gbps, rail=0, attempt=0, first=None, stopped=False, wrong=0, allowed=None, time_us=1000.0,
        lat_us=1.0):
    """A pair's figure as figures_of() makes it; `first`: the first-size busbw (default the same)."""
    first = gbps if first is None else first
    return PairFigure((a, b), rail, 0, attempt, 4 * MB, time_us, gbps, gbps, 256 << 10, first, lat_us, 10, stopped,
                      wrong, allowed)


def ring(odd=None, **kw):
    """The eight ring pairs at 10 GB/s, those in `odd` ({(a, b): gbps}) at their own figure."""
    odd = odd or {}
    return [fig(a, b, odd.get((a, b), 10.0), **kw) for a, b in RING]


def calls(v):
    return [(c.kind, c.hosts, c.rail, c.why, c.fails) for c in v.calls]


# ---------------------------------------------------------------- thresholds at their exact value

def test_a_pair_at_exactly_half_the_median_is_not_slow_and_just_below_it_is():
    assert judge(ring({RING[2]: 5.0})).calls == []
    assert calls(judge(ring({RING[2]: 4.99}))) == [("link", ["node03", "node04"], 0, SLOW_BUT_CLOSE, False)]


def test_a_pair_at_exactly_a_quarter_of_the_median_is_slow_but_close_and_just_below_it_far_below():
    assert calls(judge(ring({RING[2]: 2.5}))) == [("link", ["node03", "node04"], 0, SLOW_BUT_CLOSE, False)]
    assert calls(judge(ring({RING[2]: 2.49}))) == [("link", ["node03", "node04"], 0, FAR_BELOW, True)]


def test_a_pair_at_exactly_min_busbw_passes_and_just_below_it_fails():
    assert judge(ring(), min_busbw=10.0).calls == []
    assert {c.why for c in judge(ring(), min_busbw=10.01).calls} == {BELOW_MIN}


def test_a_pair_at_exactly_half_the_median_but_below_min_busbw_is_below_min_not_slow():
    # only --min-busbw makes it a call: it says so, not "slow but close"
    assert calls(judge(ring({RING[2]: 5.0}), min_busbw=6.0)) == [("link", ["node03", "node04"], 0, BELOW_MIN, True)]


# ---------------------------------------------------------------- the medians

def test_the_upper_median_of_nothing_is_zero_and_of_an_even_count_the_upper_one():
    assert upper_median([]) == 0.0
    assert upper_median([4.0, 1.0, 3.0, 2.0]) == 3.0


def test_a_stopped_pair_is_held_against_the_first_size_median_and_the_others_against_the_full_size_one():
    # the first, small measurement runs at 4 GB/s where the full size runs at 10: a pair stopped at
    # 3 GB/s is at 75 % of its own size's median, not 30 % of the full size's
    figs = ring(first=4.0)
    figs[4] = fig(*RING[4], 3.0, first=3.0, stopped=True)
    v = judge(figs)
    assert v.calls == []
    assert [f.ratio for f in v.best] == [1.0] * 4 + [0.75] + [1.0] * 3
    assert v.median == 10.0


def test_with_every_figure_zero_the_ratio_is_one_not_a_division_by_zero():
    v = judge(ring({p: 0.0 for p in RING}))
    assert v.calls == [] and v.median == 0.0
    assert [f.ratio for f in v.best] == [1.0] * 8


def test_a_median_under_one_gb_s_still_judges_against_it():
    # a 1 Gb/s Ethernet fleet: the median 0.1 GB/s, a pair at 0.04 is 40 % of it
    v = judge(ring({p: (0.04 if p == RING[5] else 0.1) for p in RING}))
    assert calls(v) == [("link", ["node06", "node07"], 0, SLOW_BUT_CLOSE, False)]
    assert v.best[5].ratio == pytest.approx(0.4)


# ---------------------------------------------------------------- tries

def test_only_the_pairs_whose_round_ran_again_count_as_retried():
    figs = ring() + [fig(a, b, 10.0, attempt=1) for a, b in RING[0::2]]
    v = judge(figs)
    assert (v.pairs, v.retried, v.calls) == (8, 4, [])


def test_best_of_2_tries_is_said_only_of_a_call_whose_own_pair_ran_again():
    a, b = RING[0], RING[3]                  # node01-node02 in round 0, node04-node05 in round 1
    v = judge(ring({a: 1.0, b: 1.0}) + [fig(*a, 1.0, attempt=1)])
    by = {tuple(c.hosts): call_message(c, v) for c in v.calls}
    assert by[a].endswith("against the median 10 GB/s of 8 pairs, best of 2 tries")
    assert by[b].endswith("against the median 10 GB/s of 8 pairs")


# ---------------------------------------------------------------- latency-bound

def test_latency_bound_counts_only_pairs_timed_within_ten_latencies_and_not_stopped():
    assert judge(ring(time_us=1000.0, lat_us=1.0)).latency_bound == 0
    assert judge(ring(time_us=9.9, lat_us=1.0)).latency_bound == 8
    figs = ring(time_us=9.9, lat_us=1.0)
    figs[0] = fig(*RING[0], 10.0, stopped=True, time_us=9.9, lat_us=1.0)
    assert judge(figs).latency_bound == 7


# ---------------------------------------------------------------- what a call says

def test_a_slow_link_on_one_rail_names_the_rail():
    figs = [fig(a, b, 0.5 if ((a, b) == RING[2] and rail == 2) else 10.0, rail=rail) for a, b in RING
            for rail in range(4)]
    v = judge(figs)
    assert calls(v) == [("link", ["node03", "node04"], 2, FAR_BELOW, True)]
    assert call_message(v.calls[0], v) == (
        "link node03-node04 (rail 2): slow, far below the median, 0.5 GB/s with node04 (both ends are fine with "
        "their other partner), against the median 10 GB/s of 32 pairs")


@pytest.mark.parametrize("gbps,wrong,min_busbw,what", [
    (10.0, 3, None, "data corruption, 10 GB/s with node04 (3 wrong)"),
    (4.0, 0, None, "slow but close, 4 GB/s with node04"),
    (9.0, 0, 9.5, "below --min-busbw, 9 GB/s with node04"),
])
def test_each_kind_of_link_call_says_what_it_is(gbps, wrong, min_busbw, what):
    figs = ring({RING[2]: gbps})
    figs[2].wrong = wrong
    v = judge(figs, min_busbw=min_busbw)
    assert [c.hosts for c in v.calls] == [["node03", "node04"]]
    assert call_message(v.calls[0], v) == (
        f"link node03-node04: {what} (both ends are fine with their other partner), "
        "against the median 10 GB/s of 8 pairs")


def test_a_call_holds_its_fastest_pair_against_what_its_link_allows():
    # node05's pairs: 0.5 GB/s where the link allows 1.25 (40 %), 0.6 where it allows 0.625 (96 %)
    figs = ring({RING[3]: 0.5, RING[4]: 0.6})
    figs[3].allowed, figs[4].allowed = 1.25, 0.625
    v = judge(figs)
    assert call_message(v.calls[0], v) == (
        "slow node: every pair with it is far below the median: 0.5 GB/s with node04, 0.6 GB/s with node06, "
        "against the median 10 GB/s of 8 pairs; 96% of the 0.625 GB/s the link allows")


def test_a_pair_stopped_early_says_so():
    figs = ring()
    figs[3] = fig(*RING[3], 0.5, stopped=True)
    figs[4] = fig(*RING[4], 0.5, stopped=True)
    v = judge(figs)
    assert call_message(v.calls[0], v) == (
        "slow node: every pair with it is far below the median: 0.5 GB/s with node04 (stopped early), "
        "0.5 GB/s with node06 (stopped early), against the median 10 GB/s of 8 pairs")


def test_a_host_s_pairs_are_those_it_is_an_end_of():
    v = judge(ring())
    assert [f.hosts for f in v.of("node05")] == [RING[3], RING[4]]


# ---------------------------------------------------------------- figures from records

def test_figures_are_read_from_the_records_field_by_field():
    # ranks as an older worker wrote them: `host`, no local_rank; a record without `attempt`; a
    # record naming a rank the run never heard of (skipped, not the end of the list)
    rep = SimpleNamespace(
        ranks=[{"rank": 0, "host": "a"}, {"rank": 1, "host": "b"}, {"rank": 2, "host": "c"}],
        pairs=[{"round": 0, "ranks": [0, 9], "bytes": 8, "time_us": 1.0, "first_bytes": 8, "first_us": 1.0,
                "lat_us": 1.0, "iters": 1, "stopped": False, "wrong": 0},
               {"round": 2, "ranks": [1, 2], "bytes": 4 * MB, "time_us": 400.0, "first_bytes": 256 << 10,
                "first_us": 50.0, "lat_us": 20.0, "iters": 7, "stopped": False, "wrong": 1}],
        links={})
    (f,) = figures_of(rep)
    assert f.to_dict() == {
        "hosts": ["b", "c"], "rail": 0, "round": 2, "attempt": 0, "bytes": 4 * MB, "time_us": 400.0,
        "busbw": busbw(4 * MB, 400.0 / 1e6, 2), "algbw": algbw(4 * MB, 400.0 / 1e6),
        "first_bytes": 256 << 10, "first_busbw": busbw(256 << 10, 50.0 / 1e6, 2), "lat_us": 20.0, "iters": 7,
        "stopped": False, "wrong": 1, "allowed": None, "ratio": 1.0, "percent_of_link": None}
    assert f.busbw == pytest.approx(4 * MB / 400e-6 / 1e9, rel=1e-12)
    assert f.first_busbw == pytest.approx((256 << 10) / 50e-6 / 1e9, rel=1e-12)


# ---------------------------------------------------------------- what the worker is given

def test_the_spec_passes_size_budget_and_iterations_through_and_the_first_size_is_whole_bytes():
    assert pair_spec(16 * MB + 8, budget=2.0, iters=7) == PairSpec(16 * MB + 8, MB, 2.0, 7)


def test_the_worker_s_spec_document_whole():
    assert spec_doc(PairSpec(4 * MB, 256 << 10, 2.0, 7), [1, 1, 1]) == {
        "rounds": rank_groups(schedule(3), [1, 1, 1]), "bytes": 4 * MB, "first_bytes": 256 << 10, "budget": 2.0,
        "iters": 7, "stop": 4.0, "retry": 2.0}
    assert rank_groups(schedule(3), [1, 1, 1]) == [[[0, 1]], [[1, 2]], [[2, 0]]]
