"""What install-cuda needs to know about one toolkit release: toolkit_spec(matrix, version).

The matrix (compat_matrix.yaml, envcheck.matrix) is the source. Until its toolkit records are
present, a small built-in catalogue carries the same facts for the common releases
(/work/shared/compat-facts/cuda-driver-facts.md §1–§4, gcc-limits.md §2–§3), so this module's
callers never change: they ask toolkit_spec() and resolve_version().
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from envcheck.errors import UsageError
from envcheck.versions import compare, major_minor, vkey

GB = 1000 ** 3


@dataclass
class ToolkitSpec:
    version: str                    # full X.Y.Z
    runfile: str                    # file name
    url: Optional[str]
    sha256: Optional[str]
    md5: Optional[str]
    generation: str                 # "perl" (<= 10.0) or "new" (>= 10.1)
    max_gcc: Optional[int]          # newest gcc major nvcc accepts
    need_target_bytes: int          # free space in the install prefix
    need_tmp_bytes: int             # free space in --tmpdir (extraction)
    sm: List[int] = field(default_factory=list)   # architectures this toolkit can build for

    @property
    def short(self) -> str:
        return major_minor(self.version)

    @property
    def version_file(self) -> str:
        return "version.txt" if compare(self.version, "11.1") < 0 else "version.json"

    def installer_flags(self, toolkitpath: str, tmpdir: str, override: bool = False) -> List[str]:
        """The generation's non-interactive flags. Never --driver; never --verbose (the new
        installer rejects it); --defaultroot keeps the new installer's libraries inside the prefix."""
        flags = ["--silent", "--toolkit", f"--toolkitpath={toolkitpath}"]
        if self.generation == "new":
            flags += [f"--defaultroot={toolkitpath}", "--no-drm", "--no-man-page"]
        flags.append(f"--tmpdir={tmpdir}")
        if override:
            flags.append("--override")
        return flags


