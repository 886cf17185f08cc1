"""envcheck/rules/gcc.py, the rule called alone and each finding compared whole (severity, code,
component, message, fix, source) with its remedy (label, fix, edits, why). The expected values come
from the module's docstring (the gcc judged is the one nvcc runs: cuda.nvcc.host_compiler, else the
first gcc on PATH), docs/check-and-matrix.md (`gcc-too-new`, `gcc-known-broken`, the sample's
wording) and compat_matrix.yaml's CUDA releases (`gcc_max`, `gcc_broken`, `gcc_source`), not from what
the code printed."""
from __future__ import annotations

import pytest

from envcheck.model import ERROR, WARNING, Finding, Remedy, Skipped
from envcheck.rules.gcc import gcc_vs_toolkit

MATRIX_FIX = "update envcheck (or --matrix FILE)"
OVERRIDE = " (CUDA >= 11 also takes -allow-unsupported-compiler, at your own risk)"
NVCC_STD_FUNCTION = "std_function.h:435:145: error: parameter packs not expanded with '...'"


def facts(cuda, gcc=None, host=None, installed=()):
    """A host with toolkit `cuda`, `gcc` first on PATH, nvcc's own host compiler `host` (a dict
    as the probe writes it) and the versioned gcc-N installed ((path, version) pairs)."""
    nvcc = {"path": "/usr/local/cuda/bin/nvcc", "version": cuda}
    if host is not None:
        nvcc["host_compiler"] = host
    return {"schema": 1, "origin": "probe", "hostname": "n1", "cuda": {"version": cuda, "nvcc": nvcc},
            "gcc": {"version": gcc, "installed": [{"path": p, "version": v} for p, v in installed]}}


def too_new(gcc, how, cuda, limit, fix, m):
    return Finding(ERROR, "gcc-too-new", "gcc",
                   f"gcc {gcc}{how} is newer than CUDA {cuda} accepts (gcc <= {limit}): nvcc stops with '#error -- "
                   f"unsupported GNU version! gcc versions later than {limit} are not supported!'",
                   fix, m.find_cuda(cuda)["gcc_source"])


def install(n, override=""):
    return f"install gcc-{n} g++-{n} and build with them: export CC=gcc-{n} CXX=g++-{n} (nvcc -ccbin g++-{n})" + override


def test_the_sample_a_gcc_newer_than_the_toolkit_accepts(m):
    # docs/check-and-matrix.md's sample: gcc 9.4.0 with CUDA 10.0.130 (gcc_max 7); before CUDA 11
    # there is no -allow-unsupported-compiler to mention
    found = gcc_vs_toolkit(facts("10.0.130", gcc="9.4.0"), m)
    assert found == [too_new("9.4.0", "", "10.0.130", 7, install(7), m)]
    assert found[0].remedies == (Remedy("install gcc-7", install(7), (("host_compiler", "7"),),
                                        "CUDA 10.0.130 needs gcc <= 7"),)


def test_from_cuda_11_the_fix_mentions_the_override(m):
    # CUDA 11.0.3: gcc_max 9; the first major with -allow-unsupported-compiler
    found = gcc_vs_toolkit(facts("11.0.3", gcc="10.3.0"), m)
    assert found == [too_new("10.3.0", "", "11.0.3", 9, install(9, OVERRIDE), m)]
    assert found[0].remedies == (Remedy("install gcc-9", install(9, OVERRIDE), (("host_compiler", "9"),),
                                        "CUDA 11.0.3 needs gcc <= 9"),)


def test_a_gcc_the_toolkit_accepts_already_installed_is_used_not_installed(m):
    # CUDA 12.4.1: gcc_max 13; gcc-13 and gcc-11 installed (and an unreadable one): the newest that fits
    installed = [("/usr/bin/gcc-11", "11.4.0"), ("/usr/bin/gcc-x", "unknown"), ("/usr/bin/gcc-13", "13.2.0"),
                 ("/usr/bin/gcc-14", "14.1.0")]
    found = gcc_vs_toolkit(facts("12.4.1", gcc="14.1.0", installed=installed), m)
    fix = "build with the gcc-13 already installed: export CC=gcc-13 CXX=g++-13 (nvcc -ccbin g++-13)"
    assert found == [too_new("14.1.0", "", "12.4.1", 13, fix, m)]
    assert found[0].remedies == (Remedy("install gcc-13", fix, (("host_compiler", "13"),),
                                        "CUDA 12.4.1 needs gcc <= 13"),)


