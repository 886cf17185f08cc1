"""Helpers the rule modules share: which torch build a host has (resolving a plain `torch==X`
to the variant PyPI served), the exact pip command for a variant, GPU compute capabilities, and
toolkit paths. Pure functions of (facts, matrix)."""
from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from envcheck.errors import VersionError
from envcheck.facts import schema as F
from envcheck.matrix import pci as pci_ids
from envcheck.matrix.load import Matrix
from envcheck.model import Skipped
from envcheck.versions import (cu_tag_to_version, is_prerelease, major, parse_compute_capability, parse_torch,
                               version_to_cu_tag, vkey)
from envcheck.versions import major_minor as mm  # the rules' short name for 'X.Y'

CC = Tuple[int, int]


def src(m: Matrix, name: str) -> str:
    """A named source URL from the matrix's `sources:` table ('' when absent)."""
    return str((m.data.get("sources") or {}).get(name, ""))


@dataclass(frozen=True)
class TorchBuild:
    version: str            # "1.1.0"
    tag: Optional[str]      # "cu100", "cpu", None when unknown
    cuda: Optional[str]     # "10.0"
    how: str                # local-tag | deep | flag | pypi-default | cpu | unknown
    record: Optional[Dict[str, Any]]

    def label(self) -> str:
        if self.how == "pypi-default" or not self.tag:
            return self.version
        return f"{self.version}+{self.tag}"

    def pypi_note(self) -> str:
        """Say so when the CUDA was inferred from PyPI's default, not read from the host."""
        if self.how == "pypi-default":
            return f" (a plain torch=={self.version} from PyPI is the {self.tag} build)"
        return ""


def torch_build(f: F.Facts, m: Matrix) -> Optional[TorchBuild]:
    text = F.torch_version(f) or F.package_version(f, "torch")
    if not text:
        return None
    try:
        public, local = parse_torch(text)
    except VersionError:
        return None
    full = F.package_version(f, "torch") or text
    if not local:  # the package metadata may carry the local tag the derived section dropped
        local = full.partition("+")[2].lower() or None
    tag = F.torch_local(f) or local
    cuda = F.torch_cuda(f) or F.deep_torch_cuda(f)
    rec = m.torch(public)
    if tag == "cpu":
        return TorchBuild(public, "cpu", None, "cpu", rec)
    if tag and tag.startswith("cu") and cu_tag_to_version(tag):
        return TorchBuild(public, tag, cuda and mm(cuda) or cu_tag_to_version(tag), "local-tag", rec)
    if cuda:
        try:
            return TorchBuild(public, version_to_cu_tag(cuda), mm(cuda), F.torch_cuda_source(f) or "deep", rec)
        except VersionError:
            pass
    # PyPI serves final releases without a label only: a source or vendor build (+git…, NGC's
    # 2.1.0a0+32f93b1) or a pre-release (2.1.0rc1, a nightly) is no PyPI wheel
    default = m.pypi_variant(public) if not tag and not is_prerelease(full) else None
    if default:
        return TorchBuild(public, default, cu_tag_to_version(default), "pypi-default", rec)
    return TorchBuild(public, None, None, "unknown", rec)


def torch_install_cmd(m: Matrix, version: str, tag: str, installed: Optional[str] = None) -> str:
    """The pip command that installs exactly this variant with its paired torchvision. `installed`:
    the torch version the host has; when it is this release (another build of it), a pin without a
    +tag is 'Requirement already satisfied' (PEP 440 ignores the local label of the installed
    2.4.0+cu124 against ==2.4.0), so the command forces the reinstall."""
    cmd = _install_cmd(m, version, tag)
    try:
        same = bool(installed) and vkey(parse_torch(installed)[0]) == vkey(version)
    except VersionError:
        same = False
    if same and f"=={version}+" not in cmd:
        cmd = cmd.replace("pip install ", "pip install --force-reinstall ", 1)
    return cmd


def _install_cmd(m: Matrix, version: str, tag: str) -> str:
    rec = m.torch(version)
    tv = rec["torchvision"][-1] if rec and rec["torchvision"] else None
    k = vkey(version)
    pkgs = f"torch=={version}"
    if tv:
        pkgs += f" torchvision=={tv}"
    if rec and rec["pypi"] == tag:
        return f"pip install {pkgs}"  # plain PyPI is exactly this variant
    if k < (1, 2):
        # no +cuXYZ in these versions: only find-links without PyPI picks the right build
        return f"pip install --no-index {pkgs} -f https://download.pytorch.org/whl/{tag}/torch_stable.html"
    tagged = f"torch=={version}+{tag}" + (f" torchvision=={tv}+{tag}" if tv else "")
    if rec and rec.get("index"):  # only on its own index (1.8.2 LTS: not in torch_stable.html)
        return f"pip install {tagged} --extra-index-url {rec['index'].format(tag=tag)}"
    if k < (1, 11):
        return f"pip install {tagged} -f https://download.pytorch.org/whl/torch_stable.html"
    if k < (2,):
        return f"pip install {tagged} --extra-index-url https://download.pytorch.org/whl/{tag}"
    return f"pip install {pkgs} --index-url https://download.pytorch.org/whl/{tag}"


