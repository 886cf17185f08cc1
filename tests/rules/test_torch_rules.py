"""envcheck/rules/torch.py, each rule called alone and each finding compared whole (code, severity,
component, message, fix, source) with its remedies. The expected values come from the rules'
docstrings, docs/check-and-matrix.md and compat_matrix.yaml (a release's variants, PyPI's default,
paired torchvision and torchaudio; numpy2 and numpy_api), not from what the code printed."""
from __future__ import annotations

import copy

import pytest

from envcheck.facts.from_flags import stack_facts
from envcheck.model import ERROR, WARNING, Finding, Remedy, Skipped
from envcheck.rules.torch import (numpy_older_than_build, numpy_vs_torch, torch_cpu_with_gpus, torch_unknown,
                                  torchaudio_pairing, torchvision_pairing)

MATRIX_FIX = "update envcheck (or pass --matrix FILE with a newer compat_matrix.yaml)"
IDX = "https://download.pytorch.org/whl"
NMS = "import fails with 'RuntimeError: operator torchvision::nms does not exist' or \"Couldn't load custom C++ ops\""
SYMBOL = "import fails with 'OSError: .../libtorchaudio.so: undefined symbol: ...'"


def source(m, name):
    return m.data["sources"][name]


def stack(torch=None, tag=None, cuda=None, **packages):
    """A probe-shaped document: torch `version+tag` (its CUDA), other packages by name."""
    f = {"schema": 1, "origin": "probe", "hostname": "n1", "packages": {}}
    if torch:
        f["packages"]["torch"] = {"version": f"{torch}+{tag}" if tag else torch}
        f["torch"] = {"version": torch, "local": tag, "cuda": cuda, "cuda_source": "flag" if cuda else None}
    for name, v in packages.items():
        if name in ("python", "numpy"):
            f[name] = {"version": v}
        else:
            f["packages"][name] = {"version": v}
    return f


# ---------------------------------------------------------------- torch_unknown
def test_an_unreadable_torch_version_skips_the_torch_checks(m):
    f = {"packages": {"torch": {"version": "garbage"}}}
    assert torch_unknown(f, m) == [Finding(
        WARNING, "torch-unknown", "torch", "torch version 'garbage' cannot be read; torch checks were skipped.",
        "check `pip show torch`", source(m, "torch_previous"))]


def test_a_release_the_matrix_does_not_know(m):
    assert torch_unknown(stack("3.0.0"), m) == [Finding(
        WARNING, "torch-unknown", "torch",
        "The matrix does not know torch 3.0.0; its CUDA variants, arch list, companions and Python versions were "
        "not checked.", MATRIX_FIX, source(m, "torch_previous"))]


def test_a_source_build_has_no_known_variant(m):
    f = {"packages": {"torch": {"version": "2.4.0+git1234abc"}}}
    assert torch_unknown(f, m) == [Finding(
        WARNING, "torch-variant-unknown", "torch",
        "torch 2.4.0 (2.4.0+git1234abc) is a pre-release or a source/vendor build, not a PyPI wheel with a +cuXYZ "
        "tag, so which CUDA build it is is unknown; the CUDA checks for torch were skipped.",
        "give the variant, e.g. --torch 2.4.0+cu124", "https://pypi.org/project/torch/2.4.0/")]


def test_a_plain_release_pypi_never_served_has_no_known_variant(m):
    # 1.8.2 (LTS) is not on PyPI (the matrix: pypi none), so a plain 1.8.2 is no default build
    rec = m.torch("1.8.2")
    f = {"packages": {"torch": {"version": "1.8.2"}}}
    assert torch_unknown(f, m) == [Finding(
        WARNING, "torch-variant-unknown", "torch",
        "torch 1.8.2 is not on PyPI and carries no +cuXYZ tag, so which CUDA build it is is unknown; the CUDA checks "
        "for torch were skipped.", f"give the variant, e.g. --torch 1.8.2+{list(rec['variants'])[-1]}", rec["source"])]


