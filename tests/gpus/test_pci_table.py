"""The PCI device table (tools/gen_pci_table.py over pci.ids at a pinned pciutils/pciids commit)
and how a device id on the bus becomes a board name and a compute capability."""
from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from envcheck.matrix import pci
from envcheck.matrix.gpus import chip_base
from envcheck.matrix.load import load_matrix

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
DEBIAN_IDS = Path("/usr/share/misc/pci.ids")


def _generator():
    spec = importlib.util.spec_from_file_location("gen_pci_table", ROOT / "tools" / "gen_pci_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def m():
    return load_matrix()


def test_the_generator_keeps_nvidia_gpus_and_drops_their_audio_usb_and_nvswitch_functions():
    text = (FIXTURES / "pci-ids" / "nvidia-excerpt.ids").read_text()
    rows = [l.split("\t") for l in _generator().render(text, None).splitlines() if not l.startswith("#")]
    assert rows == [
        ["0fc6", "GK107", "GeForce GTX 650"],
        ["1024", "GK180GL", "Tesla K40c"],
        ["102d", "GK210GL", "Tesla K80"],
        ["1287", "GK208B", "GeForce GT 730"],
        ["1db8", "GV100GL", "Tesla V100 SXM3 32GB"],
        ["1eb8", "TU104GL", "Tesla T4"],
        ["20b0", "GA100", "A100 SXM4 40GB"],
        ["2322", "GH100", "H800 PCIe"],
        ["2330", "GH100", "H100 SXM5 80GB"],   # "GH100[H100 SXM5 80GB]": no space in the database
        ["2684", "AD102", "GeForce RTX 4090"],
    ]


def test_the_table_header_records_which_database_it_came_from():
    text = (FIXTURES / "pci-ids" / "nvidia-excerpt.ids").read_text()
    head = _generator().render(text, package="0.0~2023.04.11-1").splitlines()
    assert "version 2023.04.10" in head[0] and "Debian package pci.ids 0.0~2023.04.11-1" in head[0]
    head = _generator().render(text, commit="c1c12547d626ebf05fd0223144ad87fab5e95d06", digest="ab12").splitlines()
    assert "pciutils/pciids c1c12547d626" in head[0]
    assert "https://github.com/pciutils/pciids/blob/c1c12547d626ebf05fd0223144ad87fab5e95d06/pci.ids" in head[1]
    assert head[2] == "# Input sha256: ab12"


@pytest.mark.parametrize("line, row", [
    ("2717  AD103M / GN21-X11 [GeForce RTX 4090 Laptop GPU]", ("2717", "AD103M", "GeForce RTX 4090 Laptop GPU")),
    ("2c18  GB203M / GN22 [GeForce RTX 5090 Max-Q / Mobile]", ("2c18", "GB203M", "GeForce RTX 5090 Max-Q / Mobile")),
    ("2330  GH100[H100 SXM5 80GB]", ("2330", "GH100", "H100 SXM5 80GB")),
    ("2b00  GB10B [Jetson AGX Thor]", ("2b00", "GB10B", "Jetson AGX Thor")),
    ("0fa0  GK11x [GK11x_FPGA]", None),                 # a family placeholder, not a chip
    ("22ce  GB10 GEN5 X4 PCIe host", None),             # the SoC's root port
    ("22d1  GB20B PCI bridge", None),
    ("22e8  GB202 High Definition Audio Controller", None),
])
def test_a_device_line_of_the_newer_database_gives_its_chip_and_board_or_nothing_when_it_is_no_gpu(line, row):
    dev, _, name = line.partition(" ")
    assert _generator().display_row(dev, name.strip()) == row


def _rows(text: str):
    return [l for l in text.splitlines() if not l.startswith("#")]


def test_the_packaged_table_is_what_the_generator_makes_of_the_pci_ids_its_header_names():
    """The input is pinned: pci.ids at a pciutils/pciids commit. Its NVIDIA lines are kept in
    tests/fixtures/pci-ids (written by the generator's --excerpt); regenerated from them the
    table must come out row for row the same, and both must name the same version and commit."""
    excerpt = (FIXTURES / "pci-ids" / f"pciids-{pci.table_version()}-nvidia.ids").read_text()
    head = pci.TABLE.read_text().splitlines()[:3]
    commit = re.search(r"pciutils/pciids commit ([0-9a-f]{40})", head[1]).group(1)
    assert f"# excerpt of https://github.com/pciutils/pciids/blob/{commit}/pci.ids" in excerpt.splitlines()
    regenerated = _generator().render(excerpt, commit=commit)
    assert regenerated.splitlines()[0] == head[0]
    assert _rows(regenerated) == _rows(pci.TABLE.read_text()) and len(_rows(regenerated)) > 1400


@pytest.mark.skipif(not DEBIAN_IDS.exists(), reason="Debian's pci.ids package is not installed (tests/run.sh installs it)")
def test_every_cuda_gpu_debians_older_database_knows_is_in_the_table_on_the_same_chip():
    """The table is made from a newer pci.ids than Debian ships; a board must not get lost or
    change chip on the way (names may be corrected: 'TITAN X' became 'TITAN X Pascal')."""
    gen = _generator()
    cuda_era = re.compile(r"^(GK|GM|GP|GV|TU|GA|AD|GH|GB)\d")
    older = {r[0]: r[1] for r in (gen.display_row(d, n) for d, n in gen.nvidia_devices(
        DEBIAN_IDS.read_text(errors="replace").splitlines())) if r and cuda_era.match(r[1])}
    ours = pci.table()
    assert len(older) > 600
    lost = sorted(d for d in older if d not in ours)
    moved = sorted(d for d in older if d in ours and chip_base(ours[d][0]) != chip_base(older[d]))
    assert (lost, moved) == ([], [])


# device ids as lspci/sysfs showed them on real machines in public threads, with the board
# name the PCI ID database gave there (tests/fixtures/gpu-names/README: sources)
SEEN_ON_REAL_MACHINES = [
    ("0x1db8", "Tesla V100 SXM3 32GB", (7, 0), "https://github.com/akash-network/provider-configs/issues/29"),
    ("0x25a2", "GeForce RTX 3050 Mobile", (8, 6), "https://github.com/akash-network/provider-configs/issues/37"),
    ("0x1db3", "Tesla V100 FHHL 16GB", (7, 0), "https://github.com/akash-network/provider-configs/issues/19"),
    ("0x20b7", "A30 PCIe", (8, 0), "https://github.com/akash-network/provider-configs/issues/20"),
    ("0x2204", "GeForce RTX 3090", (8, 6), "https://github.com/akash-network/provider-configs/issues/44"),
    ("0x1c82", "GeForce GTX 1050 Ti", (6, 1), "https://github.com/akash-network/provider-configs/issues/66"),
    ("0x1e30", "Quadro RTX 6000/8000", (7, 5), "https://github.com/akash-network/provider-configs/issues/81"),
    ("0x20b0", "A100 SXM4 40GB", (8, 0), "https://github.com/easydiffusion/torchruntime/issues/15"),
    ("0x20b2", "A100 SXM4 80GB", (8, 0), "https://github.com/easydiffusion/torchruntime/issues/15"),
    ("0x1c03", "GeForce GTX 1060 6GB", (6, 1), "https://github.com/Antergos/nvidia-installer/issues/10"),
    ("0x1df0", "Tesla PG500-216", (7, 0), "https://github.com/akash-network/provider-configs/pull/90"),
    ("0x1b38", "Tesla P40", (6, 1), "https://github.com/akash-network/provider-configs/issues/16"),
    ("0x102d", "Tesla K80", (3, 7), "https://github.com/AlexeyAB/darknet/issues/1701"),
]


@pytest.mark.parametrize("device, board, cc, source", SEEN_ON_REAL_MACHINES,
                         ids=[d for d, *_ in SEEN_ON_REAL_MACHINES])
def test_a_device_id_seen_on_a_real_machine_gets_its_board_and_compute_capability(m, device, board, cc, source):
    g = pci.identify({"address": "0000:3b:00.0", "vendor_id": "0x10de", "device_id": device}, m)
    assert (g.board, g.cc) == (board, cc), source
    assert g.name == f"NVIDIA {board}"


# boards newer than Debian bookworm's pci.ids (2023.04.10), which the pinned pci.ids names:
# the device ids a node shows in sysfs before install-cuda, the board and chip pci.ids gives them,
# and the compute capability NVIDIA's tables give that board (cuda-gpus, MIG supported GPUs)
NEWER_THAN_DEBIAN = [
    ("0x2335", "H200 SXM 141GB", "GH100", (9, 0)),
    ("0x233b", "H200 NVL", "GH100", (9, 0)),
    ("0x2329", "H20", "GH100", (9, 0)),
    ("0x2348", "GH200 144G HBM3e", "GH100", (9, 0)),
    ("0x26b9", "L40S", "AD102GL", (8, 9)),
    ("0x26ba", "L20", "AD102GL", (8, 9)),
    ("0x26b1", "RTX 6000 Ada Generation", "AD102GL", (8, 9)),
    ("0x27b0", "RTX 4000 SFF Ada Generation", "AD104GL", (8, 9)),
    ("0x2705", "GeForce RTX 4070 Ti SUPER", "AD103", (8, 9)),
    ("0x2901", "B200", "GB100", (10, 0)),
    ("0x2941", "HGX GB200", "GB100", (10, 0)),
    ("0x3182", "B300 SXM6 AC", "GB110", (10, 3)),
    ("0x2b00", "Jetson AGX Thor", "GB10B", (11, 0)),
    ("0x2e12", "GB10", "GB20B", (12, 1)),
    ("0x2b85", "GeForce RTX 5090", "GB202", (12, 0)),
    ("0x2b87", "GeForce RTX 5090 D", "GB202", (12, 0)),
    ("0x2bb1", "RTX PRO 6000 Blackwell Workstation Edition", "GB202GL", (12, 0)),
    ("0x2bb5", "RTX PRO 6000 Blackwell Server Edition", "GB202GL", (12, 0)),
    ("0x2c02", "GeForce RTX 5080", "GB203", (12, 0)),
    ("0x2c05", "GeForce RTX 5070 Ti", "GB203", (12, 0)),
    ("0x2f04", "GeForce RTX 5070", "GB205", (12, 0)),
    ("0x2d04", "GeForce RTX 5060 Ti", "GB206", (12, 0)),
    ("0x2d83", "GeForce RTX 5050", "GB207", (12, 0)),
]


@pytest.mark.parametrize("device, board, chip, cc", NEWER_THAN_DEBIAN, ids=[b for _, b, *_ in NEWER_THAN_DEBIAN])
def test_a_board_newer_than_debians_database_gets_its_board_chip_and_compute_capability(m, device, board, chip, cc):
    g = pci.identify({"address": "0000:01:00.0", "device_id": device}, m)
    assert (g.board, g.chip, g.cc) == (board, chip, cc)


def _sysfs_device(root, address, vendor, device, cls):
    d = root / address
    d.mkdir(parents=True)
    for name, value in (("vendor", vendor), ("device", device), ("class", cls)):
        (d / name).write_text(value + "\n")     # as the kernel writes them


def test_an_h200_and_an_rtx_5090_on_a_simulated_pci_bus_are_named_with_their_sm_before_any_driver(m, tmp_path):
    """The probe's own sysfs reader over a tree shaped like /sys/bus/pci/devices, then the
    controller's naming: what `audit` shows for a node before install-cuda."""
    from tests.node.probe_helpers import load_probe
    _sysfs_device(tmp_path, "0000:18:00.0", "0x10de", "0x2335", "0x030200")    # H200 SXM: 3D controller
    _sysfs_device(tmp_path, "0000:65:00.0", "0x10de", "0x2b85", "0x030000")    # RTX 5090: VGA
    _sysfs_device(tmp_path, "0000:65:00.1", "0x10de", "0x22e8", "0x040300")    # its HD-audio function
    found = load_probe().collect_pci_gpus(None, root=str(tmp_path))
    named = [(g.address, g.name, g.chip, g.cc) for g in pci.pci_gpus({"pci_gpus": found}, m)]
    assert named == [("0000:18:00.0", "NVIDIA H200 SXM 141GB", "GH100", (9, 0)),
                     ("0000:65:00.0", "NVIDIA GeForce RTX 5090", "GB202", (12, 0))]


def test_a_device_newer_than_the_database_is_named_by_its_id_and_has_no_compute_capability(m):
    assert "2ffe" not in pci.table()       # an id the pinned pci.ids does not list: nothing is guessed
    g = pci.identify({"address": "0000:01:00.0", "device_id": "0x2ffe"}, m)
    assert (g.chip, g.board, g.cc, g.name) == (None, None, None, "NVIDIA device 0x2ffe")


@pytest.mark.parametrize("raw", ["0x2330", "2330", "0X2330\n", " 0x2330 "])
def test_device_ids_are_read_however_sysfs_or_a_person_writes_them(raw):
    assert pci.device_key(raw) == "2330"


@pytest.mark.parametrize("raw", [None, "", "0x", "zz", "0x123456", "10de:2330"])
def test_a_malformed_device_id_is_no_id(raw):
    assert pci.device_key(raw) is None


def test_nvml_and_sysfs_bus_addresses_of_the_same_gpu_are_equal():
    assert pci.bus_key("00000000:3B:00.0") == pci.bus_key("0000:3b:00.0") == (0, 0x3B, 0, 0)
    assert pci.bus_key("0001:3b:00.0") != pci.bus_key("0000:3b:00.0")
    assert pci.bus_key("3b:00.0") == (0, 0x3B, 0, 0)
    assert pci.bus_key("nonsense") is None and pci.bus_key(None) is None


def test_every_chip_in_the_table_of_a_cuda_generation_has_a_compute_capability(m):
    """Kepler and later: a chip pci.ids names for an NVIDIA GPU must be in the matrix's chips:,
    or a GPU on the bus would be found and then not judged."""
    modern = re.compile(r"^(GK|GM|GP|GV|TU|GA|AD|GH|GB)\d")
    named = {chip for chip, board in pci.table().values() if board and "reserved" not in board.lower()}
    missing = sorted({chip for chip, _ in pci.table().values()
                      if modern.match(chip) and m.chip_cc(chip) is None})
    # pci.ids lists these chips only as unnamed device ids, and no NVIDIA table names a board on
    # them: a device on one is reported with its chip and an unknown sm, never a guessed one
    assert missing == ["GB112", "GB120"]
    assert not ({"GB112", "GB120"} & named)
