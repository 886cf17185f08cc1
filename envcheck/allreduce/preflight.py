"""Preflight for `envcheck nccl-test`, run before any worker starts: what each node has (GPUs,
interfaces, a free port, CPUs and memory: the node probe's sections), which interface the ranks should talk over, and whether every node reaches
MASTER_ADDR:PORT over TCP — so a firewall or a wrong address is named in seconds instead of every
rank waiting out the rendezvous timeout.
"""
from __future__ import annotations

import ipaddress
import shlex
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence

from envcheck.audit.probe import ProbeError, parse_probe_result, probe_command, shipped_source
from envcheck.facts import views
from envcheck.remote import Remote, RunResult, fan_out, last_json_object

# interfaces that never carry traffic between nodes (the classic wrong picks for NCCL/gloo)
NOT_BETWEEN_NODES = ("lo", "docker", "virbr", "veth", "br-", "cni", "flannel", "kube-ipvs")


@dataclass
class PreflightError:
    """Why the test cannot start; host is the node to look at (None: all of them)."""

    message: str
    host: Optional[str] = None
    fix: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"message": self.message, "host": self.host, "fix": self.fix}


@dataclass
class NodeFacts:
    host: str
    hostname: str = ""
    gpus: int = 0
    interfaces: List[Dict[str, Any]] = field(default_factory=list)
    free_port: Optional[int] = None
    error: Optional[str] = None
    cpus: Optional[int] = None
    mem_available: Optional[int] = None     # bytes (MemAvailable), None where unknown
    ib_ports: List[Dict[str, Any]] = field(default_factory=list)   # active ones, with rate_gbps
    torch: Optional[views.TorchImport] = None   # whether torch imports (None: not asked)




def python_word(python: Optional[str]) -> str:
    """The node interpreter as a shell word: --node-python quoted, else python3, else python."""
    if python:
        return shlex.quote(python)
    return '"$(command -v python3 || command -v python || echo python3)"'


def node_cmd(python: Optional[str], mode: str, *args: Any) -> str:
    """The launcher fed on stdin to the node's interpreter: nothing is left on the node."""
    return " ".join([python_word(python), "-", mode] + [shlex.quote(str(a)) for a in args])


# What the ranks are sized and wired by, read by the node probe (the same GPU count `audit` shows)
PROBE_SECTIONS = ("host", "gpus", "net", "port", "resources", "ib")
# nccl-test's: also whether torch imports (launch asks its own node check, which looks for the script too)
RANK_SECTIONS = PROBE_SECTIONS + ("torch_import",)


def gather_facts(remotes: Sequence[Remote], python: Optional[str], timeout: float,
                 forks: int, sections: Sequence[str] = PROBE_SECTIONS) -> List[NodeFacts]:
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
                         mem_available=n.mem_available, ib_ports=n.ib_ports, torch=views.torch_import(facts))

    return fan_out(list(remotes), one, forks).values_or(
        lambda r, e: NodeFacts(r.name, error=f"{type(e).__name__}: {e}"))


TORCH_FIX = "pass --node-python with the venv or conda env that has torch, or install torch there"


def check_torch(nodes: Sequence[NodeFacts], python: Optional[str]) -> List[PreflightError]:
    """Every rank imports torch: a node where it does not import is named before any starts
    (what launch's preflight says too), instead of 'rank 1 could not start: No module named'."""
    return [PreflightError(f"{n.host}: torch does not import under {n.torch.executable or python or 'python3'}: "
                           f"{n.torch.error or 'unknown error'}", n.host, TORCH_FIX)
            for n in nodes if n.torch is not None and not n.torch.version]


def _addrs(facts: NodeFacts) -> List[ipaddress.IPv4Interface]:
    out = []
    for iface in facts.interfaces:
        for a in iface.get("addrs", []):
            try:
                out.append(ipaddress.IPv4Interface(a))
            except ValueError:
                pass
    return out


