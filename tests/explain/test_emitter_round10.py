"""The tenth round: what the eighth and ninth held-out rounds (scored once, then read) showed
about the words behind a confident answer on a negative, a cause that had no id, and label/answer
disagreements — each mended from what the emitter prints and what it means, with values other
than any corpus text's, and look-alikes that must stay unnamed or only possible."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain, top_environment_cause


def _answers(text: str):
    return {e.id: e.confidence for e in explain(text) if e.kind == "environment"}


def _top(text: str):
    top = top_environment_cause(explain(text))
    return (top.id, top.confidence) if top else None


def _confident(text: str):
    return [i for i, c in _answers(text).items() if c in ("exact", "likely")]


# --- 1. the words behind a confident answer on a negative ---------------------------------------

@pytest.mark.parametrize("text", [
    # pip's resolver: a GPU build the indexes read do not have while what they list holds none
    # (PyPI without download.pytorch.org; CuPy's per-CUDA package on a platform it has no wheel for)
    "ERROR: Could not find a version that satisfies the requirement torchvision==0.17.2+cu121 (from versions: "
    "0.16.0, 0.17.0, 0.17.2)\nERROR: No matching distribution found for torchvision==0.17.2+cu121",
    "ERROR: No matching distribution found for torch==2.2.1+rocm5.7",
    "ERROR: No matching distribution found for cupy-cuda117",
])
def test_a_gpu_build_missing_from_the_indexes_read_is_no_wheel_for_platform(text):
    assert _top(text) == ("no-wheel-for-platform", "likely")


@pytest.mark.parametrize("text", [
    # the indexes list other CUDA builds of the release: the asked name is one nobody built
    "ERROR: Could not find a version that satisfies the requirement torch==2.0.1+cu119 (from versions: 1.13.1+cu117, "
    "2.0.0+cu117, 2.0.1+cu117, 2.0.1+cu118)\nERROR: No matching distribution found for torch==2.0.1+cu119",
    # nothing at all for this Python, even from torch's own index: no release has a wheel for it yet
    "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu121\n"
    "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
    "ERROR: No matching distribution found for torch",
    "ERROR: No matching distribution found for tensorflow-gpu==2.20.0",
])
def test_pip_finding_no_wheel_that_does_not_show_a_gpu_miss_is_only_possible(text):
    assert _top(text) == ("no-wheel-for-platform", "possible")


@pytest.mark.parametrize("text", [
    "ImportError: libc10.so: cannot open shared object file: No such file or directory",
    "OSError: libtorch_python.so: cannot open shared object file: No such file or directory",
    "ImportError: libc10_cuda.so: cannot open shared object file",
])
def test_a_library_every_torch_ships_not_found_is_only_possibly_another_torch(text):
    # every release has it: it is missing because `import torch` had not loaded it yet
    assert _confident(text) == [] and _top(text) == ("undefined-symbol", "possible")


@pytest.mark.parametrize("text, lib", [
    ("ImportError: libtorch_cuda_cpp.so: cannot open shared object file: No such file or directory", "libtorch_cuda_cpp.so"),
    ("OSError: libtorch_cpu.so: cannot open shared object file: No such file or directory", "libtorch_cpu.so"),
])
def test_a_library_only_some_torch_releases_have_is_still_another_torch(text, lib):
    assert _top(text) == ("undefined-symbol", "likely")
    assert next(e for e in explain(text) if e.id == "undefined-symbol").values["torchlib"] == lib


@pytest.mark.parametrize("text", [
    "$ python detect.py --device cpu --source img/\nUserWarning: CUDA initialization: Found no NVIDIA driver on your "
    "system. Please check that you have an NVIDIA GPU and installed a driver",
    "python run.py --cpu\nRuntimeError: No CUDA GPUs are available",
    "model = Net().to(device='cpu')\nRuntimeError: Found no NVIDIA driver on your system.",
])
def test_no_driver_words_in_a_run_asked_for_the_cpu_are_only_possible(text):
    assert _confident(text) == [] and _top(text) == ("no-driver-found", "possible")


@pytest.mark.parametrize("text", [
    "$ python detect.py --device 0\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have "
    "an NVIDIA GPU and installed a driver",
    # a CPU name elsewhere in the text (a log line, another flag) is not a request for the CPU
    "INFO cpu count: 16, cpu_device_id=0\nRuntimeError: No CUDA GPUs are available",
])
def test_no_driver_words_in_a_gpu_run_stay_confident(text):
    assert _top(text)[0] == "no-driver-found" and _top(text)[1] in ("exact", "likely")
