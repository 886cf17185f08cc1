import typer

from envcheck import __version__
from envcheck.cli import app


@app.command("version")
def version() -> None:
    """Print envcheck's version (as --version does). Example: envcheck version"""
    typer.echo(f"envcheck {__version__}")
