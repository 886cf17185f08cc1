"""The one place versions are parsed and compared.

Driver and toolkit versions compare numerically field by field: as strings "535.104.05" sorts
below "535.86.10", which is wrong. Missing trailing fields count as 0 ("12.4" == "12.4.0").
"""
from __future__ import annotations

import functools
import re
from typing import Optional, Tuple

from envcheck.errors import VersionError

Key = Tuple[int, ...]

# ASCII digits only: \d would take full-width and other Unicode digits, which int() accepts
_NUMERIC = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)")
# what a user may type as a version: digits and single dots, nothing before or after
_STRICT = re.compile(r"[0-9]{1,9}(?:\.[0-9]{1,9}){0,5}")
_MAX_FIELD_DIGITS = 18    # int() refuses > 4300 digits with a ValueError; no version needs 19


def vkey(text: str, what: str = "version") -> Key:
    """'535.104.05' -> (535, 104, 5), reading the leading numeric part (facts from nodes carry
    suffixes: '7.5.0-3ubuntu1'). Raises VersionError naming `what` on garbage."""
    if text is None:
        raise VersionError(f"{what}: no version given", f"give {what} as digits and dots, e.g. 12.4")
    key = _parsed(str(text))
    if key is None:
        raise VersionError(f"{what}: cannot parse version {str(text)[:40]!r}", f"give {what} as digits and dots, e.g. 12.4")
    return key


@functools.lru_cache(maxsize=8192)
def _parsed(text: str) -> Optional[Key]:
    """vkey's answer for a text, once: the rules ask for the same few hundred versions over and
    over (`plan` judges ~140 stacks: 450,000 calls, ~60% of its CPU before this cache)."""
    m = _NUMERIC.match(text)
    if not m or any(len(p) > _MAX_FIELD_DIGITS for p in m.group(1).split(".")):
        return None
    return tuple(int(p) for p in m.group(1).split("."))


def strict_version(text: Optional[str], what: str = "version") -> str:
    """A version the user typed: ASCII digits and single dots only ('12.4', '535.104.05'), no
    prefix match ('10..0', '1e9', '10.0; x', a newline or full-width digits are refused)."""
    s = "" if text is None else str(text)
    if not _STRICT.fullmatch(s.strip()) or "\n" in s:
        raise VersionError(f"{what}: cannot parse version {s[:40]!r}",
                           f"give {what} as digits and single dots, e.g. 12.4")
    return s.strip()


def _pad(a: Key, b: Key) -> Tuple[Key, Key]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


@functools.lru_cache(maxsize=16384)   # plan's ~140 judged stacks compare the same pairs ~30,000 times
def compare(a: str, b: str) -> int:
    """-1, 0 or 1, numerically field by field; '12.4' == '12.4.0'."""
    ka, kb = _pad(vkey(a), vkey(b))
    return (ka > kb) - (ka < kb)


def at_least(a: str, b: str) -> bool:
    return compare(a, b) >= 0


def major(text: str) -> int:
    return vkey(text)[0]


def major_minor(text: str) -> str:
    k = vkey(text) + (0,)
    return f"{k[0]}.{k[1]}"


def same_prefix(a: str, b: str, fields: int) -> bool:
    """Whether a and b agree in their first `fields` numeric fields (missing fields are 0)."""
    ka, kb = _pad(vkey(a), vkey(b))
    return ka[:fields] == kb[:fields]


def cu_tag_to_version(tag: str) -> Optional[str]:
    """'cu100' -> '10.0', 'cu92' -> '9.2', 'cu121' -> '12.1', 'cu130' -> '13.0'; 'cpu' -> None."""
    m = re.fullmatch(r"cu(\d+)", tag.strip().lower())
    if not m:
        return None
    digits = m.group(1)
    if len(digits) < 2:
        return None
    return f"{int(digits[:-1])}.{digits[-1]}"


def version_to_cu_tag(cuda: str) -> str:
    """'10.0' -> 'cu100', '9.0' -> 'cu90', '12.1' -> 'cu121'."""
    k = vkey(cuda, "CUDA version") + (0,)
    return f"cu{k[0]}{k[1]}"


@functools.lru_cache(maxsize=4096)    # and parse the same torch versions ~12,000 times
def parse_torch(text: str) -> Tuple[str, Optional[str]]:
    """'1.1.0+cu100' -> ('1.1.0', 'cu100'); '2.3.1' -> ('2.3.1', None); '2.1.0+cpu' -> ('2.1.0', 'cpu').

    The local tag is returned as written (lower case); callers map it with cu_tag_to_version().
    """
    if text is None or not str(text).strip():
        raise VersionError("torch: no version given", "give torch as X.Y.Z or X.Y.Z+cuXYZ, e.g. 1.1.0+cu100")
    s = str(text).strip()
    public, _, local = s.partition("+")
    # X.Y.Z, optionally a pre-release or dev part as PEP 440 writes them (2.1.0a0, 2.5.0.dev20240901)
    if not re.fullmatch(r"[0-9]{1,9}(?:\.[0-9]{1,9}){0,3}(?:(?:a|b|rc)[0-9]{1,9})?(?:\.dev[0-9]{1,12})?", public) \
            or "\n" in s:
        raise VersionError(f"torch: cannot parse version {s[:40]!r}",
                           "give torch as X.Y.Z or X.Y.Z+cuXYZ, e.g. 1.1.0+cu100")
    if local and not re.fullmatch(r"[A-Za-z0-9.]+", local):
        raise VersionError(f"torch: cannot parse local version tag {local!r} in {s!r}",
                           "give torch as X.Y.Z or X.Y.Z+cuXYZ, e.g. 1.1.0+cu100")
    # nightlies and release candidates: keep the X.Y.Z part only
    m = re.match(r"^(\d+(?:\.\d+)*)", public)
    return (m.group(1) if m else public), (local.lower() or None)


def parse_compute_capability(text: str) -> Tuple[int, int]:
    """'sm_86' | '8.6' | '86' | 'compute_90' | 'sm_90a' -> (8, 6) / (9, 0)."""
    s = str(text).strip().lower()
    m = re.fullmatch(r"(?:sm_|compute_)?(\d+)\.(\d+)", s)
    if m:
        return int(m.group(1)), int(m.group(2))
    m = re.fullmatch(r"(?:sm_|compute_)?(\d{2,3})[a-z]?", s)
    if m:
        d = m.group(1)
        return int(d[:-1]), int(d[-1])
    raise VersionError(f"GPU: cannot parse compute capability {text!r}",
                       "give --gpu as a model name (A100), sm_XY or X.Y")


def cc_str(cc: Tuple[int, int]) -> str:
    return f"{cc[0]}.{cc[1]}"
