"""Why a failed all-reduce failed (envcheck/allreduce/cause.py) and the sweep's #wrong total
(allreduce/bandwidth.py), from records shaped as the node launchers write them (parsed as the
controller parses them, envcheck/ranks/records.py): pure functions, no ranks started."""
from envcheck.allreduce.bandwidth import make_row, summarize
from envcheck.allreduce.cause import first_cause
from envcheck.ranks import records as rr
from envcheck.ranks.failure import Failure
from envcheck.remote import Remote, RunResult


class Named(Remote):
    def __init__(self, name):
        self.name = name


def exited(rank, code, time=None):
    return rr.parse({"type": "exit", "rank": rank, "local_rank": 0, "code": code, "time": time, "stopped": False})


def timed_out(rank, phase="collective", seconds=5.0):
    return rr.parse({"type": "timeout", "rank": rank, "phase": phase, "seconds": seconds})


def record(**fields):
    return rr.parse(fields)


HOSTS = [Named("node01"), Named("node02")]
FAILED = [RunResult("node01", "", 1), RunResult("node02", "", 1)]
HOST_OF = {0: "node01", 1: "node02"}


def test_the_host_that_failed_first_is_named_not_the_first_in_the_list():
    # both hosts saw a rank exit on its own; node02's launcher was the first to fail (it then
    # stopped node01's ranks), so node02 is the cause
    per_host = {"node01": [exited(0, 1)], "node02": [exited(1, 1)]}
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], ["node02"])
    assert (cause.kind, cause.host, cause.rank) == ("rank_lost", "node02", 1)
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], [])
    assert cause.host == "node01"   # without that, the list's order


def test_a_rank_killed_by_a_signal_is_named_with_the_signal():
    # the launcher records a killed rank as Popen does: a negative return code
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [exited(1, -9)]}, HOST_OF, [], [])
    assert (cause.host, cause.rank) == ("node02", 1)
    assert "was killed by signal 9" in cause.message
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [exited(1, 2)]}, HOST_OF, [], [])
    assert "exited with code 2" in cause.message
    # every rank's exit is a record now (the shared supervisor): one that exited 0 finished, it
    # is no cause; the failed launcher is
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [exited(1, 0)]}, HOST_OF, [], [])
    assert cause == Failure("host", "node01: the launcher exited with code 1", "node01", None,
                            "see that host's log below")


def test_a_rank_that_ended_beats_the_timeouts_it_caused():
    per_host = {"node01": [timed_out(0)], "node02": [exited(1, 1)]}
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], ["node01"])
    assert (cause.kind, cause.host) == ("rank_lost", "node02")


def test_a_rank_that_timed_out_names_the_silent_one_as_the_suspect():
    per_host = {"node01": [timed_out(0)], "node02": []}
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], ["node01"])
    assert (cause.kind, cause.host, cause.suspects) == ("timeout", "node01", ["node02"])
    assert "1 (node02)" in cause.message


def test_wrong_elements_are_summed_over_the_sweep_not_the_worst_size():
    # nccl-tests' "# Out of bounds values" is the total of #wrong over every size (common.cu)
    rows = [make_row(64, 4, "float32", 1e-5, 2, 3), make_row(128, 4, "float32", 1e-5, 2, 4),
            make_row(256, 4, "float32", 1e-5, 2, None)]
    assert summarize(rows)["wrong"] == 7


def test_each_cause_in_full():
    setup = record(type="error", phase="setup", rank=1, message="No module named 'torch'")
    assert first_cause(HOSTS, FAILED, {"node01": [], "node02": [setup]}, HOST_OF, [], []) == Failure(
        kind="setup", host="node02", rank=1,
        message="rank 1 on node02 could not start: No module named 'torch'",
        fix="see the log below; torch must import under --node-python")
    assert first_cause(HOSTS, FAILED, {"node01": [exited(0, -9)], "node02": []}, HOST_OF, [1], []) == Failure(
        kind="rank_lost", host="node01", rank=0,
        message="rank 0 on node01 was killed by signal 9 mid-run; every other rank was stopped; "
                "ranks that never joined: 1 (node02)",
        fix="see that host's log below (out of memory? killed?)")
    # exit code 3 is the worker's own "timed out" exit, not a cause of its own
    rendezvous = timed_out(0, "rendezvous", 30)
    assert first_cause(HOSTS, FAILED, {"node01": [exited(0, 3), rendezvous], "node02": []}, HOST_OF, [1],
                       ["node01"]) == Failure(
        kind="rendezvous", host="node01", rank=0, suspects=["node02"],
        message="rank 0 on node01: rendezvous did not finish in 30 s; ranks that never joined: 1 (node02)",
        fix="a rank never joined: see its host's log; check --ifname and the firewall between the nodes")
    # ... even without a timeout record beside it (the worker printed it, the pipe lost it)
    assert first_cause(HOSTS, FAILED, {"node01": [exited(0, 3)], "node02": []}, HOST_OF, [],
                       ["node01"]).kind == "host"


