"""cuDNN rules: is the system cuDNN built for the toolkit's CUDA, does a system cuDNN on
LD_LIBRARY_PATH shadow the one pip's torch brings (nvidia-cudnn-cu1x), and will torch accept the
cuDNN the process loads (torch/backends/cudnn/__init__.py's own rule)."""
from __future__ import annotations

import os
from typing import Dict, List, Optional, Tuple

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding, Skipped
from envcheck.rules import remedy
from envcheck.rules.common import major, mm, needs, norm_path, src, torch_build
from envcheck.versions import vkey


def cudnn_unknown(f: F.Facts, m: Matrix) -> List[Finding]:
    v = F.cudnn_version(f)
    if not v:
        return []
    try:
        vkey(v)
    except VersionError:
        return [Finding(WARNING, "cudnn-unknown", "cudnn", f"cuDNN version {v!r} cannot be read; cuDNN checks "
                        "were skipped.", "check CUDNN_MAJOR/MINOR/PATCHLEVEL in cudnn_version.h (cudnn.h for 7.x)",
                        src(m, "cudnn_sm"))]
    if m.cudnn(v):
        return []
    return [Finding(WARNING, "cudnn-unknown", "cudnn",
                    f"The matrix does not know cuDNN {v}; which CUDA it was built for was not checked.",
                    "update envcheck (or pass --matrix FILE with a newer compat_matrix.yaml)", src(m, "cudnn_sm"))]


def _best_for(m: Matrix, cuda: str) -> Optional[str]:
    fits = m.cudnn_for_cuda(cuda)
    return fits[-1]["version"] if fits else None


@needs("cudnn", "cuda")
def cudnn_vs_toolkit(f: F.Facts, m: Matrix) -> List[Finding]:
    v, cuda = F.cudnn_version(f), F.cuda_version(f)
    if not v or not cuda:
        return []  # the probe found no cuDNN or no toolkit: nothing to pair
    tb = torch_build(f, m)
    if F.origin(f) == "flags" and tb and tb.cuda:
        # check's --cudnn is the cuDNN the torch process loads (pip's nvidia-cudnn-cuXX, or the copy
        # in an older wheel): built for torch's CUDA and loaded with torch's runtime, never nvcc's.
        # audit judges the system cuDNN it finds on disk against the toolkit instead.
        cuda = tb.cuda
    rec = m.cudnn(v)
    if not rec:
        return [Skipped("cudnn_vs_toolkit", "cudnn", f"cuDNN {v} not in the matrix",
                        "update envcheck (or --matrix FILE)")]
    if m.cudnn_has_build(rec, cuda):
        return []
    best = _best_for(m, cuda)
    if best:
        a = m.cudnn_archive(best, mm(cuda))
        fix = (f"install cuDNN {best} for CUDA {mm(cuda)}: {a['name']} ({a['url']}); copy {a['include']}/* into "
               f"<toolkit>/include and {a['lib']}/* into <toolkit>/lib64")
    else:
        fix = f"the matrix knows no cuDNN for CUDA {mm(cuda)}"
    same_major = any(int(b.split(".")[0]) == major(cuda) for b in rec["cuda"])
    why = (f"builds for CUDA {', '.join(rec['cuda'])}, none for CUDA {mm(cuda)} (before CUDA 11 a build serves only "
           f"its own minor)") if same_major else (
           f"builds for CUDA {', '.join(rec['cuda'])} only, another CUDA major than the toolkit's {cuda}")
    return [Finding(ERROR, "cudnn-cuda-mismatch", "cudnn",
                    f"cuDNN {rec['version']} has {why}: programs fail to load it ('cannot open shared object "
                    f"file' for the CUDA libraries it links) or its calls return "
                    f"CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING.", fix, rec["source"],
                    remedies=(remedy.cudnn(best, fix, f"CUDA {mm(cuda)} needs a cuDNN built for it"),) if best else ())]


@needs("env")  # what shadows pip's cuDNN is on LD_LIBRARY_PATH
def _pip_cudnn(f: F.Facts) -> Optional[Tuple[str, str]]:
    """(package, version) of the nvidia-cudnn-cu* wheel pip's torch depends on, if installed."""
    pip = [(n, F.text(p.get("version"))) for n, p in sorted(F.packages(f).items()) if n.startswith("nvidia-cudnn-cu")]
    return (pip[0][0], pip[0][1]) if pip and pip[0][1] else None  # type: ignore[return-value]


