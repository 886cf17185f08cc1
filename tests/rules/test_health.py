"""Hardware health rules over facts shaped as the probe writes them: each fault gives the right
finding (code, severity, the GPU named, a fix), a healthy node gives none, and a node the probe
could not look at is not judged."""
from __future__ import annotations

import copy

import pytest

from envcheck.matrix.load import load_matrix
from envcheck.model import ERROR, INFO, WARNING, Finding
from envcheck.rules import evaluate, health

M = load_matrix()

GOOD_LINK = {"speed": "16.0 GT/s PCIe", "max_speed": "16.0 GT/s PCIe", "width": 16, "max_width": 16}
GOOD_HEALTH = {"ecc_mode": 1, "ecc": {"volatile_uncorrected": 0, "aggregate_uncorrected": 0, "volatile_corrected": 3},
               "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0},
               "retired_pages_pending": 0, "throttle_reasons": 0x1, "temperature_c": 38,
               "slowdown_temperature_c": 90, "persistence_mode": 1, "mig_mode": 0, "compute_mode": 0}


def node(n=4, **tweak):
    """A healthy A100 node with n GPUs at 0000:07:00.0, 0000:17:00.0, ..."""
    addrs = ["0000:%02x:00.0" % (0x07 + 0x10 * i) for i in range(n)]
    f = {"schema": 1, "origin": "probe", "driver": {"version": "535.104.05", "source": "nvml"},
         "gpus": [{"index": i, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0",
                   "pci_bus_id": "0000" + a.upper(), "health": copy.deepcopy(GOOD_HEALTH)}
                  for i, a in enumerate(addrs)],
         "health": {"pci": [{"address": a, "vendor_id": "0x10de", "device_id": "0x20b2", "class": "0x030200",
                             "link": dict(GOOD_LINK)} for a in addrs],
                    "kernel_log": {"source": "/dev/kmsg", "events": [], "dropped": 0}}}
    return f


def findings(f):
    return [x for x in evaluate(f, M) if x.component == "health"]


def test_a_healthy_node_has_no_health_findings():
    assert findings(node()) == []


def test_a_gpu_on_the_bus_but_not_in_nvml_is_an_error_naming_its_address():
    f = node()
    del f["gpus"][2]
    [x] = findings(f)
    assert (x.severity, x.code) == (ERROR, "gpu-missing-from-driver")
    assert "0000:27:00.0" in x.message and "3 listed" in x.message and "Xid 79" in x.message
    assert "power-cycle" in x.fix and x.source


def test_inside_a_container_given_some_gpus_the_others_are_not_called_missing():
    f = node()
    f["gpus"] = f["gpus"][:2]
    f["env"] = {"NVIDIA_VISIBLE_DEVICES": "GPU-a,GPU-b"}
    [x] = findings(f)
    assert (x.code, x.severity) == ("gpu-count-container", INFO) and "2 of the 4" in x.message
    f["env"] = {"NVIDIA_VISIBLE_DEVICES": "all"}   # given every GPU: a missing one is missing
    assert [x.code for x in findings(f)] == ["gpu-missing-from-driver"]


def test_the_gpu_identification_list_is_preferred_when_the_probe_has_it():
    f = node(2)
    f["pci_gpus"] = f["health"]["pci"] + [{"address": "0000:99:00.0", "vendor_id": "0x10de",
                                           "device_id": "0x2330", "class": "0x030200"}]
    [x] = findings(f)
    assert "0000:99:00.0 (10de:2330)" in x.message


def _driver_findings(f):
    return [x for x in evaluate(f, M) if x.code.startswith(("driver-", "gpu-driver", "gpu-missing"))]


def test_gpus_on_the_bus_with_no_driver_answering_are_one_error_even_where_no_driver_would_only_warn():
    f = node()
    f["driver"] = {"version": None, "error": "no NVIDIA driver found: NVML: Driver Not Loaded"}
    f["gpus"] = []
    assert findings(f) == []   # the health rules defer: the driver rules own "no working driver"
    [x] = _driver_findings(f)
    assert (x.code, x.component, x.severity) == ("driver-not-found", "driver", ERROR)
    assert "4 NVIDIA GPU(s) on the PCI bus (0000:07:00.0, 0000:17:00.0" in x.message and "Driver Not Loaded" in x.message
    assert "modprobe nvidia" in x.fix
    f["health"]["pci"] = []  # a CPU node: the driver rules' warning is all
    assert findings(f) == []
    assert [(x.code, x.severity) for x in _driver_findings(f)] == [("driver-not-found", WARNING)]


