from __future__ import annotations

from typing import Optional

import typer

from envcheck.allreduce import bandwidth as am
from envcheck.allreduce.run import Options, check_options, run_allreduce
from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, guard, print_json
from envcheck.allreduce.verdict import SLOW, judge_report
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ForksOpt, HostsArg, HostsFileOpt,
                                   IdentityOpt, NodePythonOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, UserOpt, HostSelection, local_python)


@app.command("nccl-test")
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
    backend: Annotated[str, typer.Option(help="nccl, gloo, or auto (nccl when every node has "
                                              "a GPU).")] = "auto",
    nproc_per_node: Annotated[Optional[int], typer.Option(
        "--nproc-per-node", help="Ranks per host (default: its GPU count; 2 without GPUs).",
        min=1, max=1024)] = None,
    min_bytes: Annotated[str, typer.Option(help="Smallest message (8, 64K, 1M…).")] = "8",
    max_bytes: Annotated[str, typer.Option(help="Largest message.")] = "256M",
    factor: Annotated[int, typer.Option(help="Size multiplier between steps.")] = 2,
    dtype: Annotated[str, typer.Option(help="float32, float16, bfloat16, float64, int32.")]
    = "float32",
    warmup: Annotated[int, typer.Option(help="Untimed all-reduces per size.", min=0, max=1000)] = 5,
    iters: Annotated[int, typer.Option(help="Timed all-reduces per size.", min=1, max=100000)] = 20,
    timeout: Annotated[float, typer.Option(
        "--collective-timeout", "--timeout", min=0.1, metavar="SECONDS",
        help="Seconds one collective may take before the run is stopped (exit 3), as doctor's "
             "--collective-timeout (--timeout is the older name). Remote commands of the "
             "preflight get --connect-timeout + 30.")] = 60.0,
    rendezvous_timeout: Annotated[float, typer.Option(help="Seconds for every rank to join.")]
    = 60.0,
    run_timeout: Annotated[float, typer.Option(help="Last bound on the whole run per host.")]
    = 1800.0,
    master_addr: Annotated[Optional[str], typer.Option(help="MASTER_ADDR (default: the first "
                                                            "host's address).")] = None,
    master_port: Annotated[Optional[int], typer.Option(min=1, max=65535, help="MASTER_PORT (default: a free "
                                                            "one).")] = None,
    ifname: Annotated[Optional[str], typer.Option(help="Interface for NCCL_SOCKET_IFNAME and "
                                                       "GLOO_SOCKET_IFNAME.")] = None,
    node_python: NodePythonOpt = None,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    forks: ForksOpt = 32,
    min_busbw: Annotated[Optional[float], typer.Option(
        "--min-busbw", help="Exit 1 when busbw at the largest size is below this (GB/s).")]
    = None,
    plot: Annotated[Optional[str], typer.Option(help="Write busbw vs size to this image "
                                                     "(needs matplotlib).")] = None,
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
    remotes = HostSelection.from_params(ctx.params, timeout=connect_timeout + 30).remotes()
    opts.node_python, which = local_python(node_python, remotes)
    if which:
        typer.echo(f"envcheck: {which}", err=True)
    progress = None if json_out else (lambda m: typer.echo(f"envcheck: {m}", err=True))
    try:
        rep = run_allreduce(remotes, opts, progress)
    finally:
        for r in remotes:
            r.close()
    verdict = judge_report(rep, min_busbw)
    code = verdict.exit_code
    if plot and rep.rows:
        draw(rep, plot)
    if json_out:
        d = rep.to_dict()
        d["exit_code"] = code
        print_json(d)
    else:
        typer.echo(render_text(rep))
        if verdict.status == SLOW:
            typer.echo(f"# {verdict.message}")
    raise typer.Exit(code)
