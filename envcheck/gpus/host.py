"""Which GPU a host's facts describe, for commands that start from a machine instead of a
`--gpu` flag (`envcheck plan` with no --gpu): the driver's GPU list, or, before any driver is
installed, the NVIDIA GPUs on the PCI bus."""
from __future__ import annotations

from dataclasses import dataclass
from typing import List

from envcheck.errors import UsageError
from envcheck.facts import schema as F
from envcheck.matrix.load import Matrix
from envcheck.rules.common import gpu_ccs


@dataclass(frozen=True)
class HostGpu:
    name: str               # "NVIDIA H100 SXM5 80GB"
    cc: str                 # "9.0"
    source: str             # "the driver" | "the PCI bus (no driver)"


def host_gpu(f: F.Facts, matrix: Matrix, where: str) -> HostGpu:
    """The one GPU model on the host, or UsageError naming what to give instead. `where` says
    whose facts these are ("this machine", "facts.json") for the message."""
    found = gpu_ccs(f, matrix)
    source = "the driver" if F.gpus(f) else "the PCI bus (no driver)"
    if not found:
        raise UsageError(f"plan: no NVIDIA GPU on {where} (no driver lists one, and none is on the PCI bus)",
                         "name the GPU to plan for with --gpu (A100, sm_80 or 8.0)")
    unknown = [name for name, cc in found if cc is None]
    if unknown:
        raise UsageError(f"plan: the compute capability of {unknown[0]!r} on {where} is unknown",
                         "give it with --gpu sm_XY or X.Y (the GPU's compute capability, as NVIDIA lists it)")
    ccs: List[str] = sorted({f"{cc[0]}.{cc[1]}" for _, cc in found if cc})
    if len(ccs) > 1:
        raise UsageError(f"plan: {where} has GPUs of compute capability {' and '.join(ccs)}",
                         "plan one of them with --gpu X.Y")
    return HostGpu(name=found[0][0], cc=ccs[0], source=source)