@pytest.mark.parametrize("state, code", [("module-not-loaded", "driver-module-not-loaded"),
                                         ("no-userspace", "driver-not-found"),
                                         ("mismatch", "driver-version-mismatch")])
def test_a_driver_state_told_apart_is_one_finding_with_its_own_fix_and_no_health_finding(state, code):
    f = node()
    f["driver"] = {"version": "535.104.05" if state == "mismatch" else None, "source": "proc" if state == "mismatch" else None,
                   "state": state, "userspace": {"version": "550.54.15"} if state != "no-userspace" else {},
                   "kernel_module": "535.104.05" if state == "mismatch" else None,
                   "error": "no NVIDIA driver found: NVML: Driver Not Loaded"}
    f["gpus"] = []
    assert findings(f) == []
    [x] = _driver_findings(f)
    assert (x.code, x.severity) == (code, ERROR)
    assert "0000:07:00.0, 0000:17:00.0" in x.message   # the GPUs the driver leaves unusable, by address


def test_uncorrectable_ecc_since_driver_load_fails_and_lifetime_history_warns():
    f = node()
    f["gpus"][1]["health"]["ecc"]["volatile_uncorrected"] = 2
    f["gpus"][3]["health"]["ecc"]["aggregate_uncorrected"] = 5
    got = {(x.code, x.severity) for x in findings(f)}
    assert got == {("gpu-ecc-uncorrectable", ERROR), ("gpu-ecc-uncorrectable-history", WARNING)}
    [err] = [x for x in findings(f) if x.severity == ERROR]
    assert "GPU 1 (0000:17:00)" in err.message and "nvidia-smi -r -i 1" in err.fix
    assert "azurehpc-health-checks" in err.source


@pytest.mark.parametrize("rows, code", [
    ({"pending": 1}, "gpu-row-remap-pending"),
    ({"failure": 1}, "gpu-row-remap-failed"),
    ({"uncorrectable": 513}, "gpu-row-remap-exhausting"),
])
def test_row_remapping_state_the_anchors_fail_on(rows, code):
    f = node()
    f["gpus"][0]["health"]["remapped_rows"].update(rows)
    assert [(x.code, x.severity) for x in findings(f)] == [(code, ERROR)]


def test_512_remapped_rows_is_still_within_azures_threshold():
    f = node()
    f["gpus"][0]["health"]["remapped_rows"]["uncorrectable"] = 512
    assert findings(f) == []


def test_a_page_pending_retirement_on_an_older_gpu_fails():
    f = node()
    f["gpus"][0]["health"]["remapped_rows"] = None  # Volta: no row remapping
    f["gpus"][0]["health"]["retired_pages_pending"] = 1
    assert [x.code for x in findings(f)] == ["gpu-page-retirement-pending"]


def _xid(code, pci="0000:07:00", count=1, text=None):
    return {"xid": code, "pci": pci, "count": count, "first": text or f"NVRM: Xid (PCI:{pci}): {code}, x",
            "last": text or f"NVRM: Xid (PCI:{pci}): {code}, x"}


@pytest.mark.parametrize("code, severity", [(79, ERROR), (48, ERROR), (95, ERROR), (119, ERROR), (74, ERROR),
                                            (13, WARNING), (31, WARNING), (94, WARNING), (63, INFO), (45, INFO)])
def test_xids_are_judged_by_nvidias_resolution_bucket(code, severity):
    f = node()
    f["health"]["kernel_log"]["events"] = [_xid(code, count=3)]
    [x] = findings(f)
    assert (x.code, x.severity) == (f"xid-{code}", severity)
    assert "0000:07:00 x3" in x.message and "xid-errors" in x.source and x.fix


def test_xid_79_names_the_bus_fault_and_the_cold_reboot():
    f = node()
    f["health"]["kernel_log"]["events"] = [_xid(79, "0000:2b:00", text="NVRM: Xid (PCI:0000:2b:00): 79, GPU has fallen off the bus.")]
    [x] = findings(f)
    assert "GPU has fallen off the bus" in x.message and "RESTART_BM" in x.message
    assert "power-cycle" in x.fix


