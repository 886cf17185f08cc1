"""The real steps behind `envcheck doctor`: the fleet audit (envcheck/audit/fleet.py) and the
all-reduce (envcheck/allreduce/run.py over SSH, or srun inside a Slurm allocation), translated into
the doctor's terms (envcheck/doctor/run.py)."""
from __future__ import annotations

import dataclasses
import shlex
import shutil
import subprocess
import time
from typing import Dict, List, Optional, Sequence, Tuple

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce.run import Options, Report, node_sources, parse_records, run_allreduce
from envcheck.doctor.health import CheckResult
from envcheck.allreduce.verdict import judge, judge_report, preflight_refusals
from envcheck.doctor.run import AllreduceOutcome
from envcheck.errors import UsageError
from envcheck.model import HostResult
from envcheck.remote import Remote

# failure kinds of envcheck/allreduce/run.py whose host is the culprit (a rank that died or could
# not start there); a timeout names the rank that waited, which is usually not the broken one
_CULPRIT_KINDS = ("rank_lost", "setup", "host", "missing_rank")
BISECT_TIMEOUT = 30.0   # seconds per collective / rendezvous in a bisection run


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
        from envcheck.audit.fleet import audit_fleet
        fa = audit_fleet([self.by_name[h] for h in hosts], self.matrix, deep=deep,
                         node_python=self.node_python, timeout=self.timeout, forks=self.forks,
                         gpus_per_node=self.gpus_per_node)
        self.fleet_notes = [f"{f.severity}: {f.message}" for f in fa.fleet]
        return fa.results

    def torch_import(self, hosts: Sequence[str]) -> Dict[str, Tuple[Optional[str], Optional[str]]]:
        """`import torch` under the node interpreter on each host: (version, None) or (None, why)."""
        from envcheck.allreduce.preflight import python_word
        from envcheck.remote import fan_out
        cmd = f"{python_word(self.node_python)} -c {shlex.quote(_IMPORT_TORCH)}"

        def one(h: str) -> Tuple[Optional[str], Optional[str]]:
            res = self.by_name[h].run(cmd, timeout=self.timeout or 120.0)
            lines = [x for x in ((res.stdout or "") + "\n" + (res.stderr or "")).splitlines() if x.strip()]
            if res.ok and res.stdout.strip():
                return res.stdout.strip().splitlines()[-1], None
            return None, res.error or (lines[-1] if lines else f"exit {res.exit_code}")

        return dict(zip(hosts, fan_out(list(hosts), one, self.forks).values_or(
            lambda h, e: (None, f"{type(e).__name__}: {e}"))))

    def dcgm(self, hosts: Sequence[str], level: int) -> List[CheckResult]:
        from envcheck.doctor.dcgm import run_dcgm
        return run_dcgm([self.by_name[h] for h in hosts], level, self.forks)

    def allreduce(self, hosts: Sequence[str], max_bytes: int, quick: bool = False) -> AllreduceOutcome:
        # one size (plus the worker's check pass); the bisection's runs are shorter still
        opts = dataclasses.replace(self.opts, min_bytes=max_bytes, max_bytes=max_bytes,
                                   warmup=1 if quick else 2, iters=3 if quick else 5)
        if quick:
            # a bisection step only tells good from bad: a hung subset must not cost minutes
            t = min(self.opts.timeout, BISECT_TIMEOUT)
            opts = dataclasses.replace(opts, timeout=t, rendezvous_timeout=min(self.opts.rendezvous_timeout, BISECT_TIMEOUT),
                                       run_timeout=min(self.opts.run_timeout, 4 * BISECT_TIMEOUT))
        rep = run_allreduce([self.by_name[h] for h in hosts], opts, self.progress)
        return outcome_of(rep)


_IMPORT_TORCH = "import torch, sys; sys.stdout.write(chr(10) + torch.__version__ + chr(10))"
LAUNCHERS = ("ssh", "srun")


def check_launcher(launcher: str) -> None:
    if launcher not in LAUNCHERS:
        raise UsageError(f"--launcher {launcher!r} is not ssh or srun", "use --launcher ssh or --launcher srun")


