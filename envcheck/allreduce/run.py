"""`envcheck nccl-test` orchestration: preflight, then one launcher per host starting its ranks
of envcheck/node/allreduce_worker.py, then the report. Codes against Remote only.

Never hangs, never leaves strays: every worker has a watchdog (--timeout per collective, a
rendezvous timeout); each host's launcher kills its ranks when one fails, when it is signalled,
orphaned, its output connection closes or its deadline passes; and as soon as one host's launcher
fails, the controller stops the launchers on every other host.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce import preflight as pf
from envcheck.allreduce.cause import first_cause
from envcheck.allreduce.linkrate import node_link
from envcheck.allreduce.pairs import PairSpec, spec_doc
from envcheck.errors import UsageError
from envcheck.remote import Remote, RunResult, fan_out, json_objects

NODE_DIR = Path(__file__).resolve().parent.parent / "node"
MARKER = "envcheck-ar-"   # in every launcher's and worker's command line: `pgrep -f` finds a run
PASS_ENV = ("ENVCHECK_TEST_PERTURB_RANK",)   # test-only fault switch, forwarded to the workers


def boot(entry: str) -> str:
    """Python code that runs on the node with the node scripts as JSON on stdin: writes them to
    the run's own directory (--dir), then becomes `entry` (exec), which removes the directory
    when it ends. Shared by every command that starts a supervising launcher on the nodes."""
    return ("import sys,json,os;a=sys.argv;d=a[a.index('--dir')+1];os.makedirs(d,0o700);"
            "p=json.load(sys.stdin);"
            "[(lambda f:(f.write(v),f.close()))(open(os.path.join(d,k),'w')) for k,v in p.items()];"
            "os.execv(sys.executable,[sys.executable,os.path.join(d,%r)]+a[1:])" % entry)


BOOT = boot("allreduce_launcher.py")


@dataclass
class Options:
    backend: str = "auto"                 # nccl | gloo | auto
    nproc_per_node: Optional[int] = None  # default: the node's GPU count; 2 without GPUs
    min_bytes: int = 8
    max_bytes: int = 256 * 1024 ** 2
    factor: int = 2
    dtype: str = "float32"
    warmup: int = 5
    iters: int = 20
    timeout: float = 60.0                 # per collective
    rendezvous_timeout: float = 60.0
    run_timeout: float = 1800.0           # the whole run on one host, a last bound
    master_addr: Optional[str] = None
    master_port: Optional[int] = None
    ifname: Optional[str] = None
    node_python: Optional[str] = None     # None: python3, else python
    connect_timeout: float = 10.0
    forks: int = 32
    nccl_debug: str = "INFO"
    pairs: Optional[PairSpec] = None      # also rounds of node pairs (envcheck/allreduce/pairs.py)
    sweep: bool = True                    # False: the pair rounds only
    budget: float = 0.0                   # seconds of timed loop per size; 0: exactly warmup/iters


@dataclass
class Report:
    hosts: List[str]
    backend: str = ""
    dtype: str = "float32"
    world_size: int = 0
    master_addr: str = ""
    master_port: int = 0
    ifname: Optional[str] = None
    run_id: str = ""
    rows: List[Dict[str, Any]] = field(default_factory=list)
    summary: Dict[str, Any] = field(default_factory=dict)
    ranks: List[Dict[str, Any]] = field(default_factory=list)
    notes: List[str] = field(default_factory=list)
    # {"kind", "message", "host", "rank", "fix"} and, for rendezvous/timeout/collective_error,
    # "suspects": the hosts of ranks that never joined or hung ("host" is the rank that waited)
    failure: Optional[Dict[str, Any]] = None
    preflight_errors: List[Dict[str, Any]] = field(default_factory=list)
    host_status: Dict[str, str] = field(default_factory=dict)
    logs: Dict[str, str] = field(default_factory=dict)   # per host: the launcher's stderr tail
    pairs: List[Dict[str, Any]] = field(default_factory=list)   # the workers' pair records
    links: Dict[str, Optional[Dict[str, Any]]] = field(default_factory=dict)  # host -> Link, rate known

    @property
    def wrong(self) -> int:
        return int(self.summary.get("wrong") or 0)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def node_sources() -> Dict[str, str]:
    """The node files a run ships into its directory: the launcher, the supervision it shares
    with launch's (imported from that directory), the worker."""
    return {name: (NODE_DIR / name).read_text() for name in
            ("allreduce_launcher.py", "rank_supervisor.py", "allreduce_worker.py", "allreduce_pairs.py")}


