"""The PCI device table (tools/gen_pci_table.py over Debian's pci.ids) and how a device id on
the bus becomes a board name and a compute capability."""
from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from envcheck.matrix import pci
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
    head = _generator().render(text, "0.0~2023.04.11-1").splitlines()[0]
    assert "version 2023.04.10" in head and "Debian package pci.ids 0.0~2023.04.11-1" in head


@pytest.mark.skipif(not DEBIAN_IDS.exists(), reason="Debian's pci.ids package is not installed (tests/run.sh installs it)")
def test_the_packaged_table_is_what_the_generator_makes_of_debians_pci_ids(tmp_path):
    """Regenerated from the installed database it must come out byte for byte the same, as long
    as that database is the version the packaged table names; a newer one is a reason to rerun
    the generator, not a failure."""
    version = re.search(r"^#\s*Version:\s*(\S+)", DEBIAN_IDS.read_text(errors="replace"), re.M).group(1)
    if version != pci.table_version():
        pytest.skip(f"installed pci.ids is {version}, the table was made from {pci.table_version()}")
    out = tmp_path / "pci_ids.tsv"
    subprocess.run(["python3", str(ROOT / "tools" / "gen_pci_table.py"), str(DEBIAN_IDS), str(out)],
                   check=True, capture_output=True, timeout=60)
    body = [l for l in out.read_text().splitlines() if not l.startswith("#")]
    packaged = [l for l in pci.TABLE.read_text().splitlines() if not l.startswith("#")]
    assert body == packaged and len(body) > 1000


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


def test_a_device_newer_than_the_database_is_named_by_its_id_and_has_no_compute_capability(m):
    # RTX 5090 (2b85) is newer than Debian bookworm's pci.ids: nothing is guessed
    g = pci.identify({"address": "0000:01:00.0", "device_id": "0x2b85"}, m)
    assert (g.chip, g.board, g.cc, g.name) == (None, None, None, "NVIDIA device 0x2b85")


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
    missing = sorted({chip for chip, _ in pci.table().values()
                      if modern.match(chip) and m.chip_cc(chip) is None})
    assert missing == []
