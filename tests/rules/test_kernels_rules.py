"""envcheck/rules/kernels.py function by function, each answer compared whole. Expected values
come from the module's docstrings and compat_matrix.yaml's archs (first_cuda, last_cuda): a cubin
is built from the first CUDA that knows the architecture until the last that still does; a GPU
X.Y runs a cubin X.Z with Z <= Y and PTX compute_AB with AB <= XY; TORCH_CUDA_ARCH_LIST's named
architectures as torch.utils.cpp_extension (torch 2.13) expands them."""
from __future__ import annotations

import copy

import pytest

from envcheck.matrix.load import Matrix
from envcheck.rules import kernels
from envcheck.rules.kernels import CERTAIN, POSSIBLE, PTX_ONLY, Derived


# compat_matrix.yaml archs, (cc, first_cuda, last_cuda): Kepler 3.0/3.2 until 10.2, 3.5/3.7 until
# 11.8; Maxwell to Volta until 12.9; Turing 10.0 on; Ampere 8.0 from 11.0, 8.6 from 11.1, 8.7 from
# 11.4; Ada and Hopper from 11.8; Blackwell 10.0/12.0 from 12.8, 10.1 from 12.8 until 12.9, 10.3/12.1
# from 12.9, 11.0 from 13.0; 8.8 from 13.0
@pytest.mark.parametrize("cuda,archs", [
    ("10.2", [(3, 0), (3, 2), (3, 5), (3, 7), (5, 0), (5, 2), (5, 3), (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5)]),
    ("11.0", [(3, 5), (3, 7), (5, 0), (5, 2), (5, 3), (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5), (8, 0)]),
    ("11.8", [(3, 5), (3, 7), (5, 0), (5, 2), (5, 3), (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5), (8, 0), (8, 6),
              (8, 7), (8, 9), (9, 0)]),
    ("12.8", [(5, 0), (5, 2), (5, 3), (6, 0), (6, 1), (6, 2), (7, 0), (7, 2), (7, 5), (8, 0), (8, 6), (8, 7), (8, 9),
              (9, 0), (10, 0), (10, 1), (12, 0)]),
    ("13.0", [(7, 5), (8, 0), (8, 6), (8, 7), (8, 8), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1)]),
])
def test_what_a_cuda_builds_runs_from_the_first_to_the_last_toolkit_of_each_arch(m, cuda, archs):
    assert kernels.buildable(m, cuda) == archs


def test_derive_says_possible_with_the_best_cubin_the_gpu_runs(m):
    # CUDA 11.0 on an sm_86 GPU: sm_80 is the best same-major cubin at or below 8.6
    assert kernels.derive(m, "11.0", "cu110", (8, 6)) == Derived(
        "11.0", (8, 6), POSSIBLE, tuple(kernels.buildable(m, "11.0")), (8, 0), None, kernels.ptx_seen(m, "cu110"))
    # the best of several: CUDA 11.8 on an sm_89 GPU builds 8.0, 8.6, 8.7 and 8.9 itself
    assert kernels.derive(m, "11.8", "cu118", (8, 9)).cubin == (8, 9)
    assert kernels.derive(m, "11.8", "cu118", (8, 6)).cubin == (8, 6)


def test_derive_says_ptx_only_with_the_best_ptx_the_gpu_can_jit(m):
    # CUDA 10.2 on an sm_80 GPU: no cubin of major 8; the newest PTX at or below 8.0 is compute_75
    assert kernels.derive(m, "10.2", "cu102", (8, 0)) == Derived(
        "10.2", (8, 0), PTX_ONLY, tuple(kernels.buildable(m, "10.2")), None, (7, 5), kernels.ptx_seen(m, "cu102"))
    # exactly the GPU's major.minor is a cubin, not PTX-only: sm_75 on a 7.5 GPU
    assert kernels.derive(m, "10.2", "cu102", (7, 5)).verdict == POSSIBLE


def test_derive_says_certain_when_the_gpu_is_below_everything_the_cuda_builds(m):
    assert kernels.derive(m, "12.4", "cu124", (3, 7)) == Derived(
        "12.4", (3, 7), CERTAIN, tuple(kernels.buildable(m, "12.4")), None, None, False)


def test_the_explanation_names_the_span_or_says_nothing_is_known(m):
    d = kernels.derive(m, "12.4", "cu124", (3, 7))
    assert d.newest() == (9, 0)
    assert d.explain() == "derived from its CUDA 12.4, which can build sm_50 .. sm_90"
    # CUDA 13.0 starts at Turing, whose next arch is another major
    assert kernels.derive(m, "13.0", "cu130", (3, 7)).explain() == \
        "derived from its CUDA 13.0, which can build sm_75 .. sm_121"
    none = kernels.derive(m, "2.0", "cu20", (8, 0))     # older than every architecture in the matrix
    assert none.buildable == () and none.newest() is None and none.verdict == CERTAIN
    assert none.explain() == "derived from its CUDA 2.0, which can build none of the architectures the matrix knows"