def test_a_build_the_release_does_not_have(m):
    assert torch_unknown(stack("2.4.0", "cu117", "11.7"), m) == [Finding(
        WARNING, "torch-variant-unknown", "torch",
        "The matrix knows no cu117 build of torch 2.4.0 (known: cu118, cu121, cu124); pip would fail with 'No "
        "matching distribution found for torch==2.4.0+cu117' unless it came from elsewhere.",
        # PyPI's own build (cu121) of the same release: forced, since 2.4.0 is installed
        "pip install --force-reinstall torch==2.4.0 torchvision==0.19.0", "https://pypi.org/project/torch/2.4.0/")]


@pytest.mark.parametrize("tag,cuda", [("cpu", None), ("cu124", "12.4"), (None, None)])
def test_a_known_build_is_no_finding(m, tag, cuda):
    assert torch_unknown(stack("2.4.0", tag, cuda), m) == []


# ---------------------------------------------------------------- torch_cpu_with_gpus
def test_a_cpu_torch_on_a_gpu_host_is_an_error_with_pypis_cuda_build(m):
    f = dict(stack("2.4.0", "cpu"), gpus=[{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}])
    cmd = "pip install --force-reinstall torch==2.4.0 torchvision==0.19.0"
    found = torch_cpu_with_gpus(f, m)
    assert found == [Finding(
        ERROR, "torch-cpu-build", "torch",
        "torch 2.4.0+cpu is a CPU-only build on a host with GPUs: torch.cuda.is_available() is False, .cuda() fails "
        "with 'Torch not compiled with CUDA enabled', and nothing trains on the GPUs.", cmd,
        "https://pypi.org/project/torch/2.4.0/")]
    assert found[0].remedies == (Remedy("install torch 2.4.0+cu121", cmd, (("torch", "2.4.0+cu121"), ("torchvision", "0.19.0")),
                                        "the GPUs need a CUDA build of torch 2.4.0"),)
    # a GPU known by its name alone (the matrix gives its compute capability)
    assert torch_cpu_with_gpus(dict(f, gpus=[{"index": 0, "name": "NVIDIA A100-SXM4-80GB"}]), m) == found
    assert torch_cpu_with_gpus(dict(f, gpus=[]), m) == []
    assert torch_cpu_with_gpus(dict(stack("2.4.0", "cu121", "12.1"), gpus=f["gpus"]), m) == []


def test_a_cpu_torch_of_a_release_pypi_never_served_or_unknown(m):
    gpus = [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]
    # 1.8.2 (LTS): no PyPI build; its newest CUDA build (cu111), from the LTS index
    rec = m.torch("1.8.2")
    cmd = f"pip install torch==1.8.2+cu111 torchvision==0.9.2+cu111 --extra-index-url {IDX}/lts/1.8/cu111"
    found = torch_cpu_with_gpus(dict(stack("1.8.2", "cpu"), gpus=gpus), m)
    assert [(x.fix, x.source) for x in found] == [(cmd, rec["source"])]
    # a release the matrix does not know: no command to give
    found = torch_cpu_with_gpus(dict(stack("3.0.0", "cpu"), gpus=gpus), m)
    assert [(x.message, x.fix, x.source, x.remedies) for x in found] == [(
        "torch 3.0.0+cpu is a CPU-only build on a host with GPUs: torch.cuda.is_available() is False, .cuda() fails "
        "with 'Torch not compiled with CUDA enabled', and nothing trains on the GPUs.",
        "install a CUDA build of torch", source(m, "torch_previous"), ())]


# ---------------------------------------------------------------- companions
def test_an_unreadable_or_unknown_companion_is_said(m):
    assert torchvision_pairing(stack("2.4.0", torchvision="junk"), m) == [Finding(
        WARNING, "torchvision-unknown", "torchvision", "torchvision version 'junk' cannot be read.",
        "check `pip show torchvision`", source(m, "vision_table"))]
    assert torchaudio_pairing(stack("2.4.0", torchaudio="0.99.0"), m) == [Finding(
        WARNING, "torchaudio-unknown", "torchaudio",
        "The matrix does not know torchaudio 0.99.0; its pairing with torch was not checked.", MATRIX_FIX,
        source(m, "audio_table"))]
    assert torchvision_pairing(stack(torchvision="0.19.0"), m) == []        # no torch to pair with
    assert torchvision_pairing(stack("3.0.0", torchvision="0.19.0"), m) == []   # a torch the matrix lacks


