"""`envcheck nccl-test [HOSTS]`: all-reduce bandwidth and correctness across hosts
(envcheck/allreduce/)."""
from typing import Optional

import typer

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce.run import Options, check_options, run_allreduce
from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, guard, note, print_json
from envcheck.allreduce.verdict import judge_report
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ForksOpt, HostsArg, HostsFileOpt, ExcludeOpt, GroupsFileOpt,
                                   IdentityOpt, NodePythonOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, UserOpt, HostSelection, closing_all,
                                   local_python)
from envcheck.cli.rankopts import BackendOpt, MasterAddrOpt, MasterPortOpt, WorkerNprocOpt

MinBytesOpt = Annotated[str, typer.Option(help="Smallest message (8, 64K, 1M…).")]
MaxBytesOpt = Annotated[str, typer.Option(help="Largest message.")]
FactorOpt = Annotated[int, typer.Option(help="Size multiplier between steps.")]
DtypeOpt = Annotated[str, typer.Option(help="float32, float16, bfloat16, float64, int32.")]
WarmupOpt = Annotated[int, typer.Option(help="Untimed all-reduces per size.", min=0, max=1000)]
ItersOpt = Annotated[int, typer.Option(help="Timed all-reduces per size.", min=1, max=100000)]
CollectiveTimeoutOpt = Annotated[float, typer.Option(
    "--collective-timeout", "--timeout", min=0.1, metavar="SECONDS",
    help="Seconds one collective may take before the run is stopped (exit 3), as doctor's "
         "--collective-timeout (--timeout is the older name). Remote commands of the "
         "preflight get --connect-timeout + 30.")]
RendezvousTimeoutOpt = Annotated[float, typer.Option(help="Seconds for every rank to join.")]
RunTimeoutOpt = Annotated[float, typer.Option(help="Last bound on the whole run per host.")]
IfnameOpt = Annotated[Optional[str], typer.Option(help="Interface for NCCL_SOCKET_IFNAME and "
                                                       "GLOO_SOCKET_IFNAME.")]
MinBusbwOpt = Annotated[Optional[float], typer.Option(
    "--min-busbw", help="Exit 1 when busbw at the largest size is below this (GB/s).")]
PlotOpt = Annotated[Optional[str], typer.Option(help="Write busbw vs size to this image "
                                                     "(needs matplotlib).")]


@app.command("nccl-test")
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
    nproc_per_node: WorkerNprocOpt = None,
    min_bytes: MinBytesOpt = "8",
    max_bytes: MaxBytesOpt = "256M",
    factor: FactorOpt = 2,
    dtype: DtypeOpt = "float32",
    warmup: WarmupOpt = 5,
    iters: ItersOpt = 20,
    timeout: CollectiveTimeoutOpt = 60.0,
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
    json_out: JsonOpt = False,
) -> None:
    """Measure all-reduce bandwidth and check its sums across hosts. Example: envcheck nccl-test node[01-02]"""
    from envcheck.allreduce.render import plot as draw
    from envcheck.allreduce.render import render_text, require_matplotlib

    if plot:
        require_matplotlib()   # before the run, not after minutes of it
    opts = Options(backend=backend, nproc_per_node=nproc_per_node,
                   min_bytes=am.parse_size(min_bytes), max_bytes=am.parse_size(max_bytes),
                   factor=factor, dtype=dtype, warmup=warmup, iters=iters, timeout=timeout,
                   rendezvous_timeout=rendezvous_timeout, run_timeout=run_timeout,
                   master_addr=master_addr, master_port=master_port, ifname=ifname,
                   node_python=node_python, connect_timeout=connect_timeout, forks=forks)
    check_options(opts)
    # its remote commands are the preflight's and the launchers' (bounded by the run itself)
    with closing_all(HostSelection.from_params(ctx.params, timeout=connect_timeout + 30).remotes()) as remotes:
        opts.node_python, which = local_python(node_python, remotes)
        if which:
            note(which)
        rep = run_allreduce(remotes, opts, None if json_out else note)
    verdict = judge_report(rep, min_busbw)
    if plot and rep.rows:
        draw(rep, plot)
    if json_out:
        print_json(dict(rep.to_dict(), exit_code=verdict.exit_code))
    else:
        typer.echo(render_text(rep, verdict))   # its last line says the verdict, SLOW's reason included
    raise typer.Exit(verdict.exit_code)
