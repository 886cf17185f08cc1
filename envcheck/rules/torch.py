"""torch, torchvision and torchaudio rules: known release and variant, a CUDA build where GPUs
are, companions paired with torch (same release line and same CUDA)."""
from __future__ import annotations

from typing import List

from envcheck.facts import schema as F
from envcheck.errors import VersionError
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, WARNING, Finding
from envcheck.rules import remedy
from envcheck.rules.common import gpu_ccs, major, src, torch_build, torch_install_cmd
from envcheck.versions import compare, cu_tag_to_version, parse_torch, vkey


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
        return [Finding(WARNING, "torch-variant-unknown", "torch",
                        f"torch {tb.version} is not on PyPI and carries no +cuXYZ tag, so which CUDA build it is "
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


def torch_cpu_with_gpus(f: F.Facts, m: Matrix) -> List[Finding]:
    tb = torch_build(f, m)
    if not tb or tb.tag != "cpu" or not gpu_ccs(f, m):
        return []
    fix = "install a CUDA build of torch"
    if tb.record and tb.record["pypi"]:
        fix = torch_install_cmd(m, tb.version, tb.record["pypi"], tb.version)
    return [Finding(WARNING, "torch-cpu-build", "torch",
                    f"torch {tb.label()} is a CPU-only build on a host with GPUs: torch.cuda.is_available() is False "
                    f"and .cuda() fails with 'Torch not compiled with CUDA enabled'.", fix,
                    tb.record["source"] if tb.record else src(m, "torch_previous"))]


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


RULES = [torch_unknown, torch_cpu_with_gpus, torchvision_pairing, torchaudio_pairing]
