"""Ranks started by srun inside an allocation (`--launcher srun`): the all-reduce of nccl-test
and doctor, and the user's script of launch. One job step each, built by srun_argv
(envcheck/doctor/srun.py): srun starts every rank, maps SLURM_PROCID to RANK, and with
--kill-on-bad-exit and --wait stops every rank when one fails. The nodes' transport for the
probe and the free port is envcheck/slurm/srun.py; this module is what a rank harness calls.
"""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from collections import defaultdict, deque
from typing import Callable, Deque, Dict, List, Optional, Sequence

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce.run import Options, Report, node_sources
from envcheck.doctor.srun import srun_argv
from envcheck.errors import UsageError
from envcheck.audit.fleet import audit_batch
from envcheck.doctor.checks import GPU_ONLY_CODES
from envcheck.launch.outcome import exit_code
from envcheck.launch.run import Report as LaunchReport
from envcheck.model import ERROR
from envcheck.facts import views
from envcheck.ranks import records as rr
from envcheck.ranks.failure import Failure, peer_gone, raised
from envcheck.slurm.srun import SrunRunner, Step, cancel, free_port, rank_step

# srun's words for a task that ended badly: "srun: error: node02: task 3: Exited with exit code 1"
_TASK_END = re.compile(r"srun: error: (\S+): tasks? ([\d,-]+): (.*)")
_LABEL = re.compile(r"^\s*(\d+): ?(.*)$")


def _port(runner: SrunRunner, hosts: Sequence[str], python: str, given: Optional[int]) -> int:
    port = given or free_port(runner, hosts[0], python)
    if not port:
        raise UsageError(f"{hosts[0]}: found no free TCP port for MASTER_PORT through srun", "pass --master-port")
    return port


def _first_rank(m) -> int:
    """The first rank of a _TASK_END match ("task 3", "tasks 0-2,5")."""
    return int(re.split(r"[,-]", m.group(2))[0])


def _culprit(err: str) -> Optional[Dict[str, object]]:
    """The first task srun reports as having exited non-zero (not one it killed because another
    failed); else the first task it mentions at all."""
    ends = [m for m in map(_TASK_END.search, err.splitlines()) if m]
    real = [m for m in ends if "exit code" in m.group(3)] or ends
    if not real:
        return None
    m = real[0]
    code = re.search(r"exit code (\d+)", m.group(3))
    return {"host": m.group(1), "rank": _first_rank(m),
            "exit_code": int(code.group(1)) if code else None, "message": m.group(0).strip()}


