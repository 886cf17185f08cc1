"""The driver's states each get their own finding and fix, judged against the real matrix, with
the PCI bus known to hold NVIDIA GPUs, known to hold none, or not known (facts without pci_gpus)."""
from __future__ import annotations

import pytest

from envcheck.matrix.load import load_matrix
from envcheck.model import ERROR, INFO, WARNING
from envcheck.rules import evaluate
from tests.conftest import REPO

A100 = {"bus_id": "0000:07:00.0", "device_id": "20b2", "name": "NVIDIA A100-SXM4-80GB"}
UNKNOWN = object()  # no pci_gpus key at all


@pytest.fixture(scope="module")
def m():
    return load_matrix(REPO / "compat_matrix.yaml")


def facts(state, pci=UNKNOWN, **driver):
    d = {"version": None, "source": None, "cuda": None, "error": "no NVIDIA driver found: …", "raw": None,
         "userspace": None, "state": state}
    d.update(driver)
    f = {"schema": 1, "origin": "probe", "driver": d, "gpus": []}
    if pci is not UNKNOWN:
        f["pci_gpus"] = pci
    return f


def driver_findings(m, f):
    return [x for x in evaluate(f, m) if x.component == "driver"]


USERSPACE = {"version": "535.261.03", "source": "library-file",
             "library": "/usr/lib/x86_64-linux-gnu/nvidia/current/libnvidia-ml.so.535.261.03"}


@pytest.mark.parametrize("pci, severity", [([A100, A100], ERROR), ([], WARNING), (UNKNOWN, WARNING)],
                         ids=["gpus-on-the-bus", "no-gpu-on-the-bus", "bus-unknown"])
def test_userspace_without_a_loaded_module_names_the_version_and_the_dkms_fix(m, pci, severity):
    (d,) = driver_findings(m, facts("module-not-loaded", pci, userspace=USERSPACE))
    assert (d.severity, d.code) == (severity, "driver-module-not-loaded")
    assert d.message.startswith("NVIDIA driver 535.261.03 userspace installed, kernel module not loaded")
    assert "dkms status" in d.fix and "modprobe nvidia" in d.fix and "reboot" in d.fix
    assert d.source.startswith("https://")
    assert ("2 NVIDIA GPUs (NVIDIA A100-SXM4-80GB)" in d.message) == (pci == [A100, A100])


def test_a_module_and_userspace_of_different_versions_is_an_error_with_both_versions(m):
    f = facts("mismatch", userspace=USERSPACE, kernel_module="550.54.15", version="550.54.15", source="proc")
    (d,) = [x for x in driver_findings(m, f) if x.code == "driver-version-mismatch"]
    assert d.severity == ERROR
    assert "installed userspace is 535.261.03, the loaded kernel module 550.54.15" in d.message
    assert "Driver/library version mismatch" in d.message and d.fix.startswith("reboot")
    assert not [x for x in driver_findings(m, f) if x.code in ("driver-not-found", "driver-module-not-loaded")]


@pytest.mark.parametrize("pci, severity", [([A100], ERROR), ([], INFO)], ids=["gpu-on-the-bus", "cpu-machine"])
def test_no_userspace_is_an_error_beside_a_gpu_and_a_note_on_a_cpu_machine(m, pci, severity):
    (d,) = driver_findings(m, facts("no-userspace", pci))
    assert (d.severity, d.code) == (severity, "driver-not-found")


def test_no_userspace_on_an_unknown_bus_is_the_warning_it_always_was(m):
    f = facts("no-userspace", error="no NVIDIA driver found: nvidia-smi not found")
    old = facts(None, error="no NVIDIA driver found: nvidia-smi not found")
    del old["driver"]["state"], old["driver"]["userspace"]
    (new_d,) = driver_findings(m, f)
    (old_d,) = driver_findings(m, old)
    assert new_d == old_d and new_d.severity == WARNING and new_d.code == "driver-not-found"
    assert new_d.message.startswith("No NVIDIA driver found (nvidia-smi not found).")


def test_a_working_driver_has_no_state_finding(m):
    f = facts("working", [A100], version="535.261.03", source="nvml-ctypes", cuda="12.2", error=None,
              userspace=USERSPACE)
    assert [x.code for x in driver_findings(m, f)] == []
