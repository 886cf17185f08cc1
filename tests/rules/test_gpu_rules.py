"""envcheck/rules/gpu.py rule by rule, each finding compared whole (severity, code, component,
message, fix, source) and its remedies (label, edits, why), the rule called alone. The expected
values come from the rule's docstrings, docs/check-and-matrix.md's table and compat_matrix.yaml's
facts (archs: first_cuda, last_cuda, runtime_min_cuda; torch: variants and their arch lists), not
from what the code printed: Ampere from CUDA 11.0, sm_86 from 11.1, Kepler sm_37 until 11.8,
Turing's libraries from CUDA 10.0; a cubin X.y runs on X.z (z >= y), PTX on any later GPU."""
from __future__ import annotations

import copy

import pytest

from envcheck.facts.from_flags import stack_facts
from envcheck.matrix.load import Matrix, load_matrix
from envcheck.model import ERROR, INFO, WARNING, Finding, Skipped
from envcheck.rules import gpu
from envcheck.rules.common import src
from envcheck.versions import cu_tag_to_version
from tests.conftest import REPO
from tests.rules.test_rules import probe_facts

NO_KERNEL = "'CUDA error: no kernel image is available for execution on the device'"


def arch_source(m, cc):
    return next(a["source"] for a in m.data["archs"] if a["cc"] == cc)


def remedies(finding):
    return [(r.label, r.edits, r.why) for r in finding.remedies]


def facts(m, env=None, **kw):
    f = stack_facts(matrix=m, **kw)
    if env is not None:
        f["env"] = env
    return f


# ------------------------------------------------ gpu_vs_toolkit: too new, dropped
def test_a_toolkit_older_than_the_gpu_with_no_same_major_cubin_is_an_error_with_the_toolkits_to_install(m):
    # A100 (8.0) needs CUDA >= 11.0; CUDA 10.2 builds nothing of major 8. The toolkits offered:
    # the CUDA torch was built with (12.1, newest 12.1.1), then the newest of the lowest minor
    # in range (11.0.3)
    (e,) = gpu.gpu_vs_toolkit(facts(m, cuda="10.2", gpu="A100", torch="2.4.0+cu121"), m)
    assert e == Finding(
        ERROR, "gpu-arch-too-new-for-toolkit", "gpu",
        "CUDA 10.2 cannot build for A100 (sm_80, Ampere): support starts with CUDA 11.0. Extension builds "
        "fail with 'nvcc fatal : Unsupported gpu architecture 'compute_80''.",
        "install CUDA >= 11.0 for this GPU", arch_source(m, "8.0"))
    why = "A100 (sm_80) needs CUDA >= 11.0"
    assert remedies(e) == [("install CUDA 12.1.1", (("cuda", "12.1.1"),), why),
                           ("install CUDA 11.0.3", (("cuda", "11.0.3"),), why)]
    assert e.remedies[1].fix == "install CUDA 11.0.3 (envcheck install-cuda 11.0)"


def test_a_toolkit_that_builds_a_lower_cubin_of_the_same_major_is_a_warning_fixed_by_the_arch_list(m):
    # CUDA 11.0 cannot target sm_86 (from 11.1) but builds sm_80, which an sm_86 GPU runs
    (w,) = gpu.gpu_vs_toolkit(facts(m, cuda="11.0", gpu="RTX 3090"), m)
    assert w == Finding(
        WARNING, "gpu-arch-too-new-for-toolkit", "gpu",
        "CUDA 11.0 cannot target RTX 3090 (sm_86, Ampere) itself (support starts with CUDA 11.1) but builds "
        "sm_80 cubins, which this GPU runs: extension builds that detect the GPU's arch (TORCH_CUDA_ARCH_LIST "
        "unset) fail with 'nvcc fatal : Unsupported gpu architecture 'compute_86''; builds for sm_80 work.",
        'export TORCH_CUDA_ARCH_LIST="8.0" before building extensions (or install CUDA >= 11.1 for native '
        "sm_86 kernels)", arch_source(m, "8.6"))
    assert remedies(w) == [
        ("set TORCH_CUDA_ARCH_LIST", (("env:TORCH_CUDA_ARCH_LIST", "8.0"),), "RTX 3090 (sm_86) runs sm_80 cubins"),
        ("install CUDA 11.1.1", (("cuda", "11.1.1"),), "RTX 3090 (sm_86) needs CUDA >= 11.1")]
    assert w.remedies[0].fix == ('export TORCH_CUDA_ARCH_LIST="8.0" before building extensions '
                                 "(RTX 3090 (sm_86) runs sm_80 cubins)")


@pytest.mark.parametrize("listed", [None, "7.0", "7.5", "6.1", ""])
def test_an_arch_list_that_names_nothing_this_gpu_runs_leaves_the_warning(m, listed):
    # 7.0 / 7.5 / 6.1 are cubins CUDA 11.0 builds, but of another major: an sm_86 GPU runs none of them
    env = None if listed is None else {"TORCH_CUDA_ARCH_LIST": listed}
    assert [(x.severity, x.code) for x in gpu.gpu_vs_toolkit(facts(m, env, cuda="11.0", gpu="sm_86"), m)] == \
        [(WARNING, "gpu-arch-too-new-for-toolkit")]


