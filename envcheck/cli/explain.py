from __future__ import annotations

import sys
import textwrap
from typing import List, Optional

import typer

from envcheck.explain import match as lib
from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, MatrixOpt, die, guard, print_json
from envcheck.cli.hostopts import (ConnectTimeoutOpt, ForksOpt, HostsFileOpt, IdentityOpt, NodePythonOpt,
                                   PortOpt, SshConfigOpt, StrictHostKeysOpt, TimeoutOpt, UserOpt, HostSelection)


def _print(found: List[lib.Explanation]) -> None:
    width = 100
    for i, e in enumerate(found):
        if i:
            typer.echo("")
        typer.echo(f"{e.title}  [{', '.join(e.components)}]")
        typer.echo(f"  matched: {e.matched}")
        for label, body in (("cause", e.cause), ("fix", e.fix)):
            lines = textwrap.wrap(body, width - 11) or [""]
            typer.echo(f"  {label + ':':<8} {lines[0]}")
            for line in lines[1:]:
                typer.echo(f"           {line}")
        for j, c in enumerate(e.checks):
            typer.echo(f"  {'check:' if j == 0 else '':<8} {c}")


@app.command("explain")
@guard
def explain(
    ctx: typer.Context,
    text: Annotated[Optional[str], typer.Argument(
        metavar="ERROR_TEXT", help="The error message or traceback; '-' (or nothing) reads stdin.")] = None,
    hosts: Annotated[Optional[List[str]], typer.Argument(
        metavar="[HOSTS]...", show_default=False,
        help="Also audit these hosts and show the findings that diagnose this error.")] = None,
    node_python: NodePythonOpt = None,
    hosts_file: HostsFileOpt = None, ssh_config: SshConfigOpt = None, user: UserOpt = None,
    port: PortOpt = None, identity: IdentityOpt = None, forks: ForksOpt = 32,
    connect_timeout: ConnectTimeoutOpt = 10.0, timeout: TimeoutOpt = 60.0,
    strict_host_keys: StrictHostKeysOpt = False,
    matrix: MatrixOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Say what causes an error message and which check diagnoses it. Example: envcheck explain "no kernel image is available" node[01-04]"""
    stdin_text = None
    if text is None or text == "-":
        from envcheck import inputs
        stdin_text = None if sys.stdin is None or sys.stdin.isatty() else inputs.read_stream(
            sys.stdin, "stdin", "paste the error message itself, or the tail of the log")
    found = lib.explain(lib.read_text(text, stdin_text))
    if not found:
        if json_out:
            print_json({"known": False, "matches": []})
            raise typer.Exit(2)
        raise die("explain: this error text matches no known signature; run `envcheck audit HOSTS` "
                  "to check the whole stack", 2)
    diagnosis = None
    if hosts or hosts_file:
        from envcheck.audit.fleet import audit_fleet
        from envcheck.matrix.load import load_matrix
        comps = set(lib.components_of(found))
        remotes = HostSelection.from_params(ctx.params).remotes()
        try:
            fa = audit_fleet(remotes, load_matrix(matrix), deep=False, node_python=node_python,
                             timeout=timeout, forks=forks)
        finally:
            for r in remotes:
                r.close()
        diagnosis = [{"host": r.host, "error": r.error,
                      "findings": [f.to_dict() for f in r.findings if f.component in comps]} for r in fa.results]
    code = 0
    if diagnosis is not None:
        if any(d["error"] for d in diagnosis):
            code = 3
        elif any(f["severity"] == "error" for d in diagnosis for f in d["findings"]):
            code = 1
    if json_out:
        doc = {"known": True, "matches": [e.to_dict() for e in found]}
        if diagnosis is not None:
            doc["hosts"] = diagnosis
        print_json(doc)
        raise typer.Exit(code)
    _print(found)
    if diagnosis is not None:
        typer.echo("")
        typer.echo(f"on the hosts (findings for {', '.join(lib.components_of(found))}):")
        for d in diagnosis:
            if d["error"]:
                typer.echo(f"  {d['host']}: could not be audited: {d['error']}")
                continue
            shown = [f for f in d["findings"] if f["severity"] in ("error", "warning")]
            if not shown:
                typer.echo(f"  {d['host']}: nothing found")
            for f in shown:
                typer.echo(f"  {d['host']}: {f['severity']} [{f['component']}] {f['message']}")
                if f.get("fix"):
                    typer.echo(f"  {'':<{len(d['host'])}}  fix: {f['fix']}")
    raise typer.Exit(code)