def suggest_ifname(nodes: Sequence[NodeFacts]) -> Optional[str]:
    """The interface name that, on every node, holds a subnet containing an address of every
    other node; None when there is no such single name (or only one node). lo/docker0 and
    friends are never suggested: they hold no other node's address, or only a look-alike one."""
    if len(nodes) < 2:
        return None
    names = None
    for n in nodes:
        others = [a.ip for m in nodes if m is not n for a in _addrs(m)]
        fits = set()
        for iface in n.interfaces:
            if iface["name"].startswith(NOT_BETWEEN_NODES):
                continue
            mine = [ipaddress.IPv4Interface(a) for a in iface.get("addrs", [])]
            # a peer address equal to our own is a look-alike (a default bridge), not the peer
            peers_in = [m for m in nodes if m is not n
                        and any(a.ip in x.network and a.ip != x.ip for a in _addrs(m)
                                for x in mine)]
            if len(peers_in) == len(nodes) - 1 and others:
                fits.add(iface["name"])
        names = fits if names is None else names & fits
    return sorted(names)[0] if names else None


def iface_addr(node: NodeFacts, name: str) -> Optional[str]:
    for iface in node.interfaces:
        if iface["name"] == name and iface.get("addrs"):
            return str(ipaddress.IPv4Interface(iface["addrs"][0]).ip)
    return None


def check_ifname(nodes: Sequence[NodeFacts], ifname: str) -> List[PreflightError]:
    errs = []
    for n in nodes:
        names = [i["name"] for i in n.interfaces]
        if ifname not in names:
            errs.append(PreflightError(
                f"{n.host}: interface {ifname!r} (--ifname, exported as NCCL_SOCKET_IFNAME and "
                f"GLOO_SOCKET_IFNAME) does not exist; it has {', '.join(names) or 'none'}",
                n.host, "name the interface every node has on the shared network, or omit "
                "--ifname to get a suggestion"))
        elif not iface_addr(n, ifname):
            errs.append(PreflightError(f"{n.host}: interface {ifname!r} has no IPv4 address",
                                       n.host, f"bring {ifname} up with an address"))
    return errs


def check_master_reachable(master: Remote, remotes: Sequence[Remote], python: Optional[str],
                           launcher_src: str, addr: str, port: int, connect_timeout: float,
                           forks: int) -> List[PreflightError]:
    """A listener on the master host, then a bounded connect from every node (the master too:
    its own ranks connect to MASTER_ADDR like the others)."""
    listen_res: List[RunResult] = []
    t = threading.Thread(target=lambda: listen_res.append(master.run(
        node_cmd(python, "listen", "--port", port, "--expect", len(remotes),
                 "--timeout", connect_timeout + 3),
        stdin=launcher_src, timeout=connect_timeout + 30)), daemon=True)
    t.start()

    def probe(r: Remote) -> RunResult:
        return r.run(node_cmd(python, "connect", "--addr", addr, "--port", port,
                              "--timeout", connect_timeout),
                     stdin=launcher_src, timeout=connect_timeout + 30)

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


def pick_master_addr(nodes: Sequence[NodeFacts], remotes: Sequence[Remote],
                     ifname: Optional[str]) -> str:
    if len(remotes) == 1 and (remotes[0].is_local or not ifname):
        return "127.0.0.1"
    if ifname:
        a = iface_addr(nodes[0], ifname)
        if a:
            return a
    return str(getattr(remotes[0], "hostname", None) or getattr(remotes[0], "host", None)
               or remotes[0].name)


ProgressFn = Callable[[str], None]


# host memory one gloo rank holds at the largest size: the send/receive buffer and the copy the
# sums are checked against (the worker's allocations), with room for torch itself
RANK_BUFFERS = 3


def check_capacity(n: NodeFacts, ranks: int, backend: str, max_bytes: int) -> List["PreflightError"]:
    """Ranks a node can run at once and the memory the largest message needs, before any rank
    starts: 100000 gloo ranks or a 12 GB message on a small node must be a preflight error, not
    an OOM kill or a fork storm."""
    errs = []
    if backend == "gloo" and n.cpus and ranks > n.cpus:
        errs.append(PreflightError(f"{n.host}: {ranks} gloo rank(s) but the node has {n.cpus} CPU(s)",
                                   n.host, f"use --nproc-per-node {n.cpus} or fewer"))
    need = ranks * RANK_BUFFERS * max_bytes
    if backend == "gloo" and n.mem_available is not None and need > n.mem_available:
        errs.append(PreflightError(
            f"{n.host}: {ranks} rank(s) x {max_bytes} bytes need about {need >> 20} MiB of memory, "
            f"{n.mem_available >> 20} MiB is available", n.host, "lower --max-bytes or --nproc-per-node"))
    return errs
