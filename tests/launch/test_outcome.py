"""How a launch ends (envcheck/launch/outcome.py): stopping every host once, the first failing
rank among those heard before the controller stopped the run, and the exit code it maps to,
from rank states as the stream builds them; no ranks started. The rule that picks the first
failing rank, and each kind's exit code, are the harness's: tests/ranks/test_failure.py."""
import threading

from envcheck.launch.outcome import Stopper, exit_code, failure
from envcheck.launch.stream import RankState
from envcheck.ranks.failure import Failure


def quiet_stop():
    return Stopper(0, lambda i: None, lambda s: None)


def states(*codes):
    return {k: RankState(rank=k, host=f"node0{k + 1}", local_rank=0, start=0.0, end=1.0 + k, exit_code=c,
                         arrived=1.0 + k)
            for k, c in enumerate(codes)}


def test_a_rank_killed_by_a_signal_is_a_lost_rank_exit_3():
    # README / docs/launch.md exit codes: 1 when the script failed (a rank exited non-zero),
    # 3 when a rank was killed by a signal
    f = failure(states(0, -9), [], quiet_stop(), 60)
    assert (f.kind, f.rank, f.signal, f.exit_code) == ("rank_killed", 1, 9, None)
    assert "killed by signal 9 (SIGKILL)" in f.message
    assert exit_code(f) == 3


def test_a_rank_that_exits_non_zero_is_the_scripts_failure_exit_1():
    f = failure(states(0, 2), [], quiet_stop(), 60)
    assert (f.kind, f.exit_code, f.signal) == ("rank_failed", 2, None)
    assert exit_code(f) == 1


def test_the_rank_that_ended_first_is_named():
    # the launch's rank states feed the harness's rule with the time each rank ended
    st = states(3, 1)
    assert failure(st, [], quiet_stop(), 60).rank == 0     # rank 0 ended at 1.0, rank 1 at 2.0
    st[0].end = 5.0
    assert failure(st, [], quiet_stop(), 60).rank == 1
    st[1].end = 5.0   # at the same moment, a killed rank is the cause before one that exited
    st[1].exit_code = -15
    st[0].exit_code = 1
    assert failure(st, [], quiet_stop(), 60).kind == "rank_killed"
    st[1].stopped = True   # ...unless it was killed because the run was being stopped
    assert (failure(st, [], quiet_stop(), 60).kind, failure(st, [], quiet_stop(), 60).rank) == ("rank_failed", 0)


def test_a_run_exits_0_without_a_failure_and_with_its_failure_s_code_otherwise():
    assert exit_code(None) == 0
    for kind in ("audit", "interrupted", "rank_lost", "host_lost", "timeout"):
        assert exit_code(Failure(kind, "m")) == Failure(kind, "m").exit_code_of_run


def test_a_stop_is_sent_once_to_every_host_and_every_reason_is_kept():
    said, stopped, lock = [], [], threading.Lock()

    def stop_host(i):
        with lock:
            stopped.append(i)

    stop = Stopper(2, stop_host, said.append)
    assert stop.at is None and stop.controller() is None
    stop.request("rank_failed", "rank 1 exited", "n2")
    stop.request("timeout", "the run passed --run-timeout")
    stop.join(10)
    assert said == ["rank 1 exited: stopping every rank on every host"]
    assert sorted(stopped) == [0, 1]
    assert [r[:3] for r in stop.reasons] == [("rank_failed", "rank 1 exited", "n2"),
                                           ("timeout", "the run passed --run-timeout", None)]
    assert stop.at == stop.reasons[0][3]
    assert stop.controller() == stop.reasons[1]     # the first reason the controller itself gave


def test_the_failure_a_controller_stop_caused_is_not_the_cause():
    st = states(0, 0)
    st[1].exit_code, st[1].arrived = 1, 9.0      # its exit arrived after the controller stopped the run
    stop = quiet_stop()
    stop.reasons.append(("host", "the connection to node02", "node02", 5.0))
    assert failure(st, [], stop, 60) == Failure(
        kind="host_lost", host="node02", rank=None,
        message="lost the connection to node02; every other rank was stopped",
        fix="check that host (sshd, network, power); its ranks were stopped by its launcher when the "
            "connection closed")
    stop.reasons[0] = ("interrupted", "interrupted (Ctrl-C)", None, 5.0)
    assert failure(st, [], stop, 60) == Failure(kind="interrupted", host=None, rank=None, fix="",
                                                message="interrupted (Ctrl-C): every rank on every host was stopped")
    st[1].arrived = 4.0                           # before the stop: the rank's own failure
    assert failure(st, [], stop, 60).kind == "rank_failed"


def test_a_rank_that_never_reported_its_exit_is_lost_and_a_clean_run_has_no_failure():
    assert failure(states(0, 0), [], quiet_stop(), 60) is None
    st = states(0, None)
    st[1].tail.extend(f"line {i}" for i in range(30))
    f = failure(st, [], quiet_stop(), 60)
    assert f == Failure(kind="rank_lost", host="node02", rank=1, fix="",
                        message="rank 1 on node02 never reported its exit",
                        log_tail=[f"line {i}" for i in range(10, 30)])


DUMP_OWN = ["Current thread 0x01 (most recent call first):", '  File "/work/train.py", line 9 in step']
DUMP_TORCH = ["Current thread 0x02 (most recent call first):",
              '  File "/venv/lib/python3.11/site-packages/torch/distributed/c10d.py", line 1 in all_reduce']


def test_at_the_timeout_the_rank_outside_torch_is_named_as_hung():
    st = states(None, None, None)
    st[0].tail.extend(DUMP_TORCH)
    st[1].tail.extend(DUMP_OWN)
    st[2].tail.extend(DUMP_TORCH)
    stop = quiet_stop()
    stop.reasons.append(("timeout", "the run passed --run-timeout", None, 5.0))
    f = failure(st, [], stop, 60)
    assert (f.kind, f.rank, f.host, f.suspects) == ("timeout", 1, "node02", ["node02"])
    assert f.message == ("rank 1 on node02 hung: still running at --run-timeout 60 s in the script's own "
                         "code, while rank(s) 0, 2 waited for it inside torch; the run passed --run-timeout "
                         "60 s; ranks still running: 0 (node01), 1 (node02), 2 (node03)")
    assert f.log_tail == DUMP_OWN
    for s in st.values():               # every rank inside torch: none is singled out
        s.tail.clear()
        s.tail.extend(DUMP_TORCH)
    f = failure(st, [], stop, 60)
    assert (f.rank, f.suspects) == (0, [])
    assert f.message == ("rank 0 on node01 was still running: the run passed --run-timeout 60 s; ranks still "
                         "running: 0 (node01), 1 (node02), 2 (node03)")
