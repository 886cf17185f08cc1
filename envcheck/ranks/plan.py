"""The plan of a run's ranks, pure: from what each node has (its probe facts) and what the user
asked, how many ranks each host starts, at which global rank, over which interface, and where
they meet (MASTER_ADDR:MASTER_PORT). Both workloads (nccl-test, launch) plan here; how many
ranks a host runs is the workload's own rule, handed in.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

# interfaces that never carry traffic between nodes (the classic wrong picks for NCCL/gloo)
NOT_BETWEEN_NODES = ("lo", "docker", "virbr", "veth", "br-", "cni", "flannel", "kube-ipvs")


@dataclass
class PreflightError:
    """Why the ranks cannot start; host is the node to look at (None: all of them)."""

    message: str
    host: Optional[str] = None
    fix: str = ""

    def to_dict(self) -> Dict[str, Any]:
        return {"message": self.message, "host": self.host, "fix": self.fix}


@dataclass
class NodeFacts:
    """What the harness sizes and wires a host's ranks by (the probe's host, gpus, net, port and
    resources sections, envcheck/facts/views.py), or why it could not be read."""
    host: str
    hostname: str = ""
    gpus: int = 0
    interfaces: List[Dict[str, Any]] = field(default_factory=list)
    free_port: Optional[int] = None
    error: Optional[str] = None
    cpus: Optional[int] = None
    mem_available: Optional[int] = None     # bytes (MemAvailable), None where unknown
    ib_ports: List[Dict[str, Any]] = field(default_factory=list)   # active ones, with rate_gbps
    gpu_links: List[Dict[str, Any]] = field(default_factory=list)  # per GPU: name, compute_capability, nvlink
    torch: Optional[Any] = None             # facts.views.TorchImport when the probe was asked (torch_import)


@dataclass
class RankPlan:
    """Where every rank runs and how the ranks meet. Host i runs nprocs[i] ranks, global ranks
    bases[i] .. bases[i] + nprocs[i] - 1."""
    hosts: List[str]
    nprocs: List[int]
    ifname: Optional[str] = None
    master_addr: str = ""
    master_port: int = 0

    @property
    def world_size(self) -> int:
        return sum(self.nprocs)

    @property
    def bases(self) -> List[int]:
        return [sum(self.nprocs[:i]) for i in range(len(self.nprocs))]

    def host_of(self) -> Dict[int, str]:
        """Global rank -> the host it runs on."""
        return {b + k: h for h, b, n in zip(self.hosts, self.bases, self.nprocs) for k in range(n)}

    def env(self) -> Dict[str, str]:
        """The environment every rank gets from its launcher (env:// rendezvous)."""
        env = {"MASTER_ADDR": self.master_addr, "MASTER_PORT": str(self.master_port),
               "WORLD_SIZE": str(self.world_size)}
        if self.ifname:
            env["NCCL_SOCKET_IFNAME"] = env["GLOO_SOCKET_IFNAME"] = self.ifname
        return env


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


def choose_ifname(nodes: Sequence[NodeFacts], given: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    """The interface the ranks talk over and the note that says how it was chosen (None: the
    user named it, or there is one host)."""
    if given or len(nodes) < 2:
        return given, None
    ifname = suggest_ifname(nodes)
    if ifname:
        return ifname, (f"no --ifname: using {ifname}, the interface whose subnet holds every other "
                        f"node's address (pass --ifname to choose)")
    return None, ("no --ifname and no interface shares a subnet with every other node: NCCL/gloo "
                  "pick one themselves (lo and docker0 are the classic wrong picks); pass --ifname")


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


def pick_master_addr(nodes: Sequence[NodeFacts], remotes: Sequence[Any], ifname: Optional[str]) -> str:
    """The first host's address on the chosen interface; 127.0.0.1 for one local host (or one
    host and no interface); else the name the first host was reached by."""
    if len(remotes) == 1 and (remotes[0].is_local or not ifname):
        return "127.0.0.1"
    if ifname:
        a = iface_addr(nodes[0], ifname)
        if a:
            return a
    return str(getattr(remotes[0], "hostname", None) or getattr(remotes[0], "host", None)
               or remotes[0].name)
