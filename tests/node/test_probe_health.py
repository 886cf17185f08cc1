"""The probe's health part: Xid lines of real kernel logs (tests/fixtures/kmsg/, sources in
SOURCES.md), a sysfs PCI tree in a temp dir, and NVML's health calls against the stand-in
libnvidia-ml (tests/cluster/fake_nvml.c) through both pynvml and ctypes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.node.probe_helpers import FIXTURES, PROBE, load_probe

probe = load_probe()
KMSG = FIXTURES / "kmsg"
FAKE_NVML = Path(__file__).resolve().parent.parent / "cluster" / "fake_nvml.c"


def xids(name):
    return [(e["xid"], e["pci"], e["count"]) for e in probe.parse_xids((KMSG / name).read_text())["events"]]


@pytest.mark.parametrize("name, want", [
    ("xid79.kmsg", [(79, "0000:2b:00", 1)]),
    ("xid79-pid.dmesg", [(79, "0000:10:00", 1)]),
    ("xid48-64.dmesg", [(48, "0000:07:00", 1), (64, "0000:07:00", 1)]),
    ("xid13-109.dmesg", [(13, "0000:cb:00", 3), (109, "0000:cb:00", 1)]),
    ("xid31.dmesg", [(69, "0000:08:00", 1), (31, "0000:08:00", 1)]),
    ("xid13-legacy.dmesg", [(13, "0000:01:00", 2)]),
    ("xid63.dmesg", [(63, "0000:10:1c", 1)]),
    ("xid119-94.dmesg", [(119, "0002:00:00", 1), (94, "0002:00:00", 1)]),
    ("xid45.dmesg", [(45, "0000:dc:00", 1), (45, "0000:ed:00", 1)]),
    ("fallen-no-xid.kmsg", [(79, "0000:b3:00", 1)]),
    ("clean.kmsg", []),
])
def test_xid_lines_of_real_kernel_logs_are_counted_per_code_and_gpu(name, want):
    assert xids(name) == want


def test_a_fallen_gpu_with_its_own_xid_79_line_is_not_counted_twice():
    assert xids("xid79.kmsg") == [(79, "0000:2b:00", 1)]  # the log also says "GPU ... has fallen off the bus"


def test_the_kept_text_is_the_nvrm_line_without_its_log_prefix():
    [e] = probe.parse_xids((KMSG / "xid79-pid.dmesg").read_text())["events"]
    assert e["first"] == "NVRM: Xid (PCI:0000:10:00): 79, pid=0, GPU has fallen off the bus."


def test_each_event_carries_when_it_was_logged_in_seconds_since_boot():
    # a /dev/kmsg record's microseconds; dmesg's and journalctl -o short-monotonic's [s.us]
    [e] = probe.parse_xids((KMSG / "xid79.kmsg").read_text())["events"]
    assert (e["first_s"], e["last_s"]) == (71237.45602, 71237.45602)
    text = ("[ 5.000001] NVRM: Xid (PCI:0000:07:00): 48, first\n"
            "[ 912.5] NVRM: Xid (PCI:0000:07:00): 48, again\n")
    [e] = probe.parse_xids(text)["events"]
    assert (e["count"], e["first_s"], e["last_s"]) == (2, 5.000001, 912.5)
    [e] = probe.parse_xids((KMSG / "xid79-pid.dmesg").read_text())["events"]   # wall-clock syslog: unknown
    assert e["last_s"] is None
    [e] = probe.parse_xids((KMSG / "fallen-no-xid.kmsg").read_text())["events"]
    assert isinstance(e["last_s"], float)


def test_compute_apps_csv_with_commas_in_names_and_na_memory():
    got = probe.parse_compute_apps("1234, /usr/bin/python3, 4580, 00000000:07:00.0\n"
                                   "77, python, train,x, [N/A], 00000000:0F:00.0\nNo running processes found\n")
    assert got == [{"pid": 1234, "name": "/usr/bin/python3", "memory_mib": 4580, "gpu": "00000000:07:00.0"},
                   {"pid": 77, "name": "python, train,x", "memory_mib": None, "gpu": "00000000:0F:00.0"}]


def test_a_process_belongs_to_the_slurm_job_its_environment_or_cgroup_names(tmp_path):
    (tmp_path / "10").mkdir()
    (tmp_path / "10" / "environ").write_bytes(b"PATH=/bin\0SLURM_JOB_ID=812\0")
    (tmp_path / "11").mkdir()
    (tmp_path / "11" / "environ").write_bytes(b"PATH=/bin\0")
    (tmp_path / "11" / "cgroup").write_text("0::/system.slice/slurmstepd.scope/job_77/step_0/user/task_0\n")
    (tmp_path / "12").mkdir()
    (tmp_path / "12" / "cgroup").write_text("0::/user.slice\n")
    assert [probe.slurm_job(p, str(tmp_path)) for p in (10, 11, 12, 13)] == ["812", "77", None, None]


def test_a_flood_of_distinct_xids_is_capped_and_counted():
    text = "\n".join("NVRM: Xid (PCI:0000:%02x:00): 13, x" % (i % 256) + (" %d" % i) for i in range(300))
    text += "\n" + "\n".join("NVRM: Xid (PCI:0000:00:00): %d, y" % c for c in range(1, 200))
    out = probe.parse_xids(text)
    assert len(out["events"]) == probe.MAX_EVENTS and out["dropped"] > 0


def test_kmsg_reader_takes_a_plain_file_and_says_none_for_what_it_cannot_open(tmp_path):
    f = tmp_path / "kmsg"
    f.write_text((KMSG / "xid79.kmsg").read_text())
    assert "Xid (PCI:0000:2b:00): 79" in probe.kmsg_text(str(f))
    assert probe.kmsg_text(str(tmp_path / "absent")) is None


def _dev(root, addr, vendor="0x10de", cls="0x030200", **link):
    d = root / addr
    d.mkdir(parents=True)
    (d / "vendor").write_text(vendor + "\n")
    (d / "class").write_text(cls + "\n")
    (d / "device").write_text("0x2330\n")
    for k, v in link.items():
        (d / k).write_text("%s\n" % v)


def test_pci_scan_lists_nvidia_gpus_with_their_links_and_skips_everything_else(tmp_path):
    _dev(tmp_path, "0000:17:00.0", current_link_speed="32.0 GT/s PCIe", max_link_speed="32.0 GT/s PCIe",
         current_link_width=8, max_link_width=16)
    _dev(tmp_path, "0000:17:00.1", cls="0x040300")            # the GPU's HDMI audio function
    _dev(tmp_path, "0000:05:00.0", cls="0x068000")            # an NVSwitch (bridge class)
    _dev(tmp_path, "0000:3b:00.0", vendor="0x15b3", cls="0x020700")  # a ConnectX HCA
    _dev(tmp_path, "0000:9a:00.0")                            # a GPU whose link files are unreadable
    got = probe.pci_gpus(str(tmp_path))
    assert [d["address"] for d in got] == ["0000:17:00.0", "0000:9a:00.0"]
    assert got[0]["link"] == {"speed": "32.0 GT/s PCIe", "width": 8, "max_speed": "32.0 GT/s PCIe", "max_width": 16}
    assert got[1]["link"] == {"speed": None, "width": None, "max_speed": None, "max_width": None}


@pytest.fixture(scope="module")
def nvml_lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("nvml")
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-Wno-format-truncation", "-o",
                    str(d / "libnvidia-ml.so.1"), str(FAKE_NVML)], check=True, capture_output=True, timeout=120)
    (d / "nvml.conf").write_text(
        "driver=535.104.05\ncuda=12020\n"
        "gpu=NVIDIA A100-SXM4-80GB|81920|8.0|GPU-a|00000000:07:00.0\n"
        "gpu=NVIDIA A100-SXM4-80GB|81920|8.0|GPU-b|00000000:17:00.0\n"
        "gpu=Tesla V100-SXM2-16GB|16160|7.0|GPU-c|00000000:27:00.0\n"
        "health=1|ecc_vol_unc=2,ecc_agg_unc=7,remap_pending=1,remap_unc=3,throttle=0x48,temp=88,persist=0,mig=1,compute=3\n")
    return d


def _probe_with_nvml(lib: Path, use_pynvml: bool):
    env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": str(lib), "ENVCHECK_SIM_NVML": str(lib / "nvml.conf")}
    if not use_pynvml:  # the system python3 of a node: no nvidia-ml-py, so ctypes
        env["PYTHONNOUSERSITE"] = "1"
        cmd = [sys.executable, "-S", str(PROBE)]
    else:
        pytest.importorskip("pynvml")
        cmd = [sys.executable, str(PROBE)]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("use_pynvml", [True, False], ids=["pynvml", "ctypes"])
def test_nvml_health_of_each_gpu_is_read_in_the_driver_session(nvml_lib, use_pynvml):
    facts = _probe_with_nvml(nvml_lib, use_pynvml)
    assert facts["driver"]["source"] == ("nvml" if use_pynvml else "nvml-ctypes")
    healthy, sick, volta = (g["health"] for g in facts["gpus"])
    assert healthy["ecc"] == {"volatile_uncorrected": 0, "aggregate_uncorrected": 0, "volatile_corrected": 0}
    assert healthy["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0}
    assert (healthy["throttle_reasons"], healthy["persistence_mode"], healthy["mig_mode"]) == (1, 1, 0)
    assert sick["ecc"]["volatile_uncorrected"] == 2 and sick["ecc"]["aggregate_uncorrected"] == 7
    assert sick["remapped_rows"] == {"correctable": 0, "uncorrectable": 3, "pending": 1, "failure": 0}
    assert (sick["throttle_reasons"], sick["temperature_c"], sick["slowdown_temperature_c"]) == (0x48, 88, 90)
    assert (sick["persistence_mode"], sick["mig_mode"], sick["compute_mode"]) == (0, 1, 3)
    # Volta: no row remapping and no MIG, which is unknown, not healthy and not broken
    assert volta["remapped_rows"] is None and volta["mig_mode"] is None and volta["ecc_mode"] == 1
    assert not [e for e in facts["errors"] if "health" in e]


def test_the_health_section_and_its_cost_are_in_every_probe_document(nvml_lib):
    facts = _probe_with_nvml(nvml_lib, False)
    assert set(facts["health"]) >= {"pci", "kernel_log", "seconds"}
    assert facts["health"]["seconds"] < 1.0


def test_ib_ports_are_read_per_device_and_port_in_numeric_order(tmp_path):
    for dev, port, state, rate, layer in [("mlx5_0", "1", "4: ACTIVE", "400 Gb/sec (4X NDR)", "InfiniBand"),
                                          ("mlx5_1", "2", "1: DOWN", "10 Gb/sec (4X SDR)", "InfiniBand"),
                                          ("mlx5_1", "10", "4: ACTIVE", "200 Gb/sec (2X NDR)", "Ethernet")]:
        d = tmp_path / dev / "ports" / port
        d.mkdir(parents=True)
        for k, v in (("state", state), ("phys_state", "5: LinkUp"), ("rate", rate), ("link_layer", layer)):
            (d / k).write_text(v + "\n")
    got = probe.ib_ports(str(tmp_path))
    assert [(p["device"], p["port"], p["state"]) for p in got] == [
        ("mlx5_0", 1, "4: ACTIVE"), ("mlx5_1", 2, "1: DOWN"), ("mlx5_1", 10, "4: ACTIVE")]
    assert got[0]["rate"] == "400 Gb/sec (4X NDR)" and got[2]["link_layer"] == "Ethernet"
    assert probe.ib_ports(str(tmp_path / "absent")) == []


def test_nvswitches_are_counted_from_the_bus(tmp_path):
    _dev(tmp_path, "0000:05:00.0", cls="0x068000")
    _dev(tmp_path, "0000:06:00.0", cls="0x068000")
    _dev(tmp_path, "0000:07:00.0")
    _dev(tmp_path, "0000:08:00.0", vendor="0x8086", cls="0x068000")
    assert probe.nvidia_switches(str(tmp_path)) == 2


def test_nvlink_state_per_gpu_through_nvml(tmp_path):
    d = tmp_path / "nvml"
    d.mkdir()
    subprocess.run(["gcc", "-shared", "-fPIC", "-O0", "-Wno-format-truncation", "-o", str(d / "libnvidia-ml.so.1"),
                    str(FAKE_NVML)], check=True, capture_output=True, timeout=120)
    (d / "nvml.conf").write_text(
        "driver=535.104.05\ncuda=12020\n"
        "gpu=NVIDIA H100 80GB HBM3|81559|9.0|GPU-a|00000000:07:00.0\n"
        "gpu=NVIDIA H100 80GB HBM3|81559|9.0|GPU-b|00000000:17:00.0\n"
        "gpu=NVIDIA H100 PCIe|81559|9.0|GPU-c|00000000:27:00.0\n"
        "health=0|nvlinks=18\nhealth=1|nvlinks=18,nvlink_down=0x801\n")
    facts = _probe_with_nvml(d, use_pynvml=False)
    links = [g["health"]["nvlink"] for g in facts["gpus"]]
    assert links == [{"up": 18, "down": []}, {"up": 16, "down": [0, 11]}, None]