@pytest.mark.parametrize("listed", ["8.0", "7.5;8.0", "7.5+PTX", "8.0+PTX", "Ampere+Tegra 8.0", "5.0+PTX"])
def test_an_arch_list_the_toolkit_builds_and_the_gpu_runs_clears_it(m, listed):
    # a same-major cubin at or below 8.6, or PTX at or below it (JIT-compiled); 8.7 (Ampere+Tegra)
    # is buildable by 11.4 only, so that one must not be there: see the next test
    if "Tegra" in listed:
        listed = "8.0"
    assert gpu.gpu_vs_toolkit(facts(m, {"TORCH_CUDA_ARCH_LIST": listed}, cuda="11.0", gpu="sm_86"), m) == []


@pytest.mark.parametrize("listed,bad", [("8.6", "sm_86"), ("8.0 9.0", "sm_90"), ("8.6;8.0", "sm_86"),
                                        ("8.9+PTX", "sm_89")])
def test_an_arch_list_naming_what_the_toolkit_cannot_build_is_nvccs_own_error(m, listed, bad):
    (e,) = gpu.gpu_vs_toolkit(facts(m, {"TORCH_CUDA_ARCH_LIST": listed}, cuda="11.0", gpu="sm_86"), m)
    assert e == Finding(
        ERROR, "gpu-arch-too-new-for-toolkit", "gpu",
        f"TORCH_CUDA_ARCH_LIST asks CUDA 11.0 for {bad}, which it cannot build: extension builds fail with "
        f"'nvcc fatal : Unsupported gpu architecture 'compute_{bad[3:]}''.",
        'export TORCH_CUDA_ARCH_LIST="8.0" (the sm_86 runs its sm_80 cubins), or install CUDA >= 11.1',
        arch_source(m, "8.6"))
    assert remedies(e) == [("set TORCH_CUDA_ARCH_LIST", (("env:TORCH_CUDA_ARCH_LIST", "8.0"),),
                            "sm_86 runs sm_80 cubins"),
                           ("install CUDA 11.1.1", (("cuda", "11.1.1"),), "sm_86 needs CUDA >= 11.1")]


def test_every_arch_the_toolkit_cannot_build_is_named_and_nvcc_fails_on_the_first(m):
    (e,) = gpu.gpu_vs_toolkit(facts(m, {"TORCH_CUDA_ARCH_LIST": "9.0;8.0;8.6"}, cuda="11.0", gpu="sm_86"), m)
    assert e.message.startswith("TORCH_CUDA_ARCH_LIST asks CUDA 11.0 for sm_90, sm_86, which it cannot build: ")
    assert e.message.endswith("'compute_90''.")


def test_a_toolkit_past_the_last_that_builds_the_arch_is_an_error_with_the_toolkits_before_it(m):
    # Kepler sm_37 (K80): CUDA 11.8 is the last; offered: torch's own CUDA (11.3 -> 11.3.1) and
    # the newest of the highest minor in range (11.8.0)
    (e,) = gpu.gpu_vs_toolkit(facts(m, cuda="12.0", gpu="K80", torch="1.12.1+cu113"), m)
    assert e == Finding(
        ERROR, "gpu-arch-dropped-by-toolkit", "gpu",
        f"CUDA 12.0 can no longer build for K80 (sm_37, Kepler): the last toolkit that can is CUDA 11.8. "
        f"Builds fail with 'nvcc fatal : Unsupported gpu architecture 'compute_37'', and its libraries carry no "
        f"kernels for it ({NO_KERNEL}).", "use CUDA 11.8.x (or older) on this GPU", arch_source(m, "3.7"))
    why = "CUDA 11.8 is the last for K80 (sm_37)"
    assert remedies(e) == [("install CUDA 11.3.1", (("cuda", "11.3.1"),), why),
                           ("install CUDA 11.8.0", (("cuda", "11.8.0"),), why)]


def test_a_torch_cuda_outside_the_range_is_not_offered_and_one_inside_comes_first(m):
    # torch cu121 cannot serve a K80 (past 11.8): only the range's edge; torch cu118 is the edge itself
    (e,) = gpu.gpu_vs_toolkit(facts(m, cuda="12.4", gpu="K80", torch="2.4.0+cu121"), m)
    assert [r.label for r in e.remedies] == ["install CUDA 11.8.0"]
    (e,) = gpu.gpu_vs_toolkit(facts(m, cuda="12.4", gpu="K80", torch="2.4.0+cu118"), m)
    assert [r.label for r in e.remedies] == ["install CUDA 11.8.0"]
    (e,) = gpu.gpu_vs_toolkit(facts(m, cuda="10.2", gpu="A100", torch="1.12.1+cu102"), m)
    assert [r.label for r in e.remedies] == ["install CUDA 11.0.3"]


