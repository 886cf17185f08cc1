"""What the hardware allows, so a bus bandwidth can be read as a share of it: the rate a node
reports for the link its ranks talk over, and inside one node NVLink's (envcheck/allreduce/
nvlink.py). Pure: the node facts come from the harness's preflight (envcheck/ranks/preflight.py,
the probe's sections net: sysfs `speed` of every interface; ib: the rate of every active
InfiniBand port; nvlink: the links up per GPU).

nccl-tests' busbw is defined so that it compares with the hardware's link bandwidth whatever the
number of ranks (its doc/PERFORMANCE.md): for two ranks each one sends and receives the whole
message, so a pair's busbw can at most reach the per-direction rate of the slower end. Ranks of
one node that run at the same time (rails) share the node's links.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional, Sequence

from envcheck.allreduce.nvlink import slowest as nvslowest


@dataclass
class Link:
    gbps: float          # GB/s (1e9 B/s) per direction, for the whole node
    source: str          # "eth0 10 Gb/s", "4 InfiniBand ports, 400 Gb/s each"

    def per_rank(self, ranks: int) -> float:
        return self.gbps / max(1, ranks)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)


def _gbit(rate_gbit: float) -> str:
    return f"{rate_gbit:g} Gb/s"


def node_link(interfaces: Sequence[Dict[str, Any]], ib_ports: Sequence[Dict[str, Any]],
              ifname: Optional[str], backend: str) -> Optional[Link]:
    """The node's rate on the path its ranks use: NCCL's InfiniBand/RoCE ports when it has active
    ones (NCCL prefers them to sockets), else the interface NCCL/gloo was told or found to use."""
    if backend == "nccl" and ib_ports:
        rates = [float(p["rate_gbps"]) for p in ib_ports if p.get("rate_gbps")]
        if rates:
            same = len(set(rates)) == 1
            src = (f"{len(rates)} InfiniBand port(s), {_gbit(rates[0])} each" if same
                   else f"{len(rates)} InfiniBand ports, {_gbit(sum(rates))} together")
            return Link(sum(rates) / 8.0, src)
    for i in interfaces:
        if ifname and i.get("name") == ifname and i.get("speed"):
            mbit = float(i["speed"])
            return Link(mbit / 8000.0, f"{ifname} {_gbit(mbit / 1000.0)}")
    return None


def slowest(links: Sequence[Optional[Link]], ranks: Sequence[int]) -> Optional[float]:
    """GB/s one rank can expect when these nodes' ranks all talk at once: the slowest node's
    link shared by its ranks; None when any node's rate is unknown."""
    if not links or any(x is None for x in links):
        return None
    return min(x.per_rank(r) for x, r in zip(links, ranks))


def of_run(links: Dict[str, Optional[Dict[str, Any]]], ranks: Sequence[Dict[str, Any]],
           hosts: Optional[Sequence[str]] = None) -> Optional[float]:
    """What one rank of a run can expect (GB/s): from a Report's links and rank records
    (`node`: the host each rank ran on), over `hosts` (default: every host with a rank)."""
    per_host: Dict[str, int] = {}
    for r in ranks:
        h = r.get("node", r.get("host"))
        per_host[h] = per_host.get(h, 0) + 1
    names = list(hosts) if hosts is not None else list(per_host)
    if not names or any(h not in per_host for h in names):
        return None
    return slowest([Link(**links[h]) if links.get(h) else None for h in names], [per_host[h] for h in names])


def percent(busbw: Optional[float], allowed: Optional[float]) -> Optional[float]:
    if busbw is None or not allowed:
        return None
    return 100.0 * busbw / allowed


def pct(p: float) -> str:
    """87 (not 8.7e+01), 104 (NVLink SHARP can pass the links' figure), 0.52."""
    return f"{p:.0f}" if p >= 10 else f"{p:.2g}"


@dataclass
class Allowed:
    """What one rank of a run can expect, GB/s per direction, and what says so."""
    gbps: float
    by: str              # "NVLink 4 × 18", "eth0 10 Gb/s", "2 InfiniBand port(s), 400 Gb/s each"


def allowed(links: Dict[str, Optional[Dict[str, Any]]], nvlinks: Dict[str, Optional[Dict[str, Any]]],
            ranks: Sequence[Dict[str, Any]], backend: str) -> Optional[Allowed]:
    """What one rank of a whole run can expect. On one host nothing crosses the network: NCCL's
    ranks talk over NVLink (its figure; none without NVLink: PCIe or shared memory, rate not
    known here), gloo's over the kernel's loopback (not known). Across hosts, the slowest
    node's link shared by its ranks; with NCCL, the slowest node's NVLink bounds it too."""
    hosts = sorted({r.get("node", r.get("host")) for r in ranks})
    nv = nvslowest(nvlinks, hosts) if backend == "nccl" else None
    if len(hosts) == 1:
        return Allowed(nv.gbps, nv.label) if nv else None
    net = of_run(links, ranks)
    if net is None:
        return None
    if nv and nv.gbps < net:
        return Allowed(nv.gbps, nv.label)
    return Allowed(net, ", ".join(sorted({d["source"] for h, d in links.items() if d and h in hosts})))
