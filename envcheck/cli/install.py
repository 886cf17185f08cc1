"""`envcheck env`, `envcheck install-cuda`, `envcheck install-cudnn`: parse, call envcheck.install,
print each node's outcome, exit (0 all done or nothing to do, 1 refused/failed, 3 unreachable)."""
import getpass
import os
import shlex
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, List, Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import (Annotated, JsonOpt, MatrixOpt, ShowProbeOpt, color_wanted, guard, print_json,
                                 show_probes_exit)
from envcheck import params as P
from envcheck.cli.hostopts import (OLD_TIMEOUT, ConnectTimeoutOpt, ExcludeOpt, ForksOpt, GroupsFileOpt, HostsArg,
                                   HostsFileOpt, IdentityOpt, PortOpt, SshConfigOpt, StrictHostKeysOpt,
                                   TimeoutOpt, UserOpt, HostSelection, closing_all, command_timeout)
from envcheck.cli.options import argument, option
from envcheck.errors import UsageError
from envcheck.inputs import check_rc_file
from envcheck.install.staging import check_tmpdir

if TYPE_CHECKING:  # imported where they run (see the commands below)
    from envcheck.install.common import NodeOutcome
    from envcheck.remote import Remote

DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Print per node what would be transferred and run; change nothing.")]
InstallTimeoutOpt = Annotated[float, option(P.INSTALL_TIMEOUT)]
SudoOpt = Annotated[bool, typer.Option("--sudo", help="Use sudo on nodes where the login is not root (password asked once, or ENVCHECK_SUDO_PASSWORD).")]


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


@app.command("env", renamed=OLD_TIMEOUT)
@guard
def env_cmd(
    ctx: typer.Context,
    hosts: HostsArg = None,
    cuda_home: Annotated[Optional[str], option(P.CUDA_HOME, help="Toolkit directory to export, e.g. /usr/local/cuda-12.4.")] = None,
    file: Annotated[str, option(P.RC_FILE)] = "~/.bashrc",
    file_anything: Annotated[bool, typer.Option("--file-anything", help="Let --file name any file (one your start-up file sources, say): the block is written into it all the same, replacing the file atomically with a backup; without this, --file must be a shell start-up file envcheck knows.")] = False,
    profile_d: Annotated[bool, typer.Option("--profile-d", help="Write /etc/profile.d/envcheck-cuda.sh and /etc/ld.so.conf.d/envcheck-cuda.conf instead (login shells + the loader).")] = False,
    remove: Annotated[bool, typer.Option("--remove", help="Take the envcheck block (or files) out again.")] = False,
    dry_run: DryRunOpt = False,
    sudo: SudoOpt = False,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None, user: UserOpt = None,
    port: PortOpt = None, identity: IdentityOpt = None, forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0, timeout: TimeoutOpt = None,
    strict_host_keys: StrictHostKeysOpt = False, json_out: JsonOpt = False, show_probe: ShowProbeOpt = False,
) -> None:
    """Put CUDA on PATH/LD_LIBRARY_PATH for non-interactive shells too: envcheck env node[01-04] --cuda-home /usr/local/cuda-12.4

    A marked, reversible block (`--cuda-home PATH`) that puts CUDA on PATH/LD_LIBRARY_PATH where
    non-interactive SSH commands see it."""
    # lazy: the env block and the fan-out cost ~40 ms CPU at start-up (-X importtime, issue 26); only env needs them
    from envcheck.install.common import on_nodes
    from envcheck.install.envblock import PROFILE_D_FILES, env_node, probe_request, render_block
    if profile_d and file != "~/.bashrc":
        raise UsageError("give --file or --profile-d, not both", "--profile-d writes /etc/profile.d and /etc/ld.so.conf.d")
    check_rc_file(file, anything=file_anything)
    if show_probe:
        request = probe_request(list(PROFILE_D_FILES) if profile_d else [file], None if remove else cuda_home)
        raise show_probes_exit([("on each node", request.show())])
    if not remove:
        if not cuda_home:
            raise UsageError("env: --cuda-home is required (unless --remove)",
                             "e.g. envcheck env node01 --cuda-home /usr/local/cuda-12.4")
        render_block(cuda_home)  # validate before touching any node
    timeout = command_timeout(timeout)
    o = HostSelection.from_params(ctx.params, timeout=timeout)
    pw = sudo_password_source(sudo)
    with closing_all(o.remotes()) as remotes:
        outs = on_nodes(remotes, lambda r: env_node(r, cuda_home=cuda_home, file=file, profile_d=profile_d,
                                                    remove=remove, dry_run=dry_run, use_sudo=sudo, password=pw,
                                                    timeout=timeout), o.forks)
    finish(outs, json_out, dry_run)