def test_an_older_accepted_gcc_already_installed_is_the_one_used(m):
    # CUDA 12.4.1 accepts up to 13; only gcc-11 is installed: the remedy is gcc-11, not 13
    found = gcc_vs_toolkit(facts("12.4.1", gcc="14.1.0", installed=[("/usr/bin/gcc-11", "11.4.0")]), m)
    fix = "build with the gcc-11 already installed: export CC=gcc-11 CXX=g++-11 (nvcc -ccbin g++-11)"
    assert found == [too_new("14.1.0", "", "12.4.1", 13, fix, m)]
    assert found[0].remedies == (Remedy("install gcc-11", fix, (("host_compiler", "11"),),
                                        "CUDA 12.4.1 needs gcc <= 13"),)


def test_the_compiler_nvcc_runs_is_judged_and_named_with_how_it_was_chosen(m):
    # the module's docstring: nvcc's own host compiler (here gcc 14 given with -ccbin), not the
    # first gcc on PATH (gcc 11, which CUDA 12.4 accepts)
    host = {"version": "14.1.0", "path": "/usr/bin/g++-14", "how": "-ccbin in NVCC_PREPEND_FLAGS"}
    found = gcc_vs_toolkit(facts("12.4.1", gcc="11.4.0", host=host), m)
    assert found == [too_new("14.1.0", " (/usr/bin/g++-14, chosen by -ccbin in NVCC_PREPEND_FLAGS)", "12.4.1", 13,
                             install(13, OVERRIDE), m)]


def test_a_host_compiler_without_path_or_how_is_named_generically(m):
    found = gcc_vs_toolkit(facts("12.4.1", gcc="11.4.0", host={"version": "14.1.0"}), m)
    assert found == [too_new("14.1.0", " (host compiler, chosen by nvcc)", "12.4.1", 13, install(13, OVERRIDE), m)]


def test_the_first_gcc_on_path_when_nvcc_s_own_was_not_resolved(m):
    # host compiler with a path but no version: the PATH gcc is judged (14 > 13)
    assert gcc_vs_toolkit(facts("12.4.1", gcc="14.1.0", host={"path": "/usr/bin/g++"}), m) == [
        too_new("14.1.0", "", "12.4.1", 13, install(13, OVERRIDE), m)]


@pytest.mark.parametrize("cuda,gcc", [
    ("12.4.1", "13.2.0"),   # exactly the limit
    ("12.4.1", "9.4.0"),
    ("10.2.89", "8.4.0"),
    ("11.5.0", "10.3.0"),   # below the broken gcc 11
])
def test_a_gcc_at_or_below_the_limit_is_no_finding(m, cuda, gcc):
    assert gcc_vs_toolkit(facts(cuda, gcc=gcc), m) == []


@pytest.mark.parametrize("cuda", ["11.5.0", "11.5.2"])
def test_a_gcc_known_to_break_the_build_is_a_warning(m, cuda):
    # compat_matrix.yaml: CUDA 11.5.x with gcc 11 (its gcc_max) fails in std_function.h
    assert gcc_vs_toolkit(facts(cuda, gcc="11.2.0"), m) == [Finding(
        WARNING, "gcc-known-broken", "gcc",
        f"gcc 11.2.0 passes CUDA {cuda}'s version check, but builds fail: \"{NVCC_STD_FUNCTION}\".",
        "build with gcc-10: export CC=gcc-10 CXX=g++-10 (nvcc -ccbin g++-10)", "https://github.com/NVIDIA/nccl/issues/102")]


def test_the_same_gcc_with_the_next_toolkit_is_no_finding(m):
    assert gcc_vs_toolkit(facts("11.6.0", gcc="11.2.0"), m) == []


def test_nothing_to_judge_without_a_toolkit_or_a_compiler(m):
    assert gcc_vs_toolkit(facts(None, gcc="14.1.0"), m) == []
    assert gcc_vs_toolkit(facts("12.4.1"), m) == []                   # no gcc, no host compiler
    assert gcc_vs_toolkit(facts("12.4.1", gcc="fourteen"), m) == []   # an unreadable version


def test_a_host_compiler_without_a_version_is_a_skipped_check(m):
    skipped = Skipped("gcc_vs_toolkit", "gcc", "the host compiler nvcc uses reported no version",
                      "check `gcc --version` on the node")
    assert gcc_vs_toolkit(facts("12.4.1", host={"path": "/usr/bin/g++"}), m) == [skipped]
    # said before the toolkit is looked up: a toolkit the matrix lacks does not hide it
    assert gcc_vs_toolkit(facts("99.0", host={"path": "/usr/bin/g++"}), m) == [skipped]


def test_a_toolkit_the_matrix_lacks_is_a_skipped_check(m):
    assert gcc_vs_toolkit(facts("99.0", gcc="14.1.0"), m) == [
        Skipped("gcc_vs_toolkit", "gcc", "CUDA 99.0 not in the matrix", MATRIX_FIX)]
