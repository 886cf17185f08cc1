"""Facts documents that do not come from a probe: built from `envcheck check` flags, or read from
a saved file (a facts document, or an `envcheck audit --json` output with one host).

Every version is parsed here, so a typo is a UsageError naming the flag (exit 2), never a
finding and never a traceback.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any, Dict, Optional

from envcheck import inputs
from envcheck.errors import UsageError, VersionError
from envcheck.facts.load import validate
from envcheck.facts.schema import SCHEMA, Facts
from envcheck.facts.validate import validate_facts
from envcheck.matrix.load import Matrix
from envcheck.versions import (cc_str, cu_tag_to_version, cuda_release, parse_compute_capability, parse_torch, pep440,
                               strict_version)


def _v(text: str, flag: str) -> str:
    return strict_version(text, flag)


def stack_facts(base: Optional[Facts] = None, *, driver: Optional[str] = None, cuda: Optional[str] = None,
                cudnn: Optional[str] = None, torch: Optional[str] = None, torchvision: Optional[str] = None,
                torchaudio: Optional[str] = None, gpu: Optional[str] = None, python: Optional[str] = None,
                gcc: Optional[str] = None, numpy: Optional[str] = None, cuda_compat: Optional[str] = None,
                matrix: Optional[Matrix] = None) -> Facts:
    """A facts document (origin "flags") from the given versions, laid over `base` if given.

    gpu is a model name ("A100"), "sm_86" or "8.6"; a name is resolved through the matrix when
    one is given (an unknown name stays a name: the gpu rule then says the matrix lacks it).
    """
    f: Facts = copy.deepcopy(base) if base else {"schema": SCHEMA, "origin": "flags"}
    if driver:
        f["driver"] = {"version": _v(driver, "--driver"), "source": "flag"}
    if cuda:
        # nvcc's build number (12.2.140, as collect_env prints it) names the 12.2 toolkit
        release = cuda_release(cuda, "--cuda")
        f.setdefault("cuda", {})["version"] = release
        if release != cuda.strip():
            f["cuda"]["nvcc"] = {"version": release, "printed": cuda.strip()}
    if cudnn:
        f.setdefault("cudnn", {})["version"] = _v(cudnn, "--cudnn")
    if torch:
        try:
            public, local = parse_torch(torch)
        except VersionError as e:
            raise VersionError(f"--torch: {e.message}", "give --torch as X.Y.Z or X.Y.Z+cuXYZ, e.g. 1.1.0+cu100")
        cuda_tag = cu_tag_to_version(local) if local else None
        if local and local.startswith("cu") and not cuda_tag:  # +cu10x, +cuda: a typo, not a build
            raise VersionError(f"--torch: unknown variant {local!r} in {torch!r}",
                               "use +cuXYZ (e.g. +cu100, +cu121) or +cpu")
        f.setdefault("packages", {})["torch"] = {"version": torch.strip()}
        # a label other than +cuXYZ / +cpu (a source or vendor build: 2.1.0a0+git32f93b1) says
        # nothing about its CUDA: the torch rules say so, and skip what needs it
        f["torch"] = {"version": public, "local": local if (cuda_tag or local == "cpu") else None,
                      "cuda": cuda_tag, "cuda_source": "flag" if cuda_tag else None}
    for name, val in (("torchvision", torchvision), ("torchaudio", torchaudio)):
        if val:
            try:
                parse_torch(val)
            except VersionError:
                raise VersionError(f"--{name}: cannot parse version {val!r}", f"give --{name} as X.Y.Z")
            f.setdefault("packages", {})[name] = {"version": val.strip()}
    if gpu:
        f["gpus"] = [_gpu(gpu, matrix)]
    if python:
        # a bare "3" would be read as 3.0 and judged (falsely) as a Python with no torch wheels
        if len(pep440(python, "--python", "3.7").release) not in (2, 3):
            raise VersionError(f"--python: cannot parse version {python!r}", "give --python as X.Y, e.g. 3.7")
        f["python"] = {"version": python.strip()}
    if gcc:
        f["gcc"] = {"version": _v(gcc, "--gcc")}
    if numpy:
        f["numpy"] = {"version": _v(numpy, "--numpy")}
    if cuda_compat:
        f["cuda_compat"] = compat_facts(cuda_compat)
    return f


def compat_facts(text: str) -> Dict[str, Any]:
    """`--cuda-compat none` (no compat library is loaded), `X.Y` (the cuda-compat-X-Y package is
    loaded) or a driver version (its libcuda.so.550.54.15 is) as cuda_compat facts."""
    t = text.strip().lower()
    if t in ("none", "no", "absent"):
        return {"version": None, "path": None, "via": None, "installed": []}
    fix = "give --cuda-compat none, X.Y (the cuda-compat-X-Y package) or its libcuda's driver version"
    try:
        key = pep440(t, "--cuda-compat").release
    except VersionError:
        raise VersionError(f"--cuda-compat: cannot read {text!r}", fix)
    if len(key) in (2, 3) and key[0] < 100:
        return {"version": None, "cuda": f"{key[0]}.{key[1]}", "path": None, "via": "flag", "installed": []}
    if len(key) in (2, 3) and key[0] >= 100:
        return {"version": t, "path": None, "via": "flag", "installed": []}
    raise VersionError(f"--cuda-compat: {text!r} is neither a CUDA release X.Y nor a driver version", fix)


def _gpu(text: str, matrix: Optional[Matrix]) -> Dict[str, Any]:
    try:
        cc = parse_compute_capability(text)
        return {"index": 0, "name": text.strip(), "compute_capability": cc_str(cc)}
    except VersionError:
        # sm_xx / compute_1000 is a typo, not a GPU model the matrix has yet to learn
        if re.match(r"(sm|compute)_", text.strip().lower()):
            raise VersionError(f"--gpu: cannot parse compute capability {text!r}",
                               "give --gpu as a model name (A100), sm_XY or X.Y")
    cc2 = matrix.gpu_cc(text) if matrix else None
    return {"index": 0, "name": text.strip(), "compute_capability": cc_str(cc2) if cc2 else None}


def load_facts_file(path: Path) -> Facts:
    """A saved facts document, or an audit --json document with exactly one host."""
    fix = "give a file written by `envcheck audit --json` or the probe"
    doc = inputs.parse_json(inputs.read_text(str(path), "facts file", fix), str(path), fix)
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: not a facts document (a JSON object expected)", "give a saved facts file")
    hosts = doc.get("hosts")
    if isinstance(hosts, dict):
        hosts = [dict(v, host=k) if isinstance(v, dict) else v for k, v in hosts.items()]
    if isinstance(hosts, list):
        with_facts = [h for h in hosts if isinstance(h, dict) and isinstance(h.get("facts"), dict)]
        if len(with_facts) != 1:
            raise UsageError(f"{path}: holds {len(with_facts)} hosts with facts; check judges one",
                             "save one host's facts (envcheck audit HOST --json) or use `envcheck audit`")
        doc = with_facts[0]["facts"]
    elif isinstance(doc.get("facts"), dict):
        doc = doc["facts"]
    if not any(k in doc for k in ("driver", "cuda", "torch", "packages", "gpus", "pci_gpus", "python", "cudnn", "gcc")):
        raise UsageError(f"{path}: no facts in it (none of driver, cuda, torch, packages, gpus …)",
                         "give a file written by `envcheck audit --json` or the probe")
    facts = validate(doc, str(path))
    validate_facts(facts, str(path))   # nested values too: `gpus: [5, null]` is no GPU list
    return facts
