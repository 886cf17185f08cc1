"""GPUs known only from the PCI bus: with no driver the rules judge the boards
sysfs lists, and a driver GPU whose name the matrix lacks is placed by its PCI device."""
from __future__ import annotations

import pytest

from envcheck.facts.from_flags import stack_facts
from envcheck.matrix import pci
from envcheck.report import render_facts
from envcheck.rules import evaluate
from envcheck.rules.common import gpu_ccs


def _on_bus(*devices):
    return [{"address": f"0000:{0x3b + i:02x}:00.0", "vendor_id": "0x10de", "device_id": d, "class": "0x030200"}
            for i, d in enumerate(devices)]


def _no_driver(*devices, **versions):
    f = stack_facts(**versions)
    f["driver"] = {"version": None, "error": "nvidia-smi: command not found"}
    f["gpus"] = []
    f["pci_gpus"] = _on_bus(*devices)
    return f


def test_without_a_driver_the_gpus_on_the_pci_bus_are_judged_by_their_chip(m):
    assert gpu_ccs(_no_driver("0x2330", "0x2330"), m) == [("NVIDIA H100 SXM5 80GB", (9, 0))]
    assert gpu_ccs(_no_driver("0x102d"), m) == [("NVIDIA Tesla K80", (3, 7))]


def test_a_k80_found_only_on_the_pci_bus_is_still_refused_by_cuda_13(m):
    codes = {x.code for x in evaluate(_no_driver("0x102d", cuda="13.0"), m)}
    assert "gpu-arch-dropped-by-toolkit" in codes and "gpu-unknown" not in codes


def test_a_device_newer_than_the_pci_database_is_reported_unknown_by_its_id(m):
    (finding,) = [x for x in evaluate(_no_driver("0x2ffe"), m) if x.code == "gpu-unknown"]
    assert "NVIDIA device 0x2ffe" in finding.message


def test_a_driver_gpu_with_a_name_the_matrix_lacks_gets_its_cc_from_the_pci_device_at_its_bus_address(m):
    f = stack_facts()
    f["gpus"] = [{"name": "NVIDIA Graphics Device", "compute_capability": None, "pci_bus_id": "00000000:3B:00.0"}]
    f["pci_gpus"] = _on_bus("0x2330")
    assert gpu_ccs(f, m) == [("NVIDIA Graphics Device", (9, 0))]
    f["pci_gpus"] = [dict(f["pci_gpus"][0], address="0000:3c:00.0")]   # another slot: no join
    assert gpu_ccs(f, m) == [("NVIDIA Graphics Device", None)]


def test_pci_gpus_do_not_count_when_the_driver_lists_its_gpus(m):
    f = stack_facts(gpu="Tesla V100-SXM2-16GB", matrix=m)
    f["pci_gpus"] = _on_bus("0x2330")
    assert [cc for _, cc in gpu_ccs(f, m)] == [(7, 0)]


@pytest.mark.parametrize("name", ["Tesla K40c", "Tesla K80", "GeForce GTX 1080 Ti", "Quadro RTX 6000",
                                  "NVIDIA GeForce RTX 4090", "NVIDIA H100 80GB HBM3"])
def test_gpus_named_as_nvidia_smi_names_them_are_no_longer_skipped_as_unknown(m, name):
    codes = {x.code for x in evaluate(stack_facts(gpu=name, cuda="12.4", matrix=m), m)}
    assert "gpu-unknown" not in codes


def test_the_report_shows_pci_gpus_with_board_chip_and_sm_when_no_driver_lists_any(m):
    f = _no_driver("0x2330", "0x2330", "0x2ffe")
    pci.annotate(f, m)
    assert f["pci_gpus"][0]["compute_capability"] == "9.0" and f["pci_gpus"][0]["device_id"] == "0x2330"
    text = render_facts(f)
    assert ("on the PCI bus: 2 x NVIDIA H100 SXM5 80GB (GH100, sm_90); 1 x NVIDIA device 0x2ffe (sm unknown)"
            in " ".join(text.split()))


def test_a_board_name_only_the_pci_database_knows_gets_its_chips_compute_capability(m):
    assert m.gpu("GeForce GTX 770M") is not None and m.gpu_cc("GeForce GTX 770M") == (3, 0)   # GK106M
    assert m.gpu_cc("NVIDIA GeForce GTX 770M") == (3, 0)
    assert m.gpu_cc("GeForce GTX 770") == (3, 0) and m.gpu("GeForce GTX 770").get("chips") is None  # gpus: first
    assert m.gpu_cc("GeForce GTX 770M Ultra") is None          # the words must be the board's, all of them
    assert m.gpu_cc("Riva TNT") is None                        # a chip the chips table lacks: unknown, not guessed


def test_one_name_on_chips_of_one_architecture_is_judged_as_the_highest_with_a_note(m):
    assert m.gpu("GeForce GT 740M")["chips"] == ["GK107M", "GK208M"]
    assert m.gpu_cc("GeForce GT 740M") == (3, 5)               # GK208M: runs every cubin a GK107M runs
    found = evaluate(stack_facts(torch="1.3.1+cu92", gpu="GeForce GT 740M", matrix=m), m)
    assert "gpu-no-kernel" in {x.code for x in found if x.severity == "error"}   # sm_37 up: neither variant runs it
    (note,) = [x for x in found if x.code == "gpu-name-several-chips"]
    assert note.severity == "info" and "GK107M (sm_30)" in note.message
    found = evaluate(stack_facts(torch="1.3.1+cu92", gpu="GeForce GTX 770M", matrix=m), m)
    assert "gpu-name-several-chips" not in {x.code for x in found}


def test_one_name_on_chips_of_different_architectures_stays_unknown():
    from envcheck.matrix.gpus import GpuIndex
    chips = [{"chip": "GK107", "cc": "3.0", "source": "s"}, {"chip": "GK208", "cc": "3.5", "source": "s"}]
    same = [{"cc": "3.0", "name": "Kepler", "first_cuda": "6.0"}, {"cc": "3.5", "name": "Kepler", "first_cuda": "6.0"}]
    assert GpuIndex([], chips, same).lookup("GeForce GT 740M")["cc"] == "3.5"
    later = [same[0], dict(same[1], first_cuda="7.0")]     # a newer first CUDA: the higher is no longer safe
    assert GpuIndex([], chips, later).lookup("GeForce GT 740M") is None
