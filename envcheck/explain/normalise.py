"""Make pasted error text comparable: ANSI colour removed, curly/full-width quotes and
punctuation straightened, Windows paths' backslashes made slashes, the prefixes loggers and
launchers put on every line removed (docker build steps, timestamps, `[rank0]:`, srun's and
mpirun's rank labels, glog and c10 log headers, dmesg's `[ 12.345678]`, the NVIDIA kernel
module's `NVRM: ` on each line of its messages, journalctl's host and unit, Python logging's,
loguru's and DeepSpeed's headers, docker compose's and `kubectl logs --prefix`'s service names,
pdsh's `host: ` on the lines of each host), colour codes whose ESC was lost, and every run of
whitespace (line breaks included: messages are wrapped by terminals, loggers and issue forms)
collapsed to one space; a line cut mid-word at a terminal's fixed width is joined without one.
Case is left alone (symbols and paths keep it; matching ignores it). Keeps where each original
line starts, so a match can be shown as the lines it came from."""
from __future__ import annotations

import bisect
import re
from collections import Counter
from itertools import accumulate
from typing import List, Tuple

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\n]*\x07")
# colour codes whose ESC was lost on the way (copied from a web page or an issue form): '[31m',
# '[1;33m', '[0m'; looked for only where a reset code shows the text had colour
_BARE_SGR = re.compile(r"(?<!\[)\[(?:\d{1,3};)*\d{1,3}m(?!\])")
_TRANS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "`": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
    "\uff0c": ",", "\uff1a": ":", "\uff08": "(", "\uff09": ")", "\uff1b": ";", "\u3002": ".",
    "\u00a0": " ", "\u3000": " ", "\\": "/",
})
# One prefix per alternative, any number of them in a row at the start of a line. Each needs
# the shape only a prefix has (a timestamp, a bracketed rank, host:pid:tid), never plain words.
_PREFIX = re.compile(r"""^(?:[ \t]*(?:
    \#\d+\ \d+\.\d+\                                        # docker buildx: '#12 3.456 '
  | \d{4}-\d\d-\d\d[T\ ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?[ \t]*(?:\|[ \t]*)?   # ISO time
        (?:[\w.-]+\ (?:kernel|[\w./-]+\[\d+\]):\ )?            # journalctl -o short-iso: 'node07 kernel: '
  | -\ [\w.]+\ -\ (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\ -\     # logging's '%(asctime)s - %(name)s - %(levelname)s - '
  | (?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL)\ *\|\ [\w.<>-]+:[\w.<>-]+:\d+\ -\   # loguru, after its time
  | \[[\w.-]+\.py:\d+:[\w<>]+\]\ ?                             # DeepSpeed's logger: [launch.py:321:main]
  | \[pod/[^\]\s]+\]\                                          # kubectl logs --prefix: [pod/train-0/trainer]
  | [\w.-]+[-_]\d+\ +\|\                                        # docker compose: 'trainer-1  | '

  | \[\d{4}-\d\d-\d\d[T\ ]\d\d:\d\d:\d\d[^\]\n]{0,40}\]      # [2024-05-01 12:00:00,123 ...]
  | [A-Z][a-z]{2}\ [\ \d]\d\ \d\d:\d\d:\d\d\ \S+\ [\w.-]+(?:\[\d+\])?:\   # syslog
  | \d\d:\d\d:\d\d(?:[.,]\d+)?\                               # 12:34:56.789
  | [IWEF]\d{3,4}\ \d\d:\d\d:\d\d\.\d+[ \t]+\d+\ [\w.]+:\d+\]\   # glog: I0501 12:00:00.123 77 a.cc:9]
  | \[(?:rank|default|local_rank)\d+\]:?                       # torchrun: [rank0]: [default0]:
  | \[[IWEF]\d{3,4}\ \d\d:\d\d:\d\d\.\d+\ (?:\d+\ )?[\w./-]+:\d+\]\ ?  # c10 log: [W501 12:00:00.1 a.cpp:9]
  | \[\d+,\d+\]<std(?:out|err)>:                              # mpirun --tag-output
  | \[(?:DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\]       # [ERROR] after a time
  | \d{1,5}:\ (?=\S)                                          # srun -l: '3: '
  | \[\ *\d+\.\d{6}\]\                                         # dmesg: '[ 1843.308145] '
  | NVRM:\ (?=\S)                                            # the NVIDIA kernel module's line tag
))+""", re.VERBOSE)


