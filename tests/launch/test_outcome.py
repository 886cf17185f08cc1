"""How a launch ends (envcheck/launch/outcome.py): stopping every host once, the first failing
rank among those heard before the controller stopped the run, and the exit code it maps to,
from rank states as the stream builds them; no ranks started. The rule that picks the first
failing rank, and each kind's exit code, are the harness's: tests/ranks/test_failure.py."""
import os
import signal
import threading

from envcheck.launch.outcome import Stopper, exit_code, failure, wait
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



def test_a_rank_that_raised_and_was_heard_after_the_controllers_stop_is_still_the_cause():
    # rank 1 raised; rank 0, in a collective with it, aborted at once on the closed connection and
    # was heard first, so the controller stopped the run (at 5.0) before rank 1's exit arrived
    st = states(-6, -15)
    st[0].tail.extend(["[rank0]: RuntimeError: [pair.cc:553] Connection closed by peer [10.0.0.2]:3243",
                       "terminate called without an active exception"])
    st[1].tail.extend(["[rank1]: Traceback (most recent call last):", "[rank1]: RuntimeError: boom from rank 1"])
    st[1].stopped, st[1].arrived = True, 9.0
    stop = quiet_stop()
    stop.reasons.append(("rank", "rank 0 on node01 ended (signal 6)", "node01", 5.0))
    f = failure(st, [], stop, 60)
    assert (f.kind, f.rank, f.host) == ("rank_failed", 1, "node02")
    assert f.message == ("rank 1 on node02 raised (its log ends in a Python traceback) and was stopped while "
                         "exiting; every other rank was stopped")
    # without its own traceback, an exit heard after the stop is still no cause
    st[1].tail.clear()
    assert failure(st, [], stop, 60).rank == 0

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


# ---- whole failures, the stop and the wait (each seen to fail on a planted change: bench/mutation.py)

def test_a_rank_s_own_failure_is_reported_whole_with_its_last_20_lines():
    st = states(0, 2)
    st[1].tail.extend(f"out {i}" for i in range(30))
    assert failure(st, [], quiet_stop(), 60) == Failure(
        kind="rank_failed", host="node02", rank=1,
        message="rank 1 on node02 exited with code 2; every other rank was stopped",
        fix="see its log tail", exit_code=2, signal=None, log_tail=[f"out {i}" for i in range(10, 30)])
    st[1].exit_code = -9
    assert failure(st, [], quiet_stop(), 60) == Failure(
        kind="rank_killed", host="node02", rank=1,
        message="rank 1 on node02 was killed by signal 9 (SIGKILL); every other rank was stopped",
        fix="see its log tail (killed: out of memory? dmesg on that host)", exit_code=None, signal=9,
        log_tail=[f"out {i}" for i in range(10, 30)])
    st[1].tail.clear()
    assert failure(st, [], quiet_stop(), 60).log_tail == []


def test_a_signal_python_has_no_name_for_is_said_by_its_number():
    f = failure(states(-77), [], quiet_stop(), 60)
    assert (f.kind, f.signal, f.message) == (
        "rank_killed", 77, "rank 0 on node01 was killed by signal 77 (77); every other rank was stopped")


def test_an_exit_heard_at_the_moment_of_the_stop_or_with_no_arrival_time_is_still_a_cause():
    stop = quiet_stop()
    stop.reasons.append(("timeout", "the run passed --run-timeout", None, 0.5))
    st = states(3)
    st[0].arrived = 0.5                  # heard exactly when the controller stopped the run
    assert (failure(st, [], stop, 60).kind, failure(st, [], stop, 60).rank) == ("rank_failed", 0)
    st[0].arrived = None                 # no arrival time: counted as heard before any stop
    assert failure(st, [], stop, 60).kind == "rank_failed"
    st[0].arrived = 0.6
    assert failure(st, [], stop, 60).kind == "timeout"


TIMEOUT_FIX = "see the rank's Python stack (its log tail); raise --run-timeout if the run only needed longer"


def timed_out(at=5.0):
    stop = quiet_stop()
    stop.reasons.append(("timeout", "the run passed --run-timeout", None, at))
    return stop


class Stream:
    """What _hung reads of a host's stream: its records."""

    def __init__(self, *records):
        self.records = list(records)


