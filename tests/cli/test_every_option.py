"""A property of the whole command line: every value of every parameter of every command is
either refused while the command line is parsed (one line naming it, exit 2) or accepted within
its declared bounds (envcheck/params), so whatever runs next is bounded; parsing writes nothing
outside the named target. The parameters are walked from the live CLI, so a new option is
covered the moment it exists, and one without a declaration fails here.

In-process (click's make_context parses and converts without running the command): thousands of
values in a few seconds. The commands that work offline also run in full on each value."""
from __future__ import annotations

import math
import os
import stat
import subprocess

import pytest
import typer
from typer.testing import CliRunner

from envcheck.cli import app
from envcheck.cli.options import Refused, declared

ROOT = typer.main.get_command(app)
# a valid value for each required positional, so the parameter under test is the only bad one
REQUIRED = {"install-cuda": ["12.4"], "provision": ["cuda12.4-cudnn9.1-torch2.5"],
            "matrix show": ["cuda", "12.4"]}


def _commands():
    out = []
    for name, cmd in sorted(ROOT.commands.items()):
        for sub, c in sorted(getattr(cmd, "commands", {}).items()) or [(None, cmd)]:
            out.append((f"{name} {sub}" if sub else name, c))
    return out


COMMANDS = _commands()


def _valued(cmd):
    return [p for p in cmd.params if not getattr(p, "is_flag", False) and p.name != "help"]


@pytest.fixture(scope="module")
def odd_paths(tmp_path_factory):
    d = tmp_path_factory.mktemp("odd")
    fifo = d / "fifo"
    os.mkfifo(fifo)
    (d / "dangling").symlink_to(d / "nowhere")
    (d / "file.txt").write_text("not json, not yaml: {[\n")
    return {"fifo": str(fifo), "dangling": str(d / "dangling"), "dir": str(d),
            "file": str(d / "file.txt"), "missing-parent": str(d / "no" / "such" / "x")}


def hostile(odd):
    return ["9" * 30, "1e400", "1e20", "100000", "2000000000", "-1", "0", "0.0", "inf", "-inf", "nan",
            "", " ", "a\nb", "a\tb", "x\x00y", "\udcff", "é", "x" * 100_000, "12.4junk", "10..0",
            "/dev/zero", "/dev/null", "/dev/full", "/proc/self/status", "/proc/nope/x", "/sys/x", "/",
            "-", "--", "../../../../etc/passwd", "~/.netrc", odd["fifo"], odd["dangling"],
            odd["dir"], odd["file"], odd["missing-parent"]]


EXC = __import__(typer.BadParameter.__module__, fromlist=["UsageError"])


def _parse(cmd, name, args):
    """(exit code, stderr line) the way envcheck's main() reports a parse; (0, params) if parsed."""
    try:
        ctx = cmd.make_context(name, list(args))
    except Refused as e:
        return 2, e.message
    except EXC.UsageError as e:
        return e.exit_code, e.format_message()
    return 0, ctx.params


def _convert(ctx, p, value):
    """One value through the parameter's own conversion (what parsing does with it), without
    building click's parser for every value: (exit code, message) or (0, {name: value})."""
    try:
        return 0, {p.name: p.process_value(ctx, (value,) if p.multiple or p.nargs == -1 else value)}
    except Refused as e:
        return 2, e.message
    except EXC.UsageError as e:
        return e.exit_code, e.format_message()


def _args(command, p, value):
    base = REQUIRED.get(command, [])
    if p.param_type_name == "argument":
        i = [q for q in cmd_of(command).params if q.param_type_name == "argument"].index(p)
        pos = (base + ["x"] * 3)[:i]
        return pos + [value] + base[i + 1:]
    return base + [f"{p.opts[0]}={value}"]


def cmd_of(command):
    return dict(COMMANDS)[command]


def _listing(paths):
    return {d: sorted(os.listdir(d)) for d in paths if os.path.isdir(d)}