def test_a_torchvision_not_paired_with_torch_before_1_2_installs_from_torchs_own_index(m):
    # torch 1.1.0 pairs with torchvision 0.3.0; its cu100 build is not PyPI's (cu90)
    fix = (f"pip install torchvision==0.3.0 (with the torch cu100 index: pip install --no-index torch==1.1.0 "
           f"torchvision==0.3.0 -f {IDX}/cu100/torch_stable.html)")
    found = torchvision_pairing(stack("1.1.0", "cu100", "10.0", torchvision="0.4.0"), m)
    assert found == [Finding(ERROR, "torchvision-mismatch", "torchvision",
                             f"torchvision 0.4.0 is not the release paired with torch 1.1.0 (0.3.0): {NMS}.", fix,
                             source(m, "vision_table"))]
    assert found[0].remedies == (Remedy("install torchvision 0.3.0+cu100", fix, (("torchvision", "0.3.0+cu100"),),
                                        "torch 1.1.0 pairs with torchvision 0.3.0"),)


def test_a_torchaudio_not_paired_with_a_plain_pypi_torch(m):
    found = torchaudio_pairing(stack("2.4.0", torchaudio="2.3.0"), m)
    assert found == [Finding(ERROR, "torchaudio-mismatch", "torchaudio",
                             f"torchaudio 2.3.0 is not the release paired with torch 2.4.0 (2.4.0): {SYMBOL}.",
                             "pip install torchaudio==2.4.0", source(m, "audio_table"))]
    assert found[0].remedies == (Remedy("install torchaudio 2.4.0", "pip install torchaudio==2.4.0",
                                        (("torchaudio", "2.4.0"),), "torch 2.4.0 pairs with torchaudio 2.4.0"),)


def test_a_torch_with_no_torchaudio_release_says_to_uninstall_it(m):
    found = torchaudio_pairing(stack("1.0.0", torchaudio="0.2.0"), m)   # 1.0.0 has no torchaudio
    assert found == [Finding(ERROR, "torchaudio-mismatch", "torchaudio",
                             f"torchaudio 0.2.0 is not the release paired with torch 1.0.0 (none): {SYMBOL}.",
                             "uninstall torchaudio: torch 1.0.0 has no matching torchaudio release",
                             source(m, "audio_table"))]
    assert found[0].remedies == ()


def test_the_paired_release_is_no_finding_in_any_spelling(m):
    assert torchvision_pairing(stack("2.4.0", "cu124", "12.4", torchvision="0.19.0+cu124"), m) == []
    assert torchaudio_pairing(stack("2.4.0", torchaudio="2.4"), m) == []
    assert torchvision_pairing(stack("2.4.0", "cpu", torchvision="0.19.0+cpu"), m) == []


def test_a_torchvision_of_another_cuda_major_is_an_error_fixed_by_torchs_own_install(m):
    cmd = f"pip install --force-reinstall torch==2.4.0 torchvision==0.19.0 --index-url {IDX}/cu124"
    found = torchvision_pairing(stack("2.4.0", "cu124", "12.4", torchvision="0.19.0+cu118"), m)
    assert found == [Finding(
        ERROR, "torchvision-cuda-mismatch", "torchvision",
        "torchvision 0.19.0+cu118 is built for CUDA 11.8 but torch 2.4.0+cu124 for CUDA 12.4: import fails with "
        "'Detected that PyTorch and torchvision were compiled with different CUDA major versions. PyTorch has CUDA "
        "Version=12.4 and torchvision has CUDA Version=11.8.'", cmd, source(m, "vision_table"))]
    assert found[0].remedies == (Remedy("install torch 2.4.0+cu124", cmd,
                                        (("torch", "2.4.0+cu124"), ("torchvision", "0.19.0+cu124")),
                                        "torch 2.4.0+cu124 needs torchvision built for CUDA 12.4"),)