def _raiser(c: Optional[Dict[str, object]], tails: Dict[int, Deque[str]], hosts: Sequence[str], nproc: int,
            err: str) -> Optional[Dict[str, object]]:
    """ranks/failure.py's rule for the race srun shows too: the rank that raised is still tearing
    its interpreter down when a peer dies of the closed connection (gloo: "Connection closed by
    peer", then C++ terminate: "task 2: Aborted", or that peer's own RuntimeError exit), so srun
    hears the victim first and then terminates the raiser. Where the rank srun names is such a
    victim, or ended without an exit code, the lowest rank whose output holds its own traceback
    is named instead, with the exit code srun heard for it, if any."""
    if c and c.get("exit_code") is not None and not peer_gone(tails.get(int(c["rank"]), ())):
        return c
    raisers = [r for r in sorted(tails) if raised(tails[r])]
    if not raisers:
        return c
    rank = raisers[0]
    host = hosts[min(rank // nproc, len(hosts) - 1)]
    heard = [m for m in map(_TASK_END.search, err.splitlines())
             if m and _first_rank(m) == rank and "exit code" in m.group(3)]
    code = re.search(r"exit code (\d+)", heard[0].group(3)) if heard else None
    return {"host": host, "rank": rank, "exit_code": int(code.group(1)) if code else None, "raised": True,
            "message": f"rank {rank} on {host} raised (its traceback is in its output above)"
                       + (f"; srun heard rank {c['rank']} on {c['host']} first, a peer it brought down" if c else "")}

def allreduce(hosts: Sequence[str], opts: Options, runner: SrunRunner, sizes: Sequence[int]) -> Report:
    """The all-reduce sweep across the allocation's nodes as one step; `auto` means nccl."""
    backend = opts.backend if opts.backend != "auto" else "nccl"
    nproc = opts.nproc_per_node or 1
    python = opts.node_python or "python3"
    rep = Report(list(hosts), backend=backend, dtype=opts.dtype, world_size=nproc * len(hosts),
                 master_addr=opts.master_addr or hosts[0], ifname=opts.ifname)
    rep.master_port = _port(runner, hosts, python, opts.master_port)
    args = ["--backend", backend, "--min-bytes", str(min(sizes)), "--max-bytes", str(max(sizes)),
            "--factor", str(opts.factor), "--dtype", opts.dtype, "--warmup", str(opts.warmup),
            "--iters", str(opts.iters), "--timeout", str(opts.timeout),
            "--rendezvous-timeout", str(opts.rendezvous_timeout)]
    env = {"GLOO_SOCKET_IFNAME": opts.ifname, "NCCL_SOCKET_IFNAME": opts.ifname} if opts.ifname else {}
    argv = srun_argv(list(hosts), nproc_per_node=nproc, worker_source=node_sources()["allreduce_worker.py"],
                     worker_args=args, python=python, master_addr=rep.master_addr, master_port=rep.master_port,
                     timeout_s=opts.run_timeout, env=env)
    t0 = time.monotonic()
    out, err, rc, killed = rank_step(runner, hosts, argv, opts.run_timeout + 60)
    recs = rr.parse_text(out)
    rep.ranks += [dict(j.data, node=hosts[min(j.rank // nproc, len(hosts) - 1)]) for j in rr.of_type(recs, rr.Joined)]
    rep.rows += [am.make_row(x.bytes, am.dtype_size(opts.dtype), opts.dtype, x.time_us / 1e6, rep.world_size, x.wrong)
                 for x in rr.of_type(recs, rr.Result)]
    rep.rows.sort(key=lambda r: r["bytes"])
    rep.summary = am.summarize(rep.rows)
    rep.logs = {"srun": "\n".join(err.strip().splitlines()[-60:])}
    rep.notes.append(f"through srun: job step {runner.steps[-1].step_id or '?'}")
    if killed:
        rep.failure = Failure("timeout", f"the srun step did not finish in {opts.run_timeout:g} s",
                              fix="raise --run-timeout, or look for a hung node")
    elif rc != 0 and not rep.wrong:
        c = _culprit(err) or {}
        rep.failure = Failure("rank_lost" if c else "setup",
                              f"srun exited {rc} after {time.monotonic() - t0:.0f} s: "
                              + (str(c.get("message")) if c else " ".join(err.strip().splitlines()[-2:])),
                              c.get("host"), c.get("rank"),
                              "see that node's log (NCCL_DEBUG=INFO); srun's own words are in the JSON's logs")
    return rep


def launch(hosts: Sequence[str], lopts, runner: SrunRunner, on_line: Optional[Callable[[str, int, str], None]] = None,
           matrix=None):
    """The user's script (`launch --launcher srun`): lopts is envcheck.launch.run.Options; every
    rank's output live through on_line(host, rank, line) (srun --label says the rank); the first
    rank to fail named from srun's own words; srun stops the others. Returns launch's Report."""
    if lopts.local_rank_arg:
        raise UsageError("--local-rank-arg is not available with --launcher srun", "read LOCAL_RANK from the environment")
    if lopts.sync:
        raise UsageError("--sync is not available with --launcher srun", "use a shared filesystem, or sbcast")
    nproc, python = lopts.nproc_per_node or 1, lopts.node_python or "python3"
    rep = LaunchReport(list(hosts), script=lopts.script, args=list(lopts.args), interpreter=python,
                       interpreter_why="--node-python" if lopts.node_python else "python3 on the nodes",
                       chdir=lopts.chdir or os.getcwd(), world_size=nproc * len(hosts),
                       nproc={h: nproc for h in hosts}, master_addr=lopts.master_addr or hosts[0])
    if lopts.audit and _audit_refuses(rep, hosts, runner, python, lopts, matrix):
        rep.exit_code = exit_code(rep.failure)
        return rep
    rep.master_port = _port(runner, hosts, python, lopts.master_port)
    env = dict(lopts.env, **({"GLOO_SOCKET_IFNAME": lopts.ifname, "NCCL_SOCKET_IFNAME": lopts.ifname}
                             if lopts.ifname else {}))
    argv = srun_argv(list(hosts), nproc_per_node=nproc, python=python, program=[lopts.script, *lopts.args],
                     master_addr=rep.master_addr, master_port=rep.master_port, timeout_s=lopts.timeout, env=env,
                     job_name="envcheck-launch", extra=["--label", f"--chdir={rep.chdir}", "--input=none"])
    rep.start = time.time()
    tails: Dict[int, Deque[str]] = defaultdict(lambda: deque(maxlen=40))

    def line_of(rank: int, line: str) -> None:
        tails[rank].append(line)
        if on_line:
            on_line(hosts[min(rank // nproc, len(hosts) - 1)], rank, line)

    rc, err, killed = _stream(argv, lopts.timeout + 30, line_of, runner, hosts)
    rep.end = time.time()
    if killed:
        rep.failure = Failure("timeout", f"the run did not end within --run-timeout {lopts.timeout:g} s: srun "
                              "cancelled it", fix="find the rank that hung in its output; raise --run-timeout if "
                                                  "it was only slow")
    elif rc != 0:
        c = _raiser(_culprit(err), tails, hosts, nproc, err) or {}
        rep.failure = Failure("rank_failed" if c.get("exit_code") is not None or c.get("raised") else "rank_lost",
                              str(c.get("message") or f"srun exited {rc}: " + " ".join(err.strip().splitlines()[-2:])),
                              c.get("host"), c.get("rank"), "see that rank's output above",
                              exit_code=c.get("exit_code"), log_tail=err.strip().splitlines()[-20:])
    rep.exit_code = exit_code(rep.failure)
    rep.notes.append(f"through srun: job step {runner.steps[-1].step_id or '?'}")
    return rep


def _audit_refuses(rep, hosts, runner: SrunRunner, python: str, lopts, matrix) -> bool:
    """launch's preflight audit, through srun: its error findings refuse the run unless --force."""
    audit = audit_batch(list(hosts), runner.run_all, matrix, node_python=python)
    gpu_less = all(r.facts is not None and not views.gpu_count(r.facts) for r in audit.results)
    rep.audit_errors = [{"host": r.host, "code": "unreachable", "message": r.error, "fix": "see srun's words"}
                        for r in audit.unreachable]
    rep.audit_errors += [{"host": f.host or r.host, "code": f.code, "message": f.message, "fix": f.fix}
                         for r in audit.results for f in r.findings
                         if f.severity == ERROR and not (gpu_less and f.code in GPU_ONLY_CODES)]
    if not rep.audit_errors or lopts.force:
        if rep.audit_errors:
            rep.notes.append(f"--force: starting despite {len(rep.audit_errors)} audit error(s)")
        return False
    a = rep.audit_errors[0]
    rep.failure = Failure("audit", f"the audit found {len(rep.audit_errors)} error(s), first on {a['host']}: "
                          f"{a['message']}", a["host"], None, "fix them (envcheck doctor shows how), or pass --force")
    return True


def _stream(argv: List[str], timeout: float, on_rank_line: Callable[[int, str], None], runner: SrunRunner,
            hosts: Sequence[str]):
    """Run the step, handing every labelled line to on_rank_line as it comes: (rc, srun's own
    stderr lines, killed). Past `timeout` the step is cancelled."""
    step = Step(list(hosts))
    runner.steps.append(step)
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    own: List[str] = []

    def pump(stream) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            m = _LABEL.match(line)
            if m and line.split(": ", 1)[-1].startswith("@ENVCHECK step "):
                step.step_id = line.split("@ENVCHECK step ", 1)[1].strip()
            elif m:
                on_rank_line(int(m.group(1)), m.group(2))
            else:
                own.append(line)

    threads = [threading.Thread(target=pump, args=(s,), daemon=True) for s in (p.stdout, p.stderr)]
    for t in threads:
        t.start()
    killed = False
    try:
        p.wait(timeout)
    except subprocess.TimeoutExpired:
        killed = True
        cancel(p)
        p.wait()
    except KeyboardInterrupt:    # srun runs in its own session: Ctrl-C here must reach the step
        cancel(p)
        raise
    for t in threads:
        t.join(5)
    step.rc, step.seconds = p.returncode, time.monotonic() - t0
    return p.returncode, "\n".join(own), killed
