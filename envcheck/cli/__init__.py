"""The command line: parse arguments, call the library, print, exit. Nothing else lives here: a
command's arguments and output in cli/<command>.py; the shared host options and HostSelection in
hostopts.py; the options of the commands that start ranks (--backend, --master-addr …) in
rankopts.py; --matrix, --json and the error guard in common.py; every option built from its
declaration in envcheck/params by options.py; help layout and old option names (--timeout) in
command.py; stdout that cannot fail silently, Ctrl-C and $COLUMNS in streams.py; the docs'
generated tables in reference.py.

Each command is in its own module below; importing it registers it on `app`.
"""
from typing import Annotated, Any, List
import importlib
import sys

import typer
import typer.main
from typer.core import TyperGroup

import envcheck
from envcheck import __version__
from envcheck.cli import streams
from envcheck.cli.command import EnvcheckApp, HelpCommand
from envcheck.cli.options import Refused
from envcheck.errors import EXIT_INTERRUPTED, EnvcheckError


class _Commands(TyperGroup):
    """The root group: a command not registered yet is registered when asked for (its module
    imported, the group built again for it); while help lists the commands, one not registered
    stands in as its help from COMMANDS."""
    listing = False

    def list_commands(self, ctx: Any) -> List[str]:
        return [n for n, _, _ in COMMANDS] + [n for n in super().list_commands(ctx) if n not in _MODULE]

    def get_command(self, ctx: Any, name: str) -> Any:
        cmd = super().get_command(ctx, name)
        if cmd is not None or name not in _MODULE:
            return cmd
        if self.listing:
            return HelpCommand(name=name, help=next(h for n, _, h in COMMANDS if n == name))
        self._register([_MODULE[name]])
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: Any, args: List[str]) -> Any:
        if args and args[0] not in _MODULE and not args[0].startswith("-"):
            self._register(_MODULE.values())   # a typo: typer's "Did you mean" reads every command
        return super().resolve_command(ctx, args)

    def _register(self, modules: Any) -> None:
        for module in dict.fromkeys(modules):
            importlib.import_module(f"envcheck.cli.{module}")
        self.commands.update(typer.main.get_command(app).commands)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        self.listing = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self.listing = False


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
    cls=_Commands,
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


# Registration: each command's module, in the help's order, and the first paragraph of its help
# (what `envcheck --help` lists). Imported here, every command is registered (for importers: the
# tests, the docs' tables); the console script (envcheck/__main__.py) imports only the module of
# the command it runs: all of them cost `plan` ~50 ms of its ~300 ms CPU (bench/cli_cpu.py), and
# `--help` lists the commands from this table. tests/cli/test_lazy_commands.py holds the table
# to what the modules register.
COMMANDS = (
    ("audit", "audit", "Probe nodes and report driver, GPUs, CUDA, cuDNN, torch, NCCL, Python, gcc and the "
     "non-interactive environment, what will break, and what differs across nodes. Example: envcheck audit "
     "node[01-08] --ssh-config ~/.ssh/cluster.conf"),
    ("check", "check", "Judge a stack without touching any machine. Example: envcheck check --driver 410.48 "
     "--cuda 10.0 --torch 1.1.0+cu100 --gpu V100"),
    ("env", "install", "Put CUDA on PATH/LD_LIBRARY_PATH for non-interactive shells too: envcheck env "
     "node[01-04] --cuda-home /usr/local/cuda-12.4"),
    ("install-cuda", "install", "Install a CUDA toolkit (never the driver), verified, idempotent: envcheck "
     "install-cuda 12.4 node[01-04] --runfile cuda_12.4.1_550.54.15_linux.run"),
    ("install-cudnn", "install", "Copy cuDNN into a toolkit, symlinks kept, undoable: envcheck install-cudnn "
     "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz node[01-04] --cuda 12.4"),
    ("nccl-test", "nccl_test", "Measure all-reduce bandwidth and check its sums across hosts. Example: "
     "envcheck nccl-test node[01-02]"),
    ("launch", "launch", "Run your training script on every host, RANK/WORLD_SIZE/MASTER_* set. Example: "
     "envcheck launch node[01-02] --nproc-per-node 8 -- train.py"),
    ("doctor", "doctor", "Say GO or name the node and the fix, before a training run. Example: envcheck "
     "doctor node[01-04] --junit doctor.xml"),
    ("slurm-check", "slurm", "Check this node as Slurm's HealthCheckProgram, Prolog or Epilog: drain it with "
     "an `envcheck:` reason when it fails, resume it when envcheck drained it and it passes. Example: "
     "envcheck slurm-check --print-config | sh"),
    ("provision", "provision", "Bring every host to a playbook's stack, validated first, idempotent. "
     "Example: envcheck provision cuda12.4-cudnn9.1-torch2.5 node[01-04] --files ~/downloads --dry-run"),
    ("plan", "plan", "List the stacks the matrix allows on a GPU, newest first. Example: envcheck plan "
     "--gpu V100 --driver 418.87"),
    ("explain", "explain", "Say what causes an error message (most likely first) and which check tells the "
     "causes apart. Example: envcheck explain \"no kernel image is available\" node[01-04]"),
    ("version", "version", "Print envcheck's version (as --version does). Example: envcheck version"),
    ("matrix", "matrix", "Inspect and validate the compatibility matrix."),
)
_MODULE = {name: module for name, module, _ in COMMANDS}
if not getattr(envcheck, "CLI_ON_DEMAND", False):
    for _module in _MODULE.values():
        importlib.import_module(f"envcheck.cli.{_module}")
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
        code = max(code, lost.exit_code if getattr(lost, "quiet", False) else _say(lost.one_line(), lost.exit_code))
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
        if getattr(e, "quiet", False):   # the pipe's reader stopped reading (`| head`)
            return e.exit_code
        return _say(" ".join(e.one_line().split()), e.exit_code)
    return rv if isinstance(rv, int) else 0