def _shadow(f: F.Facts) -> Optional[Tuple[str, Optional[str], List[str], Dict[str, Optional[str]]]]:
    """(LD_LIBRARY_PATH entry, its cuDNN version, all entries, system dirs) when a system cuDNN
    directory is on LD_LIBRARY_PATH: the loader finds it before the pip copy torch's RUNPATH names."""
    ld = [e for e in (F.env(f).get("LD_LIBRARY_PATH") or "").split(":") if e]
    sys_dirs: Dict[str, Optional[str]] = {}
    for lib in F.cudnn_libs(f):
        path = F.text(lib.get("path")) or ""
        if "site-packages" in path or "dist-packages" in path:
            continue  # that is the pip copy itself
        sys_dirs[norm_path(os.path.dirname(path), f)] = F.text(lib.get("version")) or F.cudnn_version(f)
    hits = [(e, sys_dirs[norm_path(e, f)]) for e in ld if norm_path(e, f) in sys_dirs]
    return (hits[0][0], hits[0][1], ld, sys_dirs) if hits else None


@needs("env")  # what shadows pip's cuDNN is on LD_LIBRARY_PATH
def cudnn_shadows_torch(f: F.Facts, m: Matrix) -> List[Finding]:
    pip, shadow = _pip_cudnn(f), _shadow(f)
    if not pip or not shadow:
        return []
    (pip_name, pip_ver), (entry, sys_ver, ld, sys_dirs) = pip, shadow
    keep = ":".join(e for e in ld if norm_path(e, f) not in sys_dirs)
    tb = torch_build(f, m)
    try:
        differ = sys_ver is None or _refused((vkey(pip_ver) + (0, 0))[:3], (vkey(sys_ver) + (0, 0))[:3],
                                             _era(m, tb.version if tb else None))
    except VersionError:
        differ = True
    pv = ", ".join(str(x) for x in vkey(pip_ver)[:3])
    sv = ", ".join(str(x) for x in vkey(sys_ver)[:3]) if sys_ver else "?"
    fix = "drop it from LD_LIBRARY_PATH for torch jobs: " + (f"export LD_LIBRARY_PATH={keep}" if keep
                                                              else "unset LD_LIBRARY_PATH")
    return [Finding(ERROR if differ else WARNING, "cudnn-shadows-torch", "cudnn",
                    f"LD_LIBRARY_PATH entry {entry} holds a system cuDNN {sys_ver or '(version unknown)'} that is "
                    f"loaded instead of the {pip_name} {pip_ver} pip's torch depends on: torch fails with 'cuDNN "
                    f"version incompatibility: PyTorch was compiled against ({pv}) but found runtime version ({sv})'"
                    f"{'' if differ else ' (this one it accepts: same major, minor not older)'}.",
                    fix, src(m, "pypi_cudnn_cu12"),
                    remedies=(remedy.env("LD_LIBRARY_PATH", keep, fix, f"{entry} shadows {pip_name}"),))]


# torch wheels before 1.13 carry libcudnn in torch/lib; from 1.13 PyPI's depend on nvidia-cudnn-cu1x
BUNDLED_CUDNN_BEFORE = (1, 13)


def torch_cudnn(f: F.Facts, m: Matrix) -> Optional[Dict[str, str]]:
    """The cuDNN the torch process loads: {"version", "how", "from"}, None when unknown.

    how: "deep" (torch reported it), "flags" (`check --cudnn`, documented as the loaded one),
    "shadow" (a system copy on LD_LIBRARY_PATH ahead of pip's), "pip" (the nvidia-cudnn-cu*
    wheel), "bundled" (a torch < 1.13 wheel's own copy, version from the matrix)."""
    tb = torch_build(f, m)
    if not tb or tb.tag in (None, "cpu"):
        return None
    deep = F.deep_cudnn(f)
    if deep:
        return {"version": deep, "how": "deep", "from": "torch.backends.cudnn.version() (--deep)"}
    if F.origin(f) == "flags":
        v = F.cudnn_version(f)
        return {"version": v, "how": "flags", "from": "--cudnn"} if v else None
    pip, shadow = _pip_cudnn(f), _shadow(f)
    if pip and shadow and shadow[1]:
        return {"version": shadow[1], "how": "shadow",
                "from": f"the system copy in {shadow[0]} (LD_LIBRARY_PATH), not {pip[0]} {pip[1]}"}
    if pip:
        return {"version": pip[1], "how": "pip", "from": f"pip package {pip[0]}"}
    built = (m.torch_variant(tb.version, tb.tag) or {}).get("cudnn")
    if built and vkey(tb.version) < BUNDLED_CUDNN_BEFORE:
        return {"version": built, "how": "bundled", "from": f"the copy in torch {tb.label()}'s wheel (matrix)"}
    return None