# version, runfile, sha256 (None: not published/known), url prefix
_NV = "https://developer.download.nvidia.com/compute/cuda/"
_OLD = "https://developer.nvidia.com/compute/cuda/"
_CATALOGUE: List[Tuple[str, str, Optional[str], str]] = [
    ("9.0.176", "cuda_9.0.176_384.81_linux-run", "96863423feaa50b5c1c5e1b9ec537ef7ba77576a3986652351ae43e66bcd080c", _OLD + "9.0/Prod/local_installers/"),
    ("9.2.148", "cuda_9.2.148_396.37_linux", "f5454ec2cfdf6e02979ed2b1ebc18480d5dded2ef2279e9ce68a505056da8611", _OLD + "9.2/Prod2/local_installers/"),
    ("10.0.130", "cuda_10.0.130_410.48_linux", "92351f0e4346694d0fcb4ea1539856c9eb82060c25654463bfd8574ec35ee39a", _OLD + "10.0/Prod/local_installers/"),
    ("10.1.243", "cuda_10.1.243_418.87.00_linux.run", "e7c22dc21278eb1b82f34a60ad7640b41ad3943d929bebda3008b72536855d31", _NV + "10.1/Prod/local_installers/"),
    ("10.2.89", "cuda_10.2.89_440.33.01_linux.run", "560d07fdcf4a46717f2242948cd4f92c5f9b6fc7eae10dd996614da913d5ca11", _NV + "10.2/Prod/local_installers/"),
    ("11.0.3", "cuda_11.0.3_450.51.06_linux.run", "b079c4e408adf88c3f1ffb8418a97dc4227c37935676b4bf4ca0beec6c328cc0", _NV + "11.0.3/local_installers/"),
    ("11.1.1", "cuda_11.1.1_455.32.00_linux.run", "3eae6727086024925ebbcef3e9a45ad379d8490768fd00f9c2d8b6fd9cd8dd8f", _NV + "11.1.1/local_installers/"),
    ("11.3.1", "cuda_11.3.1_465.19.01_linux.run", "ad93ea98efced35855c58d3a0fc326377c60917cb3e8c017d3e6d88819bf2934", _NV + "11.3.1/local_installers/"),
    ("11.6.2", "cuda_11.6.2_510.47.03_linux.run", "99b7a73dcc52a52cef4c1fceb4a60c3015ac9b6404082c1677d9efdaba1d4593", _NV + "11.6.2/local_installers/"),
    ("11.7.1", "cuda_11.7.1_515.65.01_linux.run", "52286a29706549b7d0feeb0e7e3eca1b15287c436a69fa880ad385b1be3e04db", _NV + "11.7.1/local_installers/"),
    ("11.8.0", "cuda_11.8.0_520.61.05_linux.run", "9223c4af3aebe4a7bbed9abd9b163b03a1b34b855fbc2b4a0d1b706ac09a5a16", _NV + "11.8.0/local_installers/"),
    ("12.1.1", "cuda_12.1.1_530.30.02_linux.run", "d74022d41d80105319dfa21beea39b77a5b9919539c0487a05caaf2446d6a70e", _NV + "12.1.1/local_installers/"),
    ("12.2.2", "cuda_12.2.2_535.104.05_linux.run", "2b39aae3e7618d9f59a3c8fa1f1bc61f29c0b0e0df75fb05076badb352952ef2", _NV + "12.2.2/local_installers/"),
    ("12.4.0", "cuda_12.4.0_550.54.14_linux.run", "e6a842f4eca9490575cdb68b6b1bb78d47b95a897de48dee292c431892e57d17", _NV + "12.4.0/local_installers/"),
    ("12.4.1", "cuda_12.4.1_550.54.15_linux.run", "367d2299b3a4588ab487a6d27276ca5d9ead6e394904f18bccb9e12433b9c4fb", _NV + "12.4.1/local_installers/"),
    ("12.6.3", "cuda_12.6.3_560.35.05_linux.run", "81d60e48044796d7883aa8a049afe6501b843f2c45639b3703b2378de30d55d3", _NV + "12.6.3/local_installers/"),
    ("12.8.1", "cuda_12.8.1_570.124.06_linux.run", "228f6bcaf5b7618d032939f431914fc92d0e5ed39ebe37098a24502f26a19797", _NV + "12.8.1/local_installers/"),
    ("12.9.1", "cuda_12.9.1_575.57.08_linux.run", "0f6d806ddd87230d2adbe8a6006a9d20144fdbda9de2d6acc677daa5d036417a", _NV + "12.9.1/local_installers/"),
    ("13.0.2", "cuda_13.0.2_580.95.05_linux.run", "81a5d0d0870ba2022efb0a531dcc60adbdc2bbff7b3ef19d6fd6d8105406c775", _NV + "13.0.2/local_installers/"),
]

# gcc-limits.md §2: (first toolkit with this limit, max gcc major)
_GCC = [("9.0", 6), ("9.2", 7), ("10.1", 8), ("11.0", 9), ("11.1", 10), ("11.4.1", 11), ("12.0", 12),
        ("12.4", 13), ("12.8", 14), ("13.0", 15), ("13.4", 16)]
# gcc-limits.md §3 preflight thresholds per major: (prefix GB, tmpdir GB)
_DISK = {9: (4, 4), 10: (5, 5), 11: (7, 7), 12: (10, 10), 13: (8, 8)}
# cuda-driver-facts.md §4.1: sm -> (first CUDA, first CUDA without it or None)
_SM = {30: ("6.0", "11.0"), 32: ("6.0", "11.0"), 35: ("6.0", "12.0"), 37: ("6.0", "12.0"),
       50: ("6.5", "13.0"), 52: ("6.5", "13.0"), 53: ("6.5", "13.0"), 60: ("8.0", "13.0"),
       61: ("8.0", "13.0"), 62: ("8.0", "13.0"), 70: ("9.0", "13.0"), 72: ("9.0", "13.0"),
       75: ("10.0", None), 80: ("11.0", None), 86: ("11.1", None), 87: ("11.4", None),
       89: ("11.8", None), 90: ("11.8", None), 100: ("12.8", None), 103: ("12.9", None),
       110: ("13.0", None), 120: ("12.8", None), 121: ("12.9", None)}