def test_the_hung_rank_s_failure_is_whole_its_stack_not_its_whole_tail():
    from envcheck.ranks import records as rr
    st = states(None, None, 0)
    st[0].tail.extend(["epoch 3"] + DUMP_TORCH)
    st[1].tail.extend(["epoch 3", "loss 0.1"] + DUMP_OWN + ["after the dump"])
    # the launchers' deadline records say who was running; a rank they name that this run has no
    # state for, and the records of a launcher that did not reach its deadline, are left out
    streams = [Stream(rr.Launcher("deadline", None, "node01", (0, 1, 9))), Stream(rr.Launcher("done", None, "node03", (2,)))]
    assert failure(st, streams, timed_out(), 90) == Failure(
        kind="timeout", host="node02", rank=1, suspects=["node02"],
        message="rank 1 on node02 hung: still running at --run-timeout 90 s in the script's own code, while "
                "rank(s) 0 waited for it inside torch; the run passed --run-timeout 90 s; ranks still running: "
                "0 (node01), 1 (node02)",
        fix=TIMEOUT_FIX, log_tail=DUMP_OWN)


def test_the_launchers_deadline_records_decide_who_was_still_running():
    from envcheck.ranks import records as rr
    st = states(None, None, None)
    for s in st.values():
        s.tail.extend(DUMP_TORCH)
    streams = [Stream(rr.Launcher("deadline", None, "node03", (2,)))]
    f = failure(st, streams, timed_out(), 60)
    assert (f.rank, f.host, f.message) == (
        2, "node03", "rank 2 on node03 was still running: the run passed --run-timeout 60 s; ranks still running: 2 (node03)")


def test_a_timeout_with_no_rank_left_running_names_none():
    f = failure(states(0, 0), [], timed_out(), 60)
    assert f == Failure(kind="timeout", host=None, rank=None, suspects=[], fix=TIMEOUT_FIX, log_tail=[],
                        message="the run passed --run-timeout 60 s; ranks still running: none")


def test_a_hung_rank_without_a_stack_dump_shows_its_last_25_lines():
    st = states(None)
    st[0].tail.extend(f"step {i}" for i in range(40))
    f = failure(st, [], timed_out(), 60)
    assert (f.rank, f.log_tail) == (0, [f"step {i}" for i in range(15, 40)])


class Host(threading.Thread):
    """A host's launcher thread: runs until `release` is set. Its join() is the one wait() polls
    with, so a test can act at a known poll (raise Ctrl-C there, release the host after the stop)."""

    def __init__(self, on_join=None):
        self.release = threading.Event()
        self.on_join = on_join or (lambda host: None)
        self.joins = 0
        super().__init__(target=self.release.wait, daemon=True)

    def join(self, timeout=None):
        self.joins += 1
        self.on_join(self)
        super().join(timeout)


class RecordingStopper(Stopper):
    def __init__(self, *a):
        super().__init__(*a)
        self.joined = []

    def join(self, timeout):
        self.joined.append(timeout)
        super().join(timeout)


def test_a_run_that_passes_the_backstop_is_stopped_as_a_timeout_and_waited_for():
    said = []
    host = Host()
    stop = RecordingStopper(1, lambda i: host.release.set(), said.append)
    host.start()
    wait([host], stop, backstop=0, after_stop=60)
    assert not host.is_alive()          # the stop reached the host and the wait saw it end
    assert [r[:3] for r in stop.reasons] == [("timeout", "the run passed --run-timeout on the controller's clock", None)]
    assert said == ["the run passed --run-timeout on the controller's clock: stopping every rank on every host"]
    assert stop.joined == [60]           # the stopper gets after_stop to reach every host


def test_a_run_within_its_backstop_is_not_stopped():
    host = Host(on_join=lambda h: h.release.set())     # the host ends at the first poll
    stop = RecordingStopper(1, lambda i: None, lambda s: None)
    host.start()
    wait([host], stop, backstop=3600, after_stop=5)
    assert not host.is_alive() and stop.reasons == [] and stop.joined == [5]


def test_after_a_stop_the_wait_goes_on_until_the_hosts_end():
    # the stop is sent at once; this host takes three more polls to end, well within after_stop
    seen = []

    def on_join(h):
        if stop.at is not None:
            seen.append(h.joins)
            if len(seen) == 3:
                h.release.set()
    host = Host(on_join)
    stop = Stopper(1, lambda i: None, lambda s: None)
    host.start()
    wait([host], stop, backstop=0, after_stop=600)
    assert not host.is_alive() and len(seen) == 3


def test_a_host_that_never_ends_holds_the_wait_no_longer_than_after_stop():
    host = Host()
    stop = RecordingStopper(1, lambda i: None, lambda s: None)
    host.start()
    wait([host], stop, backstop=0, after_stop=0)
    assert host.is_alive() and stop.reasons[0][0] == "timeout" and stop.joined == [0]
    host.release.set()


