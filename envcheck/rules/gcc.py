"""gcc rule: nvcc refuses a host gcc newer than its include/crt/host_config.h allows.

The gcc judged is the one nvcc itself will run (facts cuda.nvcc.host_compiler, resolved on the node
from -ccbin in NVCC_PREPEND_FLAGS/NVCC_APPEND_FLAGS, NVCC_CCBIN, and the PATH that the nvcc.profile
beside the real nvcc builds), not the first gcc on PATH: Debian's packaged toolkit puts gcc/g++
wrappers that pick a supported gcc first on nvcc's PATH, so the default gcc 12 never reaches it.
`check --gcc` means that compiler too."""
from __future__ import annotations

from typing import List, Optional, Tuple

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding, Skipped
from envcheck.rules import remedy
from envcheck.rules.common import installed_gcc, major, needs


def _compiler(f: F.Facts) -> Tuple[Optional[str], str]:
    """(version, how it was chosen) of the compiler nvcc runs; the first gcc on PATH when the
    probe did not resolve nvcc's own."""
    hc = F.host_compiler(f)
    if hc.get("version"):
        return hc["version"], f" ({hc.get('path') or 'host compiler'}, chosen by {hc.get('how') or 'nvcc'})"
    return F.gcc_version(f), ""


@needs("gcc", "cuda")
def gcc_vs_toolkit(f: F.Facts, m: Matrix) -> list:
    cuda = F.cuda_version(f)
    gcc, how = _compiler(f)
    if not cuda or not (gcc or F.host_compiler(f).get("path")):
        return []  # no toolkit, or no compiler at all: nothing is built here
    rec = m.find_cuda(cuda)
    if not gcc:
        return [Skipped("gcc_vs_toolkit", "gcc", "the host compiler nvcc uses reported no version",
                        "check `gcc --version` on the node")]
    if not rec:
        return [Skipped("gcc_vs_toolkit", "gcc", f"CUDA {cuda} not in the matrix", "update envcheck (or --matrix FILE)")]
    try:
        g = major(gcc)
    except VersionError:
        return []
    limit = rec["gcc_max"]
    if g <= limit:
        return _known_broken(gcc, g, cuda, rec)
    override = (" (CUDA >= 11 also takes -allow-unsupported-compiler, at your own risk)"
                if major(rec["version"]) >= 11 else "")
    have = installed_gcc(f, limit)
    use = have or limit
    if have:  # a gcc nvcc accepts is there already: no install
        fix = (f"build with the gcc-{have} already installed: export CC=gcc-{have} CXX=g++-{have} "
               f"(nvcc -ccbin g++-{have})")
    else:
        fix = (f"install gcc-{limit} g++-{limit} and build with them: export CC=gcc-{limit} CXX=g++-{limit} "
               f"(nvcc -ccbin g++-{limit}){override}")
    return [Finding(ERROR, "gcc-too-new", "gcc",
                    f"gcc {gcc}{how} is newer than CUDA {cuda} accepts (gcc <= {limit}): nvcc stops with '#error -- "
                    f"unsupported GNU version! gcc versions later than {limit} are not supported!'",
                    fix, rec["gcc_source"],
                    remedies=(remedy.compiler(use, fix, f"CUDA {cuda} needs gcc <= {limit}"),))]


def _known_broken(gcc: str, g: int, cuda: str, rec: dict) -> List[Finding]:
    for bad in rec.get("gcc_broken") or []:
        if bad["gcc"] == g:
            good = g - 1
            return [Finding(WARNING, "gcc-known-broken", "gcc",
                            f"gcc {gcc} passes CUDA {cuda}'s version check, but builds fail: \"{bad['error']}\".",
                            f"build with gcc-{good}: export CC=gcc-{good} CXX=g++-{good} (nvcc -ccbin g++-{good})",
                            bad["source"])]
    return []


RULES = [gcc_vs_toolkit]
