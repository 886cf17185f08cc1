import sys
import textwrap
from typing import TYPE_CHECKING, List, Optional

import typer

from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, MatrixOpt, die, guard, print_json
from envcheck import params as P
from envcheck.cli.hostopts import (OLD_TIMEOUT, ConnectTimeoutOpt, ExcludeOpt, ForksOpt, GroupsFileOpt,
                                   HostsFileOpt, IdentityOpt, NodePythonOpt, PortOpt, SshConfigOpt,
                                   StrictHostKeysOpt, TimeoutOpt, UserOpt, HostSelection, closing_all,
                                   command_timeout)
from envcheck.cli.options import argument
from envcheck.errors import EXIT_USAGE, UsageError

if TYPE_CHECKING:  # the matcher itself is imported where it runs (see explain below)
    from envcheck.explain.match import Explanation

WIDTH = 100


def _wrapped(label: str, body: str, hang: str = "") -> None:
    lines = textwrap.wrap(body, WIDTH - 11, subsequent_indent=hang, break_on_hyphens=False,
                          break_long_words=False) or [""]
    typer.echo(f"  {(label + ':') if label else '':<8} {lines[0]}")
    for line in lines[1:]:
        typer.echo(f"           {line}")


def _print(found: List["Explanation"]) -> None:
    for i, e in enumerate(found):
        if i:
            typer.echo("")
        comps = f"  [{', '.join(e.components)}]" if e.components else ""
        typer.echo(f"{i + 1}. {e.title} ({e.confidence}){comps}")
        typer.echo(f"  matched: line {e.line}: {e.matched}")
        if e.via:
            _wrapped("known", e.via)
        _wrapped("cause", e.cause)
        for j, a in enumerate(e.alternatives, 1):
            _wrapped("causes" if j == 1 else "", f"{j}. {a.confidence}: {a.cause}", "   ")
            _wrapped("", f"   tell apart: {a.check}", "   ")
        typer.echo(f"  {'fix:':<8} {e.fix}")   # one line: a command broken across lines cannot be copied whole
        for j, c in enumerate(e.checks):
            typer.echo(f"  {'check:' if j == 0 else '':<8} {c}")


def _print_hosts(found: List["Explanation"], diagnosis: list) -> None:
    typer.echo("")
    typer.echo("on the hosts:")
    for d in diagnosis:
        if d["error"]:
            typer.echo(f"  {d['host']}: could not be audited: {d['error']}")
            continue
        for e, c in zip(found, d["causes"]):
            why = f" ({c['why']})" if c.get("why") else ""
            typer.echo(f"  {d['host']}: {e.id}: {c['verdict']}{why}")
            for f in c["findings"]:
                typer.echo(f"    {f['severity']} [{f['component']}] {f['message']}")
                if f.get("fix"):
                    typer.echo(f"      fix: {f['fix']}")


@app.command("explain", renamed=OLD_TIMEOUT)
@guard
def explain(
    ctx: typer.Context,
    text: Annotated[Optional[str], argument(P.ERROR_TEXT)] = None,
    hosts: Annotated[Optional[List[str]], argument(
        P.HOSTS, show_default=False,
        help="Also audit these hosts and say per host which cause is confirmed or ruled out.")] = None,
    local: Annotated[bool, typer.Option("--local", help="Audit this machine and say which cause is confirmed or ruled out here.")] = False,
    node_python: NodePythonOpt = None,
    hosts_file: HostsFileOpt = None, exclude: ExcludeOpt = None, groups_file: GroupsFileOpt = None,
    ssh_config: SshConfigOpt = None, user: UserOpt = None,
    port: PortOpt = None, identity: IdentityOpt = None, forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0, timeout: TimeoutOpt = None,
    strict_host_keys: StrictHostKeysOpt = False,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Say what causes an error message (most likely first) and which check tells the causes apart. Example: envcheck explain "no kernel image is available" node[01-04]

    The likely causes of a CUDA/cuDNN/NCCL/torch error found in a message or a whole log (`<
    log.txt`), ranked with a confidence, the check that tells them apart, and (with hosts or
    `--local`) which cause is confirmed or ruled out where.

    What a confidence is worth, measured on 2,671 real texts it had never seen: an `exact` first
    cause was the text's own 88 % of the time, `likely` 55 %, `possible` 26 % (docs/doctor.md)."""
    if local and (hosts or hosts_file):
        raise UsageError("explain: --local audits this machine only; it takes no hosts", "drop --local, or the hosts")
    # lazy: the matcher and its catalogue cost ~60 ms CPU at start-up (-X importtime, issue 26),
    # which --help and every other command would pay
    from envcheck import inputs
    from envcheck.explain import match as lib
    stdin_text = None
    if text is None or text == "-":
        stdin_text = None if sys.stdin is None or sys.stdin.isatty() else inputs.read_stream(
            sys.stdin, "stdin", "paste the error message itself, or the tail of the log")
    found = lib.explain(lib.read_text(text, stdin_text))
    if not found:
        if json_out:
            print_json({"known": False, "environment": False, "matches": []})
            raise typer.Exit(EXIT_USAGE)
        raise die("explain: this error text matches no known signature; run `envcheck audit HOSTS` "
                  "to check the whole stack", 2)
    diagnosis = None
    if hosts or hosts_file or local:
        # lazy: the fleet audit and the matrix cost ~75 ms CPU at start-up (-X importtime, issue 26),
        # and `explain TEXT` alone (no hosts) must answer fast
        from envcheck.audit.fleet import audit_fleet
        from envcheck.explain.verdict import verdicts
        from envcheck.matrix.load import load_matrix
        from envcheck.remote import LocalRemote
        # --local: this machine even inside a Slurm allocation (no $SLURM_JOB_NODELIST fan-out)
        timeout = command_timeout(timeout)
        remotes = [LocalRemote()] if local else HostSelection.from_params(ctx.params, timeout=timeout).remotes()
        with closing_all(remotes):
            fa = audit_fleet(remotes, load_matrix(matrix), deep=False, node_python=node_python,
                             timeout=timeout, forks=forks)
        diagnosis = verdicts(found, fa.results)
    code = 0
    if diagnosis is not None:
        from envcheck.explain.verdict import exit_code  # lazy: as verdicts above, ~60 ms
        code = exit_code(diagnosis)
    if json_out:
        doc = {"known": True, "environment": lib.top_environment_cause(found) is not None,
               "matches": [e.to_dict() for e in found]}
        if diagnosis is not None:
            doc["hosts"] = diagnosis
        print_json(doc)
        raise typer.Exit(code)
    _print(found)
    if diagnosis is not None:
        _print_hosts(found, diagnosis)
    raise typer.Exit(code)