def test_ctrl_c_while_waiting_stops_every_host_as_interrupted():
    # a real SIGINT to this process, as the terminal sends it, at the first poll
    said = []

    def on_join(h):
        if h.joins == 1:
            os.kill(os.getpid(), signal.SIGINT)
    host = Host(on_join)
    stop = Stopper(1, lambda i: host.release.set(), said.append)
    # what the handler was before: Python's default, or SIG_IGN where the shell started the tests
    # in the background (a non-interactive shell's `&` ignores SIGINT)
    before = signal.getsignal(signal.SIGINT)
    host.start()
    wait([host], stop, backstop=3600, after_stop=60)
    assert not host.is_alive()
    assert [r[:3] for r in stop.reasons] == [("interrupted", "interrupted (Ctrl-C)", None)]
    assert said == ["interrupted (Ctrl-C): stopping every rank on every host"]
    assert signal.getsignal(signal.SIGINT) is before   # given back


def test_a_ctrl_c_in_the_last_moment_of_the_run_is_still_its_reason():
    # the signal lands after the host's thread ended: the loop ends, the interrupt still counts
    host = Host(lambda h: (h.release.set(), os.kill(os.getpid(), signal.SIGINT)) if h.joins == 1 else None)
    stop = Stopper(1, lambda i: None, lambda s: None)
    host.start()
    wait([host], stop, backstop=3600, after_stop=60)
    assert [r[0] for r in stop.reasons] == ["interrupted"]


def test_the_stop_reaches_every_host_at_once_in_a_daemon_thread():
    # one stuck host (its ssh hanging) must not hold the others' stop, nor envcheck's exit
    n = 40                                     # more than fan_out's default width
    barrier = threading.Barrier(n, timeout=30)
    stop = Stopper(n, lambda i: barrier.wait(), lambda s: None)
    stop.request("host", "the connection to node07", "node07")
    assert stop.thread.daemon
    stop.join(60)
    assert not barrier.broken and not stop.thread.is_alive()


def test_joining_a_stopper_that_never_stopped_returns_and_a_stuck_one_is_waited_for_at_most_the_timeout():
    quiet_stop().join(0)
    stuck = threading.Event()
    stop = Stopper(1, lambda i: stuck.wait(), lambda s: None)
    stop.request("interrupted", "interrupted (Ctrl-C)")
    stop.join(0.05)
    assert stop.thread.is_alive()
    stuck.set()
    stop.join(30)
    assert not stop.thread.is_alive()


def test_a_rank_that_raised_and_was_stopped_while_exiting_is_named_not_the_peer_it_brought_down():
    # the race seen in CI: rank 2 raised; rank 3, in a gloo allreduce with it, aborted at once
    # and was heard first; then the stop SIGTERMed rank 2 while its interpreter was exiting
    st = states(0, 0, -15, -6)
    st[2].stopped = True
    st[2].end, st[3].end = 4.0, 3.5
    st[2].tail.extend(["step 3", "Traceback (most recent call last):", '  File "ddp_tiny.py", line 40',
                       "RuntimeError: rank 2 raised (--raise-rank)"])
    st[3].tail.extend(["RuntimeError: [../gloo/transport/tcp/pair.cc:553] Connection closed by peer "
                       "[10.0.0.3]:60089. This is typically caused by a remote worker crashing.",
                       "terminate called without an active exception"])
    f = failure(st, [], quiet_stop(), 60)
    assert (f.kind, f.rank, f.host, f.exit_code, f.signal) == ("rank_failed", 2, "node03", None, None)
    assert f.message == ("rank 2 on node03 raised (its log ends in a Python traceback) and was stopped "
                         "while exiting; every other rank was stopped")
    assert f.log_tail[-1] == "RuntimeError: rank 2 raised (--raise-rank)" and exit_code(f) == 1
    st[2].exit_code = 1     # it exited with its own code as the stop came
    assert (failure(st, [], quiet_stop(), 60).exit_code, failure(st, [], quiet_stop(), 60).rank) == (1, 2)
    # without its traceback the victim is all there is: named, and said to be one (no OOM hint)
    st[2].tail.clear()
    f = failure(st, [], quiet_stop(), 60)
    assert (f.kind, f.rank, f.signal) == ("rank_killed", 3, 6)
    assert "after a peer's connection closed under it" in f.message and "out of memory" not in f.fix


def test_a_rank_that_aborted_itself_is_not_said_to_be_out_of_memory():
    f = failure(states(0, -6), [], quiet_stop(), 60)
    assert (f.kind, f.rank, f.signal) == ("rank_killed", 1, 6)
    assert f.fix == "see its log tail (it aborted itself: a C++ terminate or assert)"