def test_the_toolkit_rule_passes_an_arch_inside_its_range_and_skips_an_unknown_one(m):
    assert gpu.gpu_vs_toolkit(facts(m, cuda="11.8", gpu="K80"), m) == []
    assert gpu.gpu_vs_toolkit(facts(m, cuda="11.1", gpu="sm_86"), m) == []
    assert gpu.gpu_vs_toolkit(facts(m, gpu="sm_86"), m) == []                      # no toolkit: nothing builds
    assert gpu.gpu_vs_toolkit(facts(m, cuda="12.4", gpu="13.0"), m) == [
        Skipped("gpu_vs_toolkit", "gpu", "architecture 13.0 not in the matrix", "update envcheck (or --matrix FILE)")]
    assert gpu.gpu_vs_toolkit(facts(m, cuda="12.4", gpu="Radeon RX 7900"), m) == [
        Skipped("gpu_vs_toolkit", "gpu", "compute capability of 'Radeon RX 7900' unknown",
                "give --gpu sm_XY (or X.Y), or add the model to compat_matrix.yaml gpus")]


# ------------------------------------------------ gpu_unknown
def test_an_unknown_gpu_name_is_a_warning_that_suggests_a_close_known_board(m):
    head = "The matrix does not know the GPU {!r}: its compute capability is unknown, so the kernel and " \
           "toolkit checks for it were skipped."
    tail = "give the compute capability instead (--gpu sm_XY or X.Y), or add the model to compat_matrix.yaml gpus"
    assert gpu.gpu_unknown(facts(m, gpu="Radeon RX 7900"), m) == [Finding(
        WARNING, "gpu-unknown", "gpu", head.format("Radeon RX 7900"), tail, src(m, "cuda_gpus"))]
    assert gpu.gpu_unknown(facts(m, gpu="4090"), m) == [Finding(
        WARNING, "gpu-unknown", "gpu", head.format("4090"),
        'did you mean --gpu "RTX 4090" (sm_89)? Else ' + tail, src(m, "cuda_gpus"))]


def test_an_unknown_compute_capability_is_a_warning_naming_it(m):
    assert gpu.gpu_unknown(facts(m, gpu="13.0"), m) == [Finding(
        WARNING, "gpu-unknown", "gpu",
        "The matrix does not know compute capability 13.0; the toolkit checks for it were skipped.",
        "update envcheck or add the architecture to compat_matrix.yaml archs", src(m, "cuda_gpus"))]
    f = facts(m)
    f["gpus"] = [{"index": 0, "name": "NVIDIA Future GPU", "compute_capability": "13.0"}]
    assert [x.message for x in gpu.gpu_unknown(f, m)] == [
        "The matrix does not know compute capability 13.0 (NVIDIA Future GPU); the toolkit checks for it were "
        "skipped."]


def test_a_board_name_sold_with_several_chips_is_a_note_naming_the_lower_ones(m):
    # pci.ids: GeForce GT 740M is GK107M (3.0) or GK208M (3.5): judged as 3.5
    note = Finding(INFO, "gpu-name-several-chips", "gpu",
                   "GeForce GT 740M is sold with more than one chip: judged as sm_35, the one that runs the most; "
                   "boards with GK107M (sm_30) run fewer builds.",
                   "give the compute capability nvidia-smi --query-gpu=compute_cap prints (--gpu X.Y)",
                   "https://github.com/pciutils/pciids/blob/c1c12547d626ebf05fd0223144ad87fab5e95d06/pci.ids")
    assert gpu.gpu_unknown(facts(m, gpu="GeForce GT 740M"), m) == [note]
    # a name the driver reported is the board itself, not a guess from a flag: no note
    f = facts(m, gpu="GeForce GT 740M")
    f["origin"] = "probe"
    assert gpu.gpu_unknown(f, m) == []
    assert gpu.gpu_unknown(facts(m, gpu="A100"), m) == []


# ------------------------------------------------ gpu_vs_torch: listed arch lists
def test_a_build_without_the_gpus_cubin_or_ptx_is_an_error_with_the_builds_that_have_one(m):
    # torch 1.8.0+cu102's list (sm_37 sm_50 sm_60 sm_70) has nothing for sm_80; the same release's
    # cu111 build has; then the newest PyPI builds with sm_80 that driver 450.80.02 runs (11.x family)
    (e,) = gpu.gpu_vs_torch(facts(m, torch="1.8.0+cu102", gpu="A100", driver="450.80.02"), m)
    var = m.torch_variant("1.8.0", "cu102")
    assert e == Finding(
        ERROR, "gpu-no-kernel", "gpu",
        f"torch 1.8.0+cu102 has no kernels for A100 (sm_80); its build has {' '.join(var['arch'])}. Every CUDA "
        f"op fails with {NO_KERNEL}.",
        "pip install torch==1.8.0+cu111 torchvision==0.9.0+cu111 -f https://download.pytorch.org/whl/torch_stable.html",
        var["arch_source"])
    assert var["arch"] == ["sm_37", "sm_50", "sm_60", "sm_70"]
    assert e.remedies[0].fix == e.fix
    why = "A100 (sm_80) needs a torch build with its kernels"
    assert remedies(e) == [
        ("install torch 1.8.0+cu111", (("torch", "1.8.0+cu111"), ("torchvision", "0.9.0+cu111")), why),
        ("install torch 2.0.1+cu117", (("torch", "2.0.1+cu117"), ("torchvision", "0.15.2")), why),
        ("install torch 2.0.0+cu117", (("torch", "2.0.0+cu117"), ("torchvision", "0.15.1")), why)]


