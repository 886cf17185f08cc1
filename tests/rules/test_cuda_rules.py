"""envcheck/rules/cuda.py, each rule called alone and each finding compared whole (code, severity,
component, message, fix, source) with its remedies. The expected values come from the rules'
docstrings, docs/check-and-matrix.md and compat_matrix.yaml (torch releases, their variants,
Pythons and paired torchvision; the CUDA families' driver floors), not from what the code printed."""
from __future__ import annotations

import pytest

from envcheck.model import ERROR, INFO, WARNING, Finding, Remedy
from envcheck.rules.cuda import cuda_not_found, cuda_unknown, nvcc_vs_torch, torch_pypi_default

MATRIX_FIX = "update envcheck (or pass --matrix FILE with a newer compat_matrix.yaml)"
IDX = "https://download.pytorch.org/whl"


def source(m, name):
    return m.data["sources"][name]


def facts(**sections):
    return dict({"schema": 1, "origin": "probe", "hostname": "n1"}, **sections)


def toolkits(*versions, used):
    """The probe's cuda section: a toolkit per version under /usr/local/cuda-X.Y, `used` on PATH."""
    tks = [{"path": f"/usr/local/cuda-{v.rsplit('.', 1)[0] if v.count('.') == 2 else v}", "version": v}
           for v in versions]
    return {"toolkits": tks, "symlink": {"path": "/usr/local/cuda", "target": None},
            "nvcc": {"path": "/usr/bin/nvcc", "version": used}, "version": used}


def torch(version, tag, cuda):
    return {"packages": {"torch": {"version": f"{version}+{tag}" if tag else version}},
            "torch": {"version": version, "local": tag, "cuda": cuda, "cuda_source": "flag" if cuda else None}}


# ---------------------------------------------------------------- cuda_unknown
def test_an_unreadable_toolkit_version_says_the_toolkit_checks_were_skipped(m):
    assert cuda_unknown(facts(cuda={"version": "twelve"}), m) == [Finding(
        WARNING, "cuda-unknown", "cuda", "CUDA version 'twelve' cannot be read; toolkit checks were skipped.",
        "check `nvcc -V` and <toolkit>/version.json", source(m, "rn_t3"))]


@pytest.mark.parametrize("cuda,why", [
    # compat_matrix.yaml cuda.families: 12.x has the floor 525 (driver checks still use it) ...
    ("12.7", "driver checks use the CUDA 12.x family minimum (525)"),
    # ... 10.x none (no minor-version compatibility before 11) ...
    ("10.3", "its driver minimum and gcc limit are unknown"),
    # ... and there is no family 99 at all
    ("99.0", "its driver minimum, gcc limit and architectures are unknown"),
])
def test_a_toolkit_the_matrix_does_not_know_says_what_is_still_judged(m, cuda, why):
    assert cuda_unknown(facts(cuda={"version": cuda}), m) == [Finding(
        WARNING, "cuda-unknown", "cuda", f"The matrix does not know CUDA {cuda}; {why}.", MATRIX_FIX,
        source(m, "rn_t3"))]


def test_a_known_toolkit_or_none_is_no_finding(m):
    assert cuda_unknown(facts(cuda={"version": "12.4.1"}), m) == []
    assert cuda_unknown(facts(cuda={"version": None}), m) == []


# ---------------------------------------------------------------- cuda_not_found
def test_a_probe_that_looked_and_found_no_toolkit_is_a_note(m):
    assert cuda_not_found(facts(cuda={"toolkits": [], "version": None}), m) == [Finding(
        INFO, "cuda-not-found", "cuda",
        "No CUDA toolkit found: fine for pip-installed torch (it bundles the CUDA runtime), but building CUDA "
        "extensions fails with 'nvcc: command not found' / 'CUDA_HOME environment variable is not set'.",
        "install a toolkit matching torch's CUDA if you build extensions", source(m, "rn_t3"))]


