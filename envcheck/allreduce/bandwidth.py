"""The all-reduce arithmetic, pure: message sizes of a sweep, algbw, busbw, the summary.

Definitions are nccl-tests' (NVIDIA/nccl-tests doc/PERFORMANCE.md): for a message of S bytes that
took t seconds, algbw = S / t, and for all-reduce busbw = algbw * 2(n-1)/n, where n is the number
of ranks — the factor that makes busbw comparable with the hardware's link bandwidth whatever n
is. GB/s means 1e9 bytes per second, as nccl-tests prints it. Sizes in arguments are binary
(8, 64K, 256M, 1G: K = 1024), as nccl-tests parses -b/-e.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from envcheck.errors import UsageError
# one parser for every size a user types (nccl-test, doctor, playbooks): envcheck/params
from envcheck.params.core import MAX_BYTES, parse_size  # noqa: F401

DTYPE_SIZES = {"float32": 4, "float": 4, "float16": 2, "half": 2, "bfloat16": 2,
               "float64": 8, "double": 8, "int32": 4, "int": 4}


def dtype_size(dtype: str) -> int:
    try:
        return DTYPE_SIZES[dtype]
    except KeyError:
        raise UsageError(f"dtype {dtype!r} is not supported",
                         "use one of " + ", ".join(sorted(DTYPE_SIZES))) from None


def sweep_sizes(min_bytes: int, max_bytes: int, factor: int, elem_size: int) -> List[int]:
    """The message sizes in bytes: min, min*factor, ... up to max, each a whole number of
    elements (rounded down, as nccl-tests does); sizes below one element are dropped."""
    if factor < 2:
        raise UsageError(f"--factor {factor} must be at least 2", "use --factor 2")
    if min_bytes > max_bytes:
        raise UsageError(f"--min-bytes {min_bytes} is above --max-bytes {max_bytes}",
                         "swap them")
    out: List[int] = []
    size = max(min_bytes, 1)
    while size <= max_bytes:
        b = (size // elem_size) * elem_size
        if b > 0 and (not out or out[-1] != b):
            out.append(b)
        size *= factor
    return out


def algbw(nbytes: int, seconds: float) -> float:
    """Algorithm bandwidth in GB/s (1e9 B/s): the message size over the time of one operation."""
    if seconds <= 0:
        return 0.0
    return nbytes / seconds / 1e9


def busbw_factor(nranks: int) -> float:
    """All-reduce's bus factor 2(n-1)/n: 0 for one rank (nothing crosses a bus), 1 for two."""
    if nranks < 1:
        raise ValueError("nranks must be >= 1")
    return 2.0 * (nranks - 1) / nranks


def busbw(nbytes: int, seconds: float, nranks: int) -> float:
    return algbw(nbytes, seconds) * busbw_factor(nranks)


def make_row(nbytes: int, elem_size: int, dtype: str, seconds: float, nranks: int,
             wrong: Optional[int]) -> Dict[str, Any]:
    """One line of the table, the way nccl-tests prints it (time in microseconds)."""
    return {"bytes": nbytes, "count": nbytes // elem_size, "type": dtype,
            "time_us": seconds * 1e6, "algbw": algbw(nbytes, seconds),
            "busbw": busbw(nbytes, seconds, nranks), "wrong": wrong}


def summarize(rows: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """busbw at the largest size (the figure a training job's gradients see; nccl-tests' average
    over the sweep is dragged down by the latency-bound small sizes), plus that average for
    comparison, and the total of wrong elements."""
    if not rows:
        return {"largest_bytes": None, "busbw": None, "algbw": None, "avg_busbw": None,
                "wrong": 0, "plateau_bytes": None, "still_rising": None}
    last = max(rows, key=lambda r: r["bytes"])
    return dict({"largest_bytes": last["bytes"], "busbw": last["busbw"], "algbw": last["algbw"],
                 "avg_busbw": sum(r["busbw"] for r in rows) / len(rows),
                 "wrong": sum(int(r.get("wrong") or 0) for r in rows)}, **plateau(rows))


PLATEAU = 0.9   # a size whose busbw is within 10% of the sweep's best measures the link


def plateau(rows: Sequence[Dict[str, Any]]) -> Dict[str, Any]:
    """Where the sweep's busbw stops rising: the smallest size from which every size reaches
    90% of the best (smaller sizes measure latency more than the link), and whether the curve is
    still rising at the largest size (its last step gained more than 1/0.9: the figure
    understates the link, a larger --max-bytes would say more). None with fewer than two sizes."""
    rows = sorted(rows, key=lambda r: r["bytes"])
    if len(rows) < 2 or not max(r["busbw"] for r in rows) > 0:
        return {"plateau_bytes": None, "still_rising": None}
    best = max(r["busbw"] for r in rows)
    start = len(rows)
    while start > 0 and rows[start - 1]["busbw"] >= PLATEAU * best:
        start -= 1
    return {"plateau_bytes": rows[start]["bytes"] if start < len(rows) else None,
            "still_rising": rows[-1]["busbw"] > rows[-2]["busbw"] / PLATEAU}


def human_size(nbytes: int) -> str:
    for unit, div in (("G", 1024 ** 3), ("M", 1024 ** 2), ("K", 1024)):
        if nbytes >= div and nbytes % div == 0:
            return f"{nbytes // div}{unit}"
    return str(nbytes)