def test_an_xid_the_catalogue_copy_lacks_warns_and_says_where_to_look():
    f = node()
    f["health"]["kernel_log"]["events"] = [_xid(109)]
    [x] = findings(f)
    assert (x.code, x.severity) == ("xid-109", WARNING) and "catalogue" in x.fix


def test_an_unreadable_kernel_log_is_said_not_silently_passed():
    f = node()
    f["health"]["kernel_log"] = {"source": None, "events": [], "error": "/dev/kmsg: not readable; dmesg: Operation not permitted"}
    [x] = findings(f)
    assert (x.code, x.severity) == ("xid-log-unreadable", INFO) and "dmesg_restrict" in x.fix


def test_a_gpu_at_x8_of_x16_is_a_warning_naming_its_address():
    f = node()
    f["health"]["pci"][1]["link"].update(width=8)
    [x] = findings(f)
    assert (x.code, x.severity) == ("pcie-link-width-degraded", WARNING)
    assert "0000:17:00.0" in x.message and "x8 of x16" in x.message and "50%" in x.message


def test_an_idle_gpu_below_its_max_link_speed_is_power_saving_not_a_fault():
    f = node()
    f["health"]["pci"][0]["link"].update(speed="2.5 GT/s PCIe")
    assert findings(f) == []
    f["gpus"][0]["health"]["throttle_reasons"] = 0x0  # busy
    [x] = findings(f)
    assert x.code == "pcie-link-speed-degraded" and "2.5 GT/s PCIe of 16.0 GT/s PCIe" in x.message


def test_hardware_slowdown_and_power_brake_throttling_warn_but_idle_and_power_cap_do_not():
    f = node()
    f["gpus"][0]["health"]["throttle_reasons"] = 0x1 | 0x4
    assert findings(f) == []
    f["gpus"][0]["health"]["throttle_reasons"] = 0x8 | 0x80
    [x] = findings(f)
    assert x.code == "gpu-throttled" and "hw_slowdown, hw_power_brake_slowdown" in x.message


def test_modes_and_temperature():
    f = node()
    h = f["gpus"][0]["health"]
    h.update(persistence_mode=0, mig_mode=1, compute_mode=2, temperature_c=87)
    got = {(x.code, x.severity) for x in findings(f)}
    assert got == {("gpu-persistence-off", WARNING), ("gpu-mig-enabled", WARNING),
                   ("gpu-compute-prohibited", ERROR), ("gpu-near-slowdown-temperature", WARNING)}


def test_facts_without_health_are_not_judged():
    f = node()
    del f["health"]
    for g in f["gpus"]:
        del g["health"]
    assert findings(f) == []


@pytest.mark.parametrize("raw, want", [("00000000:07:00.0", "0000:07:00"), ("0000:2B:00", "0000:2b:00"),
                                       ("0002:00:00", "0002:00:00"), ("07:00.0", "0000:07:00"), ("junk", None)])
def test_pci_addresses_of_nvml_sysfs_and_xid_lines_compare_equal(raw, want):
    assert health.bdf(raw) == want


def test_every_catalogue_row_names_a_known_action_and_severity():
    cat = health.catalog()
    for code, row in cat["xid"]["codes"].items():
        assert row["severity"] in health.SEVERITY, code
        assert row["action"] in cat["xid"]["actions"], code
    assert all(str(u).startswith("https://") for u in cat["sources"].values())


def test_the_fleet_comparison_names_the_node_whose_gpu_links_are_narrower_than_the_majoritys():
    from envcheck.rules.fleet import drift, fleet_findings
    hosts = {f"node0{i}": node() for i in range(1, 5)}
    hosts["node03"]["health"]["pci"][2]["link"].update(width=8)
    [row] = [r for r in drift(hosts) if r.key == "pcie_width"]
    assert row.values["node01"] == "4x x16" and row.values["node03"] == "3x x16, 1x x8"
    assert row.odd == ["node03"]
    [x] = [x for x in fleet_findings(hosts) if x.component == "health"]
    assert x.host == "node03" and x.severity == WARNING and "4x x16" in x.fix


