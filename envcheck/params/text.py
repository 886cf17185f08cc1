"""Text a user gave, as envcheck checks and quotes it everywhere: no control character, UTF-8,
not too long; and in a message, never more than a short excerpt."""
from __future__ import annotations

import re
from typing import Any

from envcheck.errors import UsageError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def excerpt(value: Any, limit: int = 40) -> str:
    """repr() of a value cut to `limit` characters, saying how long it was: error messages
    never carry a whole megabyte someone pasted (or a YAML alias expanded)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return repr(value[:limit]) + f"… ({len(value)} characters)"
    if isinstance(value, (list, tuple, dict)):
        text = repr(type(value)()) if not value else None
        return text or f"a {type(value).__name__} of {len(value)}"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def check_text(value: str, where: str, fix: str, *, max_len: int = 4096, controls: bool = False,
               surrogates: bool = False) -> str:
    """Text that is not too long, holds no control character (unless `controls`), and is UTF-8
    (unless `surrogates`: a local file name may hold any byte)."""
    if len(value) > max_len:
        raise UsageError(f"{where} {excerpt(value)} is longer than {max_len} characters", fix)
    if not controls and _CONTROL.search(value):
        bad = _CONTROL.search(value).group()
        raise UsageError(f"{where} {excerpt(value)} holds the control character {bad!r}", fix)
    if "\x00" in value:
        raise UsageError(f"{where} {excerpt(value)} holds a NUL byte", fix)
    if not surrogates:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            byte = ord(value[e.start]) - 0xDC00 if 0xDC80 <= ord(value[e.start]) <= 0xDCFF else None
            what = f"the byte 0x{byte:02x}" if byte is not None else "a lone surrogate"
            raise UsageError(f"{where}: not UTF-8 text ({what} at character {e.start})", fix) from None
    return value
