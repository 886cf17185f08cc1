"""`envcheck launch [HOSTS…] [OPTIONS] -- SCRIPT [ARGS…]`: the user's training script on every
node (envcheck/launch/). Everything after `--` belongs to the script and never reaches the option
parser, so the script's own options (--lr, --local_rank …) cannot clash with ours."""
import sys
import threading
from typing import Any, Callable, List, Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import (Annotated, JsonOpt, MatrixOpt, ShowProbeOpt, guard, note, print_json,
                                 show_probe_exit)
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ForksOpt, HostSelection, HostsArg,
                                   HostsFileOpt, ExcludeOpt, GroupsFileOpt, IdentityOpt, NodePythonOpt, PortOpt,
                                   SshConfigOpt, StrictHostKeysOpt, UserOpt, closing_all,
                                   local_python)
from envcheck.cli.command import HelpCommand
from envcheck.cli.options import option
from envcheck.cli.rankopts import IfnameOpt, MasterAddrOpt, MasterPortOpt, NprocOpt
from envcheck.cli.slurmopts import LauncherOpt, StepSizeOpt, check_launcher, srun_hosts
from envcheck import params as P
from envcheck.errors import UsageError


class _SplitAtDashes(HelpCommand):
    """Keeps what follows the first `--` (the script and its arguments) away from click."""

    def parse_args(self, ctx: Any, args: List[str]) -> List[str]:
        if "--" in args:
            i = args.index("--")
            ctx.meta["launch_script"] = args[i + 1:]
            args = args[:i]
        return super().parse_args(ctx, args)

    def collect_usage_pieces(self, ctx: Any) -> List[str]:
        return super().collect_usage_pieces(ctx) + ["-- SCRIPT [ARGS]..."]


ChdirOpt = Annotated[Optional[str], option(P.CHDIR)]
EnvOpt = Annotated[Optional[List[str]], option(P.ENV_PAIR)]
SyncOpt = Annotated[Optional[List[str]], option(P.SYNC)]
LocalRankArgOpt = Annotated[bool, typer.Option(
    "--local-rank-arg", help="Also pass --local_rank=K to the script, as "
                             "torch.distributed.launch did.")]
RunTimeoutOpt = Annotated[float, option(P.RUN_TIMEOUT)]
GraceOpt = Annotated[float, option(P.GRACE)]
LogDirOpt = Annotated[Optional[str], option(P.LOG_DIR)]
QuietOthersOpt = Annotated[bool, typer.Option(
    "--quiet-others", help="Stream rank 0's output only (all are still logged).")]
ForceOpt = Annotated[bool, typer.Option(
    "--force", help="Start even when the audit finds errors on the hosts.")]
NoAuditOpt = Annotated[bool, typer.Option(
    "--no-audit", help="Skip the audit of the hosts (the other preflight checks still run).")]


def _rank_printer(json_out: bool, quiet_others: bool) -> Callable[[str, int, str], None]:
    """Prints each rank's lines as [HOST:RANK] LINE: on stdout, or on stderr when stdout carries
    the JSON report; with --quiet-others rank 0's only."""
    sink = sys.stderr if json_out else sys.stdout
    lock = threading.Lock()

    def on_line(host: str, rank: int, line: str) -> None:
        if quiet_others and rank != 0:
            return
        with lock:
            sink.write(f"[{host}:{rank}] {line}\n")
            sink.flush()

    return on_line


@app.command("launch", cls=_SplitAtDashes, renamed={"--timeout": "--run-timeout"})
@guard
def launch(
    ctx: typer.Context,
    hosts: HostsArg = None,
    nproc_per_node: NprocOpt = None,
    node_python: NodePythonOpt = None,
    chdir: ChdirOpt = None,
    env: EnvOpt = None,
    sync: SyncOpt = None,
    local_rank_arg: LocalRankArgOpt = False,
    master_addr: MasterAddrOpt = None,
    master_port: MasterPortOpt = None,
    ifname: IfnameOpt = None,
    run_timeout: RunTimeoutOpt = 86400.0,
    grace: GraceOpt = 5.0,
    log_dir: LogDirOpt = None,
    quiet_others: QuietOthersOpt = False,
    force: ForceOpt = False,
    no_audit: NoAuditOpt = False,
    matrix: MatrixOpt = None,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None,
    user: UserOpt = None,
    port: PortOpt = None,
    identity: IdentityOpt = None,
    strict_host_keys: StrictHostKeysOpt = False,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    forks: ForksOpt = 32,
    json_out: JsonOpt = False,
    show_probe: ShowProbeOpt = False,
    launcher: LauncherOpt = "ssh",
    step_size: StepSizeOpt = 64,
) -> None:
    """Run your training script on every host, RANK/WORLD_SIZE/MASTER_* set. Example: envcheck launch node[01-02] --nproc-per-node 8 -- train.py

    Your own training script on every node with RANK/WORLD_SIZE/MASTER_* set (env://), after the
    preflight nccl-test runs too and the audit; every rank's output live as `[host:rank]`; the
    first failing rank named, every other one stopped; never hangs, never leaves strays."""
    if show_probe:
        # lazy: the preflight costs ~95 ms CPU at start-up (-X importtime, issue 26); only
        # launch and nccl-test need it
        from envcheck.ranks.preflight import PROBE_SECTIONS
        raise show_probe_exit(PROBE_SECTIONS, node_python)
    # lazy: launch (and the audit it runs) costs ~110 ms CPU at start-up (-X importtime, issue 26); only launch needs it
    from envcheck.launch.render import render_text
    from envcheck.launch.run import Options, parse_env, run_launch

    argv = ctx.meta.get("launch_script") or []
    if not argv:
        raise UsageError("no script to launch", "put it after --: envcheck launch HOSTS -- "
                                                "train.py ARGS")
    opts = Options(script=argv[0], args=argv[1:], nproc_per_node=nproc_per_node,
                   node_python=node_python, chdir=chdir, env=parse_env(env or []),
                   sync=list(sync or []), local_rank_arg=local_rank_arg,
                   master_addr=master_addr, master_port=master_port, ifname=ifname,
                   timeout=run_timeout, grace=grace, connect_timeout=connect_timeout, forks=forks,
                   log_dir=log_dir, force=force, audit=not no_audit, matrix=matrix)
    check_launcher(launcher)
    if launcher == "srun":   # ranks started by srun inside the allocation (envcheck/slurm/srun_ranks.py)
        # lazy: srun's ranks cost ~60 ms CPU at start-up (-X importtime, issue 26); only --launcher srun needs them
        from envcheck.matrix.load import load_matrix
        from envcheck.slurm import srun, srun_ranks
        alloc = srun.require_allocation(srun_hosts(hosts))
        runner = srun.SrunRunner(step_size=step_size, job_name="envcheck-launch")
        rep = srun_ranks.launch(alloc.nodes, opts, runner, _rank_printer(json_out, quiet_others), load_matrix(matrix))
    else:
        # its remote commands are the preflight's and the launchers' (bounded by the run itself)
        with closing_all(HostSelection.from_params(ctx.params, timeout=connect_timeout + 30).remotes()) as remotes:
            opts.node_python, which = local_python(node_python, remotes, "ranks run")
            rep = run_launch(remotes, opts, note, _rank_printer(json_out, quiet_others), which)
    if json_out:
        print_json(rep.to_dict())
    else:
        typer.echo(render_text(rep))
    raise typer.Exit(rep.exit_code)