def test_ptx_evidence_reads_only_lists_of_the_same_tag(m):
    data = copy.deepcopy(m.data)
    sets = data["torch"]["arch_sets"]
    sets["only-ptx"] = {"arch": ["sm_80", "compute_80"]}
    sets["no-ptx"] = {"arch": ["sm_80", "sm_90"]}
    for rec in data["torch"]["releases"]:
        rec["variants"].pop("cu999", None)
    rel = data["torch"]["releases"]
    rel[0]["variants"]["cu999"] = {"arch": "no-ptx"}
    assert kernels.ptx_seen(Matrix(data, m.path), "cu999") is False
    rel[1]["variants"]["cu999"] = {"arch": "only-ptx"}      # one list of the tag embeds PTX: seen
    assert kernels.ptx_seen(Matrix(data, m.path), "cu999") is True
    rel[0]["variants"]["cu999"] = {}                          # a variant without a list says nothing
    rel[1]["variants"]["cu999"] = None
    assert kernels.ptx_seen(Matrix(data, m.path), "cu999") is None


@pytest.mark.parametrize("arch,parsed", [
    ("sm_86", ("sm", (8, 6))), ("compute_120", ("compute", (12, 0))), ("sm_100", ("sm", (10, 0))),
    ("compute_50", ("compute", (5, 0))),
    ("sm_90a", None), ("compute_100f", None), ("sm_8", None), ("xsm_86", None), ("sm_86_", None), ("ptx_86", None),
])
def test_parse_arch_reads_plain_targets_only(arch, parsed):
    assert kernels.parse_arch(arch) == parsed


@pytest.mark.parametrize("text,listed", [
    ("7.5;8.0+PTX", [((7, 5), False), ((8, 0), True)]),
    ("8.0 8.6", [((8, 0), False), ((8, 6), False)]),
    (" 8.0;;8.6\t9.0 ", [((8, 0), False), ((8, 6), False), ((9, 0), False)]),
    (";8.0", [((8, 0), False)]), ("8.0;", [((8, 0), False)]),
    ("8.0+ptx", [((8, 0), True)]),
    ("9.0a", [((9, 0), False)]),
    ("10.0", [((10, 0), False)]),
    ("Ampere", [((8, 0), False), ((8, 6), True)]),
    ("ampere;Hopper", [((8, 0), False), ((8, 6), True), ((9, 0), True)]),
    ("Kepler+Tesla", [((3, 7), False)]), ("Kepler", [((3, 5), True)]),
    ("Maxwell+Tegra", [((5, 3), False)]), ("Maxwell", [((5, 0), False), ((5, 2), True)]),
    ("Pascal", [((6, 0), False), ((6, 1), True)]), ("Volta+Tegra", [((7, 2), False)]), ("Volta", [((7, 0), True)]),
    ("Turing", [((7, 5), True)]), ("Ampere+Tegra", [((8, 7), False)]), ("Ada", [((8, 9), True)]),
    ("Blackwell+Tegra", [((11, 0), False)]),
    ("Blackwell", [((10, 0), False), ((10, 3), False), ((12, 0), False), ((12, 1), True)]),
])
def test_torch_cuda_arch_list_is_read_as_torch_reads_it(text, listed):
    assert kernels.arch_list_env(text) == listed


@pytest.mark.parametrize("text", [None, "", "  ", ";", "sm_80", "8", "8.0;Fermi", "8.0+PTXX", "8.0.1", "a.b"])
def test_an_unset_or_unreadable_arch_list_judges_nothing(text):
    assert kernels.arch_list_env(text) is None


@pytest.mark.parametrize("cuda,cc,lower", [
    ("11.0", (8, 6), (8, 0)),     # sm_80 for an sm_86 GPU on CUDA 11.0
    ("11.0", (8, 9), (8, 0)),
    ("11.1", (8, 9), (8, 6)),     # the best of those at or below
    ("10.2", (8, 0), None),       # no major 8 at all
    ("11.4", (8, 9), (8, 6)),     # 8.7 is Tegra: never for a discrete 8.9
    ("11.4", (8, 7), None),       # nor a discrete cubin for the Tegra GPU
    ("12.8", (10, 3), (10, 0)),   # 10.1 (Thor) is Tegra
    ("12.8", (12, 1), (12, 0)),
    ("12.8", (9, 0), (9, 0)),
])
def test_the_lower_target_is_the_best_same_major_cubin_never_across_tegra(m, cuda, cc, lower):
    assert kernels.lower_target(m, cuda, cc) == lower


def test_sm_names_a_compute_capability():
    assert kernels.sm((12, 0)) == "sm_120" and kernels.sm((8, 6)) == "sm_86"