def make_backend(remotes: Sequence[Remote], matrix, *, launcher: str = "ssh", collective_timeout: float = 60.0,
                 node_python: Optional[str] = None, forks: int = 32, timeout: Optional[float] = None,
                 connect_timeout: float = 10.0, backend: str = "auto", nproc_per_node: Optional[int] = None,
                 master_port: Optional[int] = None, ifname: Optional[str] = None,
                 gpus_per_node: Optional[int] = None) -> "DoctorBackend":
    """The backend doctor's options ask for. One collective and the rendezvous get
    `collective_timeout` each; the whole run on a host four of them, at least two minutes."""
    check_launcher(launcher)
    ar = Options(backend=backend, nproc_per_node=nproc_per_node, timeout=collective_timeout,
                 rendezvous_timeout=collective_timeout, run_timeout=max(120.0, 4 * collective_timeout),
                 master_port=master_port, ifname=ifname, node_python=node_python or "python3",
                 connect_timeout=connect_timeout, forks=forks)
    cls = SrunBackend if launcher == "srun" else DoctorBackend
    return cls(remotes, matrix, node_python=node_python, forks=forks, timeout=timeout, allreduce=ar,
               progress=None, gpus_per_node=gpus_per_node)


def outcome_of(rep: Report) -> AllreduceOutcome:
    v = judge_report(rep)
    out = AllreduceOutcome(hosts=list(rep.hosts), ok=False, busbw_gbps=v.busbw, wrong=v.wrong)
    if rep.preflight_errors:
        out.preflight = preflight_refusals(rep.preflight_errors)
        if not out.preflight:
            out.error = (rep.failure or {}).get("message", "preflight failed")
        return out
    out.ok = v.ok
    if not v.ok:
        out.error = v.message
        if v.culprit and (rep.failure or {}).get("kind") in _CULPRIT_KINDS:
            out.missing = [v.culprit]
    return out


# ------------------------------------------------------------------ srun
_FREE_PORT = "import socket; s = socket.socket(); s.bind(('', 0)); print(s.getsockname()[1])"


class SrunBackend(DoctorBackend):
    """The all-reduce started by srun (inside an allocation) instead of over SSH; the audit
    still goes over SSH. The worker's JSON records come back on srun's stdout."""

    def _free_port(self, host: str) -> int:
        """A port free on the master node right now (asked over the same transport)."""
        import shlex
        r = self.by_name[host].run(f"{shlex.quote(self.opts.node_python)} -c {shlex.quote(_FREE_PORT)}", timeout=30)
        try:
            return int(r.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise UsageError(f"{host}: cannot find a free port for MASTER_PORT ({r.error or r.tail(2)})",
                             "pass --master-port")

    def allreduce(self, hosts: Sequence[str], max_bytes: int, quick: bool = False) -> AllreduceOutcome:
        from envcheck.doctor.srun import srun_argv
        if not shutil.which("srun"):
            raise UsageError("--launcher srun: srun not found on PATH", "run inside a Slurm allocation, or use --launcher ssh")
        nproc = self.opts.nproc_per_node or 1
        worker = node_sources()["allreduce_worker.py"]
        size = str(max_bytes)
        args = ["--backend", self.opts.backend if self.opts.backend != "auto" else "nccl",
                "--min-bytes", size, "--max-bytes", size, "--warmup", "1" if quick else "2",
                "--iters", "3" if quick else "5", "--timeout", str(self.opts.timeout),
                "--rendezvous-timeout", str(self.opts.rendezvous_timeout)]
        port = self.opts.master_port or self._free_port(hosts[0])
        argv = srun_argv(list(hosts), nproc_per_node=nproc, worker_source=worker, worker_args=args,
                         python=self.opts.node_python, master_addr=self.opts.master_addr or hosts[0],
                         master_port=port, timeout_s=self.opts.run_timeout,
                         env={"GLOO_SOCKET_IFNAME": self.opts.ifname, "NCCL_SOCKET_IFNAME": self.opts.ifname}
                         if self.opts.ifname else None)
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=self.opts.run_timeout + 60)
        except subprocess.TimeoutExpired:
            return AllreduceOutcome(list(hosts), False, error=f"srun did not finish in {self.opts.run_timeout:g} s")
        rows = []
        world = nproc * len(hosts)
        for rec in parse_records(p.stdout):
            if rec["type"] == "result":
                rows.append(am.make_row(int(rec["bytes"]), am.dtype_size("float32"), "float32",
                                        float(rec["time_us"]) / 1e6, world, rec.get("wrong")))
        summary = am.summarize(rows)
        wrong = int(summary.get("wrong") or 0)
        failed = None if p.returncode == 0 or wrong else {
            "message": f"srun exited {p.returncode} after {time.monotonic() - t0:.0f} s: "
                       + " ".join((p.stderr or "").strip().splitlines()[-2:])}
        v = judge(rows=len(rows), wrong=wrong, busbw=summary.get("busbw"), failure=failed)
        return AllreduceOutcome(list(hosts), v.ok, busbw_gbps=v.busbw, wrong=v.wrong,
                                error="" if v.ok else v.message)