def test_gpus_per_node_names_a_gpu_gone_from_the_bus_and_one_the_driver_lost():
    assert health.expected_gpus(node(8), 8) == []
    gone = node(7)                                   # the bus itself has only 7
    [x] = health.expected_gpus(gone, 8)
    assert (x.code, x.severity) == ("gpu-count-unexpected", ERROR)
    assert "Expected 8" in x.message and "PCI bus has 7" in x.message and "gone from the PCI bus" in x.message
    lost = node(8)
    del lost["gpus"][5]
    [x] = health.expected_gpus(lost, 8)
    assert "driver lists 7, the PCI bus has 8" in x.message and "driver lost a GPU" in x.message


def test_more_gpus_than_expected_is_a_warning_about_the_node_type():
    [x] = health.expected_gpus(node(8), 4)
    assert x.severity == WARNING and "--gpus-per-node" in x.fix


def test_gpus_per_node_without_any_gpu_facts_says_nothing():
    assert health.expected_gpus({"driver": {"version": None}, "gpus": []}, 8) == []


# --- what a user reads, whole (issue 24 item 8: the survivors of a mutmut run on rules/health.py) ---

AZURE_COUNT = "https://github.com/Azure/azurehpc-health-checks/blob/main/customTests/azure_gpu_count.nhc"
SHORT_FIX = (f"{health.DRAIN}; power-cycle it, and if the count stays short reseat the GPU or open a hardware ticket")
GONE = "a GPU is gone from the PCI bus entirely (fell off before the driver loaded, or a dead slot/riser)"
LOST = "the driver lost a GPU that is still on the bus"
MORE = "more GPUs than expected: the wrong node type, or a wrong --gpus-per-node"


def _sized(on_bus, listed, pci_read=True, driver=True):
    f = node(max(on_bus, listed))
    f["health"]["pci"] = f["health"]["pci"][:on_bus]
    f["gpus"] = f["gpus"][:listed]
    if not pci_read:
        del f["health"]["pci"]
    if not driver:
        f["driver"] = {"version": None, "error": "NVML: Driver Not Loaded"}
    return f


@pytest.mark.parametrize("facts, seen, where, short", [
    (_sized(7, 7), "the driver lists 7, the PCI bus has 7", GONE, True),
    (_sized(7, 8), "the driver lists 8, the PCI bus has 7", GONE, True),       # the bus short, the driver not
    (_sized(8, 7), "the driver lists 7, the PCI bus has 8", LOST, True),
    (_sized(8, 7, pci_read=False), "the driver lists 7", LOST, True),         # the bus not read
    (_sized(8, 0, driver=False), "the driver lists 0, the PCI bus has 8", LOST, True),  # no driver, the bus read
    (_sized(9, 8), "the driver lists 8, the PCI bus has 9", MORE, False),       # none short: a warning
    (_sized(9, 9), "the driver lists 9, the PCI bus has 9", MORE, False),
])
def test_gpus_per_node_findings_whole(facts, seen, where, short):
    tail = " A job sized for 8 GPUs per node fails here." if short else ""
    assert health.expected_gpus(facts, 8) == [Finding(
        ERROR if short else WARNING, "gpu-count-unexpected", "health",
        f"Expected 8 GPUs on this node; {seen}: {where}.{tail}",
        SHORT_FIX if short else "check the node type, or pass the right --gpus-per-node", AZURE_COUNT)]


def test_gpus_per_node_with_the_bus_unread_and_the_count_right_says_nothing():
    assert health.expected_gpus(_sized(8, 8, pci_read=False), 8) == []


@pytest.mark.parametrize("given", ["void", "none", " NONE ", "all"])
def test_a_container_given_no_gpu_or_all_of_them_still_calls_a_missing_gpu_missing(given):
    f = node()
    f["gpus"] = f["gpus"][:2]
    f["env"] = {"NVIDIA_VISIBLE_DEVICES": given}
    assert [(x.code, x.severity) for x in findings(f)] == [("gpu-missing-from-driver", ERROR)]


@pytest.mark.parametrize("raw, want", [("0000:2b:1f.0", "0000:2b:1f"),       # sysfs writes lower-case hex
                                       ("0010:3B:00.0", "0010:3b:00"),       # the domain is hex: 0x10
                                       ("000a:07:00.0", "000a:07:00"), ("0000:07:1F", "0000:07:1f")])
