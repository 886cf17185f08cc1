from pathlib import Path
from typing import Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, MatrixOpt, color_wanted, guard, print_json
from envcheck import params as P
from envcheck.cli.hostopts import (OLD_TIMEOUT, ConnectTimeoutOpt, ExcludeOpt, ForksOpt, GroupsFileOpt, HostsArg,
                                   HostsFileOpt, IdentityOpt, NodePythonOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, TimeoutOpt, UserOpt, HostSelection, closing_all,
                                   command_timeout)
from envcheck.cli.install import sudo_password_source
from envcheck.cli.options import argument, option


@app.command("provision", renamed=OLD_TIMEOUT)
@guard
def provision_cmd(
    ctx: typer.Context,
    playbook: Annotated[str, argument(P.PLAYBOOK)],
    hosts: HostsArg = None,
    files: Annotated[Optional[str], option(P.FILES)] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print per host what each step would do; change nothing.")] = False,
    sudo: Annotated[bool, typer.Option("--sudo", help="Use sudo where the login is not root (password asked once, or ENVCHECK_SUDO_PASSWORD).")] = False,
    no_checksum: Annotated[bool, typer.Option("--no-checksum", help="Do not check runfile sha256s against the playbook/matrix (makeself's own check still runs).")] = False,
    node_python: NodePythonOpt = None,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None,
    user: UserOpt = None,
    port: PortOpt = None,
    identity: IdentityOpt = None,
    forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0,
    timeout: TimeoutOpt = None,
    strict_host_keys: StrictHostKeysOpt = False,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Bring every host to a playbook's stack, validated first, idempotent. Example: envcheck provision cuda12.4-cudnn9.1-torch2.5 node[01-04] --files ~/downloads --dry-run

    Bring every host to a stack described as data in `playbooks/*.yaml`."""
    # lazy: provision (every installer, the playbooks, the matrix) costs ~140 ms CPU at start-up
    # (-X importtime, issue 26); only provision needs it
    from envcheck.install.render import outcome_body
    from envcheck.matrix.load import load_matrix
    from envcheck.provision.playbooks import load_playbook
    from envcheck.provision.run import ProvisionOptions, exit_code, outcome, provision, to_json
    from envcheck.render import fold_blocks, plural, summary_line
    from envcheck.report import paint

    pb = load_playbook(playbook)
    m = load_matrix(matrix)
    timeout = command_timeout(timeout)
    remotes = HostSelection.from_params(ctx.params, timeout=timeout).remotes()
    o = ProvisionOptions(files=Path(files) if files else None, dry_run=dry_run, use_sudo=sudo,
                         password=sudo_password_source(sudo), node_python=node_python or "python3",
                         no_checksum=no_checksum, forks=forks, timeout=timeout)
    if not json_out:
        typer.echo(f"playbook {pb.name} ({pb.path}): {len(pb.steps)} step(s) on {len(remotes)} host(s)"
                   + (" [dry run]" if dry_run else ""))
    with closing_all(remotes):
        res = provision(pb, remotes, m, o)
    code = exit_code(res.runs)
    if json_out:
        print_json({"playbook": pb.name, "dry_run": dry_run, "notes": res.notes, "warnings": res.warnings,
                    "hosts": to_json(res.runs), "exit_code": code})
        raise typer.Exit(code)
    color = color_wanted()
    for w in res.warnings:
        typer.echo(f"stack warning: {w}")
    for n in res.notes:
        typer.echo(f"note: {n}")
    by_index = {s.index: s for s in pb.steps}

    def block(run) -> list:
        head = paint("ok", "ok", color) if run.ok else paint(f"STOPPED at {run.stopped}", "error", color)
        lines = [head]
        for st in run.steps:
            lines.append(f"  {by_index[st.index].where}: {st.outcome.status}")
            lines.extend(outcome_body(st.outcome, indent="    ", log_header=False, log_lines=10))
        return lines

    for where, lines in fold_blocks((run.host, block(run)) for run in res.runs):
        typer.echo(f"{where}: {lines[0]}")
        for line in lines[1:]:
            typer.echo(line)
    changed = sum(r.changed for r in res.runs)
    ok = sum(r.ok for r in res.runs)
    tail = "dry run" if dry_run else (f"{plural(changed, 'step')} changed something; run it again: nothing should "
                                      "change" if changed else "nothing to do")
    typer.echo(summary_line(outcome(res.runs).verdict(), plural(len(res.runs), "host"),
                            [(ok, "ok"), (len(res.runs) - ok, "stopped")], tail, paint=lambda t, st: paint(t, st, color)))
    raise typer.Exit(code)
