"""What every command shares: the error guard (one line + exit code, never a traceback) and the
options that mean the same thing everywhere (--matrix, --json). Values are checked by their
declarations (envcheck/params) while the command line is parsed."""
import functools
import json
import os
import shutil
import sys
from typing import Any, Callable, List, Optional, Sequence, Tuple, TypeVar

import typer

from envcheck import params as P
from envcheck.cli.options import option
from envcheck.errors import EXIT_INTERRUPTED, EnvcheckError

from typing import Annotated  # noqa: F401 - the command modules take it from here

F = TypeVar("F", bound=Callable[..., Any])

MatrixOpt = Annotated[Optional[str], option(P.MATRIX, envvar="ENVCHECK_MATRIX")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON only, nothing else on stdout.")]
StrictOpt = Annotated[bool, typer.Option(
    "--strict", help="A warning, or a check skipped for lack of facts, exits 1 as an error does.")]
ShowProbeOpt = Annotated[bool, typer.Option(
    "--show-probe", help="Print what this command runs on the nodes to read them (the probe script, "
                         "read-only, stdlib; its command line on stderr), and exit.")]
GpusPerNodeOpt = Annotated[Optional[int], option(P.GPUS_PER_NODE)]


def note(message: str) -> None:
    """`envcheck: message` on stderr: progress and notes, never on stdout (which may be JSON)."""
    typer.echo(f"envcheck: {message}", err=True)


def show_probe_exit(only=(), node_python: Optional[str] = None, deep: bool = False) -> "typer.Exit":
    """--show-probe: the probe script on stdout (runnable as saved), the exact command line that
    runs it with this command's sections on stderr; returns the Exit to raise."""
    # lazy: the probe runner (facts, rules, matrix) costs ~95 ms CPU at start-up (-X importtime,
    # issue 26): every command imports this module
    from envcheck.audit.probe import show_probe
    return show_probes_exit([("on each node", show_probe(deep=deep, node_python=node_python, only=only))])


def show_probes_exit(shown: Sequence[Tuple[str, Tuple[str, str]]]) -> "typer.Exit":
    """--show-probe of a command that reads its nodes more than once (an installer reads the node,
    then the tree it installed): (what each read is for, (its command line, its script)). Each
    command line on stderr; the script on stdout, each distinct one once, in order (one script:
    runnable as saved). Returns the Exit to raise."""
    scripts: List[str] = []
    for _, (_, script) in shown:
        if script not in scripts:
            scripts.append(script)
    for what, (command, script) in shown:
        which = f"script {scripts.index(script) + 1} below" if len(scripts) > 1 else "the script below"
        note(f"{what}: {command}   ({which} on its stdin)")
    for i, script in enumerate(scripts):
        if len(scripts) > 1:
            typer.echo(f"# ---- envcheck probe: script {i + 1} " + "-" * 40)
        typer.echo(script, nl=False)
    return typer.Exit(0)


def die(message: str, code: int = 2) -> "typer.Exit":
    """Print `envcheck: message` on stderr and return the Exit to raise."""
    typer.echo(f"envcheck: {message}", err=True)
    return typer.Exit(code)


def guard(fn: F) -> F:
    """Turn EnvcheckError into one line on stderr and its exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except EnvcheckError as e:
            e.reported = True   # type: ignore[attr-defined]  # (a lost stdout is said once)
            if getattr(e, "quiet", False):   # the pipe's reader stopped reading: nobody to tell
                raise typer.Exit(e.exit_code)
            # one line whatever the message quoted (a file's text, a parser's caret diagram)
            raise die(" ".join(part.strip() for part in e.one_line().splitlines() if part.strip()), e.exit_code)
        except KeyboardInterrupt:
            raise die("interrupted", EXIT_INTERRUPTED)

    return wrapper  # type: ignore[return-value]


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def color_wanted(stream: Any = None) -> bool:
    """Colour everywhere or nowhere, decided once, as rich decides it: on a terminal, or anywhere
    with FORCE_COLOR set; never with NO_COLOR set (no-color.org) or TERM=dumb."""
    out = sys.stdout if stream is None else stream
    if "FORCE_COLOR" not in os.environ and "TTY_COMPATIBLE" not in os.environ and not _isatty(out):
        return False  # what rich's Console.is_terminal says here too, without its ~50 ms import (issue 26)
    # lazy: rich.console costs ~50 ms CPU at start-up (-X importtime); --help and --json never ask
    from rich.console import Console
    c = Console(file=out)
    return c.is_terminal and not c.no_color and c.color_system is not None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or a closed file: rich says no terminal too
        return False


def text_width() -> int:
    """Where long messages wrap: the terminal's width ($COLUMNS when piped, else 100), 60..120."""
    return max(60, min(shutil.get_terminal_size((100, 24)).columns, 120))