@pytest.mark.parametrize("cuda", [
    {"version": None},                                                   # nobody looked for toolkits
    {"toolkits": [{"path": "/usr/local/cuda-12.4", "version": "12.4.1"}], "version": None},  # one, not in use
    {"toolkits": [], "version": "12.4.1"},                               # nvcc found outside the known places
])
def test_a_toolkit_found_or_not_looked_for_is_no_note(m, cuda):
    assert cuda_not_found(facts(cuda=cuda), m) == []


# ---------------------------------------------------------------- nvcc_vs_torch
MAJOR = ("The detected CUDA version ({t}) mismatches the version that was used to compile PyTorch ({tc}). Please "
         "make sure to use the same CUDA versions.")


def test_a_major_mismatch_with_a_torch_build_for_nvcc_offers_that_build_then_torchs_toolkit(m):
    # torch 2.4.0 has cu118, cu121, cu124 (the matrix): nvcc 11.8 gets the cu118 build, forced (the
    # same release is installed), with its paired torchvision 0.19.0; or a CUDA 12.1 toolkit
    f = facts(cuda=toolkits("11.8.0", used="11.8.0"), python={"version": "3.10.12"}, **torch("2.4.0", "cu121", "12.1"))
    cmd = f"pip install --force-reinstall torch==2.4.0 torchvision==0.19.0 --index-url {IDX}/cu118"
    point = "point CUDA_HOME and PATH at a CUDA 12.1 toolkit (envcheck install-cuda 12.1)"
    found = nvcc_vs_torch(f, m)
    assert found == [Finding(
        ERROR, "nvcc-torch-major-mismatch", "cuda",
        "nvcc is CUDA 11.8.0 but torch 2.4.0+cu121 was built with CUDA 12.1: building extensions fails with '"
        + MAJOR.format(t="11.8", tc="12.1") + "'", cmd, source(m, "torch_previous"))]
    assert found[0].remedies == (
        Remedy("install torch 2.4.0+cu118", cmd, (("torch", "2.4.0+cu118"), ("torchvision", "0.19.0+cu118")),
               "nvcc 11.8 needs a torch built for CUDA 11.8"),
        # the newest 12.1 release (compat_matrix: 12.1.1), pointed at, since none is installed
        Remedy("install CUDA 12.1.1", point, (("cuda", "12.1.1"),), "torch 2.4.0+cu121 needs nvcc 12.1"))


@pytest.mark.parametrize("python,newer,tv", [
    ("3.8.10", "2.4.1", "0.19.1"),    # the last release with a cu118 build and a cp38 wheel (2.5.0 starts at 3.9)
    ("3.10.12", "2.7.1", "0.22.1"),   # the last release with a cu118 build at all
])
def test_a_release_without_a_build_for_nvcc_points_at_torchs_toolkit_then_a_newer_release(m, python, newer, tv):
    # torch 1.1.0 has cu90 and cu100 only: no 11.x build. Its CUDA 10.0 toolkit is installed beside
    # 11.8, so the fix uses it; the other way out is the newest torch built for CUDA 11.8 whose
    # wheels cover the host's Python
    f = facts(cuda=toolkits("10.0.130", "11.8.0", used="11.8.0"), python={"version": python},
              **torch("1.1.0", "cu100", "10.0"))
    use = ("use the CUDA 10.0 already installed (/usr/local/cuda-10.0): export PATH=/usr/local/cuda-10.0/bin:$PATH "
           "CUDA_HOME=/usr/local/cuda-10.0")
    found = nvcc_vs_torch(f, m)
    assert found == [Finding(
        ERROR, "nvcc-torch-major-mismatch", "cuda",
        "nvcc is CUDA 11.8.0 but torch 1.1.0+cu100 was built with CUDA 10.0: building extensions fails with '"
        + MAJOR.format(t="11.8", tc="10.0") + "'", use, source(m, "torch_previous"))]
    cmd = f"pip install torch=={newer} torchvision=={tv} --index-url {IDX}/cu118"   # another release: no force
    assert found[0].remedies == (
        Remedy("install CUDA 10.0.130", use, (("cuda", "10.0.130"),), "torch 1.1.0+cu100 needs nvcc 10.0"),
        Remedy(f"install torch {newer}+cu118", cmd, (("torch", f"{newer}+cu118"), ("torchvision", f"{tv}+cu118")),
               "nvcc 11.8 needs a torch built for CUDA 11.8"))


