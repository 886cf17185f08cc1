"""`envcheck audit` with no hosts, through the installed console script: the probe runs on this
machine through LocalRemote, exactly the path SSH hosts take."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from envcheck.audit.probe import probe_command, shipped_source
from envcheck.rules import REGISTRY
from tests.conftest import envcheck_exe, run_cli
from tests.node.probe_helpers import REAL_DRIVER, plant_toolkit, stand_in_nvidia_smi
from tests.node.userspace import can_hide, hidden


def audit_json(*args, env=None):
    proc = run_cli("audit", "--json", *args, env=env)
    doc = json.loads(proc.stdout)  # stdout is the JSON document and nothing else
    return proc, doc


@pytest.mark.skipif(REAL_DRIVER, reason="this machine has an NVIDIA driver")
def test_audit_json_on_this_gpu_less_machine_says_no_driver_and_exits_by_its_findings(tmp_path):
    """As a machine that never had NVIDIA's userspace (the packaged one, where installed, hidden)."""
    why = can_hide()
    if why:
        pytest.skip(why)
    proc = subprocess.run(hidden([envcheck_exe(), "audit", "--json"], tmp_path / "hide"),
                          capture_output=True, text=True, timeout=120)
    doc = json.loads(proc.stdout)
    assert set(doc) == {"schema", "ok", "hosts", "fleet_findings", "drift"}
    assert doc["schema"] == 2 and doc["fleet_findings"] == [] and doc["drift"] == []  # one shape for 1 or N hosts
    (host,) = doc["hosts"]
    assert host["host"] == "localhost" and host["error"] is None
    assert host["facts"]["driver"]["version"] is None
    assert host["facts"]["driver"]["error"].startswith("no NVIDIA driver found")
    errors = [f for f in host["findings"] if f["severity"] == "error"]
    assert proc.returncode == (1 if errors else 0), proc.stderr
    assert doc["ok"] is (not errors) and host["ok"] is (not errors)
    if REGISTRY:  # once the rules are in, the missing driver must be one of the findings
        assert any(f["component"] == "driver" for f in host["findings"]), host["findings"]
    assert "Traceback" not in proc.stderr


def test_audit_table_shows_the_planted_driver_gpus_and_toolkit(tmp_path):
    if REAL_DRIVER:
        pytest.skip("a real driver would answer before the stand-in")
    fake_bin = tmp_path / "fakebin"
    stand_in_nvidia_smi(fake_bin, "550.127.05")
    tk = plant_toolkit(tmp_path / "cuda-12.1")
    env = {"PATH": os.pathsep.join([str(fake_bin), str(tk / "bin"), os.path.dirname(sys.executable),
                                    "/usr/bin", "/bin"]),
           "CUDA_HOME": str(tk), "NCCL_SOCKET_IFNAME": "ib0"}
    proc = run_cli("audit", env=env)
    assert proc.returncode in (0, 1), proc.stderr
    out = proc.stdout
    assert "driver       550.127.05, supports CUDA <= 12.4, via nvidia-smi" in out
    assert "gpus         2 x NVIDIA H100 80GB HBM3 (sm_90, 81559 MiB)" in out
    assert "cuda         12.1 in use (via PATH: %s)" % os.path.realpath(tk) in out
    assert "cudnn        8.9.7" in out
    assert "NCCL_SOCKET_IFNAME=ib0" in out
    assert "\nfindings\n" in out

    _, doc = audit_json(env=env)
    facts = doc["hosts"][0]["facts"]
    assert facts["driver"]["version"] == "550.127.05"
    assert [g["compute_capability"] for g in facts["gpus"]] == ["9.0", "9.0"]


def test_a_host_that_cannot_be_resolved_is_reported_not_audited_with_exit_3():
    proc = run_cli("audit", "node01.invalid", "--json", "--connect-timeout", "3")
    assert proc.returncode == 3, proc.stderr
    doc = json.loads(proc.stdout)
    (host,) = doc["hosts"]
    assert host["host"] == "node01.invalid" and host["facts"] is None
    assert host["error"].startswith("probe did not run: unreachable: cannot resolve node01.invalid") or \
        "cannot resolve node01.invalid" in host["error"]


def test_a_probe_that_cannot_run_exits_3_and_the_json_says_why():
    proc, doc = audit_json("--node-python", "/nonexistent/python3")
    assert proc.returncode == 3
    assert doc["ok"] is False
    (host,) = doc["hosts"]
    assert host["facts"] is None and host["findings"] == []
    assert "/nonexistent/python3 not found" in host["error"]


def test_a_probe_that_cannot_run_is_named_in_the_table_too():
    proc = run_cli("audit", "--node-python", "/nonexistent/python3")
    assert proc.returncode == 3
    assert proc.stdout.startswith("localhost: NOT AUDITED: /nonexistent/python3 not found")


def test_a_missing_matrix_file_is_a_usage_error_in_one_line(tmp_path):
    proc = run_cli("audit", "--matrix", str(tmp_path / "nope.yaml"))
    assert proc.returncode == 2
    assert proc.stdout == "" and proc.stderr.count("\n") == 1 and "nope.yaml" in proc.stderr


def test_node_python_names_the_interpreter_whose_torch_is_reported():
    _, doc = audit_json("--node-python", sys.executable)
    assert doc["hosts"][0]["facts"]["python"]["executable"] == sys.executable


@pytest.mark.torch
def test_deep_audit_reports_what_importing_torch_said():
    torch = pytest.importorskip("torch")
    proc, doc = audit_json("--deep", "--node-python", sys.executable)
    deep = doc["hosts"][0]["facts"]["deep"]
    assert deep["torch"] == torch.__version__ and deep["error"] is None
    assert doc["hosts"][0]["facts"]["probe"]["deep"] is True


def test_show_probe_prints_exactly_the_script_that_is_shipped():
    proc = run_cli("audit", "--show-probe", "--deep")
    assert proc.returncode == 0
    assert proc.stdout == shipped_source(deep=True)  # the document's parts, deep's included
    assert probe_command(deep=True) in proc.stderr  # and the command line that runs it


def test_every_audit_option_is_documented():
    import typer.main

    from envcheck.cli import app
    from tests.conftest import REPO
    # the local audit and the probe in probe-and-audit.md, the host options in fleet-audit.md
    doc = (REPO / "docs" / "probe-and-audit.md").read_text() + (REPO / "docs" / "fleet-audit.md").read_text()
    command = typer.main.get_command(app).commands["audit"]
    opts = [o for p in command.params for o in p.opts if o.startswith("--") and o != "--help"]
    assert opts, "no options found: the test would prove nothing"
    missing = [o for o in opts if "`%s" % o not in doc]
    assert not missing, "document these in docs/probe-and-audit.md or docs/fleet-audit.md: %s" % missing


@pytest.mark.torch
def test_a_local_audit_reads_the_torch_beside_envcheck_and_names_that_interpreter():
    pytest.importorskip("torch")
    proc, doc = audit_json()
    # the venv envcheck runs in (its console script may name python or python3 of it)
    assert doc["hosts"][0]["facts"]["python"]["prefix"] == sys.prefix
    assert f"the probe (whose torch is audited) runs under {os.path.dirname(sys.executable)}/python" in proc.stderr


def test_an_explicit_node_python_is_used_as_given_with_no_note():
    proc, doc = audit_json("--node-python", "/usr/bin/python3")
    assert doc["hosts"][0]["facts"]["python"]["executable"] == "/usr/bin/python3"
    assert "this machine:" not in proc.stderr
