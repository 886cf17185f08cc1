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


# ---- the rule's edges and the record's round trip (each seen to fail on a planted change: bench/mutation.py)

def test_a_rank_ending_exactly_at_the_window_s_edge_is_still_within_it():
    assert first_failed([ex(0, 1, 10.0), ex(1, -9, 10.0 + WINDOW)]).rank == 1


def test_within_the_window_the_earliest_of_the_same_kind_is_named_before_a_lower_rank():
    assert first_failed([ex(3, 1, 10.0), ex(1, 1, 10.2)]).rank == 3
    assert first_failed([ex(3, -9, 10.2), ex(1, -15, 10.0)]).rank == 1


def test_an_exit_without_a_time_is_in_the_window_but_after_every_timed_one():
    # a launcher that could not say when a rank ended: it may be the cause, but a timed exit of
    # the same kind is named first
    assert first_failed([ex(0, 1, None), ex(1, 1, 5.0)]).rank == 1
    assert first_failed([ex(0, 1, 5.0), ex(1, -9, None)]).rank == 1      # a signal still goes first
    assert first_failed([ex(2, 1, None), ex(1, 1, None)]).rank == 1


def test_an_unknown_kind_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^unknown failure kind 'rank_exploded'$"):
        Failure("rank_exploded", "m")


def test_a_failure_survives_its_json_shape_whole():
    for f in (Failure("timeout", "m", "n1", 0, "raise it", suspects=["n2"], log_tail=["a"]),
              Failure("rank_failed", "m", "n2", 3, "see its log tail", exit_code=2, log_tail=[]),
              Failure("rank_killed", "m", "n2", 3, "see", signal=9)):
        assert Failure.from_dict(f.to_dict()) == f
    d = Failure("rank_failed", "m", exit_code=2).to_dict()
    assert (d["exit_code"], d["signal"]) == (2, None)
    assert "exit_code" not in Failure("timeout", "m").to_dict()


def test_a_record_of_a_kind_this_version_does_not_know_reads_as_unknown():
    # doctor reading a newer nccl-test's JSON: never a crash, the message kept
    assert Failure.from_dict({"kind": "gpu_fell_off_the_bus", "message": "m", "fix": "f"}) == Failure("unknown", "m", fix="f")
    assert Failure.from_dict({"kind": "timeout"}) == Failure("timeout", "timeout")


# the race of a rank that raises while a peer is in a collective with it: the peer dies at once of
# the closed connection and is heard first, the raiser is stopped while its interpreter exits
GLOO_VICTIM = ["RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer "
               "[10.0.0.2]:60089. This is typically caused by a remote worker crashing.",
               "terminate called without an active exception"]
NCCL_VICTIM = ["torch.distributed.DistBackendError: NCCL error: remote process exited or there was "
               "a network error", "frame #0: c10::Error::Error"]
RAISER = ["Traceback (most recent call last):", '  File "ddp_tiny.py", line 9, in <module>',
          "RuntimeError: rank 2 raised on purpose"]


@pytest.mark.parametrize("victim", [GLOO_VICTIM, NCCL_VICTIM])
def test_a_stopped_rank_that_raised_is_named_before_the_peer_its_exit_brought_down(victim):
    exits = [ex(3, -6, 10.0), ex(2, -15, 10.3, stopped=True), ex(1, -15, 10.3, stopped=True)]
    assert first_failed(exits, {3: victim, 2: RAISER, 1: ["step 4"]}).rank == 2
    # without the tails (nccl-test) or with no traceback in the stopped rank's, it stays the victim
    assert first_failed(exits).rank == 3
    assert first_failed(exits, {3: victim, 2: ["step 4"]}).rank == 3
    # a stopped rank whose traceback is a peer's failure is a victim too, never a cause
    assert first_failed(exits, {3: victim, 2: RAISER + victim}).rank == 3
    # and the stop alone names no one: a run without a rank that ended on its own has no culprit
    assert first_failed([ex(2, -15, 10.3, stopped=True)], {2: RAISER}) is None



def test_a_traceback_torch_prefixes_with_its_rank_is_the_ranks_own():
    # torch >= 2.2 prints an uncaught exception in a process group line by line as "[rankN]: ..."
    prefixed = ["[rank2]: " + line for line in RAISER]
    exits = [ex(3, -6, 10.0), ex(2, -15, 10.3, stopped=True)]
    assert first_failed(exits, {3: ["[rank3]: " + line for line in GLOO_VICTIM], 2: prefixed}).rank == 2
    # a rank word inside a message is not that prefix: it is still no exception of the rank's own
    assert first_failed(exits, {3: GLOO_VICTIM, 2: ["step 4 [rank2]: RuntimeError: x"]}).rank == 3

def test_a_rank_brought_down_by_a_peer_ranks_after_one_that_ended_on_its_own():
    # an error exit heard later (within the window) beats the victim that was heard first
    assert first_failed([ex(3, 1, 10.0), ex(2, 1, 10.2)], {3: GLOO_VICTIM, 2: RAISER}).rank == 2
    # a rank that raised and was stopped comes after a rank that failed on its own without a peer's error
    assert first_failed([ex(3, 1, 10.0), ex(2, -15, 10.1, stopped=True), ex(0, 1, 10.2)],
                        {3: GLOO_VICTIM, 2: RAISER, 0: ["oops"]}).rank == 0


def test_sigabrt_is_an_error_exit_and_an_outside_kill_is_still_named_first():
    # SIGABRT: the process aborted itself (C++ terminate), so the earliest exit goes first
    assert first_failed([ex(0, 1, 10.0), ex(1, -6, 10.1)]).rank == 0
    # kill -9 / the OOM killer within the window: named first, whatever its tail or its peers' say
    exits = [ex(3, -6, 10.0), ex(2, -15, 10.3, stopped=True), ex(1, -9, 10.2)]
    assert first_failed(exits, {3: GLOO_VICTIM, 2: RAISER, 1: GLOO_VICTIM}).rank == 1


def test_a_rank_that_raised_on_a_host_the_stop_reached_late_beats_the_victim_heard_first():
    exits = [ex(3, 1, 10.0), ex(0, 1, 10.0 + WINDOW + 1)]
    assert first_failed(exits, {3: GLOO_VICTIM, 0: RAISER}).rank == 0
    # outside the window, a rank that failed without a traceback is still no cause
    assert first_failed(exits, {3: GLOO_VICTIM, 0: ["oops"]}).rank == 3
    # and one near the first that ended on its own, victim of no one, stays named before it
    assert first_failed(exits + [ex(1, 2, 10.1)], {3: GLOO_VICTIM, 0: RAISER, 1: ["oops"]}).rank == 1
