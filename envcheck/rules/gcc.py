"""gcc rule: nvcc refuses a host gcc newer than its include/crt/host_config.h allows."""
from __future__ import annotations

from typing import List

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding
from envcheck.rules.common import major


def gcc_vs_toolkit(f: F.Facts, m: Matrix) -> List[Finding]:
    gcc, cuda = F.gcc_version(f), F.cuda_version(f)
    rec = m.find_cuda(cuda)
    if not gcc or not rec:
        return []
    try:
        g = major(gcc)
    except VersionError:
        return []
    limit = rec["gcc_max"]
    if g <= limit:
        return _known_broken(gcc, g, cuda, rec)
    override = (" (CUDA >= 11 also takes -allow-unsupported-compiler, at your own risk)"
                if major(rec["version"]) >= 11 else "")
    return [Finding(ERROR, "gcc-too-new", "gcc",
                    f"gcc {gcc} is newer than CUDA {cuda} accepts (gcc <= {limit}): nvcc stops with '#error -- "
                    f"unsupported GNU version! gcc versions later than {limit} are not supported!'",
                    f"install gcc-{limit} g++-{limit} and build with them: export CC=gcc-{limit} CXX=g++-{limit} "
                    f"(nvcc -ccbin g++-{limit}){override}", rec["gcc_source"])]


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
