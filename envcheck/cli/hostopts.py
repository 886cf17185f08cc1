"""The host-selection options every multi-host command shares (audit, install-*, env, nccl-test,
doctor, provision, explain): declare the parameters with these Annotated types (Typer declares
options per parameter) and build ONE HostSelection from the parsed parameters by name:

    def cmd(ctx: typer.Context, hosts: HostsArg = None, hosts_file: HostsFileOpt = None,
            exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
            ssh_config: SshConfigOpt = None, user: UserOpt = None, port: PortOpt = None,
            identity: IdentityOpt = None, forks: ForksOpt = 32,
            connect_timeout: ConnectTimeoutOpt = 10.0, timeout: TimeoutOpt = None,
            strict_host_keys: StrictHostKeysOpt = False):
        remotes = HostSelection.from_params(ctx.params).remotes()

Every option is built from its declaration in envcheck/params (type, bounds, pattern, path kind),
shown under its own help heading. `--command-timeout` means the same in every command: the bound
on one remote command (a probe, a fact, a check), default 120 s (240 s for a probe with --deep);
collectives have `--collective-timeout`, installers `--install-timeout`.

No hosts given (and no $SLURM_JOB_NODELIST): [LocalRemote()] — the command runs on this machine.
"""
import contextlib
import importlib.util
import sys
import threading
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Mapping, Optional, Sequence, Tuple

import typer

from envcheck import params as P
from envcheck.cli.common import Annotated
from envcheck.cli.options import HOSTS_PANEL, argument, option

if TYPE_CHECKING:  # imported where they run: every command imports this module
    from envcheck.remote import Remote

HostsArg = Annotated[Optional[List[str]], argument(P.HOSTS, show_default=False)]
HostsFileOpt = Annotated[Optional[str], option(P.HOSTS_FILE, panel=HOSTS_PANEL)]
ExcludeOpt = Annotated[Optional[List[str]], option(P.EXCLUDE, "--exclude", "-x", panel=HOSTS_PANEL,
                                                   show_default=False)]
GroupsFileOpt = Annotated[Optional[str], option(P.GROUPS_FILE, panel=HOSTS_PANEL)]
SshConfigOpt = Annotated[Optional[str], option(P.SSH_CONFIG, panel=HOSTS_PANEL)]
UserOpt = Annotated[Optional[str], option(P.USER, "--user", "-u", panel=HOSTS_PANEL)]
PortOpt = Annotated[Optional[int], option(P.PORT, "--port", "-p", panel=HOSTS_PANEL)]
IdentityOpt = Annotated[Optional[str], option(P.IDENTITY, "--identity", "-i", panel=HOSTS_PANEL)]
ForksOpt = Annotated[int, option(P.FORKS, "--forks", "-f", panel=HOSTS_PANEL)]
ConnectTimeoutOpt = Annotated[float, option(P.CONNECT_TIMEOUT, panel=HOSTS_PANEL)]
# one remote command (the probe, a fact or check command); `--timeout` is its older name where it
# meant that (EnvcheckApp.command(renamed=...))
TimeoutOpt = Annotated[Optional[float], option(P.COMMAND_TIMEOUT, panel=HOSTS_PANEL, show_default=False)]
StrictHostKeysOpt = Annotated[bool, typer.Option(
    "--strict-host-keys", rich_help_panel=HOSTS_PANEL,
    help="Refuse hosts not already in known_hosts (default: accept and remember new ones; a "
         "CHANGED key is always refused).")]
NodePythonOpt = Annotated[Optional[str], option(P.NODE_PYTHON)]
# what `--timeout` used to mean in the commands where it bounded one remote command
OLD_TIMEOUT = {"--timeout": "--command-timeout"}
COMMAND_TIMEOUT_S = 120.0        # --command-timeout's default, the same in every command
DEEP_PROBE_TIMEOUT_S = 240.0     # ... for a probe with --deep (it imports torch on every GPU)


def command_timeout(given: Optional[float], deep: bool = False) -> float:
    """--command-timeout as given, else its default (longer for a probe with --deep)."""
    return given if given is not None else DEEP_PROBE_TIMEOUT_S if deep else COMMAND_TIMEOUT_S


