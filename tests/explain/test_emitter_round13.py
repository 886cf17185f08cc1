"""The thirteenth round: what heldout12's misses (scored once, then read) showed that is general,
mended from what the emitter prints and what it means, with texts other than any held-out one and
look-alikes that must stay where they were. (The round's ranking levers measured nothing that
generalises: bench/explain_rank_cv.py, docs/doctor.md.)

NVRTC refusing an option: a program that compiles its kernels at run time passes NVRTC the
`--gpu-architecture=compute_XY` of the GPU it found (xmrig-cuda, hashcat, CuPy, the cuda-python
examples); NVRTC_ERROR_INVALID_OPTION (nvrtc.h: 5) from such a program is a GPU newer than the
toolkit's NVRTC knows, nvcc-arch-unsupported's definition (the toolkit older than the arch asked
for). torch's own NVRTC (ATen/cuda/Exceptions.h AT_CUDA_NVRTC_CHECK: "CUDA NVRTC error: " +
nvrtcGetErrorString) is the one its wheel ships: still arch-not-compatible (a torch built for an
older CUDA than the GPU)."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers as _answers, whole

# the catalogue's causes for the code, in its order: the toolkit's NVRTC first
CODE_ONLY = {"nvcc-arch-unsupported": "likely", "arch-not-compatible": "possible"}


@pytest.mark.parametrize("text", [
    "kernel build failed: nvrtcCompileProgram returned NVRTC_ERROR_INVALID_OPTION",
    "[2026-11-30 08:14:02] GPU #1: compile error NVRTC_ERROR_INVALID_OPTION (5)",
    "cuda_python.nvrtc.NVRTCError: nvrtcResult.NVRTC_ERROR_INVALID_OPTION",
])
def test_another_program_s_nvrtc_refusing_its_option_is_the_toolkit_older_than_the_gpu(text):
    assert _answers(text) == CODE_ONLY


@pytest.mark.parametrize("text", [
    # NVRTC's message after the code: the wording found the cause, so the code's catalogue hit
    # yields to it (a wording knows its message better) and the answer is the wording's possible
    "cupy_backends.cuda.libs.nvrtc.NVRTCError: NVRTC_ERROR_INVALID_OPTION (5)\n"
    "nvrtc: error: invalid value for --gpu-architecture (-arch)",
])
def test_nvrtc_s_message_with_the_code_is_still_the_toolkit_first(text):
    assert _answers(text) == {"nvcc-arch-unsupported": "possible", "arch-not-compatible": "possible"}


@pytest.mark.parametrize("text", [
    "CompileException: nvrtc: error: invalid value for --gpu-architecture (-arch)",
    "NVRTC compile log:\nnvrtc: error: invalid value for --gpu-architecture (-arch)\n",
])
def test_nvrtc_s_message_alone_is_only_possibly_the_toolkit(text):
    # NVRTC's own message in the program log the caller prints: no arch named, and the caller may
    # have built the option wrongly (heldout10 holds a CuPy thread read as the user's doing)
    assert _answers(text) == {"nvcc-arch-unsupported": "possible"}


@pytest.mark.parametrize("text", [
    "RuntimeError: CUDA NVRTC error: NVRTC_ERROR_INVALID_OPTION",
    "  File \"/opt/conda/lib/python3.11/site-packages/torch/cuda/jiterator.py\", line 173, in __call__\n"
    "RuntimeError: CUDA NVRTC error: NVRTC_ERROR_INVALID_OPTION",
])
def test_torch_s_nvrtc_refusing_the_arch_stays_torch_s_arch_list(text):
    assert _answers(text) == {"arch-not-compatible": "likely"}


@pytest.mark.parametrize("text", [
    # other NVRTC errors and other options keep their own causes (or none)
    "nvrtc: error: invalid value for --std",
    "nvrtc: error: unrecognized option --fmad=maybe",
    "NVRTC_ERROR_COMPILATION: kernel.cu(12): error: identifier \"foo\" is undefined",
])
def test_look_alikes_name_no_confident_arch_cause(text):
    got = _answers(text)
    assert "nvcc-arch-unsupported" not in got and got.get("arch-not-compatible") != "likely"


# --- CPU-only frameworks named by another emitter's words ---------------------------------------

_whole = whole


TORCH_FIX = "Install the CUDA build from the PyTorch index that matches your driver (`envcheck plan --gpu GPU --driver V`)."
JAX_FIX = 'Install JAX with its CUDA plugin for your CUDA major (`pip install -U "jax[cuda12]"`).'


def test_xformers_built_for_a_cuda_torch_beside_a_cpu_torch_is_a_cpu_only_torch():
    # xformers/_cpp_lib.py: "xFormers was built for:\n    PyTorch %s with CUDA %s (you have %s)"
    text = ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
            "    PyTorch 2.4.0+cu118 with CUDA 1108 (you have 2.4.0+cpu)\n"
            "    Python  3.12.4 (you have 3.12.4)\n")
    assert _whole(text) == {"id": "torch-not-cuda", "confidence": "likely", "title": "A CPU-only torch is installed",
                            "values": {"torch_version": "2.4.0+cpu"}, "fix": TORCH_FIX}


@pytest.mark.parametrize("text", [
    # built for another CUDA torch: a build for another torch, not a CPU-only one
    "WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
    "    PyTorch 2.3.1+cu121 with CUDA 1201 (you have 2.5.0+cu124)\n",
    # the Python line's "(you have ...)" is not torch's
    "xFormers was built for:\n    PyTorch 2.3.1+cu121 with CUDA 1201 (you have 2.3.1+cu121)\n    Python  3.10.0 (you have 3.11.2+cpu)",
])
def test_xformers_built_for_another_cuda_torch_is_not_a_cpu_only_torch(text):
    assert "torch-not-cuda" not in _answers(text)


@pytest.mark.parametrize("text", [
    'jaxlib.xla_extension.XlaRuntimeError: NOT_FOUND: Could not find registered platform with name: "cuda". '
    "Available platform names are: Interpreter Host",
    # JAX's error wrapped across lines, no platform left but the CPU's
    "RuntimeError: Unable to initialize backend 'cuda': NOT_FOUND: Could not find\nregistered platform with "
    'name: "cuda". Available platform names are:\nHost',
])
def test_xla_without_a_cuda_platform_is_a_cpu_only_jaxlib(text):
    got = _whole(text)
    assert got == {"id": "torch-not-cuda", "confidence": "likely", "title": "A CPU-only jaxlib is installed",
                   "values": {"jax": ""}, "fix": JAX_FIX}


@pytest.mark.parametrize("text", [
    # every CUDA jaxlib's start-up notice: no ROCm platform beside the registered CUDA one
    "I0412 09:14:03.112 xla_bridge.py:863] Unable to initialize backend 'rocm': NOT_FOUND: Could not find "
    'registered platform with name: "rocm". Available platform names are: CUDA',
    # "cuda" asked for and registered under another spelling of the list: not missing
    "Unable to initialize backend 'cuda': NOT_FOUND: Could not find registered platform with name: \"cuda\". "
    "Available platform names are: Interpreter CUDA Host",
])
def test_xla_with_a_cuda_platform_registered_names_no_cpu_only_build(text):
    assert "torch-not-cuda" not in _answers(text)
