"""Local paths a user names: what each may be, checked before any work, and how an output is
written so that nothing is replaced that should not be.

Read:   local_file   a regular file or a pipe (<(cmd)); never a directory, device or socket
        local_path   a file or a directory (launch --sync)
        local_dir    an existing directory (provision --files)
Write:  out_file     a report (doctor --junit/--prometheus, nccl-test --plot): a regular file or
                     a new name is replaced atomically (a symlink to it stays a symlink); a
                     character device, a FIFO or /dev/stdout is written in place, never
                     replaced (as root, `--junit /dev/null` must leave /dev/null a device);
                     a directory, socket, block device, dangling symlink, missing or
                     unwritable directory is a UsageError before any work
        out_dir      a directory envcheck makes files in (audit --save, launch --log-dir): an
                     existing writable directory, or a new one whose parent exists (no
                     parents are created)

write_output() raises OutputError (one line, non-zero exit) when the write itself fails: a full
disk, a FIFO nobody reads, a closed stdout.
"""
from __future__ import annotations

import os
import stat
import sys
from typing import Callable, Optional, Tuple, Union

from envcheck.errors import OutputError, UsageError
from envcheck.params.text import check_text, excerpt as _excerpt

# the streams a user may name as an output file: written through our own descriptor, in order
STD_FDS = {"/dev/stdout": 1, "/dev/stderr": 2, "/dev/fd/1": 1, "/dev/fd/2": 2,
           "/proc/self/fd/1": 1, "/proc/self/fd/2": 2}


def excerpt(value: str, limit: int = 300) -> str:
    """A path in a message: whole (a user must see which file), unless it is absurdly long."""
    return _excerpt(value, limit)


def _name(path: str, where: str, fix: str) -> str:
    if not isinstance(path, str) or not path.strip():
        raise UsageError(f"{where} is empty", fix)
    return check_text(path, where, fix, surrogates=True)


