import typer

from envcheck import __version__
from envcheck.cli import app


@app.command("version")
def version() -> None:
    """Print envcheck's version. Example: envcheck version"""
    typer.echo(__version__)
