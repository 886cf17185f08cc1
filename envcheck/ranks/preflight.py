"""The harness's preflight, before any rank starts: what each node has (the node probe's
sections), the plan of ranks (envcheck/ranks/plan.py), and whether every node reaches
MASTER_ADDR:PORT over TCP, so a firewall or a wrong address is named in seconds instead of every
rank waiting out the rendezvous timeout. A workload adds its own checks through two hooks: on
the nodes' facts (launch: torch, the script, --sync) and, once the interface is chosen, before
the master is (launch: the audit).
"""
from __future__ import annotations

import shlex
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence, Tuple

from envcheck.audit.probe import ProbeError, parse_probe_result, probe_command, shipped_source
from envcheck.facts import views
from envcheck.ranks.failure import Failure
from envcheck.ranks.plan import (NodeFacts, PreflightError, RankPlan, check_ifname, choose_ifname,
                                 pick_master_addr)
from envcheck.remote import Remote, RunResult, fan_out, last_json_object

NODE_DIR = Path(__file__).resolve().parent.parent / "node"
# What the ranks are sized and wired by, read by the node probe (the same GPU count `audit` shows),
# and what their links allow (net, ib, nvlink: envcheck/allreduce/linkrate.py)
PROBE_SECTIONS = ("host", "gpus", "net", "port", "resources", "ib", "nvlink")

SizeFn = Callable[[List[NodeFacts]], Tuple[List[int], List[PreflightError]]]
CheckFn = Callable[[List[NodeFacts]], List[PreflightError]]
GateFn = Callable[[RankPlan], Optional[Failure]]   # a failure refuses the run


def python_word(python: Optional[str]) -> str:
    """The node interpreter as a shell word: --node-python quoted, else python3, else python."""
    if python:
        return shlex.quote(python)
    return '"$(command -v python3 || command -v python || echo python3)"'


def node_cmd(python: Optional[str], mode: str, *args: Any) -> str:
    """A node script fed on stdin to the node's interpreter: nothing is left on the node."""
    return " ".join([python_word(python), "-", mode] + [shlex.quote(str(a)) for a in args])


def gather_facts(remotes: Sequence[Remote], python: Optional[str], timeout: float,
                 forks: int, sections: Sequence[str] = PROBE_SECTIONS) -> List[NodeFacts]:
    """The probe's `sections` on every host (a workload may ask for more: nccl-test's torch_import)."""
    sections = tuple(sections)
    source = shipped_source(sections)   # once, not in every host's thread

    def one(r: Remote) -> NodeFacts:
        res = r.run(probe_command(node_python=python, only=sections), stdin=source, timeout=timeout)
        if res.error:   # unreachable, auth, host key, timeout: the transport's own words
            return NodeFacts(r.name, error=res.error)
        try:
            facts = parse_probe_result(r.name, res, node_python=python)
            n = views.node(facts)
        except ProbeError as e:
            return NodeFacts(r.name, error=f"cannot run the probe under {python or 'python3'}: {e.reason}")
        return NodeFacts(r.name, n.hostname, n.gpus, n.interfaces, n.free_port, cpus=n.cpus,
                         mem_available=n.mem_available, ib_ports=n.ib_ports, gpu_links=n.gpu_links,
                         torch=views.torch_import(facts))

    return fan_out(list(remotes), one, forks).values_or(
        lambda r, e: NodeFacts(r.name, error=f"{type(e).__name__}: {e}"))


