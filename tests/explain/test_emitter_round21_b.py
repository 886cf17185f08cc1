"""The twenty-first round, heldout21's second part (owners n-z): what its misses (scored once, then
read) showed that is general, mended from what the emitter prints and what it means, with texts
other than any held-out one and look-alikes that keep their answers.

- Windows' loader ("The procedure entry point %s could not be located in the dynamic link library
  %s.") for a CUDA driver API entry point (cu*) missing from nvcuda.dll, the driver's own CUDA
  library: the program was built against a newer CUDA than the driver exports (driver-too-old);
  another DLL or another entry point stays windows-dll-load-failed.
- glibc 2.23's <string.h> (__mempcpy_inline) through nvcc 7.5 with gcc 5: g++'s "'memcpy' was not
  declared in this scope" at the system header's line is a host gcc newer than that nvcc handles
  (gcc-too-new, likely); the same error in the program's own file is nothing.
- GFPGAN's inference script and its copies (CodeFormer's too) warn "The unoptimized RealESRGAN is
  slow on CPU" under `if not torch.cuda.is_available()`: a CPU-only torch (torch-not-cuda, likely).
- The CUDA runtime's bare "initialization error" (cudaErrorInitializationError, the catalogue's
  nvml-driver-mismatch first) raised mid-run (torch's asynchronous-error note, c10's getDevice)
  with no sign of initialisation: a driver/library mismatch stops CUDA where it starts, and a
  process forked after CUDA was initialised fails this way, so nvml-driver-mismatch is only
  possible there (as cuda-unknown-error's mid_run); at initialisation, or in the mismatch's own
  words, as before. (The twenty-third round made the bare error's causes possible at initialisation
  too: tests/explain/test_emitter_round23_a.py.)"""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole


def _whole(text):
    return whole(text, ("id", "confidence", "title", "cause"))


# --- an entry point of the CUDA driver API missing from nvcuda.dll ---------------------------------

_DRIVER_CAUSE = (
    "The program's CUDA runtime (for pip torch: the CUDA it was built for, e.g. +cu121) needs a newer kernel "
    "driver than the node has. Each CUDA release has a minimum driver; minor-version compatibility only helps "
    "within a major (11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580). FFmpeg's NVENC encoders the same: the "
    "NVENC API its build uses needs a newer driver than the node has.")


@pytest.mark.parametrize("text", [
    "miner.exe - Entry Point Not Found\n"
    "The procedure entry point cuMemAddressReserve could not be located in the dynamic link library "
    "nvcuda.dll.",
    "python.exe - Entry Point Not Found\nThe procedure entry point cuCtxCreate_v3 could not be located in the "
    "dynamic link library C:\\Windows\\SYSTEM32\\nvcuda.dll.",
])
def test_a_cuda_driver_entry_point_missing_from_nvcuda_dll_is_driver_too_old(text):
    assert _whole(text) == {
        "id": "driver-too-old", "confidence": "exact",
        "title": "NVIDIA driver older than the CUDA runtime needs", "cause": _DRIVER_CAUSE,
    }


@pytest.mark.parametrize("text, want", [
    # another DLL's entry point: the loader's dialog, as before
    ("The procedure entry point ?_Xlength_error@std@@YAXPEBD@Z could not be located in the dynamic link "
     "library C:\\app\\onnxruntime.dll.", {"windows-dll-load-failed": "likely"}),
    # nvcuda.dll named, but not a CUDA entry point: as before
    ("The procedure entry point SetThreadDescription could not be located in the dynamic link library "
     "nvcuda.dll.", {"windows-dll-load-failed": "likely"}),
])
def test_the_entry_point_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- glibc's __mempcpy_inline through an nvcc older than the host gcc ------------------------------

