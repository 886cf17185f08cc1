"""Why a failed all-reduce run failed: the first cause in the launchers' and workers' records
(envcheck/ranks/records.py), as report.failure. Pure: records and results in, one Failure out
(envcheck/ranks/failure.py).

The order is the reasoning: a rank that could not start or exited on its own beats the timeouts
it caused in the others (the harness's rule names it among the ranks that ended); a rank that
timed out waiting names the ranks that never joined or never answered as suspects; the
launcher's own deadline, then a host whose launcher failed."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from envcheck.allreduce import bandwidth as am
from envcheck.ranks import records as rr
from envcheck.ranks.failure import Failure, first_failed
from envcheck.remote import Remote, RunResult

Records = Dict[str, List[rr.Record]]
NET_FIX = "check --ifname and the firewall between the nodes"
EXIT_LOST = 3   # the worker's own exit when a collective failed or timed out: it waited, it is no cause


def first_cause(remotes: Sequence[Remote], results: List[Any], per_host: Records,
                host_of: Dict[int, str], missing: List[int], first_failed_hosts: List[str]) -> Failure:
    """Name the first cause: a rank that exited on its own beats the timeouts it caused."""
    order = first_failed_hosts + [r.name for r in remotes if r.name not in first_failed_hosts]
    miss = (f"; ranks that never joined: {', '.join(f'{k} ({host_of[k]})' for k in missing)}"
            if missing else "")
    cause = _rank_that_ended(order, per_host, miss)
    if cause:
        return cause
    # a rank that neither finished nor timed out itself is the one the others waited for
    spoke = {x.rank for recs in per_host.values() for x in rr.of_type(recs, rr.Timeout, rr.Error)}
    silent = [k for k in sorted(host_of) if k not in spoke and k not in missing]
    if silent and spoke:
        miss += ("; rank(s) that never reported a timeout themselves (stuck or too slow): "
                 + ", ".join(f"{k} ({host_of[k]})" for k in silent))
    # the hosts to look at: a rank that reported a timeout or error was waiting for someone
    suspects = sorted({host_of[k] for k in missing + (silent if spoke else [])})
    return (_rank_that_waited(order, per_host, miss, suspects) or _run_deadline(order, per_host, miss)
            or _host_failure(remotes, results, miss)
            or Failure("unknown", "the run failed" + miss))


def _rank_that_ended(order: List[str], per_host: Records, miss: str) -> Optional[Failure]:
    """A rank that could not start, or exited (or was killed) mid-run without timing out."""
    for name in order:
        recs = per_host.get(name, [])
        for rec in rr.of_type(recs, rr.Error):
            if rec.phase == "setup":
                return Failure("setup", f"rank {rec.rank} on {name} could not start: {rec.message}{miss}",
                               name, rec.rank, "see the log below; torch must import under --node-python")
        x = first_failed(rr.of_type(recs, rr.Exit))
        if x is not None and not any(rr.of_type(recs, rr.Timeout)) and x.code != EXIT_LOST:
            how = f"was killed by signal {x.signal}" if x.signal else f"exited with code {x.code}"
            return Failure("rank_lost", f"rank {x.rank} on {name} {how} mid-run; every other rank "
                           f"was stopped{miss}", name, x.rank,
                           "see that host's log below (out of memory? killed?)")
    return None


def _rank_that_waited(order: List[str], per_host: Records, miss: str,
                      suspects: List[str]) -> Optional[Failure]:
    """The first rank that timed out or failed in a phase: the rendezvous, or a collective."""
    for name in order:
        for rec in rr.of_type(per_host.get(name, []), rr.Timeout, rr.Error):
            phase = rec.phase or "?"
            what = phase + (f" at {am.human_size(rec.bytes)}B" if rec.bytes else "")
            if isinstance(rec, rr.Timeout):
                how = f"{what} did not finish in {rec.seconds:g} s"
            else:
                how = f"{what} failed: {rec.message}"
            message = f"rank {rec.rank} on {name}: {how}{miss}"
            if phase == "rendezvous":
                return Failure("rendezvous", message, name, rec.rank,
                               f"a rank never joined: see its host's log; {NET_FIX}", suspects)
            # gloo/NCCL's own timeouts arrive as errors ("Timed out waiting 4000ms for recv")
            timed_out = isinstance(rec, rr.Timeout) or "timed out" in rec.message.lower()
            return Failure("timeout" if timed_out else "collective_error", message, name, rec.rank,
                           f"a peer rank died, hung or cannot reach the others: {NET_FIX}; see the logs",
                           suspects)
    return None


def _run_deadline(order: List[str], per_host: Records, miss: str) -> Optional[Failure]:
    for name in order:
        for rec in rr.of_type(per_host.get(name, []), rr.Launcher):
            if rec.status == "deadline":
                return Failure("timeout", f"the run on {name} {rec.why} (--run-timeout) and was "
                               f"stopped{miss}", name, None,
                               "raise --run-timeout, or shrink the sweep (--max-bytes, --iters)")
    return None


def _host_failure(remotes: Sequence[Remote], results: List[Any], miss: str) -> Optional[Failure]:
    for r, res in zip(remotes, results):
        if not (isinstance(res, RunResult) and res.ok):
            why = res.error if isinstance(res, RunResult) else str(res)
            why = why or f"the launcher exited with code {res.exit_code}"
            return Failure("host", f"{r.name}: {why}{miss}", r.name, None, "see that host's log below")
    return None