def variant_for_cuda(m: Matrix, version: str, cuda: str) -> Optional[str]:
    """The variant of this torch release built for the same CUDA major.minor (else same major)."""
    rec = m.torch(version)
    if not rec:
        return None
    tags = list(rec["variants"])
    exact = [t for t in tags if cu_tag_to_version(t) == mm(cuda)]
    if exact:
        return exact[0]
    same = [t for t in tags if major(cu_tag_to_version(t) or "0") == major(cuda)]
    return same[-1] if same else None


def gpu_ccs(f: F.Facts, m: Matrix) -> List[Tuple[str, Optional[CC]]]:
    """(display name, compute capability or None) per distinct GPU model on the host.

    The driver's list first: its compute capability, else the name through the matrix, else the
    PCI device at the same bus address through the chip table (a board the name table does not
    know). No driver list at all (no driver yet): the NVIDIA GPUs sysfs shows on the PCI bus.
    """
    pci = pci_ids.by_bus(f, m)
    found: List[Tuple[str, Optional[CC]]] = []
    for g in F.gpus(f):
        name = F.text(g.get("name")) or ""
        cc: Optional[CC] = None
        raw = F.text(g.get("compute_capability"))
        if raw:
            try:
                cc = parse_compute_capability(raw)
            except VersionError:
                cc = None
        if cc is None:
            cc = m.gpu_cc(name)
        if cc is None:
            on_bus = pci.get(pci_ids.bus_key(g.get("pci_bus_id")))  # type: ignore[arg-type]
            cc = on_bus.cc if on_bus else None
        found.append((name or (f"sm_{cc[0]}{cc[1]}" if cc else "GPU"), cc))
    if not F.gpus(f):
        found = [(g.name, g.cc) for g in pci_ids.pci_gpus(f, m)]
    out: List[Tuple[str, Optional[CC]]] = []
    for key in found:
        if key not in out:
            out.append(key)
    return out


def gpu_skip(check: str, component: str, name: str, cc: Optional[CC]):
    """The Skipped record of a check that could not judge one GPU: its compute capability is
    unknown, or the matrix does not know that architecture."""
    if cc is None:
        return Skipped(check, component, f"compute capability of {name!r} unknown",
                       "give --gpu sm_XY (or X.Y), or add the model to compat_matrix.yaml gpus")
    return Skipped(check, component, f"architecture {cc[0]}.{cc[1]} not in the matrix",
                   "update envcheck (or --matrix FILE)")


def arch_runs(arch_list: List[str], cc: CC) -> Tuple[bool, Optional[str]]:
    """(a cubin runs on cc, the best PTX target that can be JIT-compiled for it or None).

    NVIDIA's rules (CUDA C++ Programming Guide, "Binary Compatibility", "PTX Compatibility" and
    "Feature Availability"; PTX ISA, ".target"): a cubin for X.y runs on X.z with z >= y; PTX for
    a.b is JIT-compiled for any cc >= a.b; an arch-specific target (sm_90a, compute_90a) runs
    only on exactly that compute capability; a family-specific one (sm_100f) on its major from
    its minor up.
    """
    return _arch_runs(tuple(arch_list), tuple(cc))


@functools.lru_cache(maxsize=4096)   # the same few arch lists, asked ~4,000 times by `plan`
def _arch_runs(arch_list: Tuple[str, ...], cc: CC) -> Tuple[bool, Optional[str]]:
    cubin, ptx = False, None
    for a in arch_list:
        mt = re.match(r"^(sm|compute)_(\d+?)(\d)([af]?)$", a)
        if not mt:
            continue
        kind, ac, suffix = mt.group(1), (int(mt.group(2)), int(mt.group(3))), mt.group(4)
        if suffix == "a":
            fits = ac == cc
        elif kind == "sm" or suffix == "f":
            fits = ac[0] == cc[0] and ac[1] <= cc[1]
        else:
            fits = ac <= cc
        if fits and kind == "sm":
            cubin = True
        elif fits:
            ptx = a
    return cubin, ptx


def norm_path(path: str, f: F.Facts) -> str:
    """Normalise a path and resolve the /usr/local/cuda symlink the probe saw."""
    p = os.path.normpath(path.strip()) if path.strip() else ""
    link = F.cuda_symlink(f)
    lp, target = link.get("path"), link.get("target")
    if lp and target and (p == lp or p.startswith(lp.rstrip("/") + "/")):
        p = os.path.normpath(target + p[len(lp.rstrip("/")):])
    return p


def _in_distro(p: str, tk: Dict[str, Any], root: str) -> bool:
    """Whether a path is one of a distribution toolkit's own places: it lives in the system's
    directories (/usr), which hold everything else too (a /usr/local/bin/nvcc is not Debian's)."""
    own = {root, f"{root}/bin", f"{root}/bin/nvcc", F.text(tk.get("include")) or "", F.text(tk.get("lib")) or ""}
    return p in own or p.startswith("/usr/lib/nvidia-cuda-toolkit")


