"""Slurm's view of a node, and the only calls envcheck makes to change it: `scontrol show node`,
drain with a reason, resume. Every call is a subprocess with its own timeout, killed with its
process group when the time is up: a hung slurmctld (or a hung stand-in scontrol) costs at most
that timeout, never the caller's deadline.

`scontrol -o show node` is parsed as text, not `--json`, so Slurm releases older than 21.08 work
too. Its one-line form ends with `Reason=TEXT [USER@TIME]` (later fields such as Comment= may
follow): the reason is read up to that bracket, so a reason containing `key=value` survives.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence

from envcheck.remote import kill_group

# base states and flags under which envcheck never drains nor resumes: an operator's business
HANDS_OFF_BASE = ("DOWN", "FUTURE", "UNKNOWN")
HANDS_OFF_FLAGS = ("MAINT", "RESERVED", "REBOOT_REQUESTED", "REBOOT_ISSUED", "POWERED_DOWN",
                   "POWERING_DOWN", "POWERING_UP", "POWER_DOWN", "INVALID_REG")
_REASON = re.compile(r" Reason=(?P<reason>.*?) \[(?P<user>[^@\]\s]*)@(?P<time>[^\]\s]*)\](?= \w+=|$)")
_STATE = re.compile(r"(?:^| )State=(\S+)")
_NAME = re.compile(r"^NodeName=(\S+)")


@dataclass
class NodeState:
    """One node as slurmctld sees it: `State=IDLE+DRAIN` → base IDLE, flags {DRAIN}."""
    name: str
    base: str = ""
    flags: List[str] = field(default_factory=list)
    reason: str = ""          # without Slurm's " [user@time]" suffix
    reason_user: str = ""
    reason_time: str = ""     # 2026-12-01T16:49:15, slurmctld's local time

    @property
    def state(self) -> str:
        return "+".join([self.base] + self.flags)

    @property
    def drained(self) -> bool:
        """Drained or draining: no new jobs start on it."""
        return "DRAIN" in self.flags or self.base in ("DRAINED", "DRAINING")

    @property
    def hands_off(self) -> str:
        """Why envcheck must leave the node alone ('' when it may act)."""
        if self.base in HANDS_OFF_BASE:
            return f"the node is {self.base}"
        for f in self.flags:
            if f in HANDS_OFF_FLAGS:
                return f"the node is in {f}"
        return ""


def parse_show_node(text: str) -> Dict[str, NodeState]:
    """`scontrol -o show node [NAME]` output -> {name: NodeState}."""
    out: Dict[str, NodeState] = {}
    for line in text.splitlines():
        m = _NAME.match(line.strip())
        if not m:
            continue
        st = NodeState(m.group(1))
        s = _STATE.search(line)
        if s:
            parts = s.group(1).split("+")
            st.base, st.flags = parts[0], parts[1:]
        r = _REASON.search(line)
        if r:
            st.reason, st.reason_user, st.reason_time = r.group("reason"), r.group("user"), r.group("time")
        elif " Reason=" in line:   # no bracket (an old or unusual release): the rest of the line
            st.reason = line.split(" Reason=", 1)[1].strip()
        out[st.name] = st
    return out


@dataclass
class Call:
    """One bounded client call: argv, exit code (None: not run to an exit), output, why not."""
    argv: List[str]
    rc: Optional[int] = None
    stdout: str = ""
    stderr: str = ""
    error: str = ""           # "timed out after 5 s", "scontrol not found"
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.error and self.rc == 0

    def why(self) -> str:
        """One line: the error, else scontrol's own last line and its exit code."""
        if self.error:
            return self.error
        tail = " ".join((self.stderr or self.stdout).strip().splitlines()[-1:])
        return f"exit {self.rc}: {tail}" if tail else f"exit {self.rc}"

    def line(self) -> str:
        return " ".join(shlex.quote(a) for a in self.argv)


def run_bounded(argv: Sequence[str], timeout: float, env: Optional[Dict[str, str]] = None) -> Call:
    """Run argv (no shell) for at most `timeout` seconds; never raises, never waits longer."""
    call = Call(list(argv))
    t0 = time.monotonic()
    if timeout <= 0:
        call.error = "no time left before the deadline"
        return call
    try:
        p = subprocess.Popen(call.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=env, start_new_session=True)
    except OSError as e:
        call.error = f"{argv[0]}: {e.strerror}"
        return call
    try:
        out, err = p.communicate(timeout=timeout)
        call.rc = p.returncode
    except subprocess.TimeoutExpired:
        kill_group(p.pid)
        for pipe in (p.stdout, p.stderr):
            if pipe:
                pipe.close()   # a child that left the group may hold them: do not wait for it
        p.wait()
        out, err = b"", b""
        call.error = f"{os.path.basename(argv[0])} timed out after {timeout:g} s"
    call.stdout, call.stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    call.seconds = time.monotonic() - t0
    return call


class Scontrol:
    """The scontrol calls envcheck makes, each bounded by `timeout` (and by what is left of a
    deadline, when one is given). `scontrol` names the binary (a HealthCheckProgram has no PATH)."""

    def __init__(self, scontrol: str = "scontrol", timeout: float = 5.0,
                 env: Optional[Dict[str, str]] = None, deadline: Optional[float] = None):
        self.scontrol = scontrol
        self.timeout = timeout
        self.env = env
        self.deadline = deadline       # time.monotonic() value past which nothing is started
        self.calls: List[Call] = []

    def _budget(self) -> float:
        if self.deadline is None:
            return self.timeout
        return min(self.timeout, self.deadline - time.monotonic())

    def _run(self, *args: str) -> Call:
        c = run_bounded([self.scontrol, *args], self._budget(), self.env)
        self.calls.append(c)
        return c

    def show(self, names: Sequence[str] = ()) -> "tuple[Dict[str, NodeState], Call]":
        """These nodes (all of the cluster's when none are named)."""
        c = self._run("-o", "show", "node", *([",".join(names)] if names else []))
        return (parse_show_node(c.stdout) if c.ok else {}), c

    def drain(self, name: str, reason: str) -> Call:
        return self._run(*drain_args(name, reason))

    def resume(self, name: str) -> Call:
        return self._run(*resume_args(name))


def drain_args(name: str, reason: str) -> List[str]:
    """Drain (or, on a drained node, re-word the reason of) one node."""
    return ["update", f"nodename={name}", "state=drain", f"reason={reason}"]


def resume_args(name: str) -> List[str]:
    return ["update", f"nodename={name}", "state=resume"]


def command_line(args: Sequence[str], scontrol: str = "scontrol") -> str:
    """The call as a user can paste it: `scontrol update nodename=node02 state=drain reason='…'`."""
    return " ".join(shlex.quote(a) for a in [scontrol, *args])
