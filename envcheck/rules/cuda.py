"""Toolkit rules: is the toolkit in use one the matrix knows, and does its nvcc match the CUDA
torch was built with (torch.utils.cpp_extension refuses another major)."""
from __future__ import annotations

from typing import List

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, INFO, WARNING, Finding
from envcheck.rules import remedy
from envcheck.rules.common import (major, mm, needs, src, toolkit_step, torch_build, torch_install_cmd,
                                   variant_for_cuda)
from envcheck.versions import version_to_cu_tag, vkey


def cuda_unknown(f: F.Facts, m: Matrix) -> List[Finding]:
    cuda = F.cuda_version(f)
    if not cuda:
        return []
    try:
        vkey(cuda)
    except VersionError:
        return [Finding(WARNING, "cuda-unknown", "cuda", f"CUDA version {cuda!r} cannot be read; toolkit checks "
                        "were skipped.", "check `nvcc -V` and <toolkit>/version.json", src(m, "rn_t3"))]
    if m.find_cuda(cuda):
        return []
    fam = m.family(major(cuda))
    if fam:
        why = (f"driver checks use the CUDA {major(cuda)}.x family minimum ({fam['min_driver']})"
               if fam["min_driver"] else "its driver minimum and gcc limit are unknown")
    else:
        why = "its driver minimum, gcc limit and architectures are unknown"
    return [Finding(WARNING, "cuda-unknown", "cuda",
                    f"The matrix does not know CUDA {cuda}; {why}.",
                    "update envcheck (or pass --matrix FILE with a newer compat_matrix.yaml)", src(m, "rn_t3"))]


def cuda_not_found(f: F.Facts, m: Matrix) -> List[Finding]:
    # the probe looked (toolkits key present) and found none
    if not F.has(f, "cuda", "toolkits") or F.cuda_toolkits(f) or F.cuda_version(f):
        return []
    return [Finding(INFO, "cuda-not-found", "cuda",
                    "No CUDA toolkit found: fine for pip-installed torch (it bundles the CUDA runtime), but "
                    "building CUDA extensions fails with 'nvcc: command not found' / 'CUDA_HOME environment "
                    "variable is not set'.",
                    "install a toolkit matching torch's CUDA if you build extensions", src(m, "rn_t3"))]


@needs("cuda", "torch")
def nvcc_vs_torch(f: F.Facts, m: Matrix) -> List[Finding]:
    cuda, tb = F.cuda_version(f), torch_build(f, m)
    if not cuda or not tb or not tb.cuda:
        return []
    t, tc = mm(cuda), tb.cuda
    if t == tc:
        return []
    tag = variant_for_cuda(m, tb.version, cuda)
    fix = (torch_install_cmd(m, tb.version, tag, tb.version) if tag and tag != tb.tag
           else _point_at(f, tc))
    remedies = _remedies(m, tb, cuda, tag, F.python_version(f), f)
    msg_major = (f"The detected CUDA version ({t}) mismatches the version that was used to compile PyTorch "
                 f"({tc}). Please make sure to use the same CUDA versions.")
    note = tb.pypi_note()
    if major(t) != major(tc):
        return [Finding(ERROR, "nvcc-torch-major-mismatch", "cuda",
                        f"nvcc is CUDA {cuda} but torch {tb.label()}{note} was built with CUDA {tc}: building "
                        f"extensions fails with '{msg_major}'", fix, src(m, "torch_previous"), remedies=remedies)]
    if major(tc) <= 10:
        return [Finding(ERROR, "nvcc-torch-minor-mismatch", "cuda",
                        f"nvcc is CUDA {cuda} but torch {tb.label()}{note} was built with CUDA {tc}, and before "
                        f"CUDA 11 there is no minor-version compatibility: building extensions fails with "
                        f"'{msg_major}'", fix, src(m, "torch_previous"), remedies=remedies)]
    return [Finding(WARNING, "nvcc-torch-minor-mismatch", "cuda",
                    f"nvcc is CUDA {cuda} but torch {tb.label()}{note} was built with CUDA {tc}: extension builds "
                    f"warn 'The detected CUDA version ({t}) has a minor version mismatch with the version that "
                    f"was used to compile PyTorch ({tc}). Most likely this shouldn't be a problem.'",
                    fix, src(m, "torch_previous"))]


def _point_at(f: F.Facts, cuda: str) -> str:
    step = toolkit_step(f, cuda)
    return step if step.startswith("use ") else f"point CUDA_HOME and PATH at a CUDA {cuda} toolkit (envcheck install-cuda {cuda})"


def _remedies(m: Matrix, tb, cuda: str, tag, py, f: F.Facts) -> tuple:
    """Make torch match the toolkit (its build for this CUDA) or the toolkit match torch, in the
    order the fix text gives them."""
    out = []
    if tag and tag != tb.tag:
        out.append(remedy.wheel(m, tb.version, tag, f"nvcc {mm(cuda)} needs a torch built for CUDA {mm(cuda)}",
                                torch_install_cmd(m, tb.version, tag, tb.version)))
    rec = m.find_cuda(tb.cuda)
    if rec:
        v = rec["version"]
        text = _point_at(f, tb.cuda)
        out.append(remedy.toolkit(v, text, f"torch {tb.label()} needs nvcc {tb.cuda}"))
    newer = _release_for(m, cuda, py, tb.version)
    if newer and not tag:
        out.append(remedy.wheel(m, newer[0], newer[1], f"nvcc {mm(cuda)} needs a torch built for CUDA {mm(cuda)}",
                                torch_install_cmd(m, newer[0], newer[1], tb.version)))
    return tuple(out)


def _release_for(m: Matrix, cuda: str, python, installed: str):
    """(version, tag) of the newest torch release built for exactly this CUDA major.minor (with a
    wheel for the host's Python when it is known), for when torch's own release has no such build."""
    try:
        want = version_to_cu_tag(cuda)
    except VersionError:
        return None
    for rec in reversed(m.data["torch"]["releases"]):
        if want in rec["variants"] and (not python or mm(python) in rec["python"]) and rec["version"] != installed:
            return rec["version"], want
    return None


def torch_pypi_default(f: F.Facts, m: Matrix) -> List[Finding]:
    tb = torch_build(f, m)
    if not tb or tb.how != "pypi-default":
        return []
    # "pypi-default" is read from the release's record (Matrix.pypi_variant): there is one
    cuda = F.cuda_version(f)
    if cuda and mm(cuda) != tb.cuda:
        tag = variant_for_cuda(m, tb.version, cuda)
        fix = (torch_install_cmd(m, tb.version, tag, tb.version) if tag
               else f"torch {tb.version} has no build for CUDA {mm(cuda)}; use a CUDA {tb.cuda} toolkit")
        return [Finding(WARNING, "torch-pypi-default-variant", "torch",
                        f"A plain torch=={tb.version} means the {tb.tag} build PyPI served (CUDA {tb.cuda}), not "
                        f"one for the local CUDA {cuda} toolkit; pip never picks the variant from the toolkit.",
                        fix, tb.record["source"])]
    return [Finding(INFO, "torch-pypi-default-variant", "torch",
                    f"A plain torch=={tb.version} is taken to be the {tb.tag} build PyPI served (CUDA {tb.cuda}).",
                    f"give the variant explicitly ({tb.version}+{tb.tag}) if this torch came from elsewhere",
                    tb.record["source"])]


RULES = [cuda_unknown, cuda_not_found, nvcc_vs_torch, torch_pypi_default]