def _max_gcc(version: str) -> Optional[int]:
    best = None
    for first, gcc in _GCC:
        if compare(version, first) >= 0:
            best = gcc
    return best


def _sm_list(version: str) -> List[int]:
    return sorted(sm for sm, (first, gone) in _SM.items()
                  if compare(version, first) >= 0 and (gone is None or compare(version, gone) < 0))


def _builtin_records() -> List[Dict[str, Any]]:
    return [{"version": v, "runfile": f, "sha256": s, "url": u + f} for v, f, s, u in _CATALOGUE]


def _matrix_records(matrix: Any) -> List[Dict[str, Any]]:
    """Toolkit records from the matrix when it has them (schema of the `matrix` helper)."""
    data = getattr(matrix, "data", None) or {}
    out = []
    for t in data.get("toolkits") or []:
        if not isinstance(t, dict) or "version" not in t:
            continue
        rf = t.get("runfile") or {}
        rf = rf.get("x86_64", rf) if isinstance(rf, dict) else {}
        out.append({"version": str(t["version"]), "runfile": rf.get("file"), "url": rf.get("url"),
                    "sha256": rf.get("sha256"), "md5": rf.get("md5"), "max_gcc": t.get("max_gcc"),
                    "generation": t.get("installer"), "sm": t.get("sm")})
    return out


def known_versions(matrix: Any = None) -> List[str]:
    recs = _matrix_records(matrix) or _builtin_records()
    return sorted({r["version"] for r in recs}, key=vkey)


def resolve_version(matrix: Any, version: str) -> str:
    """'10.0' -> '10.0.130' (the newest update of that minor); '12.4.1' -> itself when known.
    Unknown: a one-line UsageError naming the nearest known versions."""
    k = vkey(version, "CUDA version")
    known = known_versions(matrix)
    if len(k) <= 2:
        mm = f"{k[0]}.{k[1] if len(k) > 1 else 0}"
        same = [v for v in known if major_minor(v) == mm]
        if same:
            return same[-1]
    elif any(compare(v, version) == 0 for v in known):
        return next(v for v in known if compare(v, version) == 0)
    near = sorted(known, key=lambda v: _distance(vkey(v), k))[:3]
    raise UsageError(f"CUDA {version} is not in the compat matrix (nearest known: {', '.join(sorted(near, key=vkey))})",
                     "pick one of those, or add the release to compat_matrix.yaml")


def _distance(a: Tuple[int, ...], b: Tuple[int, ...]) -> Tuple[int, ...]:
    a, b = a + (0, 0, 0), b + (0, 0, 0)
    return tuple(abs(x - y) for x, y in zip(a[:3], b[:3]))


def toolkit_spec(matrix: Any, version: str) -> ToolkitSpec:
    full = resolve_version(matrix, version)
    recs = _matrix_records(matrix) or _builtin_records()
    rec = next(r for r in recs if compare(r["version"], full) == 0)
    sha = rec.get("sha256")
    if sha and len(sha) != 64:  # copied checksums have been seen with a stray character
        sha = None
    maj = vkey(full)[0]
    tgt, tmp = _DISK.get(maj, (10, 10))
    gen = rec.get("generation") or ("perl" if compare(full, "10.1") < 0 else "new")
    gen = "perl" if gen in ("perl", "old") else "new"
    return ToolkitSpec(
        version=full, runfile=rec.get("runfile") or f"cuda_{full}_linux.run", url=rec.get("url"),
        sha256=sha, md5=rec.get("md5"), generation=gen,
        max_gcc=rec.get("max_gcc") if rec.get("max_gcc") is not None else _max_gcc(full),
        need_target_bytes=tgt * GB, need_tmp_bytes=tmp * GB,
        sm=[int(s) for s in rec.get("sm") or _sm_list(full)])
