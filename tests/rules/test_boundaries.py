"""The boundaries a hand-made mutation check (issue 24) found unpinned: each test here sits on the
exact value where the answer changes, so an off-by-one, a swapped floor or a dropped condition
fails it. The values come from the sources the code cites (compat_matrix.yaml's URLs, NVIDIA's
documents, health_catalog.yaml's), never from what the code printed."""
from __future__ import annotations

import pytest

from envcheck.facts.from_flags import stack_facts
from envcheck.model import ERROR, EXTENDED, UNVERIFIED, WARNING, Finding
from envcheck.rules import cudnn, fixcheck, health, judge, remedy
from envcheck.rules.common import arch_runs, torch_build
from envcheck.rules.driver import driver_vs_torch
from envcheck.rules.gpu import _builds, gpu_vs_toolkit, gpu_vs_torch
from tests.rules.test_rules import probe_facts


def codes(findings, severity=None):
    return [f.code for f in findings if severity is None or f.severity == severity]


# ------------------------------------------------ which cubin / PTX a GPU runs
# CUDA C++ Programming Guide, "Binary Compatibility": a cubin for X.y runs on X.z, z >= y, never
# across majors. "PTX Compatibility": PTX for compute_ab is JIT-compiled for any cc >= a.b.
# "Feature Availability" and the PTX ISA's .target: sm_90a / compute_90a (arch-specific) run
# only on exactly 9.0, on no later GPU.
@pytest.mark.parametrize("arch,cc,cubin", [
    (["sm_80"], (8, 0), True), (["sm_80"], (8, 6), True), (["sm_86"], (8, 0), False),
    (["sm_80"], (9, 0), False), (["sm_90"], (8, 9), False),
    (["sm_90a"], (9, 0), True),            # the exact GPU runs its arch-specific cubin
    (["sm_100a"], (10, 3), False),         # a later minor does not (B300 vs sm_100a)
    (["sm_90a"], (10, 0), False),
    (["sm_100f"], (10, 3), True), (["sm_103f"], (10, 0), False),   # family-specific: the major, from its minor up
])
def test_which_cubin_a_gpu_runs(arch, cc, cubin):
    assert arch_runs(arch, cc)[0] is cubin


@pytest.mark.parametrize("arch,cc,ptx", [
    (["compute_90"], (9, 0), "compute_90"),     # PTX for exactly the GPU's capability
    (["compute_90"], (8, 9), None),
    (["compute_50"], (12, 0), "compute_50"),    # and for any later one, across majors
    (["compute_90a"], (9, 0), "compute_90a"),
    (["compute_90a"], (10, 0), None),           # arch-specific PTX is not forward compatible
    (["compute_100f"], (10, 3), "compute_100f"), (["compute_100f"], (12, 0), None),   # family PTX: its family only
    (["sm_90"], (9, 0), None),                  # a cubin is no PTX
])
def test_which_ptx_a_gpu_can_jit(arch, cc, ptx):
    assert arch_runs(arch, cc)[1] == ptx


