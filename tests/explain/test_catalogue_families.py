"""The catalogue's families read from what prints the errors (tools/explain_catalogue/sources.yaml),
each tried with a message its emitter prints: the emitter's own format string (quoted in the
comment, with the release it was read at) filled with realistic values, not a text copied from a
thread. And the negatives: the program's own failures get no confident environment cause, however
many library words they carry."""
from __future__ import annotations

import json

import pytest

from envcheck.explain import catalogue
from envcheck.explain.match import explain, top_environment_cause

DOC = json.loads(catalogue.DATA.read_text())
CODES = {c["name"]: c for c in DOC["codes"]}


def _refs(repo: str) -> set:
    return {r for s in DOC["sources"] if s[0] == repo for r in s[2]}


def _top(text: str):
    got = top_environment_cause(explain(text))
    return got.id if got else None


# --- PyTorch across releases (its wheels: Python sources and shipped headers) -----------------

def test_pytorch_is_read_at_releases_from_1_4_to_today():
    assert {"v1.4.0", "v1.8.1", "v1.13.1", "v2.1.2", "v2.5.1", "v2.13.0"} <= _refs("pytorch/pytorch")


@pytest.mark.parametrize("text,cause", [
    # torch/cuda/__init__.py (v1.4.0 ... v2.5.1) _check_capability: "Found GPU%d %s which requires
    # CUDA_VERSION >= %d to work properly, but your PyTorch was compiled with CUDA_VERSION %d. ..."
    ("UserWarning: Found GPU0 NVIDIA GeForce RTX 3090 which requires CUDA_VERSION >= 11000 to\n"
     "     work properly, but your PyTorch was compiled\n     with CUDA_VERSION 10020. Please install the "
     "correct PyTorch binary\n     using instructions from https://pytorch.org", "arch-not-compatible"),
    # torch/cuda/__init__.py (v1.4.0) _load_cudart: "couldn't find libcudart. Make sure CUDA libraries
    # are installed in a default location, or that they're in {}."
    ("RuntimeError: couldn't find libcudart. Make sure CUDA libraries are installed in a default location, "
     "or that they're in LD_LIBRARY_PATH.", "cudart-lib-missing"),
    # torch/backends/cudnn/__init__.py (v1.4.0): 'cuDNN library not found. Check your {libpath}'
    ("UserWarning: cuDNN library not found. Check your LD_LIBRARY_PATH", "cudnn-lib-missing"),
    # torch/utils/cpp_extension.py (v2.1.2, v2.5.1) _check_cuda_version: f'The current installed
    # version of {compiler_name} ({compiler_version}) is greater than the maximum required version by
    # CUDA {cuda_str_version}. Please make sure to use an adequate version of {compiler_name} ({version_bound_str}).'
    ("RuntimeError: The current installed version of g++ (13.2.0) is greater than the maximum required "
     "version by CUDA 12.1. Please make sure to use an adequate version of g++ (>=6.0.0, <13.0).", "gcc-too-new"),
    # torch/_inductor/scheduler.py (v2.1.2, v2.5.1) and exc.py (v2.13.0, via super().__init__): f"Found
    # {device_props.name} which is too old to be supported by the triton GPU compiler, which is used as the
    # backend. Triton only supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability
    # {device_props.major}.{device_props.minor}"
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Found Tesla P100-PCIE-16GB "
     "which is too old to be supported by the triton GPU compiler, which is used as the backend. Triton only "
     "supports devices of CUDA Capability >= 7.0, but your device is of CUDA capability 6.0", "gpu-too-old"),
    # torch/cuda/__init__.py (v1.4.0 ... v2.13.0) _lazy_init: "To use CUDA with multiprocessing, you
    # must use the 'spawn' start method"
    ("RuntimeError: To use CUDA with multiprocessing, you must use the 'spawn' start method", "cuda-fork"),
])
def test_messages_older_releases_printed_name_their_cause(text, cause):
    assert cause in {e.id for e in explain(text)}
    assert _top(text) == cause or cause == "cuda-fork"     # cuda-fork is the program's, not the environment's


BANG = "!" * 79
# torch/utils/cpp_extension.py (v1.8.1 ... v2.5.1): ABI_INCOMPATIBILITY_WARNING.format(compiler), whole
ABI_WARNING = f"""
                               !! WARNING !!

{BANG}
Your compiler (c++) may be ABI-incompatible with PyTorch!
Please use a compiler that is ABI-compatible with GCC 5.0 and above.
See https://gcc.gnu.org/onlinedocs/libstdc++/manual/abi.html.

See https://gist.github.com/goldsborough/d466f43e8ffc948ff92de7486c5216d6
for instructions on how to install GCC 5 or higher.
{BANG}

                              !! WARNING !!
"""


def test_the_abi_warning_of_older_extension_builds_is_only_possible():
    text = "/usr/lib/python3/site-packages/torch/utils/cpp_extension.py:286: UserWarning:" + ABI_WARNING
    [e] = [e for e in explain(text) if e.id == "gcc-too-old"]
    assert e.confidence == "possible"


