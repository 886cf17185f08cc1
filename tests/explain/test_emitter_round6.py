"""Classes read from what prints them, each tried with its emitter's own format string (quoted in
the comment, with the release or commit it was read at) filled with other values than any corpus
text: Docker's daemon not knowing the `nvidia` runtime, features a library gates on the GPU's
compute capability, torchvision's ops not fitting torch at run time, nvcc refusing an
architecture, and single emitters (NVML's permission error, torch's headers refusing an old
compiler). And what must not be taken for them."""
from __future__ import annotations

import re

import pytest

from envcheck.explain import catalogue
from envcheck.explain.match import explain, top_environment_cause
from envcheck.explain.signatures import signatures
from envcheck.matrix.load import load_matrix
from envcheck.versions import at_least


def _top(text: str):
    got = top_environment_cause(explain(text))
    return got.id if got else None


def _confident(text: str):
    return [e.id for e in explain(text) if e.kind == "environment" and e.confidence in ("exact", "likely")]


@pytest.mark.parametrize("text", [
    # moby daemon/daemon_unix.go (Docker 17 - 20.10): fmt.Errorf("Unknown runtime specified %s", ...)
    "docker: Error response from daemon: Unknown runtime specified nvidia.\nSee 'docker run --help'.",
    # docker compose v1 passes the daemon's words on for the service
    "ERROR: for trainer  Cannot create container for service trainer: Unknown runtime specified nvidia",
    # daemon/runtime_unix.go, once containerd shims may be named (isPermissibleC8dRuntimeName):
    # errors.Errorf("unknown or invalid runtime name: %s", name)
    "Error response from daemon: unknown or invalid runtime name: nvidia",
])
def test_docker_not_knowing_the_nvidia_runtime_is_the_toolkit_missing(text):
    assert _top(text) == "container-toolkit-missing"


@pytest.mark.parametrize("text", [
    # another runtime docker does not know is not the NVIDIA toolkit's
    "docker: Error response from daemon: Unknown runtime specified runsc.",
    "Error response from daemon: unknown or invalid runtime name: kata",
])
def test_another_unknown_runtime_is_not_the_nvidia_toolkit(text):
    assert "container-toolkit-missing" not in _confident(text)


@pytest.mark.parametrize("text", [
    # flash-attn csrc/flash_attn/flash_api.cpp: TORCH_CHECK(is_sm8x || is_sm90, "FlashAttention
    # only supports Ampere GPUs or newer."), pasted without its period, as a title or in bold
    "RuntimeError: FlashAttention only supports Ampere GPUs or newer.",
    "training stops with: __FlashAttention only supports Ampere GPUs or newer__ on our T4 nodes",
    # flash-attn 1.x: "FlashAttention only supports Turing GPUs or newer."
    "FlashAttention only supports Turing GPUs or newer",
    # vLLM's dtype check (vllm/config.py 0.1 - 0.2): "Bfloat16 is only supported on GPUs with
    # compute capability of at least 8.0. Your {gpu_name} GPU has compute capability {}.{}."
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
    "Your Quadro RTX 5000 GPU has compute capability 7.5.",
    # the same from 0.3 on, cut where the paste ends
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your "
    "NVIDIA GeForce GTX 1080 Ti GPU has compute capability 6.1. You can use float16 instead by",
    # flash-attn's bf16 check: "bfloat16 is only supported on Ampere GPUs or newer"
    "RuntimeError: bfloat16 is only supported on Ampere GPUs or newer",
    # Triton's compiler: "type %s not supported in this architecture. The supported fp8 dtypes are %s"
    ("triton.compiler.errors.CompilationError: at 1:0:\ndef _fused_kernel(\n^\nValueError(\"type fp8e4nv not "
     "supported in this architecture. The supported fp8 dtypes are ('fp8e4b15', 'fp8e5')\")"),
    # torch/amp/autocast_mode.py (1.10 - 2.5)
    "RuntimeError: Current CUDA Device does not support bfloat16. Please switch dtype to float16.",
])
def test_a_feature_its_library_gates_on_compute_capability_is_the_gpu_too_old(text):
    assert _top(text) == "gpu-too-old"


def test_xformers_listing_a_too_old_gpu_among_its_reasons_is_only_possible():
    # xformers ops/fmha/common.py: "requires device with capability > %s but your GPU has
    # capability %s (too old)", one reason among several its dispatcher lists
    text = ("NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n"
            "`cutlassF` is not supported because:\n"
            "    requires device with capability > (8, 0) but your GPU has capability (6, 1) (too old)\n"
            "    dtype=torch.float32 (supported: {torch.float16})")
    found = [e for e in explain(text) if e.id == "gpu-too-old"]
    assert found and found[0].confidence == "possible"


