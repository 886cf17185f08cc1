"""How a launch ends (envcheck/launch/outcome.py): the first failing rank and the exit code it
maps to, from rank states as the stream builds them; no ranks started."""
from envcheck.launch.outcome import EXIT_INTERRUPTED, Stopper, exit_code, failure
from envcheck.launch.stream import RankState


def quiet_stop():
    return Stopper([], lambda i: "", 1.0, lambda s: None)


def states(*codes):
    return {k: RankState(rank=k, host=f"node0{k + 1}", local_rank=0, start=0.0, end=1.0 + k, exit_code=c,
                         arrived=1.0 + k)
            for k, c in enumerate(codes)}


def test_a_rank_killed_by_a_signal_is_a_lost_rank_exit_3():
    # README / docs/launch.md exit codes: 1 when the script failed (a rank exited non-zero),
    # 3 when a rank was killed by a signal
    f = failure(states(0, -9), [], quiet_stop(), 60)
    assert (f["kind"], f["rank"], f["signal"], f["exit_code"]) == ("rank_killed", 1, 9, None)
    assert "killed by signal 9 (SIGKILL)" in f["message"]
    assert exit_code(f) == 3


def test_a_rank_that_exits_non_zero_is_the_scripts_failure_exit_1():
    f = failure(states(0, 2), [], quiet_stop(), 60)
    assert (f["kind"], f["exit_code"], f["signal"]) == ("rank_failed", 2, None)
    assert exit_code(f) == 1


def test_the_rank_that_ended_first_is_named():
    st = states(3, 1)
    assert (failure(st, [], quiet_stop(), 60)["rank"]) == 0     # rank 0 ended at 1.0, rank 1 at 2.0
    st[0].end = 5.0
    assert (failure(st, [], quiet_stop(), 60)["rank"]) == 1
    st[1].end = 5.0   # at the same moment, a killed rank is the cause before one that exited
    st[1].exit_code = -15
    st[0].exit_code = 1
    assert (failure(st, [], quiet_stop(), 60)["kind"]) == "rank_killed"


def test_exit_codes_of_the_other_outcomes():
    assert exit_code(None) == 0
    assert exit_code({"kind": "audit"}) == 1
    assert exit_code({"kind": "interrupted"}) == EXIT_INTERRUPTED == 130
    for kind in ("rank_lost", "host_lost", "timeout"):
        assert exit_code({"kind": kind}) == 3
