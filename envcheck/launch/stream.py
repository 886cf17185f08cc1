"""The live side of `envcheck launch`: each host's launcher stream (JSON lines, chunked however
SSH delivers them) turned into the harness's typed records (envcheck/ranks/records.py), rank
output lines handed to the caller as they come, kept per rank under --log-dir and as a tail in
memory for the report."""
from __future__ import annotations

import os
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Deque, Dict, List, Optional

from envcheck.ranks import records as rr

TAIL_LINES = 60
LineFn = Callable[[str, int, str], None]          # (host, rank, line)
RecordFn = Callable[[str, rr.Record], None]       # (host, record)


@dataclass
class RankState:
    rank: int
    host: str
    local_rank: int
    pid: Optional[int] = None
    start: Optional[float] = None
    end: Optional[float] = None
    exit_code: Optional[int] = None         # negative: killed by that signal
    stopped: bool = False                   # ended because the run was being stopped
    arrived: Optional[float] = None         # controller's clock when its exit record came
    tail: Deque[str] = field(default_factory=lambda: deque(maxlen=TAIL_LINES))
    log_path: Optional[str] = None

    @property
    def status(self) -> str:
        if self.exit_code is None:
            return "lost" if self.start is not None else "not started"
        if self.exit_code == 0:
            return "ok"
        if self.exit_code < 0:
            return f"signal {-self.exit_code}"
        return f"exit {self.exit_code}"

    def to_dict(self) -> Dict[str, Any]:
        return {"rank": self.rank, "host": self.host, "local_rank": self.local_rank,
                "pid": self.pid, "start": self.start, "end": self.end,
                "exit_code": self.exit_code,
                "signal": -self.exit_code if self.exit_code and self.exit_code < 0 else None,
                "status": self.status, "stopped": self.stopped, "log": self.log_path}


class HostStream:
    """Feed it a host's stdout chunks; it keeps the ranks' state and calls on_line/on_record."""

    def __init__(self, host: str, ranks: Dict[int, RankState], on_line: Optional[LineFn],
                 on_record: RecordFn, log_dir: Optional[str]):
        self.host, self.ranks = host, ranks
        self.on_line, self.on_record, self.log_dir = on_line, on_record, log_dir
        self.buf = b""
        self.records: List[rr.Record] = []
        self.logs: Dict[int, Any] = {}
        self.lock = threading.Lock()

    def feed(self, chunk: bytes) -> None:
        with self.lock:
            self.buf += chunk
            *lines, self.buf = self.buf.split(b"\n")
            for raw in lines:
                self._line(raw.decode("utf-8", "replace").strip())

    def close(self) -> None:
        with self.lock:
            if self.buf.strip():
                self._line(self.buf.decode("utf-8", "replace").strip())
            self.buf = b""
            for f in self.logs.values():
                f.close()
            self.logs.clear()

    def _line(self, text: str) -> None:
        rec = rr.parse_line(text)   # None: a chatty login shell's banner, noise
        if isinstance(rec, rr.Out):
            self._out(rec.rank, rec.line)
            return
        if rec is None or isinstance(rec, rr.Beat):
            return
        st = self.ranks.get(rec.rank) if isinstance(rec, (rr.Start, rr.Exit)) else None
        if isinstance(rec, rr.Start) and st is not None:
            st.pid, st.start = rec.pid, rec.time
        elif isinstance(rec, rr.Exit) and st is not None:
            st.exit_code, st.end = rec.code, rec.time
            st.stopped, st.arrived = rec.stopped, time.monotonic()
        self.records.append(rec)
        self.on_record(self.host, rec)

    def _out(self, rank: int, line: str) -> None:
        st = self.ranks.get(rank)
        if st is not None:
            st.tail.append(line)
            if self.log_dir:
                f = self.logs.get(rank)
                if f is None:
                    st.log_path = os.path.join(self.log_dir, f"rank{rank}.{self.host}.log")
                    f = self.logs[rank] = open(st.log_path, "a", encoding="utf-8")
                f.write(line + "\n")
                f.flush()
        if self.on_line:
            self.on_line(self.host, rank, line)


def stack_dump(lines: List[str]) -> List[str]:
    """The last faulthandler dump in a rank's output: from the first thread header of the last
    run of thread blocks (headers, '  File' lines and the blank lines between blocks)."""
    heads = [i for i, x in enumerate(lines) if x.endswith("(most recent call first):")
             and (x.startswith("Thread 0x") or x.startswith("Current thread 0x"))]
    if not heads:
        return []
    first = heads[-1]
    for i in reversed(heads[:-1]):
        between = lines[i + 1:first]
        if all(x.startswith("  File") or x.strip() == "" or x.startswith(("Thread 0x", "Current "))
               for x in between):
            first = i
        else:
            break
    end = first + 1
    while end < len(lines) and (lines[end].startswith(("  File", "Thread 0x", "Current thread"))
                                or lines[end].strip() == ""):
        end += 1
    return lines[first:end]


def waits_in_torch(dump: List[str]) -> bool:
    """Whether the main thread (the last block of a dump) stands inside torch: a collective, or
    DDP's all-reduce at the end of backward(), waiting for its peers. A rank hung in the
    script's own code stands outside."""
    heads = [i for i, x in enumerate(dump) if x.endswith("(most recent call first):")]
    if not heads:
        return False
    frames = [x for x in dump[heads[-1] + 1:] if x.startswith("  File")]
    return bool(frames) and ("/torch/" in frames[0] or "\\torch\\" in frames[0])