@pytest.mark.parametrize("text", [
    # aten/src/ATen/native/cudnn/Conv_v7.cpp: TORCH_CHECK(false, "Unable to find a valid cuDNN algorithm to run
    # convolution") once every algorithm failed with an OOM or a cuDNN error
    "  File \"/usr/local/lib/python3.10/site-packages/torch/nn/modules/conv.py\", line 456, in _conv_forward\n"
    "    return F.conv2d(input, weight, bias, self.stride,\n"
    "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution",
    # Conv_v8.cpp: the same for the engine plans of cuDNN's v8 API (later releases prefix GET or FIND)
    "RuntimeError: GET was unable to find an engine to execute this computation",
    "RuntimeError: FIND was unable to find an engine to execute this computation",
])
def test_a_convolution_no_cudnn_algorithm_could_run_is_a_cudnn_failure_memory_first(text):
    found = explain(text)
    assert [e.id for e in found] == ["cudnn-execution-failed"] and found[0].confidence == "possible"
    assert found[0].alternatives[0].cause.startswith("GPU memory")


# --- CUDA 12 and 13 runtime (NVIDIA's runtime wheels: headers and libcudart's own strings) ------

def test_codes_only_newer_cuda_releases_have_are_there_with_what_their_libcudart_prints():
    assert _refs("pypi:nvidia-cuda-runtime-cu12") >= {"12.1.105", "12.9.79"} and _refs("pypi:nvidia-cuda-runtime")
    assert CODES["cudaErrorContained"]["num"] == 226 and CODES["cudaErrorContained"]["text"]
    assert CODES["cudaErrorUnsupportedDevSideSync"]["text"]          # a name only HIPIFY knew before
    assert CODES["CUDA_ERROR_KEY_ROTATION"]["num"] == 916            # a driver code from CUDA 13's cuda.h
    # a description a later release reworded is known in both wordings
    assert "read as normalized float not supported for data type" in CODES["cudaErrorInvalidNormSetting"]["alt"]


@pytest.mark.parametrize("text,cause", [
    # c10/cuda/CUDAException.h: "CUDA error: " + cudaGetErrorString(err), CUDA 12.9's string for 226
    ("RuntimeError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error\n"
     "CUDA kernel errors might be asynchronously reported at some other API call", "gpu-hardware-fault"),
    # the same code by its number ("CUDA error 226" as cupy/numba-style wrappers print it)
    ("cudaErrorContained: CUDA error 226 at all_reduce.cu:88", "gpu-hardware-fault"),
    ("CUresult CUDA_ERROR_CONTAINED returned from cuStreamSynchronize", "gpu-hardware-fault"),
])
def test_a_cuda_12_code_is_explained_by_its_description_name_or_number(text, cause):
    assert _top(text) == cause


@pytest.mark.parametrize("text,cause", [
    # ATen/cuda/Exceptions.h AT_CUDA_NVRTC_CHECK: "CUDA NVRTC error: " + nvrtcGetErrorString(result)
    ("RuntimeError: CUDA NVRTC error: NVRTC_ERROR_INVALID_OPTION", "arch-not-compatible"),
    ("RuntimeError: CUDA NVRTC error: NVRTC_ERROR_BUILTIN_OPERATION_FAILURE", "cuda-lib-missing"),
])
def test_nvrtc_codes_name_their_cause(text, cause):
    assert _top(text) == cause


def test_nvrtc_codes_are_there_with_their_numbers():
    assert CODES["NVRTC_ERROR_INVALID_OPTION"]["num"] == 5 and CODES["NVRTC_ERROR_COMPILATION"]["num"] == 6
    assert all(c.get("c") for c in DOC["codes"] if c["lib"] == "NVRTC")


# --- NVML as Python raises it (nvidia-ml-py's pynvml) ----------------------------------------

@pytest.mark.parametrize("text,cause", [
    # pynvml.py: class NVMLError_<CamelCase of NVML_ERROR_X>, str() = nvmlErrorString(code)
    ("  File \"/usr/lib/python3/dist-packages/pynvml.py\", line 1842, in _nvmlCheckReturn\n"
     "    raise NVMLError(ret)\npynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version "
     "mismatch.", "nvml-driver-mismatch"),
    ("pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded", "nvidia-smi-no-driver"),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "no-driver-found"),
    ("pynvml.NVMLError_GpuIsLost: GPU is lost", "gpu-hardware-fault"),
    # nvml.h: NVML_ERROR_FUNCTION_NOT_FOUND "Local version of NVML doesn't implement this function"
    ("pynvml.NVMLError_FunctionNotFound: Function Not Found", "driver-too-old"),
    # pynvml's NVMLError.__str__ when the library cannot describe the code: "NVML Error with code %d"
    ("pynvml.NVMLError: NVML Error with code 18", "nvml-driver-mismatch"),
])
def test_nvml_codes_are_known_by_the_exception_classes_pynvml_raises(text, cause):
    assert _top(text) == cause


def test_every_nvml_code_has_the_class_name_pynvml_gives_it():
    nvml = [c for c in DOC["codes"] if c["lib"] == "NVML"]
    assert len(nvml) >= 30 and all(c.get("aka") for c in nvml)
    assert CODES["NVML_ERROR_LIB_RM_VERSION_MISMATCH"]["aka"] == ["NVMLError_LibRmVersionMismatch"]