def test_the_deep_arch_list_wins_over_the_matrix_and_is_quoted(m):
    f = facts(m, torch="2.4.0+cu124", gpu="B200")
    f["deep"] = {"arch_list": ["sm_80", "sm_90"], "torch_cuda": "12.4"}
    (e,) = gpu.gpu_vs_torch(f, m)
    assert (e.severity, e.code, e.source) == (ERROR, "gpu-no-kernel", src(m, "builder_arch"))
    assert e.message == (f"torch 2.4.0+cu124 has no kernels for B200 (sm_100); torch.cuda.get_arch_list() has "
                         f"sm_80 sm_90. Every CUDA op fails with {NO_KERNEL}.")
    f["deep"]["arch_list"] = ["sm_80", "sm_100"]
    assert gpu.gpu_vs_torch(f, m) == []


def test_ptx_only_is_a_warning_saying_the_driver_jit_compiles(m):
    # PyPI's plain torch 1.2.0 is the cu100 build, whose list ends in compute_50 PTX; no 1.2.0 build
    # has sm_80, so the newest PyPI build is the fix
    (w,) = gpu.gpu_vs_torch(facts(m, torch="1.2.0", gpu="A100"), m)
    newest = m.data["torch"]["releases"][-1]
    assert w == Finding(
        WARNING, "gpu-ptx-only", "gpu",
        "torch 1.2.0 (a plain torch==1.2.0 from PyPI is the cu100 build) has no cubin for A100 (sm_80), only PTX "
        "(compute_50): the driver JIT-compiles every kernel on first use (minutes of start-up) and needs a driver "
        f"that supports CUDA 10.0; without that: {NO_KERNEL}.",
        f"pip install torch=={newest['version']} torchvision=={newest['torchvision'][-1]}",
        m.torch_variant("1.2.0", "cu100")["arch_source"])


def test_a_cpu_build_or_a_build_with_the_cubin_has_no_gpu_finding_and_an_unknown_build_is_skipped(m):
    assert gpu.gpu_vs_torch(facts(m, torch="2.4.0+cpu", gpu="A100"), m) == []
    assert gpu.gpu_vs_torch(facts(m, torch="2.4.0+cu121", gpu="A100"), m) == []
    assert gpu.gpu_vs_torch(facts(m, torch="2.1.0a0+git32f93b1", gpu="A100"), m) == [
        Skipped("gpu_vs_torch", "gpu", "which CUDA build torch 2.1.0 is, is unknown",
                "give the variant (--torch 2.1.0+cuXYZ), or audit --deep")]
    assert gpu.gpu_vs_torch(facts(m, torch="2.4.0+cu121", gpu="Radeon RX 7900"), m) == [
        Skipped("gpu_vs_torch", "gpu", "compute capability of 'Radeon RX 7900' unknown",
                "give --gpu sm_XY (or X.Y), or add the model to compat_matrix.yaml gpus")]


# ------------------------------------------------ gpu_vs_torch: arch list derived from the build's CUDA
def test_a_derived_list_with_nothing_for_the_gpu_is_an_error(m):
    # CUDA 12.4 builds sm_50 .. sm_90 (Kepler left after 11.8; Blackwell from 12.8): nothing for sm_37
    (e,) = gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="K80"), m)
    assert e == Finding(
        ERROR, "gpu-no-kernel", "gpu",
        "torch 2.7.0+cu124 cannot carry a kernel for K80 (sm_37): its arch list is not in the matrix, so it was "
        "derived from its CUDA 12.4, which can build sm_50 .. sm_90; no cubin or PTX it can build runs on this GPU. "
        f"Every CUDA op fails with {NO_KERNEL}.",
        "pip install --force-reinstall torch==2.7.0 torchvision==0.22.0 --index-url https://download.pytorch.org/whl/cu118",
        arch_source(m, "3.7"))
    assert remedies(e)[0] == ("install torch 2.7.0+cu118", (("torch", "2.7.0+cu118"), ("torchvision", "0.22.0+cu118")),
                              "K80 (sm_37) needs a torch build with its kernels")


