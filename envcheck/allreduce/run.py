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
import threading
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce import preflight as pf
from envcheck.allreduce.cause import first_cause
from envcheck.allreduce.linkrate import allowed, node_link, percent
from envcheck.allreduce.nvlink import node_nvlink
from envcheck.allreduce.pairs import PairSpec, spec_doc
from envcheck.errors import UsageError
from envcheck.ranks import preflight as rp
from envcheck.ranks import records as rr
from envcheck.ranks.failure import Failure
from envcheck.ranks.plan import RankPlan
from envcheck.ranks.start import Starter, node_files
from envcheck.remote import Remote, RunResult, fan_out

MARKER = "envcheck-ar-"   # in every launcher's and worker's command line: `pgrep -f` finds a run
PASS_ENV = ("ENVCHECK_TEST_PERTURB_RANK",)   # test-only fault switch, forwarded to the workers


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
    # the caller has just seen torch import under node_python on every host it passes (doctor's
    # torch requirement, which keeps the others out): the preflight does not import it again on
    # each run (the fleet's, each pair's, each bisection step's: seconds of CPU per node each)
    torch_verified: bool = False


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
    # for rendezvous/timeout/collective_error, failure.suspects: the hosts of ranks that never
    # joined or hung (failure.host is the rank that waited)
    failure: Optional[Failure] = None
    preflight_errors: List[Dict[str, Any]] = field(default_factory=list)
    host_status: Dict[str, str] = field(default_factory=dict)
    logs: Dict[str, str] = field(default_factory=dict)   # per host: the launcher's stderr tail
    pairs: List[Dict[str, Any]] = field(default_factory=list)   # the workers' pair records
    links: Dict[str, Optional[Dict[str, Any]]] = field(default_factory=dict)  # host -> Link, rate known
    nvlinks: Dict[str, Optional[Dict[str, Any]]] = field(default_factory=dict)  # host -> NvLink, when known

    @property
    def wrong(self) -> int:
        return int(self.summary.get("wrong") or 0)

    def to_dict(self) -> Dict[str, Any]:
        return dict(asdict(self), failure=self.failure.to_dict() if self.failure else None)


def node_sources() -> Dict[str, str]:
    """The node files a run ships into its directory: the launcher, the supervision it shares
    with launch's (imported from that directory), the worker."""
    return node_files("allreduce_launcher.py", "rank_supervisor.py", "rank_protocol.py",
                      "allreduce_worker.py", "allreduce_pairs.py")


def launcher_args(opts: Options, backend: str, nproc: int, rank_base: int, run_id: str) -> List[Any]:
    """allreduce_launcher.py's arguments after `launch --dir DIR`: the ranks, then the worker's."""
    worker = ["--backend", backend, "--min-bytes", opts.min_bytes, "--max-bytes", opts.max_bytes,
              "--factor", opts.factor, "--dtype", opts.dtype, "--warmup", opts.warmup,
              "--iters", opts.iters, "--timeout", opts.timeout,
              "--rendezvous-timeout", opts.rendezvous_timeout, "--run-id", run_id]
    if opts.pairs:
        worker += ["--pairs", "pairs.json"] + ([] if opts.sweep else ["--no-sweep"])
    if opts.budget:
        worker += ["--budget", opts.budget]
    return ["--nproc", nproc, "--rank-base", rank_base, "--deadline", opts.run_timeout,
            "--run-id", run_id, "--"] + worker


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
    plan = _preflight(remotes, opts, report, sizes, say)
    if plan is None:
        return report
    return _run_ranks(remotes, opts, report, plan, say)


def _preflight(remotes: Sequence[Remote], opts: Options, report: Report, sizes: List[int],
               say: Callable[[str], None]) -> Optional[RankPlan]:
    """The harness's preflight with nccl-test's sizing (envcheck/allreduce/preflight.py); fills the
    report's backend, interface, world size and master. None with report.failure set: refused."""
    def size(nodes: List[rp.NodeFacts]) -> Tuple[List[int], List[rp.PreflightError]]:
        largest = max(sizes[-1], opts.pairs.bytes if opts.pairs else 0)
        report.backend, nprocs, errs = pf.ranks_per_host(nodes, opts.backend, opts.nproc_per_node, largest)
        return nprocs, errs

    wiring = rp.Wiring(opts.node_python, opts.ifname, opts.master_addr, opts.master_port,
                       opts.connect_timeout, opts.forks)
    # torch's import is checked here unless the caller saw it (opts.torch_verified)
    sections, checks, facts_timeout = (rp.PROBE_SECTIONS, [], 30) if opts.torch_verified else (
        pf.RANK_SECTIONS, [lambda nodes: pf.check_torch(nodes, opts.node_python)], 30 + pf.TORCH_TIMEOUT)
    pre = rp.preflight(remotes, wiring, size, notes=report.notes, say=say, sections=sections,
                       checks=checks, facts_timeout=facts_timeout)
    if pre.plan is not None:
        report.ifname, report.world_size = pre.plan.ifname, pre.plan.world_size
        report.master_addr, report.master_port = pre.plan.master_addr, pre.plan.master_port
        for n in pre.nodes:
            link = node_link(n.interfaces, n.ib_ports, pre.plan.ifname, report.backend)
            report.links[n.host] = link.to_dict() if link else None
            nv = node_nvlink(n.gpu_links)
            report.nvlinks[n.host] = nv.to_dict() if nv else None
    if pre.errors:
        report.preflight_errors = [e.to_dict() for e in pre.errors]
        report.failure = rp.refusal(pre.errors)
        return None
    return pre.plan


