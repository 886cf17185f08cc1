"""A node with GPUs in its slots and no NVIDIA driver yet: `envcheck audit` over SSH
lists them from the PCI bus with board and sm, and `envcheck plan` starts from the saved facts.
The PCI bus is simulated per host (tests/cluster/pci.py); the audit itself is the real one."""
from __future__ import annotations

import json

import pytest

from tests.cluster.pci import nvidia_gpu, set_pci_devices
from tests.conftest import run_cli

NODE01 = [
    ("0000:00:00.0", "0x8086", "0x2020", "0x060000"),          # a host bridge: not NVIDIA
    nvidia_gpu("0000:3b:00.0", "0x2330"),                        # H100 SXM5 80GB
    ("0000:3b:00.1", "0x10de", "0x22a3", "0x040300"),            # an NVIDIA audio function: not a GPU
    nvidia_gpu("0000:5d:00.0", "0x2330"),
]
NODE02 = [nvidia_gpu("0000:3b:00.0", "0x102d"), nvidia_gpu("0000:3c:00.0", "0x2ffe")]   # K80, and an id the PCI ID database does not list (a board newer than it)


@pytest.fixture(scope="module")
def two(cluster_factory):
    c = cluster_factory(2)
    set_pci_devices(c["node01"], NODE01)
    set_pci_devices(c["node02"], NODE02)
    c.trust_all_host_keys()
    yield c
    c.close()


def _audit(c, *args):
    return run_cli("audit", "--ssh-config", str(c.ssh_config), "--connect-timeout", "5", *args, timeout=180)


def test_audit_of_a_node_without_a_driver_shows_its_gpus_from_the_pci_bus_with_their_sm(two):
    r = _audit(two, "node01", "node02")
    rows = {l.split()[0]: " ".join(l.split()) for l in r.stdout.splitlines() if l.startswith("node0")}
    assert "none (PCI: 2 x NVIDIA H100 SXM5 80GB (GH100, sm_90))" in rows["node01"], r.stdout
    assert ("none (PCI: 1 x NVIDIA Tesla K80 (GK210GL, sm_37); 1 x NVIDIA device 0x2ffe (sm unknown))"
            in rows["node02"]), r.stdout
    full = " ".join(_audit(two, "node01", "--full").stdout.split())
    assert "gpus none listed by a driver; on the PCI bus: 2 x NVIDIA H100 SXM5 80GB (GH100, sm_90)" in full


def test_the_audit_json_carries_the_probes_pci_gpus_named_by_the_controller(two):
    doc = json.loads(_audit(two, "node01", "node02", "--json").stdout)
    hosts = {h["host"]: h for h in doc["hosts"]}
    pci01 = hosts["node01"]["facts"]["pci_gpus"]
    assert [(g["address"], g["vendor_id"], g["device_id"], g["class"]) for g in pci01] == [
        ("0000:3b:00.0", "0x10de", "0x2330", "0x030200"), ("0000:5d:00.0", "0x10de", "0x2330", "0x030200")]
    assert {(g["name"], g["chip"], g["compute_capability"]) for g in pci01} == {("NVIDIA H100 SXM5 80GB", "GH100", "9.0")}
    pci02 = hosts["node02"]["facts"]["pci_gpus"]
    assert [(g["name"], g["compute_capability"]) for g in pci02] == [("NVIDIA Tesla K80", "3.7"),
                                                                     ("NVIDIA device 0x2ffe", None)]
    unknown = [f for f in hosts["node02"]["findings"] if f["code"] == "gpu-unknown"]
    assert len(unknown) == 1 and "0x2ffe" in unknown[0]["message"]


def test_plan_starts_from_the_saved_audit_of_a_node_without_a_driver(two, tmp_path):
    saved = tmp_path / "node01.json"
    saved.write_text(_audit(two, "node01", "--json").stdout)
    r = run_cli("plan", str(saved))
    assert r.returncode == 0, r.stderr
    head = " ".join(r.stdout.splitlines()[0].split())
    assert head.startswith("GPU NVIDIA H100 SXM5 80GB (from the PCI bus (no driver) of") and "(compute capability 9.0" in head
    r = run_cli("plan", str(tmp_path / "node02.json"))
    assert r.returncode == 2