def toolkit_of(path: str, f: F.Facts) -> Optional[Dict[str, Any]]:
    """The installed toolkit (from the probe's list) that contains `path`, if any."""
    p = norm_path(path, f)
    best = None
    for tk in F.cuda_toolkits(f):
        root = norm_path(F.text(tk.get("path")) or "", f)
        if root and tk.get("layout") == "distro":
            if _in_distro(p, tk, root) and best is None:
                best = tk
            continue
        if root and (p == root or p.startswith(root + "/")):
            if best is None or len(root) > len(F.text(best.get("path")) or ""):
                best = tk
    return best


CUDA_DIR = re.compile(r"/cuda(-\d+(\.\d+)*)?(/|$)")


def installed_toolkit(f: F.Facts, version: str) -> Optional[Dict[str, Any]]:
    """A toolkit of this CUDA major.minor the probe found on the host (in use or not), with the
    directory it is in: one listed without it (a hand-written facts file) cannot be pointed at."""
    try:
        want = mm(version)
        return next((tk for tk in F.cuda_toolkits(f) if F.text(tk.get("path")) and F.text(tk.get("version"))
                     and mm(tk["version"]) == want), None)
    except VersionError:
        return None


def toolkit_step(f: F.Facts, version: str) -> str:
    """How to get CUDA `version` in use: point at the one installed already (Debian's packaged
    toolkit included), else install it."""
    tk = installed_toolkit(f, version)
    if not tk:
        return f"install CUDA {version} (envcheck install-cuda {mm(version)})"
    root = F.text(tk.get("path"))  # installed_toolkit() gives only toolkits with one
    where = "Debian's nvidia-cuda-toolkit, in /usr" if tk.get("layout") == "distro" else root
    return (f"use the CUDA {mm(version)} already installed ({where}): export PATH={root}/bin:$PATH "
            f"CUDA_HOME={root}")


def installed_gcc(f: F.Facts, limit: int) -> Optional[int]:
    """The newest gcc-N installed with N <= limit, if any."""
    found = []
    for g in F.installed_gccs(f):
        try:
            found.append(major(F.text(g.get("version")) or ""))
        except VersionError:
            continue
    fits = [n for n in found if n <= limit]
    return max(fits) if fits else None


# What each named fact is, for a check that needs it: (present?, what is missing, the `check`
# flag that gives it; None: only an audit of the host collects it).
# A rule declares its needs with @needs(...); the registry records a Skipped instead of running it
# when one is absent, so "no findings" never stands for "nothing was looked at".
NEEDS = {
    "driver": (lambda f: bool(F.driver_version(f)), "no driver version", "--driver V"),
    "cuda": (lambda f: bool(F.cuda_version(f)), "no CUDA toolkit (nvcc) version", "--cuda V"),
    "cudnn": (lambda f: bool(F.cudnn_version(f)), "no cuDNN version", "--cudnn V"),
    "torch": (lambda f: bool(F.torch_version(f) or F.package_version(f, "torch")), "no torch version",
              "--torch V[+cuXYZ]"),
    "gpu": (lambda f: bool(F.gpus(f)), "no GPU", "--gpu NAME|sm_XY"),
    "python": (lambda f: bool(F.python_version(f)), "no Python version", "--python X.Y"),
    "gcc": (lambda f: bool(F.gcc_version(f) or F.host_compiler(f).get("version")),
            "no host compiler (gcc) version", "--gcc V"),
    "env": (lambda f: F.has(f, "env"), "environment not collected", None),
}


def needs(*names: str):
    """Declare the facts a rule cannot judge without (keys of NEEDS)."""
    for n in names:
        if n not in NEEDS:
            raise ValueError(f"unknown fact {n!r}; known: {', '.join(NEEDS)}")

    def mark(rule):
        rule.needs = names
        return rule
    return mark


# the section of the facts document that says a fact was looked for: a probe that looked and
# found no GPU (or no torch) leaves the section empty, and a check of it does not apply; a section
# that is absent (a flag not given, an older facts file) means nobody looked: the check is skipped
SECTION = {"driver": "driver", "cuda": "cuda", "cudnn": "cudnn", "torch": "packages", "gpu": "gpus",
           "python": "python", "gcc": "gcc", "env": "env"}


def missing(rule, f: F.Facts) -> List[str]:
    """The needed facts nobody looked for, in the order the rule declared them."""
    return [n for n in getattr(rule, "needs", ()) if not NEEDS[n][0](f) and not F.has(f, SECTION[n])]


def needs_text(names: List[str]) -> Tuple[str, str]:
    """(what is missing, how to give it) for a set of missing facts: ('no driver version, no GPU',
    'pass --driver V --gpu NAME|sm_XY, or audit the host')."""
    flags = [NEEDS[n][2] for n in names if NEEDS[n][2]]
    how = f"pass {' '.join(flags)}, or audit the host" if len(flags) == len(names) else "audit the host"
    return ", ".join(NEEDS[n][1] for n in names), how
