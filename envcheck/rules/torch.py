"""torch, torchvision and torchaudio rules: known release and variant, a CUDA build where GPUs
are, companions paired with torch (same release line and same CUDA), and a numpy their wheels
were built for (numpy 2.x breaks wheels compiled against numpy 1.x)."""
from __future__ import annotations

from typing import List, Optional

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding, Skipped
from envcheck.rules import remedy
from envcheck.rules.common import gpu_ccs, major, needs, src, torch_build, torch_install_cmd
from envcheck.versions import compare, cu_tag_to_version, is_prerelease, major_minor, parse_torch, vkey


def torch_unknown(f: F.Facts, m: Matrix) -> List[Finding]:
    text = F.torch_version(f) or F.package_version(f, "torch")
    if not text:
        return []
    tb = torch_build(f, m)
    if tb is None:
        return [Finding(WARNING, "torch-unknown", "torch", f"torch version {text!r} cannot be read; torch checks "
                        "were skipped.", "check `pip show torch`", src(m, "torch_previous"))]
    if tb.record is None:
        return [Finding(WARNING, "torch-unknown", "torch",
                        f"The matrix does not know torch {tb.version}; its CUDA variants, arch list, companions "
                        f"and Python versions were not checked.",
                        "update envcheck (or pass --matrix FILE with a newer compat_matrix.yaml)",
                        src(m, "torch_previous"))]
    if tb.tag is None:
        full = F.package_version(f, "torch") or text
        what = ("is not on PyPI and carries no +cuXYZ tag" if full == tb.version
                else f"({full}) is a pre-release or a source/vendor build, not a PyPI wheel with a +cuXYZ tag")
        return [Finding(WARNING, "torch-variant-unknown", "torch",
                        f"torch {tb.version} {what}, so which CUDA build it is "
                        f"is unknown; the CUDA checks for torch were skipped.",
                        f"give the variant, e.g. --torch {tb.version}+{list(tb.record['variants'])[-1]}",
                        tb.record["source"])]
    if tb.tag != "cpu" and tb.tag not in tb.record["variants"]:
        return [Finding(WARNING, "torch-variant-unknown", "torch",
                        f"The matrix knows no {tb.tag} build of torch {tb.version} (known: "
                        f"{', '.join(tb.record['variants'])}); pip would fail with 'No matching distribution found "
                        f"for torch=={tb.version}+{tb.tag}' unless it came from elsewhere.",
                        torch_install_cmd(m, tb.version, tb.record["pypi"] or list(tb.record["variants"])[-1],
                                          tb.version),
                        tb.record["source"])]
    return []


@needs("torch", "gpu")  # a +cpu torch is a finding only where GPUs are
def torch_cpu_with_gpus(f: F.Facts, m: Matrix) -> List[Finding]:
    """On a GPU training host a CPU-only torch trains nothing on the GPUs: an error."""
    tb = torch_build(f, m)
    if not tb or tb.tag != "cpu" or not gpu_ccs(f, m):
        return []
    fix, wheels = "install a CUDA build of torch", ()
    if tb.record and (tb.record["pypi"] or tb.record["variants"]):
        tag = tb.record["pypi"] or list(tb.record["variants"])[-1]
        fix = torch_install_cmd(m, tb.version, tag, tb.version)
        wheels = (remedy.wheel(m, tb.version, tag, f"the GPUs need a CUDA build of torch {tb.version}", fix),)
    return [Finding(ERROR, "torch-cpu-build", "torch",
                    f"torch {tb.label()} is a CPU-only build on a host with GPUs: torch.cuda.is_available() is False, "
                    f".cuda() fails with 'Torch not compiled with CUDA enabled', and nothing trains on the GPUs.", fix,
                    tb.record["source"] if tb.record else src(m, "torch_previous"), remedies=wheels)]


