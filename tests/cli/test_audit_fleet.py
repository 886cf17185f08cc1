"""`envcheck audit HOSTS` on the simulated cluster, through the installed console script."""
from __future__ import annotations

import json
import shutil

import pytest

from tests.cluster import standins
from tests.conftest import run_cli


def _setup(h):
    standins.plant_driver(h, "535.104.05", standins.gpu_list("A100", 8))
    standins.plant_toolkit(h, "12.1.0")
    standins.plant_cudnn(h, "8.9.7", "/usr/local/cuda-12.1")


@pytest.fixture(scope="module")
def eight(cluster_factory):
    c = cluster_factory(8, per_host_setup=_setup)
    # node05: the odd one out, with an older driver
    standins.plant_driver(c["node05"], "470.82.01", standins.gpu_list("A100", 8))
    yield c
    c.close()


def audit(c, *args, known_hosts=None, timeout=120, connect_timeout=15):
    cfg = c.ssh_config
    if known_hosts is not None:
        cfg = c.write_ssh_config(known_hosts.parent / "ssh_config", known_hosts=known_hosts)
    return run_cli("audit", "--ssh-config", str(cfg), "--connect-timeout", str(connect_timeout), *args,
                   timeout=timeout)


def _kh(c, tmp_path):
    kh = tmp_path / "known_hosts"
    shutil.copy(c.known_hosts, kh)
    return kh


def test_eight_hosts_audited_with_one_exec_each_and_the_odd_driver_named(eight, tmp_path):
    before = [h.exec_count() for h in eight]
    proc = audit(eight, eight.hostlist, "--json", known_hosts=_kh(eight, tmp_path))
    after = [h.exec_count() for h in eight]
    assert [a - b for a, b in zip(after, before)] == [1] * 8  # exactly one SSH exec per host
    doc = json.loads(proc.stdout)
    assert [h["host"] for h in doc["hosts"]] == eight.names
    assert all(h["error"] is None for h in doc["hosts"]), [h["error"] for h in doc["hosts"]]
    assert [h["facts"]["hostname"] for h in doc["hosts"]] == eight.names
    # the nodes' system python3 has no pynvml: NVML is read through ctypes, nvidia-smi never runs
    assert {h["facts"]["driver"]["source"] for h in doc["hosts"]} == {"nvml-ctypes"}
    want = [(g["name"], g["uuid"], g["pci_bus_id"]) for g in standins.gpu_list("A100", 8)]
    assert all([(g["name"], g["uuid"], g["pci_bus_id"]) for g in h["facts"]["gpus"]] == want for h in doc["hosts"])
    odd = [(h["host"], f["code"]) for h in doc["hosts"] for f in h["findings"] if f["code"].startswith("fleet-")]
    assert odd == [("node05", "fleet-driver-mismatch")]
    node05 = next(h for h in doc["hosts"] if h["host"] == "node05")
    f = next(f for f in node05["findings"] if f["code"] == "fleet-driver-mismatch")
    assert "470.82.01 while 7 of 8 hosts have 535.104.05" in f["message"] and "535.104.05" in f["fix"]
    row = next(r for r in doc["drift"] if r["component"] == "driver")
    assert row["odd"] == ["node05"] and row["majority"] == "535.104.05"
    assert proc.returncode == 1


def test_the_text_report_marks_the_odd_driver_and_draws_no_progress_bar_when_piped(eight, tmp_path):
    proc = audit(eight, eight.hostlist, known_hosts=_kh(eight, tmp_path))
    rows = {l.split()[0]: l for l in proc.stdout.splitlines() if l.startswith("node")}
    assert "470.82.01 *" in rows["node05"] and "535.104.05" in rows["node[01-04,06-08]"]
    assert "\r" not in proc.stderr and "audit [" not in proc.stderr


def test_unreachable_refused_key_and_changed_host_key_each_give_a_reason_and_exit_1_for_node05(eight, tmp_path):
    kh = _kh(eight, tmp_path)
    kh.write_text("".join(f"{h.ip} {' '.join(h.host_key_pub.split()[:2])}\n" for h in eight))
    down, nokey, rekeyed = eight["node02"], eight["node03"], eight["node04"]
    down.stop_sshd()
    nokey.run_local("mv /root/.ssh/authorized_keys /root/.ssh/authorized_keys.off")
    rekeyed.regenerate_host_key()
    try:
        proc = audit(eight, eight.hostlist, "--json", known_hosts=kh)
    finally:
        down.start_sshd()
        nokey.run_local("mv /root/.ssh/authorized_keys.off /root/.ssh/authorized_keys")
    # node05's old driver is an error among the audited: FAIL (1) outranks the unknown hosts (3)
    assert proc.returncode == 1
    errors = {h["host"]: h["error"] for h in json.loads(proc.stdout)["hosts"]}
    assert "unreachable: connection refused" in errors.pop("node02")
    assert "authentication failed for root" in errors.pop("node03")
    assert "host key for" in errors["node04"] and "has CHANGED" in errors.pop("node04")
    assert errors == {h: None for h in errors}  # the other five were audited


