"""Validation of compat_matrix.yaml: every problem becomes one MatrixError naming the key path
(`cuda.releases[12].min_driver`) and the reason, never a traceback. Called by load_matrix().

What is checked: the shape of every section (required keys, no unknown keys, types); versions are
quoted strings of digits and dots (YAML reads an unquoted 10.10 as the float 10.1); every entry
has a source URL; checksums have the right length; no duplicate versions; releases ascend; and
the cross-references hold: a CUDA release names a known installer generation whose version range
contains it and a known family, a cuDNN build names a CUDA the matrix knows, a torch variant
names a CUDA minor the matrix knows, an arch set that exists, and torchvision/torchaudio versions
listed in their tables, a GPU's compute capability is in `archs`.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set

from envcheck.errors import MatrixError
from envcheck.matrix.schema_cuda import check_cuda
from envcheck.matrix.schema_hw import check_chips, check_gpus
from envcheck.matrix import schema_torch
from envcheck.versions import vkey
from envcheck.params.text import excerpt

SCHEMA_VERSION = 1

_VERSION = re.compile(r"^\d+(\.\d+)*$")
_URL = re.compile(r"^https?://[^\s]+$")
_HEX = re.compile(r"^[0-9a-f]+$")
_CU_TAG = re.compile(r"^cu(\d+)(\d)$")
_ARCH = re.compile(r"^(sm|compute)_(\d+)[a-z]?$")
_CC = re.compile(r"^\d+\.\d+$")


class _Checker:
    def __init__(self, file: Optional[str]):
        self.file = file

    def fail(self, path: str, reason: str) -> None:
        raise MatrixError(path, reason, self.file)

    def mapping(self, obj: Any, path: str, required: Iterable[str], optional: Iterable[str] = ()) -> Dict[str, Any]:
        if not isinstance(obj, dict):
            self.fail(path, f"must be a mapping, not {_kind(obj)}")
        req, opt = list(required), set(optional)
        for key in obj:
            if key not in req and key not in opt:
                allowed = ", ".join(sorted(set(req) | opt))
                self.fail(f"{path}.{key}" if path else str(key), f"unknown key (allowed: {allowed})")
        for key in req:
            if key not in obj:
                self.fail(f"{path}.{key}" if path else key, "missing")
        return obj

    def seq(self, obj: Any, path: str, nonempty: bool = False) -> List[Any]:
        if not isinstance(obj, list):
            self.fail(path, f"must be a list, not {_kind(obj)}")
        if nonempty and not obj:
            self.fail(path, "must not be empty")
        return obj

    def string(self, obj: Any, path: str) -> str:
        if not isinstance(obj, str) or not obj.strip():
            self.fail(path, f"must be a non-empty string, not {_kind(obj)}")
        return obj

    def integer(self, obj: Any, path: str, nullable: bool = False) -> Optional[int]:
        if obj is None and nullable:
            return None
        if isinstance(obj, bool) or not isinstance(obj, int) or obj < 0:
            self.fail(path, f"must be a non-negative integer, not {_kind(obj)}")
        return obj

    def boolean(self, obj: Any, path: str) -> bool:
        if not isinstance(obj, bool):
            self.fail(path, f"must be true or false, not {_kind(obj)}")
        return obj

    def version(self, obj: Any, path: str, fields: Optional[Sequence[int]] = None, nullable: bool = False) -> Optional[str]:
        if obj is None and nullable:
            return None
        if isinstance(obj, (int, float)) and not isinstance(obj, bool):
            self.fail(path, f"version {excerpt(obj)} must be a quoted string (YAML reads unquoted 10.10 as 10.1)")
        if not isinstance(obj, str) or not _VERSION.match(obj):
            self.fail(path, f"bad version string {excerpt(obj)}: digits and dots expected, e.g. \"12.4\"")
        n = len(obj.split("."))
        if fields and n not in fields:
            want = " or ".join(str(f) for f in fields)
            self.fail(path, f"version {excerpt(obj)} has {n} fields, expected {want}")
        return obj

    def url(self, obj: Any, path: str) -> str:
        if not isinstance(obj, str) or not _URL.match(obj):
            self.fail(path, f"must be an http(s) URL, not {excerpt(obj)}")
        return obj

    def checksum(self, obj: Any, path: str, length: int, algo: str) -> str:
        if not isinstance(obj, str) or not _HEX.match(obj) or len(obj) != length:
            got = len(obj) if isinstance(obj, str) else _kind(obj)
            self.fail(path, f"{algo} must be {length} lower-case hex digits (got {got})")
        return obj

    def strings(self, obj: Any, path: str, nonempty: bool = False) -> List[str]:
        items = self.seq(obj, path, nonempty)
        for i, s in enumerate(items):
            self.string(s, f"{path}[{i}]")
        return items

    def unique(self, values: List[Any], path: str, what: str) -> None:
        seen: Set[Any] = set()
        for i, v in enumerate(values):
            if v in seen:
                self.fail(f"{path}[{i}]", f"duplicate {what} {excerpt(v)}")
            seen.add(v)

    def ascending(self, versions: List[str], path: str) -> None:
        for i in range(1, len(versions)):
            if vkey(versions[i]) <= vkey(versions[i - 1]):
                self.fail(f"{path}[{i}].version", f"{versions[i]} must come after {versions[i - 1]} (ascending, no duplicates)")

    def unconfirmed(self, entry: Dict[str, Any], path: str, allowed: Iterable[str]) -> None:
        if "unconfirmed" not in entry:
            return
        names = set(allowed)
        for i, f in enumerate(self.strings(entry["unconfirmed"], f"{path}.unconfirmed")):
            if f not in names:
                self.fail(f"{path}.unconfirmed[{i}]", f"{excerpt(f)} is not a field of this entry")


def _kind(obj: Any) -> str:
    if obj is None:
        return "null"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(obj), type(obj).__name__)


def validate(data: Any, file: Optional[str] = None) -> None:
    """Raise MatrixError for the first problem found in a loaded matrix document."""
    c = _Checker(file)
    c.mapping(data, "", ["schema", "cuda", "cudnn", "torch", "torchvision", "torchaudio", "gpus", "archs"],
              ["sources", "chips", "forward_compat"])
    if data["schema"] != SCHEMA_VERSION:
        c.fail("schema", f"unsupported schema {excerpt(data['schema'])}; this envcheck reads schema {SCHEMA_VERSION}")
    if "sources" in data:
        for name, u in c.mapping(data["sources"], "sources", [], list(data["sources"] or {})).items():
            c.url(u, f"sources.{name}")
    minors, majors = check_cuda(c, data["cuda"])
    archs = _archs(c, data["archs"])
    check_gpus(c, data["gpus"], archs)
    if "chips" in data:
        check_chips(c, data["chips"], archs)
    cudnn_builds = _cudnn(c, data["cudnn"], minors, majors)
    tv = _companion(c, data["torchvision"], "torchvision")
    ta = _companion(c, data["torchaudio"], "torchaudio")
    _torch(c, data["torch"], minors, tv, ta, cudnn_builds)
    if "forward_compat" in data:
        schema_torch.check_forward_compat(c, data["forward_compat"])


def _archs(c: _Checker, archs: Any) -> Set[str]:
    keys = ["cc", "name", "first_cuda", "last_cuda", "last_driver_branch", "source"]
    seen: Set[str] = set()
    for i, a in enumerate(c.seq(archs, "archs", True)):
        p = f"archs[{i}]"
        c.mapping(a, p, keys, ["unconfirmed", "note", "runtime_min_cuda", "runtime_source"])
        cc = a["cc"]
        if not isinstance(cc, str) or not _CC.match(cc):
            c.fail(f"{p}.cc", f"compute capability {excerpt(cc)} must be a quoted \"X.Y\"")
        if cc in seen:
            c.fail(f"{p}.cc", f"duplicate compute capability {cc}")
        seen.add(cc)
        c.string(a["name"], f"{p}.name")
        first = c.version(a["first_cuda"], f"{p}.first_cuda", fields=(2,))
        last = c.version(a["last_cuda"], f"{p}.last_cuda", fields=(2,), nullable=True)
        if last is not None and vkey(last) < vkey(first):  # type: ignore[arg-type]
            c.fail(f"{p}.last_cuda", f"{last} is before first_cuda {first}")
        c.integer(a["last_driver_branch"], f"{p}.last_driver_branch", nullable=True)
        c.url(a["source"], f"{p}.source")
        if "runtime_min_cuda" in a:
            c.version(a["runtime_min_cuda"], f"{p}.runtime_min_cuda", fields=(2,))
            c.url(a.get("runtime_source"), f"{p}.runtime_source")
        c.unconfirmed(a, p, keys)
    return seen


def _cudnn(c: _Checker, cudnn: Any, minors: Set[str], majors: Set[int]) -> Dict[str, List[str]]:
    c.mapping(cudnn, "cudnn", ["headers", "layouts", "releases"])
    header_majors: Set[int] = set()
    for i, h in enumerate(c.seq(cudnn["headers"], "cudnn.headers", True)):
        p = f"cudnn.headers[{i}]"
        c.mapping(h, p, ["major", "header", "version_formula", "libs", "source"], ["note"])
        m = c.integer(h["major"], f"{p}.major")
        if m in header_majors:
            c.fail(f"{p}.major", f"duplicate cuDNN major {m}")
        header_majors.add(m)  # type: ignore[arg-type]
        c.string(h["header"], f"{p}.header")
        c.strings(h["libs"], f"{p}.libs", True)
        c.url(h["source"], f"{p}.source")
    layouts = c.mapping(cudnn["layouts"], "cudnn.layouts", [], list(cudnn["layouts"] or {}))
    for name, lay in layouts.items():
        p = f"cudnn.layouts.{name}"
        c.mapping(lay, p, ["name", "url", "root", "include", "lib", "source"], ["tag"])
        for key in ("name", "root", "include", "lib", "url"):
            c.string(lay[key], f"{p}.{key}")
        if "{name}" not in lay["url"]:
            c.fail(f"{p}.url", "must contain {name}")
        if lay.get("tag", "major") != "major":
            c.fail(f"{p}.tag", "only `major` is supported")
        c.url(lay["source"], f"{p}.source")
    versions: List[str] = []
    keys = ["version", "cuda", "layout", "source"]
    opt = ["sha256", "sha256_source", "unconfirmed", "note"]
    for i, rel in enumerate(c.seq(cudnn["releases"], "cudnn.releases", True)):
        p = f"cudnn.releases[{i}]"
        c.mapping(rel, p, keys, opt)
        v = c.version(rel["version"], f"{p}.version", fields=(4,))
        if v in versions:
            c.fail(f"{p}.version", f"duplicate release {v}")
        versions.append(v)  # type: ignore[arg-type]
        if int(v.split(".")[0]) not in header_majors:  # type: ignore[union-attr]
            c.fail(f"{p}.version", f"cuDNN major {v.split('.')[0]} has no entry in cudnn.headers")  # type: ignore[union-attr]
        builds = c.seq(rel["cuda"], f"{p}.cuda", True)
        for j, b in enumerate(builds):
            c.version(b, f"{p}.cuda[{j}]", fields=(1, 2))
            if "." in b and b not in minors:
                c.fail(f"{p}.cuda[{j}]", f"CUDA {b} is not in cuda.releases")
            if "." not in b and int(b) not in majors:
                c.fail(f"{p}.cuda[{j}]", f"CUDA family {b} is not in cuda.families")
        c.unique(builds, f"{p}.cuda", "CUDA build")
        if rel["layout"] not in layouts:
            c.fail(f"{p}.layout", f"unknown layout {excerpt(rel['layout'])} (known: {', '.join(layouts)})")
        c.url(rel["source"], f"{p}.source")
        if "sha256" in rel:
            sums = c.mapping(rel["sha256"], f"{p}.sha256", [], [str(b) for b in builds])
            for b, h in sums.items():
                c.checksum(h, f"{p}.sha256.{b}", 64, "sha256")
            c.url(rel.get("sha256_source"), f"{p}.sha256_source")
        c.unconfirmed(rel, p, keys + opt + ["url"])
    c.ascending(versions, "cudnn.releases")
    return {rel["version"]: list(rel["cuda"]) for rel in cudnn["releases"]}


def _companion(c: _Checker, table: Any, name: str) -> Set[str]:
    c.mapping(table, name, ["versions", "source"])
    vs = c.seq(table["versions"], f"{name}.versions", True)
    for i, v in enumerate(vs):
        c.version(v, f"{name}.versions[{i}]", fields=(2, 3))
    c.unique(vs, f"{name}.versions", "version")
    c.url(table["source"], f"{name}.source")
    return set(vs)


def _builds_for(builds: List[str], cuda: str) -> bool:
    """A cuDNN build serves its own minor before CUDA 11 and the whole major from 11 on."""
    k = vkey(cuda)
    return any(vkey(b)[0] == k[0] and (k[0] >= 11 or vkey(b)[1:2] == k[1:2]) for b in builds)


def _torch(c: _Checker, torch: Any, minors: Set[str], tv: Set[str], ta: Set[str],
           cudnn_builds: Dict[str, List[str]]) -> None:
    c.mapping(torch, "torch", ["arch_sets", "releases"], ["numpy2", "cudnn_check", "numpy_api"])
    # parsed once: each release's variants look their cuDNN up among all builds (was ~40% of
    # a matrix load when every lookup re-parsed every build's version)
    cudnn_keys = [(v, vkey(v)) for v in cudnn_builds]
    sets = c.mapping(torch["arch_sets"], "torch.arch_sets", [], list(torch["arch_sets"] or {}))
    for name, s in sets.items():
        p = f"torch.arch_sets.{name}"
        c.mapping(s, p, ["arch", "source"], ["unconfirmed", "note"])
        for j, a in enumerate(c.strings(s["arch"], f"{p}.arch", True)):
            if not _ARCH.match(a):
                c.fail(f"{p}.arch[{j}]", f"{excerpt(a)} is not sm_XY or compute_XY")
        c.url(s["source"], f"{p}.source")
        c.unconfirmed(s, p, ["arch"])
    keys = ["version", "pypi", "variants", "torchvision", "torchaudio", "python", "source"]
    versions: List[str] = []
    for i, rel in enumerate(c.seq(torch["releases"], "torch.releases", True)):
        p = f"torch.releases[{i}]"
        c.mapping(rel, p, keys, ["unconfirmed", "note", "index"])
        v = c.version(rel["version"], f"{p}.version", fields=(3,))
        if "index" in rel:  # a release served by its own index (1.8.2 LTS), per variant tag
            if "{tag}" not in str(rel["index"]):
                c.fail(f"{p}.index", f"{excerpt(rel['index'])} must hold {{tag}} (the variant, e.g. cu111)")
            c.url(str(rel["index"]).replace("{tag}", "cu111"), f"{p}.index")
        if v in versions:
            c.fail(f"{p}.version", f"duplicate release {v}")
        versions.append(v)  # type: ignore[arg-type]
        variants = c.mapping(rel["variants"], f"{p}.variants", [], list(rel["variants"] or {}))
        if not variants:
            c.fail(f"{p}.variants", "must name at least one CUDA variant")
        for tag, var in variants.items():
            vp = f"{p}.variants.{tag}"
            m = _CU_TAG.match(str(tag))
            if not m:
                c.fail(vp, f"variant {excerpt(tag)} is not a cuXY tag")
            cuda = f"{int(m.group(1))}.{m.group(2)}"  # type: ignore[union-attr]
            if cuda not in minors:
                c.fail(vp, f"names CUDA {cuda}, which is not in cuda.releases")
            c.mapping(var or {}, vp, [], ["arch", "cudnn", "nccl", "python", "python_source"])
            if var and "python" in var:
                schema_torch.check_variant_python(c, var["python"], f"{vp}.python")
                c.url(var.get("python_source"), f"{vp}.python_source")
            if var and "arch" in var and var["arch"] not in sets:
                c.fail(f"{vp}.arch", f"unknown arch set {excerpt(var['arch'])} (see torch.arch_sets)")
            for key in ("cudnn", "nccl"):
                if var and key in var:
                    c.version(var[key], f"{vp}.{key}", fields=(3, 4))
            if var and "cudnn" in var:
                k = vkey(var["cudnn"])
                found = [v for v, vk in cudnn_keys if vk[:len(k)] == k]
                if not found:
                    c.fail(f"{vp}.cudnn", f"cuDNN {var['cudnn']} is not in cudnn.releases")
                if not _builds_for(cudnn_builds[found[-1]], cuda):
                    c.fail(f"{vp}.cudnn", f"cuDNN {found[-1]} has no build for CUDA {cuda} in cudnn.releases")
        if rel["pypi"] is not None and rel["pypi"] not in variants:
            c.fail(f"{p}.pypi", f"{excerpt(rel['pypi'])} is not one of this release's variants")
        for key, known in (("torchvision", tv), ("torchaudio", ta)):
            for j, v in enumerate(c.seq(rel[key], f"{p}.{key}")):
                if v not in known:
                    c.fail(f"{p}.{key}[{j}]", f"{key} {excerpt(v)} is not in {key}.versions")
        for j, py in enumerate(c.seq(rel["python"], f"{p}.python", True)):
            c.version(py, f"{p}.python[{j}]", fields=(2,))
        c.url(rel["source"], f"{p}.source")
        c.unconfirmed(rel, p, keys)
    c.ascending(versions, "torch.releases")
    if "numpy2" in torch:
        _numpy2(c, torch["numpy2"], versions, tv)
    if "cudnn_check" in torch:
        schema_torch.check_cudnn_check(c, torch["cudnn_check"], versions)
    if "numpy_api" in torch:
        schema_torch.check_numpy_api(c, torch["numpy_api"], versions)


def _numpy2(c: _Checker, rec: Any, releases: List[str], tv: Set[str]) -> None:
    """The first torch and torchvision releases whose wheels run under numpy 2.x."""
    c.mapping(rec, "torch.numpy2", ["torch", "torchvision", "source", "torchvision_source", "python",
                                    "python_source"], ["note"])
    c.version(rec["python"], "torch.numpy2.python", fields=(2,))
    c.url(rec["python_source"], "torch.numpy2.python_source")
    if c.version(rec["torch"], "torch.numpy2.torch", fields=(3,)) not in releases:
        c.fail("torch.numpy2.torch", f"torch {rec['torch']} is not in torch.releases")
    if rec["torchvision"] not in tv:
        c.fail("torch.numpy2.torchvision", f"torchvision {rec['torchvision']} is not in torchvision.versions")
    c.url(rec["source"], "torch.numpy2.source")
    c.url(rec["torchvision_source"], "torch.numpy2.torchvision_source")