def _companion(f: F.Facts, m: Matrix, name: str) -> List[Finding]:
    text = F.package_version(f, name)
    tb = torch_build(f, m)
    if not text:
        return []
    try:
        public, local = parse_torch(text)
    except VersionError:
        return [Finding(WARNING, f"{name}-unknown", name, f"{name} version {text!r} cannot be read.",
                        f"check `pip show {name}`", src(m, "vision_table"))]
    table = "vision_table" if name == "torchvision" else "audio_table"
    known = m.torchvision_known(public) if name == "torchvision" else m.torchaudio_known(public)
    if not known:
        return [Finding(WARNING, f"{name}-unknown", name,
                        f"The matrix does not know {name} {public}; its pairing with torch was not checked.",
                        "update envcheck (or pass --matrix FILE with a newer compat_matrix.yaml)", src(m, table))]
    if not tb or not tb.record:
        return []
    paired = tb.record[name]
    symptom = ("import fails with 'RuntimeError: operator torchvision::nms does not exist' or \"Couldn't load "
               "custom C++ ops\"" if name == "torchvision"
               else "import fails with 'OSError: .../libtorchaudio.so: undefined symbol: ...'")
    fix = (f"pip install {name}=={paired[-1]}" + (f" (with the torch {tb.tag} index: "
           f"{torch_install_cmd(m, tb.version, tb.tag)})" if tb.tag and tb.tag != tb.record["pypi"] else "")
           if paired else f"uninstall {name}: torch {tb.version} has no matching {name} release")
    if not any(compare(public, p) == 0 for p in paired):
        want = (f"{paired[-1]}+{tb.tag}" if paired and tb.tag and tb.tag != tb.record["pypi"]
                else paired[-1] if paired else "")
        return [Finding(ERROR, f"{name}-mismatch", name,
                        f"{name} {public} is not the release paired with torch {tb.version} "
                        f"({' or '.join(paired) if paired else 'none'}): {symptom}.", fix, src(m, table),
                        remedies=(remedy.package(name, want, fix,
                                                 f"torch {tb.version} pairs with {name} {paired[-1]}"),) if want else ())]
    other = cu_tag_to_version(local) if local else None
    if other and tb.cuda and other != tb.cuda:
        if name == "torchaudio":
            # torchaudio compares major.minor and refuses any difference
            sev, detail = ERROR, ("import fails with 'Detected that PyTorch and TorchAudio were compiled with "
                                  f"different CUDA versions. PyTorch has CUDA version {tb.cuda} whereas TorchAudio "
                                  f"has CUDA version {other}.'")
        elif major(other) != major(tb.cuda):
            sev, detail = ERROR, ("import fails with 'Detected that PyTorch and torchvision were compiled with "
                                  f"different CUDA major versions. PyTorch has CUDA Version={tb.cuda} and "
                                  f"torchvision has CUDA Version={other}.'")
        else:
            # newer torchvision compares majors only; older releases refused any difference
            sev, detail = WARNING, ("older torchvision releases refuse this with 'Detected that PyTorch and "
                                    "torchvision were compiled with different CUDA versions'; newer ones compare "
                                    "majors only, and the custom ops still link another CUDA runtime")
        why = f"torch {tb.label()} needs {name} built for CUDA {tb.cuda}"
        if name == "torchvision":  # torch's install command brings the paired torchvision
            fix = torch_install_cmd(m, tb.version, tb.tag or "cpu", tb.version)
            again = (remedy.wheel(m, tb.version, tb.tag, why, fix),) if tb.tag else ()
        else:
            fix = _rebuild_cmd(tb, name, paired[-1]) if tb.tag and paired else fix
            again = (remedy.package(name, f"{paired[-1]}+{tb.tag}", fix, why),) if tb.tag and paired else ()
        return [Finding(sev, f"{name}-cuda-mismatch", name,
                        f"{name} {text} is built for CUDA {other} but torch {tb.label()}{tb.pypi_note()} for CUDA "
                        f"{tb.cuda}: {detail}", fix, src(m, table), remedies=again)]
    return []


def _rebuild_cmd(tb, name: str, version: str) -> str:
    """pip command that swaps the installed build of `name` for torch's CUDA variant of the same
    release: a pin without a +tag is 'already satisfied' by the installed build, so it forces."""
    tag = tb.tag
    if vkey(tb.version) < (1, 11):
        return f"pip install {name}=={version}+{tag} -f https://download.pytorch.org/whl/torch_stable.html"
    if vkey(tb.version) < (2,):
        return f"pip install {name}=={version}+{tag} --extra-index-url https://download.pytorch.org/whl/{tag}"
    index = "" if tag == tb.record["pypi"] else f" --index-url https://download.pytorch.org/whl/{tag}"
    return f"pip install --force-reinstall --no-deps {name}=={version}{index}"


def torchvision_pairing(f: F.Facts, m: Matrix) -> List[Finding]:
    return _companion(f, m, "torchvision")


def torchaudio_pairing(f: F.Facts, m: Matrix) -> List[Finding]:
    return _companion(f, m, "torchaudio")


def _older(version: str, first: str) -> bool:
    try:
        return compare(parse_torch(version)[0], first) < 0
    except VersionError:
        return False  # the *-unknown rules say the version cannot be read


def _python_before(version: Optional[str], first: str) -> bool:
    try:
        return bool(version) and compare(version, first) < 0  # type: ignore[arg-type]
    except VersionError:
        return False


