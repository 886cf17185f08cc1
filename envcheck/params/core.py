"""What one input is: its kind, bounds, pattern and, for a path, which kind of path. The CLI
builds its options from these (envcheck/cli/options.py), playbook fields that mean the same
thing are checked with the same objects (envcheck/provision/playbooks.py), and each gives the
JSON Schema fragment that editors and the schema files use (schemas/).

Every number has an upper bound, every duration is finite; text that reaches a file or a shell
holds no control character and is UTF-8 (a non-UTF-8 byte on the command line arrives as a lone
surrogate, which no encoder takes). Messages quote at most a short excerpt of the value.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Optional, Tuple
from urllib.parse import urlsplit

from envcheck import paths
from envcheck.errors import EnvcheckError, UsageError
from envcheck.params.text import check_text, excerpt
from envcheck.versions import strict_version

WEEK = 7 * 24 * 3600.0
_INT = re.compile(r"[+-]?[0-9]{1,19}")
_FLOAT = re.compile(r"[+-]?(?:[0-9]{1,15}(?:\.[0-9]{0,9})?|\.[0-9]{1,9})(?:[eE][+-]?[0-9]{1,3})?")


@dataclass(frozen=True)
class Param:
    """One input. kind: int, float, seconds, size, choice, text, version, url, node-path,
    local-file (read), local-path (read, a file or a directory), out-file, out-dir, bool.
    lo/hi bound numbers (inclusive); pattern is matched whole; path says what a path names."""

    key: str
    kind: str
    help: str
    metavar: str = ""
    lo: Optional[float] = None
    hi: Optional[float] = None
    pattern: Optional[str] = None
    choices: Tuple[str, ...] = ()
    max_len: int = 4096
    example: str = ""
    shape: str = ""                   # what a valid text looks like, for the message
    flag: str = ""
    controls: bool = False            # control characters allowed (a pasted log)
    check: Optional[Callable[[Any, str], Any]] = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return self.flag or "--" + self.key.replace("_", "-")

    def fix(self) -> str:
        if self.example:
            return f"e.g. {self.name} {self.example}" if self.name.startswith("-") else f"e.g. {self.example}"
        return f"see {self.name} in --help"

    def parse(self, value: Any, where: Optional[str] = None) -> Any:
        """The value as this input's type, or UsageError naming `where` (default: the flag)."""
        where = where or self.name
        if value is None:
            return None
        kind = KINDS.get(self.kind)
        if kind is None:
            raise ValueError(f"{self.key}: unknown kind {self.kind}")
        v = kind(self, value, where)
        return self.check(v, where) if self.check else v

    def json_schema(self) -> Dict[str, Any]:
        return SCHEMAS[self.kind](self)


def _number(p: Param, value: Any, where: str, integer: bool) -> Any:
    what = "a whole number" if integer else "a number of seconds" if p.kind == "seconds" else "a number"
    rng = f"{_g(p.lo)}..{_g(p.hi)}"
    if isinstance(value, bool):
        raise UsageError(f"{where} {value!r} is not {what} in {rng}", p.fix())
    if isinstance(value, str):
        s = value.strip()
        if not (_INT if integer else _FLOAT).fullmatch(s) and not (not integer and s.lower() in ("inf", "-inf", "nan", "infinity")):
            raise UsageError(f"{where} {excerpt(value)} is not {what} in {rng}", p.fix())
        value = int(s) if integer else float(s)
    elif integer and isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
        raise UsageError(f"{where} {excerpt(value)} is not {what} in {rng}", p.fix())
    if not math.isfinite(value) or (p.lo is not None and value < p.lo) or (p.hi is not None and value > p.hi):
        what = "a number of seconds" if p.kind == "seconds" else what
        raise UsageError(f"{where} {_g(value)} is not {what} in {rng}", p.fix())
    return value


def _g(x: Any) -> str:
    if x is None:
        return "∞"
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return f"{x:g}" if isinstance(x, float) else str(x)


def _int(p: Param, value: Any, where: str) -> int:
    return _number(p, value, where, True)


def _float(p: Param, value: Any, where: str) -> float:
    return float(_number(p, value, where, False))


MAX_BYTES = 256 << 30      # one message; the largest GPUs hold 141-192 GiB
_UNITS = {"": 1, "K": 1024, "M": 1024 ** 2, "G": 1024 ** 3}


def parse_size(text: str) -> int:
    """'8' -> 8, '64K' -> 65536, '256M' -> 268435456 (binary units, as nccl-tests' -b/-e)."""
    m = re.fullmatch(r"\s*([0-9]{1,15})\s*([KMGkmg]?)(?:i?[Bb])?\s*", str(text))
    if not m:
        raise UsageError(f"size {excerpt(str(text))} is not a byte count", "write it as 8, 64K, 256M or 1G")
    n = int(m.group(1)) * _UNITS[m.group(2).upper()]
    if n > MAX_BYTES:
        raise UsageError(f"size {excerpt(str(text))} is above {MAX_BYTES >> 30}G, more than any GPU holds",
                         "write it as 8, 64K, 256M or 1G")
    return n