def test_a_torchvision_of_another_cuda_minor_is_a_warning(m):
    found = torchvision_pairing(stack("2.4.0", None, None, torchvision="0.19.0+cu124"), m)   # PyPI's is cu121
    assert found == [Finding(
        WARNING, "torchvision-cuda-mismatch", "torchvision",
        "torchvision 0.19.0+cu124 is built for CUDA 12.4 but torch 2.4.0 (a plain torch==2.4.0 from PyPI is the cu121 "
        "build) for CUDA 12.1: older torchvision releases refuse this with 'Detected that PyTorch and torchvision were "
        "compiled with different CUDA versions'; newer ones compare majors only, and the custom ops still link another "
        "CUDA runtime", "pip install --force-reinstall torch==2.4.0 torchvision==0.19.0", source(m, "vision_table"))]


@pytest.mark.parametrize("torch,tag,cuda,audio,fix", [
    # torchaudio compares major.minor: any difference is an error; the fix swaps torchaudio's build alone
    ("2.4.0", "cu124", "12.4", "2.4.0", f"pip install --force-reinstall --no-deps torchaudio==2.4.0 --index-url {IDX}/cu124"),
    ("2.4.0", "cu121", "12.1", "2.4.0", "pip install --force-reinstall --no-deps torchaudio==2.4.0"),  # PyPI's build
    ("1.12.1", "cu116", "11.6", "0.12.1", f"pip install torchaudio==0.12.1+cu116 --extra-index-url {IDX}/cu116"),
    ("1.10.0", "cu113", "11.3", "0.10.0", f"pip install torchaudio==0.10.0+cu113 -f {IDX}/torch_stable.html"),
    # each era's first release: 1.11 the extra index, 2.0 the forced swap
    ("1.11.0", "cu113", "11.3", "0.11.0", f"pip install torchaudio==0.11.0+cu113 --extra-index-url {IDX}/cu113"),
    ("2.0.0", "cu118", "11.8", "2.0.1",
     f"pip install --force-reinstall --no-deps torchaudio==2.0.1 --index-url {IDX}/cu118"),
])
def test_a_torchaudio_of_another_cuda_is_an_error_fixed_by_its_own_build(m, torch, tag, cuda, audio, fix):
    other = {"2.4.0": "cu118", "2.0.0": "cu117"}.get(torch, "cu102")
    found = torchaudio_pairing(stack(torch, tag, cuda, torchaudio=f"{audio}+{other}"), m)
    theirs = {"cu118": "11.8", "cu117": "11.7"}.get(other, "10.2")
    assert found == [Finding(
        ERROR, "torchaudio-cuda-mismatch", "torchaudio",
        f"torchaudio {audio}+{other} is built for CUDA {theirs} but torch {torch}+{tag} for CUDA {cuda}: import fails "
        f"with 'Detected that PyTorch and TorchAudio were compiled with different CUDA versions. PyTorch has CUDA "
        f"version {cuda} whereas TorchAudio has CUDA version {theirs}.'", fix, source(m, "audio_table"))]
    assert found[0].remedies == (Remedy(f"install torchaudio {audio}+{tag}", fix, (("torchaudio", f"{audio}+{tag}"),),
                                        f"torch {torch}+{tag} needs torchaudio built for CUDA {cuda}"),)


# ---------------------------------------------------------------- numpy 2
NUMPY2_SRC = "https://github.com/pytorch/pytorch/issues/132179"


@pytest.mark.parametrize("torch,python", [
    ("2.2.2", "3.10.12"), ("1.13.1", "3.10.12"),
    ("2.2.2", "3.9"),        # exactly numpy 2's first Python
    ("2.2.2", "three"),      # an unreadable Python rules nothing out
])
def test_a_torch_built_for_numpy_1_under_numpy_2_is_an_error(m, torch, python):
    f = stack(torch, python=python, numpy="2.0.1")
    assert numpy_vs_torch(f, m) == [Finding(
        ERROR, "torch-numpy2", "torch",
        f"torch {torch} was compiled against numpy 1.x but numpy 2.0.1 is installed: import torch prints 'A module "
        "that was compiled using NumPy 1.x cannot be run in NumPy 2.0.1 as it may crash' and 'Failed to initialize "
        "NumPy: _ARRAY_API not found', and tensor.numpy(), torch.from_numpy() and DataLoader workers fail with "
        "'RuntimeError: Numpy is not available'.",
        'pip install "numpy<2" (or upgrade to torch >= 2.3.0, the first release built for numpy 2)', NUMPY2_SRC)]


