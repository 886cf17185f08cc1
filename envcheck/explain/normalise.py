"""Make pasted error text comparable: ANSI colour removed, curly/full-width quotes and
punctuation straightened, every run of whitespace (line breaks included: messages are wrapped
by terminals, loggers and issue forms) collapsed to one space. Case is left alone (symbols and
paths keep it; matching ignores it). Keeps where each original line starts, so a match can be
shown as the lines it came from."""
from __future__ import annotations

import bisect
import re
from itertools import accumulate
from typing import Tuple

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\n]*\x07")
_TRANS = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "`": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
    "\uff0c": ",", "\uff1a": ":", "\uff08": "(", "\uff09": ")", "\uff1b": ";", "\u3002": ".",
    "\u00a0": " ", "\u3000": " ", "\\": "/",
})


class Normalised:
    def __init__(self, text: str, first_line: int = 1):
        self._first = first_line
        self._lines = text.splitlines() or [""]
        # whole-text passes (C speed); neither changes the number of lines
        clean = _ANSI.sub("", text) if "\x1b" in text else text
        clean = clean.replace("`", "'").replace("\\", "/") if clean.isascii() else clean.translate(_TRANS)
        parts = [" ".join(line.split()) for line in clean.splitlines() or [""]]
        self._starts = list(accumulate([0] + [len(p) + 1 for p in parts[:-1]]))
        self.text = " ".join(parts)
        self.lower = self.text.lower()

    def lines_of(self, start: int, end: int) -> Tuple[int, str]:
        """(line number, the original line(s) covering [start, end), trimmed)."""
        a = bisect.bisect_right(self._starts, start) - 1
        b = bisect.bisect_right(self._starts, max(start, end - 1)) - 1
        shown = " ".join(" ".join(_ANSI.sub("", x).split()) for x in self._lines[a:b + 1])
        return a + self._first, shown[:300]
