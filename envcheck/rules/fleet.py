"""Cross-node rules: what must be the same on every node of a training job, judged by majority so
nobody has to write the expected configuration down.

Pure: a mapping host -> facts (only hosts that were audited) in, findings and a drift table out.
Mismatched driver, toolkit, cuDNN, torch (with its CUDA variant), NCCL or Python (major.minor)
across the ranks of one job make it hang or crash (NCCL version skew fails in ncclCommInitRank,
different torch builds disagree on collective layouts, pickled objects differ across Pythons):
errors. Different GPU models or counts only make it slow or unbalanced: warnings.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from envcheck.facts import schema as F
from envcheck.facts.views import hostname, machine_id
from envcheck.hostlist import compress_hostlist
from envcheck.model import ERROR, WARNING, Finding, sort_findings

Facts = Dict[str, Any]
MISSING = "-"  # how an absent value is shown; absent on some hosts only is a difference too


def _torch(f: Facts) -> Optional[str]:
    raw = F.package_version(f, "torch")
    if raw:
        return raw
    v = F.torch_version(f)
    if not v:
        return None
    local = F.torch_local(f)
    return f"{v}+{local}" if local else v


def _python(f: Facts) -> Optional[str]:
    v = F.python_version(f)
    return ".".join(v.split(".")[:2]) if v else None


def _gpu_models(f: Facts) -> Optional[str]:
    names = [g.get("name") or "?" for g in F.gpus(f)]
    if not names:
        return None
    counts = Counter(names)
    return ", ".join(f"{n}" if c == 1 else f"{c}x {n}" for n, c in sorted(counts.items()))


def _gpu_count(f: Facts) -> Optional[str]:
    if not F.gpus_reported(f):
        return None
    return str(len(F.gpus(f)))


def _pcie_widths(f: Facts) -> Optional[str]:
    """'8x x16' or '7x x16, 1x x8': the GPUs' current PCIe link widths (sysfs), widest first."""
    widths = [d["link"].get("width") for d in F.pci_links(f)]
    counts = Counter(w for w in widths if isinstance(w, int) and w > 0)
    if not counts:
        return None
    return ", ".join(f"{c}x x{w}" for w, c in sorted(counts.items(), reverse=True))


def _ib_ports(f: Facts) -> Optional[str]:
    """'8x ACTIVE 400 Gb/sec (4X NDR)': the node's InfiniBand/RoCE ports by state and rate."""
    counts = Counter(f"{str(p.get('state') or '?').split(':')[-1].strip()} {p.get('rate') or '?'}"
                     for p in F.ib_ports(f))
    return ", ".join(f"{c}x {k}" for k, c in sorted(counts.items())) if counts else None


def _nvlinks(f: Facts) -> Optional[str]:
    """'8x 18 up': NVLinks up per GPU."""
    ups = [(F.gpu_health(g).get("nvlink") or {}).get("up") for g in F.gpus(f)]
    counts = Counter(u for u in ups if isinstance(u, int))
    return ", ".join(f"{c}x {u} up" for u, c in sorted(counts.items(), reverse=True)) if counts else None


@dataclass(frozen=True)
class Check:
    key: str          # drift-table row id
    component: str    # Finding.component
    label: str        # what the user reads
    get: Callable[[Facts], Optional[str]]
    severity: str
    why: str          # what a mismatch breaks


CHECKS: Tuple[Check, ...] = (
    Check("driver", "driver", "NVIDIA driver", F.driver_version, ERROR,
          "ranks on different drivers fail or hang in NCCL init"),
    Check("cuda", "cuda", "CUDA toolkit", F.cuda_version, ERROR,
          "extensions built on one node fail to load on another"),
    Check("cudnn", "cudnn", "cuDNN", F.cudnn_version, ERROR,
          "cuDNN version skew gives different kernels and errors across ranks"),
    Check("torch", "torch", "torch (CUDA variant)", _torch, ERROR,
          "different torch builds hang or crash in collectives"),
    Check("nccl", "nccl", "NCCL", F.nccl_version, ERROR,
          "mismatched NCCL versions fail in ncclCommInitRank or hang"),
    Check("python", "python", "Python", _python, ERROR,
          "objects pickled by one Python may not load in another"),
    Check("gpu_model", "gpu", "GPU model", _gpu_models, WARNING,
          "the slowest GPU sets the pace of every step"),
    Check("gpu_count", "gpu", "GPU count", _gpu_count, WARNING,
          "uneven GPU counts need a per-node --nproc-per-node and skew the data split"),
    Check("pcie_width", "health", "GPU PCIe link widths", _pcie_widths, WARNING,
          "GPUs behind narrower links load data and exchange with the NIC slower, and every step waits"),
    Check("ib_ports", "health", "InfiniBand/RoCE ports", _ib_ports, WARNING,
          "a node with fewer or slower active ports sends its share of every all-reduce slower"),
    Check("nvlinks", "health", "NVLinks per GPU", _nvlinks, WARNING,
          "a GPU with fewer NVLinks up slows every intra-node collective it is in"),
)


