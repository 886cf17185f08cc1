"""The env block: pure text editing (property-tested), and the node-side write on real files."""
from __future__ import annotations

import os
import stat
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from envcheck.errors import UsageError
from envcheck.install import envblock as eb
from envcheck.install.common import read_node
from envcheck.remote import LocalRemote

UBUNTU_BASHRC = """\
# ~/.bashrc: executed by bash(1) for non-login shells.

# If not running interactively, don't do anything
case $- in
    *i*) ;;
      *) return;;
esac

HISTCONTROL=ignoreboth
export LD_LIBRARY_PATH=/opt/mine/lib   # the user's own, below the guard
alias ll='ls -alF'
"""

BLOCK = eb.render_block("/usr/local/cuda-10.0")

# text that cannot contain our markers (a line equal to a marker would be a block of ours)
free_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400).filter(
    lambda t: eb.BEGIN not in t and eb.END not in t)


@settings(max_examples=300, deadline=None)
@given(free_text)
def test_inserting_then_removing_the_block_gives_back_every_byte(text):
    with_block = eb.apply_block(text, BLOCK)
    assert BLOCK in with_block
    assert eb.remove_block(with_block) == text


@settings(max_examples=300, deadline=None)
@given(free_text, free_text)
def test_replacing_the_block_keeps_the_bytes_around_it(before, after):
    if before and not before.endswith("\n"):
        before += "\n"
    text = before + eb.render_block("/usr/local/cuda-9.0") + after
    new = eb.apply_block(text, BLOCK)
    assert eb.remove_block(new) == before + after
    assert new.count(eb.BEGIN) == 1
    assert eb.apply_block(new, BLOCK) == new


def test_block_goes_above_the_ubuntu_interactive_guard_with_its_comment():
    new = eb.apply_block(UBUNTU_BASHRC, BLOCK)
    assert new.index(eb.END) < new.index("# If not running interactively")
    assert new.startswith("# ~/.bashrc: executed by bash(1) for non-login shells.\n\n" + eb.BEGIN)


@pytest.mark.parametrize("guard", ['[ -z "$PS1" ] && return\n', '[[ $- != *i* ]] && return\n'])
def test_block_goes_above_other_guard_spellings(guard):
    text = "umask 022\n" + guard + "PS1='$ '\n"
    new = eb.apply_block(text, BLOCK)
    assert new == "umask 022\n" + BLOCK + guard + "PS1='$ '\n"


def test_a_block_found_below_the_guard_is_moved_above_it():
    text = UBUNTU_BASHRC + eb.render_block("/usr/local/cuda-9.0")
    new = eb.apply_block(text, BLOCK)
    assert new.index(eb.END) < new.index("case $- in")
    assert eb.remove_block(new) == UBUNTU_BASHRC


def test_an_unterminated_block_is_refused_rather_than_guessed():
    with pytest.raises(UsageError, match="without a closing"):
        eb.apply_block("a\n" + eb.BEGIN + "\nexport X=1\n", BLOCK)


def test_block_prepends_without_clobbering_and_without_stray_colons(tmp_path):
    script = tmp_path / "b.sh"
    script.write_text(BLOCK + 'printf "%s|%s|%s" "$CUDA_HOME" "$PATH" "$LD_LIBRARY_PATH"\n')
    env = {"PATH": "/usr/bin:/bin"}
    out = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True).stdout
    assert out == "/usr/local/cuda-10.0|/usr/local/cuda-10.0/bin:/usr/bin:/bin|/usr/local/cuda-10.0/lib64"
    env["LD_LIBRARY_PATH"] = "/opt/x/lib"
    out = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True).stdout
    assert out.endswith("|/usr/local/cuda-10.0/lib64:/opt/x/lib")


def test_relative_cuda_home_is_a_usage_error():
    with pytest.raises(UsageError, match="not an absolute path"):
        eb.render_block("cuda-10.0")


def _home(tmp_path, content=UBUNTU_BASHRC, mode=0o640):
    home = tmp_path / "home"
    home.mkdir()
    rc = home / ".bashrc"
    rc.write_text(content)
    rc.chmod(mode)
    return home, rc


