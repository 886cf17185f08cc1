"""Why a run of ranks failed: one typed record for nccl-test and launch (and doctor, which reads
nccl-test's), the kinds it can be, which of them blame the host they name, and the rule that
names the first failing rank among those that ended.

The rule, for both workloads: a rank that ended on its own beats the ranks whose collectives
failed because of it. Its peers notice within moments (gloo: a closed connection; NCCL: a
watchdog), so among the ranks that ended within WINDOW seconds of the first, one killed by a
signal from outside (kill -9, the OOM killer) is named before those that exited with an error;
then the earliest, then the lowest rank. A rank that ended because the run was being stopped is
never a cause.

Where the ranks' log tails are known (launch), they sharpen the rule for one race: the rank that
raised is still tearing its interpreter down when a peer in a collective with it dies at once of
the closed connection (gloo: "Connection closed by peer", then C++ terminate, SIGABRT), so the
victim is heard first and the raiser is then stopped. So SIGABRT counts as an error exit (the
process aborted itself; no one killed it), a rank whose tail shows a peer's connection failing is
a victim, named only when no other rank is to blame, and a rank whose tail holds its own Python
traceback raised: even when stopped (it raised before the stop reached it) or heard later than
the window (the stop reached its host late), it is named before the victims, after any rank that
ended on its own without a peer's error near the first.
"""
from __future__ import annotations

import re
import signal
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence

from envcheck.errors import EXIT_INTERRUPTED
from envcheck.model import Outcome
from envcheck.ranks.records import Exit

# the exit codes of a failed run, as model.Outcome decides them for every command
FAIL_CODE = Outcome(errors=1).exit_code()      # FAIL: the script, or the audit, found it wrong
UNKNOWN_CODE = Outcome(unknown=1).exit_code()  # UNKNOWN: the run could not say

WINDOW = 0.5   # seconds: peers fail this soon after the rank that brought them down

# what a rank prints when a peer it was in a collective with went away (gloo, TCP, NCCL): it is a
# victim of that peer, not a cause
PEER_GONE = ("connection closed by peer", "remote worker crashing", "connection reset by peer",
             "remote process exited or there was a network error")
# a Python exception's own lines: the traceback's head, or its last line ("RuntimeError: boom"),
# also as torch >= 2.2 prints an uncaught exception in a process group: each line "[rankN]: "-prefixed
RAISED = re.compile(r"^(?:\[rank\d+\]:\s*)?(Traceback \(most recent call last\):|[A-Za-z_][\w.]*(Error|Exception)(: |$))")

# kind -> (whether `host` is the culprit, the exit code, what it means)
KINDS: Dict[str, tuple] = {
    "preflight": (True, UNKNOWN_CODE, "a check before any rank started failed on that host"),
    "audit": (True, FAIL_CODE, "the audit found errors (launch, without --force)"),
    "setup": (True, UNKNOWN_CODE, "a rank could not start (torch, CUDA, the device)"),
    "rank_lost": (True, UNKNOWN_CODE, "a rank died mid-run, or never reported its exit"),
    "rank_failed": (True, FAIL_CODE, "the user's script exited non-zero on that rank (launch)"),
    "rank_killed": (True, UNKNOWN_CODE, "a rank was killed by a signal (launch)"),
    "missing_rank": (True, UNKNOWN_CODE, "a rank never reported, though every host answered"),
    "host": (True, UNKNOWN_CODE, "the transport failed: unreachable, auth, a timeout"),
    "host_lost": (True, UNKNOWN_CODE, "a host's connection dropped mid-run (launch)"),
    # the host named is the rank that waited; `suspects` holds the hosts of the ranks waited for
    "rendezvous": (False, UNKNOWN_CODE, "a rank waited in the rendezvous for ranks that never joined"),
    "timeout": (False, UNKNOWN_CODE, "a collective, or the whole run, did not finish in time"),
    "collective_error": (False, UNKNOWN_CODE, "a collective raised (a peer's connection closed)"),
    "interrupted": (False, EXIT_INTERRUPTED, "Ctrl-C on the controller"),
    "unknown": (False, UNKNOWN_CODE, "the run failed and no record says why"),
}


@dataclass
class Failure:
    kind: str
    message: str
    host: Optional[str] = None
    rank: Optional[int] = None
    fix: str = ""
    suspects: Optional[List[str]] = None    # timeouts: the hosts of the ranks that never joined or hung
    exit_code: Optional[int] = None         # a rank's own exit code (launch)
    signal: Optional[int] = None            # the signal that killed it (launch)
    log_tail: Optional[List[str]] = None    # its last lines of output (launch)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown failure kind {self.kind!r}")

    @property
    def culprit(self) -> Optional[str]:
        """The host to blame: the one named, where that is the broken one (a rank that died or
        could not start there); a timeout names the rank that waited, which usually is not."""
        return self.host if KINDS[self.kind][0] else None

    @property
    def exit_code_of_run(self) -> int:
        return KINDS[self.kind][1]

    def to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"kind": self.kind, "message": self.message, "host": self.host,
                             "rank": self.rank, "fix": self.fix}
        if self.suspects is not None:
            d["suspects"] = list(self.suspects)
        if self.kind in ("rank_failed", "rank_killed"):
            d["exit_code"], d["signal"] = self.exit_code, self.signal
        if self.log_tail is not None:
            d["log_tail"] = list(self.log_tail)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Failure":
        kind = d.get("kind") if d.get("kind") in KINDS else "unknown"
        return cls(kind, str(d.get("message") or kind), d.get("host"), d.get("rank"), str(d.get("fix") or ""),
                   d.get("suspects"), d.get("exit_code"), d.get("signal"), d.get("log_tail"))


def peer_gone(tail: Sequence[str]) -> bool:
    """Whether a rank's log tail shows a peer's connection failing under it (a victim)."""
    return any(m in line.lower() for line in tail for m in PEER_GONE)


def raised(tail: Sequence[str]) -> bool:
    """Whether a rank's log tail holds its own Python exception (not a peer's failure)."""
    return not peer_gone(tail) and any(RAISED.match(line.strip()) for line in tail)


def external_kill(e: Exit) -> bool:
    """Killed by a signal from outside: SIGABRT is the process aborting itself (C++ terminate)."""
    return e.signal is not None and e.signal != signal.SIGABRT


def first_failed(exits: Iterable[Exit],
                 tails: Optional[Mapping[int, Sequence[str]]] = None) -> Optional[Exit]:
    """The rank that brought the run down, among the exits the launchers saw (the rule above);
    tails: each rank's last lines of output, where known."""
    exits, tails = list(exits), tails or {}
    cands = [e for e in exits if e.code != 0 and not e.stopped]
    if not cands:
        return None
    t0 = min((e.time for e in cands if e.time is not None), default=None)
    near = [e for e in cands if t0 is None or e.time is None or e.time <= t0 + WINDOW]
    # ranks that raised, whenever heard: stopped while exiting (their exits come after the stop),
    # or on a host the stop reached late; they go after any rank near the first one but a victim
    near += [e for e in exits if e not in near and e.code != 0 and raised(tails.get(e.rank, ()))]

    def order(e: Exit) -> tuple:
        tail = tails.get(e.rank, ())
        cls = 2 if e.stopped else 0 if external_kill(e) else 3 if peer_gone(tail) else 1
        return cls, e.time if e.time is not None else float("inf"), e.rank

    return min(near, key=order)