def test_a_build_with_only_the_arch_specific_cubin_runs_on_its_gpu_and_on_no_later_one(m):
    f = probe_facts(deep={"arch_list": ["sm_80", "sm_90a"], "torch_cuda": "12.4"},
                    packages={"torch": {"version": "2.4.0+cu124"}},
                    torch={"version": "2.4.0", "local": "cu124", "cuda": "12.4", "cuda_source": "deep"})
    f["gpus"] = [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0"}]
    assert codes(gpu_vs_torch(f, m)) == []
    f["gpus"] = [{"index": 0, "name": "NVIDIA B200", "compute_capability": "10.0"}]
    assert codes(gpu_vs_torch(f, m)) == ["gpu-no-kernel"]


# ------------------------------------------------ the last CUDA that still builds an arch
# NVIDIA's toolkit/driver/architecture matrix (compat_matrix archs: dc_matrix): CUDA 11.8 is the
# last toolkit for Kepler (sm_35, sm_37); 12.0 cannot build for it. Ampere (sm_80) from 11.0.
@pytest.mark.parametrize("cuda,gpu,code", [
    ("11.8", "Tesla K80", None), ("12.0", "Tesla K80", "gpu-arch-dropped-by-toolkit"),
    ("11.0", "A100", None), ("10.2", "A100", "gpu-arch-too-new-for-toolkit"),
])
def test_the_first_and_last_cuda_that_build_an_arch(m, cuda, gpu, code):
    found = gpu_vs_toolkit(stack_facts(cuda=cuda, gpu=gpu, matrix=m), m)
    assert codes(found) == ([code] if code else [])


# ------------------------------------------------ the torch variant from the package's local tag
def test_the_variant_comes_from_the_package_metadata_when_the_torch_section_has_none(m):
    # what pip's metadata says (`pip show torch`: 2.4.0+cu118), where the derived section lost
    # the tag; PyPI's plain 2.4.0 is the cu121 build, which this host does not have
    f = probe_facts(packages={"torch": {"version": "2.4.0+CU118"}},
                    torch={"version": "2.4.0", "local": None, "cuda": None})
    tb = torch_build(f, m)
    assert (tb.tag, tb.cuda, tb.how) == ("cu118", "11.8", "local-tag")


# ------------------------------------------------ driver floors under minor-version compatibility
# CUDA release notes Table 2/3 (compat_matrix rn_t3): CUDA 12.4 needs 550.54.14 for its full
# feature set; any 12.x runs from the family minimum 525 (Table 2: ">= 525") through minor-version
# compatibility; 11.x from 450. Before CUDA 11 there is no such thing.
@pytest.mark.parametrize("driver,sev", [("550.54.14", None), ("550.54.13", WARNING), ("525", WARNING),
                                        ("524.99", ERROR)])
def test_the_driver_floor_for_a_cu124_torch(m, driver, sev):
    found = driver_vs_torch(stack_facts(driver=driver, torch="2.4.0+cu124", matrix=m), m)
    assert [f.severity for f in found] == ([sev] if sev else [])


def test_the_builds_a_driver_runs_are_judged_by_the_family_floor(m):
    # driver 470.57.02 is below CUDA 11.8's own 520.61.05 but above the 11.x family minimum
    # (Table 2: >= 450): torch 2.4.0+cu118 runs there (minor-version compatibility), the cu121/cu124
    # builds do not (below 12.x's 525)
    f = stack_facts(driver="470.57.02", torch="2.4.0+cu124", matrix=m)
    (e,) = driver_vs_torch(f, m)
    offered = [r.label for r in e.remedies]
    assert "install torch 2.4.0+cu118" in offered
    assert not [x for x in offered if "cu121" in x or "cu124" in x]
    # below the 11.x family minimum no CUDA 11 build runs either
    (e,) = driver_vs_torch(stack_facts(driver="449.99", torch="2.4.0+cu124", matrix=m), m)
    assert not [r for r in e.remedies if "torch" in r.label]


def test_builds_for_a_gpu_rank_those_the_driver_runs_by_the_family_floor_first(m):
    # an sm_80 GPU and driver 470.57.02: every torch build with an sm_80 cubin fits, but only CUDA
    # 11.x ones run on an R470 driver (11.x family minimum 450; 12.x needs 525)
    found = _builds(m, (8, 0), "2.4.0", "470.57.02")
    assert found and found[0][1].startswith("cu11") and "needs driver" not in found[0][2]


# ------------------------------------------------ the bundled-cuDNN cut-over release
# torch wheels up to 1.12 carry libcudnn in torch/lib; from 1.13 PyPI's wheels depend on
# nvidia-cudnn-cu11 instead (pypi.org/project/torch/1.13.0: Requires-Dist nvidia-cudnn-cu11)
def test_torch_1_12_loads_the_cudnn_its_wheel_bundles_and_1_13_does_not(m):
    def loads(version, tag):
        f = probe_facts(packages={"torch": {"version": f"{version}+{tag}"}},
                        torch={"version": version, "local": tag, "cuda": None}, cudnn={"version": None})
        return cudnn.torch_cudnn(f, m)
    assert loads("1.12.1", "cu116") == {"version": "8.3.2", "how": "bundled",
                                        "from": "the copy in torch 1.12.1+cu116's wheel (matrix)"}
    assert loads("1.13.0", "cu116") is None


# ------------------------------------------------ LD_LIBRARY_PATH entries as the loader reads them
@pytest.mark.parametrize("entry", ["/usr/lib/x86_64-linux-gnu/", "/usr/lib/x86_64-linux-gnu/.",
                                   "/usr/lib//x86_64-linux-gnu"])
def test_a_system_cudnn_dir_on_ld_library_path_is_found_however_the_entry_is_spelled(m, entry):
    # the dynamic loader searches the directory, however the path to it is written (ld.so(8))
    f = probe_facts(packages={"torch": {"version": "2.4.0+cu121"}, "nvidia-cudnn-cu12": {"version": "9.1.0.70"}},
                    torch={"version": "2.4.0", "local": "cu121", "cuda": None},
                    cudnn={"version": "8.9.7", "libs": [{"path": "/usr/lib/x86_64-linux-gnu/libcudnn.so.8",
                                                         "version": "8.9.7"}]},
                    env={"LD_LIBRARY_PATH": f"/opt/x:{entry}"})
    (x,) = cudnn.cudnn_shadows_torch(f, m)
    assert x.severity == ERROR and entry in x.message
    assert x.fix.endswith("export LD_LIBRARY_PATH=/opt/x")


# ------------------------------------------------ the fix check's own core
def _run(m):
    return lambda x: judge(x, m, verify_fixes=False).findings


def test_a_fix_that_leaves_its_error_standing_is_never_verified(m):
    # driver 410.48 with CUDA 12.4 (needs 550.54.14): "upgrading" to 418.87.00 leaves the error
    f = stack_facts(driver="410.48", cuda="12.4", matrix=m)
    (real,) = [x for x in judge(f, m, verify_fixes=False).findings if x.code == "driver-too-old-for-toolkit"]
    short = remedy.driver("418.87.00", "upgrade the NVIDIA driver to >= 418.87.00", "too little")
    (out,) = fixcheck.verify(f, m, [Finding(real.severity, real.code, real.component, real.message,
                                            short.fix, remedies=(short,))], _run(m))
    assert out.fix_check.status == UNVERIFIED
    assert "the error remains after it" in out.fix


def test_a_warning_that_a_fix_turns_into_an_error_is_a_new_error(m):
    # driver 535.104.05 runs torch 2.4.0+cu124 by minor-version compatibility (a warning); a fix
    # elsewhere that takes the driver down to R470 makes that an error: not a clean fix as it is
    f = stack_facts(driver="535.104.05", torch="2.4.0+cu124", matrix=m)
    assert "driver-too-old-for-torch" in codes(judge(f, m, verify_fixes=False).findings, WARNING)
    down = remedy.driver("470.57.02", "install driver 470.57.02", "for a Kepler GPU")
    fd = Finding(ERROR, "driver-too-new-for-gpu", "driver", "as if a K80 were here", down.fix, remedies=(down,))
    found = judge(f, m, verify_fixes=False).findings
    out = fixcheck.verify(f, m, found + [fd], _run(m))[-1]
    # so it is extended with what clears the new error: the cu118 build R470 runs
    assert out.fix_check.status == EXTENDED
    assert out.fix_check.steps == ("upgrade the NVIDIA driver to 470.57.02", "install torch 2.4.0+cu118")


# ------------------------------------------------ health thresholds at their exact value
def _gpu_health(**h):
    return {"schema": 1, "origin": "probe", "driver": {"version": "550.54.15"},
            "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": "00000000:07:00.0",
                      "health": h}]}


