"""GPU rules: does torch's build carry kernels for each GPU, can the toolkit in use build for it,
does the matrix know the GPU at all."""
from __future__ import annotations

import re
from typing import List, Optional, Tuple

from envcheck.facts import schema as F
from envcheck.matrix.gpus import did_you_mean
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, INFO, WARNING, Finding, Skipped
from envcheck.rules import kernels, remedy
from envcheck.rules.common import (CC, arch_runs, gpu_ccs, gpu_skip, mm, needs, src, toolkit_step, torch_build,
                                   torch_install_cmd)
from envcheck.versions import at_least, compare, cu_tag_to_version

NO_KERNEL = "'CUDA error: no kernel image is available for execution on the device'"


def _sm(cc: CC) -> str:
    return f"sm_{cc[0]}{cc[1]}"


def _plain(name: str, cc: CC) -> bool:
    """The GPU was given as its compute capability (sm_XY, X.Y, XY), not by a model name."""
    return name in (_sm(cc), f"{cc[0]}.{cc[1]}", f"{cc[0]}{cc[1]}")


def _named(name: str, cc: CC, *more: str) -> str:
    """'A100 (sm_80, Ampere)'; a GPU given as sm_XY or X.Y is not named twice ('sm_120 (Blackwell)')."""
    sm = _sm(cc)
    plain = _plain(name, cc)
    inner = ", ".join(([] if plain else [sm]) + [x for x in more if x])
    head = sm if plain else name
    return f"{head} ({inner})" if inner else head


def _suggest(m: Matrix, f: F.Facts, cc: CC, prefer: Optional[str], name: str, otherwise: str,
             min_cuda: Optional[str] = None) -> Tuple[str, tuple]:
    """(fix text, remedies) for a GPU that lacks kernels (or, with `min_cuda`, whose libraries
    need that CUDA): the torch builds of _builds, best first; `otherwise` when there is none."""
    found = _builds(m, cc, prefer, F.driver_version(f), F.python_version(f), prefer, min_cuda)
    why = f"{_named(name, cc)} needs a torch build " + (f"for CUDA >= {min_cuda}" if min_cuda else "with its kernels")
    return (found[0][2] if found else otherwise), tuple(remedy.wheel(m, v, t, why, text) for v, t, text in found[:3])


def _builds(m: Matrix, cc: CC, prefer: Optional[str], driver: Optional[str],
            python: Optional[str] = None, installed: Optional[str] = None,
            min_cuda: Optional[str] = None) -> List[Tuple[str, str, str]]:
    """(version, tag, fix text) of torch builds with a cubin for cc (and of CUDA >= `min_cuda`
    when given), best first: other variants of the same release, then the newest releases whose
    PyPI build has one; those the host's driver runs and that have a wheel for its Python before
    the others. `installed`: the host's torch.
    Asked once per (GPU, torch, driver, Python): plan's ~140 judged stacks repeat a few (issue 26)."""
    key = (cc, prefer, driver, python, installed, min_cuda)
    if all(k is None or isinstance(k, (str, tuple)) for k in key):
        return list(m.memo("gpu_builds", key,
                           lambda: _find_builds(m, cc, prefer, driver, python, installed, min_cuda)))
    return _find_builds(m, cc, prefer, driver, python, installed, min_cuda)


def _find_builds(m: Matrix, cc: CC, prefer: Optional[str], driver: Optional[str], python: Optional[str],
                 installed: Optional[str], min_cuda: Optional[str] = None) -> List[Tuple[str, str, str]]:
    def covers(ver: str, tag: str) -> bool:
        v = m.torch_variant(ver, tag)
        new_enough = not min_cuda or compare(cu_tag_to_version(tag) or "0", min_cuda) >= 0
        return bool(v and v["arch"] and arch_runs(v["arch"], cc)[0] and new_enough)

    def runs(tag: str) -> bool:
        need = m.driver_need(cu_tag_to_version(tag) or "")
        floor = need and (need.family_min if need.minor_version_compat else need.release_min)
        return not driver or not floor or at_least(driver, floor)

    def cmd(ver: str, tag: str) -> str:
        need = m.driver_need(cu_tag_to_version(tag) or "")
        want = need and (need.family_min if need.minor_version_compat else need.release_min)
        extra = f" (needs driver >= {want})" if driver and want and not at_least(driver, want) else ""
        return torch_install_cmd(m, ver, tag, installed) + extra

    candidates = []
    if prefer and m.torch(prefer):
        candidates += [(prefer, t) for t in reversed(list(m.torch(prefer)["variants"]))]
    candidates += [(r["version"], r["pypi"]) for r in reversed(m.data["torch"]["releases"]) if r["pypi"]]
    fitting = list(dict.fromkeys((v, t) for v, t in candidates if covers(v, t)))
    py = mm(python) if python and re.fullmatch(r"\d+\.\d+(\.\d+)?", python) else None
    ranked = sorted(fitting, key=lambda c: (not runs(c[1]), bool(py) and py not in m.torch(c[0])["python"]))
    return [(v, t, cmd(v, t)) for v, t in ranked[:4]]


