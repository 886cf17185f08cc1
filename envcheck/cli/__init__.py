"""The command line: parse arguments, call the library, print, exit. Nothing else lives here.

Each command is in its own module below; importing it registers it on `app`.
"""
from __future__ import annotations

import typer

app = typer.Typer(
    name="envcheck",
    help="Get a GPU cluster ready for distributed PyTorch training, and prove that it is.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _root() -> None:
    """Get a GPU cluster ready for distributed PyTorch training, and prove that it is."""


# Registration: one import per command module (keep one per line; order is the help order).
from envcheck.cli import audit  # noqa: E402,F401
from envcheck.cli import check  # noqa: E402,F401
from envcheck.cli import install_cmd  # noqa: E402,F401
from envcheck.cli import nccl_cmd  # noqa: E402,F401
from envcheck.cli import doctor_cmd  # noqa: E402,F401
from envcheck.cli import provision_cmd  # noqa: E402,F401
from envcheck.cli import plan_cmd  # noqa: E402,F401
from envcheck.cli import explain_cmd  # noqa: E402,F401
from envcheck.cli import matrix_cmd  # noqa: E402,F401
from envcheck.cli import version_cmd  # noqa: E402,F401


def main() -> None:
    app()
