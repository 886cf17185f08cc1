"""How a connection reaches its host, as the user's `ssh` would: straight (our own socket, with
TCP_NODELAY), through `ProxyCommand` (paramiko's ProxyCommand: the command's stdin/stdout are the
socket), or through `ProxyJump` (a channel opened on the jump host's connection, as `ssh -J` and
Fabric's `gateway=` do).

A jump host is connected once per run and shared by every node behind it (100 nodes behind one
bastion: one connection to it, 100 channels), with the same host-key policy, keys and connect
timeout as any host. A chain (`ProxyJump a,b`) goes through a, then b. A jump host's own
ProxyJump/ProxyCommand is not followed (a `Host *` ProxyJump would otherwise jump through itself):
write the whole chain in the node's ProxyJump.
"""
from __future__ import annotations

import importlib
import socket
import threading
from typing import TYPE_CHECKING, Any, Dict, List, Optional

import paramiko

from envcheck.errors import UsageError
from envcheck.hostlist import parse_target

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.hosts.options import Resolved, SSHContext
    from envcheck.hosts.ssh import SSHRemote

MAX_HOPS = 8


class ProxyFailed(Exception):
    """The way to the host failed before any SSH byte was exchanged with it; already worded."""


def open_socket(r: "Resolved", timeout: float, nodelay: bool, via: Optional["SSHRemote"]) -> Any:
    """A connected socket-like object to r.hostname:r.port: through `via` (the jump host the
    caller took for r.proxy_jump, or the previous hop of a chain), else through r.proxy_command,
    else straight."""
    if via is not None:
        return _through(via, r, timeout)
    if r.proxy_command:
        try:
            return paramiko.ProxyCommand(r.proxy_command)
        except Exception as e:  # noqa: BLE001 - a command that cannot start is one line of data
            raise ProxyFailed(f"ProxyCommand {r.proxy_command!r} could not start: {e}") from e
    sock = socket.create_connection((r.hostname, r.port), timeout=timeout)
    if nodelay:  # paramiko leaves Nagle on: connect + auth ~4x slower (bench/ssh_connect.py)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
    return sock


def _through(hop: "SSHRemote", r: "Resolved", timeout: float) -> paramiko.Channel:
    """A direct-tcpip channel from the jump host to the target (`ssh -W host:port`)."""
    err = hop.connect()
    if err:
        raise ProxyFailed(f"jump host {hop.name}: {err}")
    try:
        return hop.channel_to(r.hostname, r.port, timeout)
    except paramiko.ChannelException as e:
        raise ProxyFailed(f"jump host {hop.name} could not connect to {r.hostname}:{r.port} "
                          f"({e.text or 'connect failed'}: is that address right from {hop.name}, "
                          f"and sshd running there?)") from e
    except (paramiko.SSHException, EOFError, OSError) as e:
        raise ProxyFailed(f"jump host {hop.name}: lost connection while opening a channel to "
                          f"{r.hostname}:{r.port} ({e})") from e


def abort(sock: Any) -> None:
    """Unblock every read on a socket, a channel or a ProxyCommand (the handshake deadline)."""
    try:
        if isinstance(sock, socket.socket):
            sock.shutdown(socket.SHUT_RDWR)
        else:
            sock.close()
    except (OSError, EOFError, paramiko.SSHException):
        pass


def parse_jump(spec: str) -> List[str]:
    """`ops@bastion:2222,inner` → ['ops@bastion:2222', 'inner']; checked as hosts are."""
    hops = [h.strip() for h in spec.split(",") if h.strip()]
    if not hops or len(hops) > MAX_HOPS:
        raise UsageError(f"ProxyJump {spec!r}: {'no host' if not hops else f'more than {MAX_HOPS} hops'}",
                         "write ProxyJump [user@]host[:port][,host…] in the ssh_config")
    for h in hops:
        parse_target(h.split("://", 1)[-1])  # ssh://user@host:port is OpenSSH's URI form
    return [h.split("://", 1)[-1] for h in hops]


class JumpHosts:
    """The jump hosts of one run: one connection each, shared by the nodes behind it, closed
    when the last node using it is closed."""

    def __init__(self, context: "SSHContext"):
        self.context = context
        self._hops: Dict[str, "SSHRemote"] = {}
        self._users: Dict[str, int] = {}
        self._lock = threading.Lock()

    def get(self, spec: str) -> "SSHRemote":
        SSHRemote = importlib.import_module("envcheck.hosts.ssh").SSHRemote   # a cycle: ssh.py imports this module
        with self._lock:
            if spec not in self._hops:
                via: Optional[SSHRemote] = None
                for hop in parse_jump(spec):
                    via = SSHRemote(hop, context=self.context, via=via, follow_proxy=False)
                self._hops[spec] = via
            self._users[spec] = self._users.get(spec, 0) + 1
            return self._hops[spec]

    def release(self, spec: str) -> None:
        with self._lock:
            self._users[spec] = self._users.get(spec, 1) - 1
            if self._users[spec] > 0 or spec not in self._hops:
                return
            hop = self._hops.pop(spec)
        while hop is not None:  # the last hop, then the ones before it
            hop.close()
            hop = hop.via
