"""The process's standard streams, made safe before any command runs:

- a closed stdin, stdout or stderr is reopened on /dev/null first, so no file opened later takes
  its number (a report must never land in "stdout"); a closed stdout stays unwritable;
- stdout is a writer whose failure (a full disk, a closed pipe or descriptor) raises OutputError
  once, then discards: the CLI turns it into one line on stderr and a non-zero exit, instead of a
  traceback or Python's "Exception ignored … Errno 28" and exit 0 or 120; a pipe whose reader has
  stopped reading (`envcheck … | head`: EPIPE) is the reader's choice, as for every Unix filter:
  the same non-zero exit, without the line;
- COLUMNS and LINES are held to what a terminal can be: `COLUMNS=2000000000` would make every
  renderer that trusts them build gigabyte lines.
"""
import errno
import io
import os
import sys
from typing import Optional

from envcheck.errors import OutputError

MAX_COLUMNS = 1000


def sane_terminal_size() -> None:
    for var in ("COLUMNS", "LINES"):
        v = os.environ.get(var)
        if v is None:
            continue
        try:
            n = int(v)
        except ValueError:
            del os.environ[var]
            continue
        if not 0 < n <= MAX_COLUMNS:
            os.environ[var] = str(min(max(n, 1), MAX_COLUMNS))


class StdoutLost(OutputError):
    """quiet: the reader of a pipe stopped reading (EPIPE), so there is nothing to tell it."""

    quiet = False


class _Raw(io.RawIOBase):
    def __init__(self, fd: int, closed: bool) -> None:
        super().__init__()
        self._fd, self._closed_at_start = fd, closed
        self.lost: Optional[OutputError] = None

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, b) -> int:  # type: ignore[no-untyped-def]
        if self.lost is not None:    # said once already; the rest is discarded
            return len(b)
        try:
            return os.write(self._fd, b)
        except OSError as e:
            why = "it was closed when envcheck started" if self._closed_at_start else e.strerror
            self.lost = StdoutLost(f"cannot write the output to stdout: {why}",
                                   "write it where there is room (or leave stdout open), e.g. "
                                   "> report.json")
            self.lost.quiet = e.errno == errno.EPIPE and not self._closed_at_start
            raise self.lost from None


def _reopen_closed() -> bool:
    """Put /dev/null on closed descriptors 0-2 (read-only on 1: writes there fail loudly).
    Returns whether stdout was closed."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
            os.open(os.devnull, os.O_WRONLY if fd == 2 else os.O_RDONLY)   # takes the lowest: fd
    if 2 in closed or sys.stderr is None:
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    return 1 in closed


def install() -> None:
    """Replace sys.stdout by the guarded writer (the console script does this once)."""
    closed = _reopen_closed()
    old = sys.stdout
    raw = _Raw(1, closed)
    sys.stdout = io.TextIOWrapper(
        io.BufferedWriter(raw), encoding=getattr(old, "encoding", None) or "utf-8",
        errors=getattr(old, "errors", None) or "strict",
        line_buffering=bool(getattr(old, "line_buffering", False)))


def flush() -> Optional[OutputError]:
    """Flush stdout; the OutputError when what was printed could not be written and no one has
    said so yet (a command's guard says it when the loss happens inside the command)."""
    try:
        sys.stdout.flush()
    except OutputError:
        pass
    raw = getattr(getattr(sys.stdout, "buffer", None), "raw", None)
    lost = getattr(raw, "lost", None)
    return None if lost is None or getattr(lost, "reported", False) else lost
