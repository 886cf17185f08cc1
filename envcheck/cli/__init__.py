"""The command line: parse arguments, call the library, print, exit. Nothing else lives here: a
command's arguments and output in cli/<command>.py; the shared host options and HostSelection in
hostopts.py; the options of the commands that start ranks (--backend, --master-addr …) in
rankopts.py; --matrix, --json and the error guard in common.py; every option built from its
declaration in envcheck/params by options.py; help layout and old option names (--timeout) in
command.py; stdout that cannot fail silently, Ctrl-C and $COLUMNS in streams.py; the docs'
generated tables in reference.py.

Each command is in its own module below; importing it registers it on `app`.
"""
from typing import Annotated
import importlib
import sys

import typer

from envcheck import __version__
from envcheck.cli import streams
from envcheck.cli.command import EnvcheckApp
from envcheck.cli.options import Refused
from envcheck.errors import EXIT_INTERRUPTED, EnvcheckError

# Plain help (rich_markup_mode=None): two columns that read at 80 columns, at most 100 wide
# whatever $COLUMNS says, the same on every typer version pip resolves.
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}
app = EnvcheckApp(
    name="envcheck",
    help="Get a GPU cluster ready for distributed PyTorch training, and prove that it is.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings=CONTEXT,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"envcheck {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option(
        "--version", "-V", is_eager=True, callback=_print_version,
        help="Print envcheck's version and exit.")] = False) -> None:
    """Get a GPU cluster ready for distributed PyTorch training, and prove that it is."""


# Registration: one import per command module (keep one per line; order is the help order).
from envcheck.cli import audit  # noqa: E402,F401
from envcheck.cli import check  # noqa: E402,F401
from envcheck.cli import install  # noqa: E402,F401
from envcheck.cli import nccl_test  # noqa: E402,F401
from envcheck.cli import launch  # noqa: E402,F401
from envcheck.cli import doctor  # noqa: E402,F401
from envcheck.cli import slurm  # noqa: E402,F401
from envcheck.cli import provision  # noqa: E402,F401
from envcheck.cli import plan  # noqa: E402,F401
from envcheck.cli import explain  # noqa: E402,F401
from envcheck.cli import matrix  # noqa: E402,F401
from envcheck.cli import version as _version_command  # noqa: E402,F401
from envcheck.cli.common import color_wanted  # noqa: E402


def main() -> None:
    """The console script. Every error is one line on stderr with its exit code: click's own
    usage errors (a bad option value, an unknown option, a missing argument) name the fix like
    every other envcheck error; a value its declaration refuses (envcheck/params) says so itself;
    output that cannot be written to stdout, and Ctrl-C, too (envcheck/cli/streams.py)."""
    streams.sane_terminal_size()
    streams.install()
    try:
        code = _run()
    except KeyboardInterrupt:
        code = _say("interrupted", EXIT_INTERRUPTED)
    lost = streams.flush()
    if lost is not None:
        code = max(code, _say(lost.one_line(), lost.exit_code))
    sys.exit(code)


def _say(message: str, code: int) -> int:
    typer.echo(f"envcheck: {message}", err=True)
    return code


def _run() -> int:
    # click's exceptions, wherever this Typer takes them from (Typer >= 0.29 vendors click)
    exc = importlib.import_module(typer.BadParameter.__module__)
    try:
        # click strips ANSI from output that is not a terminal; colour is decided once, in
        # common.color_wanted (FORCE_COLOR, NO_COLOR, a terminal), for every echo
        rv = app(standalone_mode=False, color=color_wanted())
    except Refused as e:
        return _say(e.message, e.exit_code)
    except exc.UsageError as e:
        if type(e).__name__ == "NoArgsIsHelpError" and e.ctx is not None:
            # a bare `envcheck` or `envcheck matrix`: show the help (Typer's rich help has
            # printed itself already while the error was built; plain click's is the message)
            if e.format_message().strip():
                typer.echo(e.format_message())
            return e.exit_code
        where = e.ctx.command_path if e.ctx is not None else "envcheck"
        return _say(f"{' '.join(e.format_message().split())} (fix: see `{where} --help`)", e.exit_code)
    except exc.ClickException as e:
        return _say(" ".join(e.format_message().split()), e.exit_code)
    except typer.Abort:   # Ctrl-C at a prompt
        return _say("interrupted", EXIT_INTERRUPTED)
    except EnvcheckError as e:   # raised outside a command's guard (stdout lost while help printed)
        e.reported = True   # type: ignore[attr-defined]
        return _say(" ".join(e.one_line().split()), e.exit_code)
    return rv if isinstance(rv, int) else 0