def test_no_newer_release_for_nvcc_and_the_hosts_python_leaves_the_toolkit_only(m):
    # no torch release with a cu118 build has a cp37 wheel (2.0.0, the first, starts at 3.8)
    f = facts(cuda=toolkits("11.8.0", used="11.8.0"), python={"version": "3.7.3"}, **torch("1.1.0", "cu100", "10.0"))
    point = "point CUDA_HOME and PATH at a CUDA 10.0 toolkit (envcheck install-cuda 10.0)"
    found = nvcc_vs_torch(f, m)
    assert [(x.code, x.fix) for x in found] == [("nvcc-torch-major-mismatch", point)]
    assert found[0].remedies == (
        Remedy("install CUDA 10.0.130", point, (("cuda", "10.0.130"),), "torch 1.1.0+cu100 needs nvcc 10.0"),)


def test_a_minor_mismatch_before_cuda_11_is_an_error_and_torchs_own_build_is_no_remedy(m):
    # nvcc 10.1 vs torch 1.1.0+cu100: no cu101 build, the same-major one is torch's own cu100, so
    # neither it nor another release is offered; only the CUDA 10.0 toolkit
    f = facts(cuda=toolkits("10.1.243", used="10.1.243"), python={"version": "3.7.3"},
              **torch("1.1.0", "cu100", "10.0"))
    point = "point CUDA_HOME and PATH at a CUDA 10.0 toolkit (envcheck install-cuda 10.0)"
    found = nvcc_vs_torch(f, m)
    assert found == [Finding(
        ERROR, "nvcc-torch-minor-mismatch", "cuda",
        "nvcc is CUDA 10.1.243 but torch 1.1.0+cu100 was built with CUDA 10.0, and before CUDA 11 there is no "
        "minor-version compatibility: building extensions fails with '" + MAJOR.format(t="10.1", tc="10.0") + "'",
        point, source(m, "torch_previous"))]
    assert found[0].remedies == (
        Remedy("install CUDA 10.0.130", point, (("cuda", "10.0.130"),), "torch 1.1.0+cu100 needs nvcc 10.0"),)


def test_a_minor_mismatch_from_cuda_11_is_a_warning_with_the_build_for_nvcc(m):
    f = facts(cuda=toolkits("12.4.1", used="12.4.1"), **torch("2.4.0", "cu121", "12.1"))
    found = nvcc_vs_torch(f, m)
    assert found == [Finding(
        WARNING, "nvcc-torch-minor-mismatch", "cuda",
        "nvcc is CUDA 12.4.1 but torch 2.4.0+cu121 was built with CUDA 12.1: extension builds warn 'The detected "
        "CUDA version (12.4) has a minor version mismatch with the version that was used to compile PyTorch (12.1). "
        "Most likely this shouldn't be a problem.'",
        f"pip install --force-reinstall torch==2.4.0 torchvision==0.19.0 --index-url {IDX}/cu124",
        source(m, "torch_previous"))]
    assert found[0].remedies == ()


def test_a_minor_mismatch_on_cuda_11_is_a_warning_too(m):
    # CUDA 11 is the first major with minor-version compatibility: 11.7 against torch's 11.8 warns
    f = facts(cuda=toolkits("11.7.1", used="11.7.1"), **torch("2.0.1", "cu118", "11.8"))
    assert nvcc_vs_torch(f, m) == [Finding(
        WARNING, "nvcc-torch-minor-mismatch", "cuda",
        "nvcc is CUDA 11.7.1 but torch 2.0.1+cu118 was built with CUDA 11.8: extension builds warn 'The detected "
        "CUDA version (11.7) has a minor version mismatch with the version that was used to compile PyTorch (11.8). "
        "Most likely this shouldn't be a problem.'",
        "pip install --force-reinstall torch==2.0.1 torchvision==0.15.2",   # cu117 is 2.0.1's plain PyPI build
        source(m, "torch_previous"))]