def test_an_old_torchvision_under_numpy_2_is_a_torchvision_warning(m):
    f = stack("2.3.0", python="3.10.12", numpy="2.0.1", torchvision="0.18.0")
    assert numpy_vs_torch(f, m) == [Finding(
        WARNING, "torchvision-numpy2", "torchvision",
        "torchvision 0.18.0 predates numpy 2 support (from 0.19.0) and numpy 2.0.1 is installed: parts of torchvision "
        "that use numpy fail under numpy 2.x.",
        'pip install "numpy<2" (or upgrade to torchvision >= 0.19.0 with its paired torch)',
        "https://github.com/pytorch/vision/issues/8460")]


@pytest.mark.parametrize("over", [
    dict(torch="2.3.0"),                     # the first release built for numpy 2
    dict(torchvision="0.19.0", torch="2.4.0"),
    dict(numpy="1.26.4"),                    # numpy 1
    dict(python="3.8.10"),                   # numpy 2 needs Python >= 3.9: never installed here
])
def test_no_numpy_2_finding(m, over):
    args = dict(dict(torch="2.2.2", python="3.10.12", numpy="2.0.1"), **over)
    assert numpy_vs_torch(stack(args.pop("torch"), **args), m) == []


def test_a_torch_whose_wheels_all_predate_numpy_2s_pythons_needs_no_numpy_version(m):
    # torch 1.1.0's wheels are for Python 2.7 - 3.7, all before numpy 2's 3.9: no numpy 2 is possible
    assert numpy_vs_torch(stack("1.1.0"), m) == []


def test_numpy_unknown_or_unreadable_is_a_skipped_check(m):
    assert numpy_vs_torch(stack("2.2.2", python="3.10.12"), m) == [Skipped(
        "numpy_vs_torch", "torch", "numpy version unknown (torch 2.2.2 fails under numpy 2.x)",
        "pass --numpy V, or audit the host")]
    assert numpy_vs_torch(stack("2.4.0", python="3.10.12", torchvision="0.18.0"), m) == [Skipped(
        "numpy_vs_torch", "torch", "numpy version unknown (torchvision 0.18.0 fails under numpy 2.x)",
        "pass --numpy V, or audit the host")]
    assert numpy_vs_torch(stack("2.2.2", python="3.10.12", numpy="two"), m) == [Skipped(
        "numpy_vs_torch", "torch", "numpy version 'two' cannot be read", "check `pip show numpy`")]
    # a probe that looked and found no numpy: torch runs without one
    assert numpy_vs_torch(dict(stack("2.2.2", python="3.10.12"), numpy={"version": None}), m) == []


# ---------------------------------------------------------------- numpy older than the build
def test_numpy_older_than_the_c_api_of_the_wheel_for_this_python(m):
    # numpy_api: torch 1.11.0's cp310 wheel needs API 0xf (numpy 1.22.0); numpy 1.21.5 is 0xe (1.20.0)
    f = stack("1.11.0", python="3.10.4", numpy="1.21.5")
    assert numpy_older_than_build(f, m) == [Finding(
        ERROR, "torch-numpy-too-old", "torch",
        "torch 1.11.0's wheels for Python 3.10 were compiled against numpy's C API 0xf (numpy >= 1.22.0) but numpy "
        "1.21.5 is installed: import torch warns 'Failed to initialize NumPy: module compiled against API version 0xf "
        "but this version of numpy is 0xe', and torch.from_numpy(), tensor.numpy() and DataLoader workers fail.",
        'pip install "numpy>=1.22.0,<2"', "https://github.com/danielgatis/rembg/issues/212")]


