"""What `envcheck audit` prints, read as a user would on the simulated cluster: one remote host
gives its facts table; 32 hosts give one screen where each fault is named with its host and a
warning every host has is printed once. One 32-host cluster serves the whole module (building
it is the slow part); the pure rendering is tested on data in tests/audit/test_fleet.py."""
from __future__ import annotations

import os
import pty
import re
import subprocess

import pytest

from tests.cluster import standins
from tests.conftest import envcheck_exe, run_cli

SCREEN = {"COLUMNS": "100", "NO_COLOR": ""}  # a 100 x 40 terminal's worth of text


def _setup(h):
    # driver 470 under CUDA 11.8 is a warning (minor-version compatibility) on every host
    standins.plant_driver(h, "470.82.01", standins.gpu_list("A100", 8))
    standins.plant_toolkit(h, "11.8.0")
    standins.plant_cudnn(h, "8.9.7", "/usr/local/cuda-11.8")


@pytest.fixture(scope="module")
def fleet(cluster_factory):
    c = cluster_factory(32, per_host_setup=_setup)
    c.trust_all_host_keys()
    # the two planted faults: node07's cuDNN and node19's GPU count differ from the rest
    standins.plant_cudnn(c["node07"], "8.6.0", "/usr/local/cuda-11.8")
    standins.plant_driver(c["node19"], "470.82.01", standins.gpu_list("A100", 4))
    yield c
    c.close()


def audit(c, *args, env=None):
    return run_cli("audit", "--ssh-config", str(c.ssh_config), "--connect-timeout", "5", *args,
                   env={**SCREEN, **(env or {})}, timeout=240)


@pytest.fixture(scope="module")
def report32(fleet):
    return audit(fleet, fleet.hostlist)


def test_32_hosts_with_two_faults_fit_one_screen_and_name_each_fault_with_its_host(report32):
    out = report32.stdout
    lines = out.splitlines()
    assert report32.returncode == 1, report32.stderr
    assert len(lines) <= 40, out
    assert lines[-1].startswith("FAIL: 32 hosts: ")
    # the table: the 30 alike on one row, each odd host on its own with the odd value marked
    rows = {line.split()[0]: line for line in lines if line.startswith("node")}
    assert set(rows) == {"node[01-06,08-18,20-32]", "node07", "node19"}, out
    assert "8.6.0 *" in rows["node07"] and "4 x A100-SXM4-40GB *" in rows["node19"]
    assert "*" not in rows["node[01-06,08-18,20-32]"]
    # the findings: each fault once, under its host
    cudnn = [line for line in lines if "fleet-cudnn-mismatch" in line or "node07 has cuDNN" in line]
    assert cudnn and cudnn[0].startswith("ERROR   node07: cudnn: node07 has cuDNN 8.6.0"), out
    assert any(line.startswith("WARNING node19: gpu: node19 has GPU count 4") for line in lines), out


def test_a_warning_every_one_of_32_hosts_has_is_printed_once_with_their_hostlist(report32):
    out = report32.stdout
    assert " ".join(out.split()).count("minor-version compatibility") == 1, out
    head = next(line for line in out.splitlines() if line.startswith("WARNING node[01-32]: driver:"))
    assert "Driver 470.82.01 is below CUDA 11.8" in head


def test_one_remote_host_prints_the_facts_table_as_a_local_audit_does(fleet):
    proc = audit(fleet, "node19")
    out = proc.stdout
    assert out.startswith("node19\n"), out
    rows = {m.group(1): m.group(2) for m in re.finditer(r"^  (\w+)\s{2,}(.+)$", out, re.M)}
    assert rows["driver"].startswith("470.82.01")
    assert rows["gpus"].startswith("4 x NVIDIA A100-SXM4-40GB")
    assert rows["cudnn"] == "8.9.7 (system)" and rows["python"].startswith("3.")
    assert "findings" in out.splitlines() and "HOSTS" not in out
    # the same labels as the local audit's table (tests/cli/test_audit_local.py reads them there)
    assert {"host", "driver", "gpus", "cuda", "cudnn", "torch", "nccl", "python", "gcc", "env"} <= set(rows)


def _on_a_tty(argv, env):
    """Run with stdout on a pseudo-terminal; what it printed there."""
    master, slave = pty.openpty()
    try:
        subprocess.run(argv, stdout=slave, stderr=subprocess.DEVNULL, env={**os.environ, **env}, timeout=120)
        os.close(slave)
        out = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
    finally:
        os.close(master)
    return out.decode()


def test_colour_on_a_terminal_none_with_no_color_and_none_when_piped(fleet):
    argv = [envcheck_exe(), "audit", "--ssh-config", str(fleet.ssh_config), "node0[6-7]"]
    coloured = _on_a_tty(argv, {"NO_COLOR": ""})
    assert "\033[1;33m8.6.0 *" in coloured and "\033[1;31mERROR" in coloured
    assert "\033[" not in _on_a_tty(argv, {"NO_COLOR": "1"})
    assert "\033[" not in audit(fleet, "node0[6-7]").stdout


def test_hosts_down_for_the_same_reason_are_one_line_whatever_their_addresses(fleet):
    for name in ("node06", "node08"):
        fleet[name].stop_sshd()
    try:
        proc = audit(fleet, "node0[5-8]")
    finally:
        for name in ("node06", "node08"):
            fleet[name].start_sshd()
    assert proc.returncode == 1   # the audited two have errors: FAIL outranks the hosts not audited
    lines = proc.stdout.splitlines()
    i = lines.index("Not audited (2):")
    assert lines[i + 1].startswith("  node[06,08]: probe did not run: unreachable: connection refused (…:22")
    assert "node[05,07]" not in proc.stdout.split("Not audited")[1]  # the two audited ones are not listed


def test_full_prints_every_host_facts_table_and_one_row_per_host(fleet):
    # node05 and node06 are alike: one row without --full, two with it
    grouped = audit(fleet, "node0[5-6]").stdout
    assert any(line.startswith("node[05-06] ") for line in grouped.splitlines()), grouped
    out = audit(fleet, "node0[5-6]", "--full").stdout
    assert out.startswith("node05\n  host ") and "\nnode06\n  host " in out
    rows = [line.split()[0] for line in out.splitlines() if re.match(r"node0[56] +\d", line)]
    assert rows == ["node05", "node06"], out
