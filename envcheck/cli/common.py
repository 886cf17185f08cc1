"""What every command shares: the error guard (one line + exit code, never a traceback) and the
options that mean the same thing everywhere (--matrix, --json)."""
from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar

import typer

from envcheck.errors import EnvcheckError

from typing import Annotated  # noqa: F401 - the command modules take it from here

F = TypeVar("F", bound=Callable[..., Any])

MatrixOpt = Annotated[Optional[Path], typer.Option(
    "--matrix", envvar="ENVCHECK_MATRIX", metavar="FILE",
    help="Use this compat matrix instead of the packaged compat_matrix.yaml.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON only, nothing else on stdout.")]


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
            raise die(e.one_line(), e.exit_code)
        except KeyboardInterrupt:
            raise die("interrupted", 130)

    return wrapper  # type: ignore[return-value]


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")