def test_numpy_older_than_any_api_the_matrix_names(m):
    # torch 0.2.0's builds (every Python) need 0xb (1.13.0); numpy 1.7.1 predates 0x9 (1.8.0)
    found = numpy_older_than_build(stack("0.2.0", python="2.7.18", numpy="1.7.1"), m)
    assert [x.message for x in found] == [
        "torch 0.2.0's builds were compiled against numpy's C API 0xb (numpy >= 1.13.0) but numpy 1.7.1 is installed: "
        "import torch warns 'Failed to initialize NumPy: module compiled against API version 0xb but this version of "
        "numpy is older', and torch.from_numpy(), tensor.numpy() and DataLoader workers fail."]


@pytest.mark.parametrize("f", [
    stack("1.11.0", python="3.10.4", numpy="1.22.0"),    # exactly the numpy of that API
    stack("1.11.0", python="3.9.7", numpy="1.21.5"),     # another Python's wheel: not listed
    stack("2.4.0", python="3.10.4", numpy="1.21.5"),     # a release not listed
    stack("1.11.0", python="3.10.4"),                    # numpy unknown: numpy_vs_torch says so
    stack("1.11.0", python="3.10.4", numpy="bad"),
])
def test_no_finding_where_numpy_is_new_enough_or_the_build_is_not_listed(m, f):
    assert numpy_older_than_build(f, m) == []


def test_which_pythons_wheel_unknown_is_a_skipped_check(m):
    assert numpy_older_than_build(stack("1.11.0", numpy="1.21.5"), m) == [Skipped(
        "numpy_older_than_build", "torch", "which Python's torch 1.11.0 wheel this is, is unknown (the numpy C API it "
        "needs depends on it)", "pass --python X.Y")]


@pytest.mark.parametrize("torch,tag,cuda,audio,fix", [
    # torch spelled with fewer fields is the same release: 1.11 is 1.11.0, 2 is 2.0.0
    ("1.11", "cu113", "11.3", "0.11.0", f"pip install torchaudio==0.11.0+cu113 --extra-index-url {IDX}/cu113"),
    ("2", "cu118", "11.8", "2.0.1", f"pip install --force-reinstall --no-deps torchaudio==2.0.1 --index-url {IDX}/cu118"),
])
def test_a_torch_version_with_fewer_fields_is_in_its_releases_pip_era(m, torch, tag, cuda, audio, fix):
    found = torchaudio_pairing(stack(torch, tag, cuda, torchaudio=f"{audio}+cu102"), m)
    assert [(x.code, x.fix) for x in found] == [("torchaudio-cuda-mismatch", fix)]


def test_numpy_exactly_at_an_apis_first_release_has_that_api(m):
    # numpy 1.20.0 introduced API 0xe
    (found,) = numpy_older_than_build(stack("1.11.0", python="3.10.4", numpy="1.20.0"), m)
    assert "but this version of numpy is 0xe'" in found.message


def test_a_build_for_numpy_2_is_pinned_without_an_upper_bound(m):
    import copy
    data = copy.deepcopy(m.data)
    data["torch"]["numpy_api"]["builds"].append({"torch": "2.4.0", "api": "0x12", "source": "https://example.org/x"})
    (found,) = numpy_older_than_build(stack("2.4.0", python="3.10.4", numpy="1.26.4"), type(m)(data, m.path))
    assert found.fix == 'pip install "numpy>=2.0.0"' and found.source == "https://example.org/x"


@pytest.mark.parametrize("version", ["2.1.0a0+git32f93b1", "1.9.0+gitabc", "2.4.0.dev20240601"])
def test_a_source_or_nightly_build_skips_the_numpy_api_check_whole(m, version):
    f = {"packages": {"torch": {"version": version}}, "python": {"version": "3.10.4"}, "numpy": {"version": "1.21.5"}}
    assert numpy_older_than_build(f, m) == [Skipped(
        "numpy_older_than_build", "torch", f"torch {version} is a source, nightly or vendor build: the numpy C API it "
        "was compiled against is that of its build environment, unknown here",
        "if import torch warns 'module compiled against API version 0xN but this version of numpy is 0xM', install "
        "the numpy release that introduced API 0xN (`envcheck matrix show`)")]


# ---------------------------------------------------------------- sixth round (the full mutation run)
def _edited(m, edit):
    """A copy of the matrix with `edit` applied to its data (cases the shipped matrix does not hold)."""
    data = copy.deepcopy(m.data)
    edit(data)
    return type(m)(data, m.path)


