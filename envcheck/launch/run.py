"""`envcheck launch` orchestration: preflight (nccl-test's, plus torch, the script, --sync and the
audit), then one supervising launcher per host (envcheck/node/script_launcher.py) starting its
ranks of the user's script, their output streamed back live, then the outcome. Codes against
Remote only; returns data, never prints (rank lines and progress through callbacks).

Never hangs, never leaves strays: each host's launcher stops its ranks when one fails, when it is
signalled, orphaned, its SSH channel closes or --run-timeout passes; the controller stops every host
as soon as one rank fails, a host is lost, the timeout passes or the user presses Ctrl-C.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from envcheck.allreduce import preflight as pf
from envcheck.allreduce.run import boot, kill_cmd, run_dir
from envcheck.errors import UsageError
from envcheck.launch import outcome
from envcheck.launch import preflight as lp
from envcheck.launch.stream import HostStream, LineFn, RankState
from envcheck.remote import Remote, RunResult

MARKER = "envcheck-launch-"   # in every launcher's and rank's command line: `pgrep -f` finds a run
RESERVED_ENV = ("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "LOCAL_RANK",
                "LOCAL_WORLD_SIZE", "GROUP_RANK")


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
    # {"kind", "message", "host", "rank", "exit_code", "signal", "fix", "log_tail"}
    failure: Optional[Dict[str, Any]] = None
    preflight_errors: List[Dict[str, Any]] = field(default_factory=list)
    audit_errors: List[Dict[str, Any]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    host_status: Dict[str, str] = field(default_factory=dict)
    log_dir: Optional[str] = None
    exit_code: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def parse_env(pairs: Sequence[str]) -> Dict[str, str]:
    out = {}
    for p in pairs:
        k, eq, v = p.partition("=")
        if not eq or not k:
            raise UsageError(f"--env {p!r} is not K=V", "write --env NAME=VALUE")
        if k in RESERVED_ENV:
            raise UsageError(f"--env {k} is set by envcheck launch for every rank",
                             "use --master-addr/--master-port/--nproc-per-node instead")
        out[k] = v
    return out


def launch_cmd(opts: Options, python: Optional[str], nproc: int, rank_base: int,
               node_rank: int, run_id: str, index: int, chdir: str) -> str:
    args = ["launch", "--dir", "DIR", "--nproc", nproc, "--rank-base", rank_base,
            "--node-rank", node_rank, "--local-world-size", nproc, "--deadline", opts.timeout,
            "--grace", opts.grace, "--chdir", chdir, "--run-id", run_id]
    args += ["--local-rank-arg"] if opts.local_rank_arg else []
    args += ["--", opts.script] + list(opts.args)
    quoted = " ".join(shlex.quote(str(a)) for a in args)
    # the directory expands on the node ($TMPDIR there), so it goes in unquoted-but-safe
    quoted = quoted.replace(" DIR ", f' "{run_dir(run_id, index)}" ', 1)
    return f"{pf.python_word(python)} -c {shlex.quote(boot('script_launcher.py'))} {quoted}"


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
        rep.log_dir = os.path.join(os.path.abspath(opts.log_dir), rep.run_id)
        os.makedirs(rep.log_dir, exist_ok=False)   # a fresh directory per run: nothing clobbered
    _run(remotes, opts, python, rep, say, on_line)
    rep.exit_code = outcome.exit_code(rep.failure)
    return rep


def _fail(rep: Report, errs: List[pf.PreflightError]) -> bool:
    rep.preflight_errors = [e.to_dict() for e in errs]
    rep.failure = {"kind": "preflight", "message": errs[0].message, "host": errs[0].host,
                   "rank": None, "fix": errs[0].fix}
    return False


def _preflight(remotes: Sequence[Remote], opts: Options, python: Optional[str], rep: Report,
               say: ProgressFn) -> bool:
    src = lp.node_sources()
    t = opts.connect_timeout + 30
    say("preflight: node facts")
    nodes = pf.gather_facts(remotes, python, t, opts.forks)
    errs = [pf.PreflightError(f"{n.host}: {n.error}", n.host, "install Python or pass "
                              "--node-python PATH" if "cannot run" in n.error else "")
            for n in nodes if n.error]
    if errs:
        return _fail(rep, errs)
    if opts.sync:
        say(f"preflight: copying {', '.join(opts.sync)} to every host")
        errs = lp.sync([r for r in remotes], opts.sync, t + 60, opts.forks)
        if errs:
            return _fail(rep, errs)
    say(f"preflight: torch under {python or 'python3'}, {opts.script} in {rep.chdir}")
    checks, errs = lp.check_nodes(remotes, python, src["script_launcher.py"], rep.chdir,
                                  opts.script, t + 60, opts.forks)
    if errs:
        return _fail(rep, errs)
    rep.interpreter = python or (checks[0].executable if checks else "python3")
    rep.torch = {c.host: c.torch or "" for c in checks}
    errs = _ranks_per_host(nodes, opts, rep)
    if opts.ifname:
        errs += pf.check_ifname(nodes, opts.ifname)
    if errs:
        return _fail(rep, errs)
    rep.ifname = opts.ifname or _suggest_ifname(nodes, rep)
    if opts.audit:
        say("preflight: audit of every host")
        rep.audit_errors = lp.audit_errors(remotes, python, opts.matrix, rep.cpu_ranks, t + 60,
                                           opts.forks)
        if rep.audit_errors and not opts.force:
            a = rep.audit_errors[0]
            rep.failure = {"kind": "audit", "host": a["host"], "rank": None,
                           "message": f"the audit found {len(rep.audit_errors)} error(s), "
                                      f"first on {a['host']}: {a['message']}",
                           "fix": "fix them (envcheck doctor shows how), or pass --force"}
            return False
        if rep.audit_errors:
            rep.notes.append(f"--force: starting despite {len(rep.audit_errors)} audit error(s)")
    rep.master_addr = opts.master_addr or pf.pick_master_addr(nodes, remotes, rep.ifname)
    rep.master_port = opts.master_port or nodes[0].free_port or 0
    if not rep.master_port:
        return _fail(rep, [pf.PreflightError(f"{remotes[0].name}: found no free TCP port for "
                                             "MASTER_PORT", remotes[0].name,
                                             "pass --master-port")])
    say(f"preflight: every node reaches MASTER_ADDR {rep.master_addr}:{rep.master_port}")
    errs = pf.check_master_reachable(remotes[0], remotes, python, src["allreduce_launcher.py"],
                                     rep.master_addr, rep.master_port, opts.connect_timeout,
                                     opts.forks)
    if errs:
        return _fail(rep, errs)
    rep.world_size = sum(rep.nproc.values())
    rep.run_id = MARKER + secrets.token_hex(6)
    return True


def _ranks_per_host(nodes: Sequence[pf.NodeFacts], opts: Options,
                    rep: Report) -> List[pf.PreflightError]:
    """One rank per GPU by default; never two ranks on one GPU; CPU ranks where no host has one."""
    gpus = [n.gpus for n in nodes]
    rep.cpu_ranks = not any(gpus)
    if any(gpus) and not all(gpus):
        return [pf.PreflightError(
            "some hosts have GPUs and some none: " + ", ".join(
                f"{n.host} {n.gpus}" for n in nodes), None,
            "launch on GPU nodes only, or on CPU nodes only")]
    errs = []
    for n in nodes:
        k = opts.nproc_per_node or n.gpus or 1
        if n.gpus and k > n.gpus:
            errs.append(pf.PreflightError(
                f"{n.host}: {k} rank(s) but {n.gpus} GPU(s): two ranks would share a GPU",
                n.host, "use --nproc-per-node at most the GPU count"))
        rep.nproc[n.host] = k
    if rep.cpu_ranks:
        rep.notes.append("no GPU on any host: CPU ranks, the script must use the gloo backend")
    return errs


def _suggest_ifname(nodes: Sequence[pf.NodeFacts], rep: Report) -> Optional[str]:
    if len(nodes) < 2:
        return None
    ifname = pf.suggest_ifname(nodes)
    rep.notes.append(f"no --ifname: using {ifname}, the interface whose subnet holds every other "
                     "node's address (pass --ifname to choose)" if ifname else
                     "no --ifname and no interface shares a subnet with every other node: "
                     "NCCL/gloo pick one themselves; pass --ifname")
    return ifname


def _run(remotes: Sequence[Remote], opts: Options, python: Optional[str], rep: Report,
         say: ProgressFn, on_line: Optional[LineFn]) -> None:
    names = [r.name for r in remotes]
    nprocs = [rep.nproc[n] for n in names]
    bases = [sum(nprocs[:i]) for i in range(len(remotes))]
    states = {b + k: RankState(b + k, n, k) for n, b, c in zip(names, bases, nprocs)
              for k in range(c)}
    env = dict(opts.env)
    env.update({"MASTER_ADDR": rep.master_addr, "MASTER_PORT": str(rep.master_port),
                "WORLD_SIZE": str(rep.world_size)})
    if rep.ifname:
        env["NCCL_SOCKET_IFNAME"] = env["GLOO_SOCKET_IFNAME"] = rep.ifname
    payload = json.dumps({k: v for k, v in lp.node_sources().items()
                          if k in ("script_launcher.py", "rank_supervisor.py")})
    stop = outcome.Stopper(remotes, lambda i: kill_cmd(rep.run_id, i, opts.grace + 3),
                           opts.connect_timeout + opts.grace + 15, say)

    def on_record(host: str, rec: Dict[str, Any]) -> None:
        if rec.get("type") == "exit" and rec.get("code") and not rec.get("stopped"):
            stop.request("rank", f"rank {rec.get('rank')} on {host} ended "
                                 f"({RankState(0, host, 0, exit_code=rec['code']).status})")
        elif rec.get("type") == "launcher" and rec.get("status") == "deadline":
            stop.request("timeout", f"{host} reached --run-timeout {opts.timeout:g} s")

    streams = [HostStream(n, {k: s for k, s in states.items() if s.host == n}, on_line,
                          on_record, rep.log_dir) for n in names]
    results: List[Optional[RunResult]] = [None] * len(remotes)

    def one(i: int) -> None:
        r = remotes[i]
        try:
            res = r.run(launch_cmd(opts, python, nprocs[i], bases[i], i, rep.run_id, i,
                                   rep.chdir), stdin=payload, env=env,
                        timeout=opts.timeout + opts.grace + opts.connect_timeout + 60,
                        on_stdout=streams[i].feed)
        except Exception as e:  # noqa: BLE001 - a bug must still stop the others
            res = RunResult(r.name, "", None, error=f"internal error: {type(e).__name__}: {e}")
        streams[i].close()
        results[i] = res
        done = any(x.get("type") == "launcher" and x.get("status") == "done"
                   for x in streams[i].records)
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
