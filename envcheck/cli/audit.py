"""`envcheck audit [HOSTS]`: probe nodes and judge what they have. With no HOSTS (and no
--hosts-file or $SLURM_JOB_NODELIST), this machine; with hosts, one SSH exec per host, at most
--forks at once, then the cross-node comparison (envcheck/audit/fleet.py)."""
from typing import Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import (Annotated, StrictOpt, GpusPerNodeOpt, JsonOpt, MatrixOpt, color_wanted, guard,
                                 note, print_json, show_probe_exit, text_width)
from envcheck.cli.hostopts import (OLD_TIMEOUT, ConnectTimeoutOpt, ExcludeOpt, ForksOpt, GroupsFileOpt,
                                   HostsArg, HostsFileOpt, IdentityOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, TimeoutOpt, UserOpt, closing_all, command_timeout,
                                   local_python, progress_printer, HostSelection)
from envcheck.cli.options import option
from envcheck.cli.slurmopts import LauncherOpt, StepSizeOpt
from envcheck.cli.slurmopts import check_launcher, srun_hosts
from envcheck import params as P


@app.command("audit", renamed=OLD_TIMEOUT)
@guard
def audit(
    ctx: typer.Context,
    hosts: HostsArg = None,
    deep: Annotated[bool, typer.Option(
        "--deep/--no-deep", help="Also import torch on the node and run a tiny op on every GPU "
                                 "(slower; doctor does it by default).")] = False,
    node_python: Annotated[Optional[str], option(
        P.NODE_PYTHON, help="Interpreter that runs the probe; torch's facts are read from its "
                            "environment (default: python3, else python; on this machine envcheck's "
                            "own interpreter when torch is installed there).")] = None,
    timeout: TimeoutOpt = None,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None,
    user: UserOpt = None,
    port: PortOpt = None,
    identity: IdentityOpt = None,
    forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    strict_host_keys: StrictHostKeysOpt = False,
    save: Annotated[Optional[str], option(P.SAVE)] = None,
    full: Annotated[bool, typer.Option(
        "--full", help="With several hosts: every host's facts table, and one table row per host.")] = False,
    gpus_per_node: GpusPerNodeOpt = None,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
    strict: StrictOpt = False,
    show_probe: Annotated[bool, typer.Option(
        "--show-probe", help="Print the script that runs on the nodes (read-only, stdlib), and exit.")] = False,
    launcher: LauncherOpt = "ssh",
    step_size: StepSizeOpt = 64,
) -> None:
    """Probe nodes and report driver, GPUs, CUDA, cuDNN, torch, NCCL, Python, gcc and the
    non-interactive environment, what will break, and what differs across nodes.
    Example: envcheck audit node[01-08] --ssh-config ~/.ssh/cluster.conf

    One SSH command per host collects driver, GPUs, CUDA toolkits, cuDNN,
    torch/torchvision/torchaudio, NCCL, Python, gcc and the non-interactive environment; judges
    them against `compat_matrix.yaml` and across nodes; says what is wrong and the exact fix. No
    hosts = this machine, no SSH."""
    # lazy: the fleet audit, its renderers and the matrix cost ~110 ms CPU at start-up (-X importtime,
    # issue 26); only audit needs them
    from envcheck.audit.fleet import audit_fleet, save_facts
    from envcheck.audit.render import to_json
    from envcheck.matrix.load import load_matrix
    from envcheck.remote import LocalRemote

    if show_probe:  # the script on stdout (runnable as saved), its command line on stderr
        raise show_probe_exit(node_python=node_python, deep=deep)

    m = load_matrix(matrix)
    timeout = command_timeout(timeout, deep)
    if launcher != "ssh":
        _audit_srun(hosts, m, launcher, step_size, deep, node_python, timeout, gpus_per_node, save, full,
                    json_out, strict)
    with closing_all(HostSelection.from_params(ctx.params, timeout=timeout).remotes()) as remotes:
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
    _show(fleet, full, strict)


def _show(fleet, full: bool, strict: bool) -> None:
    """The report, the same through SSH or srun, then exit with the fleet's outcome."""
    # lazy: the renderers and the facts table cost ~110 ms CPU at start-up (counted with the
    # fleet audit above, -X importtime, issue 26); only audit needs them
    from envcheck.audit.render import render, render_one_summary
    from envcheck.report import render_audit
    color = color_wanted()
    if len(fleet.results) == 1:
        # one host reads the same whether it is this machine or one over SSH: its facts table
        typer.echo(render_audit(fleet.results, color) + "\n")
        typer.echo(render_one_summary(fleet, strict, color))
    else:
        if full:
            typer.echo(render_audit(fleet.results, color) + "\n")
        typer.echo(render(fleet, full=full, color=color, width=text_width(), strict=strict), nl=False)
    raise typer.Exit(fleet.exit_code(strict))


def _audit_srun(hosts, m, launcher, step_size, deep, node_python, timeout, gpus_per_node, save, full,
                json_out, strict) -> None:
    """`audit --launcher srun`: the allocation's nodes, the probe through srun (envcheck/slurm/srun.py)."""
    # lazy: the fleet audit, its renderer and srun cost ~80 ms CPU at start-up (-X importtime, issue 26); only audit needs them
    from envcheck.audit.fleet import save_facts
    from envcheck.audit.render import to_json
    from envcheck.slurm import srun

    check_launcher(launcher)
    fleet, meta = srun.audit(srun_hosts(hosts), m, step_size=step_size, deep=deep, node_python=node_python,
                             timeout=timeout, gpus_per_node=gpus_per_node)
    if save:
        typer.echo(f"saved {len(save_facts(fleet, str(save)))} facts file(s) to {save}", err=True)
    if json_out:
        print_json(dict(to_json(fleet), slurm=meta))
        raise typer.Exit(fleet.exit_code(strict))
    note(f"through srun: job {meta['job_id']}, step(s) {', '.join(meta['steps']) or 'none reported'}")
    _show(fleet, full, strict)
