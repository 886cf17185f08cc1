"""Reading what a user hands envcheck (facts files, matrices, playbooks, hosts files, baselines,
pasted logs on stdin): bounded, so `/dev/zero` or a runaway pipe is a one-line usage error
instead of a process that eats memory until the OOM killer comes.

Every reader refuses more than its cap with a UsageError naming the file and the cap. envcheck's
own YAML data, as the wheel's build compiled it to JSON (hatch_build.py), is read by compiled().
"""
from __future__ import annotations

import json
import os
import re
import stat
import zlib
from pathlib import Path
from typing import IO, Any, Optional, Union

from envcheck.errors import UsageError

# A mapping with keys JSON has no type for (YAML's ints: the Xid catalogue), as its compiled JSON
# writes it: {INT_KEYS: [[key, value], ...]}
INT_KEYS = "\u0000pairs"

MAX_FILE_BYTES = 16 * 1024 * 1024     # the largest real input (a matrix, a 10k-host facts dir entry) is < 1 MiB
MAX_STDIN_BYTES = 16 * 1024 * 1024


def read_bytes(path: str, what: str, fix: str, limit: int = MAX_FILE_BYTES) -> bytes:
    """A regular file (or a pipe/process substitution), at most `limit` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        raise UsageError(f"{what} {path}: cannot read: {e.strerror}", fix) from e
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{what} {path}: is a directory", fix)
        if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
            raise UsageError(f"{what} {path}: is a device or socket, not a file", fix)
        if stat.S_ISFIFO(st.st_mode):
            os.set_blocking(fd, True)   # a pipe (<(cmd)): read it, still bounded
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            return _bounded(f, limit, f"{what} {path}", fix)
    finally:
        if fd >= 0:
            os.close(fd)


def read_text(path: str, what: str, fix: str, limit: int = MAX_FILE_BYTES) -> str:
    data = read_bytes(path, what, fix, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise UsageError(f"{what} {path}: not UTF-8 text ({e.reason} at byte {e.start})", fix) from e


def read_stream(stream: IO, what: str, fix: str, limit: int = MAX_STDIN_BYTES) -> str:
    """A text stream (stdin), at most `limit` bytes."""
    raw: Optional[IO[bytes]] = getattr(stream, "buffer", None)
    if raw is not None:
        return _bounded(raw, limit, what, fix).decode("utf-8", errors="replace")
    text = stream.read(limit + 1)
    if len(text) > limit:
        raise UsageError(f"{what}: more than {limit // (1024 * 1024)} MiB", fix)
    return text


def _bounded(f: IO[bytes], limit: int, what: str, fix: str) -> bytes:
    data = f.read(limit + 1)
    if len(data) > limit:
        raise UsageError(f"{what}: more than {limit // (1024 * 1024)} MiB; not reading further", fix)
    return data


# aliases of mappings/sequences: what an alias bomb ("billion laughs") multiplies; 16 of them
# can expand to a few hundred nodes at most. Every alias, of a scalar too, also counts with the
# size of what it repeats: a 1 MiB string aliased 20000 times is 20 GB the moment anything
# renders it (the matrix's 444 *source URL aliases come to ~50 kB).
MAX_YAML_ALIASES = 16
MAX_YAML_EXPANDED = MAX_FILE_BYTES   # the document as if every alias were written out
MAX_NESTING = 64           # deeper than any real document; Python's recursion gives out near 1000


def parse_json(text: str, what: str, fix: str):
    """json.loads with the nesting bounded (a RecursionError otherwise, or a crash)."""
    _check_json_depth(text, what, fix)
    try:
        return json.loads(text)
    except ValueError as e:
        raise UsageError(f"{what}: not JSON ({e})", fix) from e


def _check_json_depth(text: str, what: str, fix: str) -> None:
    depth = deepest = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_NESTING:
                raise UsageError(f"{what}: nested more than {MAX_NESTING} levels deep", fix)
        elif ch in "]}":
            depth -= 1


def parse_yaml(text: str, what: str, fix: str, loader=None):
    """yaml safe load, refusing alias bombs and deep nesting before anything is built: the
    events are read first (linear in the text, aliases not expanded)."""
    import yaml  # lazy: PyYAML costs ~17 ms CPU to load (-X importtime, issue 26), paid by every command at start-up
    loader = loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_yaml_events(yaml.parse(text, Loader=loader), what, fix)
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" at line {where.line + 1}" if where else ""
        problem = getattr(e, "problem", None) or " ".join(str(e).split())
        raise UsageError(f"{what}: not valid YAML{at}: {problem[:200]}", fix) from e
    except (ValueError, OverflowError) as e:   # a 5000-digit number: int() refuses it
        raise UsageError(f"{what}: a value YAML cannot read ({' '.join(str(e).split(';')[0].split())[:120]})", fix) from e


def _check_yaml_events(events, what: str, fix: str) -> None:
    """Nesting, aliases of collections, and the size of the document with every alias (of a
    scalar or a collection) written out: each anchored node's size is known when it ends."""
    import yaml  # lazy: as in parse_yaml, ~17 ms
    sizes: dict = {}                  # anchor -> characters it stands for
    collections = set()
    opened: list = []                 # (anchor, expanded size when it started) per open collection
    expanded = aliases = 0
    for ev in events:
        if isinstance(ev, yaml.ScalarEvent):
            expanded += len(ev.value) + 1
            if ev.anchor:
                sizes[ev.anchor] = len(ev.value) + 1
        elif isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            if ev.anchor:
                collections.add(ev.anchor)
            opened.append((ev.anchor, expanded))
            expanded += 1
            if len(opened) > MAX_NESTING:
                raise UsageError(f"{what}: nested more than {MAX_NESTING} levels deep", fix)
        elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            anchor, start = opened.pop()
            if anchor:
                sizes[anchor] = expanded - start
        elif isinstance(ev, yaml.AliasEvent):
            expanded += sizes.get(ev.anchor, 1)
            if ev.anchor in collections:
                aliases += 1
                if aliases > MAX_YAML_ALIASES:
                    raise UsageError(f"{what}: more than {MAX_YAML_ALIASES} YAML aliases (*name) of lists or mappings", fix)
        if expanded > MAX_YAML_EXPANDED:
            raise UsageError(f"{what}: its YAML aliases (*name) expand it to more than "
                             f"{MAX_YAML_EXPANDED >> 20} MiB", fix)


