"""Why a failed all-reduce failed (envcheck/allreduce/cause.py) and the sweep's #wrong total
(allreduce/bandwidth.py), from records shaped as the node launchers write them: pure functions,
no ranks started."""
from envcheck.allreduce.bandwidth import make_row, summarize
from envcheck.allreduce.cause import first_cause
from envcheck.remote import Remote, RunResult


class Named(Remote):
    def __init__(self, name):
        self.name = name


def exited(rank, code):
    return {"type": "rank_exit", "rank": rank, "code": code}


def timed_out(rank, phase="collective", seconds=5.0):
    return {"type": "timeout", "rank": rank, "phase": phase, "seconds": seconds}


HOSTS = [Named("node01"), Named("node02")]
FAILED = [RunResult("node01", "", 1), RunResult("node02", "", 1)]
HOST_OF = {0: "node01", 1: "node02"}


def test_the_host_that_failed_first_is_named_not_the_first_in_the_list():
    # both hosts saw a rank exit on its own; node02's launcher was the first to fail (it then
    # stopped node01's ranks), so node02 is the cause
    per_host = {"node01": [exited(0, 1)], "node02": [exited(1, 1)]}
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], ["node02"])
    assert (cause["kind"], cause["host"], cause["rank"]) == ("rank_lost", "node02", 1)
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], [])
    assert cause["host"] == "node01"   # without that, the list's order


def test_a_rank_killed_by_a_signal_is_named_with_the_signal():
    # the launcher records a killed rank as Popen does: a negative return code
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [exited(1, -9)]}, HOST_OF, [], [])
    assert (cause["host"], cause["rank"]) == ("node02", 1)
    assert "was killed by signal 9" in cause["message"]
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [exited(1, 2)]}, HOST_OF, [], [])
    assert "exited with code 2" in cause["message"]
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [exited(1, 0)]}, HOST_OF, [], [])
    assert "exited with code 0" in cause["message"]


def test_a_rank_that_ended_beats_the_timeouts_it_caused():
    per_host = {"node01": [timed_out(0)], "node02": [exited(1, 1)]}
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], ["node01"])
    assert (cause["kind"], cause["host"]) == ("rank_lost", "node02")


def test_a_rank_that_timed_out_names_the_silent_one_as_the_suspect():
    per_host = {"node01": [timed_out(0)], "node02": []}
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], ["node01"])
    assert (cause["kind"], cause["host"], cause["suspects"]) == ("timeout", "node01", ["node02"])
    assert "1 (node02)" in cause["message"]


def test_wrong_elements_are_summed_over_the_sweep_not_the_worst_size():
    # nccl-tests' "# Out of bounds values" is the total of #wrong over every size (common.cu)
    rows = [make_row(64, 4, "float32", 1e-5, 2, 3), make_row(128, 4, "float32", 1e-5, 2, 4),
            make_row(256, 4, "float32", 1e-5, 2, None)]
    assert summarize(rows)["wrong"] == 7
