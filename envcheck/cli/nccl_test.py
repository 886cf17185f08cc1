"""`envcheck nccl-test [HOSTS]`: all-reduce bandwidth and correctness across hosts
(envcheck/allreduce/)."""
from typing import Optional

import typer

from envcheck.allreduce.render import plot as draw, render_text, require_matplotlib
from envcheck.allreduce.run import Options, check_options, run_allreduce
from envcheck.allreduce.verdict import SLOW, judge_report
from envcheck.allreduce.preflight import PROBE_SECTIONS
from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, ShowProbeOpt, guard, note, print_json, show_probe_exit
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ForksOpt, HostsArg, HostsFileOpt,
                                   IdentityOpt, NodePythonOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, UserOpt, HostSelection, closing_all,
                                   local_python)
from envcheck.cli.options import option
from envcheck.cli.rankopts import (MAX_BYTES_DEFAULT, BackendOpt, CollectiveTimeoutOpt, IfnameOpt,
                                   MasterAddrOpt, MasterPortOpt, MaxBytesOpt, MinBusbwOpt, NprocOpt)
from envcheck import params as P

MinBytesOpt = Annotated[int, option(P.MIN_BYTES)]
FactorOpt = Annotated[int, option(P.FACTOR)]
DtypeOpt = Annotated[str, option(P.DTYPE)]
WarmupOpt = Annotated[int, option(P.WARMUP)]
ItersOpt = Annotated[int, option(P.ITERS)]
RendezvousTimeoutOpt = Annotated[float, option(P.RENDEZVOUS_TIMEOUT)]
RunTimeoutOpt = Annotated[float, option(P.RUN_TIMEOUT, help="Last bound on the whole run per host.")]
PlotOpt = Annotated[Optional[str], option(P.PLOT)]


@app.command("nccl-test", renamed={"--timeout": "--collective-timeout"})
@guard
def nccl_test(
    ctx: typer.Context,
    hosts: HostsArg = None,
    hosts_file: HostsFileOpt = None,
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
    json_out: JsonOpt = False,
    show_probe: ShowProbeOpt = False,
) -> None:
    """Measure all-reduce bandwidth and check its sums across hosts. Example: envcheck nccl-test node[01-02]"""
    if show_probe:
        raise show_probe_exit(PROBE_SECTIONS, node_python)

    if plot:
        require_matplotlib(plot)   # before the run, not after minutes of it
    opts = Options(backend=backend, nproc_per_node=nproc_per_node,
                   min_bytes=min_bytes, max_bytes=max_bytes,
                   factor=factor, dtype=dtype, warmup=warmup, iters=iters, timeout=collective_timeout,
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
        typer.echo(render_text(rep))
        if verdict.status == SLOW:
            typer.echo(f"# {verdict.message}")
    raise typer.Exit(verdict.exit_code)