def test_strict_host_keys_refuses_hosts_missing_from_known_hosts(eight, tmp_path):
    kh = tmp_path / "known_hosts"
    kh.write_text("")
    proc = audit(eight, "node01", "--json", "--strict-host-keys", known_hosts=kh)
    assert proc.returncode == 3
    assert "unknown host key (--strict-host-keys)" in json.loads(proc.stdout)["hosts"][0]["error"]


def test_hosts_file_and_save_write_facts_for_a_later_check(eight, tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("# two nodes\nnode01\nnode06  # and this one\nnode01\n")
    out = tmp_path / "facts"
    proc = audit(eight, "--hosts-file", str(hf), "--save", str(out), "--json", known_hosts=_kh(eight, tmp_path))
    assert [h["host"] for h in json.loads(proc.stdout)["hosts"]] == ["node01", "node06"]
    assert sorted(p.name for p in out.iterdir()) == ["node01.json", "node06.json"]
    assert json.loads((out / "node06.json").read_text())["hostname"] == "node06"
    assert proc.returncode == 0, proc.stdout
    # a saved host is judged offline exactly as the audit judged it
    node06 = json.loads(proc.stdout)["hosts"][1]
    c = run_cli("check", str(out / "node06.json"), "--json")
    assert c.returncode == 0 and json.loads(c.stdout)["findings"] == node06["findings"]
    # and the multi-host --json itself is refused in one line: check judges one host
    both = tmp_path / "audit.json"
    both.write_text(proc.stdout)
    c = run_cli("check", str(both))
    assert c.returncode == 2 and "holds 2 hosts" in c.stderr and len(c.stderr.splitlines()) == 1


def test_the_probe_reports_the_non_interactive_environment(eight, tmp_path):
    h = eight["node07"]
    bashrc = h.read_file("/root/.bashrc")
    h.write_file("/root/.bashrc", bashrc + "\nexport CUDA_HOME=/usr/local/cuda-12.1\n")
    try:
        proc = audit(eight, "node07", "--json", known_hosts=_kh(eight, tmp_path))
    finally:
        h.write_file("/root/.bashrc", bashrc)
    env = json.loads(proc.stdout)["hosts"][0]["facts"]["env"]
    assert "CUDA_HOME" not in env or not env["CUDA_HOME"]  # the export sits after the guard
    assert "/usr/local/cuda-12.1/bin" not in env.get("PATH", "")


def test_a_hung_host_costs_the_connect_timeout_and_the_rest_are_reported(eight, tmp_path):
    import time
    eight["node08"].freeze_sshd()
    try:
        t = time.monotonic()
        proc = audit(eight, "node0[6-8]", "--json", known_hosts=_kh(eight, tmp_path), connect_timeout=5)
        took = time.monotonic() - t
    finally:
        eight["node08"].thaw_sshd()
    hosts = json.loads(proc.stdout)["hosts"]
    assert "timed out connecting after 5 s" in hosts[2]["error"]
    assert hosts[0]["error"] is None and hosts[1]["error"] is None
    assert proc.returncode == 3 and took < 25


def test_a_progress_bar_is_drawn_only_when_stderr_is_a_tty(eight, tmp_path):
    import os
    import pty
    import subprocess

    from tests.conftest import envcheck_exe
    kh = _kh(eight, tmp_path)
    cfg = eight.write_ssh_config(tmp_path / "ssh_config", known_hosts=kh)
    master, slave = pty.openpty()
    try:
        p = subprocess.run([envcheck_exe(), "audit", "--ssh-config", str(cfg), "node0[1-3]"],
                           stdout=subprocess.PIPE, stderr=slave, text=True, timeout=120)
        os.close(slave)
        tty = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            tty += chunk
    finally:
        os.close(master)
    assert b"audit" in tty and b"3/3" in tty and "\u2501".encode() in tty   # rich's bar
    assert "3/3" not in p.stdout and "3 hosts: 3 without errors" in p.stdout


def test_a_wrong_key_is_named_per_host_and_the_right_one_still_works(eight, tmp_path):
    kh = _kh(eight, tmp_path)
    cfg = eight.write_ssh_config(tmp_path / "wrong_key_config", identity=eight.wrong_key, known_hosts=kh)
    proc = run_cli("audit", "--ssh-config", str(cfg), "--connect-timeout", "15", "node0[1-2]", "--json")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    errors = [h["error"] for h in json.loads(proc.stdout)["hosts"]]
    assert all(e and "authentication failed for root" in e for e in errors), errors
    # --identity overrides the config's key: the same hosts are audited
    proc = run_cli("audit", "--ssh-config", str(cfg), "--identity", str(eight.client_key),
                   "--connect-timeout", "15", "node0[1-2]", "--json")
    assert [h["error"] for h in json.loads(proc.stdout)["hosts"]] == [None, None], proc.stdout[-500:]


def test_clush_grammar_with_a_step_and_an_exclusion_audits_exactly_those_hosts(eight, tmp_path):
    before = [h.exec_count() for h in eight]
    proc = audit(eight, "node[01-08/2]", "-x", "node03", "--json", known_hosts=_kh(eight, tmp_path))
    doc = json.loads(proc.stdout)
    assert [h["host"] for h in doc["hosts"]] == ["node01", "node05", "node07"], proc.stderr
    ran = [h.name for h, b in zip(eight, before) if h.exec_count() > b]
    assert ran == ["node01", "node05", "node07"]   # node03 is never contacted
