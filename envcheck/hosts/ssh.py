"""One host over SSH: SSHRemote, the Remote that every multi-host command uses.

Fabric's Connection opens each session (with our socket, keys and host-key policy); commands run
on a paramiko channel of that connection rather than through fabric.Connection.run, because we
need a hard bound on every step (connect, banner, auth, command) and stdin that reaches EOF,
which invoke's runner does not give us.

Connect uses a socket of our own with TCP_NODELAY (paramiko leaves Nagle on: connect + auth is
~4x slower, see bench/ssh_connect.py) and a connect timeout, handed to paramiko as `sock=`; behind a
bastion, the socket is a channel through the jump host (ProxyJump) or the user's ProxyCommand
(envcheck/hosts/proxy.py).
Failures are data: run() returns a RunResult whose `error` names the reason in one line.
"""
from __future__ import annotations

import logging
import os
import re
import shlex
import socket
import stat
import threading
import time
from typing import Callable, List, Mapping, Optional, Sequence, Union

import fabric
import paramiko

from envcheck.errors import RemoteError, UsageError
from envcheck.hostlist import Target, parse_target
from envcheck.hosts.known_hosts import Policy, UnknownHostKey
from envcheck.hosts.options import Resolved, SSHContext, SSHOptions, resolve
from envcheck.hosts.proxy import ProxyFailed, abort, open_socket
from envcheck.remote import Remote, RunResult

# paramiko logs handshake failures with tracebacks; we report them as one line instead
logging.getLogger("paramiko").addHandler(logging.NullHandler())

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_FABRIC_CONFIG: Optional["fabric.Config"] = None


def _fabric_config() -> "fabric.Config":
    """The Fabric config for one connection, with Fabric's own ssh_config loading off: we resolve
    ssh_config ourselves (--ssh-config, overrides) before a connection is made.

    A copy per connection, never one shared object: fabric.Connection() writes to its config
    (`self.inline_ssh_env = ...` is not a class attribute, so invoke's DataProxy turns it into a
    config modification, and every modification re-merges the config from an empty dict), so a
    connection being made in one thread could read `gateway`, `user` or `connect_kwargs` from
    another thread's config while it was empty: "No attribute or config key found for
    'gateway'" on some hosts of a fan-out (seen in CI). The base is built once; a clone costs
    about 0.2 ms."""
    global _FABRIC_CONFIG
    if _FABRIC_CONFIG is None:
        _FABRIC_CONFIG = fabric.Config(overrides={"load_ssh_configs": False})
    return _FABRIC_CONFIG.clone()


