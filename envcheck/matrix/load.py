"""Load and validate compat_matrix.yaml; queries on it.

load_matrix(path=None) is the ONE way the matrix is read: the packaged copy
(envcheck/data/compat_matrix.yaml inside the wheel) or, in a checkout, the top-level file.
Loading validates (envcheck/matrix/schema.py): a bad file raises MatrixError with the key path.
The wheel's packaged copy was validated when the wheel was built, and is read from the JSON the
build compiled it to (hatch_build.py; issue 26: ~1 ms instead of ~50 ms per command).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple, Union


from envcheck import inputs
from envcheck.errors import MatrixError, UsageError, VersionError
from envcheck.matrix.gpus import GpuIndex
from envcheck.versions import compare, cu_tag_to_version, major_minor, parse_torch, vkey

Record = Dict[str, Any]
CC = Tuple[int, int]

def default_matrix_path() -> Path:
    packaged = Path(__file__).resolve().parent.parent / "data" / "compat_matrix.yaml"
    if packaged.exists():
        return packaged
    return Path(__file__).resolve().parents[2] / "compat_matrix.yaml"


def _release_floor(rec: Record) -> str:
    """The least driver a release runs on: Table 3's minimum, or the driver its own runfile
    bundles when that is older (NVIDIA ships it to run that toolkit, so it is supported)."""
    bundled = rec.get("bundled_driver")
    if bundled and vkey(bundled) < vkey(rec["min_driver"]):
        return bundled
    return rec["min_driver"]


def query_error(path: str, reason: str, fix: str) -> MatrixError:
    """A question the matrix cannot answer: the file is fine, the asked-for version is not in it."""
    e = MatrixError(path, reason)
    e.fix = fix
    return e


@dataclass(frozen=True)
class DriverNeed:
    """What a CUDA version asks of the driver.

    release_min: Table 3 value (full feature set); None when the matrix has no such release.
    family_min: the minor-version-compatibility floor of the major (None before CUDA 11, where
    release_min is strict). cuda: the release(s) the answer is for, e.g. "12.4.1" or "12.4.x".
    """

    cuda: str
    release_min: Optional[str]
    family_min: Optional[str]
    minor_version_compat: bool
    source: str
    family_source: str
    unconfirmed: bool = False  # the matrix marks release_min unconfirmed


class Matrix:
    """The validated compatibility matrix. `data` is the YAML document; use the queries.

    CUDA toolkits
      releases()                       every CUDA release record, ascending
      resolve_cuda(v) -> record        "10.0" -> newest 10.0.x, "10.0.130" exact; unknown ->
                                       MatrixError naming the nearest known releases
      find_cuda(v) -> record|None      the same, None instead of raising (rules use this)
      family(major) -> record|None     the family entry (min_driver, minor_version_compat, disk_gb)
      installer(name) -> record        the perl / new installer generation (flags, log …)
      toolkit(v) -> record             resolve_cuda plus `family`, `installer` and `disk_gb` merged in
                                       (what provisioning needs: runfile, url, sha256, md5, flags …)
      driver_need(v) -> DriverNeed|None  per-release minimum and family minimum; for an "X.Y"
                                       the lowest minimum of the X.Y.x releases (lenient)
      gcc_max(v) -> int|None           newest gcc major nvcc accepts; for "X.Y" the newest X.Y.x's
    cuDNN
      cudnn(v) -> record|None          "7.6.5" or "7.6.5.32"
      cudnn_has_build(record, cuda)    whether a build exists for that CUDA (same minor before
                                       CUDA 11, same major from 11 on)
      cudnn_for_cuda(cuda) -> [record] releases with such a build
      cudnn_header(major) -> record    header holding the version macros, version formula, libs
      cudnn_archive(v, cuda) -> dict   archive name, url, root/include/lib paths, sha256|None
    PyTorch
      torch(v) -> record|None          by X.Y.Z ("1.1.0+cu100" works too)
      pypi_variant(v) -> str|None      the variant plain `pip install torch==X` served (cu90 …)
      torch_variant(v, tag) -> record|None  {"arch": [...]|None, "cudnn", "nccl", "cuda": "10.0"}
      torchvision_known(v) / torchaudio_known(v)
      numpy2() -> record|None          first torch / torchvision whose wheels run under numpy 2.x
    GPUs
      gpu(name) -> record|None         tolerant name match ("NVIDIA A100-SXM4-80GB", "A100")
      gpu_cc(name) -> (X, Y)|None
      chip(code) / chip_cc(code)       a GPU chip as pci.ids spells it ("GK210GL") -> chips: entry / cc
      arch(cc) -> record|None          first_cuda / last_cuda / last_driver_branch for (X, Y)
    """

    def __init__(self, data: Dict[str, Any], path: str):
        self.data = data
        self.path = path
        self._cuda: List[Record] = list(data["cuda"]["releases"])
        self._cuda_by_v = {r["version"]: r for r in self._cuda}
        self._families = {f["major"]: f for f in data["cuda"]["families"]}
        self._cudnn: List[Record] = list(data["cudnn"]["releases"])
        self._torch = {r["version"]: r for r in data["torch"]["releases"]}
        self._archs = {tuple(int(x) for x in a["cc"].split(".")): a for a in data["archs"]}
        self._gpu_index = GpuIndex(data["gpus"], data.get("chips") or [], data["archs"])
        self._cuda_keys = [(vkey(r["version"]), r) for r in self._cuda]
        self._need_cache: Dict[str, Optional[DriverNeed]] = {}  # rules ask per release, per host
        # a fleet audit asks the same few questions once per host, and plan's ~140 judged stacks
        # ask ~13,000 (issue 26): each is answered once (memo)
        self._memo: Dict[Tuple[str, Any], Any] = {}

    def memo(self, kind: str, key: Any, compute: Callable[[], Any]) -> Any:
        """compute() the first time (kind, key) is asked, the stored answer after. Bounded: keys
        come from untrusted facts. Callers copy what they hand out, so no caller sees another's edits."""
        k = (kind, key)
        if k not in self._memo:
            if len(self._memo) > 8192:
                self._memo.clear()
            self._memo[k] = compute()
        return self._memo[k]

    # ------------------------------------------------------------------ CUDA
    def releases(self) -> List[Record]:
        return list(self._cuda)

    def _matching(self, version: str) -> List[Record]:
        k = vkey(version, "CUDA version")
        return [r for rk, r in self._cuda_keys if rk[:len(k)] == k]

    def find_cuda(self, version: Optional[str]) -> Optional[Record]:
        if not version:
            return None
        try:
            found = self._matching(version)
        except VersionError:
            return None
        return found[-1] if found else None

    def resolve_cuda(self, version: str) -> Record:
        found = self._matching(version)
        if found:
            return found[-1]
        k = vkey(version, "CUDA version")
        below = [r["version"] for r in self._cuda if vkey(r["version"]) < k]
        above = [r["version"] for r in self._cuda if vkey(r["version"]) > k]
        near = ([below[-1]] if below else []) + ([above[0]] if above else [])
        raise query_error("cuda.releases", f"no CUDA {version} in the matrix; nearest known: {', '.join(near)}",
                           "pick one of those, or add the release to compat_matrix.yaml")

    def family(self, major: int) -> Optional[Record]:
        return self._families.get(int(major))

    def installer(self, name: str) -> Record:
        return self.data["cuda"]["installers"][name]

    def toolkit(self, version: str) -> Record:
        rec = dict(self.resolve_cuda(version))
        fam = self.family(vkey(rec["version"])[0]) or {}
        rec["family"] = fam
        rec["disk_gb"] = fam.get("disk_gb")
        rec["installer_info"] = self.installer(rec["installer"])
        return rec

    def driver_need(self, version: Optional[str]) -> Optional[DriverNeed]:
        if not version:
            return None
        key = str(version)
        if key not in self._need_cache:
            if len(self._need_cache) > 4096:  # bounded: versions come from untrusted facts
                self._need_cache.clear()
            self._need_cache[key] = self._driver_need(key)
        return self._need_cache[key]

    def _driver_need(self, version: str) -> Optional[DriverNeed]:
        try:
            k = vkey(version, "CUDA version")
        except VersionError:
            return None
        fam = self.family(k[0])
        if fam is None:
            return None
        found = self._matching(version)
        if len(k) >= 3 and not found:
            # an exact release the matrix lacks: judge by its minor's releases, if any
            found = self._matching(major_minor(version))
        release_min = None
        label = version
        source = fam["source"]
        unconfirmed = False
        if found:
            lowest = min(found, key=lambda r: vkey(_release_floor(r)))
            release_min, source = _release_floor(lowest), lowest["source"]
            unconfirmed = "min_driver" in (lowest.get("unconfirmed") or [])
            label = found[0]["version"] if len(found) == 1 else f"{major_minor(found[0]['version'])}.x"
        return DriverNeed(label, release_min, fam["min_driver"], bool(fam["minor_version_compat"]),
                          source, fam["source"], unconfirmed)

    def gcc_max(self, version: Optional[str]) -> Optional[int]:
        rec = self.find_cuda(version)
        return rec["gcc_max"] if rec else None

    # ------------------------------------------------------------------ cuDNN
    def cudnn(self, version: Optional[str]) -> Optional[Record]:
        if not version or not isinstance(version, str):
            return self._cudnn_lookup(version)
        return self.memo("cudnn", version, lambda: self._cudnn_lookup(version))

    def _cudnn_lookup(self, version: Optional[str]) -> Optional[Record]:
        if not version:
            return None
        try:
            k = vkey(version, "cuDNN version")
        except VersionError:
            return None
        found = [r for r in self._cudnn if vkey(r["version"])[:len(k)] == k]
        return found[-1] if found else None

    @staticmethod
    def cudnn_has_build(rec: Record, cuda: str) -> bool:
        k = vkey(cuda, "CUDA version") + (0,)
        for b in rec["cuda"]:
            bk = vkey(b)
            if bk[0] != k[0]:
                continue
            # before CUDA 11 a build serves its own minor only; from 11 on, the whole major
            if k[0] >= 11 or (len(bk) > 1 and bk[1] == k[1]):
                return True
        return False

    def cudnn_for_cuda(self, cuda: str) -> List[Record]:
        if not isinstance(cuda, str):
            return [r for r in self._cudnn if self.cudnn_has_build(r, cuda)]
        return list(self.memo("cudnn_for_cuda", cuda,
                               lambda: [r for r in self._cudnn if self.cudnn_has_build(r, cuda)]))

    def cudnn_header(self, major: int) -> Optional[Record]:
        for h in self.data["cudnn"]["headers"]:
            if h["major"] == int(major):
                return h
        return None

    def cudnn_archive(self, version: str, cuda: str) -> Dict[str, Any]:
        rec = self.cudnn(version)
        if rec is None:
            raise query_error("cudnn.releases", f"no cuDNN {version} in the matrix",
                               "see `envcheck matrix show cudnn X.Y.Z` for known releases")
        build = next((b for b in rec["cuda"] if b == cuda), None)
        if build is None:
            build = next((b for b in rec["cuda"] if self.cudnn_has_build({"cuda": [b]}, cuda)), None)
        if build is None:
            raise query_error("cudnn.releases", f"cuDNN {rec['version']} has no build for CUDA {cuda} "
                               f"(builds: {', '.join(rec['cuda'])})", "pick a cuDNN release built for that CUDA")
        lay = self.data["cudnn"]["layouts"][rec["layout"]]
        tag = build.split(".")[0] if lay.get("tag") == "major" else build
        full = rec["version"]
        fields = {"version": full, "short": ".".join(full.split(".")[:3]), "cuda": build, "tag": tag}
        name = lay["name"].format(**fields)
        out = {k: lay[k].format(**fields) for k in ("root", "include", "lib")}
        out.update(name=name, url=lay["url"].format(name=name, **fields), layout=rec["layout"],
                   cuda=build, version=full, sha256=(rec.get("sha256") or {}).get(build),
                   header=(self.cudnn_header(int(full.split(".")[0])) or {}).get("header"))
        return out

    # ------------------------------------------------------------------ PyTorch
    def torch(self, version: Optional[str]) -> Optional[Record]:
        if not version or not isinstance(version, str):
            return self._torch_lookup(version)
        return self.memo("torch", version, lambda: self._torch_lookup(version))

    def _torch_lookup(self, version: Optional[str]) -> Optional[Record]:
        if not version:
            return None
        try:
            public, _ = parse_torch(version)
        except VersionError:
            return None
        k = vkey(public) + (0, 0)
        return self._torch.get(".".join(str(p) for p in k[:3]))

    def pypi_variant(self, version: Optional[str]) -> Optional[str]:
        rec = self.torch(version)
        return rec["pypi"] if rec else None

    def torch_variant(self, version: Optional[str], tag: Optional[str]) -> Optional[Record]:
        if not (isinstance(version, str) and isinstance(tag, str)):
            return self._torch_variant(version, tag)
        var = self.memo("torch_variant", (version, tag), lambda: self._torch_variant(version, tag))
        return dict(var, arch=list(var["arch"])) if var and var["arch"] is not None else (dict(var) if var else var)

    def _torch_variant(self, version: Optional[str], tag: Optional[str]) -> Optional[Record]:
        rec = self.torch(version)
        if not rec or not tag or tag not in rec["variants"]:
            return None
        var = dict(rec["variants"][tag] or {})
        set_name = var.get("arch")
        var["arch_set"] = set_name
        var["arch"] = list(self.data["torch"]["arch_sets"][set_name]["arch"]) if set_name else None
        var["arch_source"] = self.data["torch"]["arch_sets"][set_name]["source"] if set_name else None
        var["cuda"] = cu_tag_to_version(tag)
        var["tag"] = tag
        return var

    def _companion_known(self, table: str, version: Optional[str]) -> bool:
        if not version:
            return False
        try:
            k = vkey(version.partition("+")[0])
        except VersionError:
            return False
        return any(compare(v, ".".join(map(str, k))) == 0 for v in self.data[table]["versions"])

    def torchvision_known(self, version: Optional[str]) -> bool:
        return self._companion_known("torchvision", version)

    def torchaudio_known(self, version: Optional[str]) -> bool:
        return self._companion_known("torchaudio", version)

    def numpy2(self) -> Optional[Record]:
        return self.data["torch"].get("numpy2")

    # ------------------------------------------------------------------ GPUs
    def gpu(self, name: Optional[str]) -> Optional[Record]:
        if not name or not isinstance(name, str):
            return None
        return self.memo("gpu", name, lambda: self._gpu_lookup(name))

    def _gpu_lookup(self, name: str) -> Optional[Record]:
        return self._gpu_index.lookup(name)

    def gpu_cc(self, name: Optional[str]) -> Optional[CC]:
        rec = self.gpu(name)
        if not rec:
            return None
        major, minor = rec["cc"].split(".")
        return int(major), int(minor)

    def gpu_suggestions(self, name: str) -> List[Tuple[str, str]]:
        """(board name, "X.Y") a user may have meant by a GPU name the matrix does not know."""
        return self._gpu_index.suggest(name)

    def chip(self, chip: Optional[str]) -> Optional[Record]:
        return self._gpu_index.chip(chip) if chip else None

    def chip_cc(self, chip: Optional[str]) -> Optional[CC]:
        rec = self.chip(chip)
        if not rec:
            return None
        major, minor = rec["cc"].split(".")
        return int(major), int(minor)

    def arch(self, cc: CC) -> Optional[Record]:
        return self._archs.get((int(cc[0]), int(cc[1])))

    def summary(self) -> str:
        d = self.data
        return (f"schema {d['schema']}: {len(self._cuda)} CUDA releases "
                f"({self._cuda[0]['version']} - {self._cuda[-1]['version']}), {len(self._cudnn)} cuDNN releases, "
                f"{len(self._torch)} torch releases, {len(d['gpus'])} GPU entries, {len(d.get('chips') or [])} GPU chips, {len(self._archs)} archs")


def load_matrix(path: Optional[Union[str, Path]] = None) -> Matrix:
    p = Path(path) if path else default_matrix_path()
    # the packaged copy, validated when the wheel was built and compiled to JSON (inputs.compiled)
    packaged = None if path else inputs.compiled(p)
    if isinstance(packaged, dict):
        return Matrix(packaged, str(p))
    import yaml  # lazy: PyYAML costs ~17 ms CPU to load (-X importtime, issue 26); the packaged matrix is JSON
    try:
        # the C loader when PyYAML has it: 10x faster, and audit loads the matrix on every run
        text = inputs.read_text(str(p), "matrix", "")
        data = inputs.parse_yaml(text, "matrix", "") if path else \
            yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except UsageError as e:   # one family: the matrix's own error, with the file named once
        raise MatrixError("(file)", re.sub(r"^matrix[^:]*: ", "", e.message), str(p)) from e
    if not isinstance(data, dict):
        raise MatrixError("(top)", "must be a mapping", str(p))
    # lazy: the schema's four modules cost ~4 ms CPU at start-up (issue 26); the packaged matrix
    # was validated when the wheel was built
    from envcheck.matrix.schema import validate
    validate(data, str(p))
    return Matrix(data, str(p))
