"""The pair rounds, pure: the schedule (disjoint pairs, a fixed number of rounds, two partners per
node), the rail groups, figures from the workers' records (nccl-tests' formulas), and the
judgement against the median: a slow node, a slow link, slow-but-close, noise, corruption, the
retry, --min-busbw, the link rate. The worker itself runs in test_worker.py and on the simulated
cluster (test_pairs_cluster.py)."""
from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from envcheck.allreduce.bandwidth import busbw
from envcheck.allreduce.pairs import (BELOW_MIN, CORRUPT, FAR_BELOW, SLOW_BUT_CLOSE, figures_of, judge, pair_spec,
                                      rank_groups, schedule, spec_doc)

MB = 1 << 20


@pytest.mark.parametrize("n", range(3, 41))
def test_every_round_is_disjoint_and_every_node_meets_two_partners_in_at_most_three_rounds(n):
    rounds = schedule(n)
    assert len(rounds) == (2 if n % 2 == 0 else 3)
    partners = {i: set() for i in range(n)}
    for rnd in rounds:
        used = [h for pair in rnd for h in pair]
        assert len(used) == len(set(used)), rnd      # disjoint: they run at the same time
        for a, b in rnd:
            partners[a].add(b)
            partners[b].add(a)
    assert all(len(p) == 2 for p in partners.values()), partners


def test_fewer_than_three_hosts_get_no_rounds():
    assert schedule(2) == [] and schedule(1) == []


def test_rails_pair_the_same_local_rank_and_a_node_with_fewer_ranks_limits_them():
    # 4 hosts: 2, 2, 1, 2 ranks (bases 0, 2, 4, 5)
    groups = rank_groups(schedule(4), [2, 2, 1, 2])
    assert groups[0] == [[0, 2], [1, 3], [4, 5]]          # (0,1) two rails, (2,3) one
    assert groups[1] == [[2, 4], [5, 0], [6, 1]]          # (1,2) one rail, (3,0) two


def test_the_first_measurement_is_a_sixteenth_and_never_below_64k_nor_above_the_size():
    assert pair_spec(64 * MB).first_bytes == 4 * MB
    assert pair_spec(512 << 10).first_bytes == 64 << 10
    assert pair_spec(16 << 10).first_bytes == 16 << 10
    doc = spec_doc(pair_spec(4 * MB), [1] * 5)
    assert len(doc["rounds"]) == 3 and doc["retry"] == 2.0 and doc["stop"] == 4.0


