"""How hosts are reached: SSH options from the CLI, ssh_config resolved per target, and the
state shared by every connection of one run (ssh_config parsed once, known_hosts read once)."""
from __future__ import annotations

import getpass
import os
import threading
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

import paramiko

from envcheck.errors import UsageError
from envcheck.hostfiles import ANSIBLE_LINE
from envcheck.hostlist import Target
from envcheck.hosts.known_hosts import KnownHosts
from envcheck.hosts.proxy import JumpHosts
from envcheck.remote import DEFAULT_TIMEOUT

DEFAULT_FORKS = 32
DEFAULT_CONNECT_TIMEOUT = 10.0


@dataclass
class SSHOptions:
    """How to reach hosts. CLI flags override ssh_config; `user@host:port` overrides both.
    Plain values only: what is parsed from files lives in SSHContext."""

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

    def validate(self) -> None:
        """Usage problems found before any host is contacted: one line, exit 2, not N reports."""
        if self.identity and not os.path.isfile(os.path.expanduser(self.identity)):
            raise UsageError(f"identity file {self.identity} does not exist", "check the --identity path")
        if self.identity:
            _check_private_key(os.path.expanduser(self.identity))
        if self.known_hosts and os.path.isdir(self.known_hosts):
            raise UsageError(f"known_hosts {self.known_hosts} is a directory",
                             "point UserKnownHostsFile (ssh_config) at a file, e.g. ~/.ssh/known_hosts")
        load_ssh_config(self.ssh_config)


def _check_private_key(path: str) -> None:
    """-i is ssh's identity, not Ansible's inventory: say so before any host is contacted."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError as e:
        raise UsageError(f"identity file {path}: cannot read: {e.strerror}", "check the --identity path") from e
    if b"PRIVATE KEY" in head:
        return
    text = head.decode("utf-8", "replace").splitlines()
    if any(ANSIBLE_LINE.match(line) for line in text):
        raise UsageError(f"-i/--identity {path} looks like an Ansible inventory; -i here is the SSH key, as in "
                         "`ssh -i`", f"give the hosts with --hosts-file (one host per line; `ansible all -i {path} "
                         "--list-hosts` lists them) and the key with -i KEY")
    raise UsageError(f"-i/--identity {path} is not an SSH private key (no 'PRIVATE KEY' line)",
                     "give the private key file, e.g. -i ~/.ssh/id_ed25519")


def load_ssh_config(path: Optional[str]) -> paramiko.SSHConfig:
    """The named ssh_config (which must exist), else ~/.ssh/config when present, else empty."""
    explicit = path is not None
    path = path or os.path.expanduser("~/.ssh/config")
    if explicit and not os.path.isfile(path):
        raise UsageError(f"ssh config {path} does not exist", "check the --ssh-config path")
    if not os.path.isfile(path):
        return paramiko.SSHConfig()
    try:
        return paramiko.SSHConfig.from_path(path)
    except Exception as e:  # noqa: BLE001 - paramiko raises assorted errors on bad syntax
        raise UsageError(f"cannot parse ssh config {path}: {e}", "fix the file or pass --ssh-config") from e


class SSHContext:
    """What every connection of one run shares: the options, ssh_config parsed once, and one
    KnownHosts per set of known_hosts files (read once, appended to under a lock)."""

    def __init__(self, options: SSHOptions):
        self.options = options
        self.ssh_config = load_ssh_config(options.ssh_config)
        self._known: Dict[Tuple[str, ...], KnownHosts] = {}
        self._lock = threading.Lock()
        self.jumps = JumpHosts(self)

    def known_hosts(self, files: Tuple[str, ...]) -> KnownHosts:
        with self._lock:
            if files not in self._known:
                self._known[files] = KnownHosts(files)
            return self._known[files]

    def added_host_keys(self) -> List[Tuple[str, str, str]]:
        """(name, key type, file) of every host key this run accepted and wrote, in order."""
        with self._lock:
            return [a for k in self._known.values() for a in k.added]


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
    proxy_jump: Optional[str] = None      # ssh_config ProxyJump (`none` → None)
    proxy_command: Optional[str] = None   # ssh_config ProxyCommand, %h %p %r expanded


def resolve(target: Target, options: SSHOptions, ssh_config: Optional[paramiko.SSHConfig] = None) -> Resolved:
    cfg = (ssh_config if ssh_config is not None else load_ssh_config(options.ssh_config)).lookup(target.host)
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
                    proxy_jump=_unless_none(cfg.get("proxyjump")), proxy_command=_unless_none(cfg.get("proxycommand")))


def _unless_none(value: Optional[str]) -> Optional[str]:
    return None if not value or str(value).strip().lower() == "none" else str(value)


def _local_user() -> str:
    return getpass.getuser()
