"""`envcheck launch` orchestration: preflight (nccl-test's, plus torch, the script, --sync and the
audit), then one supervising launcher per host (envcheck/node/script_launcher.py) starting its
ranks of the user's script, their output streamed back live, then the outcome. Codes against
Remote only; returns data, never prints (rank lines and progress through callbacks).

Never hangs, never leaves strays: each host's launcher stops its ranks when one fails, when it is
signalled, orphaned, its SSH channel closes or --run-timeout passes; the controller stops every host
as soon as one rank fails, a host is lost, the timeout passes or the user presses Ctrl-C.
"""
from __future__ import annotations

import os
import secrets
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from envcheck import params as P
from envcheck.errors import UsageError
from envcheck.paths import make_out_dir
from envcheck.launch import outcome
from envcheck.launch import preflight as lp
from envcheck.launch.stream import HostStream, LineFn, RankState
from envcheck.ranks import preflight as rp
from envcheck.ranks import records as rr
from envcheck.ranks.failure import Failure
from envcheck.ranks.plan import NodeFacts, PreflightError, RankPlan
from envcheck.ranks.start import Starter
from envcheck.remote import Remote, RunResult

MARKER = "envcheck-launch-"   # in every launcher's and rank's command line: `pgrep -f` finds a run


@dataclass
class Options:
    script: str
    args: List[str] = field(default_factory=list)
    nproc_per_node: Optional[int] = None   # default: the node's GPU count; 1 without GPUs
    node_python: Optional[str] = None
    chdir: Optional[str] = None            # default: the current directory here
    env: Dict[str, str] = field(default_factory=dict)
    sync: List[str] = field(default_factory=list)
    local_rank_arg: bool = False
    master_addr: Optional[str] = None
    master_port: Optional[int] = None
    ifname: Optional[str] = None
    timeout: float = 86400.0                # the whole run
    grace: float = 5.0                      # SIGTERM -> SIGKILL when ranks are stopped
    connect_timeout: float = 10.0
    forks: int = 32
    log_dir: Optional[str] = None
    force: bool = False
    audit: bool = True
    matrix: Optional[str] = None