def test_ecc_and_row_remap_thresholds_at_their_exact_value(m):
    # azure_gpu_ecc.nhc: fail on volatile uncorrectable `-gt 0`, on remapped_rows.uncorrectable `-gt 512`
    def mem(**h):
        return codes(health.memory(_gpu_health(**h), m))
    assert mem(ecc={"volatile_uncorrected": 0}) == []
    assert mem(ecc={"volatile_uncorrected": 1}) == ["gpu-ecc-uncorrectable"]
    assert mem(remapped_rows={"uncorrectable": 512}) == []
    assert mem(remapped_rows={"uncorrectable": 513}) == ["gpu-row-remap-exhausting"]
    assert mem(ecc={"volatile_uncorrected": 0, "aggregate_uncorrected": 1}) == ["gpu-ecc-uncorrectable-history"]
    assert mem(ecc={"volatile_uncorrected": 0, "aggregate_uncorrected": 0}) == []


def test_the_slowdown_temperature_margin_at_its_exact_value(m):
    margin = health.catalog()["throttle"]["temperature_margin_c"]
    at = codes(health.state(_gpu_health(temperature_c=87 - margin, slowdown_temperature_c=87), m))
    below = codes(health.state(_gpu_health(temperature_c=86 - margin, slowdown_temperature_c=87), m))
    assert at == ["gpu-near-slowdown-temperature"] and below == []


def test_pcie_width_below_its_maximum_and_not_at_it(m):
    def link(width, max_width):
        f = {"schema": 1, "origin": "probe", "health": {"pci": [
            {"address": "0000:07:00.0", "vendor_id": "0x10de", "device_id": "0x2330",
             "link": {"width": width, "max_width": max_width, "speed": "32.0 GT/s PCIe",
                      "max_speed": "32.0 GT/s PCIe"}}]}}
        return codes(health.pcie(f, m))
    assert link(16, 16) == [] and link(8, 16) == ["pcie-link-width-degraded"] and link(0, 16) == []
