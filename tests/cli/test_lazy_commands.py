"""The console script imports only the module of the command it runs (envcheck/cli/__init__.py:
COMMANDS; issue 26, figures in bench/cli_cpu.py), and says exactly what the CLI with every command
imported says: the same help, the same commands, the same "Did you mean". Through the installed
wheel, as a user runs it."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer.main

from envcheck.cli import COMMANDS, app

# every command imported, as an importer of envcheck.cli (the tests, the docs' tables) sees it
EAGER = "import sys; from envcheck.cli import main; sys.argv[0] = 'envcheck'; main()"
# the console script, and the command modules it imported on the way
ON_DEMAND = """
import sys, runpy
sys.argv = ["envcheck"] + sys.argv[1:]
try:
    runpy.run_module("envcheck", run_name="__main__")
finally:
    sys.stderr.write("\\nCOMMAND MODULES " + " ".join(sorted(
        m for m in sys.modules if m.startswith("envcheck.cli.") and m.split(".")[-1] in
        ("audit", "check", "install", "nccl_test", "launch", "doctor", "slurm", "provision", "plan",
         "explain", "version", "matrix"))) + "\\n")
"""


def _run(code: str, *argv: str):
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR", "PYTHONPATH")}
    p = subprocess.run([sys.executable, "-I", "-c", code, *argv], capture_output=True, text=True,
                       cwd="/", env=env, timeout=120)
    err, marker, modules = p.stderr.rpartition("COMMAND MODULES ")
    if not marker:
        err, modules = p.stderr, ""
    return p.returncode, p.stdout, err.strip(), set(modules.split())


def _paragraph(text: str) -> str:
    return " ".join((text or "").split("\n\n")[0].split())


def test_the_table_names_every_command_in_order_with_its_module_and_help():
    built = typer.main.get_command(app).commands
    assert list(built) == [name for name, _, _ in COMMANDS]
    for name, module, text in COMMANDS:
        assert _paragraph(built[name].help) == text, name
    where = {c.name: c.callback.__module__ for c in app.registered_commands}
    where.update({g.name: g.typer_instance.registered_commands[0].callback.__module__ for g in app.registered_groups})
    assert where == {name: f"envcheck.cli.{module}" for name, module, _ in COMMANDS}


def test_help_lists_the_commands_without_importing_them():
    code, out, err, modules = _run(ON_DEMAND, "--help")
    assert (code, err, modules) == (0, "", set())
    assert out == _run(EAGER, "--help")[1]


@pytest.mark.parametrize("name", [name for name, _, _ in COMMANDS])
def test_each_command_is_found_and_helps_as_with_every_command_imported(name):
    module = dict((n, m) for n, m, _ in COMMANDS)[name]
    code, out, err, modules = _run(ON_DEMAND, name, "--help")
    assert code == 0 and f"envcheck.cli.{module}" in modules and len(modules) <= 2, err
    assert out == _run(EAGER, name, "--help")[1]


def test_a_command_runs_and_fails_as_with_every_command_imported():
    for argv in (["plan", "--gpu", "sm_90", "--limit", "2"], ["plan", "--gpu"], ["check", "--gpu", "nonsense"],
                 ["explain", "no kernel image is available for execution on the device"]):
        lazy, eager = _run(ON_DEMAND, *argv), _run(EAGER, *argv)
        assert lazy[:3] == eager[:3], argv
        assert lazy[3] == {"envcheck.cli." + argv[0]}


def test_a_mistyped_command_is_still_asked_about():
    code, _, err, _ = _run(ON_DEMAND, "plna")
    assert code == 2 and "No such command 'plna'. Did you mean 'plan'?" in err
