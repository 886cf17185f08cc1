"""`envcheck nccl-test [HOSTS]`: all-reduce bandwidth and correctness across hosts
(envcheck/allreduce/)."""
from typing import TYPE_CHECKING, Optional

import typer

from envcheck import params as P
from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, ShowProbeOpt, guard, note, print_json, show_probe_exit
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ExcludeOpt, ForksOpt, GroupsFileOpt, HostsArg,
                                   HostsFileOpt, IdentityOpt, NodePythonOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, UserOpt, HostSelection, closing_all,
                                   local_python)
from envcheck.cli.options import option
from envcheck.cli.rankopts import (MAX_BYTES_DEFAULT, BackendOpt, CollectiveTimeoutOpt, IfnameOpt,
                                   MasterAddrOpt, MasterPortOpt, MaxBytesOpt, MinBusbwOpt, NprocOpt)
from envcheck.cli.slurmopts import LauncherOpt, StepSizeOpt, check_launcher, srun_hosts
from envcheck.errors import UsageError

if TYPE_CHECKING:  # imported where it runs (see nccl_test below)
    from envcheck.allreduce.run import Options

MinBytesOpt = Annotated[int, option(P.MIN_BYTES)]
FactorOpt = Annotated[int, option(P.FACTOR)]
DtypeOpt = Annotated[str, option(P.DTYPE)]
WarmupOpt = Annotated[int, option(P.WARMUP)]
ItersOpt = Annotated[int, option(P.ITERS)]
RendezvousTimeoutOpt = Annotated[float, option(P.RENDEZVOUS_TIMEOUT)]
RunTimeoutOpt = Annotated[float, option(P.RUN_TIMEOUT, help="Last bound on the whole run per host.")]
PlotOpt = Annotated[Optional[str], option(P.PLOT)]
PairsOpt = Annotated[bool, typer.Option(
    "--pairs", help="Instead of the sweep: rounds of node pairs (one per rail) all-reducing at "
                    "--max-bytes at the same time, each pair's busbw against their median and the "
                    "link rate; names a slow node or link (3+ hosts).")]


@app.command("nccl-test", renamed={"--timeout": "--collective-timeout"})
@guard
def nccl_test(
    ctx: typer.Context,
    hosts: HostsArg = None,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None,
    user: UserOpt = None,
    port: PortOpt = None,
    identity: IdentityOpt = None,
    strict_host_keys: StrictHostKeysOpt = False,
    backend: BackendOpt = "auto",
    nproc_per_node: NprocOpt = None,
    min_bytes: MinBytesOpt = "8",
    max_bytes: MaxBytesOpt = MAX_BYTES_DEFAULT,
    factor: FactorOpt = 2,
    dtype: DtypeOpt = "float32",
    warmup: WarmupOpt = 5,
    iters: ItersOpt = 20,
    collective_timeout: CollectiveTimeoutOpt = 60.0,
    rendezvous_timeout: RendezvousTimeoutOpt = 60.0,
    run_timeout: RunTimeoutOpt = 1800.0,
    master_addr: MasterAddrOpt = None,
    master_port: MasterPortOpt = None,
    ifname: IfnameOpt = None,
    node_python: NodePythonOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    forks: ForksOpt = 32,
    min_busbw: MinBusbwOpt = None,
    plot: PlotOpt = None,
    pairs: PairsOpt = False,
    json_out: JsonOpt = False,
    show_probe: ShowProbeOpt = False,
    launcher: LauncherOpt = "ssh",
    step_size: StepSizeOpt = 64,
) -> None:
    """Measure all-reduce bandwidth and check its sums across hosts. Example: envcheck nccl-test node[01-02]

    All-reduce bandwidth and correctness across nodes, with nccl-tests' numbers and the share of
    the link rate; `--pairs`: every node pair at once against their median; never hangs, never
    leaves strays."""
    # lazy: the all-reduce run (its preflight, render, verdict) costs ~140 ms CPU at start-up
    # (-X importtime, issue 26), which --help and every other command would pay
    from envcheck.allreduce.preflight import RANK_SECTIONS
    from envcheck.allreduce.render import plot as draw, render_text, require_matplotlib
    from envcheck.allreduce.run import Options, check_options, run_allreduce
    from envcheck.allreduce.verdict import judge_report
    if show_probe:
        raise show_probe_exit(RANK_SECTIONS, node_python)

    if plot:
        require_matplotlib(plot)   # before the run, not after minutes of it
    opts = Options(backend=backend, nproc_per_node=nproc_per_node,
                   min_bytes=min_bytes, max_bytes=max_bytes,
                   factor=factor, dtype=dtype, warmup=warmup, iters=iters, timeout=collective_timeout,
                   rendezvous_timeout=rendezvous_timeout, run_timeout=run_timeout,
                   master_addr=master_addr, master_port=master_port, ifname=ifname,
                   node_python=node_python, connect_timeout=connect_timeout, forks=forks)
    sizes = check_options(opts)
    check_launcher(launcher)
    meta = None
    if launcher == "srun":   # ranks started by srun inside the allocation (envcheck/slurm/srun_ranks.py)
        rep, meta = _srun_run(hosts, opts, sizes, node_python, step_size, pairs)
    else:
        # its remote commands are the preflight's and the launchers' (bounded by the run itself)
        with closing_all(HostSelection.from_params(ctx.params, timeout=connect_timeout + 30).remotes()) as remotes:
            opts.node_python, which = local_python(node_python, remotes)
            if which:
                note(which)
            if pairs:
                return _pairs(remotes, opts, min_busbw, json_out)
            rep = run_allreduce(remotes, opts, None if json_out else note)
    verdict = judge_report(rep, min_busbw)
    if plot and rep.rows:
        draw(rep, plot)
    if json_out:
        print_json(dict(rep.to_dict(), exit_code=verdict.exit_code, **({"slurm": meta} if meta else {})))
    else:
        typer.echo(render_text(rep, verdict))   # its last line says the verdict, SLOW's reason included
    raise typer.Exit(verdict.exit_code)


