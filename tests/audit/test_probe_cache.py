"""The probe's compiled copy on the node (envcheck/node/probe_loader.py): used only for the very
text it was compiled from, by the interpreter that compiled it, from a private directory; every
other case compiles the source as before. Real interpreters, real files; no timing."""
from __future__ import annotations

import json
import marshal
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envcheck.audit.probe import BOOTSTRAP, LOADER, framed, probe_source, shipped_source

OLD = sorted(Path(os.path.expanduser("~/.pyenv/versions")).glob("3.6*/bin/python3.6"))


def run(source: str, home: Path, *args: str, python: str = sys.executable, **env: str) -> str:
    e = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "ENVCHECK_PROBE_CACHE")}
    e.update(HOME=str(home), **env)
    proc = subprocess.run([python, "-c", BOOTSTRAP, *args], input=source.encode(), env=e,
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def cached(home: Path):
    d = home / ".cache" / "envcheck"
    return sorted(d.glob("probe-*.code")) if d.is_dir() else []


def planted(path: Path, source: str, code_of: str) -> None:
    """Rewrite a stored entry: the header and source kept, the code that of `code_of`."""
    blob = path.read_bytes()
    at = blob.index(source.encode()) + len(source.encode())
    path.write_bytes(blob[:at] + marshal.dumps(compile(code_of, "planted", "exec")))


def test_a_probe_is_compiled_once_and_then_run_from_its_code(tmp_path):
    one = framed("print('one')\n")
    assert run(one, tmp_path) == "one\n" and len(cached(tmp_path)) == 1
    entry = cached(tmp_path)[0]
    planted(entry, "print('one')\n", "print('from the stored code')")
    assert run(one, tmp_path) == "from the stored code\n"   # the second run reads it, compiles nothing
    assert (entry.parent.stat().st_mode & 0o777, entry.stat().st_mode & 0o777) == (0o700, 0o600)


def test_a_changed_probe_is_never_served_the_old_code(tmp_path):
    old, new = "print('old probe')\n", "print('new probe')\n"
    run(framed(old), tmp_path)
    stale = cached(tmp_path)[0]
    # the entry where the new probe's code would be holds the old probe's text and code: a reused
    # key (a stale or clashing file) must not run
    key_of_new = framed(new).split("\n# ---- probe ")[1].split()[0]
    target = stale.with_name(stale.name.replace(stale.name.split("-")[1], key_of_new))
    shutil.copy(stale, target)
    assert run(framed(new), tmp_path) == "new probe\n"
    assert new.encode() in target.read_bytes() and old.encode() not in target.read_bytes()


def test_the_real_probe_reports_the_same_facts_from_its_stored_code(tmp_path):
    only = "host,python,gcc,cuda,cudnn,packages,torch,nccl"
    source = shipped_source(only.split(","))

    def facts(**env):
        doc = json.loads(run(source, tmp_path, "--only", only, **env))
        doc["probe"]["seconds"] = None
        return doc
    compiled = facts(ENVCHECK_PROBE_CACHE="off")
    assert cached(tmp_path) == []
    assert facts() == compiled and len(cached(tmp_path)) == 1   # compiled and stored
    assert facts() == compiled                                   # from the stored code


def test_a_torn_entry_is_compiled_again(tmp_path):
    probe = framed("print('whole')\n")
    run(probe, tmp_path)
    entry = cached(tmp_path)[0]
    entry.write_bytes(entry.read_bytes()[:-40])
    assert run(probe, tmp_path) == "whole\n"
    assert run(probe, tmp_path) == "whole\n"   # and stored whole again
    marshal.loads(entry.read_bytes().split(b"print('whole')\n", 1)[1])


@pytest.mark.parametrize("how", ["open to others", "a symlink"])
def test_a_cache_directory_others_could_write_is_not_read(tmp_path, how):
    source = "print('mine')\n"
    run(framed(source), tmp_path)
    entry = cached(tmp_path)[0]
    planted(entry, source, "print('planted')")
    folder = entry.parent
    if how == "open to others":
        folder.chmod(0o777)
    else:
        real = tmp_path / "elsewhere"
        folder.rename(real)
        folder.symlink_to(real)
    assert run(framed(source), tmp_path) == "mine\n"


def test_with_the_cache_off_or_no_home_nothing_is_written(tmp_path):
    assert run(framed("print(1)\n"), tmp_path, ENVCHECK_PROBE_CACHE="off") == "1\n"
    assert not (tmp_path / ".cache").exists()
    assert run(framed("print(2)\n"), Path("/"), XDG_CACHE_HOME="relative/dir") == "2\n"


def test_xdg_cache_home_is_where_it_is_kept(tmp_path):
    run(framed("print('x')\n"), tmp_path / "home", XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert len(list((tmp_path / "xdg" / "envcheck").glob("probe-*.code"))) == 1


@pytest.mark.skipif(not OLD, reason="no python3.6 on this machine")
def test_each_interpreter_keeps_its_own_code(tmp_path):
    probe = framed("import sys\nprint(sys.version_info[:2])\n")
    for _ in range(2):
        assert run(probe, tmp_path, python=str(OLD[0])) == "(3, 6)\n"
        assert run(probe, tmp_path) == "(%d, %d)\n" % sys.version_info[:2]
    assert len(cached(tmp_path)) == 2


def test_only_the_newest_compiled_probes_are_kept(tmp_path):
    for i in range(18):
        run(framed("print(%d)\n" % i), tmp_path)
    assert len(cached(tmp_path)) == 16


def test_a_saved_script_runs_as_plain_code_and_stores_nothing(tmp_path):
    saved = tmp_path / "probe.py"
    saved.write_text(framed("print('saved')\n"))
    env = dict(os.environ, HOME=str(tmp_path))
    env.pop("XDG_CACHE_HOME", None)
    out = subprocess.run([sys.executable, str(saved)], env=env, capture_output=True, text=True, timeout=60)
    assert out.stdout == "saved\n" and cached(tmp_path) == []


@pytest.mark.parametrize("env", [{"HOME": "/h"}, {"HOME": "/h", "XDG_CACHE_HOME": "/x"}, {"HOME": "/"},
                                 {"HOME": "rel", "XDG_CACHE_HOME": "rel"}, {}, {"XDG_CACHE_HOME": "/x"}])
def test_the_probe_keeps_its_answers_where_the_loader_keeps_its_code(tmp_path, monkeypatch, env):
    loader: dict = {}
    exec(compile(LOADER.read_text(), str(LOADER), "exec"), loader)   # no _envcheck_in: defines only
    from tests.node.probe_helpers import load_probe
    kept = load_probe()
    for name in ("HOME", "XDG_CACHE_HOME", "ENVCHECK_PROBE_CACHE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert kept.answers_dir() == loader["_envcheck_cache_dir"]()
    for path, mode in ((tmp_path / "open", 0o755), (tmp_path / "closed", 0o700)):
        path.mkdir(mode=mode)
        path.chmod(mode)
        assert kept.private(str(path)) == loader["_envcheck_private"](str(path)) == (mode == 0o700)


def test_the_probe_line_is_found_only_where_the_loader_puts_it():
    loader = LOADER.read_text()
    assert "\n# ---- probe " not in loader and "\n# ---- probe " not in probe_source()
    assert framed("x = 1\n").count("\n# ---- probe ") == 1
    loader.encode("ascii")


def test_the_loader_is_python_3_6_compatible_by_vermin():
    vermin = shutil.which("vermin") or shutil.which("vermin", path=os.path.dirname(sys.executable))
    if not vermin:
        pytest.skip("vermin is not installed")
    out = subprocess.run([vermin, "-t=3.6-", "--no-tips", "--violations", str(LOADER)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
