"""Kernels a torch build can carry when the matrix does not list its arch list.

nvcc builds a cubin for sm_XY only from the first CUDA that knows the architecture (and until the
last one that still does); a GPU of compute capability X.Y runs a cubin sm_XZ with Z <= Y, and
PTX compute_AB with AB <= XY by JIT compilation in the driver. So from the build's CUDA alone:

- no architecture that CUDA can build is one the GPU runs a cubin of, and no PTX it could emit is
  at or below the GPU  ->  certainly no kernel image;
- no cubin fits but PTX could  ->  it runs only if the build embedded PTX, which PyTorch's wheels
  seldom do: the matrix's known lists for the same CUDA tag say whether that happened;
- a cubin could fit  ->  whether this build carries it is unknown (PyTorch drops old archs from
  some builds): no verdict, a skipped check.

Pure functions of the matrix; gpu.py turns the answer into findings or skipped checks.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import List, Optional, Tuple

from envcheck.matrix.load import Matrix
from envcheck.versions import compare

CC = Tuple[int, int]

CERTAIN = "certain"      # nothing the CUDA can build runs on the GPU
PTX_ONLY = "ptx-only"    # only a PTX target could serve it
POSSIBLE = "possible"    # a cubin could be in the build: unknown without the list


@dataclass(frozen=True)
class Derived:
    """What a build of CUDA `cuda` can carry for a GPU of compute capability `cc`."""

    cuda: str
    cc: CC
    verdict: str                  # CERTAIN | PTX_ONLY | POSSIBLE
    buildable: Tuple[CC, ...]     # every arch that CUDA can build, ascending
    cubin: Optional[CC]           # best cubin arch the GPU could run (POSSIBLE only)
    ptx: Optional[CC]             # best PTX target the GPU could JIT (PTX_ONLY only)
    ptx_seen: Optional[bool]      # a known list of the same CUDA tag embeds PTX (None: none known)

    def newest(self) -> Optional[CC]:
        return self.buildable[-1] if self.buildable else None

    def explain(self) -> str:
        """One clause saying how the bound was derived, for the finding's message."""
        span = (f"sm_{self.buildable[0][0]}{self.buildable[0][1]} .. sm_{self.newest()[0]}{self.newest()[1]}"
                if self.buildable else "none of the architectures the matrix knows")
        return f"derived from its CUDA {self.cuda}, which can build {span}"


def _cc(text: str) -> CC:
    major, minor = text.split(".")
    return int(major), int(minor)


def buildable(m: Matrix, cuda: str) -> List[CC]:
    """Architectures nvcc of this CUDA major.minor can build a cubin for, ascending."""
    out = []
    for a in m.data["archs"]:
        if compare(cuda, a["first_cuda"]) < 0:
            continue
        if a.get("last_cuda") and compare(cuda, a["last_cuda"]) > 0:
            continue
        out.append(_cc(a["cc"]))
    return sorted(out)


def ptx_seen(m: Matrix, tag: str) -> Optional[bool]:
    """Whether the arch lists the matrix knows for builds of this CUDA tag embed PTX; None when it
    knows none of them."""
    sets = m.data["torch"]["arch_sets"]
    known = [(rec["variants"] or {}).get(tag, {}) or {} for rec in m.data["torch"]["releases"]]
    names = [v["arch"] for v in known if v.get("arch")]
    if not names:
        return None
    return any(a.startswith("compute_") for n in names for a in sets[n]["arch"])


def derive(m: Matrix, cuda: str, tag: str, cc: CC) -> Derived:
    archs = buildable(m, cuda)
    cubins = [a for a in archs if a[0] == cc[0] and a[1] <= cc[1]]
    if cubins:
        return Derived(cuda, cc, POSSIBLE, tuple(archs), cubins[-1], None, ptx_seen(m, tag))
    ptx = [a for a in archs if a <= cc]
    if ptx:
        return Derived(cuda, cc, PTX_ONLY, tuple(archs), None, ptx[-1], ptx_seen(m, tag))
    return Derived(cuda, cc, CERTAIN, tuple(archs), None, None, ptx_seen(m, tag))


def sm(cc: CC) -> str:
    return f"sm_{cc[0]}{cc[1]}"


def parse_arch(a: str) -> Optional[Tuple[str, CC]]:
    """'sm_86' -> ('sm', (8, 6)); 'compute_120' -> ('compute', (12, 0)); 'sm_90a' -> None (runs only
    on exactly that GPU, so it never serves another)."""
    mt = re.match(r"^(sm|compute)_(\d+?)(\d)$", a)
    return (mt.group(1), (int(mt.group(2)), int(mt.group(3)))) if mt else None


# TORCH_CUDA_ARCH_LIST's named architectures, as torch.utils.cpp_extension expands them
# (_get_cuda_arch_flags' named_arches as of torch 2.13, Blackwell included)
NAMED_ARCHS = {"kepler+tesla": "3.7", "kepler": "3.5+PTX", "maxwell+tegra": "5.3", "maxwell": "5.0;5.2+PTX",
               "pascal": "6.0;6.1+PTX", "volta+tegra": "7.2", "volta": "7.0+PTX", "turing": "7.5+PTX",
               "ampere+tegra": "8.7", "ampere": "8.0;8.6+PTX", "ada": "8.9+PTX", "hopper": "9.0+PTX",
               "blackwell+tegra": "11.0", "blackwell": "10.0;10.3;12.0;12.1+PTX"}


def arch_list_env(text: Optional[str]) -> Optional[List[Tuple[CC, bool]]]:
    """TORCH_CUDA_ARCH_LIST ('7.5;8.0+PTX', '8.0 8.6', 'Ampere') -> [((8, 0), ptx?)...]; None when
    unset or when an entry cannot be read (then nothing is judged from it)."""
    if not text or not text.strip():
        return None
    out: List[Tuple[CC, bool]] = []
    for entry in re.split(r"[;\s]+", text.strip()):
        if not entry:
            continue
        for part in NAMED_ARCHS.get(entry.lower(), entry).split(";"):
            mt = re.fullmatch(r"(\d+)\.(\d+)[a-z]?(\+ptx)?", part.strip().lower())
            if not mt:
                return None
            out.append(((int(mt.group(1)), int(mt.group(2))), bool(mt.group(3))))
    return out or None


# Integrated (Tegra/Jetson) architectures: their cubins and those of the discrete GPUs of the same
# major do not serve each other (torch: "8.0 which supports hardware CC >=8.0,<9.0 except {8.7}")
TEGRA = {(3, 2), (5, 3), (6, 2), (7, 2), (8, 7), (10, 1), (11, 0)}


def lower_target(m: Matrix, cuda: str, cc: CC) -> Optional[CC]:
    """The best cubin this CUDA can build that a GPU of compute capability cc runs (same major,
    minor <= cc's, never across Tegra and discrete GPUs): sm_80 for an sm_86 GPU on CUDA 11.0."""
    if cc in TEGRA:
        return None
    fits = [a for a in buildable(m, cuda) if a[0] == cc[0] and a[1] <= cc[1] and a not in TEGRA]
    return fits[-1] if fits else None
