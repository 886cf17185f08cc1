"""SSH transport: the only module that imports Fabric and paramiko.

Fabric's Connection opens each session (with our socket, keys and host-key policy); commands run
on a paramiko channel of that connection rather than through fabric.Connection.run, because we
need a hard bound on every step (connect, banner, auth, command) and stdin that reaches EOF,
which invoke's runner does not give us.

Host keys follow OpenSSH, not Fabric 3 (which loads no known_hosts and accepts anything): the
user's known_hosts (or ssh_config's UserKnownHostsFile) is loaded, a CHANGED key is refused, a new
host is accepted and appended (accept-new) under a file lock, and strict mode refuses new hosts.

Connect uses a socket of our own with TCP_NODELAY (paramiko leaves Nagle on: connect + auth is
~4x slower, see bench/ssh_connect.py) and a connect timeout, handed to paramiko as `sock=`.
Failures are data: run() returns a RunResult whose `error` names the reason in one line.
"""
from __future__ import annotations

import fcntl
import logging
import os
import re
import shlex
import socket
import stat
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import fabric
import paramiko

from envcheck.errors import RemoteError, UsageError
from envcheck.hostlist import Target
from envcheck.remote import DEFAULT_TIMEOUT, Remote, RunResult, fan_out

# paramiko logs handshake failures with tracebacks; we report them as one line instead
logging.getLogger("paramiko").addHandler(logging.NullHandler())

