"""Reading what a user hands envcheck (facts files, matrices, playbooks, hosts files, baselines,
pasted logs on stdin): bounded, so `/dev/zero` or a runaway pipe is a one-line usage error
instead of a process that eats memory until the OOM killer comes.

Every reader refuses more than its cap with a UsageError naming the file and the cap.
"""
from __future__ import annotations

import json
import os
import re
import stat
from typing import IO, Optional

import yaml

from envcheck.errors import UsageError

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
# can expand to a few hundred nodes at most. Aliases of scalars (the matrix's *source URLs) are free.
MAX_YAML_ALIASES = 16
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
    loader = loader or getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        depth = aliases = 0
        collections = set()
        for ev in yaml.parse(text, Loader=loader):
            if isinstance(ev, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if ev.anchor:
                    collections.add(ev.anchor)
                depth += 1
                if depth > MAX_NESTING:
                    raise UsageError(f"{what}: nested more than {MAX_NESTING} levels deep", fix)
            elif isinstance(ev, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(ev, yaml.AliasEvent) and ev.anchor in collections:
                aliases += 1
                if aliases > MAX_YAML_ALIASES:
                    raise UsageError(f"{what}: more than {MAX_YAML_ALIASES} YAML aliases (*name) of lists or mappings", fix)
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        at = f" at line {where.line + 1}" if where else ""
        raise UsageError(f"{what}: not valid YAML{at}: {getattr(e, 'problem', None) or ' '.join(str(e).split())}", fix) from e


# shell startup files by name: .bashrc, .zshenv, .profile, bash.bashrc, /etc/profile.d/*.sh …
_RC_NAME = re.compile(r"\.?[A-Za-z0-9_.-]*(rc|profile|login|logout|env|\.sh|\.bash|\.zsh)")


def check_rc_file(file: str) -> None:
    """--file names a shell startup file: never /etc/passwd, a device, or a directory."""
    name = file.rstrip("/").rsplit("/", 1)[-1] if not file.endswith("/") else ""
    if not file.strip() or not _RC_NAME.fullmatch(name) or file.startswith(("/dev/", "/proc/", "/sys/")):
        raise UsageError(f"--file {file!r} is not a shell startup file (.bashrc, .zshenv, .profile, "
                         "/etc/profile.d/NAME.sh …)", "pass --file ~/.bashrc, or the startup file of the login shell")
