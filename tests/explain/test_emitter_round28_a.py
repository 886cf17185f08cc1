"""The twenty-eighth round, heldout28's 0-9/a-h part, texts 1-20 (google/deepvariant#619 to
deepseek-ai/DeepEP#150): what its misses and its one confident negative (scored once at bb3f056,
then read) showed that is general, mended from what the emitter prints and what it means, with
texts other than any held-out one and look-alikes that keep their answers.

- flashlight's and wav2letter's own cmake/CUDAUtils.cmake (2019-2021; included only when the CUDA
  backend is asked for, FLASHLIGHT_BACKEND or W2L_CRITERION_BACKEND=CUDA) run
  find_package(CUDA 9.2 QUIET) and, when CUDA_FOUND is false, message(FATAL_ERROR "CUDA required to
  build CUDA backend"): FindCUDA found no toolkit (no nvcc through CUDA_TOOLKIT_ROOT_DIR, PATH or
  /usr/local/cuda), its own "Could NOT find CUDA" hidden by QUIET; a toolkit older than 9.2 reads
  the same. cuda-home-unset, likely (flashlight/wav2letter#844 got nothing: the maintainer's "CUDA
  is not there while it is required"). flashlight's other configure failures ("flashlight must be
  build in distributed mode for wav2letter++", a build option of the user's) keep no answer.
- glibc's loader on a CUDA driver API _v2 symbol (round 26: driver-too-old, likely) was too eager
  for the first _v2 family, CUDA 3.2's and 4.0's (cuda.h: "#if __CUDA_API_VERSION >= 3020" maps
  cuMemGetInfo, cuMemAlloc, cuMemFree, cuMemcpy*, cuMemsetD*, cuCtxCreate, cuDeviceTotalMem,
  cuModuleGetGlobal, cuArray*, cuTexRef*Address, cuGraphicsResourceGetMappedPointer to their _v2;
  ">= 4000" cuCtxDestroy, cuCtxPopCurrent/PushCurrent, cuStreamDestroy, cuEventDestroy): every
  driver since 2010 exports them, so a library that asks for one and finds none was, in any later
  era, not linked against libcuda with nothing loading libcuda first: the program's build. That was
  the part's confident negative, alphacep/vosk-api#752 (libvosk.so: undefined symbol:
  cuMemGetInfo_v2, fixed by a merged pull request adding -lcuda to Vosk's link flags), now
  driver-too-old only possible. Where the library always links libcuda (PyCUDA's _driver, whose own
  reading is "the version of your CUDA header does not match the version of your CUDA driver") or
  is libcuda.so itself (a dlsym), the driver lacking the symbol is the only reading: likely, kept.
  The later _vN symbols (cuDevicePrimaryCtxRelease_v2, cuCtxCreate_v3/_v4, cuCtxGetDevice_v2) keep
  likely from any library.

Left, and why: baidu-research/warp-ctc#28 (gpu-too-old: a GTX 580, compute capability 2.0): its
text is warp-ctc's test wrapper ("Error: compute_ctc_loss in small_test, stat = execution
failed"), and CTC_STATUS_EXECUTION_FAILED is warp-ctc's status for any failed kernel launch
(gpu_ctc.h checks cudaGetLastError() and drops the CUDA error): no GPU, architecture or error is
named. h2oai/deepwater#49 (no-driver-found on a Mac with an Intel GPU): the text is Gradle's
generic test-task failure ("Process 'command 'bash'' finished with non-zero exit value 1"), nothing
of the GPU in it. The `other:` positives get no answer, as they should: DeepLabCut#1024
(deeplabcutcore with TensorFlow 2.2 instead of 2.3: "cannot import name 'GceClusterResolver'" is
TensorFlow's own import, no GPU environment id) and DeepEP#150 (NVSHMEM not installed; the text is
the title "Caught signal 11 on 2 * 8 H20 internode test", a segfault naming no library). No
relabels. The part's other texts were hits or negatives answered without confidence."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, top_with_confidence, whole_cause


# --- flashlight's / wav2letter's CUDAUtils.cmake without a toolkit --------------------------------

@pytest.mark.parametrize("text", [
    "-- Looking for pthread_create in pthread - found\n-- Found Threads: TRUE\n"
    "CMake Error at cmake/CUDAUtils.cmake:12 (message):\n  CUDA required to build CUDA backend\n"
    "Call Stack (most recent call first):\n  CMakeLists.txt:96 (include)\n\n"
    "-- Configuring incomplete, errors occurred!",
    # wav2letter's own copy, before the split from flashlight
    "CMake Error at cmake/CUDAUtils.cmake:11 (message):\n  CUDA required to build CUDA backend\n"
    "Call Stack (most recent call first):\n  CMakeLists.txt:59 (include)",
])
def test_flashlights_cuda_backend_without_a_toolkit_is_no_toolkit_found(text):
    assert top_with_confidence(text) == ("cuda-home-unset", "likely")
    assert whole_cause(text)["title"] == "No CUDA toolkit found for compiling GPU code"


@pytest.mark.parametrize("text, want", [
    # flashlight's other configure failures are the user's build options
    ("CMake Error at CMakeLists.txt:103 (message):\n  flashlight must be build in distributed mode for wav2letter++",
     None),
    ("-- CUDA found (library: /usr/local/cuda/lib64/libcudart_static.a include: /usr/local/cuda/include)", None),
    # CMake's own FindCUDA words keep their answer
    ("CMake Error at /usr/share/cmake-3.16/Modules/FindCUDA.cmake:1036 (message):\n  Specify CUDA_TOOLKIT_ROOT_DIR",
     ("cuda-home-unset", "likely")),
])
def test_other_flashlight_configure_lines_keep_their_answers(text, want):
    assert top_with_confidence(text) == want


# --- the first _v2 family of the driver API, missing from a library not linked to libcuda ---------

@pytest.mark.parametrize("text", [
    "OSError: cannot load library '/opt/app/lib/libasr.so': /opt/app/lib/libasr.so: undefined symbol: cuMemAlloc_v2",
    "./decoder: symbol lookup error: /usr/local/lib/libkaldi-cudadecoder.so: undefined symbol: cuCtxDestroy_v2",
    "ImportError: /x/site-packages/mylib/_ext.cpython-310-x86_64-linux-gnu.so: undefined symbol: cuMemcpyHtoDAsync_v2",
    "OSError: /srv/libgpu.so: undefined symbol: cuMemsetD32_v2",
])
def test_a_2010_era_v2_driver_symbol_missing_is_only_a_lead(text):
    assert top_with_confidence(text) == ("driver-too-old", "possible")


@pytest.mark.parametrize("text", [
    # PyCUDA's _driver always links libcuda: the driver itself lacks the symbol
    "ImportError: /usr/lib/python2.7/dist-packages/pycuda/_driver.so: undefined symbol: cuMemAlloc_v2",
    # libcuda.so itself, asked by dlsym
    'Expected symbol in library: DlSym { desc: "/usr/lib/x86_64-linux-gnu/libcuda.so: undefined symbol: cuMemGetInfo_v2" }',
    # the later versioned names, from any library
    "OSError: /opt/app/lib/libasr.so: undefined symbol: cuDevicePrimaryCtxRelease_v2",
    "OSError: /opt/app/lib/libasr.so: undefined symbol: cuCtxCreate_v3",
    "OSError: /opt/app/lib/libasr.so: undefined symbol: cuStreamBeginCapture_v2",
    # a later _v2 of a cuMemcpy* name (CUDA 12.8's batch copies) is not the 2010 family
    "OSError: /opt/app/lib/libasr.so: undefined symbol: cuMemcpyBatchAsync_v2",
])
def test_versioned_driver_symbols_the_driver_must_lack_stay_driver_too_old(text):
    assert top_with_confidence(text) == ("driver-too-old", "likely")


# (the key table's lead for a bare "undefined symbol" was undefined-symbol until heldout36 joined it:
# its texts brought that cause's share among the texts holding the phrase to 0.5, not above MIN_SCORE,
# so these get no lead now; what is kept is that no wrong cause is read into them)
@pytest.mark.parametrize("text, keeps", [
    # the CUDA libraries' own _v2 names are not the driver's
    ("OSError: /opt/app/lib/libasr.so: undefined symbol: cublasCreate_v2", None),
    # a _v2 with a suffix after it (the per-thread stream variants) is not read
    ("OSError: /opt/app/lib/libasr.so: undefined symbol: cuMemcpyHtoD_v2_ptds", None),
])
def test_other_v2_symbols_keep_their_answers(text, keeps):
    assert "driver-too-old" not in answers(text)
    assert top_with_confidence(text) == keeps
