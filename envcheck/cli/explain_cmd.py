from __future__ import annotations

import sys
import textwrap
from typing import Optional

import typer

from envcheck import explain as lib
from envcheck.cli import app
from envcheck.cli.common import Annotated, JsonOpt, die, guard, print_json


@app.command("explain")
@guard
def explain(
    text: Annotated[Optional[str], typer.Argument(
        metavar="ERROR_TEXT", help="The error message or traceback; '-' (or nothing) reads stdin.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Say what causes an error message and which check diagnoses it. Example: envcheck explain "no kernel image is available" """
    stdin_text = None
    if text is None or text == "-":
        stdin_text = None if sys.stdin is None or sys.stdin.isatty() else sys.stdin.read()
    found = lib.explain(lib.read_text(text, stdin_text))
    if json_out:
        print_json({"known": bool(found), "matches": [e.to_dict() for e in found]})
        if not found:
            raise typer.Exit(2)
        return
    if not found:
        raise die("explain: this error text matches no known signature; run `envcheck audit HOSTS` "
                  "to check the whole stack", 2)
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
