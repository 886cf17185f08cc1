"""The installed CLI on the lowest (3.9) and the highest (3.13) Python envcheck promises, each in
a venv that tests/run.sh made with `pip install .` (no torch), as a user on a RHEL 8/9 admin host
or a new laptop would: `--version`, every command's `--help` with every option it declares,
`check --json`, `explain --json`, and `audit HOST --json` over SSH on the simulated cluster,
the probe on the node running under Python 3.6 (the oldest node Python promised).

On 3.9, pip resolves typer 0.23, which could not evaluate postponed annotations: every option
vanished ('No such option: --json'). This is the test that would have said so."""
from __future__ import annotations

import glob
import json
import os
import subprocess
from pathlib import Path

import pytest
import typer.main

from envcheck.cli import app
from tests.cluster.fixtures import DEFAULT_EXPOSE
from tests.conftest import REPO

MINORS = ("3.9", "3.13")
PY36 = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.6.*/bin/python3.6")))

# run by the venv's interpreter: each command's --help, through the same click group the console
# script runs, in one process (30 process starts would cost more than the rest of the test)
HELP_ALL = r"""
import contextlib, io, json, sys
import typer.main
from envcheck.cli import app
root = typer.main.get_command(app)
out = {}
for path in json.loads(sys.argv[1]):
    buf = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(buf):
        try:
            root.main(path.split() + ["--help"], prog_name="envcheck", standalone_mode=False)
        except SystemExit as e:
            code = e.code
    out[path] = {"code": code, "text": buf.getvalue()}
print(json.dumps(out))
"""


def _commands():
    """{'audit': ['--deep', …], 'matrix show': […]}: every command of the live app and its options."""
    out = {}
    for name, cmd in typer.main.get_command(app).commands.items():
        for sub, c in (getattr(cmd, "commands", None) or {None: cmd}).items():
            out[f"{name} {sub}" if sub else name] = sorted(
                o for p in c.params for o in p.opts if o.startswith("--") and o != "--help")
    return out


def _venv(minor: str) -> Path:
    exe = REPO / ".venv" / f"py{minor}" / "bin" / "envcheck"
    if not exe.exists():
        missing = REPO / ".venv" / f"py{minor}.missing"   # tests/run.sh found no Python {minor} to build it with
        if missing.exists():
            pytest.skip(f"{exe} not built: {missing.read_text().strip()}")
        if os.environ.get("CI") == "true":
            pytest.fail(f"{exe} missing: tests/run.sh builds it")
        pytest.skip(f"no Python {minor} venv ({exe}); tests/run.sh builds it when it finds Python {minor}")
    return exe


def _run(exe: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COLUMNS")}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture(scope="module")
def node(cluster_factory):
    # the node also sees the pyenv 3.6 build, so the probe can run under it there
    c = cluster_factory(1, expose=DEFAULT_EXPOSE + tuple(str(Path(p).parent.parent) for p in PY36[-1:]))
    c.trust_all_host_keys()
    yield c
    c.close()


@pytest.mark.parametrize("minor", MINORS)
def test_every_command_and_option_is_there_on_the_lowest_and_highest_python(minor):
    exe = _venv(minor)
    version = _run(exe, "--version")
    assert version.returncode == 0 and version.stdout.startswith("envcheck "), version.stderr
    commands = _commands()
    py = exe.parent / "python"
    real = subprocess.run([str(py), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                          capture_output=True, text=True, timeout=60).stdout.strip()
    assert real == minor
    p = subprocess.run([str(py), "-c", HELP_ALL, json.dumps(sorted(commands))], capture_output=True,
                       text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
    assert p.returncode == 0, p.stderr[-2000:]
    helps = json.loads(p.stdout)
    for path, options in commands.items():
        assert helps[path]["code"] == 0, (path, helps[path])
        missing = [o for o in options if o not in helps[path]["text"]]
        assert not missing, f"Python {minor}: `envcheck {path} --help` lacks {missing}"


@pytest.mark.parametrize("minor", MINORS)
def test_check_and_explain_answer_in_json_on_the_lowest_and_highest_python(minor):
    exe = _venv(minor)
    r = _run(exe, "check", "--torch", "2.1.0+cu118", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ok"] is True
    r = _run(exe, "explain", "CUDA error: no kernel image is available for execution on the device", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["known"] is True


@pytest.mark.parametrize("minor", MINORS)
def test_audit_over_ssh_works_on_the_lowest_and_highest_python_with_the_probe_on_3_6(minor, node):
    if not PY36:   # the project's machine image has it; no registry here offers one
        pytest.skip("no pyenv Python 3.6 on this machine: the probe is not run under 3.6 here")
    exe = _venv(minor)
    r = _run(exe, "audit", "node01", "--ssh-config", str(node.ssh_config), "--node-python", PY36[-1],
             "--connect-timeout", "15", "--json")
    doc = json.loads(r.stdout)
    (host,) = doc["hosts"]
    assert host["error"] is None, (host["error"], r.stderr[-1500:])
    assert host["facts"]["hostname"] == "node01"
    assert host["facts"]["python"]["version"].startswith("3.6."), host["facts"]["python"]
    assert host["facts"]["errors"] == []
    assert r.returncode in (0, 1), r.stderr