class SSHRemote(Remote):
    """One host over SSH. Connects lazily on first use; connection problems become the `error`
    of every RunResult (and a RemoteError from put())."""

    def __init__(self, target: Union[Target, str], options: Optional[SSHOptions] = None,
                 context: Optional[SSHContext] = None, via: Optional["SSHRemote"] = None,
                 follow_proxy: bool = True):
        if isinstance(target, str):
            target = parse_target(target)
        self.target = target
        self.context = context or SSHContext(options or SSHOptions())
        self.options = self.context.options
        self.name = target.label
        self.resolved: Optional[Resolved] = None
        self._client: Optional[paramiko.SSHClient] = None
        self._conn_error: Optional[str] = None
        self._lock = threading.Lock()
        # the previous hop of a ProxyJump chain, or the jump host taken for ssh_config's ProxyJump
        self.via = via
        self.follow_proxy = follow_proxy   # False for a jump host: its own proxies are not followed
        self._jump_spec: Optional[str] = None

    # ---- connection -----------------------------------------------------------------------
    def connect(self) -> Optional[str]:
        """Open the connection if not yet open. Returns None, or why it could not be opened."""
        with self._lock:
            if self._client is not None or self._conn_error is not None:
                return self._conn_error
            try:
                self._client = self._open()
            except UsageError:
                raise
            except Exception as e:  # noqa: BLE001 - every failure becomes one line of data
                self._conn_error = self._describe(e)
            return self._conn_error

    def _open(self) -> paramiko.SSHClient:
        opts = self.options
        r = self.resolved = resolve(self.target, opts, self.context.ssh_config)
        if not self.follow_proxy:
            r.proxy_jump = r.proxy_command = None
        if r.proxy_jump and self.via is None:
            self._jump_spec = r.proxy_jump
            self.via = self.context.jumps.get(r.proxy_jump)
        known = self.context.known_hosts(r.known_hosts)
        t = opts.connect_timeout
        deadline = time.monotonic() + t
        sock = open_socket(r, t, opts.nodelay, self.via)
        if self.via is not None:   # the jump host had its own connect timeout
            deadline = time.monotonic() + t
        # one bound for the whole handshake (TCP + banner + kex + auth), not one per step:
        # a hung node costs the connect timeout once
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            abort(sock)

        dog = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
        dog.daemon = True
        dog.start()
        try:
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
            # the client's own host-key tables stay empty, so every key goes to our policy
            client.set_missing_host_key_policy(Policy(known, r.strict))
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
        r = self.resolved
        host = f"{r.hostname}:{r.port}" if r else self.target.host
        kh = r.known_hosts[0] if r else "~/.ssh/known_hosts"
        if isinstance(e, (_Why, ProxyFailed)):
            return str(e)
        if r and r.proxy_command and isinstance(e, (paramiko.ProxyCommandFailure, EOFError, paramiko.SSHException)) \
                and not isinstance(e, (paramiko.BadHostKeyException, UnknownHostKey, paramiko.AuthenticationException)):
            return (f"unreachable: ProxyCommand {r.proxy_command!r} gave no SSH connection ({e or type(e).__name__}); "
                    "run it by hand to see why")
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
        data = stdin.encode() if isinstance(stdin, str) else stdin
        code, out, errb, timed_out, lost = _exchange(chan, full, data, timeout, start, on_stdout)
        result = RunResult(self.name, command, code, out, errb, duration=time.monotonic() - start)
        if lost:
            result.error = f"lost connection: {lost}"
        elif code == -1 and not timed_out:  # no exit status came: the session died
            tr = self._client.get_transport() if self._client else None
            result.exit_code = None
            if tr is None or not tr.is_active():
                self._drop()
                result.error = "lost connection to the host during the command"
            else:
                result.error = "the remote shell was killed by a signal"
        elif timed_out or code is None:
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

    def channel_to(self, host: str, port: int, timeout: float) -> paramiko.Channel:
        """A direct-tcpip channel from this host to host:port (what `ssh -W` asks a jump host)."""
        with self._lock:
            tr = self._client.get_transport() if self._client else None
        if tr is None or not tr.is_active():
            raise EOFError("the connection is closed")
        return tr.open_channel("direct-tcpip", (host, port), ("127.0.0.1", 0), timeout=timeout)

    def close(self) -> None:
        self._drop()
        if self._jump_spec:
            spec, self._jump_spec, self.via = self._jump_spec, None, None
            self.context.jumps.release(spec)


class _Why(Exception):
    """A reason we found ourselves, already worded."""


def _exchange(chan: paramiko.Channel, command: str, data: Optional[bytes], timeout: float,
              start: float, on_stdout: Optional[Callable[[bytes], None]] = None
              ) -> "tuple[Optional[int], str, str, bool, Optional[str]]":
    """Run `command` on an open channel: stdin fed to EOF, stdout and stderr drained side by
    side, all of it bounded by `timeout` (a watchdog closes the channel, which unblocks every
    read). Returns (exit code or None, stdout, stderr, timed out, why the connection was lost)."""
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
    code: Optional[int] = None
    lost: Optional[str] = None
    try:
        chan.settimeout(timeout)
        chan.exec_command(command)
        threading.Thread(target=_feed, args=(chan, data), daemon=True).start()
        reader = threading.Thread(target=_drain, args=(chan.recv_stderr, errb), daemon=True)
        reader.start()
        _drain(chan.recv, out, on_stdout)
        reader.join(timeout)
        if not timed_out.is_set() and chan.status_event.wait(max(0.0, timeout - (time.monotonic() - start))):
            code = chan.recv_exit_status()
    except Exception as e:  # noqa: BLE001 - a broken session is data, like every failure here
        if not timed_out.is_set():
            lost = str(e)
    finally:
        dog.cancel()
        try:
            chan.close()
        except (EOFError, OSError, paramiko.SSHException):
            pass
    return code, _dec(out), _dec(errb), timed_out.is_set(), lost


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
    """One SSHRemote per target, sharing one SSHContext (one parse of ssh_config, one read of
    each known_hosts). Raises UsageError for a bad --identity or ssh_config before any connection."""
    options.validate()
    context = SSHContext(options)
    return [SSHRemote(t, context=context) for t in targets]
