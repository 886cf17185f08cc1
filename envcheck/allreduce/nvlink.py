"""What NVLink allows inside a node, so an intra-node bus bandwidth can be read as a share of it:
from each GPU's model (compute capability, NVML) and the NVLinks NVML reports up (the probe's
nvlink section, envcheck/node/probe/nvlink.py), with the per-link rate of the GPU's architecture
(envcheck/allreduce/nvlink.yaml, each entry with its NVIDIA source). Pure but for reading that file.

nccl-tests' busbw compares with one direction of the hardware's bandwidth (its
doc/PERFORMANCE.md); NVIDIA quotes both directions of all links together ("900 GB/s" for H100 =
18 links x 25 GB/s x 2). So one GPU's bound is links up x the rate of one link in one direction.
An upper bound: GPUs not all joined by NVLink (no NVSwitch, bridges in pairs) reach less, and
NVLink SHARP (NVLS) on NVSwitch systems can reach more than it.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from envcheck import inputs

DATA = Path(__file__).with_name("nvlink.yaml")


@lru_cache(maxsize=1)
def table() -> List[Dict[str, Any]]:
    # as the wheel's build compiled it (issue 26), else libyaml's parser where PyYAML has it, as
    # envcheck/rules/health.py reads its catalogue
    doc = inputs.compiled(DATA)
    if doc is None:
        import yaml  # lazy: PyYAML costs ~17 ms CPU to load (-X importtime, issue 26); the wheel's table is JSON
        doc = yaml.load(DATA.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    return list(doc["nvlink"])


def rate_of(cc: Optional[str]) -> Optional[Dict[str, Any]]:
    """The table's entry for a compute capability ("9.0"); None for one it does not list."""
    return next((e for e in table() if cc in e["cc"]), None)


@dataclass
class NvLink:
    """One node's NVLink figure: its GPUs' model, generation and the fewest links up on any of
    them (the slowest GPU bounds a collective over all of them)."""
    gpu: str                     # "NVIDIA H100 80GB HBM3"
    gpus: int                    # how many GPUs of the node
    generation: int              # 4
    links: int                   # links up on the GPU with the fewest
    links_max: int               # what the architecture has (the table)
    per_link_gbps: float         # one link, one direction, GB/s
    source: str                  # the URL of the per-link rate
    nvml_version: Optional[int] = None   # NVML's raw answer, kept to show (its numbering moved)

    @property
    def gbps(self) -> float:
        """GB/s one GPU can send (and receive) over its NVLinks at once."""
        return self.links * self.per_link_gbps

    @property
    def label(self) -> str:
        return f"NVLink {self.generation} \u00d7 {self.links}"

    def to_dict(self) -> Dict[str, Any]:
        return dict(asdict(self), gbps=self.gbps, label=self.label)


def node_nvlink(gpus: Sequence[Dict[str, Any]]) -> Optional[NvLink]:
    """The node's figure from the probe's GPU records (name, compute_capability, nvlink); None
    when it cannot be known: no GPU, a GPU without NVLink or not read through NVML, GPUs of
    different models, an architecture the table lacks, or no link up."""
    if not gpus or any(not isinstance(g.get("nvlink"), dict) for g in gpus):
        return None
    models = {(g.get("name"), g.get("compute_capability")) for g in gpus}
    if len(models) != 1:
        return None
    (name, cc), = models
    entry = rate_of(cc)
    ups = [g["nvlink"].get("up") for g in gpus]
    if entry is None or any(not isinstance(u, int) or u <= 0 for u in ups):
        return None
    versions = {g["nvlink"].get("nvml_version") for g in gpus} - {None}
    return NvLink(str(name or "GPU"), len(gpus), int(entry["generation"]), min(ups), int(entry["links"]),
                  float(entry["per_link_gbps"]), str(entry["source"]),
                  versions.pop() if len(versions) == 1 else None)


def slowest(nvlinks: Dict[str, Optional[Dict[str, Any]]], hosts: Sequence[str]) -> Optional[NvLink]:
    """The hosts' smallest NVLink figure (a Report's nvlinks, host -> NvLink dict); None when
    any host's is unknown."""
    figs = [nvlinks.get(h) for h in hosts]
    if not figs or any(not f for f in figs):
        return None
    keep = {k: v for k, v in min(figs, key=lambda f: f["gbps"]).items() if k not in ("gbps", "label")}
    return NvLink(**keep)