def _older_first(data):
    rec = next(r for r in data["torch"]["releases"] if r["version"] == "1.8.2")
    rec["variants"] = dict([("cu101", {"arch": "cu102-1.8"})] + list(rec["variants"].items()))


@pytest.fixture(scope="module")
def lts3(m):
    """The matrix with 1.8.2 (not on PyPI) given a third, older build: its newest is the last listed."""
    return _edited(m, _older_first)


def test_a_cpu_torch_not_on_pypi_is_told_its_newest_cuda_build(lts3):
    gpus = [{"index": 0, "name": "NVIDIA A100-SXM4-80GB", "compute_capability": "8.0"}]
    cmd = f"pip install torch==1.8.2+cu111 torchvision==0.9.2+cu111 --extra-index-url {IDX}/lts/1.8/cu111"
    found = torch_cpu_with_gpus(dict(stack("1.8.2", "cpu"), gpus=gpus), lts3)
    assert found == [Finding(
        ERROR, "torch-cpu-build", "torch",
        "torch 1.8.2+cpu is a CPU-only build on a host with GPUs: torch.cuda.is_available() is False, .cuda() fails "
        "with 'Torch not compiled with CUDA enabled', and nothing trains on the GPUs.", cmd, lts3.torch("1.8.2")["source"])]
    assert found[0].remedies == (Remedy("install torch 1.8.2+cu111", cmd,
                                        (("torch", "1.8.2+cu111"), ("torchvision", "0.9.2+cu111")),
                                        "the GPUs need a CUDA build of torch 1.8.2"),)


def test_an_unreadable_torchvision_is_no_numpy_2_finding(m):
    # torchvision_pairing says it cannot be read; numpy_vs_torch does not guess its age
    assert numpy_vs_torch(stack("2.4.0", python="3.10.12", numpy="2.0.1", torchvision="junk"), m) == []


def test_numpy_absent_from_flags_is_unknown_not_looked_for(m):
    # only the probe looks for numpy: a flags document's empty numpy section says nothing
    f = dict(stack("2.2.2", python="3.10.12"), origin="flags", numpy={"version": None})
    assert numpy_vs_torch(f, m) == [Skipped(
        "numpy_vs_torch", "torch", "numpy version unknown (torch 2.2.2 fails under numpy 2.x)",
        "pass --numpy V, or audit the host")]


def test_a_torch_section_without_its_package_record_is_still_read(m):
    # the torch section alone (no packages.torch): its version is the one judged
    assert torch_unknown({"torch": {"version": "garbage"}}, m) == [Finding(
        WARNING, "torch-unknown", "torch", "torch version 'garbage' cannot be read; torch checks were skipped.",
        "check `pip show torch`", source(m, "torch_previous"))]


def test_a_source_build_given_as_a_flag_is_quoted_as_the_package_names_it(m):
    # --torch 2.4.0+git1234abc: the torch section holds 2.4.0 (the label is no build), the package the full text
    assert torch_unknown(stack_facts(torch="2.4.0+git1234abc"), m) == [Finding(
        WARNING, "torch-variant-unknown", "torch",
        "torch 2.4.0 (2.4.0+git1234abc) is a pre-release or a source/vendor build, not a PyPI wheel with a +cuXYZ "
        "tag, so which CUDA build it is is unknown; the CUDA checks for torch were skipped.",
        "give the variant, e.g. --torch 2.4.0+cu124", "https://pypi.org/project/torch/2.4.0/")]


def test_a_torch_paired_with_two_torchvisions_names_both(m):
    # torch 2.0.0 pairs with torchvision 0.15.0 or 0.15.1; PyPI's build (cu117), so the newest from PyPI
    fix = "pip install torchvision==0.15.1"
    found = torchvision_pairing(stack("2.0.0", torchvision="0.14.1"), m)
    assert found == [Finding(ERROR, "torchvision-mismatch", "torchvision",
                             f"torchvision 0.14.1 is not the release paired with torch 2.0.0 (0.15.0 or 0.15.1): {NMS}.",
                             fix, source(m, "vision_table"))]
    assert found[0].remedies == (Remedy("install torchvision 0.15.1", fix, (("torchvision", "0.15.1"),),
                                        "torch 2.0.0 pairs with torchvision 0.15.1"),)
    assert torchvision_pairing(stack("2.0.0", torchvision="0.15.0"), m) == []


