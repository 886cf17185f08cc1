"""Every option of the provisioning commands is documented in docs/provisioning.md."""
from __future__ import annotations

from pathlib import Path

import pytest
import typer

from envcheck.cli import app

DOC = (Path(__file__).resolve().parents[2] / "docs" / "provisioning.md").read_text()


@pytest.mark.parametrize("name", ["env", "install-cuda", "install-cudnn"])
def test_every_option_of_the_command_is_in_the_docs(name):
    cmd = typer.main.get_command(app).commands[name]
    assert f"envcheck {name}" in DOC
    missing = [opt for p in cmd.params for opt in p.opts if opt.startswith("--") and opt not in ("--help",)
               and opt not in DOC]
    assert not missing, f"{name}: undocumented options {missing}"