def gpu_unknown(f: F.Facts, m: Matrix) -> List[Finding]:
    out = []
    for name, cc in gpu_ccs(f, m):
        if cc is None:
            meant = did_you_mean(m.gpu_suggestions(name))
            out.append(Finding(WARNING, "gpu-unknown", "gpu",
                               f"The matrix does not know the GPU {name!r}: its compute capability is unknown, "
                               f"so the kernel and toolkit checks for it were skipped.",
                               (f"did you mean {meant}? Else give" if meant else "give")
                               + " the compute capability instead (--gpu sm_XY or X.Y), or add the model to "
                               "compat_matrix.yaml gpus", src(m, "cuda_gpus")))
        elif m.arch(cc) is None:
            out.append(Finding(WARNING, "gpu-unknown", "gpu",
                               f"The matrix does not know compute capability {cc[0]}.{cc[1]}"
                               f"{'' if _plain(name, cc) else f' ({name})'}; "
                               f"the toolkit checks for it were skipped.",
                               "update envcheck or add the architecture to compat_matrix.yaml archs",
                               src(m, "cuda_gpus")))
        elif F.origin(f) == "flags":
            out += _name_of_several(m, name, cc)
    return out


def _name_of_several(m: Matrix, name: str, cc: CC) -> List[Finding]:
    """A board name pci.ids gives chips of different compute capabilities (GeForce GT 740M:
    GK107M, 3.0, and GK208M, 3.5) was judged as the highest: say so, and how to judge the other."""
    chips = (m.gpu(name) or {}).get("chips") or []
    # by compute capability, then chip: a set's order of chips of one capability changes per run
    lower = sorted({(c, m.chip_cc(c)) for c in chips if m.chip_cc(c) not in (None, cc)},
                   key=lambda x: (x[1] or (0, 0), x[0]))
    if not lower:
        return []
    others = ", ".join(f"{c} ({_sm(low)})" for c, low in lower if low)
    return [Finding(INFO, "gpu-name-several-chips", "gpu",
                    f"{name} is sold with more than one chip: judged as {_sm(cc)}, the one that runs the most; "
                    f"boards with {others} run fewer builds.",
                    "give the compute capability nvidia-smi --query-gpu=compute_cap prints (--gpu X.Y)",
                    "https://github.com/pciutils/pciids/blob/c1c12547d626ebf05fd0223144ad87fab5e95d06/pci.ids")]


@needs("torch", "gpu")
def gpu_vs_torch(f: F.Facts, m: Matrix) -> list:
    tb = torch_build(f, m)
    if not tb or tb.tag == "cpu":
        return []
    if not tb.tag or not tb.cuda:
        return [Skipped("gpu_vs_torch", "gpu", f"which CUDA build torch {tb.version} is, is unknown",
                        f"give the variant (--torch {tb.version}+cuXYZ), or audit --deep")]
    arch = F.deep_arch_list(f)
    where, source = "torch.cuda.get_arch_list()", src(m, "builder_arch")
    if not arch:
        var = m.torch_variant(tb.version, tb.tag)
        if not var or not var["arch"]:
            return _derived(f, m, tb)
        arch, where, source = var["arch"], "its build", var["arch_source"]
    out: list = []
    for name, cc in gpu_ccs(f, m):
        if cc is None:
            out.append(gpu_skip("gpu_vs_torch", "gpu", name, cc))
            continue
        cubin, ptx = arch_runs(arch, cc)
        if cubin:
            continue
        fix, wheels = _suggest(m, f, cc, tb.version, name, f"install a torch build that lists {_sm(cc)}")
        if ptx:
            out.append(Finding(
                WARNING, "gpu-ptx-only", "gpu",
                f"torch {tb.label()}{tb.pypi_note()} has no cubin for {_named(name, cc)}, only PTX ({ptx}): the "
                f"driver JIT-compiles every kernel on first use (minutes of start-up) and needs a driver that "
                f"supports CUDA {tb.cuda}; without that: {NO_KERNEL}.", fix, source))
        else:
            out.append(Finding(
                ERROR, "gpu-no-kernel", "gpu",
                f"torch {tb.label()}{tb.pypi_note()} has no kernels for {_named(name, cc)}; {where} has "
                f"{' '.join(arch)}. Every CUDA op fails with {NO_KERNEL}.", fix, source, remedies=wheels))
    return out