@pytest.mark.parametrize("text", [
    "nvcc -c kernel.cu -o kernel.o\n/usr/include/string.h: In function 'void* __mempcpy_inline(void*, const "
    "void*, size_t)':\n/usr/include/string.h:652:42: error: 'memcpy' was not declared in this scope\n"
    "     return (char *) memcpy (__dest, __src, __n) + __n;\n                                          ^",
])
def test_memcpy_undeclared_in_glibcs_string_h_under_nvcc_is_gcc_too_new(text):
    assert _whole(text) == {
        "id": "gcc-too-new", "confidence": "likely",
        "title": "Host gcc newer than this CUDA toolkit's nvcc accepts",
        "cause": "nvcc's include/crt/host_config.h refuses gcc majors above N for this toolkit (each CUDA "
                 "release has a newest supported host gcc), or its front end fails on that gcc's headers.",
    }


@pytest.mark.parametrize("text, want", [
    # the program's own file forgot <cstring>: nothing
    ("src/buffer.cpp:41:5: error: 'memcpy' was not declared in this scope", {}),
])
def test_the_memcpy_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- GFPGAN's warning under torch.cuda.is_available() False ----------------------------------------

@pytest.mark.parametrize("text", [
    "(gfpgan) D:\\GFPGAN>python inference_gfpgan.py -i inputs/whole_imgs -o results -v 1.3 -s 2\n"
    "D:\\GFPGAN\\inference_gfpgan.py:61: UserWarning: The unoptimized RealESRGAN is slow on CPU. We do not "
    "use it. If you really want to use it, please modify the corresponding codes.\n  warnings.warn('The "
    "unoptimized RealESRGAN is slow on CPU. We do not use it. '",
    "inference_codeformer.py:45: RuntimeWarning: Running on CPU now! Make sure your PyTorch version matches "
    "your CUDA.The unoptimized RealESRGAN is slow on CPU. If you want to disable it, please remove "
    "`--bg_upsampler` and `--face_upsample` in command.",
])
def test_gfpgans_realesrgan_on_cpu_warning_is_a_cpu_only_torch(text):
    assert _whole(text) == {
        "id": "torch-not-cuda", "confidence": "likely", "title": "A CPU-only torch is installed",
        "cause": "The installed torch is a CPU build (+cpu, or a platform with no CUDA wheel).",
    }


@pytest.mark.parametrize("text, want", [
    # Real-ESRGAN run on a GPU, tiles mentioned: nothing
    ("Testing 0 00003\n\tTile 1/4\n\tTile 2/4\nRealESRGAN upsampling done in 3.2 s on cuda:0", {}),
])
def test_the_realesrgan_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- the runtime's bare "initialization error" raised mid-run -------------------------------------

@pytest.mark.parametrize("text", [
    "[2026-03-02 10:41:07 +0000] [5121] [ERROR] Exception in worker process\n"
    "  File \"/srv/app/asr.py\", line 88, in transcribe\n    feats = feats.to(self.device)\n"
    "RuntimeError: CUDA error: initialization error\nCUDA kernel errors might be asynchronously reported "
    "at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing "
    "CUDA_LAUNCH_BLOCKING=1.\nException raised from getDevice at ../c10/cuda/impl/CUDAGuardImpl.h:39 "
    "(most recent call first):",
])
def test_an_initialization_error_raised_mid_run_is_not_confidently_a_driver_mismatch(text):
    assert answers(text) == {"nvml-driver-mismatch": "possible", "no-driver-found": "possible"}


@pytest.mark.parametrize("text, want", [
    # at CUDA's initialisation: likely here, possible since the twenty-third round like everywhere
    # (test_emitter_round23_a.py: no labelled text holding the bare error alone was a mismatch)
    ("  File \"/usr/lib/python3/dist-packages/torch/cuda/__init__.py\", line 298, in _lazy_init\n"
     "    torch._C._cuda_init()\nRuntimeError: CUDA error: initialization error",
     {"nvml-driver-mismatch": "possible", "no-driver-found": "possible"}),
    # the mismatch in its own words, mid-run or not: as before
    ("RuntimeError: CUDA error: driver/library version mismatch\nCUDA kernel errors might be asynchronously "
     "reported at some other API call, so the stacktrace below might be incorrect.",
     {"nvml-driver-mismatch": "exact"}),
])
def test_the_initialization_error_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want
