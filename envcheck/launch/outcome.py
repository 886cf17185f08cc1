"""How a launch ends: stopping every host once (the first reason wins), waiting with bounds
(Ctrl-C included), and naming what failed first, with the one exit code it maps to."""
from __future__ import annotations

import contextlib
import signal
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from envcheck.errors import EXIT_OK
from envcheck.launch.stream import HostStream, RankState, stack_dump, waits_in_torch
from envcheck.ranks import records as rr
from envcheck.ranks.failure import Failure, external_kill, first_failed, peer_gone, raised
from envcheck.remote import fan_out

# reasons the controller itself stops a run for: a rank exit it hears of after one of these was
# caused by the stop (a peer's collective failing), not a cause
CONTROLLER_KINDS = ("host", "timeout", "interrupted")


class Stopper:
    """Stops the launchers on every host, once, in the background; remembers every reason."""

    def __init__(self, hosts: int, stop_host: Callable[[int], Any], say: Callable[[str], None]):
        self.hosts, self.stop_host, self.say = hosts, stop_host, say
        self.reasons: List[Tuple[str, str, Optional[str], float]] = []
        self.lock = threading.Lock()
        self.thread: Optional[threading.Thread] = None

    def request(self, kind: str, why: str, host: Optional[str] = None) -> None:
        with self.lock:
            self.reasons.append((kind, why, host, time.monotonic()))
            if self.thread is not None:
                return
            self.thread = threading.Thread(target=self._stop_all, daemon=True)
        self.say(f"{why}: stopping every rank on every host")
        self.thread.start()

    def _stop_all(self) -> None:
        fan_out(list(range(self.hosts)), self.stop_host, self.hosts)

    @property
    def at(self) -> Optional[float]:
        return self.reasons[0][3] if self.reasons else None

    def controller(self) -> Optional[Tuple[str, str, Optional[str], float]]:
        return next((r for r in self.reasons if r[0] in CONTROLLER_KINDS), None)

    def join(self, timeout: float) -> None:
        if self.thread is not None:
            self.thread.join(timeout)


