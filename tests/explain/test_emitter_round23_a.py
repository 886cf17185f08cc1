"""The twenty-third round, heldout23's first part (owners 0-9/a-m, heldout23a): what its misses and
confident negatives (scored once, then read) showed that is general, mended from what the emitter
prints and what it means, with texts other than any held-out one and look-alikes that keep their
answers.

- SageAttention's kernel assertions (sageattention/core.py: `assert SM80_ENABLED, "SM80 kernel is
  not available. make sure you GPUs with compute capability 8.0 or higher."`, SM89 "... 8.9.", SM90
  "... 9.0."; the flag is set by a bare try/except around the import of its compiled module):
  sageattn() picks the kernel by the device's own arch, so the assertion says the compiled module
  did not import (not built for that arch, or a wheel for another torch/CUDA):
  extension-ops-missing (likely), gpu-too-old only possible (a kernel called directly on an older
  GPU).
- glibc's loader refusing one of the CUDA runtime's kernel-launch entry points at an extension's
  import ("undefined symbol: cudaSetupArgument", cudaConfigureCall, cudaLaunch: what nvcc before 9.2
  generates and libcudart dropped in 10.1; "__cudaPopCallConfiguration" /
  "__cudaPushCallConfiguration": what nvcc 9.2+ generates and no older runtime has): the extension
  was compiled by a toolkit on the other side of that line from torch's CUDA,
  toolkit-torch-mismatch (likely). A link's "undefined reference to `cudaSetupArgument'" is not
  read.
- GNU ld of conda's own toolchain (x86_64-conda-linux-gnu-ld, .../x86_64-conda_cos7-linux-gnu/bin/ld)
  not finding a CUDA library's link library (-lcudart, -lcublas ...): conda's CUDA packages keep the
  unversioned .so in their -dev packages (cuda-cudart-dev, libcublas-dev ...), so
  dev-package-missing (likely) naming them; the same words from another linker stay
  cuda-home-unset's.
- LightGBM's recompile line alone ("Please recompile with CMake option -DUSE_CUDA=1", "-DUSE_CUDAP=1"
  in 4.0 - 4.1, "-DUSE_CUDA_EXP=1" with 3.3's "CUDA Tree Learner experimental version", "-DUSE_GPU=1")
  is the fifteenth round's CPU-only LightGBM (torch-not-cuda, titled for LightGBM);
  lightgbm-org/LightGBM#6205 relabelled from extension-ops-missing to torch-not-cuda (was: in the
  file).
- The CUDA runtime's bare "initialization error" (cudaErrorInitializationError,
  CUDA_ERROR_NOT_INITIALIZED: the confident negative chainer/chainer#2394, a process forked after
  CUDA was initialised) names no one cause: of the labelled texts holding it alone none was a driver
  mismatch (forks, an old driver, a busy GPU), so the catalogue now gives all its causes as possible,
  at initialisation too (test_emitter_round21_b.py's look-alike follows).

Left: bycloudai/instant-ngp-Windows#4 (CMake's "CMAKE_CUDA_ARCHITECTURES must be valid if set." is an
architectures value set empty or with no number in it, CMake 3.23's CMakeDetermineCUDACompiler.cmake;
no sign of the broken toolkit the reporter reinstalled),
karpathy/char-rnn#179 (char-rnn's own fallback after `require 'cutorch'` failed, no sign of which of
its causes), deepmodeling/deepmd-kit#99 (libcuda.so.1 missing is no-driver-found's definition; that
the job imported another TensorFlow shows nowhere in the text): `other:` labels with no sign of their
cause. LuxCoreRender/BlendLuxCore#604 (a confident negative: cuInit's CUDA_ERROR_NO_DEVICE on a
machine with a driver and no NVIDIA GPU, which LuxCore's Init did not tolerate before it made CUDA
optional): the text's cause is the machine's as no-driver-found defines it; the program's fault shows
only in LuxCore's history, not in words a general rule reads."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, confident, whole_cause, whole_cause_and_values


# --- SageAttention's kernel assertions ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # the SM89 kernel, from sageattn()'s dispatch on an Ada GPU, in a traceback
    "  File \"/venv/lib/python3.11/site-packages/sageattention/core.py\", line 148, in sageattn\n"
    "    return sageattn_qk_int8_pv_fp8_cuda(q, k, v, tensor_layout=tensor_layout, is_causal=is_causal)\n"
    "  File \"/venv/lib/python3.11/site-packages/sageattention/core.py\", line 725, in sageattn_qk_int8_pv_fp8_cuda\n"
    "    assert SM89_ENABLED, \"SM89 kernel is not available. Make sure you GPUs with compute capability 8.9.\"\n"
    "AssertionError: SM89 kernel is not available. Make sure you GPUs with compute capability 8.9.",
    # the SM90 kernel on a Hopper node
    "!!! Exception during processing !!! SM90 kernel is not available. Make sure you GPUs with compute "
    "capability 9.0.",
    # the SM80 one inside a ComfyUI log
    "[2025-04-02 10:11:12.345] !!! Exception during processing !!! SM80 kernel is not available. make sure you "
    "GPUs with compute capability 8.0 or higher.\nTraceback (most recent call last):\n"
    "  File \"/ComfyUI/execution.py\", line 327, in execute",
])
def test_sageattentions_missing_kernel_is_its_compiled_module_not_imported(text):
    assert answers(text) == {"extension-ops-missing": "likely", "gpu-too-old": "possible"}
    assert whole_cause(text)["title"] == "The framework's compiled CUDA ops are missing or built without CUDA"


@pytest.mark.parametrize("text, want", [
    # SageAttention's dispatcher on an architecture it has no kernel for: not the compiled module
    ("ValueError: Unsupported CUDA architecture: sm75", {"nvcc-arch-unsupported": "possible"}),
    # a library's gate on the GPU in its own words keeps its answer
    ("RuntimeError: FlashAttention only supports Ampere GPUs or newer.", {"gpu-too-old": "exact"}),
])
def test_the_sageattention_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- the CUDA runtime's launch API of the other side of nvcc 9.2 / CUDA 10.1 ----------------------

@pytest.mark.parametrize("text, symbol", [
    # device code from an nvcc before 9.2 under a torch for CUDA 10.1 or later
    ("  File \"/data/CenterNet/src/lib/models/networks/DCNv2/dcn_v2.py\", line 13, in <module>\n"
     "    import _ext as _backend\nImportError: /data/CenterNet/src/lib/models/networks/DCNv2/"
     "_ext.cpython-36m-x86_64-linux-gnu.so: undefined symbol: cudaSetupArgument", "cudaSetupArgument"),
    ("ImportError: /home/u/FCOS/fcos_core/_C.cpython-37m-x86_64-linux-gnu.so: undefined symbol: cudaConfigureCall",
     "cudaConfigureCall"),
    ("OSError: /opt/ext/libroi_pool.so: undefined symbol: cudaLaunch", "cudaLaunch"),
    # device code from nvcc 9.2 or later under a torch for CUDA 9.0 or older
    ("ImportError: /home/u/FaceBoxes.PyTorch/utils/nms/gpu_nms.cpython-36m-x86_64-linux-gnu.so: undefined "
     "symbol: __cudaPopCallConfiguration", "__cudaPopCallConfiguration"),
    ("ImportError: /srv/mmdet/ops/dcn/deform_conv_cuda.cpython-37m-x86_64-linux-gnu.so: undefined symbol: "
     "__cudaPushCallConfiguration", "__cudaPushCallConfiguration"),
])
def test_an_extension_refusing_the_other_launch_api_was_built_by_another_toolkit(text, symbol):
    got = whole_cause_and_values(text)
    assert (got["id"], got["confidence"], got["values"]) == ("toolkit-torch-mismatch", "likely", {"symbol": symbol})
    assert answers(text) == {"toolkit-torch-mismatch": "likely"}


@pytest.mark.parametrize("text", [
    # a link that did not name cudart reads the same: not read
    "/usr/bin/ld: obj/kernels.o: in function `__device_stub__Z6kernelPf(float*)':\n"
    "tmpxft_00001ae5_00000000-5_kernels.cudafe1.cpp:(.text+0x1b5): undefined reference to `cudaSetupArgument'",
    # cudaLaunchKernel is in every runtime since CUDA 7: not the old API
    "ImportError: /opt/conda/lib/python3.10/site-packages/foo/_C.so: undefined symbol: cudaLaunchKernel",
])
def test_other_cuda_runtime_symbols_are_not_a_toolkit_mismatch(text):
    assert "toolkit-torch-mismatch" not in answers(text)


def test_a_torch_symbol_keeps_its_answer():
    assert answers("ImportError: /opt/conda/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: "
                   "undefined symbol: _ZN2at6detail10empty_cudaEN3c108ArrayRefIlEE") == {"undefined-symbol": "exact"}


# --- conda's own linker missing a CUDA link library -----------------------------------------------

@pytest.mark.parametrize("text, lib_name, pkg", [
    ("x86_64-conda-linux-gnu-ld: cannot find -lcudart: No such file or directory\n"
     "collect2: error: ld returned 1 exit status\nerror: command '/opt/conda/envs/t/bin/x86_64-conda-linux-gnu-c++' "
     "failed with exit code 1", "the CUDA runtime", "conda: cuda-cudart-dev"),
    ("/home/u/miniconda3/envs/t/bin/../lib/gcc/x86_64-conda_cos7-linux-gnu/9.3.0/../../../../"
     "x86_64-conda_cos7-linux-gnu/bin/ld: cannot find -lcublasLt", "cuBLAS", "conda: libcublas-dev"),
    ("/opt/conda/envs/j/bin/aarch64-conda-linux-gnu-ld: cannot find -lcufft: No such file or directory",
     "cuFFT", "conda: libcufft-dev"),
])
def test_condas_linker_missing_a_cuda_link_library_is_its_dev_package(text, lib_name, pkg):
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("dev-package-missing", "likely")
    assert f"includes {lib_name}'s header" in got["cause"] and pkg in got["fix"]
    # (distutils' "command ... failed" after it adds the catalogue's possible extension-torch-incompatible)
    assert confident(text) == ["dev-package-missing"] and "cuda-home-unset" not in answers(text)


@pytest.mark.parametrize("text, want", [
    # another linker: no sign whose toolkit, as before
    ("/usr/bin/ld: cannot find -lcudart: No such file or directory", {"cuda-home-unset": "likely"}),
    ("/usr/bin/ld: cannot find -lcublas: No such file or directory", {"cuda-home-unset": "likely"}),
    # conda's linker on the driver's libcuda, cuDNN and NCCL: their own answers, as before
    ("x86_64-conda-linux-gnu-ld: cannot find -lcuda: No such file or directory", {"libcuda-not-in-ldcache": "likely"}),
    ("x86_64-conda-linux-gnu/bin/ld: cannot find -lcudnn: No such file or directory", {"cudnn-lib-missing": "likely"}),
    ("x86_64-conda-linux-gnu-ld: cannot find -lnccl: No such file or directory", {"dev-package-missing": "likely"}),
])
def test_the_link_library_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- LightGBM's recompile line ----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # 4.7's second line alone
    "lightgbm.basic.LightGBMError: Please recompile with CMake option -DUSE_CUDA=1 (NVIDIA GPUs) or -DUSE_ROCM=1 "
    "(AMD GPUs)",
    # 3.3's experimental CUDA learner, both lines
    "[LightGBM] [Fatal] CUDA Tree Learner experimental version was not enabled in this build.\n"
    "Please recompile with CMake option -DUSE_CUDA_EXP=1",
    # the OpenCL learner's line alone
    "Please recompile with CMake option -DUSE_GPU=1",
])
def test_lightgbms_recompile_line_is_a_cpu_only_lightgbm(text):
    got = whole_cause(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "torch-not-cuda", "likely", "A CPU-only LightGBM (no GPU learner) is installed")


@pytest.mark.parametrize("text", [
    # the Metal learner is no CUDA one
    "[LightGBM] [Fatal] Metal Tree Learner was not enabled in this build.\n"
    "Please recompile with CMake option -DUSE_METAL=ON.",
    # another option of the same words
    "Please recompile with CMake option -DUSE_MPI=1",
])
def test_lightgbms_other_options_are_not_a_cpu_build(text):
    assert "torch-not-cuda" not in answers(text)


# --- the runtime's bare "initialization error" ------------------------------------------------------

@pytest.mark.parametrize("text", [
    # CuPy in a multiprocessing worker (a fork after the parent used the GPU)
    "Process ForkPoolWorker-2:\nTraceback (most recent call last):\n"
    "  File \"/usr/lib/python3.10/multiprocessing/pool.py\", line 125, in worker\n"
    "    result = (True, func(*args, **kwds))\n  File \"train.py\", line 51, in step\n"
    "    x = cupy.asarray(batch)\n"
    "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInitializationError: initialization error",
    # torch's words for it, and the driver API's code, with no sign where
    "RuntimeError: CUDA error: initialization error",
    "numba.cuda.cudadrv.driver.CudaAPIError: [3] Call to cuCtxGetCurrent results in CUDA_ERROR_NOT_INITIALIZED",
    # at torch's initialisation too
    "  File \"/usr/lib/python3/dist-packages/torch/cuda/__init__.py\", line 298, in _lazy_init\n"
    "    torch._C._cuda_init()\nRuntimeError: CUDA error: initialization error",
])
def test_the_bare_initialization_error_names_no_cause_confidently(text):
    assert confident(text) == []
    assert answers(text).get("nvml-driver-mismatch") == "possible"


@pytest.mark.parametrize("text, want", [
    # the mismatch in its own words, NVML's and the runtime's 803
    ("Failed to initialize NVML: Driver/library version mismatch", {"nvml-driver-mismatch": "exact"}),
    ("RuntimeError: CUDA error: system has unsupported display driver / cuda driver combination",
     {"nvml-driver-mismatch": "likely", "cuda-compat-unsupported": "possible"}),
    # torch's own words for cudaGetDeviceCount's initialization error
    ("RuntimeError: CUDA driver initialization failed, you might not have a CUDA gpu.",
     {"nvml-driver-mismatch": "likely", "no-driver-found": "possible"}),
])
def test_the_driver_mismatch_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


def test_the_fork_in_torchs_words_stays_exact():
    found = explain("RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with "
                    "multiprocessing, you must use the 'spawn' start method")
    assert (found[0].id, found[0].confidence) == ("cuda-fork", "exact")
