"""What install-cuda needs to know about one toolkit release: toolkit_spec(matrix, version).

The matrix (compat_matrix.yaml through envcheck.matrix.load) is the only source: runfile name, URL,
sha256, installer generation, gcc limit, disk needed, and which architectures a release can
build for.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple

from envcheck.errors import MatrixError, UsageError
from envcheck.versions import compare, major_minor, vkey, strict_version

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
    # (X, Y) compute capability -> can this toolkit build for it (None: arch unknown to the matrix)
    supports: Callable[[Tuple[int, int]], Optional[bool]] = lambda cc: None
    gpu_cc: Callable[[str], Optional[Tuple[int, int]]] = lambda name: None  # GPU name -> cc

    @property
    def short(self) -> str:
        return major_minor(self.version)

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


def known_versions(matrix: Any) -> List[str]:
    return [r["version"] for r in matrix.releases()]


def resolve_version(matrix: Any, version: str) -> str:
    """'10.0' -> '10.0.130' (the newest update of that minor); '12.4.1' -> itself when known.
    Unknown: a one-line UsageError naming the nearest known versions."""
    version = strict_version(version, "CUDA version")
    k = vkey(version, "CUDA version")
    try:
        rec = matrix.resolve_cuda(version)
        if len(k) >= 3 and compare(rec["version"], version) != 0:
            raise MatrixError("cuda.releases", "not exact")
        return rec["version"]
    except MatrixError:
        known = sorted(known_versions(matrix), key=vkey)
        below = [v for v in known if compare(v, version) < 0]
        above = [v for v in known if compare(v, version) > 0]
        near = below[-2:] + above[:1]
        raise UsageError(f"CUDA {version} is not in the compat matrix (nearest known: {', '.join(sorted(near, key=vkey))})",
                         "pick one of those, or add the release to compat_matrix.yaml") from None


def toolkit_spec(matrix: Any, version: str) -> ToolkitSpec:
    """Everything install-cuda needs about one release, read from the matrix."""
    rec = matrix.toolkit(resolve_version(matrix, version))
    full = rec["version"]
    sha = rec.get("sha256")
    if sha and len(sha) != 64:  # copied checksums have been seen with a stray character
        sha = None
    disk = rec.get("disk_gb") or {}
    mm = major_minor(full)

    def supports(cc: Tuple[int, int]) -> Optional[bool]:
        arch = matrix.arch(cc)
        if not arch:
            return None
        first, last = arch.get("first_cuda"), arch.get("last_cuda")
        return compare(mm, first) >= 0 and (last is None or compare(mm, last) <= 0)

    return ToolkitSpec(
        version=full, runfile=rec.get("runfile") or f"cuda_{full}_linux.run", url=rec.get("url"),
        sha256=sha, md5=rec.get("md5"), generation="perl" if rec.get("installer") == "perl" else "new",
        max_gcc=rec.get("gcc_max"),
        need_target_bytes=int((disk.get("prefix") or 10) * GB), need_tmp_bytes=int((disk.get("tmpdir") or 10) * GB),
        supports=supports, gpu_cc=matrix.gpu_cc)
