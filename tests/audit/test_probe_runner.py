"""run_probe through a real LocalRemote: the same code path SSH hosts take, with real
interpreters and small stand-in interpreters for the failure cases."""
from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envcheck.errors import EXIT_UNREACHABLE
from envcheck.audit import probe as probe_mod
from envcheck.audit.probe import (BOOTSTRAP, ProbeError, document_sections, framed, probe_command, probe_host,
                                   probe_parts, probe_source, run_probe, shipped_source, show_probe)
from envcheck.remote import LocalRemote

PY2 = sorted(Path(os.path.expanduser("~/.pyenv/versions")).glob("2.7*/bin/python2.7"))


def script(tmp_path: Path, name: str, body: str) -> str:
    p = tmp_path / name
    p.write_text("#!/bin/sh\n" + body)
    p.chmod(0o755)
    return str(p)


class CountingRemote(LocalRemote):
    """The real local transport, counting the commands it is asked to run."""

    def __init__(self):
        super().__init__("counted")
        self.commands = []

    def run(self, command, **kw):
        self.commands.append(command)
        return super().run(command, **kw)


def test_local_probe_returns_this_machines_facts_in_one_command():
    remote = CountingRemote()
    facts = run_probe(remote)
    assert len(remote.commands) == 1
    assert facts["hostname"] == socket.gethostname()
    assert facts["origin"] == "probe"


def test_probe_source_is_the_shipped_file_and_plain_ascii():
    text = probe_source()
    assert text.startswith("#!/usr/bin/env python3")
    assert not re.search(r"^\s*(import|from)\s+envcheck", text, re.M)
    text.encode("ascii")  # parseable by an old interpreter, so that it can say it is too old


def test_node_python_names_the_interpreter_whose_packages_are_read():
    facts = run_probe(LocalRemote(), node_python=sys.executable)
    assert facts["python"]["executable"] == sys.executable
    assert facts["python"]["version"] == "%d.%d.%d" % sys.version_info[:3]