# --- the CUDA extensions LLM stacks add: flash-attn, bitsandbytes, xformers ---------------------

def test_the_llm_extension_builders_are_read_at_several_releases():
    assert len(_refs("Dao-AILab/flash-attention")) >= 5 and len(_refs("bitsandbytes-foundation/bitsandbytes")) >= 4
    assert len(_refs("facebookresearch/xformers")) >= 4


@pytest.mark.parametrize("text,cause", [
    # flash-attention csrc/flash_attn/flash_api.cpp (v2.0.9 ... v2.8.3):
    # TORCH_CHECK(is_sm8x_min, "FlashAttention only supports Ampere GPUs or newer.")
    ('  File "/opt/conda/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py", line 51, in '
     "_flash_attn_forward\n    out, q, k, v, out_padded, softmax_lse, S_dmask, rng_state = "
     "flash_attn_cuda.fwd(\nRuntimeError: FlashAttention only supports Ampere GPUs or newer.", "gpu-too-old"),
    # xformers/_cpp_lib.py (v0.0.20 ... v0.0.32) xFormersInvalidLibException.__str__:
    # "xFormers can't load C++/CUDA extensions. " + f"xFormers was built for:\n    PyTorch {} with CUDA {}
    # (you have {})\n    Python  {} (you have {})" + "\n  Please reinstall xformers ..."
    ("WARNING[XFORMERS]: xFormers can't load C++/CUDA extensions. xFormers was built for:\n"
     "    PyTorch 2.1.0+cu121 with CUDA 1201 (you have 2.3.1+cu121)\n    Python  3.10.13 (you have 3.10.14)\n"
     "  Please reinstall xformers (see https://github.com/facebookresearch/xformers#installing-xformers)",
     "undefined-symbol"),
    # bitsandbytes/cextension.py (0.37.0 ... 0.41.0): warn("The installed version of bitsandbytes was
    # compiled without GPU support. 8-bit optimizers, 8-bit multiplication, and GPU quantization are unavailable.")
    ("UserWarning: The installed version of bitsandbytes was compiled without GPU support. 8-bit optimizers, "
     "8-bit multiplication, and GPU quantization are unavailable.", "extension-ops-missing"),
    # bitsandbytes/cuda_setup/main.py (0.41.0) add_log_entry('CUDA SETUP: Problem: The main issue seems to be
    # that the main CUDA runtime library was not detected.')
    ("CUDA SETUP: Problem: The main issue seems to be that the main CUDA runtime library was not detected.\n"
     "CUDA SETUP: Solution 1: To solve the issue the libcudart.so location needs to be added to the "
     "LD_LIBRARY_PATH variable", "cudart-lib-missing"),
])
def test_llm_extension_messages_name_their_cause(text, cause):
    assert _top(text) == cause


def test_bitsandbytes_failing_to_load_its_library_names_only_possible_causes():
    # bitsandbytes/cextension.py (0.41.0): raise RuntimeError('''CUDA Setup failed despite GPU being
    # available. Please run the following command to get more information: ...''')
    text = ("RuntimeError:\n        CUDA Setup failed despite GPU being available. Please run the following command "
            "to get more information:\n\n        python -m bitsandbytes\n\n        Inspect the output of the "
            "command and see if you can locate CUDA libraries. You might need to add them\n        to your "
            "LD_LIBRARY_PATH. If you suspect a bug, please take the information from python -m bitsandbytes\n"
            "        and open an issue at: https://github.com/TimDettmers/bitsandbytes/issues")
    found = explain(text)
    assert found and found[0].id == "cuda-lib-missing" and {e.confidence for e in found} == {"possible"}


# --- the NVIDIA container toolkit's CLI -------------------------------------------------------

def test_a_gpu_the_container_asks_for_that_the_host_lacks_is_an_unknown_device():
    # libnvidia-container src/cli/common.c select_devices: error_setx(err, "%s: %s", dev, "unknown device"),
    # printed by src/cli/configure.c as warnx("device error: %s", err.msg)
    text = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: "
            "OCI runtime create failed: runc create failed: unable to start container process: error during container "
            "init: error running hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as "
            "'legacy'\nnvidia-container-cli: device error: 3: unknown device: unknown.")
    assert _top(text) == "invalid-device-ordinal"


# --- negatives --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total "
    "capacity; 21.10 GiB already allocated; 1.05 GiB free; 21.50 GiB reserved in total by PyTorch)",
    "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call",
    "pynvml.NVMLError_NotSupported: Not Supported",
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)",
    "IndexError: index out of range in self",
    "RuntimeError: CUDA error: device-side assert triggered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
    # flash-attn's refusal of a dtype or head size is the program's choice, not the setup's
    "RuntimeError: FlashAttention only support fp16 and bf16 data type",
    "RuntimeError: FlashAttention forward only supports head dimension at most 256",
])
def test_the_program_s_own_failures_get_no_confident_environment_cause(text):
    assert [e.id for e in explain(text) if e.kind == "environment" and e.confidence in ("exact", "likely")] == []