def _ssh_like_command(home, command):
    """What sshd runs for `ssh node CMD`: the login shell with -c, SSH_CLIENT set, SHLVL unset;
    Debian/Ubuntu bash then reads ~/.bashrc (SSH_SOURCE_BASHRC) although it is not interactive."""
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "SSH_CLIENT": "10.9.0.1 40000 22"}
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True).stdout


def test_env_node_writes_a_block_a_noninteractive_ssh_style_shell_sees(tmp_path, monkeypatch):
    home, rc = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    before = _ssh_like_command(home, 'echo "$CUDA_HOME|$LD_LIBRARY_PATH"')
    assert before.strip() == "|"  # the user's export sits below the guard: never seen
    out = eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0")
    assert out.status == "changed", out
    seen = _ssh_like_command(home, 'echo "$CUDA_HOME|$PATH|$LD_LIBRARY_PATH"').strip()
    assert seen == "/usr/local/cuda-10.0|/usr/local/cuda-10.0/bin:/usr/bin:/bin|/usr/local/cuda-10.0/lib64"
    assert stat.S_IMODE(rc.stat().st_mode) == 0o640
    assert (home / ".bashrc.envcheck.bak").read_text() == UBUNTU_BASHRC
    assert eb.remove_block(rc.read_text()) == UBUNTU_BASHRC


def test_second_run_is_a_noop_and_a_new_home_replaces_the_block(tmp_path, monkeypatch):
    home, rc = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    assert eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0").status == "changed"
    first = rc.read_bytes()
    again = eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0")
    assert again.status == "unchanged" and "already in place" in again.lines[-1]
    assert rc.read_bytes() == first
    assert eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-12.4").status == "changed"
    text = rc.read_text()
    assert text.count(eb.BEGIN) == 1 and "cuda-12.4" in text and "cuda-10.0" not in text
    assert eb.remove_block(text) == UBUNTU_BASHRC


def test_remove_takes_the_block_out_and_dry_run_changes_nothing(tmp_path, monkeypatch):
    home, rc = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    dry = eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0", dry_run=True)
    assert dry.status == "would-change" and any(line.startswith("would replace") for line in dry.lines)
    assert rc.read_text() == UBUNTU_BASHRC
    eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0")
    out = eb.env_node(LocalRemote(), cuda_home=None, remove=True)
    assert out.status == "changed"
    assert rc.read_text() == UBUNTU_BASHRC
    assert eb.env_node(LocalRemote(), cuda_home=None, remove=True).status == "unchanged"


def test_a_symlinked_bashrc_is_edited_at_its_target_inside_the_home(tmp_path, monkeypatch):
    home, rc = _home(tmp_path)
    dot = home / "dotfiles"
    dot.mkdir()
    os.replace(rc, dot / "bashrc")
    rc.symlink_to(dot / "bashrc")
    monkeypatch.setenv("HOME", str(home))
    assert eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0").status == "changed"
    assert rc.is_symlink() and eb.BEGIN in (dot / "bashrc").read_text()


def test_a_bashrc_symlinked_out_of_the_home_is_refused_naming_the_target(tmp_path, monkeypatch):
    home, rc = _home(tmp_path)
    victim = tmp_path / "passwd-copy"
    victim.write_text("root:x:0:0:root:/root:/bin/bash\n")
    os.remove(rc)
    rc.symlink_to(victim)
    monkeypatch.setenv("HOME", str(home))
    out = eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0")
    assert out.status == "refused" and f"symlink to {victim}" in out.error, out
    assert victim.read_text() == "root:x:0:0:root:/root:/bin/bash\n"


@pytest.mark.parametrize("what,make", [
    ("directory", lambda p: p.mkdir()),
    ("FIFO", lambda p: os.mkfifo(p)),
])
def test_a_file_that_is_not_a_regular_file_is_never_written(tmp_path, what, make):
    target = tmp_path / ".bashrc"
    make(target)
    out = eb.env_node(LocalRemote(), cuda_home="/usr/local/cuda-10.0", file=str(target), dry_run=True)
    assert out.status == "refused" and "directory, device, FIFO" in out.error, out


