"""The real steps behind `envcheck doctor`: the fleet audit (envcheck/audit/fleet.py) and the
all-reduce (envcheck/allreduce/run.py over SSH, or srun inside a Slurm allocation), translated into
the doctor's terms (envcheck/doctor/run.py)."""
from __future__ import annotations

import dataclasses
import shutil
from typing import Dict, List, Optional, Sequence, Tuple

from envcheck.allreduce.linkrate import allowed
from envcheck.allreduce.pairs import figures_of, pair_spec
from envcheck.allreduce.run import Options, Report, run_allreduce
from envcheck.allreduce.verdict import judge_report, preflight_refusals
from envcheck.audit.fleet import audit_batch, audit_fleet
from envcheck.audit.probe import ProbeError, parse_probe_result, probe_command, shipped_source
from envcheck.doctor.dcgm import run_dcgm
from envcheck.doctor.health import CheckResult
from envcheck.doctor.run import AllreduceOutcome
from envcheck.errors import UsageError
from envcheck.facts import views
from envcheck.slurm.srun import SrunRunner, require_allocation
from envcheck.slurm.srun_ranks import allreduce as srun_allreduce
from envcheck.model import HostResult
from envcheck.remote import Remote, RunResult, fan_out

BISECT_TIMEOUT = 30.0   # seconds per collective / rendezvous in a bisection run
FLEET_BUDGET = 2.0      # seconds of timed all-reduces at the one size: fewer iterations through a slow link


class DoctorBackend:
    def __init__(self, remotes: Sequence[Remote], matrix, *, node_python: Optional[str] = None,
                 forks: int = 32, timeout: Optional[float] = None, allreduce: Optional[Options] = None,
                 progress=None, gpus_per_node: Optional[int] = None):
        self.remotes = list(remotes)
        self.by_name: Dict[str, Remote] = {r.name: r for r in self.remotes}
        self.matrix = matrix
        self.node_python = node_python
        self.forks = forks
        self.timeout = timeout
        self.opts = allreduce or Options()
        if node_python:
            self.opts = dataclasses.replace(self.opts, node_python=node_python)
        self.progress = progress
        self.gpus_per_node = gpus_per_node
        self.fleet_notes: List[str] = []

    def audit(self, hosts: Sequence[str], deep: bool) -> List[HostResult]:
        fa = audit_fleet([self.by_name[h] for h in hosts], self.matrix, deep=deep,
                         node_python=self.node_python, timeout=self.timeout, forks=self.forks,
                         gpus_per_node=self.gpus_per_node)
        self.fleet_notes = [f"{f.severity}: {f.message}" for f in fa.fleet]
        return fa.results

    def torch_import(self, hosts: Sequence[str]) -> Dict[str, Imported]:
        """`import torch` under the node interpreter on each host (the probe's torch_import
        section): (version, None) or (None, why)."""
        cmd, src = probe_command(node_python=self.node_python, only=TORCH_SECTIONS), shipped_source(TORCH_SECTIONS)
        runs = fan_out(list(hosts), lambda h: self.by_name[h].run(cmd, stdin=src, timeout=self.torch_timeout()),
                       self.forks).values_or(lambda h, e: RunResult(h, cmd, None, error=f"{type(e).__name__}: {e}"))
        return {h: imported(h, res, self.node_python) for h, res in zip(hosts, runs)}

    def torch_timeout(self) -> float:
        return max(self.timeout or 0.0, TORCH_TIMEOUT)

    def dcgm(self, hosts: Sequence[str], level: int) -> List[CheckResult]:
        return run_dcgm([self.by_name[h] for h in hosts], level, self.forks)

    def one_size(self, max_bytes: int, quick: bool, pairs: bool = False) -> Options:
        # one size (plus the worker's check pass), then the pair rounds in the same run; the
        # bisection's runs are shorter still
        opts = dataclasses.replace(self.opts, min_bytes=max_bytes, max_bytes=max_bytes,
                                   warmup=1 if quick else 2, iters=3 if quick else 5, budget=FLEET_BUDGET,
                                   pairs=pair_spec(max_bytes) if pairs else None)
        if quick:
            # a bisection step only tells good from bad: a hung subset must not cost minutes
            t = min(self.opts.timeout, BISECT_TIMEOUT)
            opts = dataclasses.replace(opts, timeout=t, rendezvous_timeout=min(self.opts.rendezvous_timeout, BISECT_TIMEOUT),
                                       run_timeout=min(self.opts.run_timeout, 4 * BISECT_TIMEOUT))
        return opts

    def allreduce(self, hosts: Sequence[str], max_bytes: int, quick: bool = False,
                  pairs: bool = False) -> AllreduceOutcome:
        rep = run_allreduce([self.by_name[h] for h in hosts], self.one_size(max_bytes, quick, pairs), self.progress)
        out = outcome_of(rep)
        out.pairs = figures_of(rep)
        allow = allowed(rep.links, rep.nvlinks, rep.ranks, rep.backend)
        out.allowed_gbps, out.allowed_by = (allow.gbps, allow.by) if allow else (None, "")
        return out


