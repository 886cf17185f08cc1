"""The rank protocol, parsed once: every JSON line a node launcher or an all-reduce worker writes
(envcheck/node/rank_protocol.py defines them) becomes one typed record here, and the rest of
the controller reads fields, never dict keys. A line that is not a record (a heartbeat, a login
banner, NCCL's own logging) is skipped; a record of a type this module does not know is kept
as `Other`, so a workload can add its own.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union

from envcheck.remote import json_objects


def _int(v: Any) -> Optional[int]:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _num(v: Any) -> Optional[float]:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _str(v: Any) -> Optional[str]:
    return v if isinstance(v, str) else None


# ---------------------------------------------------------------- the launchers' records
@dataclass(frozen=True)
class Start:
    rank: int
    local_rank: Optional[int]
    pid: Optional[int]
    time: Optional[float]


@dataclass(frozen=True)
class Out:
    rank: int
    line: str


@dataclass(frozen=True)
class Exit:
    """A rank ended: code < 0 is the signal that killed it; stopped: it ended because the run
    was being stopped (so it is no cause); time: when its launcher saw it end."""
    rank: int
    local_rank: Optional[int]
    code: int
    time: Optional[float]
    stopped: bool

    @property
    def signal(self) -> Optional[int]:
        return -self.code if self.code < 0 else None


@dataclass(frozen=True)
class Launcher:
    status: str                     # stopped | deadline | error | done
    why: Optional[str]
    host: Optional[str]
    running: Tuple[int, ...] = ()   # deadline: the ranks still running then


@dataclass(frozen=True)
class Beat:
    pass


# ---------------------------------------------------------------- the all-reduce worker's
@dataclass(frozen=True)
class Joined:
    """A rank joined the process group (the worker's "rank" record); `data` is the record as
    written, which nccl-test's report keeps."""
    rank: int
    data: Dict[str, Any] = field(compare=False, hash=False)


@dataclass(frozen=True)
class Sweep:
    data: Dict[str, Any] = field(compare=False, hash=False)


@dataclass(frozen=True)
class Result:
    bytes: int
    time_us: float
    wrong: Optional[int]


@dataclass(frozen=True)
class Timeout:
    """A bounded step did not finish in `seconds`: the rank gave up waiting (for a peer, usually)."""
    rank: Optional[int]
    phase: Optional[str]
    bytes: Optional[int]
    seconds: Optional[float]
    host: Optional[str]


@dataclass(frozen=True)
class Error:
    """A step raised; phase "setup": the rank never got as far as the rendezvous."""
    rank: Optional[int]
    phase: Optional[str]
    bytes: Optional[int]
    message: str
    host: Optional[str]


@dataclass(frozen=True)
class Done:
    world_size: Optional[int]


@dataclass(frozen=True)
class Pair:
    """One group's figures in a round of node pairs (envcheck/allreduce/pairs.py reads `data`)."""
    data: Dict[str, Any] = field(compare=False, hash=False)


@dataclass(frozen=True)
class Other:
    type: str
    data: Dict[str, Any] = field(compare=False, hash=False)


Record = Union[Start, Out, Exit, Launcher, Beat, Joined, Sweep, Result, Timeout, Error, Done, Pair, Other]


def _launcher(d: Dict[str, Any]) -> Launcher:
    running = tuple(k for k in d.get("running") or () if _int(k) is not None)
    return Launcher(str(d.get("status")), _str(d.get("why")), _str(d.get("host")), running)


PARSERS = {
    "start": lambda d: Start(d["rank"], _int(d.get("local_rank")), _int(d.get("pid")), _num(d.get("time"))),
    "out": lambda d: Out(d["rank"], str(d.get("line", ""))),
    "exit": lambda d: Exit(d["rank"], _int(d.get("local_rank")), d["code"], _num(d.get("time")),
                           bool(d.get("stopped"))),
    "launcher": _launcher,
    "beat": lambda d: Beat(),
    "rank": lambda d: Joined(d["rank"], dict(d)),
    "sweep": lambda d: Sweep(dict(d)),
    "result": lambda d: Result(int(d["bytes"]), float(d["time_us"]), _int(d.get("wrong"))),
    "timeout": lambda d: Timeout(_int(d.get("rank")), _str(d.get("phase")), _int(d.get("bytes")),
                                 _num(d.get("seconds")), _str(d.get("host"))),
    "error": lambda d: Error(_int(d.get("rank")), _str(d.get("phase")), _int(d.get("bytes")),
                             str(d.get("message")), _str(d.get("host"))),
    "done": lambda d: Done(_int(d.get("world_size"))),
    "pair": lambda d: Pair(dict(d)),
}
# the fields a record must have, of the right type, to be one (else it is noise, skipped)
REQUIRED = {"start": ("rank",), "out": ("rank",), "exit": ("rank", "code"), "rank": ("rank",)}


def parse(obj: Any) -> Optional[Record]:
    """One decoded JSON value as a record; None when it is not one."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        return None
    kind = obj["type"]
    if any(_int(obj.get(k)) is None for k in REQUIRED.get(kind, ())):
        return None
    parser = PARSERS.get(kind)
    if parser is None:
        return Other(kind, dict(obj))
    try:
        return parser(obj)
    except (KeyError, TypeError, ValueError):
        return None


def parse_line(text: str) -> Optional[Record]:
    """One line of a launcher's stdout (a chunk split at newlines)."""
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        return parse(json.loads(text))
    except ValueError:
        return None


def parse_text(text: str) -> List[Record]:
    """Every record in a launcher's (or srun's) whole stdout, in order."""
    return [r for r in map(parse, json_objects(text)) if r is not None]


def of_type(records: List[Record], *kinds: type) -> Iterator[Any]:
    return (r for r in records if isinstance(r, kinds))