@dataclass
class DriftRow:
    key: str
    label: str
    values: Dict[str, str]                 # host -> value (MISSING when absent)
    majority: Optional[str]                # None when there is no majority (a tie)
    odd: List[str] = field(default_factory=list)  # hosts not on the majority value

    @property
    def differs(self) -> bool:
        return len(set(self.values.values())) > 1


def _majority(values: Mapping[str, str]) -> Optional[str]:
    counts = Counter(values.values()).most_common()
    if not counts:
        return None
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return None
    return counts[0][0]


def drift(results: Mapping[str, Facts], checks: Sequence[Check] = CHECKS) -> List[DriftRow]:
    """One row per component: each host's value, the majority value, the odd hosts out.
    Components absent on every host are left out."""
    rows = []
    for c in checks:
        values = {h: (c.get(f) or MISSING) for h, f in results.items()}
        if all(v == MISSING for v in values.values()):
            continue
        maj = _majority(values)
        odd = [h for h, v in values.items() if maj is not None and v != maj]
        if maj is None:
            odd = list(values)
        rows.append(DriftRow(c.key, c.label, values, maj, odd))
    return rows


def _hosts_phrase(hosts: Sequence[str]) -> str:
    """The hosts folded as clush folds them (`node[01-04,06-32]`), not 'node01, node02 … and 26 more'."""
    return compress_hostlist(hosts)


def fleet_findings(results: Mapping[str, Facts], checks: Sequence[Check] = CHECKS) -> List[Finding]:
    """Findings about the fleet as a whole, each with host= the odd node it concerns."""
    out: List[Finding] = []
    if len(results) < 2:
        return out
    by_key = {c.key: c for c in checks}
    total = len(results)
    for row in drift(results, checks):
        if not row.differs:
            continue
        c = by_key[row.key]
        if row.majority is None:
            groups: Dict[str, List[str]] = {}
            for h, v in row.values.items():
                groups.setdefault(v, []).append(h)
            desc = "; ".join(f"{v} on {_hosts_phrase(hs)}" for v, hs in groups.items())
            out.append(Finding(c.severity, f"fleet-{c.key}-split", c.component,
                               f"{c.label} differs with no majority: {desc} — {c.why}",
                               fix=f"pick one {c.label} version and install it on every node"))
            continue
        agree = [h for h, v in row.values.items() if v == row.majority]
        for h in row.odd:
            have = row.values[h]
            have_txt = f"{c.label} {have}" if have != MISSING else f"no {c.label}"
            out.append(Finding(
                c.severity, f"fleet-{c.key}-mismatch", c.component,
                f"{h} has {have_txt} while {len(agree)} of {total} hosts have {row.majority} — {c.why}",
                fix=f"make {h} match the others: {c.label} {row.majority} (as on {_hosts_phrase(agree)})",
                host=h))
    out.extend(_duplicates(results))
    return sort_findings(out)


def _duplicates(results: Mapping[str, Facts]) -> List[Finding]:
    out: List[Finding] = []
    by_name: Dict[str, List[str]] = {}
    by_id: Dict[str, List[str]] = {}
    for h, f in results.items():
        name, mid = hostname(f), machine_id(f)
        if name:
            by_name.setdefault(name, []).append(h)
        if mid:
            by_id.setdefault(mid, []).append(h)
    same_machine = set()
    for mid, hosts in by_id.items():
        if len(hosts) < 2:
            continue
        names = {hostname(results[h]) for h in hosts}
        if len(names) == 1:
            same_machine.update(hosts)
            out.append(Finding(WARNING, "fleet-same-machine", "host",
                               f"{_hosts_phrase(hosts)} are the same machine (same hostname and machine id): "
                               "it would get two ranks' worth of work",
                               fix="list each node once (an alias and its IP are one node)"))
        else:
            out.append(Finding(WARNING, "fleet-duplicate-machine-id", "host",
                               f"{_hosts_phrase(hosts)} share machine id {mid[:12]}…: a cloned image",
                               fix="on each clone: rm /etc/machine-id && systemd-machine-id-setup (then reboot)"))
    for name, hosts in by_name.items():
        if len(hosts) < 2 or set(hosts) <= same_machine:
            continue
        out.append(Finding(ERROR, "fleet-duplicate-hostname", "host",
                           f"{_hosts_phrase(hosts)} all call themselves {name!r}: launchers that group ranks "
                           "by hostname (torchrun, mpirun) treat them as one node and collide on local ranks",
                           fix="give each node a unique name: hostnamectl set-hostname NAME"))
    return out