def upload_progress() -> Optional[Callable[[str, int, int], None]]:
    """One progress bar on stderr (rich) for all uploads together, when stderr is a terminal
    (none when piped or --json): hosts upload in parallel, so per-host lines would overwrite
    each other."""
    # lazy: rich's console and progress cost ~70 ms CPU at start-up (-X importtime); only an upload draws a bar
    from rich.console import Console
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        return None
    bar = Progress(TextColumn("uploading"), BarColumn(), DownloadColumn(), TextColumn("{task.fields[hosts]}"),
                   console=console, auto_refresh=False)
    task = bar.add_task("uploading", total=None, hosts="")
    lock = threading.Lock()
    state: dict = {}

    def show(host: str, done: int, total: int) -> None:
        with lock:
            if not state:
                bar.start()
            state[host] = (done, total)
            finished = sum(v[0] >= v[1] for v in state.values())
            bar.update(task, completed=sum(v[0] for v in state.values()), total=sum(v[1] for v in state.values()),
                       hosts=f"{finished}/{len(state)} host(s) done")
            bar.refresh()
            if finished == len(state):
                bar.stop()
    return show


@app.command("install-cuda", renamed=OLD_TIMEOUT)
@guard
def install_cuda_cmd(
    ctx: typer.Context,
    version: Annotated[str, argument(P.CUDA_VERSION)],
    hosts: HostsArg = None,
    runfile: Annotated[Optional[str], option(P.RUNFILE)] = None,
    url: Annotated[Optional[str], option(P.URL)] = None,
    mirror: Annotated[Optional[str], option(P.MIRROR)] = None,
    sha256: Annotated[Optional[str], option(P.SHA256)] = None,
    no_checksum: Annotated[bool, typer.Option("--no-checksum", help="Skip the sha256 check (makeself's own check still runs).")] = False,
    prefix: Annotated[str, option(P.PREFIX)] = "/usr/local",
    tmpdir: Annotated[str, option(P.TMPDIR)] = "/var/tmp",
    no_symlink: Annotated[bool, typer.Option("--no-symlink", help="Leave PREFIX/cuda as it is.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace another toolkit at the target; install even for an unsupported GPU.")] = False,
    override: Annotated[bool, typer.Option("--override", help="Pass --override to the installer (gcc too new / missing).")] = False,
    dry_run: DryRunOpt = False,
    sudo: SudoOpt = False,
    install_timeout: InstallTimeoutOpt = 3600.0,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None, user: UserOpt = None,
    port: PortOpt = None, identity: IdentityOpt = None, forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0, timeout: TimeoutOpt = None,
    strict_host_keys: StrictHostKeysOpt = False, matrix: MatrixOpt = None, json_out: JsonOpt = False,
    show_probe: ShowProbeOpt = False,
) -> None:
    """Install a CUDA toolkit (never the driver), verified, idempotent: envcheck install-cuda 12.4 node[01-04] --runfile cuda_12.4.1_550.54.15_linux.run

    NVIDIA's runfile install made non-interactive (never the driver), checksummed, preflighted,
    verified by result, idempotent, rolled back on failure, with `--dry-run`."""
    # lazy: the CUDA installer, its fan-out and the matrix cost ~75 ms CPU at start-up (-X importtime,
    # issue 26); only install-cuda needs them
    from envcheck.install.common import on_nodes
    from envcheck.install.cuda import InstallArgs, install_cuda, probe_reads
    from envcheck.install.cuda_source import choose_source
    from envcheck.install.cuda_spec import toolkit_spec
    from envcheck.matrix.load import load_matrix

    prefix = check_tmpdir(prefix, "--prefix", "pass an absolute directory, e.g. --prefix /usr/local")
    tmpdir = check_tmpdir(tmpdir)
    timeout = command_timeout(timeout)
    spec = toolkit_spec(load_matrix(matrix), version)
    args = InstallArgs(prefix=prefix, tmpdir=tmpdir, symlink=not no_symlink, force=force, override=override,
                       use_sudo=sudo, timeout=timeout, install_timeout=install_timeout)
    if show_probe:
        raise show_probes_exit(probe_reads(spec, args))
    for warning in choose_source(args, spec, runfile=str(runfile) if runfile else None, url=url, mirror=mirror,
                                 sha256=sha256, no_checksum=no_checksum):
        typer.echo(f"envcheck: {warning}", err=True)
    o = HostSelection.from_params(ctx.params, timeout=timeout)
    pw = sudo_password_source(sudo)
    remotes = o.remotes()
    if not json_out:
        typer.echo(f"CUDA {spec.version} ({spec.generation} installer) -> {args.target(spec)} on {len(remotes)} node(s)"
                   + (" [dry run]" if dry_run else ""))
    with closing_all(remotes):
        outcomes = install_cuda(remotes, spec, args, dry_run=dry_run, forks=forks, password=pw,
                                progress=None if json_out else upload_progress())
    finish(outcomes, json_out, dry_run, next_step=_env_next(remotes, ctx.params, args.target(spec)))