@contextlib.contextmanager
def interrupts() -> Iterator[List[int]]:
    """While inside: Ctrl-C (SIGINT) appends to the list instead of raising KeyboardInterrupt.
    An exception raised at whatever bytecode the main thread was at can leave a lock held or a
    thread's state half-updated, and the stop it should start then never runs; a flag read by the
    wait loop cannot. Outside the main thread (no signals there) the list stays empty."""
    heard: List[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield heard
        return
    before = signal.signal(signal.SIGINT, lambda signum, _frame: heard.append(signum))
    try:
        yield heard
    finally:
        signal.signal(signal.SIGINT, before)


def wait(threads: Sequence[threading.Thread], stop: Stopper, backstop: float,
         after_stop: float) -> None:
    """Until every host's launcher has answered; a stopped run gets `after_stop` seconds more at
    most (a host lost without a word must not hold us), the whole run `backstop`. Ctrl-C stops
    every rank; a second one during the final join of the stop (after this loop) exits at once."""
    end = time.monotonic() + backstop
    with interrupts() as heard:
        while any(t.is_alive() for t in threads):
            if heard:
                del heard[:]
                stop.request("interrupted", "interrupted (Ctrl-C)")
            for t in threads:
                t.join(0.1)
            if stop.at is not None and time.monotonic() > stop.at + after_stop:
                break
            if time.monotonic() > end and stop.at is None:
                stop.request("timeout", "the run passed --run-timeout on the controller's clock")
        if heard:   # the last host ended as the Ctrl-C came: still the reason the run ended
            stop.request("interrupted", "interrupted (Ctrl-C)")
    stop.join(after_stop)


def exit_code(failure: Optional[Failure]) -> int:
    return failure.exit_code_of_run if failure else EXIT_OK


def _signame(n: int) -> str:
    try:
        return signal.Signals(n).name
    except ValueError:
        return str(n)


def _rank_failure(s: RankState, x: rr.Exit) -> Failure:
    """The failure a rank's own end means: what first_failed named, said as it happened."""
    tail, fix = list(s.tail)[-20:], "see its log tail"
    if x.stopped:   # it raised, then the stop reached it while it was still exiting
        how = (f"exited with code {x.code} while the run was being stopped" if x.code > 0
               else "was stopped while exiting")
        return Failure("rank_failed", f"rank {s.rank} on {s.host} raised (its log ends in a Python "
                       f"traceback) and {how}; every other rank was stopped", s.host, s.rank, fix,
                       exit_code=x.code if x.code > 0 else None, log_tail=tail)
    how = (f"was killed by signal {x.signal} ({_signame(x.signal)})" if x.signal
           else f"exited with code {x.code}")
    if not external_kill(x) and peer_gone(list(s.tail)):
        how += " after a peer's connection closed under it (the peer that went first was not heard)"
        fix = "see the other ranks' logs: a peer went away first; then its own log tail"
    elif x.signal == signal.SIGABRT:
        fix += " (it aborted itself: a C++ terminate or assert)"
    elif x.signal:
        fix += " (killed: out of memory? dmesg on that host)"
    return Failure("rank_killed" if x.signal else "rank_failed",
                   f"rank {s.rank} on {s.host} {how}; every other rank was stopped", s.host, s.rank, fix,
                   exit_code=None if x.signal else x.code, signal=x.signal, log_tail=tail)


def failure(states: Dict[int, RankState], streams: Sequence[HostStream], stop: Stopper,
            timeout: float) -> Optional[Failure]:
    """The first cause: a rank that ended badly on its own beats what the stop then caused (the
    harness's rule, envcheck/ranks/failure.py, among the exits heard before the controller
    itself stopped the run, and those of ranks whose log holds their own Python exception: a
    rank that raised is still exiting when a victim of its closed connection is heard first and
    the controller's stop reaches it)."""
    ctrl = stop.controller()
    x = first_failed((rr.Exit(s.rank, s.local_rank, s.exit_code, s.end, s.stopped)
                      for s in states.values() if s.exit_code is not None
                      and (ctrl is None or (s.arrived or 0) <= ctrl[3] or raised(list(s.tail)))),
                     {k: list(s.tail) for k, s in states.items()})
    if x is not None:
        return _rank_failure(states[x.rank], x)
    if ctrl is None:
        lost = [s for s in states.values() if s.exit_code is None]
        if not lost:
            return None
        s = lost[0]
        return Failure("rank_lost", f"rank {s.rank} on {s.host} never reported its exit", s.host, s.rank,
                       log_tail=list(s.tail)[-20:])
    kind, why, host, _ = ctrl
    if kind == "timeout":
        return _hung(states, streams, timeout)
    if kind == "host":
        return Failure("host_lost", f"lost {why}; every other rank was stopped", host, None,
                       "check that host (sshd, network, power); its ranks were stopped by its "
                       "launcher when the connection closed")
    return Failure("interrupted", "interrupted (Ctrl-C): every rank on every host was stopped")


def _hung(states: Dict[int, RankState], streams: Sequence[HostStream], timeout: float) -> Failure:
    """Name the rank that hung: still running at the timeout, and (from the Python stacks every
    rank dumped then) not inside torch, where its peers sat waiting for it in a collective."""
    running = sorted({k for st in streams for rec in rr.of_type(st.records, rr.Launcher)
                      if rec.status == "deadline" for k in rec.running if k in states})
    if not running:
        running = [k for k, s in sorted(states.items()) if s.stopped or s.exit_code is None]
    dumps = {k: stack_dump(list(states[k].tail)) for k in running}
    waiting = [k for k in running if waits_in_torch(dumps[k])]
    hung = [k for k in running if k not in waiting]
    named = (hung or running or [None])[0]
    where = ", ".join(f"{k} ({states[k].host})" for k in running) or "none"
    msg = f"the run passed --run-timeout {timeout:g} s; ranks still running: {where}"
    if named is not None and hung and waiting:
        msg = (f"rank {named} on {states[named].host} hung: still running at --run-timeout "
               f"{timeout:g} s in the script's own code, while rank(s) "
               f"{', '.join(str(k) for k in waiting)} waited for it inside torch; {msg}")
    elif named is not None:
        msg = f"rank {named} on {states[named].host} was still running: {msg}"
    return Failure("timeout", msg, states[named].host if named is not None else None, named,
                   "see the rank's Python stack (its log tail); raise --run-timeout if the run only "
                   "needed longer", sorted({states[k].host for k in hung}),
                   log_tail=(dumps.get(named) or list(states[named].tail) if named is not None else [])[-25:])