def test_a_collective_that_failed_or_timed_out_in_gloo_words():
    err = {"type": "error", "phase": "collective", "rank": 1, "bytes": 1048576,
           "message": "Timed out waiting 4000ms for recv"}
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [rr.parse(err)]}, HOST_OF, [], [])
    assert cause == Failure(kind="timeout", host="node02", rank=1, suspects=["node01"],
                            message="rank 1 on node02: collective at 1MB failed: Timed out waiting 4000ms for "
                                    "recv; rank(s) that never reported a timeout themselves (stuck or too slow): "
                                    "0 (node01)",
                            fix="a peer rank died, hung or cannot reach the others: check --ifname and the "
                                "firewall between the nodes; see the logs")
    err = dict(err, message="Connection reset by peer", bytes=None)
    cause = first_cause(HOSTS, FAILED, {"node01": [], "node02": [rr.parse(err)]}, HOST_OF, [], [])
    assert cause.kind == "collective_error"
    assert cause.message.startswith("rank 1 on node02: collective failed: Connection reset by peer;")


def test_without_rank_records_the_deadline_then_the_host_then_unknown():
    deadline = record(type="launcher", status="deadline", why="passed 60 s")
    assert first_cause(HOSTS, FAILED, {"node01": [], "node02": [deadline]}, HOST_OF, [], []) == Failure(
        kind="timeout", host="node02", rank=None,
        message="the run on node02 passed 60 s (--run-timeout) and was stopped",
        fix="raise --run-timeout, or shrink the sweep (--max-bytes, --iters)")
    results = [RunResult("node01", "", 0), RunResult("node02", "", None, error="ssh: connection lost")]
    assert first_cause(HOSTS, results, {"node01": [], "node02": []}, HOST_OF, [], []) == Failure(
        kind="host", host="node02", rank=None, message="node02: ssh: connection lost",
        fix="see that host's log below")
    results = [RunResult("node01", "", 0), RunResult("node02", "", 7)]
    assert first_cause(HOSTS, results, {}, HOST_OF, [], []).message == \
        "node02: the launcher exited with code 7"
    results = [RunResult("node01", "", 0), ValueError("boom")]
    assert first_cause(HOSTS, results, {}, HOST_OF, [], []).message == "node02: boom"
    ok = [RunResult("node01", "", 0), RunResult("node02", "", 0)]
    assert first_cause(HOSTS, ok, {}, HOST_OF, [1], []) == Failure(
        kind="unknown", host=None, rank=None, fix="",
        message="the run failed; ranks that never joined: 1 (node02)")


# ---- lists of ranks, and a host's own timeout (each seen to fail on a planted change: bench/mutation.py)

HOSTS4 = [Named(f"node0{i}") for i in range(1, 5)]
FAILED4 = [RunResult(f"node0{i}", "", 1) for i in range(1, 5)]
HOST_OF4 = {k: f"node0{k + 1}" for k in range(4)}


def test_the_missing_and_the_silent_ranks_are_each_listed_whole():
    # rank 0 timed out waiting; 1 and 2 never said why; 3 never joined
    cause = first_cause(HOSTS4, FAILED4, {"node01": [timed_out(0)]}, HOST_OF4, [3], [])
    assert cause.message == (
        "rank 0 on node01: collective did not finish in 5 s; ranks that never joined: 3 (node04); rank(s) that "
        "never reported a timeout themselves (stuck or too slow): 1 (node02), 2 (node03)")
    assert cause.suspects == ["node02", "node03", "node04"]
    cause = first_cause(HOSTS4, FAILED4, {}, HOST_OF4, [1, 2], [])
    assert cause.message == "node01: the launcher exited with code 1; ranks that never joined: 1 (node02), 2 (node03)"


def test_a_rank_that_timed_out_and_then_exited_is_a_timeout_not_a_lost_rank():
    # its exit followed its own timeout: it waited for someone, it did not bring the run down
    cause = first_cause(HOSTS, FAILED, {"node01": [timed_out(0), exited(0, 1)]}, HOST_OF, [], [])
    assert (cause.kind, cause.host, cause.rank) == ("timeout", "node01", 0)


def test_a_timeout_that_names_no_phase_is_said_as_such():
    # a record without its phase (an older worker, a cut line) still names the rank that waited
    per_host = {"node01": [record(type="timeout", rank=0, seconds=5.0)], "node02": []}
    cause = first_cause(HOSTS, FAILED, per_host, HOST_OF, [], ["node01"])
    assert cause == Failure("timeout", "rank 0 on node01: ? did not finish in 5 s; rank(s) that never reported a "
                            "timeout themselves (stuck or too slow): 1 (node02)", "node01", 0,
                            "a peer rank died, hung or cannot reach the others: check --ifname and the firewall "
                            "between the nodes; see the logs", ["node02"])