@dataclass(frozen=True)
class HostSelection:
    """Which hosts a command works on and how to reach them: the shared host options, once."""

    hosts: Tuple[str, ...] = ()
    hosts_file: Optional[str] = None
    exclude: Tuple[str, ...] = ()
    groups_file: Optional[str] = None
    ssh_config: Optional[str] = None
    user: Optional[str] = None
    port: Optional[int] = None
    identity: Optional[str] = None
    forks: int = 32
    connect_timeout: float = 10.0
    timeout: float = COMMAND_TIMEOUT_S
    strict_host_keys: bool = False

    @classmethod
    def from_params(cls, params: Mapping[str, Any], **override: Any) -> "HostSelection":
        """From a command's parsed parameters (typer.Context.params), picked by name; an option
        left unset keeps the default here. `override` wins (a command's own default timeout)."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in params.items() if k in names and v is not None}
        kw.update({k: v for k, v in override.items() if v is not None})
        kw["hosts"] = tuple(kw.get("hosts") or ())
        kw["exclude"] = tuple(kw.get("exclude") or ())
        return cls(**kw)

    def remotes(self) -> List["Remote"]:
        """SSHRemote per host, or [LocalRemote()] when no host is named (nor a hosts file, nor
        $SLURM_JOB_NODELIST): the command then runs on this machine."""
        # lazy: the hostlist parser and the local transport cost ~25 ms CPU at start-up
        # (-X importtime, issue 26), which --help and every offline command would pay
        from envcheck.hostlist import resolve_targets
        from envcheck.remote import LocalRemote

        targets = resolve_targets(list(self.hosts), str(self.hosts_file) if self.hosts_file else None,
                                  exclude=self.exclude,
                                  groups_file=str(self.groups_file) if self.groups_file else None)
        if not targets:
            return [LocalRemote()]
        if len(targets) > 64:   # a big list says so before minutes of connecting, not after
            typer.echo(f"envcheck: {len(targets)} hosts, {min(self.forks, len(targets))} at a time", err=True)
        # lazy: fabric and paramiko cost ~360 ms CPU (-X importtime, issue 26), more than all
        # the rest of a start-up; only a command that reaches a host over SSH needs them
        from envcheck.hosts import SSHOptions, make_remotes

        opts = SSHOptions(ssh_config=str(self.ssh_config) if self.ssh_config else None, user=self.user,
                          port=self.port, identity=str(self.identity) if self.identity else None,
                          connect_timeout=self.connect_timeout, timeout=self.timeout,
                          strict_host_keys=self.strict_host_keys, forks=self.forks)
        return list(make_remotes(targets, opts))


@contextlib.contextmanager
def closing_all(remotes: Sequence["Remote"]) -> Iterator[Sequence["Remote"]]:
    """The remotes for the body of a `with`, every connection closed after it, however it ends;
    then OpenSSH's line for the host keys accepted on the way."""
    try:
        yield remotes
    finally:
        for r in remotes:
            r.close()
        announce_new_host_keys(remotes)


_KEY_TYPES = {"ssh-ed25519": "ED25519", "ssh-rsa": "RSA", "ssh-dss": "DSA"}


def announce_new_host_keys(remotes: Sequence["Remote"]) -> None:
    """`Warning: Permanently added 'node01' (ED25519) to the list of known hosts.` as OpenSSH
    says it on stderr when accept-new remembers a key; one line per key type and file, the
    hosts folded (a first run on 100 nodes says it once)."""
    from envcheck.hostlist import compress_hostlist  # lazy: as in remotes(), ~25 ms
    contexts = {id(c): c for c in (getattr(r, "context", None) for r in remotes) if c is not None}
    groups: dict = {}
    for c in contexts.values():
        for name, kind, path in c.added_host_keys():
            groups.setdefault((kind, path), []).append(name)
    for (kind, path), names in groups.items():
        label = _KEY_TYPES.get(kind) or ("ECDSA" if kind.startswith("ecdsa") else kind)
        typer.echo(f"envcheck: Warning: Permanently added '{compress_hostlist(names)}' ({label}) to the list "
                   f"of known hosts ({path}).", err=True)


def local_python(node_python: Optional[str], remotes: Sequence["Remote"],
                 what: str = "workers run") -> Tuple[Optional[str], Optional[str]]:
    """The interpreter for node-side work and a line saying which one, for a run on this machine.

    Someone who installed envcheck and torch into one venv means that torch: on this machine the
    default is the interpreter envcheck runs under when torch is installed beside it, else
    python3 (as on any node). An explicit --node-python, or any remote host, is left as given."""
    from envcheck.remote import LocalRemote  # lazy: as in remotes(), ~10 ms
    if node_python or len(remotes) != 1 or not isinstance(remotes[0], LocalRemote):
        return node_python, None

    if importlib.util.find_spec("torch") is not None:
        return sys.executable, (f"this machine: {what} under {sys.executable} (torch is installed "
                                f"there; --node-python PATH picks another)")
    return None, (f"this machine: {what} under python3 (no torch beside envcheck in "
                  f"{sys.executable}; --node-python PATH picks another)")


def progress_printer(total: int, label: str, enabled: Optional[bool] = None) -> Callable[[str, bool], None]:
    """A live progress bar on stderr (rich) when it is a terminal; a no-op otherwise (piped, CI,
    --json). Call it with (host, ok) as each host finishes. Redrawn on each call only: no thread
    is left behind if the command stops early."""
    # lazy: rich's console and progress cost ~70 ms CPU at start-up (-X importtime); only a
    # command that reaches hosts draws a bar
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True)
    if enabled is None:
        enabled = console.is_terminal
    if not enabled:
        return lambda host, ok: None
    bar = Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}"),
                   console=console, auto_refresh=False, transient=False)
    task = bar.add_task(label, total=total, note="")
    lock = threading.Lock()
    state = {"done": 0, "failed": 0}

    def tick(host: str, ok: bool) -> None:
        with lock:
            state["done"] += 1
            state["failed"] += 0 if ok else 1
            if state["done"] == 1:
                bar.start()
            failed = f"{state['failed']} failed, " if state["failed"] else ""
            bar.update(task, completed=state["done"], note=f"{failed}{host[:30]}")
            bar.refresh()
            if state["done"] >= total:
                bar.stop()

    return tick