def run_dir(run_id: str, index: int) -> str:
    return f"${{TMPDIR:-/tmp}}/{run_id}-{index}"


def launch_cmd(opts: Options, backend: str, nproc: int, rank_base: int, run_id: str,
               index: int) -> str:
    worker = ["--backend", backend, "--min-bytes", opts.min_bytes, "--max-bytes", opts.max_bytes,
              "--factor", opts.factor, "--dtype", opts.dtype, "--warmup", opts.warmup,
              "--iters", opts.iters, "--timeout", opts.timeout,
              "--rendezvous-timeout", opts.rendezvous_timeout, "--run-id", run_id]
    if opts.pairs:
        worker += ["--pairs", "pairs.json"] + ([] if opts.sweep else ["--no-sweep"])
    if opts.budget:
        worker += ["--budget", opts.budget]
    args = ["launch", "--dir", "DIR", "--nproc", nproc, "--rank-base", rank_base,
            "--deadline", opts.run_timeout, "--run-id", run_id, "--"] + worker
    quoted = " ".join(shlex.quote(str(a)) for a in args)
    # the directory expands on the node ($TMPDIR there), so it goes in unquoted-but-safe
    quoted = quoted.replace(" DIR ", f' "{run_dir(run_id, index)}" ', 1)
    return f"{pf.python_word(opts.node_python)} -c {shlex.quote(BOOT)} {quoted}"


def kill_cmd(run_id: str, index: int, wait_s: float = 5.0) -> str:
    """Stop one host's launcher and its ranks: TERM to the launcher's process group (it cleans
    up), then KILL for anything left, then the run directory."""
    d = run_dir(run_id, index)
    # wait_s for the launcher to stop its ranks (nccl-test's gives them 2 s) and print logs
    return (f'd="{d}"; p=$(cat "$d/launcher.pid" 2>/dev/null); '
            f'if [ -n "$p" ]; then kill -TERM -- -"$p" 2>/dev/null; i=0; '
            f'while kill -0 "$p" 2>/dev/null && [ $i -lt {int(wait_s * 10)} ]; do sleep 0.1; i=$((i+1)); done; '
            f'kill -KILL -- -"$p" 2>/dev/null; fi; rm -rf "$d"; true')


def parse_records(text: str) -> List[Dict[str, Any]]:
    """The worker's and launcher's typed JSON records, in order."""
    return [o for o in json_objects(text) if "type" in o]


def check_options(opts: Options) -> List[int]:
    """The sweep's message sizes; raises UsageError for options no node needs to see to refuse."""
    if opts.backend not in ("auto", "nccl", "gloo"):
        raise UsageError(f"--backend {opts.backend!r} is not one of nccl, gloo, auto",
                         "use --backend auto (nccl on GPU nodes, gloo otherwise)")
    elem = am.dtype_size(opts.dtype)
    sizes = am.sweep_sizes(opts.min_bytes, opts.max_bytes, opts.factor, elem)
    if not sizes:
        raise UsageError(f"no message size between --min-bytes {opts.min_bytes} and "
                         f"--max-bytes {opts.max_bytes} holds one {opts.dtype}",
                         "raise --max-bytes to at least the size of one element")
    return sizes


def run_allreduce(remotes: Sequence[Remote], opts: Options,
                  progress: Optional[Callable[[str], None]] = None) -> Report:
    say = progress or (lambda _m: None)
    if not remotes:
        raise UsageError("no hosts to test", "name hosts, or none for this machine")
    sizes = check_options(opts)
    report = Report(hosts=[r.name for r in remotes], dtype=opts.dtype)
    src = node_sources()
    nprocs = _preflight(remotes, opts, report, src["allreduce_launcher.py"], sizes, say)
    if nprocs is None:
        return report
    return _run_ranks(remotes, opts, report, src, nprocs, say)