def _env_next(remotes: List["Remote"], params: dict, cuda_home: str) -> str:
    """`envcheck env node[01-04] --ssh-config F --cuda-home /usr/local/cuda-12.4`: what puts the
    toolkit on PATH for non-interactive shells, on the same hosts reached the same way."""
    # lazy: the hostlist folder costs ~25 ms CPU at start-up (-X importtime, issue 26); only install-cuda's last line needs it
    from envcheck.hostlist import compress_hostlist
    hosts = "" if all(r.is_local for r in remotes) else shlex.quote(compress_hostlist([r.name for r in remotes]))
    how = "".join(f" {flag} {shlex.quote(str(params[k]))}" for k, flag in
                  (("ssh_config", "--ssh-config"), ("user", "--user"), ("port", "--port"), ("identity", "--identity"))
                  if params.get(k))
    return " ".join(x for x in ("envcheck env", hosts) if x) + how + f" --cuda-home {shlex.quote(cuda_home)}"


def finish(outcomes: List["NodeOutcome"], json_out: bool, dry_run: bool = False, next_step: str = "") -> None:
    """Print the outcomes (JSON, or each distinct one once under its hosts, then the summary
    line and, where one follows, the next command), and exit with their code."""
    # lazy: the outcome renderers and the fan-out's results cost ~40 ms CPU at start-up (-X importtime,
    # issue 26); only the installers print them
    from envcheck.install.common import outcome_of
    from envcheck.install.render import outcomes_summary, render_outcomes
    from envcheck.report import paint
    if json_out:
        print_json([o.__dict__ for o in outcomes])
    else:
        color = color_wanted()
        for line in render_outcomes(outcomes, lambda t, st: paint(t, st, color)):
            typer.echo(line)
        typer.echo(outcomes_summary(outcomes, dry_run, lambda t, st: paint(t, st, color)))
        if next_step and outcome_of(outcomes).exit_code() == 0:
            typer.echo(f"next: {next_step}")
    raise typer.Exit(outcome_of(outcomes).exit_code())


@app.command("install-cudnn", renamed={"--timeout": "--install-timeout"})
@guard
def install_cudnn_cmd(
    ctx: typer.Context,
    archive: Annotated[Optional[str], argument(P.ARCHIVE, show_default=False)] = None,
    hosts: HostsArg = None,
    cuda: Annotated[Optional[str], option(P.VERSION, "--cuda", help="Toolkit at /usr/local/cuda-X.Y.")] = None,
    cuda_home: Annotated[Optional[str], option(P.CUDA_HOME, help="Toolkit directory (default /usr/local/cuda).")] = None,
    remove: Annotated[bool, typer.Option("--remove", help="Undo: delete what the manifest lists, put back what it replaced.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace a cuDNN that envcheck did not install (it is backed up).")] = False,
    tmpdir: Annotated[str, option(P.TMPDIR)] = "/var/tmp",
    dry_run: DryRunOpt = False,
    sudo: SudoOpt = False,
    install_timeout: InstallTimeoutOpt = 3600.0,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None, user: UserOpt = None,
    port: PortOpt = None, identity: IdentityOpt = None, forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0, timeout: TimeoutOpt = None,
    strict_host_keys: StrictHostKeysOpt = False, json_out: JsonOpt = False, show_probe: ShowProbeOpt = False,
) -> None:
    """Copy cuDNN into a toolkit, symlinks kept, undoable: envcheck install-cudnn cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz node[01-04] --cuda 12.4

    cuDNN copied into the toolkit (both archive layouts, symlinks kept, a manifest to undo)."""
    # lazy: the cuDNN installer and its fan-out cost ~35 ms CPU at start-up (-X importtime, issue 26); only install-cudnn needs them
    from envcheck.install.common import on_nodes
    from envcheck.install.cudnn import install_cudnn, probe_request, read_archive

    tmpdir = check_tmpdir(tmpdir)
    if cuda and cuda_home:
        raise UsageError("give --cuda or --cuda-home, not both", "e.g. --cuda 12.4 or --cuda-home /usr/local/cuda-12.4")
    home = cuda_home or (f"/usr/local/cuda-{cuda}" if cuda else "/usr/local/cuda")
    if show_probe:
        raise show_probes_exit([("on each node", probe_request(home).show())])
    hosts = list(hosts or [])
    info = None
    if remove:
        if archive and not Path(archive).is_file():
            hosts.insert(0, archive)  # `install-cudnn --remove node01`: no archive needed
    else:
        if not archive:
            raise UsageError("install-cudnn: ARCHIVE is required (unless --remove)",
                             "e.g. envcheck install-cudnn cudnn-10.0-linux-x64-v7.6.5.32.tgz node01 --cuda 10.0")
        if not Path(archive).is_file():
            raise UsageError(f"{archive}: no such file", "give the path of the downloaded cuDNN archive")
        info = read_archive(str(Path(archive).resolve()))
    o = HostSelection.from_params(ctx.params, timeout=command_timeout(timeout))
    pw = sudo_password_source(sudo)
    remotes = o.remotes()
    with closing_all(remotes):
        outs = install_cudnn(remotes, info, home, forks=forks, tmpdir=tmpdir, remove=remove, force=force,
                             dry_run=dry_run, use_sudo=sudo, password=pw, timeout=install_timeout,
                             fact_timeout=command_timeout(timeout))
    finish(outs, json_out, dry_run)