# The shell start-up files envcheck writes its (sh-syntax) export block into: those of the
# Bourne-family shells, in the home or system-wide. Not .netrc, .npmrc, .pypirc or .wgetrc (names
# ending in "rc" that hold credentials), nor csh/fish files (another syntax).
HOME_RC_FILES = (".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshenv", ".zshrc",
                 ".zprofile", ".zlogin", ".kshrc", ".mkshrc", ".shrc")
SYSTEM_RC_FILES = ("/etc/profile", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zshenv",
                   "/etc/zsh/zshenv", "/etc/zsh/zshrc", "/etc/zshrc", "/etc/zprofile", "/etc/zsh/zprofile")
# NAME.sh in a directory a start-up file sources every file of
_RC_DIRS = re.compile(r"(?:/etc/profile\.d|(?:~/)?\.bashrc\.d|/home/[^/]+/\.bashrc\.d|/root/\.bashrc\.d)"
                      r"/[A-Za-z0-9_.-]+\.sh")
_HOME_PREFIX = re.compile(r"(?:~/|/root/|/home/[^/]+/)?")


def check_rc_file(file: str, anything: bool = False) -> None:
    """--file names a shell start-up file envcheck knows (~/.bashrc, ~/.zshenv, /etc/profile.d/
    NAME.sh …), never /etc/passwd, ~/.netrc, a device or a directory; `anything` (--file-anything)
    lifts the name check only."""
    fix = ("pass --file ~/.bashrc (or another start-up file of the login shell: "
           f"{', '.join('~/' + f for f in HOME_RC_FILES[:6])} …, /etc/profile.d/NAME.sh), or "
           "--file-anything for a file your start-up file sources")
    if not file or not file.strip() or file.endswith("/") or re.search(r"[\x00-\x1f\x7f]", file):
        raise UsageError(f"--file {file[:60]!r} is not a file name", fix)
    if file.startswith(("/dev/", "/proc/", "/sys/")):
        raise UsageError(f"--file {file[:60]!r} is not a shell start-up file", fix)
    if anything:
        return
    m = _HOME_PREFIX.match(file)
    rest = file[m.end():]
    if rest in HOME_RC_FILES or file in SYSTEM_RC_FILES or _RC_DIRS.fullmatch(file):
        return
    raise UsageError(f"--file {file[:60]!r} is not a shell start-up file envcheck knows", fix)


def compiled(path: Union[str, Path]) -> Optional[Any]:
    """A YAML data file the wheel ships (the matrix, the playbooks, the health catalogue, explain's
    signatures) as the wheel's build parsed, checked and compiled it to JSON beside it
    (hatch_build.py; issue 26: ~1 ms where PyYAML's import and parse cost ~20-60 ms on every
    command), while the YAML is still the file it was compiled from (its size and CRC-32: a hand
    edit is what they catch, not an attack: whoever can edit one file can edit both); else None,
    and the caller reads the YAML as before. Only for envcheck's own files, never a user's."""
    p = Path(path)
    try:
        head = p.with_suffix(".json").read_bytes()
        raw = p.read_bytes()
        # the hook slows the matrix's ~4,000 mappings down 3x: only where a mapping needs it
        doc = json.loads(head, object_hook=_pairs) if json.dumps(INT_KEYS).encode() in head else json.loads(head)
    except (OSError, ValueError):
        return None
    if not (isinstance(doc, dict) and doc.get("yaml_size") == len(raw) and doc.get("yaml_crc32") == zlib.crc32(raw)):
        return None
    return doc.get("data")


def _pairs(d: dict) -> Any:
    return dict((k, v) for k, v in d[INT_KEYS]) if len(d) == 1 and INT_KEYS in d else d