def test_a_catalogued_message_matches_without_its_final_period():
    # the catalogue's own template ("... or newer.") is found in a paste that dropped the period
    text = "**FlashAttention only supports Ampere GPUs or newer**"
    hits = catalogue.find(text, text.lower())
    assert any(h.cause == "gpu-too-old" and "flash-attn" in h.via for h in hits)


@pytest.mark.parametrize("text,want", [
    # torchvision/extension.py _check_cuda_version() (0.5 - 0.15): "Detected that PyTorch and
    # torchvision were compiled with different CUDA versions. PyTorch has CUDA Version={}.{} and
    # torchvision has CUDA Version={}.{}. Please reinstall the torchvision that matches your PyTorch install."
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA versions. "
     "PyTorch has CUDA Version=12.1 and torchvision has CUDA Version=11.8. Please reinstall the "
     "torchvision that matches your PyTorch install.", "torchvision-undefined-symbol"),
    # the same, wrapped where a terminal cut it
    ("RuntimeError: Detected that PyTorch and torchvision were compiled with different\nCUDA versions. "
     "PyTorch has CUDA Version=10.2 and torchvision has CUDA Version=10.1.", "torchvision-undefined-symbol"),
    # _assert_has_ops() (0.8+), for any op when torchvision's _C did not load
    ("RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision "
     "versions are incompatible, or if you had errors while compiling torchvision from source.",
     "torchvision-nms-missing"),
    # torch's dispatcher, for any torchvision op never registered
    ("RuntimeError: operator torchvision::roi_align does not exist", "torchvision-nms-missing"),
])
def test_torchvision_s_ops_not_fitting_torch_at_run_time(text, want):
    assert _top(text) == want


@pytest.mark.parametrize("text,want", [
    # nvcc's and ptxas's option parser: "Value '%s' is not defined for option '%s'"
    ("nvcc fatal   : Value 'sm_89' is not defined for option 'gpu-architecture'", "nvcc-arch-unsupported"),
    ("ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'", "nvcc-arch-unsupported"),
    ("nvcc fatal : Value 'compute_86' is not defined for option 'gpu-code'", "nvcc-arch-unsupported"),
    # an arch every toolkit since 12.0 dropped, in either spelling
    ("nvcc fatal : Value 'compute_35' is not defined for option 'gpu-architecture'", "nvcc-arch-dropped"),
    # "Unsupported gpu architecture '%s'" with the "nvcc fatal :" cut off
    ("Unsupported gpu architecture 'compute_120'", "nvcc-arch-unsupported"),
])
def test_nvcc_refusing_an_architecture(text, want):
    assert _top(text) == want


def test_nvcc_refusing_another_option_is_not_an_architecture():
    # the same parser for the C++ dialect torch passes is a toolkit older than torch's
    assert _top("nvcc fatal : Value 'c++20' is not defined for option 'std'") not in (
        "nvcc-arch-unsupported", "nvcc-arch-dropped")


def test_an_arch_no_gpu_has_is_the_build_command_s_mistake_not_the_toolkit():
    # CUDA_ARCH=91 (a CUDA version given as the arch): nvcc refuses it, but no toolkit would take it
    assert "nvcc-arch-unsupported" not in _confident(
        "nvcc fatal   : Value 'sm_91' is not defined for option 'gpu-architecture'")


def test_the_archs_nvcc_is_too_old_for_are_those_of_the_matrix():
    sig = next(s for s in signatures() if s.id == "nvcc-arch-unsupported")
    listed = set()
    for w in sig.wordings:
        m = re.search(r"(?:compute|sm)\)?_\(\?:([\d|]+)\)", w.regex.pattern)
        if m:
            listed |= set(m.group(1).split("|"))
    matrix = {a["cc"].replace(".", "") for a in load_matrix().data["archs"]
              if not (a.get("last_cuda") and at_least("11.8", a["last_cuda"]))}
    assert listed and listed == matrix


