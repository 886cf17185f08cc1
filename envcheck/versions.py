"""The one place versions are parsed and compared.

Every version is read as PEP 440 writes it, with `packaging` (the parser pip uses): pre-releases,
dev builds and local labels are versions users really have ("2.1.0rc1", "2.4.0.dev20240501+cu121",
"2.1.0a0+git32f93b1", numpy "2.1.0rc1"). Compatibility is a matter of the release they belong to:
a 2.4.0 nightly is judged as 2.4.0, numpy 2.1.0rc1 as a numpy 2. Text from nodes that PEP 440
refuses ("7.5.0-3ubuntu1", a driver's "535.104.05" is fine) is read by its leading numeric part.

Driver and toolkit versions compare numerically field by field: as strings "535.104.05" sorts
below "535.86.10", which is wrong. Missing trailing fields count as 0 ("12.4" == "12.4.0").
nvcc prints its own build number (release 12.2, V12.2.140, as collect_env shows it): from CUDA 11
that is not a toolkit release, and cuda_release() maps it (and the other printed forms) to 12.2.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Optional, Tuple

from packaging.version import InvalidVersion, Version

from envcheck.errors import VersionError

Key = Tuple[int, ...]

# ASCII digits only: \d would take full-width and other Unicode digits, which int() accepts
_NUMERIC = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)")
_MAX_FIELD_DIGITS = 18    # int() refuses > 4300 digits with a ValueError; no version needs 19
_MAX_LEN = 80             # the longest real one, a nightly with a git label, is ~40 characters


def _release_ok(v: Version) -> bool:
    return len(v.release) <= 6 and all(p < 10 ** _MAX_FIELD_DIGITS for p in v.release)


def pep440(text: Optional[str], what: str = "version", example: str = "12.4") -> Version:
    """A version a user or a tool wrote, parsed by PEP 440 ('2.1.0rc1', '2.4.0.dev20240501+cu121',
    'v12.4'). ASCII only, one line, bounded: full-width digits, '10..0', '1e9', '10.0; x' are refused."""
    s = "" if text is None else str(text)
    fix = f"give {what} as a version (PEP 440), e.g. {example}"
    if not s.strip():
        raise VersionError(f"{what}: no version given", fix)
    if len(s) > _MAX_LEN or "\n" in s or not s.isascii():
        raise VersionError(f"{what}: cannot parse version {s[:40]!r}", fix)
    try:
        v = Version(s.strip())
    except InvalidVersion:
        raise VersionError(f"{what}: cannot parse version {s[:40]!r}", fix) from None
    if not _release_ok(v) or v.epoch:
        raise VersionError(f"{what}: cannot parse version {s[:40]!r}", fix)
    return v


def vkey(text: str, what: str = "version") -> Key:
    """'535.104.05' -> (535, 104, 5); '2.1.0rc1' -> (2, 1, 0): the release a version belongs to.
    Text PEP 440 refuses is read by its leading numeric part (facts from nodes carry suffixes:
    '7.5.0-3ubuntu1'). Raises VersionError naming `what` on garbage."""
    if text is None:
        raise VersionError(f"{what}: no version given", f"give {what} as digits and dots, e.g. 12.4")
    key = _key(str(text))
    if key is None:
        raise VersionError(f"{what}: cannot parse version {str(text)[:40]!r}",
                           f"give {what} as digits and dots, e.g. 12.4")
    return key


@lru_cache(maxsize=4096)  # the rules ask about the same few hundred versions over and over
def _key(s: str) -> Optional[Key]:
    if len(s) <= _MAX_LEN and s.isascii():
        try:
            v = Version(s.strip())
            if _release_ok(v) and not v.epoch:
                return tuple(v.release)
        except InvalidVersion:
            pass
    m = _NUMERIC.match(s)
    if not m or any(len(p) > _MAX_FIELD_DIGITS for p in m.group(1).split(".")):
        return None
    return tuple(int(p) for p in m.group(1).split("."))


def strict_version(text: Optional[str], what: str = "version") -> str:
    """A version the user typed, checked as PEP 440 (pep440()) and returned as typed, stripped."""
    pep440(text, what)
    return str(text).strip()


# the forms nvcc and collect_env print: "V12.2.140", "release 12.2", "cuda_12.2.r12.2", "12.2.r12.2"
_PRINTED_CUDA = re.compile(r"^(?:cuda compilation tools,\s*)?(?:release\s+|cuda_|v)?"
                           r"([0-9]+\.[0-9]+(?:\.[0-9]+)*)(?:\.r[0-9]+\.[0-9]+)?(?:,\s*v[0-9.]+)?$", re.I)
NVCC_BUILD_MIN_PATCH = 10  # toolkit releases from 11.0 are X.Y.0 - X.Y.4; nvcc's own builds X.Y.20 and up


def cuda_release(text: Optional[str], what: str = "CUDA version") -> str:
    """The CUDA toolkit release a printed version names: '12.2.140' (nvcc's build, as collect_env
    prints it), 'V12.2.140', 'release 12.2', 'cuda_12.2.r12.2' -> '12.2'; '12.4.1', '10.0.130'
    (up to 10.2 nvcc's number is the release's) and '12.4' stay as they are."""
    raw = "" if text is None else str(text)
    if any(c < " " and c != "\t" for c in raw.strip(" ")):
        pep440(raw, what)  # a newline or control character inside what was typed: refused with pep440's message
    s = raw.strip()
    m = _PRINTED_CUDA.match(s) if len(s) <= _MAX_LEN and s.isascii() else None
    core = m.group(1) if m else s
    k = pep440(core, what).release
    if len(k) >= 3 and k[0] >= 11 and k[2] >= NVCC_BUILD_MIN_PATCH:
        return f"{k[0]}.{k[1]}"
    return core


def is_prerelease(text: str) -> bool:
    """'2.1.0rc1', '2.4.0.dev20240501' are pre-releases of their release; '2.4.0+cu121' is not."""
    try:
        return pep440(text).is_prerelease
    except VersionError:
        return False


def _pad(a: Key, b: Key) -> Tuple[Key, Key]:
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)), b + (0,) * (n - len(b))


@lru_cache(maxsize=16384)   # plan's ~140 judged stacks compare the same pairs ~30,000 times
def compare(a: str, b: str) -> int:
    """-1, 0 or 1, numerically field by field; '12.4' == '12.4.0'."""
    ka, kb = _pad(vkey(a), vkey(b))
    return (ka > kb) - (ka < kb)


def at_least(a: str, b: str) -> bool:
    return compare(a, b) >= 0


def major(text: str) -> int:
    return vkey(text)[0]


def major_minor(text: str) -> str:
    return _major_minor(text) if isinstance(text, str) else _mm(vkey(text))


@lru_cache(maxsize=4096)    # plan's judged stacks ask ~16,000 times (issue 26)
def _major_minor(text: str) -> str:
    return _mm(vkey(text))


def _mm(k: Key) -> str:
    k = k + (0,)
    return f"{k[0]}.{k[1]}"


def same_prefix(a: str, b: str, fields: int) -> bool:
    """Whether a and b agree in their first `fields` numeric fields (missing fields are 0)."""
    ka, kb = _pad(vkey(a), vkey(b))
    return ka[:fields] == kb[:fields]


def cu_tag_to_version(tag: str) -> Optional[str]:
    """'cu100' -> '10.0', 'cu92' -> '9.2', 'cu121' -> '12.1', 'cu130' -> '13.0'; 'cpu' -> None."""
    return _cu_tag(tag) if isinstance(tag, str) else _cu_tag.__wrapped__(tag)


@lru_cache(maxsize=1024)    # plan's judged stacks ask ~9,000 times (issue 26)
def _cu_tag(tag: str) -> Optional[str]:
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


@lru_cache(maxsize=4096)    # and parse the same torch versions ~12,000 times
def parse_torch(text: str) -> Tuple[str, Optional[str]]:
    """'1.1.0+cu100' -> ('1.1.0', 'cu100'); '2.3.1' -> ('2.3.1', None); '2.1.0+cpu' -> ('2.1.0', 'cpu');
    '2.4.0.dev20240501+cu121' -> ('2.4.0', 'cu121'); '2.1.0a0+git32f93b1' -> ('2.1.0', 'git32f93b1').

    PEP 440: the public part is the release it belongs to (a nightly or a release candidate is
    judged as that release; is_prerelease() tells them apart); the local label is returned as
    written, lower case, for the caller to classify (cu_tag_to_version(), 'cpu', or another build).
    """
    fix = "give torch as X.Y.Z or X.Y.Z+cuXYZ, e.g. 1.1.0+cu100"
    if text is None or not str(text).strip():
        raise VersionError("torch: no version given", fix)
    s = str(text).strip()
    try:
        v = pep440(s, "torch", "1.1.0+cu100")
    except VersionError:
        raise VersionError(f"torch: cannot parse version {s[:40]!r}", fix) from None
    public = ".".join(str(p) for p in v.release)
    # the local label as written (packaging normalises '-' and '_' to '.')
    local = s.partition("+")[2].lower() or None
    return public, local


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
