"""What a fix changes in the facts: apply() makes a Remedy's edits (envcheck/model.py; the
remedies the rules offer: envcheck/rules/remedy.py) on a copy of a facts document, so that
envcheck/rules/fixcheck.py can run the rules again over the result before the fix is offered.

A change is modelled as the node would be after the user followed the fix to the letter and
nothing else: installing a toolkit adds it at /usr/local/cuda-X.Y and points nvcc, CUDA_HOME,
PATH, LD_LIBRARY_PATH and /usr/local/cuda at it (that is what `envcheck install-cuda` and `envcheck
env` do), but leaves the cuDNN and the compiler as they were; a torch wheel brings the cuDNN and
NCCL the matrix lists for that build and forgets what --deep read from the old one.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, Dict, List, Optional

from envcheck.facts import schema as F
from envcheck.facts.schema import Facts, _get
from envcheck.matrix.load import Matrix
from envcheck.model import Remedy
from envcheck.rules.common import CUDA_DIR, installed_toolkit, torch_build
from envcheck.versions import cu_tag_to_version, major, major_minor, parse_torch, vkey


def apply(f: Facts, r: Remedy, m: Matrix) -> Facts:
    """A copy of the facts as they would be after the fix; `f` itself is never changed. An edit
    that changes nothing (the wheel that is installed already) leaves the copy equal to `f`."""
    out = copy.deepcopy(f)
    for kind, value in r.edits:
        _EDITS[kind.partition(":")[0]](out, value, kind, m)
    return out


def _section(f: Facts, key: str) -> Dict[str, Any]:
    if not isinstance(f.get(key), dict):
        f[key] = {}
    return f[key]


def _driver(f: Facts, v: str, _k: str, _m: Matrix) -> None:
    d = _section(f, "driver")
    d.update(version=v, error=None)
    for key in ("kernel_module",):
        if key in d:
            d[key] = v
    if isinstance(d.get("userspace"), dict):
        d["userspace"] = dict(d["userspace"], version=v)
    if "state" in d:
        d["state"] = "working"
    for key in ("nvml_error", "smi_state"):
        d.pop(key, None)


def _cuda(f: Facts, v: str, _k: str, _m: Matrix) -> None:
    there = installed_toolkit(f, v)  # one installed already is used, not installed again
    root = F.text(there.get("path")) if there else f"/usr/local/cuda-{major_minor(v)}"
    c = _section(f, "cuda")
    c["version"] = F.text(there.get("version")) if there else v
    if "toolkits" not in c:
        return  # a stack given by flags: the version is all there is
    tks = [t for t in F.cuda_toolkits(f) if F.text(t.get("path")) != root]
    c["toolkits"] = tks + [there or {"path": root, "version": v, "source": "version.json"}]
    hc = F.host_compiler(f)
    # -ccbin / NVCC_CCBIN travel with the environment; a compiler nvcc.profile picked belonged to
    # the old nvcc: the new one runs the gcc its own profile picks (Debian's), else the one on PATH
    if not ("ccbin" in (hc.get("how") or "").lower()):
        own = (there or {}).get("host_compiler")
        hc = (dict(own) if isinstance(own, dict) and own.get("version") else
              {"path": F.text(_get(f, "gcc", "path")), "version": F.gcc_version(f), "how": "PATH"}
              if F.gcc_version(f) else {})
    v = c["version"]
    c["nvcc"] = {"path": f"{root}/bin/nvcc", "version": v, "release": major_minor(v), "build": v}
    if hc:
        c["nvcc"]["host_compiler"] = hc
    c["in_use"] = {"path": root, "via": "PATH"}
    _cudnn_left_behind(f, [F.text(t.get("path")) or "" for t in tks])
    link = F.cuda_symlink(f)
    if link.get("path") and link.get("target"):
        c["symlink"] = dict(link, target=root)
    e = f.get("env")
    if isinstance(e, dict):
        for var in ("CUDA_HOME", "CUDA_PATH"):
            if e.get(var):
                e[var] = root
        e["PATH"] = ":".join([f"{root}/bin"] + [p for p in (e.get("PATH") or "").split(":")
                                                if p and not CUDA_DIR.search(p)])
        ld = [p for p in (e.get("LD_LIBRARY_PATH") or "").split(":") if p]
        if any(CUDA_DIR.search(p) for p in ld):
            e["LD_LIBRARY_PATH"] = ":".join([f"{root}/lib64"] + [p for p in ld if not CUDA_DIR.search(p)])


def _cudnn_left_behind(f: Facts, old_roots: List[str]) -> None:
    """A cuDNN copied into the old toolkit stays there: the new toolkit in use has none (one
    installed system-wide, in /usr/include, is still found)."""
    heads = F.cudnn_headers(f)
    inside = [h for h in heads if any(r and (F.text(h.get("path")) or "").startswith(r.rstrip("/") + "/")
                                      for r in old_roots)]
    if heads and len(inside) == len(heads):
        f["cudnn"] = dict(f["cudnn"], version=None, headers=[])


def _compiler(f: Facts, n: str, _k: str, _m: Matrix) -> None:
    hc = {"path": f"/usr/bin/g++-{n}", "version": n, "how": f"-ccbin g++-{n}"}
    nv = _get(f, "cuda", "nvcc")
    if isinstance(nv, dict):
        nv["host_compiler"] = hc
    _section(f, "gcc").update(version=n, path=f"/usr/bin/gcc-{n}")


def _cudnn(f: Facts, v: str, _k: str, _m: Matrix) -> None:
    c = _section(f, "cudnn")
    c["version"] = v
    for item in F.cudnn_headers(f) + F.cudnn_libs(f):   # the dicts of f["cudnn"] (c) themselves
        path = F.text(item.get("path")) or ""
        if "site-packages" not in path and "dist-packages" not in path:
            item["version"] = v


def _cudnn_code(v: str) -> int:
    k = (vkey(v) + (0, 0))[:3]
    return k[0] * 10000 + k[1] * 100 + k[2] if k[0] >= 9 else k[0] * 1000 + k[1] * 100 + k[2]


def _loaded_cudnn(f: Facts, v: Optional[str], _k: str = "", _m: Optional[Matrix] = None) -> None:
    """deep.cudnn is what torch reported it loads; rules/cudnn.py:loaded_cudnn() reads it first."""
    if v:
        _section(f, "deep")["cudnn"] = _cudnn_code(v)
    elif isinstance(f.get("deep"), dict):
        f["deep"].pop("cudnn", None)


def _torch(f: Facts, value: str, _k: str, m: Matrix) -> None:
    public, tag = parse_torch(value)
    if _same_wheel(f, m, public, tag):
        return  # the wheel that is installed already: reinstalling it changes nothing
    pkgs = _section(f, "packages")
    pkgs["torch"] = dict(pkgs.get("torch") or {}, version=value)
    pkgs["torch"].pop("shadows", None)
    cuda = cu_tag_to_version(tag) if tag and tag != "cpu" else None
    f["torch"] = {"version": public, "local": tag, "cuda": cuda, "cuda_source": "local-tag"}
    var = m.torch_variant(public, tag) or {}
    deep = f.get("deep")
    if isinstance(deep, dict):  # what --deep read described the old build
        for key in ("torch", "torch_cuda", "arch_list", "ops", "nccl", "cuda_available", "device_count"):
            deep.pop(key, None)
    _loaded_cudnn(f, var.get("cudnn"))
    if var.get("cudnn") and cuda:  # the pip cuDNN it depends on, where the old one had one
        for name in [n for n in pkgs if n.startswith("nvidia-cudnn-cu")]:
            del pkgs[name]
            pkgs[f"nvidia-cudnn-cu{major(cuda)}"] = {"version": var["cudnn"]}
    if var.get("nccl") and isinstance(f.get("nccl"), dict):
        f["nccl"] = dict(f["nccl"], version=var["nccl"], source="torch")


def _same_wheel(f: Facts, m: Matrix, public: str, tag: Optional[str]) -> bool:
    tb = torch_build(f, m)
    if not tb or tb.version != public or tb.tag != tag:
        return False
    if tb.how != "deep":
        return True  # named by its +tag, or the build PyPI serves under the plain version
    # a version without a tag whose CUDA torch itself reported (conda, a source build): the same
    # as the wheel only where pip's wheel carries no tag either
    return tag == m.pypi_variant(public) or vkey(public) < (1, 2)


def _package(f: Facts, v: str, kind: str, _m: Matrix) -> None:
    pkgs = _section(f, "packages")
    pkgs[kind] = dict(pkgs.get(kind) or {}, version=v)


def _python(f: Facts, v: str, _k: str, _m: Matrix) -> None:
    _section(f, "python")["version"] = v


def _env(f: Facts, v: str, kind: str, _m: Matrix) -> None:
    name = kind.partition(":")[2]
    e = _section(f, "env")
    if v:
        e[name] = v
    else:
        e.pop(name, None)


def _cuda_compat(f: Facts, v: str, _k: str, _m: Matrix) -> None:
    """NVIDIA's cuda-compat-X-Y installed and first on LD_LIBRARY_PATH."""
    d = _section(f, "cuda_compat")
    d.update(version=None, cuda=v, path=f"/usr/local/cuda-{v}/compat", via="LD_LIBRARY_PATH")


_EDITS: Dict[str, Callable[[Facts, str, str, Matrix], None]] = {
    "driver": _driver, "cuda": _cuda, "host_compiler": _compiler, "cudnn": _cudnn,
    "loaded_cudnn": _loaded_cudnn, "torch": _torch, "torchvision": _package, "torchaudio": _package,
    "python": _python, "env": _env, "cuda_compat": _cuda_compat,
}
KINDS = tuple(_EDITS)