def _refuse(report: Report, errs: List[pf.PreflightError]) -> None:
    """Record why the run cannot start (None, so a preflight can `return _refuse(...)`)."""
    report.preflight_errors = [e.to_dict() for e in errs]
    first = errs[0]
    report.failure = {"kind": "preflight", "message": first.message, "host": first.host,
                      "rank": None, "fix": first.fix}


def _preflight(remotes: Sequence[Remote], opts: Options, report: Report, launcher: str,
               sizes: List[int], say: Callable[[str], None]) -> Optional[List[int]]:
    """Everything that must hold before a rank starts; fills the report's backend, interface,
    world size and master. Returns the ranks per host, or None with report.failure set."""
    say("preflight: node facts")
    # the probe's own commands have 15 s each; importing torch 60 s
    nodes = pf.gather_facts(remotes, opts.node_python, opts.connect_timeout + 90, opts.forks, pf.RANK_SECTIONS)
    errs = [pf.PreflightError(f"{n.host}: {n.error}", n.host,
                              "" if "cannot run" not in n.error else
                              "install Python or pass --node-python PATH") for n in nodes if n.error]
    if errs:
        return _refuse(report, errs)
    errs = pf.check_torch(nodes, opts.node_python)
    if errs:
        return _refuse(report, errs)

    backend = opts.backend
    if backend == "auto":
        backend = "nccl" if all(n.gpus > 0 for n in nodes) else "gloo"
    nprocs = []
    for n in nodes:
        k = opts.nproc_per_node or (n.gpus if backend == "nccl" else 2)
        if backend == "nccl" and k > n.gpus:
            errs.append(pf.PreflightError(
                f"{n.host}: {k} rank(s) for nccl but {n.gpus} GPU(s): two ranks would share a GPU"
                if n.gpus else f"{n.host}: --backend nccl but the node's driver lists no GPU",
                n.host, "use --nproc-per-node at most the GPU count, or --backend gloo"))
        errs += pf.check_capacity(n, k, backend, max(sizes[-1], opts.pairs.bytes if opts.pairs else 0))
        nprocs.append(k)
    if opts.ifname:
        errs += pf.check_ifname(nodes, opts.ifname)
    if errs:
        return _refuse(report, errs)
    ifname = opts.ifname
    if not ifname and len(nodes) > 1:
        ifname = pf.suggest_ifname(nodes)
        if ifname:
            report.notes.append(f"no --ifname: using {ifname}, the interface whose subnet holds "
                                f"every other node's address (pass --ifname to choose)")
        else:
            report.notes.append("no --ifname and no interface shares a subnet with every other "
                                "node: NCCL/gloo pick one themselves (lo and docker0 are the "
                                "classic wrong picks); pass --ifname")
    report.backend, report.ifname = backend, ifname
    for n in nodes:
        link = node_link(n.interfaces, n.ib_ports, ifname, backend)
        report.links[n.host] = link.to_dict() if link else None
    report.world_size = sum(nprocs)
    master_addr = opts.master_addr or pf.pick_master_addr(nodes, remotes, ifname)
    master_port = opts.master_port or nodes[0].free_port
    if not master_port:
        return _refuse(report, [pf.PreflightError(
            f"{remotes[0].name}: found no free TCP port for MASTER_PORT", remotes[0].name,
            "pass --master-port")])
    report.master_addr, report.master_port = master_addr, master_port

    say(f"preflight: every node reaches MASTER_ADDR {master_addr}:{master_port}")
    errs = pf.check_master_reachable(remotes[0], remotes, opts.node_python, launcher,
                                     master_addr, master_port, opts.connect_timeout, opts.forks)
    if errs:
        return _refuse(report, errs)
    return nprocs


def _rank_env(report: Report, opts: Options) -> Dict[str, str]:
    env = {"MASTER_ADDR": report.master_addr, "MASTER_PORT": str(report.master_port),
           "WORLD_SIZE": str(report.world_size)}
    if opts.nccl_debug:
        env["NCCL_DEBUG"] = opts.nccl_debug
    if report.ifname:
        env["NCCL_SOCKET_IFNAME"] = report.ifname
        env["GLOO_SOCKET_IFNAME"] = report.ifname
    for k in PASS_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    return env