def _stat(path: str, where: str, fix: str) -> Optional[os.stat_result]:
    """os.stat, following symlinks; None when nothing is there. A dangling symlink is refused:
    writing through it would create a file wherever it points."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        if os.path.lexists(path):
            raise UsageError(f"{where} {excerpt(path)} is a symlink to {excerpt(os.readlink(path))}, "
                             "which does not exist", fix) from None
        return None
    except OSError as e:
        raise UsageError(f"{where} {excerpt(path)}: {e.strerror}", fix) from None


def _kind(st: os.stat_result) -> str:
    m = st.st_mode
    return ("a directory" if stat.S_ISDIR(m) else "a character device" if stat.S_ISCHR(m) else
            "a block device" if stat.S_ISBLK(m) else "a FIFO" if stat.S_ISFIFO(m) else
            "a socket" if stat.S_ISSOCK(m) else "a file")


def _existing(path: str, where: str, fix: str, accept: Tuple[Callable[[int], bool], ...], what: str) -> str:
    """`path` when something of an accepted kind is there; else one line naming what is there."""
    st = _stat(_name(path, where, fix), where, fix)
    if st is None:
        raise UsageError(f"{where} {excerpt(path)}: no such {what}", fix)
    if not any(ok(st.st_mode) for ok in accept):
        raise UsageError(f"{where} {excerpt(path)} is {_kind(st)}, not a {what}", fix)
    return path


def local_file(path: str, where: str, fix: str) -> str:
    return _existing(path, where, fix, (stat.S_ISREG, stat.S_ISFIFO), "file")


def local_path(path: str, where: str, fix: str) -> str:
    return _existing(path, where, fix, (stat.S_ISREG, stat.S_ISDIR), "file or directory")


def local_dir(path: str, where: str, fix: str) -> str:
    st = _stat(_name(path, where, fix), where, fix)
    if st is None or not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{where} {excerpt(path)}: " + ("no such directory" if st is None else
                                                        f"{_kind(st)}, not a directory"), fix)
    return path


def _writable_dir(d: str, where: str, path: str, fix: str) -> None:
    """Whether a file can be made in d: the one sure test (root's access() says yes for /proc)
    is to make one, a hidden temporary removed at once."""
    # lazy: tempfile (with random) costs ~1.5 ms CPU at start-up (issue 26); only a write needs it
    import tempfile
    try:
        fd, tmp = tempfile.mkstemp(prefix=".envcheck-probe.", dir=d)
    except OSError as e:
        raise UsageError(f"{where} {excerpt(path)}: cannot write in {excerpt(d)}: {e.strerror}",
                         "choose a writable directory") from None
    os.close(fd)
    os.unlink(tmp)


def _parent(path: str) -> str:
    return os.path.dirname(os.path.abspath(path)) or "/"


def out_file(path: str, where: str, fix: str) -> str:
    _name(path, where, fix)
    if path in STD_FDS:
        return path
    st = _stat(path, where, fix)
    if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        if not os.access(path, os.W_OK):
            raise UsageError(f"{where} {excerpt(path)} is {_kind(st)} this user cannot write", fix)
        return path
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise UsageError(f"{where} {excerpt(path)} is {_kind(st)}, not a file", fix)
    target = os.path.realpath(path) if st is not None else os.path.abspath(path)
    d = _parent(target)
    dst = _stat(d, where, fix)
    if dst is None or not stat.S_ISDIR(dst.st_mode):
        raise UsageError(f"{where} {excerpt(path)}: directory {excerpt(d)} does not exist",
                         "create it or choose another path")
    _writable_dir(d, where, path, fix)
    return path


def out_dir(path: str, where: str, fix: str) -> str:
    st = _stat(_name(path, where, fix), where, fix)
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{where} {excerpt(path)} is {_kind(st)}, not a directory", fix)
        _writable_dir(path, where, path, fix)
        return path
    d = _parent(path)
    dst = _stat(d, where, fix)
    if dst is None or not stat.S_ISDIR(dst.st_mode):
        raise UsageError(f"{where} {excerpt(path)}: its parent {excerpt(d)} does not exist "
                         "(envcheck makes the last directory only)", "create the parent first")
    _writable_dir(d, where, path, fix)
    return path


def make_out_dir(path: str, where: str) -> str:
    """The directory an out_dir names, made now if it is not there (its parent only must be)."""
    try:
        os.mkdir(path, 0o777)
    except FileExistsError:
        if not os.path.isdir(path):
            raise OutputError(f"{where} {excerpt(path)}: not a directory", "choose a directory") from None
    except OSError as e:
        raise OutputError(f"{where} {excerpt(path)}: cannot create it: {e.strerror}",
                          "choose a writable directory") from None
    return path


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def write_output(path: str, data: Union[str, bytes], where: str) -> None:
    """Write a report to what out_file() accepted, without replacing what must not be."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if path in STD_FDS:
            for stream in (sys.stdout, sys.stderr):   # keep the order of what was printed
                if stream is not None:
                    stream.flush()
            _write_all(STD_FDS[path], raw)
            return
        st = os.stat(path) if os.path.exists(path) else None
        if st is not None and (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            _write_in_place(path, raw)
        elif st is not None and not stat.S_ISREG(st.st_mode):
            raise OutputError(f"{where} {excerpt(path)} is {_kind(st)} now; not writing to it",
                              "name a file")
        else:
            _replace(os.path.realpath(path), raw, st)
    except OSError as e:
        raise OutputError(f"{where} {excerpt(path)}: cannot write: {e.strerror}",
                          "check the path, the free space and the permissions") from None


def _write_in_place(path: str, raw: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as e:
        if e.errno == 6:   # ENXIO: a FIFO that nobody has open for reading
            raise OutputError(f"{excerpt(path)} is a FIFO that no process reads",
                              "start the reader first") from None
        raise
    try:
        os.set_blocking(fd, True)
        _write_all(fd, raw)
    finally:
        os.close(fd)


def _replace(target: str, raw: bytes, st: Optional[os.stat_result]) -> None:
    """Write beside the target and rename over it: a reader (node_exporter, CI) never sees half
    a file. The temporary starts with '.' and ends in .tmp: node_exporter's collector skips it."""
    d = _parent(target)
    import tempfile  # lazy: as in _writable_dir, ~1.5 ms
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.", suffix=".tmp", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        # a new report is readable by all (node_exporter runs as its own user); a replaced one
        # keeps its mode
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
