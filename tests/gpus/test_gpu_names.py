"""GPU names exactly as nvidia-smi, NVML, torch (collect_env, get_device_name, its 'not
compatible' warning) and the CUDA runtime printed them in public threads
(tests/fixtures/gpu-names/real-names.json, each with its thread), resolved to the compute
capability NVIDIA's tables give for the board (the fixture cites the table row, not our code)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from envcheck.matrix import pci
from envcheck.matrix.load import load_matrix

FIXTURE = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "gpu-names" / "real-names.json").read_text())
NAMES = FIXTURE["names"]
TABLES = set(FIXTURE["tables"].values())


@pytest.fixture(scope="module")
def m():
    return load_matrix()


def _cc(cc):
    return f"{cc[0]}.{cc[1]}" if cc else None


def test_the_fixture_holds_distinct_real_names_from_every_generation():
    names = [r["name"] for r in NAMES]
    assert len(names) == len(set(names)) >= 150
    majors = {r["expected_cc"].split(".")[0] for r in NAMES}
    assert majors >= {"2", "3", "5", "6", "7", "8", "9", "10", "12"}


# a public thread, or a file in a public repository pinned at a commit (a deviceQuery or
# nvidia-smi capture someone kept in their notes)
SOURCE = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/(issues/\d+|pull/\d+|blob/[0-9a-f]{40}/\S+)$")


def test_every_name_cites_a_public_thread_and_where_its_compute_capability_comes_from():
    for r in NAMES:
        assert SOURCE.match(r["source"]), r
        assert r["printed_by"], r
        if r["basis"] == "nvidia-table":
            assert r["cc_source"] in TABLES and r["table_entry"], r
        else:
            assert r["basis"] == "pci-chip" and pci.device_key(r["pci_device"]), r


@pytest.mark.parametrize("row", NAMES, ids=[r["name"] for r in NAMES])
def test_a_real_gpu_name_resolves_to_nvidias_compute_capability(m, row):
    """By name; a board the name table does not list, by its PCI device as the audit would."""
    cc = m.gpu_cc(row["name"])
    if cc is None and row["basis"] == "pci-chip":
        cc = pci.identify({"device_id": row["pci_device"]}, m).cc
    assert _cc(cc) == row["expected_cc"], (row["name"], row.get("table_entry") or row.get("chip"))


@pytest.mark.parametrize("row", FIXTURE["unresolvable"], ids=[r["name"] for r in FIXTURE["unresolvable"]])
def test_a_name_no_nvidia_table_lists_stays_unknown_instead_of_guessed(m, row):
    assert m.gpu_cc(row["name"]) is None


@pytest.mark.parametrize("name, cc", [
    ("GeForce GTX 960M", "5.0"), ("GeForce GTX 960", "5.2"),      # the M board is another chip
    ("GeForce GTX TITAN X", "5.2"), ("NVIDIA TITAN X (Pascal)", "6.1"),
    ("Quadro RTX 6000", "7.5"), ("NVIDIA RTX 6000 Ada Generation", "8.9"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "12.0"),
    ("Quadro M5000M", "5.0"), ("Quadro M5000", "5.2"),
    ("NVIDIA A100-SXM4-80GB", "8.0"), ("NVIDIA A10", "8.6"), ("NVIDIA A10G", "8.6"),
    ("Tesla K20Xm", "3.5"), ("NVIDIA L40S", "8.9"), ("NVIDIA H20", "9.0"),
    ("GeForce GTX 780M", "3.0"), ("GeForce GTX 780", "3.5"),       # Kepler notebook vs desktop chip
])
def test_boards_whose_names_differ_by_one_word_or_letter_are_told_apart(m, name, cc):
    assert _cc(m.gpu_cc(name)) == cc


@pytest.mark.parametrize("name", ["NVIDIA", "GPU", "Radeon RX 7900", "Intel(R) Arc(TM) A770 Graphics",
                                  "NVIDIA Graphics Device", "80GB", "", "Tesla"])
def test_names_without_a_known_board_match_nothing(m, name):
    assert m.gpu_cc(name) is None
