"""The staging directory of one run on one node: where install-cuda and install-cudnn put the
runfile or archive they install from, and the installer's scratch and output.

Each run makes its own with `mktemp -d` under --tmpdir: a random name (nothing for another user
to plant in advance in a world-writable /var/tmp), mode 700, owned by the login user. Two runs on
one host, or many hosts sharing one --tmpdir (an NFS scratch), therefore never touch each
other's files, and a run removes that directory, and only it, when it ends.

Plans are built before any node is touched, so their commands name the directory by SENTINEL;
`bind` puts the real path in once it exists, `shown` puts a readable pattern in for --dry-run.
"""
from __future__ import annotations

import re
import shlex
from typing import Optional

from envcheck.errors import UsageError

SENTINEL = "/@envcheck-stage@"
# the real directory replaces SENTINEL inside already-quoted shell words, so --tmpdir (its
# prefix) may hold only characters that need no quoting anywhere
_SAFE_DIR = re.compile(r"/[A-Za-z0-9._+/-]*")


def check_tmpdir(tmpdir: Optional[str], where: str = "--tmpdir",
                 fix: str = "pass an absolute directory on a local disk, e.g. --tmpdir /var/tmp") -> str:
    """An absolute directory path of plain characters, else a UsageError naming it."""
    if tmpdir is None or not tmpdir.strip():
        raise UsageError(f"{where} is empty", fix)
    if not tmpdir.startswith("/"):
        raise UsageError(f"{where} {tmpdir!r} is relative: it would depend on the login's working directory", fix)
    if not _SAFE_DIR.fullmatch(tmpdir) or "/../" in tmpdir + "/" or len(tmpdir) > 200:
        raise UsageError(f"{where} {tmpdir!r} has characters other than letters, digits and ._+-/ "
                         "(or a '..' part, or is over 200 characters)", fix)
    return tmpdir.rstrip("/") or "/"


def shown(text: str, tmpdir: str, host: str) -> str:
    """`text` with SENTINEL replaced by what the directory will look like (for --dry-run), as a
    mktemp template: `envcheck.HOST.XXXXXXXXXX` (the node's name there), the same on every node
    so that identical plans print once."""
    return text.replace(SENTINEL, f"{tmpdir.rstrip('/')}/envcheck.HOST.XXXXXXXXXX")


def bind(command: str, stage: str) -> str:
    return command.replace(SENTINEL, stage)


def _host_word(host: str) -> str:
    return re.sub(r"[^A-Za-z0-9.-]", "_", host)[:40] or "node"


def open_command(tmpdir: str, host: str) -> str:
    """Node-side: create the run's directory and print `stage=PATH`. The host name in it is for
    whoever finds it after a crash; the random part is what makes it unique."""
    d = tmpdir.rstrip("/") or "/"
    template = shlex.quote(f"{d.rstrip('/')}/envcheck.{_host_word(host)}.XXXXXXXXXX")
    # --tmpdir must exist: a typo there is said, never made (with its parents) as root
    return (f"D={shlex.quote(d)}; [ -d \"$D\" ] || {{ echo \"--tmpdir $D is not a directory on this node "
            "(envcheck makes no parents; create it or pass another --tmpdir)\" >&2; exit 1; }; "
            f"S=$(mktemp -d {template}) || exit 1; "
            "chmod 700 \"$S\" && [ -O \"$S\" ] && [ ! -L \"$S\" ] && echo \"stage=$S\"")


def parse_open(stdout: str, tmpdir: str) -> Optional[str]:
    """The path `open_command` printed, if it is a fresh directory right under tmpdir."""
    d = tmpdir.rstrip("/")
    for line in stdout.splitlines():
        if line.startswith("stage="):
            path = line[len("stage="):].strip()
            if re.fullmatch(re.escape(d) + r"/envcheck\.[A-Za-z0-9._-]+", path):
                return path
    return None


def close_command(stage: str) -> str:
    """Remove the run's directory: exactly the path it created, nothing else."""
    return f"rm -rf -- {shlex.quote(stage)}"