_MONTHS = frozenset("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())


def _may_have_prefix(line: str) -> bool:
    """A cheap look at the first characters: most log lines start with none of the prefixes."""
    c = line[:1]
    if c in (" ", "\t"):
        line = line.lstrip(" \t")
        c = line[:1]
    return (c in ("#", "[") or c.isdigit() or (c in "IWEF" and line[1:2].isdigit())
            or (line[3:4] == " " and line[:3] in _MONTHS) or line.startswith("NVRM: ")
            or " | " in line[:64])


def strip_prefix(line: str) -> str:
    """`line` without the logger/launcher prefixes at its start (the rest untouched). NCCL's
    host:pid:tid prefix stays: its messages are one line each."""
    if not _may_have_prefix(line):
        return line
    m = _PREFIX.match(line)
    return line[m.end():] if m and m.end() < len(line) else line


# pdsh's and DeepSpeed's multi-node launcher's 'worker-3: ' before each line of a host's output:
# a host-like name (lower case, a digit or a dash in it, not a library's soname) at the start of
# 3 or more lines; a name that starts a line once or twice ('libcudart.so.11.0: cannot open')
# is the text's own
_HOST_PREFIX = re.compile(r"[a-z0-9][a-z0-9.-]*[0-9-][a-z0-9.-]*: (?=\S)")


def _host_prefixes(lines: List[str]) -> frozenset:
    """The host prefixes to remove: those at the start of 3+ lines, and the names of their shape
    (worker-7 beside worker-1) however few lines they start."""
    counts = Counter(m.group() for m in map(_HOST_PREFIX.match, lines) if m and ".so" not in m.group())
    shapes = {re.sub(r"\d+", "", p) for p, n in counts.items() if n >= 3}
    return frozenset(p for p in counts if re.sub(r"\d+", "", p) in shapes)


def _wrap_width(parts: List[str]) -> int:
    """The fixed width a terminal or form cut lines at: the longest length, shared by 3+ lines
    of at least 60 characters (0: no such width)."""
    counts = Counter(n for n in map(len, parts) if n >= 60)
    if not counts:
        return 0
    width = max(counts)
    return width if counts[width] >= 3 else 0


class Normalised:
    def __init__(self, text: str, first_line: int = 1):
        self._first = first_line
        self._lines = text.splitlines() or [""]
        # whole-text passes (C speed); neither changes the number of lines
        clean = _ANSI.sub("", text) if "\x1b" in text else text
        clean = _BARE_SGR.sub("", clean) if "[0m" in clean else clean
        clean = clean.replace("`", "'").replace("\\", "/") if clean.isascii() else clean.translate(_TRANS)
        lines = clean.splitlines() or [""]
        hosts = _host_prefixes(lines)
        if hosts:
            lines = [line[len(m.group()):] if (m := _HOST_PREFIX.match(line)) and m.group() in hosts else line
                     for line in lines]
        raw = [strip_prefix(line) for line in lines]
        parts = [" ".join(line.split()) for line in raw]
        width = _wrap_width(raw)
        # a line cut at the wrap width inside a word continues on the next one without a space
        # an empty line adds nothing: a message with a blank line in it reads as one sentence
        seps = [" " if p else "" for p in parts[:-1]] + [""]
        if width:
            for i in range(len(parts) - 1):
                if len(raw[i]) == width and raw[i][-1:].isalnum() and raw[i + 1][:1].isalnum():
                    seps[i] = ""
        self._starts = list(accumulate([0] + [len(p) + len(s) for p, s in zip(parts[:-1], seps)]))
        self.text = "".join(p + s for p, s in zip(parts, seps)).rstrip(" ")
        self.lower = self.text.lower()

    def lines_of(self, start: int, end: int) -> Tuple[int, str]:
        """(line number, the original line(s) covering [start, end), trimmed)."""
        a = bisect.bisect_right(self._starts, start) - 1
        b = bisect.bisect_right(self._starts, max(start, end - 1)) - 1
        shown = " ".join(" ".join(_ANSI.sub("", x).split()) for x in self._lines[a:b + 1])
        return a + self._first, shown[:300]