def _rank_env(plan: RankPlan, opts: Options) -> Dict[str, str]:
    env = plan.env()
    if opts.nccl_debug:
        env["NCCL_DEBUG"] = opts.nccl_debug
    for k in PASS_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    return env


def _run_ranks(remotes: Sequence[Remote], opts: Options, report: Report, plan: RankPlan,
               say: Callable[[str], None]) -> Report:
    """One launcher per host, all at once; the first host to fail stops the others."""
    report.run_id = MARKER + secrets.token_hex(6)
    env, nprocs, bases = _rank_env(plan, opts), plan.nprocs, plan.bases
    files = node_sources()
    if opts.pairs:   # written into the run directory with the node files
        files["pairs.json"] = json.dumps(spec_doc(opts.pairs, nprocs))
    starter = Starter(remotes, opts.node_python, "allreduce_launcher.py", files, report.run_id)
    aborted = threading.Event()
    first_failed: List[str] = []
    lock = threading.Lock()

    def stop_others(failed_index: int) -> None:
        fan_out([i for i in range(len(remotes)) if i != failed_index],
                lambda i: starter.stop(i, 5.0, opts.connect_timeout + 15), len(remotes))

    def one(i: int) -> RunResult:
        r = remotes[i]
        try:
            res = starter.start(i, launcher_args(opts, report.backend, nprocs[i], bases[i], report.run_id),
                                env, opts.run_timeout + 30)
        except Exception as e:  # noqa: BLE001 - a Remote that raises is a failed host: the others are stopped
            res = RunResult(r.name, "", None, error=f"{type(e).__name__}: {e}")
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
                starter.stop(i, 5.0, opts.connect_timeout + 15)
        return res

    say(f"running: {report.world_size} ranks on {len(remotes)} host(s), backend {report.backend}")
    # every host at once, whatever --forks says: ranks of a host not yet started would leave
    # the others waiting in the rendezvous
    results = fan_out(list(range(len(remotes))), one, len(remotes)).values_or(
        lambda i, e: RunResult(remotes[i].name, "", None, error=f"{type(e).__name__}: {e}"))
    return _analyse(report, remotes, results, nprocs, first_failed)


def _analyse(report: Report, remotes: Sequence[Remote], results: List[RunResult], nprocs: List[int],
             first_failed: List[str]) -> Report:
    per_host: Dict[str, List[rr.Record]] = {}
    for r, res in zip(remotes, results):
        recs = per_host[r.name] = rr.parse_text(res.stdout)
        # the launcher's stderr: every rank's log (NCCL_DEBUG output included), prefixed
        report.logs[r.name] = "\n".join(((res.error or "") + "\n" + res.stderr).strip().splitlines()[-60:])
        report.host_status[r.name] = ("ok" if res.ok else res.error or f"exit {res.exit_code}")
        report.ranks += [dict(j.data, node=r.name) for j in rr.of_type(recs, rr.Joined)]
        report.pairs += [p.data for p in rr.of_type(recs, rr.Pair)]
        report.rows += [am.make_row(x.bytes, am.dtype_size(report.dtype), report.dtype,
                                    x.time_us / 1e6, report.world_size, x.wrong)
                        for x in rr.of_type(recs, rr.Result)]
    report.ranks.sort(key=lambda x: x["rank"])
    report.rows.sort(key=lambda x: x["bytes"])
    report.summary = am.summarize(report.rows)
    allow = allowed(report.links, report.nvlinks, report.ranks, report.backend)
    report.summary.update(allowed_gbps=allow.gbps if allow else None, allowed_by=allow.by if allow else None,
                          percent_of_allowed=percent(report.summary["busbw"], allow.gbps) if allow else None)
    # a rank that reported anything from the rendezvous on (joined, or timed out/failed waiting
    # in it) was there; the others never made it that far
    joined = {x["rank"] for x in report.ranks} | {
        x.rank for recs in per_host.values() for x in rr.of_type(recs, rr.Timeout, rr.Error)
        if x.phase != "setup"}
    host_of = RankPlan([r.name for r in remotes], list(nprocs)).host_of()
    missing = [k for k in range(report.world_size) if k not in joined]
    if all(isinstance(x, RunResult) and x.ok for x in results):
        if missing:   # cannot happen unless a worker lied; never report success with a hole
            report.failure = Failure("missing_rank", f"rank {missing[0]} on {host_of[missing[0]]} "
                                     f"never reported", host_of[missing[0]], missing[0])
        return report
    report.failure = first_cause(remotes, results, per_host, host_of, missing, first_failed)
    return report