@needs("cuda", "gpu")
def gpu_vs_toolkit(f: F.Facts, m: Matrix) -> list:
    cuda = F.cuda_version(f)
    if not cuda:
        return []  # the probe found no toolkit: nothing builds here
    t = mm(cuda)
    out: list = []
    for name, cc in gpu_ccs(f, m):
        arch = m.arch(cc) if cc else None
        if not arch:
            out.append(gpu_skip("gpu_vs_toolkit", "gpu", name, cc))
            continue
        unsupported = f"'nvcc fatal : Unsupported gpu architecture 'compute_{cc[0]}{cc[1]}''"
        if compare(t, arch["first_cuda"]) < 0:
            out += _too_new(f, m, cuda, name, cc, arch, unsupported)
        elif arch["last_cuda"] and compare(t, arch["last_cuda"]) > 0:
            out.append(Finding(
                ERROR, "gpu-arch-dropped-by-toolkit", "gpu",
                f"CUDA {cuda} can no longer build for {_named(name, cc, arch['name'])}: the last toolkit that "
                f"can is CUDA {arch['last_cuda']}. Builds fail with {unsupported}, and its libraries carry no "
                f"kernels for it ({NO_KERNEL}).",
                f"use CUDA {arch['last_cuda']}.x (or older) on this GPU", arch["source"],
                remedies=_toolkits(m, f, None, arch["last_cuda"],
                                   f"CUDA {arch['last_cuda']} is the last for {_named(name, cc)}")))
    return out


def _too_new(f: F.Facts, m: Matrix, cuda: str, name: str, cc: CC, arch: dict, unsupported: str) -> list:
    """A toolkit older than the GPU's architecture. When it can build a cubin of the same major
    and a lower minor, the GPU runs it: only builds that target the GPU's own arch (extensions
    auto-detect it when TORCH_CUDA_ARCH_LIST is unset) fail, and that setting fixes them."""
    need = f"{_named(name, cc)} needs CUDA >= {arch['first_cuda']}"
    toolkits = _toolkits(m, f, arch["first_cuda"], None, need)
    lower = kernels.lower_target(m, mm(cuda), cc)
    if lower is None:
        return [Finding(
            ERROR, "gpu-arch-too-new-for-toolkit", "gpu",
            f"CUDA {cuda} cannot build for {_named(name, cc, arch['name'])}: support starts with CUDA "
            f"{arch['first_cuda']}. Extension builds fail with {unsupported}.",
            f"install CUDA >= {arch['first_cuda']} for this GPU", arch["source"], remedies=toolkits)]
    listed = kernels.arch_list_env(F.env(f).get("TORCH_CUDA_ARCH_LIST"))
    if listed is not None:
        bad = [a for a, _ in listed if a not in kernels.buildable(m, mm(cuda))]
        runs = any(a[0] == cc[0] and a[1] <= cc[1] or (ptx and a <= cc) for a, ptx in listed)
        if not bad and runs:
            return []  # the build targets what this toolkit can make and the GPU runs
        if bad:
            return [Finding(
                ERROR, "gpu-arch-too-new-for-toolkit", "gpu",
                f"TORCH_CUDA_ARCH_LIST asks CUDA {cuda} for {', '.join(kernels.sm(a) for a in bad)}, which it "
                f"cannot build: extension builds fail with 'nvcc fatal : Unsupported gpu architecture "
                f"'compute_{bad[0][0]}{bad[0][1]}''.",
                f'export TORCH_CUDA_ARCH_LIST="{lower[0]}.{lower[1]}" (the {_named(name, cc)} runs its '
                f"{kernels.sm(lower)} cubins), or install CUDA >= {arch['first_cuda']}", arch["source"],
                remedies=_arch_list(lower, name, cc) + toolkits)]
    return [Finding(
        WARNING, "gpu-arch-too-new-for-toolkit", "gpu",
        f"CUDA {cuda} cannot target {_named(name, cc, arch['name'])} itself (support starts with CUDA "
        f"{arch['first_cuda']}) but builds {kernels.sm(lower)} cubins, which this GPU runs: extension builds "
        f"that detect the GPU's arch (TORCH_CUDA_ARCH_LIST unset) fail with {unsupported}; builds for "
        f"{kernels.sm(lower)} work.",
        f'export TORCH_CUDA_ARCH_LIST="{lower[0]}.{lower[1]}" before building extensions (or install CUDA >= '
        f"{arch['first_cuda']} for native {kernels.sm(cc)} kernels)", arch["source"],
        remedies=_arch_list(lower, name, cc) + toolkits)]


def _arch_list(lower: CC, name: str, cc: CC) -> tuple:
    value = f"{lower[0]}.{lower[1]}"
    return (remedy.env("TORCH_CUDA_ARCH_LIST", value,
                       f'export TORCH_CUDA_ARCH_LIST="{value}" before building extensions ({_named(name, cc)} runs '
                       f"{kernels.sm(lower)} cubins)", f"{_named(name, cc)} runs {kernels.sm(lower)} cubins"),)


