"""Unknown is never OK: a check the facts cannot settle is recorded as skipped (with what it
lacked), a torch build whose arch list the matrix lacks is judged from its CUDA, the cuDNN the
process loads is judged by torch's own rule, and gcc is judged as nvcc will run it. Judged against
the real compat_matrix.yaml."""
from __future__ import annotations

import copy

import pytest

from envcheck.facts.from_flags import stack_facts
from envcheck.matrix.load import Matrix
from envcheck.model import ERROR, Skipped, skipped_summary
from envcheck.rules import REGISTRY, judge
from envcheck.rules import kernels

FULL = dict(driver="550.54.15", cuda="12.4", cudnn="9.1.0", torch="2.4.0+cu124", torchvision="0.19.0",
            python="3.11", gpu="NVIDIA H100 80GB HBM3", gcc="11.4.0")


def run(m, **kw):
    return judge(stack_facts(matrix=m, **kw), m)


def codes(v, severity=ERROR):
    return {f.code for f in v.findings if f.severity == severity}


def test_a_full_stack_runs_every_check_and_skips_none(m):
    v = run(m, **FULL)
    assert v.skipped == [] and codes(v) == set()


@pytest.mark.parametrize("drop, check, lacking", [
    ("gpu", "gpu_vs_torch", "no GPU"),
    ("driver", "driver_vs_torch", "no driver version"),
    ("python", "python_has_torch_wheel", "no Python version"),
    ("gcc", "gcc_vs_toolkit", "no host compiler (gcc) version"),
    ("cudnn", "cudnn_vs_torch", "the cuDNN the torch process loads is unknown"),
])
def test_each_missing_fact_is_a_named_skipped_check_not_silence(m, drop, check, lacking):
    kw = {k: v for k, v in FULL.items() if k != drop}
    v = run(m, **kw)
    mine = [s for s in v.skipped if s.check == check]
    assert mine and lacking in mine[0].reason and mine[0].needs
    assert all(s.check != check for s in run(m, **FULL).skipped)


def test_every_rule_that_needs_facts_declares_them_with_known_names():
    from envcheck.rules.common import NEEDS
    declared = [getattr(r, "needs", ()) for r in REGISTRY]
    assert sum(1 for d in declared if d) >= 12
    assert {n for d in declared for n in d} <= set(NEEDS)


def test_a_gpu_the_matrix_cannot_place_is_a_skipped_check_for_every_gpu_rule(m):
    v = run(m, **dict(FULL, gpu="Mystery Accelerator 9000"))
    skipped = {s.check for s in v.skipped}
    assert {"gpu_vs_torch", "gpu_vs_toolkit", "driver_vs_gpu"} <= skipped
    assert any("Mystery Accelerator 9000" in s.reason for s in v.skipped)


def test_the_summary_names_what_was_lacking_most_frequent_first():
    s = [Skipped("a", "gpu", "no GPU"), Skipped("b", "gpu", "no GPU, no driver version"),
         Skipped("c", "driver", "no driver version"), Skipped("d", "env", "no GPU")]
    assert skipped_summary(s) == "4 checks skipped (no GPU, no driver version)"
    assert skipped_summary(s, limit=1) == "4 checks skipped (no GPU, 1 more)"
    assert skipped_summary([]) == ""


# ---------------------------------------------------------------- kernels derived from CUDA

def test_a_build_of_an_unlisted_variant_is_an_error_when_its_cuda_cannot_reach_the_gpu(m):
    # torch 2.7.0 was never released as cu124: the nightly a user ran on an RTX 5090
    v = run(m, torch="2.7.0+cu124", gpu="NVIDIA GeForce RTX 5090")
    nk = [f for f in v.findings if f.code == "gpu-no-kernel"]
    assert nk and nk[0].severity == ERROR
    assert "derived from its CUDA 12.4" in nk[0].message and "sm_90" in nk[0].message


def emptied(m, version, tag):
    """The real matrix with one variant's arch list taken away, as unknown variants are."""
    data = copy.deepcopy(m.data)
    rec = next(r for r in data["torch"]["releases"] if r["version"] == version)
    rec["variants"][tag] = {}
    return Matrix(data, m.path)


def test_an_empty_variant_of_an_old_release_gets_a_derived_verdict_on_a_newer_gpu(m):
    m = emptied(m, "1.3.0", "cu92")
    assert m.torch_variant("1.3.0", "cu92")["arch"] is None
    v = run(m, torch="1.3.0+cu92", gpu="sm_86")
    f = [f for f in v.findings if f.component == "gpu" and f.code in ("gpu-no-kernel", "gpu-ptx-only")]
    assert f and "derived from its CUDA 9.2" in f[0].message
    assert not any(s.check == "gpu_vs_torch" for s in v.skipped)


def test_an_old_gpu_below_everything_a_new_cuda_builds_is_certainly_without_kernels(m):
    d = kernels.derive(m, "12.4", "cu124", (3, 7))
    assert d.verdict == kernels.CERTAIN and d.buildable[0] == (5, 0)
    v = run(m, torch="2.7.0+cu124", gpu="Tesla K80")
    assert "gpu-no-kernel" in codes(v)


def test_when_a_cubin_could_fit_the_derivation_skips_rather_than_guesses(m):
    v = run(m, torch="2.7.0+cu124", gpu="NVIDIA A100-SXM4-80GB")
    assert "gpu-no-kernel" not in codes(v)
    sk = [s for s in v.skipped if s.check == "gpu_vs_torch"]
    assert sk and "sm_80" in sk[0].reason and "--deep" in sk[0].needs