@pytest.mark.parametrize("text,want", [
    # NVML's nvmlErrorString(NVML_ERROR_NO_PERMISSION) after NVML's name: nvidia-smi's "Failed to
    # initialize NVML: %s", a monitor that reports pynvml's NVMLError
    ("Failed to initialize NVML: Insufficient Permissions", "device-permission"),
    ("[gpu-exporter] error: pynvml.nvml.NVMLError_NoPermission: Insufficient Permissions", "device-permission"),
    # nvidia-smi's string table, with and without "the"
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that "
     "the latest NVIDIA driver is installed and running.", "nvidia-smi-no-driver"),
    ("NVIDIA-SMI has failed because it couldn't communicate with NVIDIA driver", "nvidia-smi-no-driver"),
    # no nvidia-smi at all: the shells' and Python's words
    ("$ nvidia-smi\nbash: nvidia-smi: command not found", "nvidia-smi-no-driver"),
    ("sh: 1: nvidia-smi: not found", "nvidia-smi-no-driver"),
    ("'nvidia-smi' is not recognized as an internal or external command,\noperable program or batch file.",
     "nvidia-smi-no-driver"),
    ("FileNotFoundError: [Errno 2] No such file or directory: '/usr/bin/nvidia-smi'", "nvidia-smi-no-driver"),
    # torch/csrc/api/include/torch/all.h: "#error C++17 or later compatible compiler is required
    # to use PyTorch." (2.x; C++14 in 1.x)
    ("/opt/conda/lib/python3.10/site-packages/torch/include/torch/csrc/api/include/torch/all.h:4:2: "
     "error: #error C++17 or later compatible compiler is required to use PyTorch.", "gcc-too-old"),
    # numba's driver.py: "Call to %s results in %s" with UNKNOWN_CUDA_ERROR for a code its table lacks
    ("numba.cuda.cudadrv.error.CudaSupportError: Error at driver init: \nCall to cuInit results in "
     "UNKNOWN_CUDA_ERROR (34)", "cuda-stub-library"),
])
def test_single_emitters_with_a_general_wording(text, want):
    assert _top(text) == want


def test_torch_s_headers_refusing_the_dialect_is_only_possibly_an_old_gcc():
    # all.h tests __cplusplus: a build file asking for C++14 gets the same #error with a new gcc
    found = [e for e in explain("error: #error C++17 or later compatible compiler is required to use PyTorch.")
             if e.id == "gcc-too-old"]
    assert found and found[0].confidence == "possible"


def test_numba_s_unknown_code_from_cuinit_is_only_possibly_the_stub():
    found = [e for e in explain("Call to cuInit results in UNKNOWN_CUDA_ERROR") if e.id == "cuda-stub-library"]
    assert found and found[0].confidence == "possible"


@pytest.mark.parametrize("text", [
    # insufficient permissions that are not NVML's
    "mkdir: cannot create directory '/data': Insufficient permissions",
    # another program not found
    "bash: nvcc: command not found",
])
def test_what_is_not_these_singles(text):
    assert not {"device-permission", "nvidia-smi-no-driver"} & set(_confident(text))


def test_nccl_s_own_version_check_is_a_version_mismatch():
    # src/dev_runtime.cc (v2.30): the loaded library against the one the program was compiled with
    text = ("NCCL library is not backwards compatible. This application was compiled with NCCL version "
            "22005, but is running with NCCL library version 21903")
    assert _top(text) == "nccl-version-mismatch"


def test_the_catalogue_carries_these_emitters_with_their_sources():
    doc = catalogue.table()
    by_text = {t["t"]: t for t in doc.templates}
    tv = by_text["Detected that PyTorch and torchvision were compiled with different CUDA versions. PyTorch "
                 "has CUDA Version={}.{} and torchvision has CUDA Version={}.{}. Please reinstall the "
                 "torchvision that matches your PyTorch install."]
    assert tv["c"][0][0] == "torchvision-undefined-symbol"
    assert doc.sources[tv["s"][0]][:2] == ["pytorch/vision", "torchvision/extension.py"]
    # moby's getRuntime names the NVIDIA toolkit only when the runtime is nvidia
    assert _top("docker: Error response from daemon: runtime not found in config: nvidia.") == \
        "container-toolkit-missing"
    assert "container-toolkit-missing" not in _confident("Error response from daemon: runtime not found in config: crun")


@pytest.mark.parametrize("text,want", [
    # glibc's "undefined symbol: %s" for std:: itself: the libstdc++ loaded is older
    ("ImportError: /envs/x/site-packages/spconv/core_cc.so: undefined symbol: _ZSt28__throw_bad_array_new_lengthv",
     "system-lib-too-old"),
    ("OSError: /opt/ext/_C.so: undefined symbol: _ZNKSt13runtime_error4whatEv", "system-lib-too-old"),
    # the C++11-ABI names and torch's own are a build against another torch
    ("ImportError: /x/_C.so: undefined symbol: _ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
     "undefined-symbol"),
    ("ImportError: /x/_C.so: undefined symbol: _ZN3c104cuda20getCurrentCUDAStreamEa", "undefined-symbol"),
])
def test_a_std_symbol_undefined_is_an_old_libstdcxx(text, want):
    assert _top(text) == want