def test_pci_addresses_with_hex_letters_and_a_domain_compare_equal(raw, want):
    assert health.bdf(raw) == want


def test_a_gpu_without_index_or_bus_id_is_named_as_far_as_known():
    f = node(1)
    g = f["gpus"][0]
    del g["index"]
    g["health"]["persistence_mode"] = 0
    [x] = [x for x in findings(f) if x.code == "gpu-persistence-off"]
    assert x.message.startswith("GPU ? (0000:07:00) has persistence mode off")
    del g["pci_bus_id"]
    g["index"] = 0
    f["health"]["pci"] = []    # the bus not listed: nothing to match the GPU against
    [x] = [x for x in findings(f) if x.code == "gpu-persistence-off"]
    assert x.message.startswith("GPU 0 has persistence mode off")


def test_a_link_speed_sysfs_cannot_parse_is_not_judged():
    f = node()
    f["health"]["pci"][0]["link"].update(speed="Unknown")    # sysfs's word for a link it cannot read
    f["gpus"][0]["health"]["throttle_reasons"] = 0x0         # busy
    assert findings(f) == []


def test_a_slow_link_of_a_gpu_the_driver_does_not_list_is_not_also_called_busy():
    f = node()
    f["health"]["pci"][2]["link"].update(speed="2.5 GT/s PCIe")
    del f["gpus"][2]      # nothing says it is busy: only the missing GPU is reported
    assert [x.code for x in findings(f)] == ["gpu-missing-from-driver"]


def test_gpus_missing_from_the_driver_whole_with_an_id_sysfs_could_not_read():
    f = node()
    del f["gpus"][2:]
    del f["health"]["pci"][3]["device_id"]      # sysfs's device file unreadable
    del f["health"]["pci"][3]["vendor_id"]
    assert findings(f) == [Finding(
        ERROR, "gpu-missing-from-driver", "health",
        "2 of the 4 NVIDIA GPUs on the PCI bus are not visible to the driver (2 listed): 0000:27:00.0 (10de:20b2), "
        "0000:37:00.0 (10de:?). A GPU that fell off the bus (Xid 79) or failed to initialise; a job that asks for "
        "4 GPUs per node fails on this one, or NCCL hangs.",
        f"{health.DRAIN}; look for its address in `dmesg | grep NVRM`; power-cycle the node, and if the GPU "
        "stays missing reseat it or open a hardware ticket", AZURE_COUNT)]


def test_inside_a_container_the_info_whole():
    f = node()
    f["gpus"] = f["gpus"][:2]
    f["env"] = {"NVIDIA_VISIBLE_DEVICES": "GPU-a,GPU-b"}
    assert findings(f) == [Finding(
        INFO, "gpu-count-container", "health",
        "Inside a container given GPUs 'GPU-a,GPU-b': the driver lists 2 of the 4 GPUs on the host's PCI bus, "
        "as expected; GPUs lost by the host are checked outside it.",
        "run `envcheck doctor` on the host (or in a container given all GPUs) to check every GPU", AZURE_COUNT)]


def test_an_unreadable_kernel_log_whole():
    f = node()
    f["health"]["kernel_log"] = {"source": None, "events": [], "error": "/dev/kmsg: not readable"}
    assert findings(f) == [Finding(
        INFO, "xid-log-unreadable", "health",
        "The kernel log could not be read, so Xid errors were not checked (/dev/kmsg: not readable).",
        "run the probe as root, or allow it: sysctl kernel.dmesg_restrict=0",
        "https://docs.nvidia.com/deploy/xid-errors/working-with-xid-errors.html")]


def test_a_log_read_by_the_fallback_is_judged_though_the_first_source_failed():
    f = node()
    f["health"]["kernel_log"] = {"source": "dmesg", "error": "/dev/kmsg: not readable",
                                 "events": [_xid(79, count=3), _xid(79, "0000:2b:00")]}
    [x] = findings(f)
    assert x.code == "xid-79"
    assert " in the kernel log since boot on 0000:07:00 x3, 0000:2b:00 x1; " in x.message
    f["health"]["kernel_log"]["events"][1].pop("count")   # a line seen once carries no count
    [x] = findings(f)
    assert " on 0000:07:00 x3, 0000:2b:00 x1; " in x.message