@pytest.mark.parametrize("cuda, cc, want", [
    ("11.0", (8, 6), kernels.POSSIBLE),   # sm_80 cubin runs on 8.6
    ("11.0", (8, 9), kernels.POSSIBLE),
    ("10.2", (8, 0), kernels.PTX_ONLY),   # only compute_75 and lower exist
    ("12.8", (3, 5), kernels.CERTAIN),    # Kepler left in 12.0
    ("9.0", (7, 5), kernels.POSSIBLE),    # Turing runs the sm_70 cubin
    ("12.6", (12, 0), kernels.PTX_ONLY),
])
def test_the_derivation_follows_cubin_and_ptx_compatibility(m, cuda, cc, want):
    assert kernels.derive(m, cuda, "cu" + cuda.replace(".", ""), cc).verdict == want


def test_ptx_evidence_comes_from_known_lists_of_the_same_tag(m):
    assert kernels.ptx_seen(m, "cu129") is True     # 12.0+PTX
    assert kernels.ptx_seen(m, "cu124") is False
    assert kernels.ptx_seen(m, "cu92") is True      # 3.7+PTX in builder's 1.3.1 - 1.5 lists
    assert kernels.ptx_seen(m, "cu80") is None      # no list of a cu80 build is known


def test_the_empty_variants_are_filled_from_builders_script_at_each_release(m):
    empty = [(r["version"], t) for r in m.data["torch"]["releases"] for t, v in r["variants"].items()
             if not (v or {}).get("arch")]
    assert empty == []
    v = m.torch_variant("1.6.0", "cu101")
    assert v["arch"] == ["sm_37", "sm_50", "sm_60", "sm_70"] and "pytorch/builder/blob/" in v["arch_source"]


# ---------------------------------------------------------------- cuDNN torch will load

@pytest.mark.parametrize("torch, loaded, refused", [
    ("2.0.1+cu118", "8.2.4", True),    # bmaltais/kohya_ss#1096
    ("1.12.0+cu113", "8.0.3", True),   # pytorch/functorch#926
    ("2.0.1+cu118", "8.9.2", False),   # a newer minor of the same major is accepted
    ("2.0.1+cu118", "9.1.0", True),    # another major never is
    ("1.1.0+cu100", "7.6.5", False),
])
def test_the_loaded_cudnn_is_judged_by_torchs_own_rule(m, torch, loaded, refused):
    v = run(m, torch=torch, cudnn=loaded)
    hit = [f for f in v.findings if f.code == "cudnn-refused-by-torch"]
    assert bool(hit) == refused
    if hit:
        assert "PyTorch was compiled against" in hit[0].message and loaded in hit[0].message
        assert "LD_LIBRARY_PATH" in hit[0].fix and hit[0].source.startswith("https://github.com/pytorch/pytorch/")


def test_probe_facts_judge_the_cudnn_torch_itself_reported(m):
    f = stack_facts(matrix=m, torch="2.0.1+cu118")
    f["origin"], f["deep"] = "probe", {"cudnn": 8204}
    assert any(x.code == "cudnn-refused-by-torch" for x in judge(f, m).findings)
    f["deep"] = {"cudnn": 90100}  # 9.1.0 in cuDNN 9's encoding
    hit = [x for x in judge(f, m).findings if x.code == "cudnn-refused-by-torch"]
    assert hit and "9.1.0" in hit[0].message


# ---------------------------------------------------------------- the compiler nvcc runs

def _with_compiler(m, gcc_on_path, compiler):
    f = stack_facts(matrix=m, cuda="11.8", gcc=gcc_on_path)
    f = copy.deepcopy(f)
    f.setdefault("cuda", {})["nvcc"] = {"path": "/usr/lib/nvidia-cuda-toolkit/bin/nvcc", "host_compiler": compiler}
    return judge(f, m)


def test_debians_wrapper_compiler_is_judged_not_the_default_gcc_12(m):
    wrapper = {"path": "/usr/lib/nvidia-cuda-toolkit/bin/g++", "version": "11.4.0", "how": "nvcc.profile PATH"}
    assert "gcc-too-new" not in codes(_with_compiler(m, "12.2.0", wrapper))
    assert "gcc-too-new" in codes(run(m, cuda="11.8", gcc="12.2.0"))  # without the resolution


def test_a_ccbin_naming_a_too_new_gcc_is_still_an_error_naming_how_it_was_chosen(m):
    v = _with_compiler(m, "11.4.0", {"path": "/usr/bin/g++-13", "version": "13.1.0",
                                     "how": "-ccbin in NVCC_APPEND_FLAGS"})
    hit = [f for f in v.findings if f.code == "gcc-too-new"]
    assert hit and "/usr/bin/g++-13" in hit[0].message and "NVCC_APPEND_FLAGS" in hit[0].message


@pytest.mark.parametrize("driver, gpu, too_new", [
    ("582.28", "NVIDIA GeForce GTX 1060 6GB", False),   # Windows R580 update: Pascal's last branch
    ("474.44", "Tesla K80", False),                      # Windows R470 update: Kepler's last branch
    ("590.48.01", "NVIDIA GeForce GTX 1060 6GB", True),
    ("495.29.05", "Tesla K80", True),
])
def test_a_later_update_of_the_last_branch_is_not_too_new_for_the_gpu(m, driver, gpu, too_new):
    v = run(m, driver=driver, gpu=gpu)
    assert ("driver-too-new-for-gpu" in codes(v)) == too_new


def test_a_cuda9_build_on_turing_is_an_error_though_its_sm70_cubin_would_load(m):
    assert "gpu-runtime-too-old" in codes(run(m, torch="1.0.1", gpu="sm_75"))
    assert "gpu-runtime-too-old" not in codes(run(m, torch="1.0.1+cu100", gpu="sm_75"))
    assert "gpu-runtime-too-old" not in codes(run(m, torch="1.0.1", gpu="sm_70"))