@pytest.mark.parametrize("cuda,torch_facts", [
    (None, torch("2.4.0", "cu121", "12.1")),           # no nvcc in use: nothing to compare
    ("12.4.1", torch("2.1.0", "cpu", None)),           # a CPU build: no CUDA to compare with
    ("12.4.1", torch("not-a-version", None, None)),    # torch unreadable: cuda_unknown's and torch's rules say so
])
def test_nvcc_against_torch_needs_both_cudas(m, cuda, torch_facts):
    tk = toolkits("12.4.1", used=cuda) if cuda else toolkits(used=None)
    assert nvcc_vs_torch(facts(cuda=tk, **torch_facts), m) == []


def test_a_plain_pypi_torch_says_which_build_it_is_taken_for(m):
    f = facts(cuda=toolkits("11.8.0", used="11.8.0"), python={"version": "3.10.12"}, **torch("2.4.0", None, None))
    found = nvcc_vs_torch(f, m)
    assert [(x.severity, x.code, x.message) for x in found] == [(
        ERROR, "nvcc-torch-major-mismatch",
        "nvcc is CUDA 11.8.0 but torch 2.4.0 (a plain torch==2.4.0 from PyPI is the cu121 build) was built with "
        "CUDA 12.1: building extensions fails with '" + MAJOR.format(t="11.8", tc="12.1") + "'")]


def test_the_same_major_minor_is_no_finding(m):
    f = facts(cuda=toolkits("12.1.1", used="12.1.1"), **torch("2.4.0", "cu121", "12.1"))
    assert nvcc_vs_torch(f, m) == []


# ---------------------------------------------------------------- torch_pypi_default
PYPI_240 = "https://pypi.org/project/torch/2.4.0/"   # the release's own source in the matrix


@pytest.mark.parametrize("cuda", [None, "12.1", "12.1.105"])
def test_a_plain_torch_on_its_pypi_builds_cuda_or_without_a_toolkit_is_a_note(m, cuda):
    f = facts(**torch("2.4.0", None, None))
    if cuda:
        f["cuda"] = {"version": cuda}
    assert torch_pypi_default(f, m) == [Finding(
        INFO, "torch-pypi-default-variant", "torch",
        "A plain torch==2.4.0 is taken to be the cu121 build PyPI served (CUDA 12.1).",
        "give the variant explicitly (2.4.0+cu121) if this torch came from elsewhere", PYPI_240)]


@pytest.mark.parametrize("cuda,fix", [
    # the release has a cu124 build: install it (forced: 2.4.0 is installed already)
    ("12.4", f"pip install --force-reinstall torch==2.4.0 torchvision==0.19.0 --index-url {IDX}/cu124"),
    # and none for CUDA 10.x
    ("10.2", "torch 2.4.0 has no build for CUDA 10.2; use a CUDA 12.1 toolkit"),
])
def test_a_plain_torch_beside_another_toolkit_is_a_warning(m, cuda, fix):
    f = dict(facts(**torch("2.4.0", None, None)), cuda={"version": cuda})
    assert torch_pypi_default(f, m) == [Finding(
        WARNING, "torch-pypi-default-variant", "torch",
        f"A plain torch==2.4.0 means the cu121 build PyPI served (CUDA 12.1), not one for the local CUDA {cuda} "
        f"toolkit; pip never picks the variant from the toolkit.", fix, PYPI_240)]


def test_a_tagged_torch_is_no_pypi_default(m):
    assert torch_pypi_default(facts(**torch("2.4.0", "cu121", "12.1")), m) == []
