"""SSH transport: the only package that imports Fabric and paramiko.

Fabric's Connection opens each session (with our socket, keys and host-key policy); commands run
on a paramiko channel of that connection rather than through fabric.Connection.run, because we
need a hard bound on every step (connect, banner, auth, command) and stdin that reaches EOF,
which invoke's runner does not give us.

Host keys follow OpenSSH, not Fabric 3 (which loads no known_hosts and accepts anything): the
user's known_hosts (or ssh_config's UserKnownHostsFile) is loaded, a CHANGED key is refused, a new
host is accepted and appended (accept-new) under a file lock, and strict mode refuses new hosts.

Connect uses a socket of our own with TCP_NODELAY (paramiko leaves Nagle on: connect + auth is
~4x slower, see bench/ssh_connect.py) and a connect timeout, handed to paramiko as `sock=`; behind a
bastion, the socket is a channel through the jump host (ProxyJump) or the user's ProxyCommand
(envcheck/hosts/proxy.py).
Failures are data: run() returns a RunResult whose `error` names the reason in one line.
"""
from envcheck.hosts.known_hosts import KnownHosts  # noqa: F401
from envcheck.hosts.options import (DEFAULT_CONNECT_TIMEOUT, DEFAULT_FORKS, SSHContext,  # noqa: F401
                                    SSHOptions, resolve)
from envcheck.hosts.ssh import SSHRemote, make_remotes  # noqa: F401