LAUNCHERS = ("ssh", "srun")
TORCH_SECTIONS = ("torch_import",)
TORCH_TIMEOUT = 90.0    # the probe gives the import 60 s of it
Imported = Tuple[Optional[str], Optional[str]]   # (torch's version, None) or (None, why it does not import)


def imported(host: str, res: RunResult, python: Optional[str]) -> Imported:
    """What the torch_import probe on `host` said, as (version, None) or (None, why)."""
    if res.error:
        return None, res.error
    try:
        t = views.torch_import(parse_probe_result(host, res, node_python=python))
    except ProbeError as e:
        return None, e.reason
    if t is None:
        return None, "the probe did not say whether torch imports"
    return (t.version, None) if t.version else (None, t.error or "unknown error")


def check_launcher(launcher: str) -> None:
    if launcher not in LAUNCHERS:
        raise UsageError(f"--launcher {launcher!r} is not ssh or srun", "use --launcher ssh or --launcher srun")


def make_backend(remotes: Sequence[Remote], matrix, *, launcher: str = "ssh", collective_timeout: float = 60.0,
                 node_python: Optional[str] = None, forks: int = 32, timeout: Optional[float] = None,
                 connect_timeout: float = 10.0, backend: str = "auto", nproc_per_node: Optional[int] = None,
                 master_port: Optional[int] = None, ifname: Optional[str] = None,
                 gpus_per_node: Optional[int] = None, step_size: int = 64) -> "DoctorBackend":
    """The backend doctor's options ask for. One collective and the rendezvous get
    `collective_timeout` each; the whole run on a host four of them, at least two minutes."""
    check_launcher(launcher)
    ar = Options(backend=backend, nproc_per_node=nproc_per_node, timeout=collective_timeout,
                 rendezvous_timeout=collective_timeout, run_timeout=max(120.0, 4 * collective_timeout),
                 master_port=master_port, ifname=ifname, node_python=node_python or "python3",
                 connect_timeout=connect_timeout, forks=forks, torch_verified=True)
    extra = {"step_size": step_size} if launcher == "srun" else {}
    cls = SrunBackend if launcher == "srun" else DoctorBackend
    return cls(remotes, matrix, node_python=node_python, forks=forks, timeout=timeout, allreduce=ar,
               progress=None, gpus_per_node=gpus_per_node, **extra)


def outcome_of(rep: Report) -> AllreduceOutcome:
    v = judge_report(rep)
    out = AllreduceOutcome(hosts=list(rep.hosts), ok=False, busbw_gbps=v.busbw, wrong=v.wrong)
    if rep.preflight_errors:
        out.preflight = preflight_refusals(rep.preflight_errors)
        if not out.preflight:
            out.error = rep.failure.message if rep.failure else "preflight failed"
        return out
    out.ok = v.ok
    if not v.ok:
        out.error = v.message
        if v.culprit:   # a rank died or could not start there (envcheck/ranks/failure.py)
            out.missing = [v.culprit]
    return out


# ------------------------------------------------------------------ srun
class SrunBackend(DoctorBackend):
    """Inside a Slurm allocation: the audit's probe and the all-reduce's ranks both start with
    srun (envcheck/slurm/srun.py), no SSH. The worker's JSON records come back on srun's stdout."""

    def __init__(self, *args, step_size: int = 64, **kwargs):
        super().__init__(*args, **kwargs)
        self.runner = SrunRunner(step_size=step_size, job_name="envcheck-doctor")
        self.job_id = ""

    def audit(self, hosts: Sequence[str], deep: bool) -> List[HostResult]:
        self.job_id = require_allocation(hosts).job_id
        fa = audit_batch(list(hosts), self.runner.run_all, self.matrix, deep=deep, node_python=self.node_python,
                         timeout=self.timeout, gpus_per_node=self.gpus_per_node)
        self.fleet_notes = [f"{f.severity}: {f.message}" for f in fa.fleet]
        return fa.results

    def torch_import(self, hosts: Sequence[str]) -> Dict[str, Imported]:
        cmd, src = probe_command(node_python=self.node_python, only=TORCH_SECTIONS), shipped_source(TORCH_SECTIONS)
        raw = self.runner.run_all(list(hosts), cmd, src, self.torch_timeout())
        return {h: imported(h, raw[h], self.node_python) for h in hosts}

    def slurm(self) -> Dict[str, object]:
        return {"job_id": self.job_id, "steps": self.runner.step_ids()}

    def allreduce(self, hosts: Sequence[str], max_bytes: int, quick: bool = False,
                  pairs: bool = False) -> AllreduceOutcome:
        # the pair rounds are not started by srun yet: the result carries none (doctor then
        # isolates by bisection, as before)
        if not shutil.which("srun"):
            raise UsageError("--launcher srun: srun not found on PATH", "run inside a Slurm allocation, or use --launcher ssh")
        return outcome_of(srun_allreduce(list(hosts), self.one_size(max_bytes, quick), self.runner, [max_bytes]))