# ---------------------------------------------------------------- figures from records
def run(hosts, rate, nproc=1, size=4 * MB, retry=(), wrong=(), stopped=(), links=None):
    """A Report as run_allreduce returns it, with the pair records the worker would emit: the
    time of a pair is its size over rate(a, b, rail, attempt); `retry`: the rounds to emit twice,
    or "auto" for the worker's rule."""
    ranks = [{"rank": sum([nproc] * i) + k, "node": h, "local_rank": k} for i, h in enumerate(hosts) for k in range(nproc)]
    recs = []
    for attempt, rounds in ((0, None), (1, retry)):
        if rounds == "auto":   # as the worker does: again, every round with a pair below half the median
            times = sorted(x["time_us"] for x in recs)
            rounds = {x["round"] for x in recs if x["time_us"] > 2 * times[(len(times) - 1) // 2]}
        for r, groups in enumerate(rank_groups(schedule(len(hosts)), [nproc] * len(hosts))):
            if rounds is not None and r not in rounds:
                continue
            for g, (x, y) in enumerate(groups):
                a, b = hosts[x // nproc], hosts[y // nproc]
                gbps = rate(a, b, x % nproc, attempt)
                stop = (a, b) in stopped or (b, a) in stopped
                recs.append({"type": "pair", "round": r, "attempt": attempt, "group": g, "ranks": [x, y],
                             "bytes": size // 16 if stop else size, "time_us": (size // (16 if stop else 1)) / gbps / 1e3,
                             "first_bytes": size // 16, "first_us": size / 16 / gbps / 1e3, "lat_us": 50.0,
                             "iters": 1 if stop else 10, "stopped": stop,
                             "wrong": 2 if (a in wrong or b in wrong) else 0})
    return SimpleNamespace(ranks=ranks, pairs=recs, links=links or {})


HOSTS = [f"node{i:02d}" for i in range(1, 9)]


def slow_node(bad, factor, base=10.0):
    return lambda a, b, rail, attempt: base / factor if bad in (a, b) else base


def test_busbw_of_a_pair_is_nccl_tests_algbw_times_one():
    figs = figures_of(run(HOSTS, slow_node("none", 1)))
    f = figs[0]
    assert f.busbw == pytest.approx(busbw(f.bytes, f.time_us / 1e6, 2)) == pytest.approx(f.algbw)
    assert f.busbw == pytest.approx(10.0)


def test_a_node_twenty_times_slower_is_named_far_below_the_median_and_no_other():
    v = judge(figures_of(run(HOSTS, slow_node("node05", 20), retry=(0, 1))))
    assert [(c.kind, c.hosts, c.why, c.fails) for c in v.calls] == [("node", ["node05"], FAR_BELOW, True)]
    assert {f.peer("node05") for f in v.calls[0].figures} == {"node04", "node06"}
    assert v.median == pytest.approx(10.0) and v.pairs == 8 and v.retried == 8


def test_a_node_at_forty_percent_is_slow_but_close_a_warning():
    v = judge(figures_of(run(HOSTS, slow_node("node02", 2.5), retry=(0, 1))))
    assert [(c.hosts, c.why, c.fails) for c in v.calls] == [(["node02"], SLOW_BUT_CLOSE, False)]


def test_one_slow_pair_whose_ends_are_fine_elsewhere_is_a_link():
    def rate(a, b, rail, attempt):
        return 0.5 if {a, b} == {"node03", "node04"} else 10.0
    v = judge(figures_of(run(HOSTS, rate, retry=(0,))))
    assert [(c.kind, c.hosts, c.why) for c in v.calls] == [("link", ["node03", "node04"], FAR_BELOW)]


def test_a_slow_first_try_that_the_retry_clears_names_nobody():
    def rate(a, b, rail, attempt):
        return 1.0 if "node05" in (a, b) and attempt == 0 else 10.0
    v = judge(figures_of(run(HOSTS, rate, retry=(0, 1))))
    assert v.calls == [] and v.retried == 8


@pytest.mark.parametrize("seed", range(20))
def test_noise_as_measured_on_the_loaded_simulated_cluster_names_nobody(seed):
    # 5 healthy runs of 8 CPU-bound nodes on 2 busy cores: pairs from 0.6x to 1x the slower
    # figures, a few up to 4x faster (a pair that had the cores to itself for a moment)
    rnd = random.Random(seed)

    def rate(a, b, rail, attempt):
        return 10.0 * rnd.uniform(0.6, 1.0) * (rnd.uniform(1, 4) if rnd.random() < 0.2 else 1)
    v = judge(figures_of(run(HOSTS, rate, retry="auto")))
    assert v.calls == []


def test_with_four_nodes_one_slow_node_still_stands_out_against_the_upper_median():
    v = judge(figures_of(run(HOSTS[:4], slow_node("node02", 20), retry=(0, 1))))
    assert [c.hosts for c in v.calls] == [["node02"]]


def test_per_rail_a_slow_nic_names_the_node_and_the_rail():
    def rate(a, b, rail, attempt):
        return 0.3 if "node06" in (a, b) and rail == 3 else 10.0
    v = judge(figures_of(run(HOSTS, rate, nproc=4, retry=(0, 1))))
    assert [(c.hosts, c.rail) for c in v.calls] == [(["node06"], 3)]
    assert v.pairs == 32


def test_corruption_in_every_pair_of_a_node_names_it_and_fails():
    v = judge(figures_of(run(HOSTS, slow_node("none", 1), wrong=("node07",))))
    assert [(c.kind, c.hosts, c.why, c.fails) for c in v.calls] == [("node", ["node07"], CORRUPT, True)]


def test_below_min_busbw_everywhere_names_every_node():
    v = judge(figures_of(run(HOSTS, slow_node("none", 1))), min_busbw=100.0)
    assert sorted(h for c in v.calls for h in c.hosts) == HOSTS
    assert {c.why for c in v.calls} == {BELOW_MIN} and all(c.fails for c in v.calls)


def test_a_pair_stopped_early_is_judged_at_the_first_size_against_the_others_first_figures():
    figs = figures_of(run(HOSTS, slow_node("node05", 20), retry=(0, 1),
                          stopped={("node05", "node06"), ("node04", "node05")}))
    v = judge(figs)
    assert [c.hosts for c in v.calls] == [["node05"]]
    assert all(f.stopped and f.ratio == pytest.approx(1 / 20) for f in v.calls[0].figures)


def test_the_link_rate_gives_each_figure_its_share_of_what_the_link_allows():
    links = {h: {"gbps": 1.25, "source": "eth0 10 Gb/s"} for h in HOSTS}
    links["node08"] = {"gbps": 0.125, "source": "eth0 1 Gb/s"}
    figs = figures_of(run(HOSTS, lambda a, b, rail, attempt: 0.1, nproc=2, links=links))
    by = {frozenset(f.hosts): f for f in figs if f.rail == 0}
    assert by[frozenset(("node01", "node02"))].allowed == pytest.approx(1.25 / 2)   # two rails share it
    assert by[frozenset(("node08", "node01"))].allowed == pytest.approx(0.125 / 2)  # the slower end
    d = by[frozenset(("node01", "node02"))].to_dict()
    assert d["percent_of_link"] == pytest.approx(100 * d["busbw"] / (1.25 / 2))


def test_a_figure_within_ten_times_its_latency_is_counted_as_latency_bound():
    figs = figures_of(run(HOSTS, lambda a, b, rail, attempt: 10.0, size=64 << 10))
    v = judge(figs)
    assert v.latency_bound == len(v.best) == 8


# ---- what a call says, whole (each seen to fail on a planted change: bench/mutation.py)

@pytest.mark.parametrize("node, factor, peers, words", [
    ("node05", 20, {"node04", "node06"}, "slow node: every pair with it is far below the median: 0.5 GB/s"),
    ("node02", 2.5, {"node01", "node03"}, "slow but close: every pair with it is below half the median: 4 GB/s"),
], ids=["far-below", "slow-but-close"])
def test_a_slow_node_s_call_says_its_pairs_and_what_they_were_held_against(node, factor, peers, words):
    from envcheck.allreduce.pairs import call_message
    # its pairs in the call's own order (the order they were measured)
    v = judge(figures_of(run(HOSTS, slow_node(node, factor), retry=(0, 1))))
    a, b = (f.peer(node) for f in v.calls[0].figures)
    assert {a, b} == peers
    gb = words.rsplit(": ", 1)[1]
    assert call_message(v.calls[0], v) == (
        f"{words} with {a}, {gb} with {b}, against the median 10 GB/s of 8 pairs, best of 2 tries")


def test_a_slow_link_s_call_names_both_ends_and_says_they_are_fine_elsewhere():
    from envcheck.allreduce.pairs import call_message

    def rate(a, b, rail, attempt):
        return 0.5 if {a, b} == {"node03", "node04"} else 10.0
    v = judge(figures_of(run(HOSTS, rate, retry=(0,))))
    assert call_message(v.calls[0], v) == (
        "link node03-node04: slow, far below the median, 0.5 GB/s with node04 (both ends are fine with their "
        "other partner), against the median 10 GB/s of 8 pairs, best of 2 tries")


def test_corruption_and_min_busbw_calls_say_so():
    from envcheck.allreduce.pairs import call_message
    v = judge(figures_of(run(HOSTS, slow_node("none", 1), wrong=("node07",))))
    msg = call_message(v.calls[0], v)
    assert msg.startswith("data corruption in every pair with this node: ") and " wrong)" in msg
    v = judge(figures_of(run(HOSTS, slow_node("none", 1))), min_busbw=100.0)
    assert call_message(v.calls[0], v).startswith("every pair with this node is below --min-busbw: 10 GB/s with ")


def test_the_json_shape_of_a_call_and_of_the_verdict():
    v = judge(figures_of(run(HOSTS, slow_node("node05", 20), retry=(0, 1))))
    d = v.to_dict()
    assert set(d) == {"median_busbw", "pairs", "retried", "latency_bound", "calls", "figures"}
    assert (d["median_busbw"], d["pairs"], d["retried"]) == (v.median, 8, 8)
    call = d["calls"][0]
    assert {k: call[k] for k in ("kind", "hosts", "rail", "why", "fails")} == {
        "kind": "node", "hosts": ["node05"], "rail": 0, "why": FAR_BELOW, "fails": True}
    assert len(call["pairs"]) == 2 and len(d["figures"]) == 8
    pair = call["pairs"][0]
    assert pair["hosts"] == list(v.calls[0].figures[0].hosts) and pair["busbw"] == pytest.approx(0.5)
    assert pair["percent_of_link"] is None                    # no link rate given
