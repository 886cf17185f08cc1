"""Why a failed all-reduce run failed: the first cause in the launchers' and workers' records
(envcheck/node/allreduce_launcher.py, allreduce_worker.py), as report.failure. Pure: records
and results in, one {"kind", "host", "rank", "message", "fix"[, "suspects"]} out.

The order is the reasoning: a rank that could not start or exited on its own beats the timeouts
it caused in the others; a rank that timed out waiting names the ranks that never joined or
never answered as suspects; the launcher's own deadline, then a host whose launcher failed."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from envcheck.allreduce import bandwidth as am
from envcheck.remote import Remote, RunResult

Records = Dict[str, List[Dict[str, Any]]]
Cause = Dict[str, Any]
NET_FIX = "check --ifname and the firewall between the nodes"


def first_cause(remotes: Sequence[Remote], results: List[Any], per_host: Records,
                host_of: Dict[int, str], missing: List[int], first_failed: List[str]) -> Cause:
    """Name the first cause: a rank that exited on its own beats the timeouts it caused."""
    order = first_failed + [r.name for r in remotes if r.name not in first_failed]
    miss = (f"; ranks that never joined: {', '.join(f'{k} ({host_of[k]})' for k in missing)}"
            if missing else "")
    cause = _rank_that_ended(order, per_host, miss)
    if cause:
        return cause
    # a rank that neither finished nor timed out itself is the one the others waited for
    spoke = {x.get("rank") for recs in per_host.values() for x in recs
             if x["type"] in ("timeout", "error")}
    silent = [k for k in sorted(host_of) if k not in spoke and k not in missing]
    if silent and spoke:
        miss += ("; rank(s) that never reported a timeout themselves (stuck or too slow): "
                 + ", ".join(f"{k} ({host_of[k]})" for k in silent))
    # the hosts to look at: a rank that reported a timeout or error was waiting for someone
    suspects = sorted({host_of[k] for k in missing + (silent if spoke else [])})
    return (_rank_that_waited(order, per_host, miss, suspects) or _run_deadline(order, per_host, miss)
            or _host_failure(remotes, results, miss)
            or {"kind": "unknown", "host": None, "rank": None, "message": "the run failed" + miss,
                "fix": ""})


def _rank_that_ended(order: List[str], per_host: Records, miss: str) -> Optional[Cause]:
    """A rank that could not start, or exited (or was killed) mid-run without timing out."""
    for name in order:
        for rec in per_host.get(name, []):
            if rec["type"] == "error" and rec.get("phase") == "setup":
                return {"kind": "setup", "host": name, "rank": rec.get("rank"),
                        "message": f"rank {rec.get('rank')} on {name} could not start: "
                                   f"{rec.get('message')}{miss}",
                        "fix": "see the log below; torch must import under --node-python"}
        exits = [x for x in per_host.get(name, []) if x["type"] == "rank_exit"]
        timeouts = [x for x in per_host.get(name, []) if x["type"] == "timeout"]
        if exits and not timeouts and exits[0].get("code") not in (3,):
            x = exits[0]
            code = x.get("code")
            how = f"was killed by signal {-code}" if isinstance(code, int) and code < 0 \
                else f"exited with code {code}"
            return {"kind": "rank_lost", "host": name, "rank": x.get("rank"),
                    "message": f"rank {x.get('rank')} on {name} {how} mid-run; every other "
                               f"rank was stopped{miss}",
                    "fix": "see that host's log below (out of memory? killed?)"}
    return None


def _rank_that_waited(order: List[str], per_host: Records, miss: str,
                      suspects: List[str]) -> Optional[Cause]:
    """The first rank that timed out or failed in a phase: the rendezvous, or a collective."""
    for name in order:
        for rec in per_host.get(name, []):
            if rec["type"] not in ("timeout", "error"):
                continue
            phase = rec.get("phase") or "?"
            what = phase + (f" at {am.human_size(int(rec['bytes']))}B" if rec.get("bytes") else "")
            if rec["type"] == "timeout":
                how = f"{what} did not finish in {rec.get('seconds'):g} s"
            else:
                how = f"{what} failed: {rec.get('message')}"
            if phase == "rendezvous":
                return {"kind": "rendezvous", "host": name, "rank": rec.get("rank"),
                        "message": f"rank {rec.get('rank')} on {name}: {how}{miss}",
                        "suspects": suspects,
                        "fix": f"a rank never joined: see its host's log; {NET_FIX}"}
            # gloo/NCCL's own timeouts arrive as errors ("Timed out waiting 4000ms for recv")
            timed_out = rec["type"] == "timeout" or "timed out" in str(rec.get("message")).lower()
            return {"kind": "timeout" if timed_out else "collective_error",
                    "host": name, "rank": rec.get("rank"), "suspects": suspects,
                    "message": f"rank {rec.get('rank')} on {name}: {how}{miss}",
                    "fix": f"a peer rank died, hung or cannot reach the others: {NET_FIX}; see the logs"}
    return None


def _run_deadline(order: List[str], per_host: Records, miss: str) -> Optional[Cause]:
    for name in order:
        for rec in per_host.get(name, []):
            if rec["type"] == "launcher" and rec.get("status") == "deadline":
                return {"kind": "timeout", "host": name, "rank": None,
                        "message": f"the run on {name} {rec.get('why')} (--run-timeout) and was "
                                   f"stopped{miss}",
                        "fix": "raise --run-timeout, or shrink the sweep (--max-bytes, --iters)"}
    return None


def _host_failure(remotes: Sequence[Remote], results: List[Any], miss: str) -> Optional[Cause]:
    for r, res in zip(remotes, results):
        if not (isinstance(res, RunResult) and res.ok):
            why = res.error if isinstance(res, RunResult) else str(res)
            why = why or f"the launcher exited with code {res.exit_code}"
            return {"kind": "host", "host": r.name, "rank": None,
                    "message": f"{r.name}: {why}{miss}", "fix": "see that host's log below"}
    return None
