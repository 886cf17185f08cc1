"""`envcheck audit [HOSTS]`: probe nodes and judge what they have. With no HOSTS (and no
--hosts-file or $SLURM_JOB_NODELIST), this machine; with hosts, one SSH exec per host, at most
--forks at once, then the cross-node comparison (envcheck/audit/fleet.py)."""
from pathlib import Path
from typing import Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import (Annotated, StrictOpt, GpusPerNodeOpt, JsonOpt, MatrixOpt, color_wanted, guard,
                                 note, print_json, text_width)
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ForksOpt, HostsArg, HostsFileOpt, ExcludeOpt, GroupsFileOpt, IdentityOpt,
                                   PortOpt, SshConfigOpt, StrictHostKeysOpt, UserOpt,
                                   closing_all, local_python, progress_printer, HostSelection)
from envcheck.errors import EXIT_OK
from envcheck.matrix.load import load_matrix
from envcheck.audit.probe import probe_source
from envcheck.remote import LocalRemote
from envcheck.report import render_audit


@app.command("audit")
@guard
def audit(
    ctx: typer.Context,
    hosts: HostsArg = None,
    deep: Annotated[bool, typer.Option(
        "--deep", help="Also import torch on the node and run a tiny op on every GPU (slower).")] = False,
    node_python: Annotated[Optional[str], typer.Option(
        "--node-python", metavar="PATH",
        help="Interpreter that runs the probe; torch's facts are read from its environment "
             "(default: python3, else python; on this machine envcheck's own interpreter when "
             "torch is installed there).")] = None,
    timeout: Annotated[Optional[float], typer.Option(
        "--timeout", metavar="SECONDS", min=1,
        help="Give up on the probe after this long (default 60, with --deep 240).")] = None,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None,
    user: UserOpt = None,
    port: PortOpt = None,
    identity: IdentityOpt = None,
    forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    strict_host_keys: StrictHostKeysOpt = False,
    save: Annotated[Optional[Path], typer.Option(
        "--save", metavar="DIR",
        help="Write each audited host's facts to DIR/HOST.json, for `envcheck check FILE`.")] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="With several hosts: every host's facts table, and one table row per host.")] = False,
    gpus_per_node: GpusPerNodeOpt = None,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
    strict: StrictOpt = False,
    show_probe: Annotated[bool, typer.Option(
        "--show-probe", help="Print the script that runs on the nodes (read-only, stdlib), and exit.")] = False,
) -> None:
    """Probe nodes and report driver, GPUs, CUDA, cuDNN, torch, NCCL, Python, gcc and the
    non-interactive environment, what will break, and what differs across nodes.
    Example: envcheck audit node[01-08] --ssh-config ~/.ssh/cluster.conf"""
    from envcheck.audit.fleet import audit_fleet, save_facts
    from envcheck.audit.render import to_json

    if show_probe:
        typer.echo(probe_source(), nl=False)
        raise typer.Exit(EXIT_OK)

    m = load_matrix(matrix)
    with closing_all(HostSelection.from_params(ctx.params, timeout=timeout or 60.0).remotes()) as remotes:
        local = len(remotes) == 1 and isinstance(remotes[0], LocalRemote)
        node_python, which = local_python(node_python, remotes, "the probe (whose torch is audited) runs")
        if which:
            note(which)
        tick = progress_printer(len(remotes), "audit", enabled=None if not (json_out or local) else False)
        fleet = audit_fleet(remotes, m, deep=deep, node_python=node_python, timeout=timeout,
                            forks=forks, on_done=lambda r: tick(r.host, r.reachable),
                            gpus_per_node=gpus_per_node)
    if save:
        written = save_facts(fleet, str(save))
        typer.echo(f"saved {len(written)} facts file(s) to {save}", err=True)
    if json_out:
        print_json(to_json(fleet))  # one shape for one host or many, local or remote
        raise typer.Exit(fleet.exit_code(strict))
    color = color_wanted()
    from envcheck.audit.render import render, render_one_summary
    if len(fleet.results) == 1:
        # one host reads the same whether it is this machine or one over SSH: its facts table
        typer.echo(render_audit(fleet.results, color) + "\n")
        typer.echo(render_one_summary(fleet, strict, color))
    else:
        if full:
            typer.echo(render_audit(fleet.results, color) + "\n")
        typer.echo(render(fleet, full=full, color=color, width=text_width(), strict=strict), nl=False)
    raise typer.Exit(fleet.exit_code(strict))
