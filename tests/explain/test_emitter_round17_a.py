"""The seventeenth round, heldout18's first part: what its misses (scored once, then read) showed
that is general, mended from what the emitter prints and what it means, with texts other than any
held-out one and look-alikes that must stay where they were.

- FFmpeg's loader of the driver's CUDA library (compat/cuda/dynlink_loader.h, nv-codec-headers'
  dynlink_loader.h LOAD_LIBRARY: "Cannot load %s\\n" with CUDA_LIBNAME "nvcuda.dll" on Windows,
  "libcuda.so.1" elsewhere): no NVIDIA driver's CUDA library on the machine (no-driver-found).
- .NET's P/Invoke DllNotFoundException ("Unable to load DLL '%s': ...", .NET Core's "... or one of
  its dependencies: ...") for nvml / nvcuda, which only the NVIDIA display driver installs: no
  NVIDIA driver, i.e. no NVIDIA card, on the Windows machine (no-driver-found)."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole_cause as _whole



_NO_DRIVER = {
    "id": "no-driver-found", "confidence": "likely", "title": "torch sees no NVIDIA driver / GPU",
    "cause": "No usable NVIDIA driver, or no GPU visible to the process: CUDA_VISIBLE_DEVICES empty or "
             "naming a GPU the node does not have, a container started without --gpus, a scheduler's job or "
             "step given no GPU (Slurm without --gpus/--gres, a MIG-partitioned GPU without an instance for "
             "the job, devices not constrained so the container's CUDA_VISIBLE_DEVICES names GPUs it cannot "
             "see).",
    "fix": "Install the NVIDIA driver and check `nvidia-smi`; check CUDA_VISIBLE_DEVICES (set in the "
           "environment or in the script); in containers pass the GPUs in; under Slurm ask for them in the "
           "job and every step (--gpus/--gres, ConstrainDevices=yes in cgroup.conf for containers), on MIG "
           "for an instance (`nvidia-smi -L` in the job lists what it got).",
}


# --- FFmpeg cannot load the driver's CUDA library ------------------------------------------------

@pytest.mark.parametrize("text", [
    "[h264_nvenc @ 0000021f4c7a9e40] Cannot load nvcuda.dll\n"
    "[vost#0:0/h264_nvenc @ 0000021f4c7a8d00] Error while opening encoder - maybe incorrect parameters "
    "such as bit_rate, rate, width or height.",
    "[AVHWDeviceContext @ 0x5581f3a2c1c0] Cannot load libcuda.so.1\n"
    "[AVHWDeviceContext @ 0x5581f3a2c1c0] Could not dynamically load CUDA\n"
    "Device creation failed: -1313558101.\nFailed to set value 'cuda' for option 'hwaccel': Unknown error occurred",
])
def test_ffmpeg_unable_to_load_the_drivers_cuda_library_is_no_driver(text):
    assert _whole(text) == _NO_DRIVER


# --- .NET cannot load NVML / the CUDA driver ------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Unhandled exception. System.DllNotFoundException: Unable to load DLL 'nvml.dll' or one of its "
    "dependencies: The specified module could not be found. (0x8007007E)\n   at NvmlNative.nvmlInit_v2()",
    "System.DllNotFoundException: Unable to load DLL 'nvcuda': The specified module could not be found. "
    "(Exception from HRESULT: 0x8007007E)\n   at ManagedCuda.DriverAPINativeMethods.cuInit(CUInitializationFlags Flags)",
])
def test_dotnet_unable_to_load_nvml_or_nvcuda_is_no_driver(text):
    assert _whole(text) == _NO_DRIVER


@pytest.mark.parametrize("text, want", [
    # the driver's other libraries FFmpeg loads: the encode/decode ones are missing in containers
    # without the video capability, not the driver itself (no-driver-found never; the eighteenth
    # round gave the cause an id, video-codec-libs-missing: tests/explain/test_emitter_round18_ids.py)
    ("[h264_nvenc @ 0x55d0] Cannot load libnvidia-encode.so.1\n[h264_nvenc @ 0x55d0] The minimum required "
     "Nvidia driver for nvenc is 470.57.02 or newer", {"video-codec-libs-missing": "exact", "driver-too-old": "likely"}),
    ("[h264_cuvid @ 0x5619] Cannot load libnvcuvid.so.1", {"video-codec-libs-missing": "exact"}),
    # another DLL .NET cannot load: not the NVIDIA driver's
    ("System.DllNotFoundException: Unable to load DLL 'sqlite3': The specified module could not be found.", {}),
    ("Unable to load DLL 'nvmlwrapper_helper.dll': The specified module could not be found.", {}),
])
def test_the_other_libraries_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- nvcc not at the path a program runs it by ----------------------------------------------------

_NO_TOOLKIT = ("cuda-home-unset", "likely", "No CUDA toolkit found for compiling GPU code")


@pytest.mark.parametrize("text", [
    # OpenMM's CUDA platform: std::system's status 32512 (a shell exiting 127) and the shell's line
    "openmm.OpenMMException: Error launching CUDA compiler: 32512\n"
    "sh: /opt/cuda-11.2/bin/nvcc: No such file or directory",
    "Exception: Error launching CUDA compiler: 32512",
    # make running NVCC by path
    "make[2]: /usr/local/cuda-12.2/bin/nvcc: No such file or directory\nmake[2]: *** [Makefile:41: kernels.o] Error 127",
])
def test_nvcc_not_at_its_path_is_no_toolkit(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == _NO_TOOLKIT


@pytest.mark.parametrize("text, want", [
    # nvcc ran and failed (status 256: exit 1, its log follows): the compiler's error, not its absence
    ("Error launching CUDA compiler: 256\n/tmp/openmmTempKernel0x55.cu(12): error: identifier \"foo\" is undefined", {}),
    # another program missing at its path
    ("sh: /usr/local/cuda/bin/cuobjdump: No such file or directory", {}),
])
def test_the_compiler_status_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- glibc's malloc attribute with arguments under an older nvcc front end --------------------------

@pytest.mark.parametrize("text", [
    "/usr/local/cuda-11.3/bin/nvcc -c kernels.cu -o kernels.o -ccbin /usr/bin/g++-12\n"
    "/usr/include/stdio.h(195): error: attribute \"__malloc__\" does not take arguments\n\n"
    "/usr/include/stdlib.h(587): error: attribute \"__malloc__\" does not take arguments\n",
    "/usr/include/wchar.h(155): error: attribute \"malloc\" does not take arguments",
])
def test_glibc_malloc_attribute_refused_by_nvccs_front_end_is_gcc_too_new(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "gcc-too-new", "likely", "Host gcc newer than this CUDA toolkit's nvcc accepts")


@pytest.mark.parametrize("text, want", [
    # gcc's or clang's own refusal in the program's code: not nvcc reading glibc's headers
    ("include/pool.h:10:16: error: 'malloc' attribute takes no arguments", {}),
    ("src/alloc.h(12): error: attribute \"__malloc__\" does not take arguments", {}),
])
def test_the_malloc_attribute_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- flash-attn's gates on the GPU's architecture ------------------------------------------------

@pytest.mark.parametrize("text", [
    "  File \"/opt/conda/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py\", line 42, in _flash_attn_backward\n"
    "    _, _, _, softmax_d = flash_attn_cuda.bwd(\nRuntimeError: Expected is_sm80 || is_sm90 to be true, but got false.  "
    "(Could this error message be improved?  If so, please report an enhancement request to PyTorch.)",
    "RuntimeError: Expected is_sm8x || is_sm75 to be true, but got false.",
    "RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
])
def test_flash_attns_architecture_gates_are_the_gpu_too_old(text):
    got = _whole(text)
    assert (got["id"], got["confidence"]) == ("gpu-too-old", "likely")
    assert got["title"] == "GPU too old for this torch build or the feature asked for (compute capability (not in the text))"


@pytest.mark.parametrize("text, want", [
    # another TORCH_CHECK without a message: a shape or dtype, not the GPU
    ("RuntimeError: Expected q_dtype == at::kHalf to be true, but got false.", {}),
    ("RuntimeError: Expected is_contiguous to be true, but got false.", {}),
])
def test_the_other_torch_checks_keep_their_answers(text, want):
    assert answers(text) == want


# --- AliceVision finding no CUDA device ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "[2023-04-02 10:11:12.345678][info] CUDA-Enabled GPU.\nDevice information:\n\t- id:      0\n"
    "[2023-04-02 10:11:12.346][error] This program needs a CUDA-Enabled GPU (with at least compute capability 2.0).",
    "ERROR: This program needs a CUDA-Enabled GPU (with at least compute capablility 2.0).",
])
def test_alicevisions_gpu_check_is_no_driver(text):
    assert _whole(text) == _NO_DRIVER


@pytest.mark.parametrize("text, want", [
    # a program's prose about needing a CUDA GPU, not AliceVision's check
    ("This program needs a CUDA-enabled GPU to run faster; falling back to CPU.", {}),
])
def test_the_needs_a_gpu_prose_keeps_its_answer(text, want):
    assert answers(text) == want
