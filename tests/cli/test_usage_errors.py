"""Every command's own usage errors (a bad value, an unknown option, a missing argument) are one
line on stderr naming the fix, exit 2, never Typer's multi-line box and never a traceback."""
from __future__ import annotations

import pytest
import typer

from envcheck.cli import app
from tests.conftest import run_cli


def _commands():
    root = typer.main.get_command(app)
    out = []
    for name, cmd in sorted(root.commands.items()):
        subs = getattr(cmd, "commands", None)
        if subs:
            out += [f"{name} {s}" for s in sorted(subs)]
        else:
            out.append(name)
    return out


COMMANDS = _commands()


def _one_line_usage_error(r, *words):
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("envcheck: ") and "fix:" in lines[0], lines[0]
    assert "Traceback" not in r.stderr and "╭" not in r.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])


def test_the_command_list_is_complete():
    assert {"check", "audit", "install-cuda", "nccl-test", "matrix validate"} <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS)
def test_an_unknown_option_is_one_line_naming_help(command):
    r = run_cli(*command.split(), "--no-such-option", timeout=60)
    _one_line_usage_error(r, "--no-such-option", f"envcheck {command} --help")


def test_a_bad_option_value_and_a_missing_argument_are_one_line():
    _one_line_usage_error(run_cli("audit", "node01", "--forks", "abc"), "--forks")
    _one_line_usage_error(run_cli("audit", "node01", "--forks", "0"), "--forks")
    _one_line_usage_error(run_cli("install-cuda"), "VERSION")
    _one_line_usage_error(run_cli("no-such-command"), "no-such-command")


def test_a_bare_command_group_still_shows_its_help():
    r = run_cli()
    assert r.returncode == 2 and r.stdout.count("Usage:") == 1 and "audit" in r.stdout


def test_garbage_files_and_out_of_range_values_are_one_line(tmp_path):
    junk = tmp_path / "cudnn.tgz"
    junk.write_text("not a tarball\n")
    # tarfile's message spans one line per compression it tried
    _one_line_usage_error(run_cli("install-cudnn", str(junk), "--cuda", "12.4", "--dry-run"), str(junk))
    # a port above 65535 was taken and failed later as 'cannot reach MASTER_ADDR' (exit 3)
    _one_line_usage_error(run_cli("nccl-test", "--master-port", "99999"), "--master-port")


@pytest.mark.parametrize("argv", [["--version"], ["-V"], ["version"]])
def test_the_version_is_the_installed_distributions(argv):
    from importlib.metadata import version
    r = run_cli(*argv)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"envcheck {version('envcheck')}\n", "")