def _size(p: Param, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UsageError(f"{where} {excerpt(value)} is not a byte count", "write it as 8, 64K, 256M or 1G")
    try:
        n = parse_size(str(value))
    except EnvcheckError as e:
        raise UsageError(f"{where}: {e.message}", e.fix) from None
    if p.lo is not None and n < p.lo:
        raise UsageError(f"{where} {excerpt(value)} is below {_g(p.lo)} bytes", "write it as 8, 64K, 256M or 1G")
    return n


def _choice(p: Param, value: Any, where: str) -> str:
    if not isinstance(value, str) or value not in p.choices:
        raise UsageError(f"{where} {excerpt(value)} is not one of {', '.join(p.choices)}",
                         f"e.g. {p.name} {p.choices[0]}" if p.name.startswith("-") else f"e.g. {p.choices[0]}")
    return value


def _text(p: Param, value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{where} {excerpt(value)} is not a text", p.fix())
    if not value.strip():   # "$NODES" of an unset variable: never "nothing", never "here"
        raise UsageError(f"{where} is empty{' (an unset variable?)' if value == '' else ''}", p.fix())
    check_text(value, where, p.fix(), max_len=p.max_len, controls=p.controls)
    if p.pattern and not re.fullmatch(p.pattern, value):
        raise UsageError(f"{where} {excerpt(value)} is not {p.shape or p.metavar}", p.fix())
    return value


def _version(p: Param, value: Any, where: str) -> str:
    if not isinstance(value, str):
        raise UsageError(f"{where} {excerpt(value)} must be a quoted version string of digits and dots "
                         "(YAML reads 10.10 as the number 10.1)", p.fix())
    check_text(value, where, p.fix(), max_len=64)
    return strict_version(value, where)


def _url(p: Param, value: Any, where: str) -> str:
    s = _text(p, value, where)
    try:
        u = urlsplit(s)
        u.port   # a port out of range or not a number raises ValueError
    except ValueError:
        u = None
    if (u is None or u.scheme not in ("http", "https", "ftp", "file") or (u.scheme != "file" and not u.netloc)
            or any(c.isspace() for c in s)):
        raise UsageError(f"{where} {excerpt(s)} is not an http(s), ftp or file URL", p.fix())
    return s


def _node_path(p: Param, value: Any, where: str) -> str:
    s = _text(p, value, where)
    if not s.startswith("/"):
        raise UsageError(f"{where} {excerpt(s)} is not an absolute path (it would depend on the login's "
                         "working directory on each node)", p.fix())
    return s


def _bool(p: Param, value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise UsageError(f"{where} {excerpt(value)} must be true or false", f"write {p.key}: true")
    return value


def _local(kind: str) -> Callable[[Param, Any, str], str]:
    def parse(p: Param, value: Any, where: str) -> str:
        s = str(value) if not isinstance(value, str) else value
        return getattr(paths, kind.replace("-", "_"))(s, where, p.fix())
    return parse


KINDS: Dict[str, Callable[[Param, Any, str], Any]] = {
    "int": _int, "float": _float, "seconds": _float, "size": _size, "choice": _choice,
    "text": _text, "version": _version, "url": _url, "node-path": _node_path, "bool": _bool,
    "local-file": _local("local-file"), "local-path": _local("local-path"),
    "local-dir": _local("local-dir"), "out-file": _local("out-file"), "out-dir": _local("out-dir"),
}


def _num_schema(p: Param) -> Dict[str, Any]:
    s: Dict[str, Any] = {"type": "integer" if p.kind == "int" else "number"}
    if p.lo is not None:
        s["minimum"] = p.lo
    if p.hi is not None:
        s["maximum"] = p.hi
    return s


def _text_schema(p: Param) -> Dict[str, Any]:
    s: Dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": p.max_len}
    if p.kind == "node-path":
        s["pattern"] = "^/[^\\u0000-\\u001f\\u007f]*$"
    elif p.pattern:
        s["pattern"] = f"^(?:{p.pattern})$"
    elif not p.controls:
        s["pattern"] = "^[^\\u0000-\\u001f\\u007f]*$"
    return s


SCHEMAS: Dict[str, Callable[[Param], Dict[str, Any]]] = {
    "int": _num_schema, "float": _num_schema, "seconds": _num_schema,
    "size": lambda p: {"oneOf": [{"type": "integer", "minimum": p.lo or 1, "maximum": 256 << 30},
                                 {"type": "string", "pattern": "^[0-9]{1,12}[KMGkmg]?$"}]},
    "choice": lambda p: {"enum": list(p.choices)},
    "text": _text_schema, "node-path": _text_schema,
    "version": lambda p: {"type": "string", "pattern": "^[0-9]{1,9}(?:\\.[0-9]{1,9}){0,5}$"},
    "url": lambda p: {"type": "string", "maxLength": p.max_len, "pattern": "^(?:https?|ftp|file)://[^\\s]+$"},
    "bool": lambda p: {"type": "boolean"},
    "local-file": _text_schema, "local-path": _text_schema, "local-dir": _text_schema,
    "out-file": _text_schema, "out-dir": _text_schema,
}