def test_a_build_of_a_release_not_on_pypi_that_it_does_not_have_names_its_newest(lts3):
    # 1.8.2 has no PyPI build (pypi: none): the install command is its newest CUDA build's
    assert torch_unknown(stack("1.8.2", "cu117", "11.7"), lts3) == [Finding(
        WARNING, "torch-variant-unknown", "torch",
        "The matrix knows no cu117 build of torch 1.8.2 (known: cu101, cu102, cu111); pip would fail with 'No "
        "matching distribution found for torch==1.8.2+cu117' unless it came from elsewhere.",
        f"pip install torch==1.8.2+cu111 torchvision==0.9.2+cu111 --extra-index-url {IDX}/lts/1.8/cu111",
        lts3.torch("1.8.2")["source"])]


def test_a_source_build_without_a_numpy_is_no_api_check(m):
    # numpy unknown: numpy_vs_torch says so; there is no API to skip checking
    f = {"packages": {"torch": {"version": "2.1.0a0+git32f93b1"}}, "python": {"version": "3.10.4"}}
    assert numpy_older_than_build(f, m) == []


def test_numpy_without_a_torch_is_no_api_check(m):
    assert numpy_older_than_build({"python": {"version": "3.10.4"}, "numpy": {"version": "1.21.5"}}, m) == []


def test_a_source_build_known_by_its_torch_section_alone_skips_the_api_check(m):
    f = {"torch": {"version": "2.1.0a0+git32f93b1"}, "python": {"version": "3.10.4"}, "numpy": {"version": "1.21.5"}}
    assert numpy_older_than_build(f, m) == [Skipped(
        "numpy_older_than_build", "torch", "torch 2.1.0a0+git32f93b1 is a source, nightly or vendor build: the numpy C "
        "API it was compiled against is that of its build environment, unknown here",
        "if import torch warns 'module compiled against API version 0xN but this version of numpy is 0xM', install "
        "the numpy release that introduced API 0xN (`envcheck matrix show`)")]


def test_a_build_of_numpy_2s_first_torch_is_pinned_without_an_upper_bound(m):
    # numpy2.torch is 2.3.0, the first release built for numpy 2: its pin has no "<2"
    edited = _edited(m, lambda d: d["torch"]["numpy_api"]["builds"].append(
        {"torch": "2.3.0", "api": "0x12", "source": "https://example.org/x"}))
    assert numpy_older_than_build(stack("2.3.0", python="3.10.4", numpy="1.26.4"), edited) == [Finding(
        ERROR, "torch-numpy-too-old", "torch",
        "torch 2.3.0's builds were compiled against numpy's C API 0x12 (numpy >= 2.0.0) but numpy 1.26.4 is installed: "
        "import torch warns 'Failed to initialize NumPy: module compiled against API version 0x12 but this version of "
        "numpy is 0x11', and torch.from_numpy(), tensor.numpy() and DataLoader workers fail.",
        'pip install "numpy>=2.0.0"', "https://example.org/x")]


def test_without_a_numpy_2_record_the_pin_has_no_upper_bound(m):
    edited = _edited(m, lambda d: d["torch"].pop("numpy2"))
    assert numpy_older_than_build(stack("1.11.0", python="3.10.4", numpy="1.21.5"), edited) == [Finding(
        ERROR, "torch-numpy-too-old", "torch",
        "torch 1.11.0's wheels for Python 3.10 were compiled against numpy's C API 0xf (numpy >= 1.22.0) but numpy "
        "1.21.5 is installed: import torch warns 'Failed to initialize NumPy: module compiled against API version 0xf "
        "but this version of numpy is 0xe', and torch.from_numpy(), tensor.numpy() and DataLoader workers fail.",
        'pip install "numpy>=1.22.0"', "https://github.com/danielgatis/rembg/issues/212")]