def _toolkits(m: Matrix, f: F.Facts, low: Optional[str], high: Optional[str], why: str) -> tuple:
    """Toolkits within [low, high] (major.minor, either open): the CUDA torch was built with when
    it is one, then the newest of the range's lowest and highest minor."""
    def inside(v: str) -> bool:
        return (not low or compare(mm(v), low) >= 0) and (not high or compare(mm(v), high) <= 0)
    fits = [r["version"] for r in m.releases() if inside(r["version"])]
    tb = torch_build(f, m)
    want = [v for v in fits if tb and tb.cuda and mm(v) == tb.cuda][-1:]
    edge = [v for v in fits if mm(v) == mm(fits[0 if low else -1])][-1:] if fits else []
    return tuple(remedy.toolkit(v, toolkit_step(f, v), why)
                 for v in dict.fromkeys(want + edge))


def _derived(f: F.Facts, m: Matrix, tb) -> list:
    """gpu_vs_torch for a build whose arch list the matrix lacks: bound it from the build's CUDA
    (envcheck/rules/kernels.py); a verdict only where the bound decides it."""
    out: list = []
    for name, cc in gpu_ccs(f, m):
        if cc is None:
            out.append(gpu_skip("gpu_vs_torch", "gpu", name, cc))
            continue
        d = kernels.derive(m, tb.cuda, tb.tag, cc)
        if d.verdict == kernels.POSSIBLE:
            out.append(Skipped("gpu_vs_torch", "gpu",
                               f"the arch list of torch {tb.label()} is not in the matrix (CUDA {tb.cuda} can build "
                               f"the {kernels.sm(d.cubin)} cubin {_named(name, cc)} runs; whether this build has it is "
                               f"unknown)", "audit --deep (reads torch.cuda.get_arch_list())"))
            continue
        fix, wheels = _suggest(m, f, cc, tb.version, name, f"install a torch build that lists {_sm(cc)}")
        head = (f"torch {tb.label()}{tb.pypi_note()} cannot carry a kernel for {_named(name, cc)}: its arch list is "
                f"not in the matrix, so it was {d.explain()}")
        source = next((a["source"] for a in m.data["archs"] if a["cc"] == f"{cc[0]}.{cc[1]}"), src(m, "builder_arch"))
        if d.verdict == kernels.PTX_ONLY and d.ptx_seen is not False:
            seen = (f"other {tb.tag} builds embed PTX" if d.ptx_seen
                    else f"the matrix knows no {tb.tag} build's list to tell whether it embeds PTX")
            out.append(Finding(
                WARNING, "gpu-ptx-only", "gpu",
                f"{head}; no cubin of it runs on this GPU, only PTX (compute_{d.ptx[0]}{d.ptx[1]}) could, by JIT, "
                f"and {seen}. Without PTX: {NO_KERNEL}.", fix, source, remedies=wheels))
            continue
        why = ("; no cubin of it runs on this GPU and PyTorch's known " + tb.tag + " builds embed no PTX"
               if d.verdict == kernels.PTX_ONLY else "; no cubin or PTX it can build runs on this GPU")
        out.append(Finding(ERROR, "gpu-no-kernel", "gpu",
                           f"{head}{why}. Every CUDA op fails with {NO_KERNEL}.", fix, source, remedies=wheels))
    return out


@needs("torch", "gpu")
def gpu_vs_torch_runtime(f: F.Facts, m: Matrix) -> list:
    """A build whose CUDA predates what the architecture's CUDA libraries need (the matrix's
    runtime_min_cuda), even where a cubin of the same major would run."""
    tb = torch_build(f, m)
    if not tb or not tb.cuda:
        return []
    out = []
    for name, cc in gpu_ccs(f, m):
        arch = m.arch(cc) if cc else None
        need = arch and arch.get("runtime_min_cuda")
        if need and compare(tb.cuda, need) < 0:
            fix, wheels = _suggest(m, f, cc, tb.version, name, f"install a torch build for CUDA >= {need}", need)
            out.append(Finding(
                ERROR, "gpu-runtime-too-old", "gpu",
                f"torch {tb.label()}{tb.pypi_note()} bundles the CUDA {tb.cuda} runtime and libraries, which do not "
                f"support {_named(name, cc, arch['name'])}: CUDA ops fail (e.g. 'cublas runtime error'), though "
                f"its cubins would load.", fix, arch["runtime_source"], remedies=wheels))
    return out


RULES = [gpu_unknown, gpu_vs_torch, gpu_vs_torch_runtime, gpu_vs_toolkit]
