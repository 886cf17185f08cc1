"""What the provisioning operations share: reading a node (the probe's sections, one command),
privileges (root or sudo), running one node-side command with them, and the per-node outcome
the CLI prints.

The sudo password is handed to `sudo -S` on stdin only: never on a command line, in an
environment variable of the remote command, in a RunResult's command, or in a log.
"""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple

from envcheck.audit.probe import ProbeError, parse_probe_result, show_probe
from envcheck.facts.schema import Facts
from envcheck.model import Outcome
from envcheck.remote import DEFAULT_TIMEOUT, Remote, RunResult, fan_out


@dataclass(frozen=True)
class ProbeRequest:
    """What an operation reads on a node: the probe's sections, the places and the start-up files
    they look at. `--show-probe` prints exactly this, and exactly this runs (as the login user:
    the privilege section then says whether it is root or has sudo)."""
    only: Tuple[str, ...]
    paths: Tuple[str, ...] = ()
    files: Tuple[str, ...] = ()

    def show(self) -> Tuple[str, str]:
        """(the command line, the script it reads on stdin)."""
        return show_probe(only=self.only, paths=self.paths, files=self.files)


@dataclass
class NodeRead:
    """The probe's answer on one node: its facts, or why there are none."""
    facts: Optional[Facts] = None
    error: Optional[str] = None
    unreachable: bool = False      # no connection, or no answer in time: the node's state is unknown


def read_node(remote: Remote, request: ProbeRequest, timeout: float) -> NodeRead:
    """The sections of `request` on the node, one command; never raises for a node problem."""
    command, script = request.show()
    res = remote.run(command, stdin=script, timeout=timeout)
    try:
        return NodeRead(parse_probe_result(remote.name, res))
    except ProbeError as e:
        if res.error and res.exit_code is None:  # no connection, or no answer in time
            return NodeRead(error=res.error, unreachable=True)
        return NodeRead(error=e.reason + (f" (fix: {e.fix})" if e.fix else ""))


@dataclass
class Privilege:
    """How commands that need root run on one node."""
    mode: str                       # root | sudo-nopasswd | sudo-password | none
    password: Optional[str] = field(default=None, repr=False)

    @property
    def is_root(self) -> bool:
        return self.mode in ("root", "sudo-nopasswd") or (self.mode == "sudo-password" and self.password is not None)

    def wrap(self, command: str) -> "tuple[str, Optional[str]]":
        """(command line, stdin) that runs `command` as root."""
        if self.mode == "root" or self.mode == "none":
            return command, None
        inner = "sh -c " + shlex.quote(command)
        if self.mode == "sudo-nopasswd":
            return "sudo -n -- " + inner, None
        # -p '' keeps sudo's prompt out of the output; the password is the first stdin line
        return "sudo -S -p '' -- " + inner, (self.password or "") + "\n"


def privilege_from_fact(mode: str, use_sudo: bool, password_source: Optional[Callable[[], str]]) -> Privilege:
    """The privilege to use on a node, given the probe's privilege section there (its mode)."""
    if mode == "sudo-password" and use_sudo and password_source is not None:
        return Privilege(mode, password_source())
    if mode in ("sudo-nopasswd", "sudo-password") and not use_sudo:
        return Privilege("none")
    return Privilege(mode)


def run_priv(remote: Remote, command: str, priv: Optional[Privilege], *, root: bool = True,
             timeout: float = DEFAULT_TIMEOUT) -> RunResult:
    """Run `command` on the node, as root when `root` (through sudo when that is how)."""
    if root and priv is not None:
        line, stdin = priv.wrap(command)
        res = remote.run(line, stdin=stdin, timeout=timeout)
        res.command = command  # never keep the sudo wrapper (nor anything near the password)
        if priv.mode.startswith("sudo") and res.exit_code == 1 and (
                "incorrect password" in res.stderr or "a password is required" in res.stderr):
            res.error = ("sudo refused: wrong or missing password (fix: check the password, "
                         "ENVCHECK_SUDO_PASSWORD, or the node's sudoers rule)")
        return res
    return remote.run(command, timeout=timeout)


@dataclass
class NodeOutcome:
    """What happened (or would happen) on one node; the CLI renders it."""
    host: str
    status: str = "unchanged"       # unchanged | changed | would-change | refused | failed
    lines: List[str] = field(default_factory=list)   # plan / what was done, one item per line
    problems: List[str] = field(default_factory=list)  # preflight refusals, all at once
    error: Optional[str] = None
    log_tail: str = ""
    bytes_uploaded: int = 0
    installers_run: int = 0
    commands: List[str] = field(default_factory=list)   # --dry-run: the exact node-side commands

    @property
    def ok(self) -> bool:
        return self.status in ("unchanged", "changed", "would-change")

    def fail(self, status: str, error: str, log_tail: str = "") -> "NodeOutcome":
        self.status, self.error, self.log_tail = status, error, log_tail
        return self


def outcome_of(outcomes: Sequence["NodeOutcome"]) -> Outcome:
    """Refused or failed nodes are errors, unreachable ones unknown (model.Outcome: the exit code)."""
    unreachable = sum(o.status == "unreachable" for o in outcomes)
    return Outcome(errors=sum(not o.ok for o in outcomes) - unreachable, unknown=unreachable)


def on_nodes(remotes: Sequence[Remote], fn: Callable[[Remote], "NodeOutcome"], forks: int) -> List["NodeOutcome"]:
    """fn on every node, at most `forks` at once, each connection closed after; a node whose fn
    raised (a bug, or an error worded for the user) gets a failed outcome, never a traceback."""
    try:
        return fan_out(list(remotes), fn, forks=forks).values_or(
            lambda remote, e: NodeOutcome(remote.name).fail("failed", getattr(e, "one_line", lambda: str(e))()))
    finally:
        for r in remotes:
            r.close()