@dataclass
class Report:
    hosts: List[str]
    script: str = ""
    args: List[str] = field(default_factory=list)
    interpreter: str = ""
    interpreter_why: str = ""
    torch: Dict[str, str] = field(default_factory=dict)    # per host: torch version
    chdir: str = ""
    run_id: str = ""
    world_size: int = 0
    nproc: Dict[str, int] = field(default_factory=dict)
    cpu_ranks: bool = False
    master_addr: str = ""
    master_port: int = 0
    ifname: Optional[str] = None
    start: Optional[float] = None
    end: Optional[float] = None
    ranks: List[Dict[str, Any]] = field(default_factory=list)
    failure: Optional[Failure] = None
    preflight_errors: List[Dict[str, Any]] = field(default_factory=list)
    audit_errors: List[Dict[str, Any]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    host_status: Dict[str, str] = field(default_factory=dict)
    log_dir: Optional[str] = None
    exit_code: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return dict(asdict(self), failure=self.failure.to_dict() if self.failure else None)


def parse_env(pairs: Sequence[str]) -> Dict[str, str]:
    """--env NAME=VALUE pairs, each checked by its declaration (a name the shell takes, no
    control character, not one launch sets itself)."""
    out = {}
    for p in pairs:
        k, _, v = P.ENV_PAIR.parse(p).partition("=")
        out[k] = v
    return out


def launcher_args(opts: Options, nproc: int, rank_base: int, node_rank: int, run_id: str,
                  chdir: str) -> List[Any]:
    """script_launcher.py's arguments after `launch --dir DIR`."""
    args: List[Any] = ["--nproc", nproc, "--rank-base", rank_base, "--node-rank", node_rank,
                       "--local-world-size", nproc, "--deadline", opts.timeout, "--grace", opts.grace,
                       "--chdir", chdir, "--run-id", run_id]
    args += ["--local-rank-arg"] if opts.local_rank_arg else []
    return args + ["--", opts.script] + list(opts.args)


ProgressFn = Callable[[str], None]


def run_launch(remotes: Sequence[Remote], opts: Options, progress: Optional[ProgressFn] = None,
               on_line: Optional[LineFn] = None, interpreter_why: Optional[str] = None) -> Report:
    """opts.node_python None: python3 on the nodes. interpreter_why: how the caller chose it
    (cli.hostopts.local_python on this machine), for the report."""
    say = progress or (lambda _m: None)
    if not remotes:
        raise UsageError("no hosts to launch on", "name hosts, or none for this machine")
    if not opts.script:
        raise UsageError("no script to launch", "put it after --: envcheck launch -- train.py")
    rep = Report(hosts=[r.name for r in remotes], script=opts.script, args=list(opts.args))
    python = opts.node_python
    rep.interpreter_why = interpreter_why or ("--node-python" if python else
                                              "python3 on the nodes; --node-python PATH picks "
                                              "another")
    rep.chdir = opts.chdir or os.getcwd()
    if not _preflight(remotes, opts, python, rep, say):
        rep.exit_code = outcome.exit_code(rep.failure)
        return rep
    if opts.log_dir:
        # --log-dir itself may be made (its parent must exist), then a fresh directory per run:
        # nothing clobbered, no parents made by a typo
        rep.log_dir = os.path.join(os.path.abspath(make_out_dir(opts.log_dir, "--log-dir")), rep.run_id)
        make_out_dir(rep.log_dir, "--log-dir")
    _run(remotes, opts, python, rep, say, on_line)
    rep.exit_code = outcome.exit_code(rep.failure)
    return rep


def _preflight(remotes: Sequence[Remote], opts: Options, python: Optional[str], rep: Report,
               say: ProgressFn) -> bool:
    """The harness's preflight (envcheck/ranks/preflight.py) with launch's own checks: --sync,
    torch and the script on every node, launch's rule for ranks per host, and the audit."""
    t = opts.connect_timeout + 30

    def copy(_nodes: List[NodeFacts]) -> List[PreflightError]:
        say(f"preflight: copying {', '.join(opts.sync)} to every other host")
        return lp.sync(list(remotes), opts.sync, t + 60, opts.forks)

    def torch_and_script(_nodes: List[NodeFacts]) -> List[PreflightError]:
        say(f"preflight: torch under {python or 'python3'}, {opts.script} in {rep.chdir}")
        checks, errs = lp.check_nodes(remotes, python, rep.chdir, opts.script, t + 60, opts.forks)
        if not errs:
            rep.interpreter = python or (checks[0].executable if checks else "python3")
            rep.torch = {c.host: c.torch or "" for c in checks}
        return errs

    def size(nodes: List[NodeFacts]) -> Tuple[List[int], List[PreflightError]]:
        errs = _ranks_per_host(nodes, opts, rep)
        return [rep.nproc.get(n.host, 0) for n in nodes], errs

    def audit(plan: RankPlan) -> Optional[Failure]:
        rep.ifname = plan.ifname
        return _audit(remotes, opts, python, rep, say, t) if opts.audit else None

    # this machine has the --sync paths already: no archive unless another host needs it
    sync = bool(opts.sync) and any(not r.is_local for r in remotes)
    wiring = rp.Wiring(python, opts.ifname, opts.master_addr, opts.master_port,
                       opts.connect_timeout, opts.forks)
    pre = rp.preflight(remotes, wiring, size, notes=rep.notes, say=say, gate=audit,
                       checks=([copy] if sync else []) + [torch_and_script])
    if pre.plan is not None:
        rep.ifname, rep.master_addr, rep.master_port = (pre.plan.ifname, pre.plan.master_addr,
                                                         pre.plan.master_port)
    rep.failure = pre.failure or (rp.refusal(pre.errors) if pre.errors else None)
    rep.preflight_errors = [e.to_dict() for e in pre.errors]
    if not pre.ok:
        return False
    rep.world_size = pre.plan.world_size
    rep.run_id = MARKER + secrets.token_hex(6)
    return True


def _audit(remotes: Sequence[Remote], opts: Options, python: Optional[str], rep: Report,
           say: ProgressFn, t: float) -> Optional[Failure]:
    """The audit's errors across the hosts refuse the run, unless --force."""
    say("preflight: audit of every host")
    rep.audit_errors = lp.audit_errors(remotes, python, opts.matrix, rep.cpu_ranks, t + 60, opts.forks)
    if rep.audit_errors and not opts.force:
        a = rep.audit_errors[0]
        return Failure("audit", f"the audit found {len(rep.audit_errors)} error(s), first on "
                       f"{a['host']}: {a['message']}", a["host"], None,
                       "fix them (envcheck doctor shows how), or pass --force")
    if rep.audit_errors:
        rep.notes.append(f"--force: starting despite {len(rep.audit_errors)} audit error(s)")
    return None


def _ranks_per_host(nodes: Sequence[NodeFacts], opts: Options,
                    rep: Report) -> List[PreflightError]:
    """One rank per GPU by default; never two ranks on one GPU; CPU ranks where no host has one."""
    gpus = [n.gpus for n in nodes]
    rep.cpu_ranks = not any(gpus)
    if any(gpus) and not all(gpus):
        return [PreflightError(
            "some hosts have GPUs and some none: " + ", ".join(
                f"{n.host} {n.gpus}" for n in nodes), None,
            "launch on GPU nodes only, or on CPU nodes only")]
    errs = []
    for n in nodes:
        k = opts.nproc_per_node or n.gpus or 1
        if n.gpus and k > n.gpus:
            errs.append(PreflightError(
                f"{n.host}: {k} rank(s) but {n.gpus} GPU(s): two ranks would share a GPU",
                n.host, "use --nproc-per-node at most the GPU count"))
        rep.nproc[n.host] = k
    if rep.cpu_ranks:
        rep.notes.append("no GPU on any host: CPU ranks, the script must use the gloo backend")
    return errs


def _run(remotes: Sequence[Remote], opts: Options, python: Optional[str], rep: Report,
         say: ProgressFn, on_line: Optional[LineFn]) -> None:
    names = [r.name for r in remotes]
    nprocs = [rep.nproc[n] for n in names]
    bases = [sum(nprocs[:i]) for i in range(len(remotes))]
    states = {b + k: RankState(b + k, n, k) for n, b, c in zip(names, bases, nprocs)
              for k in range(c)}
    env = dict(opts.env)
    env.update(RankPlan(names, nprocs, rep.ifname, rep.master_addr, rep.master_port).env())
    starter = Starter(remotes, python, "script_launcher.py", lp.node_sources(), rep.run_id)
    stop = outcome.Stopper(len(remotes), lambda i: starter.stop(
        i, opts.grace + 3, opts.connect_timeout + opts.grace + 15), say)

    def on_record(host: str, rec: rr.Record) -> None:
        if isinstance(rec, rr.Exit) and rec.code and not rec.stopped:
            stop.request("rank", f"rank {rec.rank} on {host} ended "
                                 f"({RankState(0, host, 0, exit_code=rec.code).status})")
        elif isinstance(rec, rr.Launcher) and rec.status == "deadline":
            stop.request("timeout", f"{host} reached --run-timeout {opts.timeout:g} s")

    streams = [HostStream(n, {k: s for k, s in states.items() if s.host == n}, on_line,
                          on_record, rep.log_dir) for n in names]
    results: List[Optional[RunResult]] = [None] * len(remotes)

    def one(i: int) -> None:
        r = remotes[i]
        try:
            res = starter.start(i, launcher_args(opts, nprocs[i], bases[i], i, rep.run_id, rep.chdir),
                                env, opts.timeout + opts.grace + opts.connect_timeout + 60,
                                on_stdout=streams[i].feed)
        except Exception as e:  # noqa: BLE001 - a bug must still stop the others
            res = RunResult(r.name, "", None, error=f"internal error: {type(e).__name__}: {e}")
        streams[i].close()
        results[i] = res
        done = any(x.status == "done" for x in rr.of_type(streams[i].records, rr.Launcher))
        if res.error or not done:
            stop.request("host", f"{r.name}: {res.error or 'the launcher ended early'}", host=r.name)

    say(f"running: {rep.world_size} rank(s) of {opts.script} on {len(remotes)} host(s) "
        f"under {rep.interpreter}")
    rep.start = time.time()
    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(len(remotes))]
    for t in threads:
        t.start()
    outcome.wait(threads, stop, opts.timeout + opts.grace + 20,
                 opts.grace + opts.connect_timeout + 30)
    rep.end = time.time()
    rep.ranks = [states[k].to_dict() for k in sorted(states)]
    for n, res in zip(names, results):
        rep.host_status[n] = ("ok" if res is not None and res.ok else
                              "no answer" if res is None else res.error or f"exit {res.exit_code}")
    rep.failure = outcome.failure(states, streams, stop, opts.timeout)