def test_a_file_edited_between_fact_and_write_is_not_overwritten(tmp_path):
    rc = tmp_path / "rc"
    rc.write_text("one\n")
    read = read_node(LocalRemote(), eb.probe_request([str(rc)]), 30)
    fact = eb.file_fact(read.facts, str(rc))
    plan = eb.plan_env(fact, "/usr/local/cuda-10.0")
    rc.write_text("two\n")  # someone else wrote in between
    res = LocalRemote().run(eb.write_command(plan.changes[0]))
    assert res.exit_code == 3 and "changed while we were planning" in res.stderr
    assert rc.read_text() == "two\n"


def test_file_without_trailing_newline_round_trips_through_the_node(tmp_path):
    rc = tmp_path / "rc"
    rc.write_bytes(b"export A=1")
    assert eb.env_node(LocalRemote(), cuda_home="/opt/cuda", file=str(rc)).status == "changed"
    assert eb.env_node(LocalRemote(), cuda_home=None, file=str(rc), remove=True).status == "changed"
    assert rc.read_bytes() == b"export A=1"


def test_a_missing_file_is_created_with_mode_0644(tmp_path):
    rc = tmp_path / "new.sh"
    assert eb.env_node(LocalRemote(), cuda_home="/opt/cuda", file=str(rc)).status == "changed"
    assert stat.S_IMODE(rc.stat().st_mode) == 0o644 and rc.read_text() == eb.render_block("/opt/cuda")


def test_cli_env_json_and_a_usage_error_for_a_relative_home(tmp_path, cli):
    rc = tmp_path / "rc"
    rc.write_text("x=1\n")
    r = cli("env", "--cuda-home", "/usr/local/cuda-12.4", "--file", str(rc), "--file-anything", "--json")
    assert r.returncode == 0, r.stderr
    import json
    [out] = json.loads(r.stdout)
    assert out["status"] == "changed" and "export CUDA_HOME=/usr/local/cuda-12.4" in rc.read_text()
    bad = cli("env", "--cuda-home", "cuda-12.4", "--file", str(rc), "--file-anything")
    assert bad.returncode == 2 and "not an absolute path" in bad.stderr


def test_sudo_without_terminal_or_env_password_is_a_clear_error(monkeypatch):
    from envcheck.cli.install import sudo_password_source
    import sys
    get = sudo_password_source(True)
    if sys.stdin.isatty():
        pytest.skip("stdin is a terminal here")
    monkeypatch.delenv("ENVCHECK_SUDO_PASSWORD", raising=False)
    with pytest.raises(UsageError, match="no terminal to ask on") as e:
        get()
    assert "ENVCHECK_SUDO_PASSWORD" in e.value.fix
    monkeypatch.setenv("ENVCHECK_SUDO_PASSWORD", "pw")
    assert sudo_password_source(True)() == "pw"


def test_an_unreachable_host_is_reported_as_such(monkeypatch):
    from envcheck.remote import RunResult

    class Dead(LocalRemote):
        def run(self, command, **kw):
            return RunResult(self.name, command, None, error="connection refused")
    out = eb.env_node(Dead("node09"), cuda_home="/usr/local/cuda")
    assert out.status == "unreachable" and out.error == "connection refused"


def test_cli_refuses_file_and_profile_d_together(cli):
    r = cli("env", "--cuda-home", "/usr/local/cuda", "--file", "/tmp/x", "--profile-d")
    assert r.returncode == 2 and "not both" in r.stderr


def test_a_cuda_home_without_nvcc_is_written_but_warned_about(tmp_path, monkeypatch):
    home, rc = _home(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    missing = tmp_path / "no-such-cuda"
    out = eb.env_node(LocalRemote(), cuda_home=str(missing))
    assert out.status == "changed"
    assert any(f"{missing}/bin/nvcc does not exist" in line and "install-cuda" in line for line in out.lines)
    real = tmp_path / "cuda-12.4"
    (real / "bin").mkdir(parents=True)
    (real / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (real / "bin" / "nvcc").chmod(0o755)
    out = eb.env_node(LocalRemote(), cuda_home=str(real) + "/")
    assert out.status == "changed" and not any("does not exist" in line for line in out.lines), out.lines
