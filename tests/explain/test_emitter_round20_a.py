"""The twentieth round, heldout20's first part: what its misses (scored once, then read) showed
that is general, mended from what the emitter prints and what it means, with texts other than any
held-out one and look-alikes that must stay where they were.

- TensorRT creating a builder or runtime when CUDA does not initialise ("CUDA initialization
  failure with error: %d. Please check your CUDA installation"): the number is the CUDA runtime's
  error, and 35 is cudaErrorInsufficientDriver (driver-too-old); other numbers are not read.
- PyTorch Lightning's device parser (MisconfigurationException("GPUs requested but none are
  available.")) when torch counts no CUDA device: a CPU build of torch counts none without an error
  (torch-not-cuda, likely).
- cuDNN 8's loader on Windows ("Could not locate %s. Please make sure it is in your library
  path!") naming a CUDA library it needs (cublas64_11.dll): that library is missing, not cuDNN
  (cuda-lib-missing); pyvideotrans's own notice for a missing cuBLAS DLL the same.
- hashcat's OpenCL loader ("Cannot find an OpenCL ICD loader library." then "You are probably
  missing the native OpenCL runtime or driver for your platform."): no OpenCL runtime is installed
  (opencl-no-platform, likely)."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole_cause_and_values as _whole



# --- TensorRT: CUDA does not initialise, error 35 ------------------------------------------------

_DRIVER = {
    "id": "driver-too-old", "confidence": "exact",
    "title": "NVIDIA driver older than the CUDA runtime needs",
    "cause": "The program's CUDA runtime (for pip torch: the CUDA it was built for, e.g. +cu121) needs a newer "
             "kernel driver than the node has. Each CUDA release has a minimum driver; minor-version "
             "compatibility only helps within a major (11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580). "
             "FFmpeg's NVENC encoders the same: the NVENC API its build uses needs a newer driver than the "
             "node has.",
    "fix": "Either upgrade the NVIDIA driver on that node to at least the minimum for torch's CUDA, or install "
           "the torch built for a CUDA this driver runs (`envcheck plan --gpu GPU --driver V` lists them).",
    "values": {},
}


@pytest.mark.parametrize("text", [
    "[03/14/2023-09:12:44] [TRT] [W] CUDA initialization failure with error: 35. Please check your CUDA "
    "installation:  http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html\n"
    "Traceback (most recent call last):\n  File \"build_engine.py\", line 18, in <module>\n"
    "    builder = trt.Builder(TRT_LOGGER)\n"
    "TypeError: pybind11::init(): factory function returned nullptr",
    "[TensorRT] ERROR: CUDA initialization failure with error 35. Please check your CUDA installation: "
    "http://docs.nvidia.com/cuda/cuda-installation-guide-linux/index.html\nSegmentation fault (core dumped)",
])
def test_tensorrt_cuda_initialization_error_35_is_a_driver_too_old(text):
    assert _whole(text) == _DRIVER


@pytest.mark.parametrize("text, want", [
    # another CUDA error number (100: no device) says nothing of the driver's age
    ("[TRT] [W] CUDA initialization failure with error: 100. Please check your CUDA installation", {}),
    ("[TRT] [W] CUDA initialization failure with error: 350", {}),
])
def test_other_tensorrt_initialization_errors_keep_their_answers(text, want):
    assert answers(text) == want


# --- PyTorch Lightning: GPUs asked for, torch counts none ----------------------------------------

_CPU_TORCH = {
    "id": "torch-not-cuda", "confidence": "likely",
    "title": "A CPU-only torch is installed",
    "cause": "The installed torch is a CPU build (+cpu, or a platform with no CUDA wheel).",
    "fix": "Install the CUDA build from the PyTorch index that matches your driver (`envcheck plan --gpu GPU "
           "--driver V`).",
    "values": {},
}


@pytest.mark.parametrize("text", [
    "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n"
    "    trainer = pl.Trainer(gpus=1, max_epochs=10)\n"
    "  File \"/opt/conda/lib/python3.8/site-packages/pytorch_lightning/utilities/device_parser.py\", "
    "line 78, in parse_gpu_ids\n"
    "    raise MisconfigurationException(\"GPUs requested but none are available.\")\n"
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUs requested but none are available.",
    "lightning_fabric.utilities.exceptions.MisconfigurationException: GPUs requested but none are available.",
])
def test_lightning_finding_no_gpus_is_a_cpu_torch(text):
    assert _whole(text) == _CPU_TORCH


def test_torch_own_no_cuda_gpus_keeps_its_answer():
    # a CUDA build that finds no usable driver says this itself: no driver first, as before
    assert answers("RuntimeError: No CUDA GPUs are available") == {"no-driver-found": "likely"}


# --- cuDNN's loader naming a CUDA library; pyvideotrans's notice ----------------------------------

def _cuda_lib(lib, ver, confidence="exact"):
    return {
        "id": "cuda-lib-missing", "confidence": confidence,
        "title": f"CUDA library {lib} not found by the dynamic loader",
        "cause": f"The program was built against a CUDA toolkit whose {lib} (soname version {ver}) the loader "
                 "cannot find: that release is not installed, another is (sonames carry the major, or "
                 "major.minor before CUDA 11), or its lib directory is not on LD_LIBRARY_PATH / in ld.so.conf.d "
                 "for the shell that started the job.",
        "fix": f"Install the CUDA toolkit (or the pip nvidia-* wheel) that provides {lib} (version {ver}), or the "
               "build of the program made for the one you have; make its lib directory visible (CUDA's: `envcheck "
               "env --cuda-home /usr/local/cuda-X.Y`).",
        "values": {"lib": lib, "ver": ver} if ver != "?" else {},
    }


@pytest.mark.parametrize("text, lib, ver", [
    ("2024-05-02 10:11:12 I tensorflow/stream_executor/platform/default/dso_loader.cc:53] Successfully opened "
     "dynamic library cudnn64_8.dll\nCould not locate cublasLt64_11.dll. Please make sure it is in your "
     "library path!", "cublasLt64_11", "11"),
    ("Could not locate cufft64_10.dll. Please make sure it is in your library path!", "cufft64_10", "10"),
])
def test_cudnn_loader_naming_a_cuda_library_is_that_library_missing(text, lib, ver):
    assert _whole(text) == _cuda_lib(lib, ver)


@pytest.mark.parametrize("text", [
    "[error]请打开 github.com/jianchang512/pyvideotrans 查看常见问题【缺少cublasxx.dll】",
    "[error]Open web github.com/jianchang512/pyvideotrans and search [missing cublasxx.dll]",
])
def test_pyvideotrans_missing_cublas_notice_is_a_cuda_library_missing(text):
    assert _whole(text) == _cuda_lib("(named above it in the log)", "?", "likely")


@pytest.mark.parametrize("text, want", [
    # cuDNN's loader naming a DLL of its own, or one that is not CUDA's: cuDNN's, as before
    ("Could not locate zlibwapi.dll. Please make sure it is in your library path!", {"cudnn-lib-missing": "likely"}),
    ("Could not locate cudnn_ops_infer64_8.dll. Please make sure it is in your library path!",
     {"cudnn-lib-missing": "exact"}),
])
def test_cudnn_loader_naming_its_own_dlls_keeps_its_answers(text, want):
    assert answers(text) == want


# --- hashcat: no OpenCL ICD loader ---------------------------------------------------------------

_OPENCL = {
    "id": "opencl-no-platform", "confidence": "likely",
    "title": "No OpenCL implementation is registered (the ICD loader finds no platform)",
    "cause": "OpenCL programs load libOpenCL (the ICD loader), which finds the vendors' implementations through "
             "the files in /etc/OpenCL/vendors (or OCL_ICD_VENDORS); none names a library that loads: the "
             "vendor's OpenCL runtime is not installed (only the loader and headers), a container has no "
             "/etc/OpenCL/vendors/nvidia.icd for the driver's libnvidia-opencl.so.1, or a conda environment's "
             "ocl-icd looks only in the environment's own etc/OpenCL/vendors.",
    "fix": "Install the vendor's OpenCL ICD (NVIDIA's comes with the driver's compute libraries, e.g. "
           "nvidia-opencl-icd or libnvidia-compute; pocl for a CPU); in a container add the ICD file (`mkdir -p "
           "/etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd`); in conda "
           "`conda install -c conda-forge ocl-icd-system`; check with `clinfo -l`.",
    "values": {},
}


@pytest.mark.parametrize("text", [
    "$ ./hashcat.bin -b\nhashcat (v5.1.0) starting in benchmark mode...\n\n"
    "Cannot find an OpenCL ICD loader library.\n\n"
    "You are probably missing the native OpenCL runtime or driver for your platform.\n\n"
    "* AMD GPUs on Linux require this runtime and/or driver:\n  \"RadeonOpenCompute (ROCm)\" Software Platform "
    "(1.6.180 or later)",
    "hashcat (v6.2.6) starting\n\nCannot find an OpenCL ICD loader library.",
])
def test_hashcat_without_an_opencl_icd_loader_is_no_opencl_platform(text):
    assert _whole(text) == _OPENCL


def test_opencl_device_not_found_keeps_its_answer():
    # a runtime registered that has no device of the kind asked: no id says it
    assert answers("clGetDeviceIDs(): CL_DEVICE_NOT_FOUND\nclGetDeviceIDs(): CL_DEVICE_NOT_FOUND") == {}
