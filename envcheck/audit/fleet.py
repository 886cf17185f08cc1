"""The fleet audit: the probe on every host (one SSH exec each, bounded fan-out), the per-host
rules, then the cross-node rules. Returns data; never prints (progress through on_done).

Used by `envcheck audit HOSTS` and by the doctor's audit step.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from envcheck import model
from envcheck.audit.probe import (DEEP_PROBE_TIMEOUT, PROBE_TIMEOUT, ProbeError, audit_host, judge_result,
                                  framed, parse_probe_result, probe_command, probe_source)
from envcheck.errors import UsageError
from envcheck.model import Finding, HostResult, sort_findings
from envcheck.remote import Outcome, Remote, RunResult, fan_out
from envcheck.rules.fleet import DriftRow, drift, fleet_findings
from envcheck.rules.health import expected_gpus


@dataclass
class FleetAudit:
    results: List[HostResult]               # input order; per-host + that host's fleet findings
    fleet: List[Finding] = field(default_factory=list)   # fleet findings naming no single host
    drift: List[DriftRow] = field(default_factory=list)

    @property
    def unreachable(self) -> List[HostResult]:
        return [r for r in self.results if not r.reachable]

    @property
    def all_findings(self) -> List[Finding]:
        out = [f for r in self.results for f in r.findings] + list(self.fleet)
        return sort_findings(out)

    def outcome(self) -> model.Outcome:
        """Its findings, skipped checks and the hosts that could not be audited, counted: the
        exit code and the verdict come from there (model.Outcome), for one host as for many."""
        return model.Outcome.of(self.all_findings, sum(len(r.skipped) for r in self.results), len(self.unreachable))

    def exit_code(self, strict: bool = False) -> int:
        return self.outcome().exit_code(strict)


def audit_fleet(remotes: Sequence[Remote], matrix, *, deep: bool = False,
                node_python: Optional[str] = None, timeout: Optional[float] = None,
                forks: int = 32, on_done: Optional[Callable[[HostResult], None]] = None,
                gpus_per_node: Optional[int] = None) -> FleetAudit:
    """Audit every host (the probe over one remote command each, at most `forks` at once), then
    compare the hosts. Host failures are data: they come back as HostResult.error.
    gpus_per_node: the GPU count every node must have (the PCI bus and the driver both)."""

    def one(remote: Remote) -> HostResult:
        return audit_host(remote, matrix, deep=deep, node_python=node_python, timeout=timeout)

    def done(o: Outcome) -> None:
        if on_done and o.ok:
            on_done(o.value)

    results: List[HostResult] = fan_out(list(remotes), one, forks, on_done=done).values_or(
        # a bug, not a host problem: still data
        lambda remote, e: HostResult(host=remote.name, error=f"internal error: {type(e).__name__}: {e}"))
    _expect_gpus(results, gpus_per_node)
    return compare(results)


# runs one command, with the same stdin, on many hosts at once: {host: its RunResult}
BatchRunner = Callable[[Sequence[str], str, str, float], Dict[str, RunResult]]


def audit_batch(hosts: Sequence[str], run_all: BatchRunner, matrix, *, deep: bool = False,
                node_python: Optional[str] = None, timeout: Optional[float] = None,
                gpus_per_node: Optional[int] = None) -> FleetAudit:
    """audit_fleet() through a transport that runs the probe on every host in one go (srun:
    envcheck/slurm/srun.py) instead of one remote command per host."""
    t = timeout or (DEEP_PROBE_TIMEOUT if deep else PROBE_TIMEOUT)
    raw = run_all(list(hosts), probe_command(deep=deep, node_python=node_python), framed(probe_source()), t)
    results = []
    for h in hosts:
        try:
            results.append(judge_result(HostResult(h, facts=parse_probe_result(h, raw[h], node_python)), matrix))
        except ProbeError as e:
            results.append(HostResult(h, error=e.reason + (f" (fix: {e.fix})" if e.fix else "")))
    _expect_gpus(results, gpus_per_node)
    return compare(results)


def _expect_gpus(results: List[HostResult], gpus_per_node: Optional[int]) -> None:
    if gpus_per_node is not None:
        for r in results:
            if r.reachable and r.facts is not None:
                r.findings += expected_gpus(r.facts, gpus_per_node)


def compare(results: List[HostResult]) -> FleetAudit:
    """Cross-node findings over the audited hosts; findings about one host go onto its result."""
    facts = {r.host: r.facts for r in results if r.reachable and r.facts is not None}
    by_host = {r.host: r for r in results}
    general: List[Finding] = []
    for f in fleet_findings(facts):
        if f.host and f.host in by_host:
            by_host[f.host].findings.append(f)
        else:
            general.append(f)
    for r in results:
        r.findings = sort_findings(r.findings)
    return FleetAudit(results=results, fleet=general, drift=drift(facts) if len(facts) > 1 else [])


def _safe_name(host: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.@-]", "_", host.replace(":", "_port"))


def save_facts(audit: FleetAudit, directory: str) -> List[str]:
    """Write each audited host's facts to DIR/HOST.json (atomically) for a later
    `envcheck check FILE`. Returns the paths written."""
    d = Path(directory)
    try:
        d.mkdir(exist_ok=True)   # the last directory only: a typo in its parent is not made
    except OSError as e:
        raise UsageError(f"cannot create --save directory {d}: {e.strerror}",
                         "give a directory you can write, e.g. --save ./facts") from e
    written = []
    for r in audit.results:
        if r.facts is None:
            continue
        path = d / f"{_safe_name(r.host)}.json"
        fd, tmp = tempfile.mkstemp(dir=str(d), prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "w") as fh:
                json.dump(r.facts, fh, indent=2, sort_keys=True)
                fh.write("\n")
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        written.append(str(path))
    return written