def _era(m: Matrix, torch_version: Optional[str]) -> Dict[str, str]:
    """torch's own test of the loaded cuDNN as the release in question had it (matrix
    torch.cudnn_check, ascending by `from`): the latest era at or below the release."""
    eras = m.data["torch"].get("cudnn_check") or []
    try:
        k = vkey(torch_version) if torch_version else None
    except VersionError:
        k = None
    fit = [e for e in eras if k is None or vkey(e["from"]) <= k]
    return fit[-1] if fit else {"rule": "minor-at-least", "message": "", "source": ""}


def _refused(built: tuple, loaded: tuple, era: Dict[str, str]) -> bool:
    """torch's test, by era: another major is always refused; 'same-minor' (torch 0.x) also
    refuses another minor; 'minor-at-least' (1.0 on) refuses before cuDNN 7 another minor, and
    from 7 on a loaded minor older than the one built with."""
    if loaded[0] != built[0]:
        return True
    if era.get("rule") == "same-minor" or loaded[0] < 7:
        return loaded[1] != built[1]
    return loaded[1] < built[1]


def _pip_cudnn_fix(tb, built: str) -> Optional[str]:
    """The pip package of the cuDNN a torch >= 1.13 wheel depends on, pinned to its build (a
    three-part version pins its builds: the packages are numbered 9.1.0.70)."""
    if not tb or not tb.cuda or vkey(tb.version) < BUNDLED_CUDNN_BEFORE:
        return None
    pin = built if len(vkey(built)) >= 4 else f"{built}.*"
    return f'pip install "nvidia-cudnn-cu{major(tb.cuda)}=={pin}"'


def _cudnn_int(k: tuple) -> str:
    """cuDNN's own number as torch printed it before 1.12.1: 7.1.2 -> 7102 (x10000 from 9)."""
    return str(k[0] * 10000 + k[1] * 100 + k[2] if k[0] >= 9 else k[0] * 1000 + k[1] * 100 + k[2])


@needs("torch")
def cudnn_vs_torch(f: F.Facts, m: Matrix) -> list:
    tb = torch_build(f, m)
    if not tb or tb.tag in (None, "cpu"):
        return []
    loads = torch_cudnn(f, m)
    if loads and loads["how"] == "shadow":
        return []  # cudnn_shadows_torch names the entry and the fix
    loaded = loads["version"] if loads else None
    if not loaded:
        return [Skipped("cudnn_vs_torch", "cudnn", "the cuDNN the torch process loads is unknown",
                        "--cudnn V (the cuDNN the process loads), or audit --deep")]
    var = m.torch_variant(tb.version, tb.tag) or {}
    built = var.get("cudnn")
    if not built:
        return [Skipped("cudnn_vs_torch", "cudnn", f"the cuDNN torch {tb.label()} was built with is not in the matrix",
                        "update envcheck (or --matrix FILE)")]
    try:
        b, lo = (vkey(built) + (0, 0))[:3], (vkey(loaded) + (0, 0))[:3]
    except VersionError:
        return []  # cudnn_unknown says the version cannot be read
    era = _era(m, tb.version)
    if not _refused(b, lo, era):
        return []
    bt, lt = ", ".join(map(str, b)), ", ".join(map(str, lo))
    same = era.get("rule") == "same-minor" or b[0] < 7
    want = f"cuDNN {b[0]}.{b[1]}" if same else f"cuDNN {b[0]}.x >= {b[0]}.{b[1]}"
    pip = _pip_cudnn_fix(tb, built) if loads and loads["how"] in ("pip", "flags") else None
    fix = (f"{pip} (the cuDNN torch {tb.label()} was built with), and keep other cuDNN directories out of "
           f"LD_LIBRARY_PATH for torch jobs" if pip else
           f"let torch load the cuDNN it ships: take the system cuDNN's directory out of LD_LIBRARY_PATH for torch "
           f"jobs, or make the loaded one {want}")
    as_int = era.get("format") == "int"
    said = (era.get("message") or "cuDNN version incompatibility: PyTorch was compiled against {built} but found "
            "runtime version {loaded}").format(built=_cudnn_int(b) if as_int else f"({bt})",
                                               loaded=_cudnn_int(lo) if as_int else f"({lt})")
    return [Finding(
        ERROR, "cudnn-refused-by-torch", "cudnn",
        f"torch {tb.label()}{tb.pypi_note()} was built with cuDNN {built} but the process loads cuDNN {loaded}; "
        f"torch {tb.version} refuses it on first use: '{said}'"
        f"{' (torch before 1.0 demanded the same minor)' if era.get('rule') == 'same-minor' else ''}.",
        fix, era.get("source") or src(m, "torch_cudnn_check"),
        remedies=(remedy.loaded_cudnn(built, fix, f"torch {tb.label()} needs {want}"),))]


RULES = [cudnn_unknown, cudnn_vs_toolkit, cudnn_shadows_torch, cudnn_vs_torch]