def test_an_xid_quotes_its_last_line_or_else_its_first():
    f = node()
    e = _xid(13)
    e.update(first="NVRM: Xid (PCI:0000:07:00): 13, first", last="NVRM: Xid (PCI:0000:07:00): 13, last")
    f["health"]["kernel_log"]["events"] = [e]
    [x] = findings(f)
    assert x.message.endswith(" Last: 'NVRM: Xid (PCI:0000:07:00): 13, last'.")
    del e["last"]
    [x] = findings(f)
    assert x.message.endswith(" Last: 'NVRM: Xid (PCI:0000:07:00): 13, first'.")
    del e["first"]
    [x] = findings(f)
    assert x.message.endswith(" Last: ''.")


def test_an_unknown_xid_whole_and_the_known_one_after_it_still_judged():
    f = node()
    f["health"]["kernel_log"]["events"] = [_xid(119), _xid(109, text="NVRM: Xid (PCI:0000:07:00): 109, new")]
    by_code = {x.code: x for x in findings(f)}
    assert sorted(by_code) == ["xid-109", "xid-119"]
    assert by_code["xid-109"] == Finding(
        WARNING, "xid-109", "health",
        "Xid 109 in the kernel log since boot on 0000:07:00 x1: not in envcheck's copy of NVIDIA's catalogue. "
        "Last: 'NVRM: Xid (PCI:0000:07:00): 109, new'.",
        "look the code up in NVIDIA's Xid catalogue and follow its resolution bucket",
        "https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html")
    assert by_code["xid-119"].severity == ERROR


def test_throttling_whole():
    f = node()
    f["gpus"][0]["health"]["throttle_reasons"] = 0x8 | 0x80
    assert findings(f) == [Finding(
        WARNING, "gpu-throttled", "health",
        "GPU 0 (0000:07:00) is throttling its clocks (hw_slowdown, hw_power_brake_slowdown, reasons 0x88): it runs "
        "slower than its peers and every collective waits for it.",
        "check cooling, power supply and power cap (nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE)",
        "https://github.com/Azure/azurehpc-health-checks/blob/main/customTests/azure_gpu_clock_throttling.nhc")]


def test_a_slowdown_temperature_of_0_is_not_reported_and_not_judged():
    f = node()
    f["gpus"][0]["health"].update(slowdown_temperature_c=0, temperature_c=0)
    assert findings(f) == []


def test_modes_and_temperature_whole_on_the_gpu_they_concern():
    f = node()
    f["gpus"][2]["health"].update(persistence_mode=0, mig_mode=1, compute_mode=2, temperature_c=85)
    nvml = "https://docs.nvidia.com/deploy/nvml-api/group__nvmlDeviceQueries.html"
    assert sorted(findings(f), key=lambda x: x.code) == [
        Finding(ERROR, "gpu-compute-prohibited", "health",
                "GPU 2 (0000:27:00) is in compute mode PROHIBITED: no process can create a CUDA context on it.",
                "sudo nvidia-smi -i 2 -c DEFAULT", nvml),
        Finding(WARNING, "gpu-mig-enabled", "health",
                "GPU 2 (0000:27:00) has MIG mode enabled: a job sees MIG instances, not the whole GPU.",
                "disable it if the node is for whole-GPU training: sudo nvidia-smi -i 2 -mig 0",
                "https://docs.nvidia.com/datacenter/tesla/mig-user-guide/index.html"),
        Finding(WARNING, "gpu-near-slowdown-temperature", "health",
                "GPU 2 (0000:27:00) is at 85 C, within 5 C of its slowdown threshold 90 C: under load it will throttle.",
                "check the node's airflow/fans and inlet temperature", nvml),
        Finding(WARNING, "gpu-persistence-off", "health",
                "GPU 2 (0000:27:00) has persistence mode off: every process start re-initialises the GPU (seconds), "
                "and GPU state is lost between jobs.",
                "sudo nvidia-smi -pm 1 (or enable nvidia-persistenced)",
                "https://github.com/Azure/azurehpc-health-checks/blob/main/customTests/azure_gpu_persistence.nhc"),
    ]


