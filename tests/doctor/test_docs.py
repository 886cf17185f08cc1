"""Every option of doctor, provision, plan and explain is documented in docs/doctor.md."""
from __future__ import annotations

import pytest
import typer

from envcheck.cli import app
from tests.conftest import REPO


@pytest.mark.parametrize("name", ["doctor", "provision", "plan", "explain"])
def test_every_option_is_documented(name):
    doc = (REPO / "docs" / "doctor.md").read_text()
    command = typer.main.get_command(app).commands[name]
    opts = [o for p in command.params for o in p.opts if o.startswith("--") and o != "--help"]
    assert opts, "no options found: the test would prove nothing"
    # written as `--opt …` or as the second half of a pair `--deep/--no-deep`
    missing = [o for o in opts if f"`{o}" not in doc and f"/{o}`" not in doc]
    assert not missing, f"document these {name} options in docs/doctor.md: {missing}"