def numpy_vs_torch(f: F.Facts, m: Matrix) -> list:
    """torch < numpy2.torch (and torchvision < numpy2.torchvision) wheels were compiled against
    numpy 1.x; under numpy 2.x importing them warns and every numpy bridge fails."""
    first, tb = m.numpy2(), torch_build(f, m)
    if not first or not tb:
        return []
    tv = F.package_version(f, "torchvision")
    old_torch = _older(tb.version, first["torch"])
    old_tv = bool(tv) and _older(tv, first["torchvision"])  # type: ignore[arg-type]
    if not old_torch and not old_tv:
        return []
    py, pythons = F.python_version(f), (tb.record or {}).get("python") or []
    if _python_before(py, first["python"]) or (pythons and all(_python_before(p, first["python"]) for p in pythons)):
        return []  # numpy 2 needs a newer Python than this one (or than any this torch has wheels for)
    np = F.numpy_version(f)
    if not np:
        if F.has(f, "numpy") and F.origin(f) != "flags":
            return []  # the probe looked: no numpy, and torch runs without one
        older = f"torch {tb.version}" if old_torch else f"torchvision {tv}"
        return [Skipped("numpy_vs_torch", "torch", f"numpy version unknown ({older} fails under numpy 2.x)",
                        "pass --numpy V, or audit the host")]
    try:
        if vkey(np)[0] < 2:
            return []
    except VersionError:
        return [Skipped("numpy_vs_torch", "torch", f"numpy version {np!r} cannot be read", "check `pip show numpy`")]
    pin = 'pip install "numpy<2"'
    if old_torch:
        return [Finding(
            ERROR, "torch-numpy2", "torch",
            f"torch {tb.label()} was compiled against numpy 1.x but numpy {np} is installed: import torch prints "
            f"'A module that was compiled using NumPy 1.x cannot be run in NumPy {np} as it may crash' and "
            f"'Failed to initialize NumPy: _ARRAY_API not found', and tensor.numpy(), torch.from_numpy() and "
            f"DataLoader workers fail with 'RuntimeError: Numpy is not available'.",
            f"{pin} (or upgrade to torch >= {first['torch']}, the first release built for numpy 2)",
            first["source"])]
    return [Finding(
        WARNING, "torchvision-numpy2", "torchvision",
        f"torchvision {tv} predates numpy 2 support (from {first['torchvision']}) and numpy {np} is installed: "
        f"parts of torchvision that use numpy fail under numpy 2.x.",
        f"{pin} (or upgrade to torchvision >= {first['torchvision']} with its paired torch)",
        first["torchvision_source"])]


def numpy_older_than_build(f: F.Facts, m: Matrix) -> list:
    """numpy the other way: older than the C API the torch wheel was compiled against (the matrix's
    torch.numpy_api.builds, per release and Python; an entry without a Python holds for all of
    them). A source, nightly or vendor build was compiled against whatever numpy its build
    environment had: that is unknown, and said so."""
    rec, tb, np = m.data["torch"].get("numpy_api"), torch_build(f, m), F.numpy_version(f)
    if not rec or not tb or not np:
        return []
    full = F.package_version(f, "torch") or F.torch_version(f) or ""
    if is_prerelease(full.partition("+")[0]) or full.partition("+")[2].lower().startswith("git"):
        return [Skipped("numpy_older_than_build", "torch", f"torch {full} is a source, nightly or vendor build: the "
                        "numpy C API it was compiled against is that of its build environment, unknown here",
                        "if import torch warns 'module compiled against API version 0xN but this version of numpy "
                        "is 0xM', install the numpy release that introduced API 0xN (`envcheck matrix show`)")]
    builds = [b for b in rec["builds"] if b["torch"] == tb.version]
    if not builds:
        return []
    py = F.python_version(f)
    try:
        build = next((b for b in builds if "python" not in b or (py and major_minor(py) == b["python"])), None)
        have = vkey(np)
    except VersionError:
        return []
    if build is None:
        return [] if py else [Skipped("numpy_older_than_build", "torch", f"which Python's torch {tb.version} wheel "
                                      "this is, is unknown (the numpy C API it needs depends on it)", "pass --python X.Y")]
    need = rec["api"][build["api"]]
    if have >= vkey(need):
        return []
    mine = [k for k, first in rec["api"].items() if vkey(first) <= have][-1:] or ["older"]
    pin = f'"numpy>={need},<2"' if vkey(tb.version) < vkey((m.numpy2() or {}).get("torch", "0")) else f'"numpy>={need}"'
    which = f"wheels for Python {build['python']}" if "python" in build else "builds"
    return [Finding(
        ERROR, "torch-numpy-too-old", "torch",
        f"torch {tb.version}'s {which} were compiled against numpy's C API {build['api']} "
        f"(numpy >= {need}) but numpy {np} is installed: import torch warns 'Failed to initialize NumPy: module "
        f"compiled against API version {build['api']} but this version of numpy is {mine[0]}', and torch.from_numpy(), "
        f"tensor.numpy() and DataLoader workers fail.", f"pip install {pin}", build["source"])]


RULES = [torch_unknown, torch_cpu_with_gpus, torchvision_pairing, torchaudio_pairing, numpy_vs_torch,
         numpy_older_than_build]