def test_memory_findings_whole_name_the_gpu_to_reset():
    f = node()
    h = f["gpus"][2]["health"]
    h["ecc"]["aggregate_uncorrected"] = 4
    h["remapped_rows"]["pending"] = 1
    h["retired_pages_pending"] = 1
    remap = "https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/index.html"
    assert sorted(findings(f), key=lambda x: x.code) == [
        Finding(WARNING, "gpu-ecc-uncorrectable-history", "health",
                "GPU 2 (0000:27:00) has had 4 uncorrectable ECC error(s) over its life, none since the driver loaded: "
                "contained so far; watch the count.",
                "nothing now; if it grows, run `dcgmi diag -r 3` and open a hardware ticket", remap),
        Finding(ERROR, "gpu-page-retirement-pending", "health",
                "GPU 2 (0000:27:00): a page is pending retirement; it takes effect only after a GPU reset or reboot, "
                "until then the bad page can be handed to a job.",
                "reboot the node (or reset the GPU)",
                "https://docs.nvidia.com/deploy/dynamic-page-retirement/visibility.html"),
        Finding(ERROR, "gpu-row-remap-pending", "health",
                "GPU 2 (0000:27:00): a row remapping is pending; until the GPU is reset the bad row stays in use and "
                "jobs on it can hit uncorrectable errors.",
                "reset the GPU (nvidia-smi -r -i 2) or reboot the node", remap),
    ]
    h["ecc"]["volatile_uncorrected"] = 1
    [x] = [x for x in findings(f) if x.code == "gpu-ecc-uncorrectable"]
    assert x.fix == (f"{health.DRAIN}; reset the GPU (nvidia-smi -r -i 2) or reboot; if errors return or row "
                     "remapping failed, open a hardware ticket")


def test_pcie_findings_whole_and_an_x1_link_is_degraded():
    f = node()
    f["health"]["pci"][1]["link"].update(width=1)
    f["health"]["pci"][2]["link"].update(speed="8.0 GT/s PCIe")
    f["gpus"][2]["health"]["throttle_reasons"] = 0x0      # busy
    assert sorted(findings(f), key=lambda x: x.code) == [
        Finding(WARNING, "pcie-link-speed-degraded", "health",
                "GPU 0000:27:00.0 is busy but its PCIe link runs at 8.0 GT/s PCIe of 16.0 GT/s PCIe: transfers to it "
                "are slower than on its peers.",
                "check the BIOS PCIe generation setting and the riser/retimer; reseat the GPU; rerun `envcheck doctor`",
                "https://docs.nvidia.com/deploy/nvidia-smi/index.html"),
        Finding(WARNING, "pcie-link-width-degraded", "health",
                "GPU 0000:17:00.0 runs its PCIe link at x1 of x16 (16.0 GT/s PCIe): host<->GPU copies and GPUDirect "
                "RDMA get 6% of the bandwidth, and the whole job waits for this node.",
                "reseat the GPU (and its riser/cable), check the slot's bifurcation setting in the BIOS, then rerun "
                "`envcheck doctor`; if it stays degraded open a hardware ticket",
                "https://www.kernel.org/doc/Documentation/ABI/testing/sysfs-bus-pci"),
    ]


def test_a_gpu_without_an_index_is_named_to_nvidia_smi_by_its_bus_id_never_as_gpu_0():
    f = node(2)
    g = f["gpus"][1]
    del g["index"]
    g["health"].update(compute_mode=2, mig_mode=1, retired_pages_pending=0)
    g["health"]["ecc"]["volatile_uncorrected"] = 1
    g["health"]["remapped_rows"]["pending"] = 1
    fixes = {x.code: x.fix for x in findings(f)}
    assert fixes["gpu-compute-prohibited"] == "sudo nvidia-smi -i 00000000:17:00.0 -c DEFAULT"
    assert fixes["gpu-mig-enabled"].endswith("sudo nvidia-smi -i 00000000:17:00.0 -mig 0")
    assert fixes["gpu-row-remap-pending"] == "reset the GPU (nvidia-smi -r -i 00000000:17:00.0) or reboot the node"
    assert "(nvidia-smi -r -i 00000000:17:00.0) or reboot;" in fixes["gpu-ecc-uncorrectable"]
    del g["pci_bus_id"]
    assert {x.code: x.fix for x in findings(f)}["gpu-compute-prohibited"] == "sudo nvidia-smi -i <index> -c DEFAULT"