def test_falls_back_to_python_when_there_is_no_python3(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink("/bin/sh", bin_dir / "sh")
    os.symlink(sys.executable, bin_dir / "python")
    monkeypatch.setenv("PATH", str(bin_dir))
    facts = run_probe(LocalRemote())
    assert facts["python"]["version"] == "%d.%d.%d" % sys.version_info[:3]
    assert facts["env"]["PATH"] == str(bin_dir)


def test_a_missing_interpreter_is_named_with_the_fix():
    with pytest.raises(ProbeError) as e:
        run_probe(LocalRemote("n1"), node_python="/nonexistent/python3")
    assert e.value.exit_code == EXIT_UNREACHABLE
    line = e.value.one_line()
    assert line.startswith("n1: /nonexistent/python3 not found")
    assert "--node-python" in line


@pytest.mark.skipif(not PY2, reason="no python2.7 on this machine")
def test_a_too_old_interpreter_says_so_instead_of_a_syntax_error():
    with pytest.raises(ProbeError, match=r"probe crashed \(exit 3\): envcheck probe: needs Python >= 3.6, this is 2\.7"):
        run_probe(LocalRemote(), node_python=str(PY2[0]))


def test_a_crashing_interpreter_is_reported_with_the_tail_of_stderr(tmp_path):
    py = script(tmp_path, "python", "cat >/dev/null\necho 'Traceback (most recent call last):' >&2\n"
                                    "echo 'MemoryError' >&2\nexit 1\n")
    with pytest.raises(ProbeError, match=r"^n2: probe crashed \(exit 1\): Traceback .* \| MemoryError$"):
        run_probe(LocalRemote("n2"), node_python=py)


def test_output_without_json_is_reported_with_what_was_printed(tmp_path):
    py = script(tmp_path, "python", "cat >/dev/null\necho 'This account is currently not available.'\n")
    with pytest.raises(ProbeError, match=r"probe printed no JSON: This account is currently not available\."):
        run_probe(LocalRemote(), node_python=py)


def test_a_banner_printed_before_the_probe_does_not_hide_the_facts(tmp_path):
    py = script(tmp_path, "python", 'echo "Welcome to node07 {maintenance Friday}"\n'
                                    'exec %s "$@"\n' % sys.executable)
    facts = run_probe(LocalRemote(), node_python=py)
    assert facts["schema"] == 1


def test_a_hanging_probe_is_stopped_at_the_timeout(tmp_path):
    py = script(tmp_path, "python", "sleep 60\n")
    start = time.monotonic()
    with pytest.raises(ProbeError, match=r"probe did not run: timed out after 1 s"):
        run_probe(LocalRemote(), node_python=py, timeout=1)
    assert time.monotonic() - start < 10


def test_probe_host_turns_failure_into_data(tmp_path):
    ok = probe_host(LocalRemote("good"))
    bad = probe_host(LocalRemote("bad"), node_python="/nonexistent/python3")
    assert ok.reachable and ok.facts["schema"] == 1 and ok.error is None
    assert not bad.reachable and bad.facts is None
    assert bad.error.startswith("/nonexistent/python3 not found") and "--node-python" in bad.error


def test_the_command_quotes_what_reaches_the_shell():
    boot = ("'import sys;_envcheck_in=getattr(sys.stdin,\"buffer\",sys.stdin).read();"
            "_envcheck_at=_envcheck_in.find(b\"\\n# ---- probe \")+1;"
            "exec(compile(_envcheck_in[:_envcheck_at] or _envcheck_in,\"envcheck-probe\",\"exec\"))'")
    assert probe_command() == (
        "sh -c 'boot=$1; shift; for p in python3 /usr/libexec/platform-python python; do if command -v \"$p\" "
        ">/dev/null 2>&1; then exec \"$p\" -c \"$boot\" \"$@\"; fi; done; echo \"envcheck-probe: none of python3, "
        "/usr/libexec/platform-python, python here\" >&2; exit 127' envcheck-probe " + boot)
    assert probe_command(deep=True).endswith(" envcheck-probe " + boot + " --deep")
    assert probe_command(node_python="/opt/my env/bin/python") == "'/opt/my env/bin/python' -c " + boot
    assert probe_command(only=["toolkit", "disk"], paths=["/opt/my cuda"]).endswith(
        " envcheck-probe " + boot + " --only toolkit,disk --path '/opt/my cuda'")


def test_a_node_without_python3_on_path_runs_the_probe_with_platform_python(tmp_path, monkeypatch):
    """Minimal RHEL images: no python3 (nor python) on PATH, /usr/libexec/platform-python is."""
    bin_dir, libexec = tmp_path / "bin", tmp_path / "libexec"
    bin_dir.mkdir(), libexec.mkdir()
    os.symlink("/bin/sh", bin_dir / "sh")
    os.symlink(sys.executable, libexec / "platform-python")
    monkeypatch.setattr(probe_mod, "NODE_PYTHONS", ("python3", str(libexec / "platform-python"), "python"))
    monkeypatch.setenv("PATH", str(bin_dir))
    facts = run_probe(LocalRemote(), only=["python"])
    assert facts["python"]["version"] == "%d.%d.%d" % sys.version_info[:3]
    os.unlink(libexec / "platform-python")
    with pytest.raises(ProbeError, match="platform-python") as e:
        run_probe(LocalRemote(), only=["python"])
    assert "--node-python" in e.value.fix


def test_only_runs_the_sections_named_and_those_they_need():
    facts = run_probe(LocalRemote(), only=["torch", "port"])
    assert set(facts) - {"schema", "origin", "probe", "errors"} == {"packages", "torch", "port"}
    assert facts["probe"]["only"] == ["packages", "torch", "port"]
    assert 0 < facts["port"]["free"] < 65536


def test_show_probe_is_the_command_line_and_the_script():
    assert show_probe(only=["gpus", "net"]) == (probe_command(only=["gpus", "net"]),
                                                framed(probe_source(["gpus", "net"])))
    assert show_probe()[1] == shipped_source() != framed(probe_source())
    assert shipped_source().endswith(probe_source(tuple(n for n in document_sections() if n != "deep")))


def test_a_command_ships_only_the_parts_of_its_sections():
    assert [p.stem for p in probe_parts(["port"])] == ["base", "kept", "port", "run", "main"]
    assert len(probe_parts()) == len(list(probe_mod.PROBE_DIR.glob("*.py")))  # none named: every part
    shipped = {p.stem for p in probe_parts(["gpus", "pci_gpus"])}
    assert {"driver", "nvml", "userspace", "pci"} <= shipped and not shipped & {"cuda", "health", "packages"}
    document = shipped_source()
    assert "# ---- part health " in document and "# ---- part deep " not in document
    assert "# ---- part deep " in shipped_source(deep=True)
    assert "# ---- part privilege " not in document and "# ---- part privilege " in probe_source()


def _facts(source: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", BOOTSTRAP, *args], input=source.encode(),
                          capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    doc = json.loads(proc.stdout)
    doc["probe"]["seconds"] = None
    for key in ("interfaces", "health"):  # other tests' hosts come and go; the kernel log grows
        doc.pop(key, None)
    return doc


def test_the_parts_a_command_ships_give_the_facts_the_whole_probe_gives():
    only = ["host", "gpus", "pci_gpus", "python", "cuda", "cudnn", "torch", "nccl", "gcc"]
    assert _facts(probe_source(only), "--only", ",".join(only)) == \
        _facts(probe_source(), "--only", ",".join(only))
    assert _facts(shipped_source()) == _facts(probe_source())


@pytest.mark.parametrize("command", ["nccl-test", "launch"])
def test_rank_commands_show_the_probe_they_run_with_their_sections(command):
    from envcheck.allreduce.preflight import RANK_SECTIONS
    from envcheck.ranks.preflight import PROBE_SECTIONS
    from tests.conftest import run_cli
    sections = RANK_SECTIONS if command == "nccl-test" else PROBE_SECTIONS   # nccl-test: torch_import too
    proc = run_cli(command, "--show-probe", "--node-python", "/opt/py/bin/python3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shipped_source(sections)
    assert probe_command(node_python="/opt/py/bin/python3", only=sections) in proc.stderr
    assert "--only host,gpus,net,port,resources" in proc.stderr


def test_installers_and_doctor_show_the_probe_they_run_with_their_sections_and_places():
    """--show-probe prints the very command each installer's preflight runs (its ProbeRequest) and
    the script it sends; install-cuda also the read of the tree it installed, doctor the audit's
    and the preflight's."""
    from envcheck.doctor.backend import TORCH_SECTIONS
    from envcheck.install import cudnn, envblock
    from envcheck.ranks.preflight import PROBE_SECTIONS
    from envcheck.install.cuda_facts import InstallArgs, probe_request
    from envcheck.install.cuda_spec import toolkit_spec
    from envcheck.matrix.load import load_matrix
    from tests.conftest import run_cli
    spec = toolkit_spec(load_matrix(), "12.4")
    check = show_probe(only=["toolkit"], paths=["/opt/cuda-12.4"])
    expect = {
        ("install-cuda", "12.4", "n1", "--prefix", "/opt"):
            [probe_request(spec, InstallArgs(prefix="/opt")).show(), (check[0] + " --lines < /var/tmp/envcheck.", check[1])],
        ("install-cudnn", "--cuda", "12.4", "n1"): [cudnn.probe_request("/usr/local/cuda-12.4").show()],
        ("env", "n1", "--cuda-home", "/usr/local/cuda-12.4"):
            [envblock.probe_request(["~/.bashrc"], "/usr/local/cuda-12.4").show()],
        ("doctor", "n1"): [show_probe(deep=True), show_probe(only=PROBE_SECTIONS)],
        ("doctor", "n1", "--quick"): [show_probe(), show_probe(only=TORCH_SECTIONS)],
    }
    for args, shown in expect.items():
        proc = run_cli(*args, "--show-probe")
        assert proc.returncode == 0, proc.stderr
        assert all(command in proc.stderr and script in proc.stdout for command, script in shown), args
        if len(shown) == 1:
            assert proc.stdout == shown[0][1]   # one script: runnable as saved
    assert "--only privilege,login,rcfile,disk --path /usr/local/cuda-12.4/bin/nvcc --file '~/.bashrc'" in \
        envblock.probe_request(["~/.bashrc"], "/usr/local/cuda-12.4").show()[0]