def check_master_reachable(master: Remote, remotes: Sequence[Remote], python: Optional[str],
                           addr: str, port: int, connect_timeout: float,
                           forks: int) -> List[PreflightError]:
    """A listener on the master host, then a bounded connect from every node (the master too:
    its own ranks connect to MASTER_ADDR like the others)."""
    src = (NODE_DIR / "rank_preflight.py").read_text()
    listen_res: List[RunResult] = []
    t = threading.Thread(target=lambda: listen_res.append(master.run(
        node_cmd(python, "listen", "--port", port, "--expect", len(remotes),
                 "--timeout", connect_timeout + 3),
        stdin=src, timeout=connect_timeout + 30)), daemon=True)
    t.start()

    def probe(r: Remote) -> RunResult:
        return r.run(node_cmd(python, "connect", "--addr", addr, "--port", port,
                              "--timeout", connect_timeout),
                     stdin=src, timeout=connect_timeout + 30)

    results = fan_out(list(remotes), probe, max(forks, 1)).values_or(
        lambda r, e: RunResult(r.name, "", None, error=f"{type(e).__name__}: {e}"))
    t.join(connect_timeout + 40)
    errs: List[PreflightError] = []
    ldoc = last_json_object(listen_res[0].stdout) if listen_res else None
    if ldoc is not None and not ldoc.get("ok") and ldoc.get("error"):
        return [PreflightError(f"{master.name}: {ldoc['error']}", master.name,
                               "pick a free port with --master-port, or omit it")]
    for r, res in zip(remotes, results):
        doc = last_json_object(res.stdout)
        if doc is None:
            why = res.error or res.tail(3)
            errs.append(PreflightError(f"{r.name}: connection test did not run: {why}", r.name))
        elif not doc.get("ok"):
            errs.append(PreflightError(
                f"{r.name} cannot reach MASTER_ADDR {addr}:{port} over TCP ({doc.get('error')})",
                r.name, "open the port between the nodes (firewall/security group), or set "
                "--master-addr to an address of the first host that every node can route to"))
    return errs


@dataclass
class Wiring:
    """What the user said about where the ranks run and meet; None: the harness finds out."""
    node_python: Optional[str] = None
    ifname: Optional[str] = None
    master_addr: Optional[str] = None
    master_port: Optional[int] = None
    connect_timeout: float = 10.0
    forks: int = 32


@dataclass
class Preflight:
    """How far the preflight got: the plan (as far as it was made), and why it stopped."""
    nodes: List[NodeFacts] = field(default_factory=list)
    plan: Optional[RankPlan] = None
    errors: List[PreflightError] = field(default_factory=list)
    failure: Optional[Failure] = None     # a gate's own refusal (launch: the audit)

    @property
    def ok(self) -> bool:
        return not self.errors and self.failure is None


class _Refused(Exception):
    pass


def _refuse_if(pre: Preflight, errs: List[PreflightError]) -> None:
    if errs:
        pre.errors = errs
        raise _Refused()


def preflight(remotes: Sequence[Remote], w: Wiring, size: SizeFn, *, notes: List[str],
              say: Callable[[str], None], checks: Sequence[CheckFn] = (),
              gate: Optional[GateFn] = None, sections: Sequence[str] = PROBE_SECTIONS,
              facts_timeout: float = 30.0) -> Preflight:
    """Facts, the workload's checks, the plan (size: ranks per host, the workload's rule), the
    interface (its note appended to `notes`), the gate, the master and its reachability."""
    pre = Preflight()
    try:
        say("preflight: node facts")
        pre.nodes = gather_facts(remotes, w.node_python, w.connect_timeout + facts_timeout, w.forks, sections)
        _refuse_if(pre, [PreflightError(f"{n.host}: {n.error}", n.host, "install Python or pass "
                                        "--node-python PATH" if "cannot run" in n.error else "")
                         for n in pre.nodes if n.error])
        for check in checks:
            _refuse_if(pre, check(pre.nodes))
        nprocs, errs = size(pre.nodes)
        _refuse_if(pre, errs + (check_ifname(pre.nodes, w.ifname) if w.ifname else []))
        ifname, note = choose_ifname(pre.nodes, w.ifname)
        notes += [note] if note else []
        pre.plan = plan = RankPlan([r.name for r in remotes], nprocs, ifname)
        pre.failure = gate(plan) if gate else None
        if pre.failure:
            return pre
        plan.master_addr = w.master_addr or pick_master_addr(pre.nodes, remotes, ifname)
        plan.master_port = w.master_port or pre.nodes[0].free_port or 0
        _refuse_if(pre, [] if plan.master_port else [PreflightError(
            f"{remotes[0].name}: found no free TCP port for MASTER_PORT", remotes[0].name,
            "pass --master-port")])
        say(f"preflight: every node reaches MASTER_ADDR {plan.master_addr}:{plan.master_port}")
        _refuse_if(pre, check_master_reachable(remotes[0], remotes, w.node_python, plan.master_addr,
                                               plan.master_port, w.connect_timeout, w.forks))
    except _Refused:
        pass
    return pre


def refusal(errs: List[PreflightError]) -> Failure:
    """The run's failure when the preflight refused: the first error, the rest in the report."""
    return Failure("preflight", errs[0].message, errs[0].host, None, errs[0].fix)