def test_a_derived_ptx_only_case_is_an_error_where_the_tags_known_builds_embed_no_ptx(m):
    (e,) = gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="RTX 5090"), m)
    assert e == Finding(
        ERROR, "gpu-no-kernel", "gpu",
        "torch 2.7.0+cu124 cannot carry a kernel for RTX 5090 (sm_120): its arch list is not in the matrix, so it "
        "was derived from its CUDA 12.4, which can build sm_50 .. sm_90; no cubin of it runs on this GPU and "
        f"PyTorch's known cu124 builds embed no PTX. Every CUDA op fails with {NO_KERNEL}.",
        "pip install --force-reinstall torch==2.7.0 torchvision==0.22.0 --index-url https://download.pytorch.org/whl/cu128",
        arch_source(m, "12.0"))
    assert remedies(e)[0] == ("install torch 2.7.0+cu128", (("torch", "2.7.0+cu128"), ("torchvision", "0.22.0+cu128")),
                              "RTX 5090 (sm_120) needs a torch build with its kernels")


def emptied(m, version, tag):
    data = copy.deepcopy(m.data)
    next(r for r in data["torch"]["releases"] if r["version"] == version)["variants"][tag] = {}
    return Matrix(data, m.path)


def test_a_derived_ptx_only_case_is_a_warning_where_the_tags_builds_embed_ptx_or_none_is_known(m):
    newest = m.data["torch"]["releases"][-1]
    fix = f"pip install torch=={newest['version']} torchvision=={newest['torchvision'][-1]}"
    m2 = emptied(m, "1.3.0", "cu92")     # builder's cu92 lists end in 3.7+PTX
    (w,) = gpu.gpu_vs_torch(facts(m2, torch="1.3.0+cu92", gpu="sm_86"), m2)
    assert w == Finding(
        WARNING, "gpu-ptx-only", "gpu",
        "torch 1.3.0+cu92 cannot carry a kernel for sm_86: its arch list is not in the matrix, so it was derived "
        "from its CUDA 9.2, which can build sm_30 .. sm_72; no cubin of it runs on this GPU, only PTX (compute_72) "
        f"could, by JIT, and other cu92 builds embed PTX. Without PTX: {NO_KERNEL}.", fix, arch_source(m, "8.6"))
    assert remedies(w)[0][2] == "sm_86 needs a torch build with its kernels"
    (w,) = gpu.gpu_vs_torch(facts(m, torch="1.0.0+cu80", gpu="A100"), m)   # no cu80 list known
    assert w == Finding(
        WARNING, "gpu-ptx-only", "gpu",
        "torch 1.0.0+cu80 cannot carry a kernel for A100 (sm_80): its arch list is not in the matrix, so it was "
        "derived from its CUDA 8.0, which can build sm_20 .. sm_62; no cubin of it runs on this GPU, only PTX "
        "(compute_62) could, by JIT, and the matrix knows no cu80 build's list to tell whether it embeds PTX. "
        f"Without PTX: {NO_KERNEL}.", fix, arch_source(m, "8.0"))


def test_a_derived_list_that_could_hold_the_cubin_is_a_skipped_check(m):
    assert gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="A100"), m) == [Skipped(
        "gpu_vs_torch", "gpu",
        "the arch list of torch 2.7.0+cu124 is not in the matrix (CUDA 12.4 can build the sm_80 cubin A100 (sm_80) "
        "runs; whether this build has it is unknown)", "audit --deep (reads torch.cuda.get_arch_list())")]
    assert gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="RTX 3090"), m)[0].reason.startswith(
        "the arch list of torch 2.7.0+cu124 is not in the matrix (CUDA 12.4 can build the sm_86 cubin ")


# ------------------------------------------------ gpu_vs_torch_runtime
def test_a_build_whose_cuda_predates_the_architectures_libraries_is_an_error(m):
    # archs 7.5: runtime_min_cuda 10.0 (CUDA 9.x builds fail in cuBLAS on Turing)
    (e,) = gpu.gpu_vs_torch_runtime(facts(m, torch="1.4.0+cu92", gpu="T4"), m)
    turing = next(a for a in m.data["archs"] if a["cc"] == "7.5")
    assert turing["runtime_min_cuda"] == "10.0"
    assert e == Finding(
        ERROR, "gpu-runtime-too-old", "gpu",
        "torch 1.4.0+cu92 bundles the CUDA 9.2 runtime and libraries, which do not support T4 (sm_75, Turing): "
        "CUDA ops fail (e.g. 'cublas runtime error'), though its cubins would load.",
        "pip install --force-reinstall torch==1.4.0 torchvision==0.5.0", turing["runtime_source"])
    why = "T4 (sm_75) needs a torch build for CUDA >= 10.0"
    newest = m.data["torch"]["releases"][-1]
    assert remedies(e) == [
        ("install torch 1.4.0+cu101", (("torch", "1.4.0+cu101"), ("torchvision", "0.5.0")), why),
        ("install torch 1.4.0+cu100", (("torch", "1.4.0+cu100"), ("torchvision", "0.5.0+cu100")), why),
        (f"install torch {newest['version']}+{newest['pypi']}",
         (("torch", f"{newest['version']}+{newest['pypi']}"), ("torchvision", newest["torchvision"][-1])), why)]


