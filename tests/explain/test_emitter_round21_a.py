"""The twenty-first round, heldout21's first part: what its misses (scored once, then read) showed
that is general, mended from what the emitter prints and what it means, with texts other than any
held-out one and look-alikes that must stay where they were.

- CUDA_ERROR_NO_BINARY_FOR_GPU as the driver API's wrappers print it ("No binary for GPU": mumax3's
  cu package, JCuda, PyCUDA) and Kokkos' CUDA backend whose probe kernel never ran
  ("Kokkos::Cuda::initialize ERROR: likely mismatch of architecture"): no kernel for this GPU
  (no-kernel-image, likely).
- The loader's "undefined symbol: cudnn..." in a module built against cuDNN (CuPy's cudnn module):
  another cuDNN release is loaded (cudnn-version-mismatch, likely); torch's own libraries missing it
  stay cuda-libs-conflict.
- FluxMPI.jl's warning "MPI Implementation is not CUDA Aware" (mpi-not-cuda-aware, likely).
- sherpa-onnx asked for a GPU provider by its CPU build ("Please compile with
  -DSHERPA_ONNX_ENABLE_GPU=ON"): the CPU package is installed (torch-not-cuda, likely).
- AutoAWQ's backward without its compiled kernels ("auto-awq kernels is needed to be installed"):
  extension-ops-missing, likely."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole_cause_and_values as _whole



# --- no kernel for this GPU: the driver API's wrappers, Kokkos ----------------------------------

_NO_KERNEL = {
    "id": "no-kernel-image", "confidence": "likely",
    "title": "No GPU kernel for this GPU's architecture",
    "cause": "The binary (torch, torchvision or a custom extension) carries no cubin for this GPU's compute "
             "capability and no PTX the driver could JIT-compile. Typical: an old torch (cu90/cu100/cu102) on an "
             "Ampere or newer GPU, a GPU older than the build supports, or an extension built with "
             "TORCH_CUDA_ARCH_LIST that leaves this GPU out. On ROCm the same: no code object for the GPU's gfx "
             "target (consumer Radeon cards outside the ROCm build's target list).",
    "fix": "Install a torch/torchvision built for a CUDA that covers this GPU's sm (see `envcheck plan --gpu GPU`), "
           "or rebuild the extension with the GPU's arch in TORCH_CUDA_ARCH_LIST. On ROCm, use a build whose "
           "targets include the gfx (PYTORCH_ROCM_ARCH when building), or for a card close to a supported one set "
           "HSA_OVERRIDE_GFX_VERSION (10.3.0 for RDNA2, 11.0.0 for RDNA3), as AMD's docs describe.",
    "values": {},
}


@pytest.mark.parametrize("text", [
    "//starting mumax3 on GeForce GTX 680\npanic: CUDA_ERROR_NO_BINARY_FOR_GPU: No binary for GPU\n\n"
    "goroutine 1 [running]:\ngithub.com/mumax/3/cuda/cu.(*Module).GetFunction",
    "jcuda.CudaException: CUDA_ERROR_NO_BINARY_FOR_GPU\n\tat jcuda.driver.JCudaDriver.checkResult(JCudaDriver.java:359)"
    "\nNo binary for gpu. Selected Tesla K10.G1.8GB (3.0). 2.0 compatibility required.",
    "pycuda._driver.LogicError: cuModuleLoadDataEx failed: no binary for gpu -",
    "Kokkos::Cuda::initialize ERROR: likely mismatch of architecture\n\ntraceback:\n"
    "[0x4ac7d3]\n[0x4a2e11]\nAborted (core dumped)",
    "LAMMPS (2 Aug 2023)\nKOKKOS mode is enabled (src/KOKKOS/kokkos.cpp:107)\n"
    "Kokkos::Cuda::initialize ERROR: likely mismatch of architecture",
])
def test_no_binary_for_gpu_and_kokkos_arch_mismatch_are_no_kernel_image(text):
    assert _whole(text) == _NO_KERNEL


def test_kokkos_compute_capability_too_high_keeps_its_answer():
    # the other check at initialize names both capabilities: the GPU below the build's, as before
    assert answers("Kokkos::Cuda::initialize ERROR: running kernels compiled for compute capability 7.2 on "
                   "device with compute capability 7.0 is not supported by CUDA!") == {"gpu-too-old": "possible"}


def test_no_cuda_device_keeps_its_answer():
    assert answers("CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected") == {"no-driver-found": "exact"}


# --- a cuDNN symbol missing from the cuDNN loaded -------------------------------------------------

_CUDNN_OTHER = {
    "id": "cudnn-version-mismatch", "confidence": "likely",
    "title": "A cuDNN other than the one the framework was built with is loaded",
    "cause": "The framework was built against cuDNN ? but the loader found ? first: usually a system or conda "
             "cuDNN on LD_LIBRARY_PATH shadowing the one pip torch bundles, or (TensorFlow, JAX) an installed "
             "cuDNN older than the wheel needs.",
    "fix": "For pip torch remove the foreign cuDNN from LD_LIBRARY_PATH (torch ships its own); for TensorFlow/JAX "
           "install the cuDNN the wheel names (`envcheck install-cudnn ARCHIVE --cuda X.Y`) and make it the one "
           "found first (`envcheck env --cuda-home ...`).",
    "values": {},
}


@pytest.mark.parametrize("text", [
    "Traceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
    "  File \"/opt/conda/lib/python3.9/site-packages/cupy/cudnn.py\", line 7, in <module>\n"
    "    from cupy_backends.cuda.libs import cudnn\n"
    "ImportError: /opt/conda/lib/python3.9/site-packages/cupy_backends/cuda/libs/cudnn.cpython-39-x86_64-linux-gnu.so: "
    "undefined symbol: cudnnGetVersion",
    "ImportError: /home/u/.local/lib/python3.7/site-packages/cupy/cuda/cudnn.cpython-37m-x86_64-linux-gnu.so: "
    "undefined symbol: cudnnSetConvolutionGroupCount",
])
def test_a_cudnn_symbol_missing_from_a_cudnn_binding_is_another_cudnn_loaded(text):
    assert _whole(text) == _CUDNN_OTHER


def test_torch_missing_a_cudnn_symbol_keeps_its_answer():
    # possible since round 30's t-z part (test_emitter_round30_d.py): cuDNN 8 versions its symbols, so
    # an unversioned reference torch lacks (cudnnGetVersion is in every cuDNN) is a library not
    # loaded at all rather than an older release of it
    assert answers("ImportError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
                   "cudnnGetVersion") == {"cuda-libs-conflict": "possible"}


def test_a_cuda_runtime_symbol_missing_keeps_its_answer():
    # a library built against CUDA and linked without its runtime (vosk over a CUDA Kaldi): not cuDNN,
    # and no lead either since heldout36 joined the key table ("undefined symbol" alone: 0.5 for
    # undefined-symbol, not above MIN_SCORE; it was the key table's possible lead before)
    assert answers("OSError: /usr/local/lib/libvosk.so: undefined symbol: cudaMemcpyAsync") == {}


# --- FluxMPI.jl: the MPI library is not CUDA-aware ------------------------------------------------

def test_fluxmpi_warning_is_mpi_not_cuda_aware():
    text = ("┌ Warning: MPI Implementation is not CUDA Aware.\n"
            "└ @ FluxMPI ~/.julia/packages/FluxMPI/Xs8Ro/src/FluxMPI.jl:28")
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "mpi-not-cuda-aware", "likely", "The MPI library is not CUDA-aware", {})
    assert got["cause"].startswith("A GPU buffer was handed to MPI (or CUDA support asked for) but the MPI stack "
                                   "was built without CUDA support")


def test_fluxmpi_saying_mpi_is_cuda_aware_names_nothing():
    assert answers("[ Info: MPI Implementation is CUDA Aware.") == {}


# --- sherpa-onnx's CPU build asked for a GPU provider ---------------------------------------------

_CPU_BUILD = {
    "id": "torch-not-cuda", "confidence": "likely",
    "title": "A CPU-only torch is installed",
    "cause": "The installed torch is a CPU build (+cpu, or a platform with no CUDA wheel).",
    "fix": "Install the CUDA build from the PyTorch index that matches your driver (`envcheck plan --gpu GPU "
           "--driver V`).",
    "values": {},
}


@pytest.mark.parametrize("text", [
    "/home/runner/work/sherpa-onnx/sherpa-onnx/sherpa-onnx/csrc/session.cc:GetSessionOptionsImpl:173 Please compile "
    "with -DSHERPA_ONNX_ENABLE_GPU=ON. Available providers: CPUExecutionProvider, . Fallback to cpu!",
    "D:\\a\\sherpa-onnx\\sherpa-onnx\\sherpa-onnx\\csrc\\session.cc:GetSessionOptionsImpl:199 Please compile with "
    "-DSHERPA_ONNX_ENABLE_GPU=ON. Available providers: CPUExecutionProvider, . Fallback to cpu!",
])
def test_sherpa_onnx_cpu_build_asked_for_cuda_is_a_cpu_package(text):
    assert _whole(text) == _CPU_BUILD


def test_sherpa_onnx_unknown_provider_string_names_nothing():
    assert answers("/project/sherpa-onnx/csrc/session.cc:GetSessionOptionsImpl:186 Unsupported string: dml. "
                   "Fallback to cpu") == {}


# --- AutoAWQ's backward without its kernels -------------------------------------------------------

@pytest.mark.parametrize("text", [
    "  File \"/usr/local/lib/python3.10/dist-packages/awq/modules/linear/gemm.py\", line 143, in backward\n"
    "    raise ValueError(\nValueError: either triton or autoawq-kernels is needed to be installed to use "
    "`.backward()`. Make sure to install the auto-awq kernels by following the installation guides in "
    "https://github.com/casper-hansen/AutoAWQ_kernels",
    "ValueError: auto-awq kernels is needed to be installed to use `.backward()`.",
])
def test_autoawq_backward_without_kernels_is_extension_ops_missing(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["values"]) == ("extension-ops-missing", "likely", {})
    assert got["title"] == "The framework's compiled CUDA ops are missing or built without CUDA"