def _srun_run(hosts, opts: "Options", sizes, node_python: Optional[str], step_size: int, pairs: bool):
    """The run with its ranks started by srun inside the allocation: (report, slurm metadata)."""
    if pairs:
        raise UsageError("--pairs is not available with --launcher srun yet", "run the pair rounds with --launcher ssh")
    # lazy: srun's ranks cost ~60 ms CPU at start-up (-X importtime, issue 26); only --launcher srun needs them
    from envcheck.slurm import srun, srun_ranks
    alloc = srun.require_allocation(srun_hosts(hosts))
    runner = srun.SrunRunner(step_size=step_size, job_name="envcheck-nccl-test")
    opts.node_python = node_python or "python3"
    rep = srun_ranks.allreduce(alloc.nodes, opts, runner, sizes)
    return rep, srun.slurm_meta(alloc, runner)


def _pairs(remotes, opts: "Options", min_busbw: Optional[float], json_out: bool) -> None:
    """`--pairs`: the pair rounds alone (a slow pair's round runs twice); exit 1 for a node or
    link the pairs fail, 3 when the rounds could not run."""
    from envcheck.allreduce.pairs import figures_of, judge, pair_spec  # lazy: with the run above, ~140 ms
    from envcheck.allreduce.render import pairs_outcome, render_pairs, render_text
    from envcheck.allreduce.run import run_allreduce
    if len(remotes) < 3:
        raise UsageError(f"--pairs needs 3 hosts or more ({len(remotes)} given): one pair has nothing to be "
                         "compared with", "name more hosts, or drop --pairs")
    opts.pairs, opts.sweep = pair_spec(opts.max_bytes, iters=opts.iters), False
    say = None if json_out else note
    rep = run_allreduce(remotes, opts, say)
    v = judge(figures_of(rep), min_busbw)
    code = pairs_outcome(rep, v).exit_code()
    if json_out:
        print_json(dict(rep.to_dict(), pairs=v.to_dict(), exit_code=code))
    else:
        typer.echo(render_text(rep, summarize=False))
        typer.echo(render_pairs(rep, v))
    raise typer.Exit(code)
