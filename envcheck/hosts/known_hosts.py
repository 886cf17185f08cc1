"""known_hosts as OpenSSH uses it, not as Fabric 3 does (it loads none and accepts any key):
the files are read once per run, a CHANGED key is refused, a new host is accepted and appended
(accept-new) under a file lock, and strict mode refuses new hosts.

The check is ours, made in a paramiko MissingHostKeyPolicy (its public hook): each client's own
host-key tables stay empty, so paramiko asks the policy for every connection and the policy
compares against the files read once here."""
from __future__ import annotations

import fcntl
import hmac
import os
import threading
from typing import List, Tuple

import paramiko

from envcheck.errors import UsageError

SYSTEM_FILE = "/etc/ssh/ssh_known_hosts"


class UnknownHostKey(paramiko.SSHException):
    pass


class KnownHosts:
    """known_hosts files, read once per run and shared by every connection. New hosts are
    appended to the first file (as OpenSSH does), one line, under an flock so parallel
    connections and other processes never interleave or clobber it."""

    def __init__(self, files: Tuple[str, ...]):
        self.files = files
        self._user: List[paramiko.hostkeys.HostKeyEntry] = []
        self._system: List[paramiko.hostkeys.HostKeyEntry] = []
        self._lock = threading.Lock()
        self.added: List[Tuple[str, str, str]] = []   # (name, key type, file) accepted this run
        for f in files:
            if os.path.isfile(f):
                self._user.extend(_read(f))
        if os.path.isfile(SYSTEM_FILE):
            self._system.extend(_read(SYSTEM_FILE))

    def lookup(self, name: str, keytype: str) -> List[paramiko.PKey]:
        """The keys of that type recorded for `name` ('host' or '[host]:port', as paramiko names
        it), user files first, then the system file — paramiko's own order."""
        with self._lock:
            for entries in (self._user, self._system):
                keys = [e.key for e in entries
                        if e.key is not None and e.key.get_name() == keytype and _matches(e, name)]
                if keys:
                    return keys
        return []

    def check(self, name: str, key: paramiko.PKey, strict: bool) -> None:
        """Accept a recorded key, refuse a changed one, and record (or, strict, refuse) a new one."""
        known = self.lookup(name, key.get_name())
        if known:
            if not any(k.get_base64() == key.get_base64() for k in known):
                raise paramiko.BadHostKeyException(name, key, known[0])
            return
        if strict:
            raise UnknownHostKey(name)
        self.remember(name, key)

    def remember(self, name: str, key: paramiko.PKey) -> None:
        path = self.files[0]
        line = f"{name} {key.get_name()} {key.get_base64()}\n"
        with self._lock:
            self._user.append(paramiko.hostkeys.HostKeyEntry([name], key))
            self.added.append((name, key.get_name(), path))
            d = os.path.dirname(path)
            if d and not os.path.isdir(d):
                os.makedirs(d, mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                # a file not ending in a newline would glue our line onto its last one
                if os.fstat(fd).st_size > 0:
                    with open(path, "rb") as r:
                        r.seek(-1, os.SEEK_END)
                        if r.read(1) != b"\n":
                            line = "\n" + line
                os.write(fd, line.encode())
                os.fsync(fd)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
                os.close(fd)


class Policy(paramiko.MissingHostKeyPolicy):
    """Every host-key decision of a connection, against the run's KnownHosts."""

    def __init__(self, known: KnownHosts, strict: bool):
        self.known, self.strict = known, strict

    def missing_host_key(self, client, hostname, key):  # noqa: ANN001 - paramiko's signature
        self.known.check(hostname, key, self.strict)


def _read(path: str) -> List[paramiko.hostkeys.HostKeyEntry]:
    """Like HostKeys.load, but a line paramiko cannot parse (@cert-authority, @revoked, a key
    type it lacks) is skipped instead of making the whole file unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise UsageError(f"cannot read known_hosts file {path}: {e.strerror}", "fix or move the file") from e
    out = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith(("#", "@")):
            continue
        try:
            entry = paramiko.hostkeys.HostKeyEntry.from_line(line)
        except Exception:  # noqa: BLE001 - InvalidHostKey, SSHException, binascii errors
            continue
        if entry is not None:
            out.append(entry)
    return out


def _matches(entry: paramiko.hostkeys.HostKeyEntry, name: str) -> bool:
    for h in entry.hostnames:
        if h == name:
            return True
        if h.startswith("|1|") and hmac.compare_digest(paramiko.HostKeys.hash_host(name, h), h):
            return True  # HashKnownHosts yes
    return False
