"""The thirtieth round, heldout30's t-z part, texts 99-116 (traveller59/spconv#50 to
tensorflow/serving#1051: the t-z owners' part, heldout30d as joined): what its misses and its
confident negative (scored once at d5206bf, then read) showed that is general, mended from what the
emitter prints and what it means, with texts other than any held-out one and look-alikes that keep
their answers.

- torch's AT_CHECK (c10/util/Exception.h: a deprecated alias of TORCH_CHECK, warning through
  c10::detail::deprecated_AT_CHECK, gone in 1.5) used by an extension's own sources, as the
  compilers refuse an undeclared name: nvcc's front end ('identifier "AT_CHECK" is undefined'),
  g++ ("'AT_CHECK' was not declared in this scope"), MSVC (C3861 "'AT_CHECK': identifier not
  found"). The sources were written for torch <= 1.4 (FCOS#276, fixed by TORCH_CHECK or torch
  1.3.1): extension-torch-incompatible, likely, whose cause already names AT_CHECK. Its
  deprecation warning under 1.2 - 1.4 is not read.
- Triton Inference Server's supported GPUs (src/core/cuda_utils.cc GetSupportedGPUs, 20.x to the
  2.x releases before the core split): the devices cudaGetDeviceCount counts (none on
  cudaErrorNoDevice or cudaErrorInsufficientDriver) whose compute capability is at or above
  --min-supported-compute-capability (TRITON_MIN_COMPUTE_CAPABILITY, 6.0). With none, a model
  asking for the GPU is refused (model_config_utils.cc ValidateModelConfig: "instance group %s of
  model %s has kind KIND_GPU but no GPUs are available") and no CNMeM pool is made (server.cc gives
  each supported GPU 64 MB; the memory manager's destructor logs "Failed to finalize CUDA memory
  manager: [%d] %s" with CNMEM_STATUS_NOT_INITIALIZED at exit). No device, or a driver too old,
  shows its own CUDA error in the same log (the pinned memory pool's "no CUDA-capable device is
  detected", "CUDA driver version is insufficient"), which their ids read; without one the GPU is
  there and below Triton's minimum (server#2095 and #1925: Jetson's 5.3, fixed by
  --min-supported-compute-capability). gpu-too-old, possible (the line is often pasted without
  the log before it); not where the text shows such a CUDA error.
- libstdc++'s old-ABI std::basic_string (-D_GLIBCXX_USE_CXX11_ABI=0, which torch's pip wheels pass
  to extensions) as an nvcc of the CUDA 9 - 10.1 era hands it to a newer g++ (7, 8): g++'s "cannot
  call member function 'void std::basic_string<...>::_Rep::_M_set_sharable() [with _CharT =
  char16_t ...]' without object" in bits/basic_string.tcc, which plain g++ never prints on its own
  headers; an older gcc or a newer CUDA builds (BasicSR#279: gcc 8.1 fails, 6.1 builds under CUDA
  10.1). gcc-too-new, likely (the id's "its front end fails on that gcc's headers"); the
  instantiation note above it ("In instantiation of 'static std::basic_string<...>::_Rep*"), in an
  nvcc compile of a .cu file, possible: the scored text was cut there.
- Simple Transformers' models (classification_model.py, ner_model.py, ...: use_cuda, True by
  default, with torch.cuda.is_available() False: "'use_cuda' set to True when cuda is
  unavailable. Make sure CUDA is available or set use_cuda=False."): torch sees no GPU, no usable
  driver or GPU here (simpletransformers#41: the maintainer's "set use_cuda=False"), or a CPU build
  of torch, which the line does not tell apart: no-driver-found, possible.

The confident negative: triton-inference-server/server#4227 (a merged fix of Triton's CPU-only
build, whose image carried the PyTorch container's libtorch_cuda.so without cuBLASLt: build.py
then patchelf'd libcublasLt's stub in). cuda-libs-conflict read "libtorch*.so: undefined symbol:
cublas..." as an older cuBLAS, likely. But cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSOLVER and cuSPARSE
version their symbols with a node named after the soname, the toolkit's stubs too (objdump -T on
CUDA 11's libraries), as cuDNN 8 and nvJitLink do (real reports' "..., version
libcudnn_ops_infer.so.8", "version libnvJitLink.so.12"), so a torch linked against them names it (", version
libcublasLt.so.11", the id's first wording, kept likely); an unversioned reference was left unbound
at link time and the library is not in the process at all, not two releases of it: possible now.
NCCL's symbols carry no version, so its missing ncclMemFree stays likely.

No relabels.

Left, and why: tensorflow/lingvo#126 (extension-ops-missing, a label its collector flagged): the
text is the thread's title, TensorFlow's placer's "No registered '%s' OpKernel for GPU devices
compatible with node", which an op with no GPU kernel at all placed on the GPU prints as well; the
build without --config=cuda is not in it. zylo117/Yet-Another-EfficientDet-Pytorch#85
(package-torch-mismatch, flagged): "Source tensor must be contiguous" from the program's own scatter
under torch 1.1; nothing in the text names a torch release, and the words are a tensor's check any
caller can fail. THUDM/Chinese-Transformer-XL#17 (package-version-refused, flagged): DeepSpeed's
comm assertion "DeepSpeed backend not set, please initialize it using init_process_group()" says
the program called deepspeed.comm before deepspeed.init_distributed; that a newer DeepSpeed is why
is the thread's, not the line's. The `other:` positives get no answer, as they should:
tensorflow/io#1100 (tensorflow-io's "unable to open file: libtensorflow_io.so" on a GCP image
shipping a release for another TensorFlow), server#3841 (ld's "cannot find -ltorch" building
Triton's PyTorch backend on a Jetson against an x86 image) and server#2126 ("exec format error":
the x86-64 NGC image on an ARM host). The part's other texts were negatives answered without
confidence."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, confident, top_with_confidence, whole


# --- torch's AT_CHECK, gone in 1.5 -----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # nvcc's front end
    "maskrcnn_benchmark/csrc/cuda/ROIAlign_cuda.cu(275): error: identifier \"AT_CHECK\" is undefined\n\n"
    "1 error detected in the compilation of \"/tmp/tmpxft_00001a2b_00000000-6_ROIAlign_cuda.cpp1.ii\".",
    # g++ on the extension's C++ sources
    "/home/u/src/csrc/cpu/nms_cpu.cpp: In function 'at::Tensor nms_cpu_kernel(const at::Tensor&, "
    "const at::Tensor&, float)':\n/home/u/src/csrc/cpu/nms_cpu.cpp:13:3: error: 'AT_CHECK' was not "
    "declared in this scope\n   AT_CHECK(!dets.type().is_cuda(), \"dets must be a CPU tensor\");",
    # MSVC
    "C:\\work\\ext\\csrc\\vision.cpp(12): error C3861: 'AT_CHECK': identifier not found",
])
def test_at_check_refused_by_the_compiler_is_an_extension_written_for_an_older_torch(text):
    got = whole(text, ("id", "confidence", "cause"))
    assert (got["id"], got["confidence"]) == ("extension-torch-incompatible", "likely")
    assert "AT_CHECK" in got["cause"]


def test_at_checks_deprecation_warning_is_not_read():
    text = ("/usr/include/c10/util/Exception.h:330:20: warning: 'void c10::detail::deprecated_AT_CHECK()' "
            "is deprecated [-Wdeprecated-declarations]")
    assert "extension-torch-incompatible" not in answers(text)


# --- Triton's empty set of supported GPUs ----------------------------------------------------------

@pytest.mark.parametrize("text", [
    "E0923 12:01:33.118 model_repository_manager.cc:1305] failed to load 'densenet_onnx' version 1: "
    "Invalid argument: instance group densenet_onnx_0 of model densenet_onnx has kind KIND_GPU but no "
    "GPUs are available",
    "I0605 10:49:26.473 server.cc:280] Waiting for in-flight requests to complete.\n"
    "E0605 10:49:26.480 cuda_memory_manager.cc:65] Failed to finalize CUDA memory manager: [3] "
    "CNMEM_STATUS_NOT_INITIALIZED",
])
def test_tritons_no_supported_gpu_without_a_cuda_error_is_a_gpu_below_its_minimum(text):
    assert top_with_confidence(text) == ("gpu-too-old", "possible")


@pytest.mark.parametrize("text, want", [
    # no device in the container: the pinned memory pool's CUDA error names it
    ("W0923 pinned_memory_manager.cc:236] Unable to allocate pinned system memory, pinned memory pool "
     "will not be available: no CUDA-capable device is detected\nE0923 model_repository_manager.cc:1305] "
     "failed to load 'm' version 1: Invalid argument: instance group m_0 of model m has kind KIND_GPU but "
     "no GPUs are available", ("no-driver-found", "exact")),
    # a driver older than the image's CUDA
    ("W0605 pinned_memory_manager.cc:236] Unable to allocate pinned system memory, pinned memory pool "
     "will not be available: CUDA driver version is insufficient for CUDA runtime version\n"
     "E0605 cuda_memory_manager.cc:65] Failed to finalize CUDA memory manager: [3] "
     "CNMEM_STATUS_NOT_INITIALIZED", ("driver-too-old", "exact")),
])
def test_tritons_no_supported_gpu_after_a_cuda_error_keeps_that_errors_answer(text, want):
    assert top_with_confidence(text) == want
    assert "gpu-too-old" not in answers(text)


@pytest.mark.parametrize("text", [
    # a CPU-only Triton, and a GPU list left empty with GPUs present: the model configuration's
    "failed to load 'm' version 1: Invalid argument: instance group m_0 of model m has kind KIND_GPU "
    "but server does not support GPUs",
    "failed to load 'm' version 1: Invalid argument: instance group m_0 of model m has kind KIND_GPU "
    "but specifies no GPUs",
])
def test_tritons_other_instance_group_refusals_are_not_a_gpu_below_its_minimum(text):
    assert "gpu-too-old" not in answers(text)


# --- nvcc's old-ABI std::basic_string under a newer g++ --------------------------------------------

NVCC = ("/usr/local/cuda-10.0/bin/nvcc -I/opt/conda/lib/python3.7/site-packages/torch/include -c "
        "src/deform_conv_cuda.cu -o build/temp.linux-x86_64-3.7/src/deform_conv_cuda.o "
        "-D_GLIBCXX_USE_CXX11_ABI=0 -gencode=arch=compute_75,code=sm_75 -std=c++11\n")
NOTE = ("/usr/include/c++/7/bits/basic_string.tcc: In instantiation of 'static std::basic_string<_CharT, "
        "_Traits, _Alloc>::_Rep* std::basic_string<_CharT, _Traits, _Alloc>::_Rep::_S_create(std::"
        "basic_string<_CharT, _Traits, _Alloc>::size_type, std::basic_string<_CharT, _Traits, _Alloc>::"
        "size_type, const _Alloc&) [with _CharT = char32_t; _Traits = std::char_traits<char32_t>; _Alloc = "
        "std::allocator<char32_t>; std::basic_string<_CharT, _Traits, _Alloc>::size_type = long unsigned "
        "int]':\n")
ERROR = ("/usr/include/c++/7/bits/basic_string.tcc:1067:16: error: cannot call member function 'void "
         "std::basic_string<_CharT, _Traits, _Alloc>::_Rep::_M_set_sharable() [with _CharT = char32_t; "
         "_Traits = std::char_traits<char32_t>; _Alloc = std::allocator<char32_t>]' without object\n"
         "       __p->_M_set_sharable();\n")


@pytest.mark.parametrize("text, want", [
    (NVCC + NOTE + ERROR, ("gcc-too-new", "likely")),
    (ERROR, ("gcc-too-new", "likely")),
    # the note alone, cut where the log was cut, in an nvcc compile
    (NVCC + NOTE, ("gcc-too-new", "possible")),
])
def test_nvccs_old_abi_string_under_a_newer_gcc_is_gcc_too_new(text, want):
    assert top_with_confidence(text) == want


def test_the_instantiation_note_without_nvcc_is_not_read():
    assert "gcc-too-new" not in answers(NOTE)


# --- Simple Transformers' use_cuda -----------------------------------------------------------------

def test_simple_transformers_use_cuda_without_cuda_is_a_lead_to_no_driver_found():
    text = ('  File "/usr/local/lib/python3.8/site-packages/simpletransformers/ner/ner_model.py", line 187, '
            "in __init__\n    raise ValueError(\nValueError: 'use_cuda' set to True when cuda is unavailable. "
            "Make sure CUDA is available or set use_cuda=False.")
    assert top_with_confidence(text) == ("no-driver-found", "possible")


# --- a CUDA library's symbol missing from torch's own library -----------------------------------------

@pytest.mark.parametrize("text", [
    "OSError: /opt/tritonserver/backends/pytorch/libtorch_cuda.so: undefined symbol: cublasLtMatmulPreferenceCreate",
    "ImportError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: cusparseSpMM",
])
def test_an_unversioned_cublas_family_symbol_is_a_lead_only(text):
    assert answers(text).get("cuda-libs-conflict") == "possible"
    assert confident(text) == []


@pytest.mark.parametrize("text", [
    # the version node the reference names: an older release of that library loaded
    "OSError: /usr/local/lib/python3.8/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
    "cublasLtHSHMatmulAlgoInit, version libcublasLt.so.11",
    # NCCL's symbols carry no version: the older NCCL loaded
    "ImportError: /opt/venv/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommRegister",
])
def test_a_versioned_cuda_symbol_and_nccls_stay_likely(text):
    assert top_with_confidence(text) == ("cuda-libs-conflict", "likely")
