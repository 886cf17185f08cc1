"""The driver's states each get their own finding and fix, judged against the real matrix, with
the PCI bus known to hold NVIDIA GPUs, known to hold none, or not known (facts without pci_gpus)."""
from __future__ import annotations

import pytest

from envcheck.model import ERROR, INFO, WARNING
from envcheck.rules import evaluate

A100 = {"bus_id": "0000:07:00.0", "device_id": "20b2", "name": "NVIDIA A100-SXM4-80GB"}
UNKNOWN = object()  # no pci_gpus key at all


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


# ---- each state's finding whole, the rule called alone (each seen to fail on a planted change:
# bench/mutation.py): the GPUs on the bus by name (each once, sorted) and address, one GPU or several

from envcheck.rules import driver_state as ds  # noqa: E402

INSTALL = "https://docs.nvidia.com/datacenter/tesla/driver-installation-guide/index.html"
MISMATCH = "https://github.com/cpnr/computing/issues/109"
SAYS = ("NVML says 'Driver Not Loaded' and nvidia-smi 'couldn't communicate with the NVIDIA driver'; "
        "torch.cuda.is_available() is False and CUDA programs fail.")
BUS = [{"name": "NVIDIA H100 80GB HBM3", "address": "0000:0f:00.0"},
       {"name": "NVIDIA A100-SXM4-80GB", "address": "0000:07:00.0"}, {"name": "NVIDIA A100-SXM4-80GB"}]


def whole(findings):
    return [(x.severity, x.code, x.component, x.message, x.fix, x.source) for x in findings]


def state(name, pci=UNKNOWN, **driver):
    f = {"schema": 1, "driver": {"state": name, **driver}}
    if pci is not UNKNOWN:
        f["pci_gpus"] = pci
    return f


def test_module_not_loaded_whole_with_the_gpus_on_the_bus_by_name_and_address(m):
    f = state("module-not-loaded", BUS, userspace={"version": "535.261.03"})
    assert whole(ds.module_not_loaded(f, m)) == [(
        ERROR, "driver-module-not-loaded", "driver",
        f"NVIDIA driver 535.261.03 userspace installed, kernel module not loaded: {SAYS} The PCI bus has 3 NVIDIA "
        "GPUs (NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3) at 0000:0f:00.0, 0000:07:00.0.", ds.MODULE_FIX, INSTALL)]


def test_module_not_loaded_whole_on_a_cpu_machine_and_of_an_unknown_version(m):
    assert whole(ds.module_not_loaded(state("module-not-loaded", []), m)) == [(
        WARNING, "driver-module-not-loaded", "driver",
        f"NVIDIA driver (version unknown) userspace installed, kernel module not loaded: {SAYS} No NVIDIA GPU is "
        "on the PCI bus: on a CPU machine the packages are merely unused.", ds.MODULE_FIX, INSTALL)]


@pytest.mark.parametrize("driver,versions", [
    ({"userspace": {"version": "535.261.03"}, "kernel_module": "550.54.15"},
     ": the installed userspace is 535.261.03, the loaded kernel module 550.54.15"),
    ({"userspace": {"version": "535.261.03"}}, ": the installed userspace is 535.261.03, the loaded kernel module "
     "of an unknown version"),
    ({"kernel_module": "550.54.15"}, ": the installed userspace is of an unknown version, the loaded kernel module "
     "550.54.15"),
    ({}, ""),
])
def test_a_mismatch_whole_with_what_is_known_of_either_version(m, driver, versions):
    assert whole(ds.version_mismatch(state("mismatch", [{"name": "X"}], **driver), m)) == [(
        ERROR, "driver-version-mismatch", "driver",
        f"NVIDIA driver/library version mismatch{versions}. nvidia-smi fails with 'Failed to initialize NVML: "
        "Driver/library version mismatch'; torch.cuda.is_available() is False and CUDA programs fail. The PCI bus "
        "has 1 NVIDIA GPU (X).", ds.MISMATCH_FIX, MISMATCH)]


def test_no_userspace_whole_beside_a_gpu_known_by_its_address_only_and_on_a_cpu_machine(m):
    assert whole(ds.no_userspace(state("no-userspace", [{"address": "0000:07:00.0"}]), m)) == [(
        ERROR, "driver-not-found", "driver",
        "No NVIDIA driver installed (no libnvidia-ml, no nvidia-smi, no kernel module), but the GPUs are there: "
        "The PCI bus has 1 NVIDIA GPU at 0000:07:00.0. torch.cuda.is_available() is False and CUDA programs fail "
        "('Found no NVIDIA driver on your system').",
        "install the NVIDIA driver for these GPUs (distribution packages or NVIDIA's repository), reboot, and check "
        "that `nvidia-smi` lists them", INSTALL)]
    assert whole(ds.no_userspace(state("no-userspace", []), m)) == [(
        INFO, "driver-not-found", "driver",
        "No NVIDIA driver and no NVIDIA GPU on the PCI bus: a CPU machine, nothing to fix.", "", INSTALL)]


@pytest.mark.parametrize("name,pci,handled", [
    ("module-not-loaded", UNKNOWN, True), ("mismatch", UNKNOWN, True), ("no-userspace", [], True),
    ("no-userspace", UNKNOWN, False), ("working", [], False), (None, [], False),
])
def test_which_states_these_rules_speak_for(name, pci, handled):
    assert ds.handled_here(state(name, pci)) is handled


def test_each_rule_keeps_quiet_in_the_other_states(m):
    for rule, mine in ((ds.module_not_loaded, "module-not-loaded"), (ds.version_mismatch, "mismatch"),
                       (ds.no_userspace, "no-userspace")):
        for other in ("module-not-loaded", "mismatch", "no-userspace", "working"):
            if other != mine:
                assert rule(state(other, BUS), m) == [], (rule.__name__, other)


def test_with_the_bus_unknown_the_message_says_nothing_of_it(m):
    assert whole(ds.module_not_loaded(state("module-not-loaded", userspace={"version": "535.261.03"}), m)) == [(
        WARNING, "driver-module-not-loaded", "driver",
        f"NVIDIA driver 535.261.03 userspace installed, kernel module not loaded: {SAYS}", ds.MODULE_FIX, INSTALL)]
