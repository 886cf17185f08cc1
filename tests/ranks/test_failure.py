"""One failure record for every rank workload, and one rule that names the rank that went first
(envcheck/ranks/failure.py)."""
import pytest

from envcheck.ranks.failure import KINDS, WINDOW, Failure, first_failed
from envcheck.ranks.records import Exit


def ex(rank, code, t, stopped=False):
    return Exit(rank, 0, code, t, stopped)


def test_a_rank_killed_by_a_signal_is_named_over_the_peers_that_failed_just_before_it_was_seen():
    # the peers' collectives failed a few ms before the launcher polled the killed rank
    assert first_failed([ex(0, 1, 10.00), ex(2, 3, 10.01), ex(1, -9, 10.05)]).rank == 1


def test_outside_the_window_the_earliest_failure_is_named_even_when_a_later_one_was_killed():
    assert first_failed([ex(0, 1, 10.0), ex(1, -9, 10.0 + WINDOW + 0.1)]).rank == 0


def test_ranks_stopped_by_the_run_and_ranks_that_exited_0_are_never_the_cause():
    assert first_failed([ex(0, 0, 1.0), ex(1, -15, 1.1, stopped=True)]) is None
    assert first_failed([ex(0, 0, 1.0), ex(1, -15, 1.1, stopped=True), ex(2, 1, 3.0)]).rank == 2


def test_ties_go_to_the_lowest_rank():
    assert first_failed([ex(3, 1, 2.0), ex(1, 1, 2.0)]).rank == 1


def test_only_the_kinds_whose_host_is_broken_blame_it():
    assert Failure("rank_lost", "m", "node02", 1).culprit == "node02"
    assert Failure("setup", "m", "node02", 1).culprit == "node02"
    assert Failure("timeout", "m", "node01", 0, suspects=["node02"]).culprit is None
    assert Failure("rendezvous", "m", "node01", 0).culprit is None
    with pytest.raises(ValueError):
        Failure("rank_exploded", "m")


def test_the_json_shape_keeps_each_kind_s_own_fields():
    assert Failure("preflight", "m", "n1", None, "fix it").to_dict() == {
        "kind": "preflight", "message": "m", "host": "n1", "rank": None, "fix": "fix it"}
    d = Failure("rank_killed", "m", "n1", 2, signal=9, log_tail=["x"]).to_dict()
    assert (d["exit_code"], d["signal"], d["log_tail"]) == (None, 9, ["x"])
    assert Failure("timeout", "m", suspects=["n2"]).to_dict()["suspects"] == ["n2"]
    assert Failure.from_dict(d) == Failure("rank_killed", "m", "n1", 2, signal=9, log_tail=["x"])


def test_exit_codes_follow_the_readme():
    assert {k: v[1] for k, v in KINDS.items() if v[1] != 3} == {"audit": 1, "rank_failed": 1,
                                                                "interrupted": 130}


def test_the_exit_code_of_a_run_is_its_failure_kind_s():
    # README / docs/launch.md: 1 the audit or the script failed, 130 Ctrl-C, 3 the run could not
    # be measured or finished (a rank or host lost, a timeout)
    from envcheck.errors import EXIT_INTERRUPTED
    assert Failure("audit", "m").exit_code_of_run == 1
    assert Failure("rank_failed", "m").exit_code_of_run == 1
    assert Failure("interrupted", "m").exit_code_of_run == EXIT_INTERRUPTED == 130
    for kind in ("rank_lost", "rank_killed", "host_lost", "timeout", "preflight", "setup", "unknown"):
        assert Failure(kind, "m").exit_code_of_run == 3, kind
