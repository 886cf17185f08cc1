"""Fixes as data: what a rule's fix changes in the facts (a Remedy, envcheck/model.py), one
constructor per kind of change. envcheck/facts/edit.py's apply() makes those changes on a copy of
a facts document, so that envcheck/rules/fixcheck.py can run the rules again over the result
before the fix is offered.
"""
from __future__ import annotations

from envcheck.matrix.load import Matrix
from envcheck.model import Remedy
from envcheck.versions import vkey


# ---------------------------------------------------------------- remedies the rules offer
def driver(version: str, fix: str, why: str, label: str = "") -> Remedy:
    return Remedy(label or f"upgrade the NVIDIA driver to {version}", fix, (("driver", version),), why)


def toolkit(version: str, fix: str, why: str) -> Remedy:
    return Remedy(f"install CUDA {version}", fix, (("cuda", version),), why)


def compiler(gcc_major: int, fix: str, why: str) -> Remedy:
    return Remedy(f"install gcc-{gcc_major}", fix, (("host_compiler", str(gcc_major)),), why)


def cudnn(version: str, fix: str, why: str) -> Remedy:
    return Remedy(f"install cuDNN {version}", fix, (("cudnn", version),), why)


def loaded_cudnn(version: str, fix: str, why: str) -> Remedy:
    return Remedy(f"let torch load cuDNN {version}", fix, (("loaded_cudnn", version),), why)


def wheel(m: Matrix, version: str, tag: str, why: str, fix: str) -> Remedy:
    """torch==version+tag as torch_install_cmd installs it: with the paired torchvision. The fix
    must make pip really install it (torch_install_cmd's `installed`): the edit says it did."""
    rec = m.torch(version)
    edits = [("torch", f"{version}+{tag}")]
    if rec and rec["torchvision"]:  # as pip names it: PyPI's own build, and any before 1.2, carry no +tag
        tv = rec["torchvision"][-1]
        edits.append(("torchvision", tv if tag == rec["pypi"] or vkey(version) < (1, 2) else f"{tv}+{tag}"))
    return Remedy(f"install torch {version}+{tag}", fix, tuple(edits), why)


def package(name: str, version: str, fix: str, why: str) -> Remedy:
    return Remedy(f"install {name} {version}", fix, ((name, version),), why)


def python(version: str, fix: str, why: str) -> Remedy:
    return Remedy(f"use Python {version}", fix, (("python", version),), why)


def cuda_compat(cuda: str, fix: str, why: str) -> Remedy:
    return Remedy(f"load cuda-compat {cuda}", fix, (("cuda_compat", cuda),), why)


def env(name: str, value: str, fix: str, why: str) -> Remedy:
    return Remedy(f"set {name}" if value else f"unset {name}", fix, ((f"env:{name}", value),), why)