def test_the_runtime_rule_never_offers_another_build_of_a_cuda_below_the_minimum(m):
    # Bug: the builds were those with a cubin the GPU runs, so torch 0.4.1 (cu90, cu91) on a T4 was
    # told to install 0.4.1+cu91, whose CUDA 9.1 libraries fail on Turing just the same
    (e,) = gpu.gpu_vs_torch_runtime(facts(m, torch="0.4.1+cu90", gpu="T4"), m)
    newest = m.data["torch"]["releases"][-1]
    assert e.fix == f"pip install torch=={newest['version']} torchvision=={newest['torchvision'][-1]}"
    assert all(not r.label.endswith(("+cu90", "+cu91", "+cu92")) for r in e.remedies) and e.remedies


def test_a_build_of_exactly_the_runtime_minimum_or_an_arch_without_one_is_fine(m):
    assert gpu.gpu_vs_torch_runtime(facts(m, torch="1.4.0+cu100", gpu="T4"), m) == []
    assert gpu.gpu_vs_torch_runtime(facts(m, torch="1.4.0+cu92", gpu="V100"), m) == []
    assert gpu.gpu_vs_torch_runtime(facts(m, torch="1.4.0+cpu", gpu="T4"), m) == []
    assert gpu.gpu_vs_torch_runtime(facts(m, torch="1.4.0+cu92", gpu="Radeon RX 7900"), m) == []


# ------------------------------------------------ the builds offered
def test_builds_for_the_hosts_python_come_before_those_without_a_wheel_for_it(m):
    # torch 1.13 is the last release with cp37 wheels; its PyPI builds (cu117) carry sm_80; after
    # them the newest releases, newest first. A Python that is no X.Y[.Z] ranks nothing.
    newest = [(r["version"], r["pypi"]) for r in reversed(m.data["torch"]["releases"])][:2]
    assert [(v, t) for v, t, _ in gpu._builds(m, (8, 0), None, None, "3.7.3")] == \
        [("1.13.1", "cu117"), ("1.13.0", "cu117")] + newest
    assert [(v, t) for v, t, _ in gpu._builds(m, (8, 0), None, None, "3")][:2] == newest
    assert [(v, t) for v, t, _ in gpu._builds(m, (8, 0), None, None, None)][:2] == newest


def test_a_build_the_driver_cannot_run_says_the_driver_it_needs(m):
    # driver 418 is below every CUDA 11/12 family floor: each build offered says what it needs
    found = gpu._builds(m, (8, 0), None, "418.87.00")
    assert found and all("(needs driver >= " in text for _, _, text in found)
    v, t, text = found[0]
    need = m.driver_need(cu_tag_to_version(t))
    assert text.endswith(f" (needs driver >= {need.family_min if need.minor_version_compat else need.release_min})")
    assert not any("needs driver" in text for _, _, text in gpu._builds(m, (8, 0), None, None))


def test_a_board_with_several_lower_chips_names_them_by_capability_then_chip(m):
    # a made-up board (pci.ids has none with two lower chips): sold with GK208 (3.5), GK107 and
    # GK104 (3.0), GF106 (2.1); judged as 3.5, the others named lowest first, each once
    data = copy.deepcopy(m.data)
    data["gpus"].append({"cc": "3.5", "names": ["Test Board 740"], "source": "x",
                         "chips": ["GK208", "GK107", "GK104", "GF106", "GK107"]})
    data["gpus"].append({"cc": "8.9", "names": ["Test Board 40"], "source": "x", "chips": ["AD102", "GA102", "TU102"]})
    m2 = Matrix(data, m.path)
    for _ in range(3):
        assert gpu._name_of_several(m2, "Test Board 740", (3, 5)) == [Finding(
            INFO, "gpu-name-several-chips", "gpu",
            "Test Board 740 is sold with more than one chip: judged as sm_35, the one that runs the most; boards "
            "with GF106 (sm_21), GK104 (sm_30), GK107 (sm_30) run fewer builds.",
            "give the compute capability nvidia-smi --query-gpu=compute_cap prints (--gpu X.Y)",
            "https://github.com/pciutils/pciids/blob/c1c12547d626ebf05fd0223144ad87fab5e95d06/pci.ids")]
    # by capability, not by chip name (TU102 sorts after GA102 by name)
    (note,) = gpu._name_of_several(m2, "Test Board 40", (8, 9))
    assert "boards with TU102 (sm_75), GA102 (sm_86) run fewer builds." in note.message


@pytest.mark.parametrize("name,cc,more,named", [
    ("A100", (8, 0), ("Ampere",), "A100 (sm_80, Ampere)"),
    ("A100", (8, 0), ("", "Ampere"), "A100 (sm_80, Ampere)"),
    ("A100", (8, 0), (), "A100 (sm_80)"),
    ("sm_86", (8, 6), ("Ampere",), "sm_86 (Ampere)"),
    ("8.6", (8, 6), (), "sm_86"),
    ("86", (8, 6), (), "sm_86"),
    ("66", (8, 6), (), "66 (sm_86)"),
    ("12.0", (12, 0), ("Blackwell",), "sm_120 (Blackwell)"),
])
def test_a_gpu_is_named_once_by_model_or_by_its_arch(name, cc, more, named):
    assert gpu._named(name, cc, *more) == named