DEFAULT_FORKS = 32
DEFAULT_CONNECT_TIMEOUT = 10.0
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class SSHOptions:
    """How to reach hosts. CLI flags override ssh_config; `user@host:port` overrides both."""

    ssh_config: Optional[str] = None       # default ~/.ssh/config when it exists
    user: Optional[str] = None
    port: Optional[int] = None
    identity: Optional[str] = None
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    timeout: float = DEFAULT_TIMEOUT        # per remote command
    strict_host_keys: bool = False
    forks: int = DEFAULT_FORKS
    known_hosts: Optional[str] = None      # overrides ssh_config's UserKnownHostsFile
    nodelay: bool = True                    # TCP_NODELAY; off only to measure the difference
    remote_kill: bool = True                # the node kills a command that outlives its timeout
    _cache: Dict[str, object] = field(default_factory=dict, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def validate(self) -> None:
        """Usage problems found before any host is contacted: one line, exit 2, not N reports."""
        if self.identity and not os.path.isfile(os.path.expanduser(self.identity)):
            raise UsageError(f"identity file {self.identity} does not exist", "check the --identity path")
        if self.known_hosts and os.path.isdir(self.known_hosts):
            raise UsageError(f"known_hosts {self.known_hosts} is a directory",
                             "point UserKnownHostsFile (ssh_config) at a file, e.g. ~/.ssh/known_hosts")
        self.ssh_config_obj()

    def ssh_config_obj(self) -> paramiko.SSHConfig:
        with self._lock:
            if "cfg" not in self._cache:
                path = self.ssh_config or os.path.expanduser("~/.ssh/config")
                if self.ssh_config and not os.path.isfile(path):
                    raise UsageError(f"ssh config {path} does not exist", "check the --ssh-config path")
                try:
                    self._cache["cfg"] = (paramiko.SSHConfig.from_path(path) if os.path.isfile(path)
                                          else paramiko.SSHConfig())
                except (OSError, Exception) as e:  # paramiko raises assorted errors on bad syntax
                    raise UsageError(f"cannot parse ssh config {path}: {e}", "fix the file or pass --ssh-config") from e
            return self._cache["cfg"]  # type: ignore[return-value]

    def host_keys(self, files: Tuple[str, ...]) -> "KnownHosts":
        with self._lock:
            key = "kh:" + "\0".join(files)
            if key not in self._cache:
                self._cache[key] = KnownHosts(files)
            return self._cache[key]  # type: ignore[return-value]


@dataclass
class Resolved:
    """A target after ssh_config: where to connect, as whom, with which keys."""

    label: str
    hostname: str
    port: int
    user: str
    identities: List[str]
    identities_only: bool
    known_hosts: Tuple[str, ...]
    strict: bool
    proxied: bool  # ProxyCommand/ProxyJump in ssh_config: not supported, reported


def resolve(target: Target, options: SSHOptions) -> Resolved:
    cfg = options.ssh_config_obj().lookup(target.host)
    user = target.user or options.user or cfg.get("user") or _local_user()
    port = target.port or options.port or int(cfg.get("port", 22))
    if options.identity:
        identities, only = [os.path.expanduser(options.identity)], True
    else:
        identities = [os.path.expanduser(p) for p in cfg.get("identityfile", [])]
        identities = [p for p in identities if os.path.exists(p)]
        only = str(cfg.get("identitiesonly", "no")).lower() == "yes"
    if options.known_hosts:
        kh = (os.path.expanduser(options.known_hosts),)
    elif cfg.get("userknownhostsfile"):
        kh = tuple(os.path.expanduser(p) for p in str(cfg["userknownhostsfile"]).split())
    else:
        kh = (os.path.expanduser("~/.ssh/known_hosts"),)
    strict = options.strict_host_keys or str(cfg.get("stricthostkeychecking", "")).lower() == "yes"
    return Resolved(label=target.label, hostname=cfg.get("hostname", target.host), port=port, user=user,
                    identities=identities, identities_only=only, known_hosts=kh, strict=strict,
                    proxied=bool(cfg.get("proxycommand") or cfg.get("proxyjump")))


def _local_user() -> str:
    import getpass
    return getpass.getuser()


class KnownHosts:
    """known_hosts files, read once per run and shared by every connection. New hosts are
    appended to the first file (as OpenSSH does), one line, under an flock so parallel
    connections and other processes never interleave or clobber it."""

    def __init__(self, files: Tuple[str, ...]):
        self.files = files
        self.keys = paramiko.HostKeys()
        self.system = paramiko.HostKeys()
        self._lock = threading.Lock()
        for f in files:
            if os.path.isfile(f):
                self._load(self.keys, f)
        if os.path.isfile("/etc/ssh/ssh_known_hosts"):
            self._load(self.system, "/etc/ssh/ssh_known_hosts")

    @staticmethod
    def _load(into: paramiko.HostKeys, path: str) -> None:
        """Like HostKeys.load, but a line paramiko cannot parse (@cert-authority, @revoked, a key
        type it lacks) is skipped instead of making the whole file unreadable."""
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise UsageError(f"cannot read known_hosts file {path}: {e.strerror}", "fix or move the file") from e
        for line in lines:
            line = line.strip()
            if not line or line.startswith(("#", "@")):
                continue
            try:
                entry = paramiko.hostkeys.HostKeyEntry.from_line(line)
            except Exception:  # noqa: BLE001 - InvalidHostKey, SSHException, binascii errors
                continue
            if entry is not None:
                into._entries.append(entry)

    def remember(self, name: str, key: paramiko.PKey) -> None:
        path = self.files[0]
        line = f"{name} {key.get_name()} {key.get_base64()}\n"
        with self._lock:
            self.keys.add(name, key.get_name(), key)
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


class UnknownHostKey(paramiko.SSHException):
    pass


class _Policy(paramiko.MissingHostKeyPolicy):
    def __init__(self, known: KnownHosts, strict: bool):
        self.known, self.strict = known, strict

    def missing_host_key(self, client, hostname, key):  # noqa: ANN001 - paramiko's signature
        if self.strict:
            raise UnknownHostKey(hostname)
        self.known.remember(hostname, key)


_FABRIC_CONFIG: Optional["fabric.Config"] = None


def _fabric_config() -> "fabric.Config":
    """One Fabric config for every connection, with Fabric's own ssh_config loading off: we
    resolve ssh_config ourselves (--ssh-config, overrides) before a connection is made."""
    global _FABRIC_CONFIG
    if _FABRIC_CONFIG is None:
        _FABRIC_CONFIG = fabric.Config(overrides={"load_ssh_configs": False})
    return _FABRIC_CONFIG


class SSHRemote(Remote):
    """One host over SSH. Connects lazily on first use; connection problems become the `error`
    of every RunResult (and a RemoteError from put())."""

    def __init__(self, target: Union[Target, str], options: Optional[SSHOptions] = None):
        if isinstance(target, str):
            from envcheck.hostlist import parse_target
            target = parse_target(target)
        self.target = target
        self.options = options or SSHOptions()
        self.name = target.label
        self._client: Optional[paramiko.SSHClient] = None
        self._conn_error: Optional[str] = None
        self._lock = threading.Lock()
        self.connect_seconds: Optional[float] = None

    # ---- connection -----------------------------------------------------------------------
    def connect(self) -> Optional[str]:
        """Open the connection if not yet open. Returns None, or why it could not be opened."""
        with self._lock:
            if self._client is not None or self._conn_error is not None:
                return self._conn_error
            start = time.monotonic()
            try:
                self._client = self._open()
            except UsageError:
                raise
            except Exception as e:  # noqa: BLE001 - every failure becomes one line of data
                self._conn_error = self._describe(e)
            self.connect_seconds = time.monotonic() - start
            return self._conn_error

    def _open(self) -> paramiko.SSHClient:
        opts = self.options
        r = resolve(self.target, opts)
        self.resolved = r
        if r.proxied:
            raise _Why(f"ProxyCommand/ProxyJump in ssh_config for {self.target.host} is not supported; "
                       "connect to the node directly")
        known = opts.host_keys(r.known_hosts)
        t = opts.connect_timeout
        deadline = time.monotonic() + t
        sock = socket.create_connection((r.hostname, r.port), timeout=t)
        # one bound for the whole handshake (TCP + banner + kex + auth), not one per step:
        # a hung node costs the connect timeout once
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

        dog = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
        dog.daemon = True
        dog.start()
        try:
            if opts.nodelay:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            # Fabric's Connection opens the session; everything it would decide by default is
            # decided here instead: our socket (TCP_NODELAY, one deadline), our host-key policy
            # (Fabric 3's default AutoAddPolicy would accept any key), our ssh_config reading.
            conn = fabric.Connection(
                r.hostname, user=r.user, port=r.port, connect_timeout=t, config=_fabric_config(),
                connect_kwargs=dict(sock=sock, banner_timeout=t, auth_timeout=t, channel_timeout=t,
                                    key_filename=r.identities or None,
                                    look_for_keys=not r.identities,
                                    allow_agent=not r.identities_only, compress=False))
            client = conn.client
            client._system_host_keys = known.system  # shared, parsed once per run
            client._host_keys = known.keys
            client.set_missing_host_key_policy(_Policy(known, r.strict))
            conn.open()
        except BaseException as e:
            dog.cancel()
            sock.close()
            if expired.is_set() and not isinstance(e, (paramiko.BadHostKeyException, UnknownHostKey)):
                raise socket.timeout() from e
            raise
        dog.cancel()
        tr = client.get_transport()
        if tr is not None:
            tr.set_keepalive(15)
        return client

    def _describe(self, e: Exception) -> str:
        t = self.options.connect_timeout
        r = getattr(self, "resolved", None)
        host = f"{r.hostname}:{r.port}" if r else self.target.host
        kh = r.known_hosts[0] if r else "~/.ssh/known_hosts"
        if isinstance(e, _Why):
            return str(e)
        if isinstance(e, ConnectionRefusedError):
            return f"unreachable: connection refused ({host}: is sshd running?)"
        if isinstance(e, socket.gaierror):
            return f"unreachable: cannot resolve {self.target.host} (check the name or its ssh_config HostName)"
        if isinstance(e, (socket.timeout, TimeoutError)):
            return f"timed out connecting after {t:g} s ({host})"
        if isinstance(e, OSError) and e.errno in (113, 101):  # EHOSTUNREACH, ENETUNREACH
            return f"unreachable: {e.strerror.lower()} ({host})"
        if isinstance(e, paramiko.BadHostKeyException):
            name = self.target.host if not r else (r.hostname if r.port == 22 else f"[{r.hostname}]:{r.port}")
            return (f"host key for {name} has CHANGED (possible MITM): refused; if the node was reinstalled, "
                    f"remove the old key with `ssh-keygen -R {shlex.quote(name)} -f {kh}` and run again")
        if isinstance(e, UnknownHostKey):
            return (f"unknown host key (--strict-host-keys): {self.target.host} is not in {kh}; "
                    f"add it with `ssh-keyscan -p {r.port if r else 22} {r.hostname if r else self.target.host} >> {kh}` after checking it")
        if isinstance(e, paramiko.PasswordRequiredException):
            return f"authentication failed for {r.user if r else '?'}: the identity needs a passphrase (load it into ssh-agent)"
        if isinstance(e, paramiko.AuthenticationException):
            return (f"authentication failed for {r.user if r else '?'}@{self.target.host} "
                    "(check --user/--identity or the node's authorized_keys)")
        if isinstance(e, paramiko.SSHException) and ("banner" in str(e).lower() or "no existing session" in str(e).lower()):
            return f"timed out connecting after {t:g} s ({host}: no SSH banner)"
        if isinstance(e, EOFError) or (isinstance(e, paramiko.SSHException) and "closed" in str(e).lower()):
            return f"unreachable: {host} closed the connection during the handshake"
        if isinstance(e, OSError):
            return f"unreachable: {e.strerror or e} ({host})"
        return f"ssh error: {type(e).__name__}: {e}"

    # ---- commands -------------------------------------------------------------------------
    def run(self, command: str, *, stdin: Union[str, bytes, None] = None,
            timeout: Optional[float] = None, env: Optional[Mapping[str, str]] = None,
            on_stdout: Optional[Callable[[bytes], None]] = None) -> RunResult:
        timeout = self.options.timeout if timeout is None else timeout
        start = time.monotonic()
        err = self.connect()
        if err:
            return RunResult(self.name, command, None, error=err, duration=time.monotonic() - start)
        full = _with_env(command, env)
        if self.options.remote_kill:
            full = _remote_timeout(full, timeout)
        try:
            chan = self._client.get_transport().open_session(timeout=self.options.connect_timeout)
        except Exception as e:  # noqa: BLE001
            self._drop()
            return RunResult(self.name, command, None, error=f"lost connection: {e}",
                             duration=time.monotonic() - start)
        out: List[bytes] = []
        errb: List[bytes] = []
        timed_out = threading.Event()

        def watchdog() -> None:
            timed_out.set()
            try:
                chan.close()  # unblocks every read below
            except (EOFError, OSError, paramiko.SSHException):
                pass  # the connection is already gone: the reads are unblocked anyway

        dog = threading.Timer(timeout, watchdog)
        dog.daemon = True
        dog.start()
        try:
            chan.settimeout(timeout)
            chan.exec_command(full)
            data = stdin.encode() if isinstance(stdin, str) else stdin
            writer = threading.Thread(target=_feed, args=(chan, data), daemon=True)
            writer.start()
            reader = threading.Thread(target=_drain, args=(chan.recv_stderr, errb), daemon=True)
            reader.start()
            _drain(chan.recv, out, on_stdout)
            reader.join(timeout)
            code = chan.recv_exit_status() if not timed_out.is_set() and chan.status_event.wait(
                max(0.0, timeout - (time.monotonic() - start))) else None
        except Exception as e:  # noqa: BLE001
            if not timed_out.is_set():
                dog.cancel()
                return RunResult(self.name, command, None, _dec(out), _dec(errb),
                                 error=f"lost connection: {e}", duration=time.monotonic() - start)
            code = None
        finally:
            dog.cancel()
            try:
                chan.close()
            except (EOFError, OSError, paramiko.SSHException):
                pass
        result = RunResult(self.name, command, code, _dec(out), _dec(errb), duration=time.monotonic() - start)
        if code == -1 and not timed_out.is_set():  # no exit status came: the session died
            tr = self._client.get_transport() if self._client else None
            result.exit_code = None
            if tr is None or not tr.is_active():
                self._drop()
                result.error = "lost connection to the host during the command"
            else:
                result.error = "the remote shell was killed by a signal"
            return result
        if timed_out.is_set() or code is None:
            result.exit_code = None
            result.error = f"command timed out after {timeout:g} s"
        return result

    def put(self, local_path: str, remote_path: str,
            progress: Optional[Callable[[int, int], None]] = None) -> None:
        """Upload over SFTP to REMOTE.envcheck-part, then rename into place: a half-sent file
        never carries the final name. Raises RemoteError naming the host and the reason."""
        err = self.connect()
        if err:
            raise RemoteError(f"{self.name}: {err}")
        part = remote_path + ".envcheck-part"
        try:
            sftp = self._client.open_sftp()
            try:
                sftp.get_channel().settimeout(self.options.timeout)
                mode = stat.S_IMODE(os.stat(local_path).st_mode)
                sftp.put(local_path, part, callback=progress, confirm=True)
                sftp.chmod(part, mode)
                sftp.posix_rename(part, remote_path)
            finally:
                sftp.close()
        except FileNotFoundError as e:
            if not os.path.exists(local_path):
                raise RemoteError(f"cannot upload {local_path}: no such file") from e
            raise RemoteError(f"{self.name}: cannot write {remote_path}: no such directory") from e
        except (OSError, paramiko.SSHException, EOFError) as e:
            raise RemoteError(f"{self.name}: upload of {local_path} to {remote_path} failed: {e}") from e

    def _drop(self) -> None:
        with self._lock:
            if self._client:
                self._client.close()
            self._client = None

    def close(self) -> None:
        self._drop()


class _Why(Exception):
    """A reason we found ourselves, already worded."""


def _feed(chan: paramiko.Channel, data: Optional[bytes]) -> None:
    try:
        if data:
            chan.sendall(data)
        chan.shutdown_write()  # EOF: `python3 -` must see the end of the probe
    except (OSError, EOFError, paramiko.SSHException):
        pass


def _drain(recv: Callable[[int], bytes], into: List[bytes],
           live: Optional[Callable[[bytes], None]] = None) -> None:
    """Read until EOF into `into`, or, with `live`, hand each chunk over as it arrives."""
    while True:
        try:
            chunk = recv(65536)
        except socket.timeout:
            return
        if not chunk:
            return
        if live is not None:
            live(chunk)
        else:
            into.append(chunk)


def _dec(parts: List[bytes]) -> str:
    return b"".join(parts).decode("utf-8", "replace")


REMOTE_GRACE = 1.0  # the controller reports the timeout first; the node kills just after


def _remote_timeout(command: str, timeout: float) -> str:
    """Run `command` in the user's own shell, as before, but under coreutils `timeout` when the
    node has it: closing the channel does not stop a remote process (sshd sends no signal to a
    session without a pty, and ignores the SSH "signal" request), so without this a timed-out
    command would run on. `timeout` kills its whole process group, grandchildren included.
    The outer `sh -c` keeps this working when the login shell is csh or fish."""
    secs = int(timeout + REMOTE_GRACE + 0.999)
    wrapper = ('if command -v timeout >/dev/null 2>&1; then exec timeout -k 5 %d "${SHELL:-/bin/sh}" -c "$0"; '
               'else exec "${SHELL:-/bin/sh}" -c "$0"; fi' % secs)
    return f"sh -c {shlex.quote(wrapper)} {shlex.quote(command)}"


def _with_env(command: str, env: Optional[Mapping[str, str]]) -> str:
    if not env:
        return command
    exports = []
    for k, v in env.items():
        if not _ENV_NAME.match(k):
            raise UsageError(f"bad environment variable name {k!r}", "use letters, digits and _")
        exports.append(f"export {k}={shlex.quote(str(v))}")
    return "; ".join(exports) + "; " + command


# ---- many hosts ----------------------------------------------------------------------------
def make_remotes(targets: Sequence[Target], options: SSHOptions) -> List[SSHRemote]:
    """One SSHRemote per target, sharing the options (and so one parse of ssh_config and
    known_hosts). Raises UsageError for a bad --identity or ssh_config before any connection."""
    options.validate()
    return [SSHRemote(t, options) for t in targets]


def connect_all(remotes: Sequence[SSHRemote], forks: Optional[int] = None,
                on_done: Optional[Callable[[SSHRemote, Optional[str]], None]] = None) -> List[Optional[str]]:
    """Open every connection, at most `forks` at once; per host None or the reason it failed.
    A dead host costs at most the connect timeout."""
    forks = forks or (remotes[0].options.forks if remotes else DEFAULT_FORKS)
    cb = (lambda r, res: on_done(r, res if not isinstance(res, BaseException) else str(res))) if on_done else None
    res = fan_out(list(remotes), lambda r: r.connect(), forks, on_done=cb)
    return [r if not isinstance(r, BaseException) else f"ssh error: {r}" for r in res]


def run_on_all(remotes: Sequence[SSHRemote], command: Union[str, Callable[[SSHRemote], str]], *,
               stdin: Union[str, bytes, None] = None, timeout: Optional[float] = None,
               env: Optional[Mapping[str, str]] = None, forks: Optional[int] = None,
               on_done: Optional[Callable[[SSHRemote, RunResult], None]] = None) -> List[RunResult]:
    """Connect (if needed) and run one command per host, at most `forks` hosts at once; results
    in input order, failures as RunResult.error. `command` may be a function of the remote."""
    forks = forks or (remotes[0].options.forks if remotes else DEFAULT_FORKS)

    def one(r: SSHRemote) -> RunResult:
        cmd = command(r) if callable(command) else command
        return r.run(cmd, stdin=stdin, timeout=timeout, env=env)

    results = fan_out(list(remotes), one, forks, on_done=on_done)
    return [res if isinstance(res, RunResult) else
            RunResult(r.name, "", None, error=f"internal error: {type(res).__name__}: {res}")
            for r, res in zip(remotes, results)]


def close_all(remotes: Sequence[Remote]) -> None:
    for r in remotes:
        try:
            r.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
