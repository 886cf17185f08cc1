"""The probe's PCI part: NVIDIA display devices read from a sysfs tree, the state of a node
before any driver is installed."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.node.probe_helpers import PROBE, load_probe

probe = load_probe()


def _device(root, addr, vendor, device, cls):
    d = root / addr
    d.mkdir(parents=True)
    for name, value in (("vendor", vendor), ("device", device), ("class", cls)):
        (d / name).write_text(value + "\n")   # as the kernel writes them: 0x-prefixed, newline


def test_nvidia_vga_and_3d_controllers_are_listed_and_their_audio_functions_are_not(tmp_path):
    _device(tmp_path, "0000:3b:00.0", "0x10de", "0x2330", "0x030200")   # H100: 3D controller
    _device(tmp_path, "0000:3b:00.1", "0x10de", "0x22ba", "0x040300")   # its HD-audio function
    _device(tmp_path, "0000:01:00.0", "0x10de", "0x2204", "0x030000")   # RTX 3090: VGA
    _device(tmp_path, "0000:00:02.0", "0x8086", "0x46a6", "0x030000")   # Intel iGPU: not NVIDIA
    (tmp_path / "0000:00:1f.0").mkdir()                                 # unreadable: no files
    assert probe.collect_pci_gpus(None, root=str(tmp_path)) == [
        {"address": "0000:01:00.0", "vendor_id": "0x10de", "device_id": "0x2204", "class": "0x030000"},
        {"address": "0000:3b:00.0", "vendor_id": "0x10de", "device_id": "0x2330", "class": "0x030200"},
    ]


def test_a_machine_whose_sysfs_cannot_be_read_has_pci_gpus_not_known_rather_than_none(tmp_path):
    assert probe.collect_pci_gpus(None, root=str(tmp_path / "absent")) is None
    (tmp_path / "empty").mkdir()
    assert probe.collect_pci_gpus(None, root=str(tmp_path / "empty")) == []


def test_the_shipped_probe_prints_pci_gpus_as_a_list():
    out = subprocess.run([sys.executable, str(PROBE)], capture_output=True, text=True, timeout=120)
    facts = json.loads(out.stdout)
    assert isinstance(facts["pci_gpus"], list)
    assert all(g["vendor_id"] == "0x10de" and g["class"].startswith("0x03") for g in facts["pci_gpus"])


def test_the_gpu_list_and_the_health_part_share_one_pass_over_the_bus(tmp_path):
    _device(tmp_path, "0000:3b:00.0", "0x10de", "0x2330", "0x030200")   # H100
    _device(tmp_path, "0000:3b:00.1", "0x10de", "0x22ba", "0x040300")   # its HD-audio function
    _device(tmp_path, "0000:05:00.0", "0x10de", "0x22a3", "0x068000")   # an NVSwitch
    (tmp_path / "0000:3b:00.0" / "current_link_width").write_text("16\n")
    listed = probe.collect_pci_gpus(None, root=str(tmp_path))
    for d in list(tmp_path.iterdir()):   # the bus "changes" after the first section read it...
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    gpus, switches = probe.pci_scan(str(tmp_path))   # ...and the health part still sees that read
    assert [g["address"] for g in gpus] == [g["address"] for g in listed] == ["0000:3b:00.0"]
    assert [dict((k, v) for k, v in g.items() if k != "link") for g in gpus] == listed
    assert gpus[0]["link"]["width"] == 16 and switches == 1