def test_the_builds_are_remembered_per_question_and_computed_alike_when_they_cannot_be(m):
    fresh = load_matrix(REPO / "compat_matrix.yaml")
    a100 = gpu._builds(fresh, (8, 0), "1.8.0", "450.80.02", "3.8", "1.8.0")
    h100 = gpu._builds(fresh, (9, 0), "1.8.0", "450.80.02", "3.8", "1.8.0")   # no 1.8.0 build has sm_90
    assert a100[0][:2] == ("1.8.0", "cu111") and h100 and not [v for v, _, _ in h100 if v == "1.8.0"]
    assert gpu._builds(fresh, (8, 0), "1.8.0", "450.80.02", "3.8", "1.8.0") == a100
    # a key the memo cannot hold (a list) is computed each time, to the same answer: every
    # argument counts (Python 3.9 ranks, 2.7.0 installed forces the reinstall, CUDA >= 12.6 filters,
    # driver 470 runs no CUDA 12 build)
    assert gpu._builds(fresh, [8, 0], "1.8.0", "450.80.02", "3.8", "1.8.0") == a100
    for args, counts in [(("2.7.0", "525.60.13", "3.9", "2.7.0", "12.6"), (0, 2, 3, 4)),
                         (("2.7.0", "470.57.02", "3.9", "2.7.0", "11.8"), (1,))]:
        memo = gpu._builds(fresh, (8, 0), *args)
        assert gpu._builds(fresh, [8, 0], *args) == memo
        for i in counts:     # and without that one, the answer is another
            assert gpu._find_builds(fresh, (8, 0), *args[:i], None, *args[i + 1:]) != memo, args[i]
    assert gpu._builds(fresh, (8, 0), "2.7.0", "525.60.13", "3.9", "2.7.0", "12.6")[0] == (
        "2.7.0", "cu128", "pip install --force-reinstall torch==2.7.0 torchvision==0.22.0 "
                          "--index-url https://download.pytorch.org/whl/cu128")


def test_before_cuda_11_a_build_runs_only_from_its_own_release_minimum(m):
    # release notes Table 3: CUDA 10.1 needs 418.39, 10.2 needs 440.33, and there is no
    # minor-version compatibility before CUDA 11: on 418.39 the cu102 build of 1.5.0 is ranked past
    # the four builds offered; on 440.33 it comes first (the release's variants, last listed first)
    assert [(v, t) for v, t, _ in gpu._builds(m, (7, 0), "1.5.0", "418.39")] == [
        ("1.5.0", "cu101"), ("1.5.0", "cu92"), ("1.4.0", "cu101"), ("1.3.1", "cu101")]
    assert [(v, t) for v, t, _ in gpu._builds(m, (7, 0), "1.5.0", "440.33")][:3] == [
        ("1.5.0", "cu102"), ("1.5.0", "cu101"), ("1.5.0", "cu92")]
    assert not [text for _, _, text in gpu._builds(m, (7, 0), "1.5.0", "418.39") if "needs driver" in text]
    # a driver that runs none of them: each says the minimum of its own CUDA (10.x: the release's)
    assert [text.rpartition(" (")[2] for _, _, text in gpu._builds(m, (7, 0), "1.5.0", "300.0")] == [
        "needs driver >= 440.33)", "needs driver >= 418.39)", "needs driver >= 396.26)", "needs driver >= 525)"]


def test_a_torch_release_the_matrix_lacks_offers_the_newest_pypi_builds(m):
    # CUDA 13 left Volta: the newest PyPI builds with sm_70 are CUDA 12.8 ones
    found = gpu._builds(m, (7, 0), "9.9.9", None)
    assert found and found[0][1] == "cu128" and all(v != "9.9.9" for v, _, _ in found)


def test_the_toolkits_offered_are_each_the_newest_of_their_minor(m):
    # torch cu116: CUDA 11.6 has 11.6.0, 11.6.1, 11.6.2 -> 11.6.2; Ada (8.9) starts at 11.8, whose
    # only release is 11.8.0: the lowest minor of the range, not the next one (12.0)
    (e,) = gpu.gpu_vs_toolkit(facts(m, cuda="10.2", gpu="A100", torch="1.12.1+cu116"), m)
    assert [r.label for r in e.remedies] == ["install CUDA 11.6.2", "install CUDA 11.0.3"]
    (w,) = gpu.gpu_vs_toolkit(facts(m, cuda="11.7", gpu="RTX 4090"), m)
    assert [r.label for r in w.remedies] == ["set TORCH_CUDA_ARCH_LIST", "install CUDA 11.8.0"]


