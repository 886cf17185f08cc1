"""`envcheck matrix …`: commands about the compatibility matrix itself."""
from typing import Optional

import typer

from envcheck import params as P
from envcheck.cli import app
from envcheck.cli.command import EnvcheckApp
from envcheck.cli.options import argument
from envcheck.cli.common import Annotated, MatrixOpt, die, guard, print_json
from envcheck.errors import MatrixError

matrix_app = EnvcheckApp(help="Inspect and validate the compatibility matrix.", no_args_is_help=True,
                         rich_markup_mode=None)
app.add_typer(matrix_app, name="matrix")


@matrix_app.command("validate")
def validate(
    file: Annotated[Optional[str], argument(P.MATRIX, name="FILE", help="Matrix file (default: --matrix, else the packaged one).")] = None,
    matrix: MatrixOpt = None,
) -> None:
    """Check a matrix file: exit 0 with a summary, or 2 naming the bad key. Example: envcheck matrix validate my.yaml"""
    # lazy: the matrix loader (PyYAML, the schema) costs ~35 ms CPU at start-up (-X importtime,
    # issue 26), which --help and the commands that read no matrix would pay
    from envcheck.matrix.load import default_matrix_path, load_matrix
    path = file or matrix or default_matrix_path()
    try:
        m = load_matrix(path)
    except MatrixError as e:
        # exactly `envcheck: FILE: key.path: reason`, so editors and CI can point at the key
        raise die(e.message, e.exit_code)
    typer.echo(f"{path}: ok, {m.summary()}")


@matrix_app.command("show")
@guard
def show(
    kind: Annotated[str, argument(P.MATRIX_KIND)],
    what: Annotated[str, argument(P.MATRIX_WHAT)],
    matrix: MatrixOpt = None,
) -> None:
    """Print what the matrix says about one toolkit, cuDNN, torch release or GPU, as JSON. Example: envcheck matrix show cuda 10.0"""
    from envcheck.matrix.load import load_matrix  # lazy: as in validate, ~35 ms
    from envcheck.matrix.show import matrix_record
    m = load_matrix(matrix)
    print_json(matrix_record(m, kind, what))