def _run_ranks(remotes: Sequence[Remote], opts: Options, report: Report, src: Dict[str, str],
               nprocs: List[int], say: Callable[[str], None]) -> Report:
    """One launcher per host, all at once; the first host to fail stops the others."""
    run_id = MARKER + secrets.token_hex(6)
    report.run_id = run_id
    env_common = _rank_env(report, opts)
    backend = report.backend
    if opts.pairs:   # written into the run directory with the node files
        src = dict(src, **{"pairs.json": json.dumps(spec_doc(opts.pairs, nprocs))})
    payload = json.dumps(src)
    bases = [sum(nprocs[:i]) for i in range(len(remotes))]
    aborted = threading.Event()
    first_failed: List[str] = []
    lock = threading.Lock()

    def stop_others(failed_index: int) -> None:
        def kill(i: int) -> RunResult:
            return remotes[i].run(kill_cmd(run_id, i), timeout=opts.connect_timeout + 15)
        fan_out([i for i in range(len(remotes)) if i != failed_index], kill, len(remotes))

    def one(i: int) -> RunResult:
        r = remotes[i]
        res = r.run(launch_cmd(opts, backend, nprocs[i], bases[i], run_id, i), stdin=payload,
                    timeout=opts.run_timeout + 30, env=env_common)
        if not res.ok:
            with lock:
                first = not aborted.is_set()
                aborted.set()
                if first:
                    first_failed.append(r.name)
            if first:
                say(f"{r.name} failed: stopping the ranks on every other host")
                stop_others(i)
            if res.error:   # our own timeout or a lost connection: make sure nothing is left
                r.run(kill_cmd(run_id, i), timeout=opts.connect_timeout + 15)
        return res

    say(f"running: {report.world_size} ranks on {len(remotes)} host(s), backend {backend}")
    # every host at once, whatever --forks says: ranks of a host not yet started would leave
    # the others waiting in the rendezvous
    results = fan_out(list(range(len(remotes))), one, len(remotes)).values_or(
        lambda i, e: RunResult(remotes[i].name, "", None, error=f"{type(e).__name__}: {e}"))
    return _analyse(report, remotes, results, nprocs, bases, first_failed)


def _analyse(report: Report, remotes: Sequence[Remote], results: List[RunResult], nprocs: List[int],
             bases: List[int], first_failed: List[str]) -> Report:
    per_host: Dict[str, List[Dict[str, Any]]] = {}
    for r, res in zip(remotes, results):
        recs = parse_records(res.stdout)
        per_host[r.name] = recs
        # the launcher's stderr: every rank's log (NCCL_DEBUG output included), prefixed
        report.logs[r.name] = "\n".join(((res.error or "") + "\n" + res.stderr).strip().splitlines()[-60:])
        report.host_status[r.name] = ("ok" if res.ok else res.error or f"exit {res.exit_code}")
        for rec in recs:
            if rec["type"] == "rank":
                rec = dict(rec, node=r.name)
                report.ranks.append(rec)
            elif rec["type"] == "pair":
                report.pairs.append(rec)
            elif rec["type"] == "result":
                report.rows.append(am.make_row(int(rec["bytes"]), am.dtype_size(report.dtype),
                                               report.dtype, float(rec["time_us"]) / 1e6,
                                               report.world_size, rec.get("wrong")))
    report.ranks.sort(key=lambda x: x["rank"])
    report.rows.sort(key=lambda x: x["bytes"])
    report.summary = am.summarize(report.rows)
    # a rank that reported anything from the rendezvous on (joined, or timed out/failed waiting
    # in it) was there; the others never made it that far
    joined = {x["rank"] for x in report.ranks} | {
        x.get("rank") for recs in per_host.values() for x in recs
        if x["type"] in ("timeout", "error") and x.get("phase") != "setup"}
    host_of = {}
    for r, n, b in zip(remotes, nprocs, bases):
        for k in range(n):
            host_of[b + k] = r.name
    missing = [k for k in range(report.world_size) if k not in joined]
    if all(isinstance(x, RunResult) and x.ok for x in results):
        if missing:   # cannot happen unless a worker lied; never report success with a hole
            report.failure = {"kind": "missing_rank", "rank": missing[0],
                              "host": host_of[missing[0]],
                              "message": f"rank {missing[0]} on {host_of[missing[0]]} never "
                                         f"reported", "fix": ""}
        return report
    report.failure = first_cause(remotes, results, per_host, host_of, missing, first_failed)
    return report