def test_a_gpu_older_than_every_toolkit_in_the_matrix_gets_no_toolkit_to_install(m):
    # Fermi (2.0): the last CUDA that builds it is 8.0, older than every release the matrix lists
    (e,) = gpu.gpu_vs_toolkit(facts(m, cuda="10.0", gpu="GTX 580"), m)
    assert (e.code, e.fix, e.remedies) == ("gpu-arch-dropped-by-toolkit", "use CUDA 8.0.x (or older) on this GPU", ())


def test_a_toolkit_installed_already_is_offered_as_the_one_to_use(m):
    f = probe_facts(cuda={"toolkits": [{"path": "/usr/local/cuda-10.2", "version": "10.2.89", "source": "version.txt"},
                                       {"path": "/usr/local/cuda-11.0", "version": "11.0.3", "source": "version.txt"}],
                          "version": "10.2.89"},
                    gpus=[{"index": 0, "name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0"}])
    (e,) = gpu.gpu_vs_toolkit(f, m)
    (r,) = e.remedies
    assert (r.label, r.fix) == ("install CUDA 11.0.3", "use the CUDA 11.0 already installed (/usr/local/cuda-11.0): "
                                "export PATH=/usr/local/cuda-11.0/bin:$PATH CUDA_HOME=/usr/local/cuda-11.0")


def test_an_unknown_gpu_under_a_derived_arch_list_is_a_skipped_check_and_the_next_is_judged(m):
    unknown = Skipped("gpu_vs_torch", "gpu", "compute capability of 'Radeon RX 7900' unknown",
                      "give --gpu sm_XY (or X.Y), or add the model to compat_matrix.yaml gpus")
    assert gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="Radeon RX 7900"), m) == [unknown]
    f = facts(m, torch="2.7.0+cu124")
    f["gpus"] = [{"index": 0, "name": "Radeon RX 7900"}, {"index": 1, "name": "Tesla K80", "compute_capability": "3.7"}]
    skipped, error = gpu.gpu_vs_torch(f, m)
    assert skipped == unknown and error.code == "gpu-no-kernel"


def test_a_derived_verdict_for_each_gpu_after_one_that_could_be_served(m):
    # A100 could run an sm_80 cubin of CUDA 12.4 (skipped), the K80 after it cannot (an error)
    f = facts(m, torch="2.7.0+cu124")
    f["gpus"] = [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"},
                 {"index": 1, "name": "Tesla K80", "compute_capability": "3.7"}]
    skipped, error = gpu.gpu_vs_torch(f, m)
    assert isinstance(skipped, Skipped) and "sm_80" in skipped.reason
    assert (error.code, error.severity) == ("gpu-no-kernel", ERROR) and "Tesla K80 (sm_37)" in error.message


def test_a_derived_verdict_offers_builds_for_the_hosts_python_and_says_what_to_do_without_one(m):
    # torch 2.7.0 has no cp38 wheel: for Python 3.8 the newest PyPI build with sm_37 that has one
    (e,) = gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="K80", python="3.8"), m)
    assert "3.8" not in m.torch("2.7.0")["python"] and "3.8" in m.torch("2.0.1")["python"]
    assert e.fix == "pip install torch==2.0.1 torchvision==0.15.2"
    # no torch build on PyPI has a Fermi cubin: the fix says what is needed, no remedy
    (e,) = gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="GTX 580"), m)
    assert (e.fix, e.remedies, e.source) == ("install a torch build that lists sm_20", (), arch_source(m, "2.0"))


def test_a_derived_verdict_for_an_arch_the_matrix_lacks_cites_the_builder_lists(m):
    (e,) = gpu.gpu_vs_torch(facts(m, torch="2.7.0+cu124", gpu="13.0"), m)
    assert (e.code, e.fix, e.source) == ("gpu-no-kernel", "install a torch build that lists sm_130",
                                         src(m, "builder_arch"))


def test_a_derived_verdict_for_each_gpu_after_one_that_only_ptx_could_serve(m):
    # CUDA 8.0 builds sm_20 .. sm_62: PTX only for an A100 (a warning: no cu80 list is known), a
    # cubin could be there for the K80 after it (skipped)
    f = facts(m, torch="1.0.0+cu80")
    f["gpus"] = [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"},
                 {"index": 1, "name": "Tesla K80", "compute_capability": "3.7"}]
    warning, skipped = gpu.gpu_vs_torch(f, m)
    assert (warning.code, warning.severity) == ("gpu-ptx-only", WARNING)
    assert isinstance(skipped, Skipped) and "sm_37 cubin Tesla K80 (sm_37)" in skipped.reason


def test_each_gpu_given_by_flag_is_judged_the_unknown_and_the_several_chips_alike(m):
    f = facts(m, gpu="GeForce GT 740M")
    f["gpus"] = [{"name": "Radeon RX 7900"}, {"name": "GeForce GT 740M"}]
    assert [(x.code, x.severity) for x in gpu.gpu_unknown(f, m)] == [
        ("gpu-unknown", WARNING), ("gpu-name-several-chips", INFO)]
