"""`envcheck env`, `envcheck install-cuda`, `envcheck install-cudnn`: parse, call envcheck.install,
print each node's outcome, exit (0 all done or nothing to do, 1 refused/failed, 3 unreachable)."""
from __future__ import annotations

import getpass
import os
import sys
import threading
from pathlib import Path
from typing import Callable, List, Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, MatrixOpt, guard, print_json
from envcheck.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREACHABLE, UsageError
from envcheck.install.common import NodeOutcome
from envcheck.remote import LocalRemote, Remote, fan_out

HostsArg = Annotated[Optional[List[str]], typer.Argument(
    metavar="[HOSTS]...", help="Nodes as [user@]host[:port] or Slurm hostlists (node[01-04]); none: this machine.",
    show_default=False)]
HostsFileOpt = Annotated[Optional[Path], typer.Option("--hosts-file", metavar="FILE", help="One host per line, # comments.")]
SshConfigOpt = Annotated[Optional[Path], typer.Option("--ssh-config", metavar="FILE", help="ssh_config to honour (default ~/.ssh/config).")]
UserOpt = Annotated[Optional[str], typer.Option("--user", help="SSH login user for every host.")]
PortOpt = Annotated[Optional[int], typer.Option("--port", help="SSH port for every host.")]
IdentityOpt = Annotated[Optional[Path], typer.Option("--identity", "-i", metavar="FILE", help="SSH private key.")]
ForksOpt = Annotated[int, typer.Option("--forks", min=1, help="Nodes worked on at once.")]
ConnectTimeoutOpt = Annotated[float, typer.Option("--connect-timeout", help="Seconds to wait for an SSH connection.")]
TimeoutOpt = Annotated[float, typer.Option("--timeout", help="Seconds any one remote command may take.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Print per node what would be transferred and run; change nothing.")]
SudoOpt = Annotated[bool, typer.Option("--sudo", help="Use sudo on nodes where the login is not root (password asked once, or ENVCHECK_SUDO_PASSWORD).")]


class HostOpts:
    def __init__(self, hosts: Optional[List[str]], hosts_file: Optional[Path], ssh_config: Optional[Path],
                 user: Optional[str], port: Optional[int], identity: Optional[Path], forks: int,
                 connect_timeout: float, timeout: float):
        self.hosts, self.hosts_file, self.ssh_config = hosts or [], hosts_file, ssh_config
        self.user, self.port, self.identity = user, port, identity
        self.forks, self.connect_timeout, self.timeout = forks, connect_timeout, timeout


def open_remotes(o: HostOpts) -> List[Remote]:
    """The nodes to work on: this machine when none are named, else SSH (envcheck.hosts)."""
    if not o.hosts and not o.hosts_file and not os.environ.get("SLURM_JOB_NODELIST"):
        return [LocalRemote()]
    try:
        from envcheck import hosts as H  # the only module that imports Fabric
    except ImportError as e:
        raise UsageError(f"remote hosts need envcheck.hosts, which is not available ({e})",
                         "run on the node itself with no HOSTS") from e
    return H.open_remotes(hosts=o.hosts, hosts_file=o.hosts_file, ssh_config=o.ssh_config, user=o.user,
                          port=o.port, identity=o.identity, connect_timeout=o.connect_timeout)


def sudo_password_source(enabled: bool) -> Optional[Callable[[], str]]:
    """Ask once, on first need, for all nodes (fan-out threads share it); never echoed."""
    if not enabled:
        return None
    lock = threading.Lock()
    cache: List[str] = []

    def get() -> str:
        with lock:
            if not cache:
                pw = os.environ.get("ENVCHECK_SUDO_PASSWORD")
                if pw is None:
                    if not sys.stdin.isatty():
                        raise UsageError("--sudo needs a password and there is no terminal to ask on",
                                         "set ENVCHECK_SUDO_PASSWORD, or configure NOPASSWD sudo")
                    pw = getpass.getpass("sudo password for the nodes: ")
                cache.append(pw)
            return cache[0]
    return get


def run_on_nodes(o: HostOpts, fn: Callable[[Remote], NodeOutcome], json_out: bool) -> None:
    remotes = open_remotes(o)
    try:
        results = fan_out(remotes, fn, forks=o.forks)
    finally:
        for r in remotes:
            r.close()
    outcomes: List[NodeOutcome] = []
    for remote, res in zip(remotes, results):
        if isinstance(res, BaseException):
            msg = getattr(res, "one_line", lambda: str(res))()
            res = NodeOutcome(remote.name).fail("failed", msg)
        outcomes.append(res)
    if json_out:
        print_json([o.__dict__ for o in outcomes])
    else:
        for out in outcomes:
            render(out)
    codes = [EXIT_OK if out.ok else EXIT_UNREACHABLE if out.status == "unreachable" else EXIT_FINDINGS
             for out in outcomes]
    raise typer.Exit(max(codes) if codes else EXIT_OK)


def render(out: NodeOutcome) -> None:
    typer.echo(f"{out.host}: {out.status}" + (f" ({out.bytes_uploaded} bytes uploaded)" if out.bytes_uploaded else ""))
    for line in out.lines:
        for i, part in enumerate(line.splitlines()):
            typer.echo(("  " if i == 0 else "    ") + part)
    for p in out.problems:
        typer.echo(f"  problem: {p}")
    if out.error:
        typer.echo(f"  error: {out.error}")
    if out.log_tail:
        typer.echo("  installer log (tail):")
        for line in out.log_tail.splitlines():
            typer.echo(f"    | {line}")


@app.command("env")
@guard
def env_cmd(
    hosts: HostsArg = None,
    cuda_home: Annotated[Optional[str], typer.Option("--cuda-home", metavar="PATH", help="Toolkit directory to export, e.g. /usr/local/cuda-12.4.")] = None,
    file: Annotated[str, typer.Option("--file", metavar="F", help="File to put the block in (default: the login user's ~/.bashrc).")] = "~/.bashrc",
    profile_d: Annotated[bool, typer.Option("--profile-d", help="Write /etc/profile.d/envcheck-cuda.sh and /etc/ld.so.conf.d/envcheck-cuda.conf instead (login shells + the loader).")] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Take the envcheck block (or files) out again.")] = False,
    dry_run: DryRunOpt = False,
    sudo: SudoOpt = False,
    hosts_file: HostsFileOpt = None, ssh_config: SshConfigOpt = None, user: UserOpt = None,
    port: PortOpt = None, identity: IdentityOpt = None, forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0, timeout: TimeoutOpt = 60.0,
    json_out: JsonOpt = False,
) -> None:
    """Put CUDA on PATH/LD_LIBRARY_PATH for non-interactive shells too: envcheck env node[01-04] --cuda-home /usr/local/cuda-12.4"""
    from envcheck.install.envblock import env_node, render_block
    if not remove:
        if not cuda_home:
            raise UsageError("env: --cuda-home is required (unless --remove)",
                             "e.g. envcheck env node01 --cuda-home /usr/local/cuda-12.4")
        render_block(cuda_home)  # validate before touching any node
    o = HostOpts(hosts, hosts_file, ssh_config, user, port, identity, forks, connect_timeout, timeout)
    pw = sudo_password_source(sudo)
    run_on_nodes(o, lambda r: env_node(r, cuda_home=cuda_home, file=file, profile_d=profile_d, remove=remove,
                                       dry_run=dry_run, use_sudo=sudo, password=pw, timeout=timeout), json_out)
