"""The twenty-third round, heldout23's second part (owners n-z, the texts joined from heldout23b):
what its misses (scored once, then read) showed that is general, mended from what the emitter
prints and what it means, with texts other than any held-out one and look-alikes that keep their
answers.

- cuBLAS's handle not created, in the frameworks' own words: TensorFlow's stream_executor
  (cuda_blas.cc CUDABlas::Init, "failed to create cublas handle: %s"), Caffe's constructor
  (common.cpp, "Cannot create Cublas handle. Cublas won't be available."), torch's handle pool
  ("CUDA error: %s when calling `cublasCreate(handle)`"): cublas-not-initialized (possible: its
  first cause is the GPU's memory), whatever status follows.
- CUBLAS_STATUS_ALLOC_FAILED by its name: cuBLAS's API reference gives it as cublasCreate's "the
  resources could not be allocated", so after the catalogue's cuda-oom (likely, the workload) it
  now also names cublas-not-initialized (possible), as CUDNN_STATUS_ALLOC_FAILED after "Could not
  create cudnn handle" already did for cuDNN (tensorflow#14345, a TensorFlow holding all the
  GPU's memory without allow_growth).
- Caffe's "Cannot create cuDNN handle. cuDNN won't be available." (NVIDIA/caffe 0.14/0.15
  common.cpp, cudnnCreate failing): cudnn-not-initialized, as "Could not create cudnn handle".
- CMake's FindCUDA module finding no nvcc ("Specify CUDA_TOOLKIT_ROOT_DIR" for find_package(CUDA
  REQUIRED), "CUDA_TOOLKIT_ROOT_DIR not found or specified" otherwise): cuda-home-unset (likely),
  as its FindCUDAToolkit and CUDA-language twins already were.
- nnabla-ext-cuda's GPU check ("GPU compatibility could not be verified due to a problem getting
  the GPU list.", any failure of its NVML query through libnvidia-ml.so.1): the driver's NVML
  library not where the loader looks, a lead only (possible), titled for libnvidia-ml.so.
- A project's own check macro that puts where the call failed between "CUDA error" and the
  runtime's description ("CUDA error at %s %d: %s", GpuBTree's CHECK_ERROR; "CUDA error at
  %s:%d: %s"; the CUDA SDK cutil's "Cuda error in file '%s' in line %i : %s."): the description is
  read as after "CUDA error: ".

Left, and why: the confident negative NVIDIA/nccl#1612 (NCCL's "socketProgress: Connection closed
by remote peer", a peer that closed its socket, most often a rank that died) shows its cause, a
foreign connection closing before NCCL's magic (ignored since v2.27.3), only in the line numbers of
NCCL 2.24-2.26's return trace; nothing a rule over releases could read."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, top_with_confidence, whole_cause


# --- cuBLAS's handle not created ------------------------------------------------------------------

_CUBLAS = {
    "id": "cublas-not-initialized", "confidence": "possible",
    "title": "cuBLAS failed to initialise",
    "cause": "cuBLAS could not create its handle (cublasCreate).",
    "fix": "Check memory first (`nvidia-smi`, smaller batch); then the model's vocabulary against the tokenizer; "
           "then install the torch build that matches the driver and GPU.",
}


@pytest.mark.parametrize("text", [
    # TensorFlow 1.x's stream_executor, the status its cublasCreate returned
    "2018-03-02 10:11:12.000000: E tensorflow/stream_executor/cuda/cuda_blas.cc:444] failed to create cublas "
    "handle: CUBLAS_STATUS_NOT_INITIALIZED",
    # Caffe's constructor, any status
    "E0102 03:04:05.678901  4242 common.cpp:114] Cannot create Cublas handle. Cublas won't be available.",
    # torch's handle pool with a status that names no cause of its own
    "RuntimeError: CUDA error: CUBLAS_STATUS_INTERNAL_ERROR when calling `cublasCreate(handle)`",
])
def test_the_frameworks_words_for_cublascreate_failing_are_cublas_not_initialized(text):
    assert whole_cause(text) == _CUBLAS


@pytest.mark.parametrize("text", [
    "E tensorflow/stream_executor/cuda/cuda_blas.cc:366] failed to create cublas handle: CUBLAS_STATUS_ALLOC_FAILED",
    "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
    # the status alone, another program's words: cuBLAS allocates for its handle
    "cublas error: CUBLAS_STATUS_ALLOC_FAILED (3) in matmul",
])
def test_cublas_alloc_failed_is_memory_first_then_the_handle(text):
    found = explain(text)
    assert (found[0].id, found[0].kind, found[0].confidence) == ("cuda-oom", "workload", "likely")
    assert answers(text) == {"cublas-not-initialized": "possible"}


@pytest.mark.parametrize("text, want", [
    # a cuBLAS symbol missing is not the handle failing
    ("ImportError: /opt/ext/_C.so: undefined symbol: cublasCreate_v2", "undefined-symbol"),
    # a routine's failure keeps its own cause
    ("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, "
     "k, &alpha, a, lda, b, ldb, &beta, c, ldc)`", "cublas-execution-failed"),
    # cuDNN's twin keeps its answer
    ("Could not create cudnn handle: CUDNN_STATUS_ALLOC_FAILED", "cudnn-not-initialized"),
])
def test_the_cublas_look_alikes_keep_their_answers(text, want):
    assert top_with_confidence(text) == (want, "possible")
    assert "cublas-not-initialized" not in answers(text)


# --- Caffe's cuDNN handle ---------------------------------------------------------------------------

def test_caffes_cudnn_handle_not_created_is_cudnn_not_initialized():
    text = ("I0517 08:09:10.000001  901 caffe.cpp:210] Using GPUs 0\n"
            "E0517 08:09:10.111213  901 common.cpp:128] Cannot create cuDNN handle. cuDNN won't be available.")
    assert top_with_confidence(text) == ("cudnn-not-initialized", "possible")


def test_a_bad_param_alone_is_not_the_handle():
    assert "cudnn-not-initialized" not in answers(
        "F0101 00:00:00.000 1 cudnn_conv_layer.cpp:53] Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0)  "
        "CUDNN_STATUS_BAD_PARAM")


# --- CMake's FindCUDA finding no nvcc ----------------------------------------------------------------

@pytest.mark.parametrize("text", [
    # CMake 3.5's module, find_package(CUDA REQUIRED)
    "CMake Error at /usr/share/cmake-3.5/Modules/FindCUDA.cmake:617 (message):\n  Specify CUDA_TOOLKIT_ROOT_DIR\n"
    "Call Stack (most recent call first):\n  CMakeLists.txt:20 (find_package)",
    # a project's own copy of the module
    "CMake Error at cmake/Modules/FindCUDA.cmake:548 (message):\n  Specify CUDA_TOOLKIT_ROOT_DIR",
    # find_package(CUDA) without REQUIRED, the project going on without it
    "CUDA_TOOLKIT_ROOT_DIR not found or specified\n-- Building without CUDA support",
])
def test_findcuda_finding_no_toolkit_is_cuda_home_unset(text):
    assert top_with_confidence(text) == ("cuda-home-unset", "likely")


@pytest.mark.parametrize("text", [
    # the variable given on the command line, the toolkit found, another package missing
    'cmake .. -DCUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda-10.2\n-- Found CUDA: /usr/local/cuda-10.2 (found version '
    '"10.2")\nCMake Error at CMakeLists.txt:40 (find_package):\n  By not providing "FindOpenCV.cmake" in '
    'CMAKE_MODULE_PATH',
    "-- CUDA_TOOLKIT_ROOT_DIR = /usr/local/cuda",
])
def test_the_variable_named_elsewhere_is_not_a_missing_toolkit(text):
    assert "cuda-home-unset" not in answers(text)


# --- nnabla's GPU check through NVML ------------------------------------------------------------------

def test_nnablas_gpu_list_failing_is_a_lead_to_the_drivers_nvml_library():
    text = ("2022-03-01 09:00:00,001 [nnabla][INFO]: Initializing CUDA extension...\n"
            "GPU compatibility could not be verified due to a problem getting the GPU list.\n"
            "2022-03-01 09:00:00,100 [nnabla][INFO]: Initializing cuDNN extension...")
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("libcuda-not-in-ldcache", "possible")
    assert got["title"] == "The driver's libnvidia-ml.so is not where the loader or linker looks for it"
    assert "libnvidia-ml.so.1" in got["fix"]


@pytest.mark.parametrize("text, want", [
    # the wordings that name their library keep it
    ("AssertionError: libcuda.so cannot found!", "The driver's libcuda.so is not where the loader or linker looks for it"),
    ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
     "Driver is properly installed and present in your system.",
     "The driver's libnvidia-ml.so is not where the loader or linker looks for it"),
])
def test_the_other_driver_library_wordings_keep_their_titles(text, want):
    assert whole_cause(text)["title"] == want


# --- "CUDA error at <where>: <description>" ------------------------------------------------------------

def _all(text):
    """Every cause named, the workload's too (out of memory), with its confidence, in order."""
    return [(e.id, e.confidence) for e in explain(text)]


@pytest.mark.parametrize("desc", ["initialization error", "unknown error", "out of memory",
                                  "all CUDA-capable devices are busy or unavailable"])
@pytest.mark.parametrize("prefix", [
    "CUDA error at /home/u/hashmap/src/slab_alloc.cuh 88: ",     # "CUDA error at %s %d: %s"
    "CUDA error at src/main.cu:41: ",                           # "CUDA error at %s:%d: %s"
    "Cuda error in file 'radixsort.cu' in line 156 : ",         # the CUDA SDK's cutil
])
def test_a_check_macros_place_before_the_description_reads_as_cuda_error(prefix, desc):
    assert _all(prefix + desc) == _all("CUDA error: " + desc) != []


@pytest.mark.parametrize("text", [
    # words, not a file and a line, between "CUDA error" and the description
    "CUDA error at the end of epoch 3: initialization error",
    "no CUDA error in this run; the loader reported: initialization error",
])
def test_words_that_are_no_place_do_not_read_a_description(text):
    assert _all(text) == []