def test_the_walk_finds_every_command_and_its_options():
    names = {c for c, _ in COMMANDS}
    assert {"audit", "check", "doctor", "launch", "nccl-test", "matrix show", "env"} <= names
    assert sum(len(_valued(c)) for _, c in COMMANDS) > 150


def test_every_option_that_takes_a_value_is_declared():
    undeclared = [f"{command} {p.opts[0] if p.opts else p.name}" for command, cmd in COMMANDS
                  for p in _valued(cmd) if declared(p) is None]
    assert undeclared == [], "declare them in envcheck/params/catalog.py and build them with cli/options.py"


@pytest.mark.parametrize("command", [c for c, _ in COMMANDS])
def test_every_value_is_refused_in_one_line_or_accepted_within_its_bounds(command, odd_paths, tmp_path,
                                                                         monkeypatch):
    cmd = cmd_of(command)
    watched = [str(tmp_path), odd_paths["dir"], "/dev", "/"]
    before = _listing(watched)
    monkeypatch.chdir(tmp_path)
    ctx = cmd.make_context(command, REQUIRED.get(command, []) + (["--", "x.py"] if command == "launch" else []))
    for p in _valued(cmd):
        decl = declared(p)
        for i, value in enumerate(hostile(odd_paths)):
            # the whole command line for some values, the parameter's conversion for all
            code, out = (_parse(cmd, command, _args(command, p, value)) if i % 6 == 0 else
                         _convert(ctx, p, value))
            if code:
                assert code == 2, (command, p.name, value[:40], out)
                assert isinstance(out, str) and "\n" not in out.strip() and len(out) < 600, (command, p.name, out)
                continue
            got = out[p.name]
            got = (got[0] if got else None) if isinstance(got, (list, tuple)) else got
            if decl.kind in ("int", "float", "seconds") and got is not None:
                assert math.isfinite(got) and decl.lo <= got <= decl.hi, (command, p.name, value, got)
            if isinstance(got, str):
                assert "\x00" not in got and len(got) <= decl.max_len, (command, p.name, value[:40])
    assert _listing(watched) == before, "parsing wrote outside the named target"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


# the commands that judge or look up offline run in full on each value their parse accepts (the
# refused ones never reach the command): no traceback, whatever the value
# (plan is left out: each run ranks every stack of the matrix, seconds apiece)
OFFLINE = {"check": ["--cuda", "10.0"], "matrix show": ["cuda", "12.4"],
           "explain": ["no kernel image is available"], "matrix validate": []}


@pytest.mark.parametrize("command", sorted(OFFLINE))
def test_offline_commands_run_every_accepted_value_without_a_traceback(command, odd_paths, tmp_path,
                                                                        monkeypatch, matrix_parsed_once):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    cmd = cmd_of(command)
    ctx = cmd.make_context(command, REQUIRED.get(command, []))
    ran = 0
    # not the host options: a value they accept would connect somewhere
    for p in [q for q in _valued(cmd) if getattr(q, "rich_help_panel", None) is None and q.name != "hosts"]:
        for value in hostile(odd_paths):
            if _convert(ctx, p, value)[0]:
                continue
            if p.param_type_name == "argument":
                args = _args(command, p, value) + (OFFLINE[command] if command == "check" else [])
            else:
                args = OFFLINE[command] + [f"{p.opts[0]}={value}"]
            r = runner.invoke(app, command.split() + args)
            ran += 1
            assert r.exception is None or isinstance(r.exception, SystemExit), \
                (command, p.name, value[:40], repr(r.exception))
            assert r.exit_code in (0, 1, 2), (command, p.name, value[:40], r.output[-300:])
    assert ran > 0


def test_bad_values_reach_the_user_as_one_line_from_the_console_script():
    from tests.conftest import envcheck_exe
    r = subprocess.run([envcheck_exe(), "launch", "--grace", "inf", "--", "x.py"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.splitlines() == [
        "envcheck: --grace inf is not a number of seconds in 0..3600 (fix: e.g. --grace 5)"]
