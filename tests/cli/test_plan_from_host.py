"""`envcheck plan` without --gpu starts from a machine: a saved facts file (audit --json with one
host, or a probe's facts) or, with no file, this machine. Before a driver is installed the GPU
comes from the PCI bus, which is when a plan is wanted most."""
from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli


def _pci(*devices):
    return [{"address": f"0000:{0x3b + i:02x}:00.0", "vendor_id": "0x10de", "device_id": d, "class": "0x030200"}
            for i, d in enumerate(devices)]


def _facts(tmp_path: Path, gpus=(), pci=(), driver=None, wrap=False) -> Path:
    facts = {"schema": 1, "origin": "probe", "driver": {"version": driver, "error": None if driver else "no nvidia-smi"},
             "gpus": list(gpus), "pci_gpus": list(pci)}
    doc = {"hosts": [{"host": "gpu07", "facts": facts}]} if wrap else facts
    p = tmp_path / "facts.json"
    p.write_text(json.dumps(doc))
    return p


def test_a_host_with_no_driver_is_planned_for_the_gpu_on_its_pci_bus(tmp_path):
    r = run_cli("plan", str(_facts(tmp_path, pci=_pci("0x2330", "0x2330"), wrap=True)), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["compute_capability"] == "9.0" and doc["allowed"]
    assert doc["gpu"].startswith("NVIDIA H100 SXM5 80GB (from the PCI bus (no driver) of")
    # sm_90 arrived with CUDA 11.8 (archs in compat_matrix.yaml)
    assert min(tuple(map(int, s["cuda"].split(".")[:2])) for s in doc["allowed"]) >= (11, 8)


def test_the_driver_in_the_facts_limits_the_plan_unless_driver_is_given(tmp_path):
    f = _facts(tmp_path, gpus=[{"name": "Tesla V100-SXM2-16GB", "compute_capability": "7.0"}], driver="410.48")
    r = run_cli("plan", str(f))
    assert r.returncode == 0 and "Tesla V100-SXM2-16GB (from the driver of" in r.stdout and "driver 410.48" in r.stdout
    def cudas(*extra):
        return {tuple(map(int, s["cuda"].split(".")[:2]))
                for s in json.loads(run_cli("plan", str(f), "--json", *extra).stdout)["allowed"]}
    assert max(cudas()) == (10, 0)     # 410.48 is CUDA 10.0's minimum
    assert max(cudas("--driver", "550.54.14")) >= (12, 4)


def test_gpu_overrides_the_facts_file(tmp_path):
    r = run_cli("plan", str(_facts(tmp_path, pci=_pci("0x2330"))), "--gpu", "T4", "--json")
    assert json.loads(r.stdout)["compute_capability"] == "7.5"


def test_a_host_with_two_kinds_of_gpu_asks_which_one_in_one_line(tmp_path):
    r = run_cli("plan", str(_facts(tmp_path, pci=_pci("0x2330", "0x1db4"))))
    assert r.returncode == 2 and r.stdout == ""
    assert "7.0 and 9.0" in r.stderr and "--gpu X.Y" in r.stderr and len(r.stderr.strip().splitlines()) <= 2


def test_a_host_without_any_nvidia_gpu_says_to_name_one(tmp_path):
    r = run_cli("plan", str(_facts(tmp_path, driver=None)))
    assert r.returncode == 2 and "no NVIDIA GPU" in r.stderr and "--gpu" in r.stderr


def test_a_gpu_newer_than_the_pci_database_asks_for_its_compute_capability(tmp_path):
    r = run_cli("plan", str(_facts(tmp_path, pci=_pci("0x2ffe"))))
    assert r.returncode == 2 and "NVIDIA device 0x2ffe" in r.stderr and "--gpu sm_XY" in r.stderr


def _local_nvidia_on_bus() -> bool:
    root = Path("/sys/bus/pci/devices")
    try:
        return any((d / "vendor").read_text().strip() == "0x10de" and (d / "class").read_text().startswith("0x03")
                   for d in root.iterdir())
    except OSError:
        return False


def test_without_a_file_or_gpu_this_machine_is_probed():
    r = run_cli("plan", "--json", timeout=300)
    if _local_nvidia_on_bus():
        assert r.returncode in (0, 1) and "of this machine" in json.loads(r.stdout)["gpu"]
    else:
        assert r.returncode == 2 and "no NVIDIA GPU on this machine" in r.stderr
