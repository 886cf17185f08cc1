"""The twenty-second round, heldout22's second part (owners n-z): what its misses (scored once, then
read) showed that is general, mended from what the emitter prints and what it means, with texts
other than any held-out one and look-alikes that keep their answers.

- PaddlePaddle's own checks of its CPU package (the pip `paddlepaddle`; `paddlepaddle-gpu` is the
  CUDA build) asked for a GPU: fluid/framework.py cuda_places() / cuda_pinned_places() (`assert
  core.is_compiled_with_cuda(), "Not compiled with CUDA"`), paddle.device.set_device ("The device
  should not be %s, since PaddlePaddle is not compiled with CUDA"), the inference library's
  AnalysisConfig::EnableUseGpu without PADDLE_WITH_CUDA ("Please compile with gpu to EnableGpu()"):
  torch-not-cuda's class (likely), titled for PaddlePaddle; no longer an extension's compiled ops
  (extension-ops-missing keeps the extensions' own "not compiled with GPU/CUDA support").
- Paddle 1.x's gpu_info.cc PADDLE_ENFORCE on a CUDA runtime call ("%s failed in
  paddle::platform::%s, error code : %d, ..."): the number is the call's cudaError_t, 35
  cudaErrorInsufficientDriver in every CUDA release (driver-too-old, exact); another code, nothing.
- Paddle's init.cc "Compiled with WITH_GPU, but no GPU found in runtime." (counting the GPUs threw
  in a CUDA build; from 1.8 a missing driver returns 0 without it): driver-too-old as a lead only
  (possible); the XPU twin is not it.
- The confident negative Paddle#1468 (the CUDA runtime's "no CUDA-capable device is detected" from a
  GPU build run with --use_gpu=false) shows no CPU ask in its text; Paddle's programs ask for the
  CPU with --use_gpu false (use_gpu=False in their APIs), which the CPU-run rule now reads, so where
  a text shows it no-driver-found is only possible (cpu_run), as for --device cpu."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole_cause


# --- PaddlePaddle's CPU package asked for a GPU ----------------------------------------------------

_PADDLE_CPU = {
    "id": "torch-not-cuda", "confidence": "likely",
    "title": "A CPU-only PaddlePaddle is installed",
    "cause": "The installed PaddlePaddle is a CPU build (+cpu, or a platform with no CUDA wheel).",
    "fix": "Uninstall `paddlepaddle` and install `paddlepaddle-gpu` built for your CUDA (PaddlePaddle's install "
           "page gives the index for each CUDA; for C++ the GPU build of the Paddle Inference library), then "
           "check with `python -c \"import paddle; paddle.utils.run_check()\"`.",
}


@pytest.mark.parametrize("text", [
    # cuda_pinned_places(), the other caller of the same assert
    'Traceback (most recent call last):\n  File "train.py", line 40, in <module>\n'
    '    places = fluid.cuda_pinned_places(1)\n'
    '  File "/usr/lib/python3.6/site-packages/paddle/fluid/framework.py", line 212, in cuda_pinned_places\n'
    '    "Not compiled with CUDA"\nAssertionError: Not compiled with CUDA',
    # Paddle 2.x's set_device
    "ValueError: The device should not be <re.Match object; span=(0, 5), match='gpu:0'>, since PaddlePaddle "
    "is not compiled with CUDA",
    # the C++ inference library's config
    "I0612 10:02:11.114 3321 analysis_predictor.cc:155] Profiler is deactivated\n"
    "E0612 10:02:11.120 3321 analysis_config.cc:80] Please compile with gpu to EnableGpu()",
])
def test_paddles_own_checks_of_its_cpu_package_are_a_cpu_only_paddle(text):
    assert whole_cause(text) == _PADDLE_CPU


@pytest.mark.parametrize("text, want", [
    # the extensions' own words for ops built without CUDA stay extension-ops-missing
    ("NotImplementedError: Not compiled with GPU support", {"extension-ops-missing": "likely"}),
    ("RuntimeError: Not compiled with CUDA support", {"extension-ops-missing": "likely"}),
    ('raise AssertionError("Not compiled with CUDA support")\nAssertionError: Not compiled with CUDA support',
     {"extension-ops-missing": "likely"}),
    # torch's own words, as before
    ("AssertionError: Torch not compiled with CUDA enabled", {"torch-not-cuda": "exact"}),
])
def test_the_cpu_build_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


def test_an_extensions_message_keeps_the_extensions_title():
    assert whole_cause("RuntimeError: Not compiled with CUDA support")["title"] == (
        "The framework's compiled CUDA ops are missing or built without CUDA")


# --- Paddle's gpu_info.cc: a CUDA runtime call's error code ----------------------------------------

_DRIVER = {
    "id": "driver-too-old",
    "title": "NVIDIA driver older than the CUDA runtime needs",
    "cause": "The program's CUDA runtime (for pip torch: the CUDA it was built for, e.g. +cu121) needs a newer "
             "kernel driver than the node has. Each CUDA release has a minimum driver; minor-version "
             "compatibility only helps within a major (11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580). "
             "FFmpeg's NVENC encoders the same: the NVENC API its build uses needs a newer driver than the node has.",
    "fix": "Either upgrade the NVIDIA driver on that node to at least the minimum for torch's CUDA, or install the "
           "torch built for a CUDA this driver runs (`envcheck plan --gpu GPU --driver V` lists them).",
}


@pytest.mark.parametrize("text", [
    "paddle.fluid.core_avx.EnforceNotMet: cudaSetDevice failed in paddle::platform::SetDeviced, error code : 35, "
    "Please see detail in https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
    # the copies name the pointers and length before the code
    "cudaMemcpyAsync failed in paddle::platform::GpuMemcpyAsync (0x7f00 -> 0x7f10, length: 4) error code : 35, "
    "Please see detail in https://docs.nvidia.com/cuda",
])
def test_paddles_cuda_call_failing_with_code_35_is_driver_too_old(text):
    assert whole_cause(text) == {**_DRIVER, "confidence": "exact"}


@pytest.mark.parametrize("text", [
    # 30 is cudaErrorUnknown: no cause in the number
    "cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 30, Please see detail in "
    "https://docs.nvidia.com/cuda",
    # 350 is no runtime error code of this meaning
    "cudaGetDeviceCount failed in paddle::platform::GetCUDADeviceCountImpl, error code : 350, Please see detail",
])
def test_other_codes_are_not_driver_too_old(text):
    assert "driver-too-old" not in answers(text)


# --- Paddle's init.cc: no GPU counted in a CUDA build ----------------------------------------------

def test_no_gpu_found_in_runtime_is_a_driver_too_old_lead():
    text = "W1203 09:46:38.052230  8109 init.cc:182] Compiled with WITH_GPU, but no GPU found in runtime."
    assert whole_cause(text) == {**_DRIVER, "confidence": "possible"}


def test_the_xpu_twin_is_not_a_cuda_driver():
    assert "driver-too-old" not in answers(
        "W0102 11:20:01.000 77 init.cc:190] Compiled with WITH_XPU, but no XPU found in runtime.")


# --- PaddlePaddle's --use_gpu asking for the CPU (cpu_run) -----------------------------------------

@pytest.mark.parametrize("text", [
    # Paddle v1's trainer told to run on the CPU, its GPU build initialising CUDA anyway
    "paddle train --config=trainer_config.py --use_gpu=false --trainer_count=4\n"
    "F0301 10:11:12.000 77 hl_cuda_device.cc:566] Check failed: cudaSuccess == cudaStat (0 vs. 38) Cuda Error: "
    "no CUDA-capable device is detected",
    # PaddleOCR's tools and API
    "python3 tools/infer/predict_system.py --use_gpu False --image_dir=./doc/imgs\n"
    "RuntimeError: no CUDA-capable device is detected",
    "ocr = PaddleOCR(use_angle_cls=True, use_gpu=False)\ncudaErrorNoDevice: no CUDA-capable device is detected",
])
def test_no_device_where_paddle_was_asked_for_the_cpu_is_only_possible(text):
    assert answers(text) == {"no-driver-found": "possible"}


@pytest.mark.parametrize("text", [
    "python3 tools/infer/predict_system.py --use_gpu True --image_dir=./doc/imgs\n"
    "RuntimeError: no CUDA-capable device is detected",
    "config: use_gpu=0.5\nRuntimeError: no CUDA-capable device is detected",
    "F0301 hl_cuda_device.cc:566] Check failed: cudaSuccess == cudaStat (0 vs. 38) Cuda Error: no CUDA-capable "
    "device is detected",
])
def test_no_device_without_a_cpu_ask_stays_exact(text):
    assert answers(text) == {"no-driver-found": "exact"}
