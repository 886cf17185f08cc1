"""toolkit-too-old: a CUDA toolkit older than the build needs, a cause eight held-out threads had
confirmed under `other:` before it had an id (xgboost#11128, darknet#7719, whisper.cpp#876,
mxnet#1052, pytorch3d#122, cuPDLPx#11, SparseConvNet#164, zed-ros-wrapper#423: relabelled, their
old labels kept as `was:`). Added when the key table, having learnt round 28, began to read
Kaldi's "CUDA version 8_0 is too old and unsupported" as the driver's age (driver-too-old, possible).

Read from the emitters:
- Kaldi's src/configure, configure_cuda: the release of `$CUDATKDIR/bin/nvcc -V` with . as _, and
  `[1-8]_*) failure "CUDA version $CUDA_VERSION is too old and unsupported."` (failure() prints
  "***configure failed: $* ***"): exact.
- CMake's find_package(CUDA X) / find_package(CUDAToolkit X), FindPackageHandleStandardArgs'
  'Could NOT find %s: Found unsuitable version "%s", but required is at least "%s" (found %s)':
  exact; "required is exact version" names another release, not an older one, and is not read.
- nvcc's option parser on -arch=all / all-major (CUDA 11.5) and native (11.5 update 1): an older
  nvcc's "Value '%s' is not defined for option 'gpu-architecture'": exact.
- Build scripts checking nvcc's release ("CUDA version %s is too old"): likely.
- nvcc's front end on a CUDA runtime or driver API name its headers do not declare (cuda_runtime.h
  comes with every .cu): likely; a CUDA library's API (cuSPARSE, cuBLAS ...) or gcc's "was not
  declared in this scope" on host code, where a missing include reads the same: possible.
"""
from __future__ import annotations

import pytest

from tests.explain.answers import top_id, top_with_confidence, whole


@pytest.mark.parametrize("text, confidence", [
    ("***configure failed: CUDA version 7_5 is too old and unsupported. ***", "exact"),
    ('CMake Error at /usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n'
     '  Could NOT find CUDAToolkit: Found unsuitable version "11.4.152", but required\n'
     '  is at least "11.8" (found /usr/local/cuda/include)', "exact"),
    ("nvcc fatal   : Value 'all-major' is not defined for option 'gpu-architecture'", "exact"),
    ("nvcc fatal   : Value 'native' is not defined for option 'gpu-architecture'\nmake: *** [Makefile:9: k.o] Error 1",
     "exact"),
    ("CUDA detected: version 11.4.48\nCUDA version 11.4.48 is too old. Minimum required version is 12.6.3.", "likely"),
    ('src/pool.cu(45): error: identifier "cudaFreeAsync" is undefined', "likely"),
    ('kernels/graph.cu(212): error: identifier "cudaGraphInstantiateWithFlags" is undefined', "likely"),
    ('src/spmm.cu(10): error: identifier "cublasLtMatmulDescCreate" is undefined', "possible"),
    ("src/dr.cc:25:5: error: 'cudaGetDriverEntryPoint' was not declared in this scope", "possible"),
])
def test_a_toolkit_older_than_the_build_needs(text, confidence):
    assert top_with_confidence(text) == ("toolkit-too-old", confidence)
    assert "install-cuda" in whole(text)["fix"]


@pytest.mark.parametrize("text, want", [
    # another release than the exact one asked for: not necessarily older
    ('Could NOT find CUDA: Found unsuitable version "9.2", but required is exact version "9.0" '
     "(found /usr/local/cuda)", None),
    # an arch the toolkit predates keeps its own id; one no GPU has is the build command's mistake
    ("nvcc fatal   : Value 'sm_90' is not defined for option 'gpu-architecture'", "nvcc-arch-unsupported"),
    ("nvcc fatal   : Value 'sm_91' is not defined for option 'gpu-architecture'", None),
    # a program's own identifier, and the driver's age in torch's and the runtime's words
    ('src/model.cu(12): error: identifier "custom_scale" is undefined', None),
    ("RuntimeError: The NVIDIA driver on your system is too old (found version 11020).", "driver-too-old"),
    ("CUDA driver version is insufficient for CUDA runtime version", "driver-too-old"),
])
def test_look_alikes_keep_their_answers(text, want):
    assert top_id(text) != "toolkit-too-old"
    if want is not None:
        assert top_id(text) == want
