"""Facts for fix texts, only when they are right: a PyTorch wheel index URL is offered only for a
CUDA variant the matrix lists as published; for an unpublished one, the nearest published
variant a driver that runs the asked-for CUDA also runs (same major, minor not above)."""
from __future__ import annotations

from functools import lru_cache
from typing import FrozenSet, Optional, Tuple

from envcheck.versions import version_to_cu_tag

INDEX = "https://download.pytorch.org/whl/"


def tag_of(version: Optional[str]) -> Optional[str]:
    try:
        return version_to_cu_tag(version) if version else None
    except Exception:  # noqa: BLE001 - a template value, never fatal
        return None


def _mm(tag: str) -> Tuple[int, int]:
    digits = tag[2:]
    return int(digits[:-1]), int(digits[-1])


@lru_cache(maxsize=1)
def published_tags() -> FrozenSet[str]:
    """Every CUDA variant (cu118, cu121 ...) of every torch release in the packaged matrix."""
    # lazy: the matrix module costs `explain` ~5 ms CPU at start-up (issue 26); only a fix text
    # that names a pip index reads it
    from envcheck.matrix.load import load_matrix
    m = load_matrix()
    return frozenset(t for r in m.data["torch"]["releases"] for t in (r.get("variants") or {})
                     if t.startswith("cu") and t[2:].isdigit())


def nearest_published(cuda: str, published: FrozenSet[str]) -> Optional[str]:
    """The published tag for CUDA `cuda`, else the newest of the same major with a lower minor
    (a driver that runs X.Y runs X.Z for Z <= Y); None when there is none."""
    want = tag_of(cuda)
    if want is None:
        return None
    if want in published:
        return want
    major, minor = _mm(want)
    same = [t for t in published if _mm(t)[0] == major and _mm(t)[1] <= minor]
    return max(same, key=_mm) if same else None


def index_hint(cuda: Optional[str], published: Optional[FrozenSet[str]] = None) -> str:
    """' (pip index URL)' for the torch built for `cuda`, or for the nearest published one."""
    if not cuda:
        return ""
    pub = published_tags() if published is None else published
    want, got = tag_of(cuda), nearest_published(cuda, pub)
    if got is None:
        return f" (PyTorch published no build for CUDA {cuda} or an older {cuda.split('.')[0]}.x; `envcheck plan` lists what exists)"
    if got == want:
        return f" (pip index {INDEX}{got})"
    return f" (PyTorch published no {want}; the nearest it runs is {got}: pip index {INDEX}{got})"


def driver_cuda(found: Optional[str]) -> Optional[str]:
    """torch's 'found version 11040' (cudaDriverGetVersion: 1000*major + 10*minor) -> '11.4'."""
    if not found or not found.isdigit() or int(found) < 1000:
        return None
    n = int(found)
    return f"{n // 1000}.{(n % 1000) // 10}"
