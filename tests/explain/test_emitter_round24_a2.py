"""The twenty-fourth round, heldout24's first part, texts 21-41 (ethereum-mining/ethminer#1786 to
kaldi-asr/kaldi#3277): what its misses (scored once, then read) showed that is general, mended from
what the emitter prints and what it means, with texts other than any held-out one and look-alikes
that keep their answers.

- Kaldi's src/configure (configure_cuda) refusing the host g++ for the CUDA it found ("CUDA
  $CUDA_VERSION does not support $CXX (g++-$GCC_VER). You need $CXX < $MIN_UNSUPPORTED_GCC_VER.",
  from 2020 "... Only versions strictly older than $MIN_UNSUPPORTED_GCC_VER are supported.", the
  CUDA version as nvcc -V's release with _ for .): gcc-too-new, exact, the newest gcc it takes one
  major below the one it names (signatures.py's derive gcc_below).
- The CUDA runtime's cudaErrorInvalidSymbol (13, "invalid device symbol", from cudaMemcpyToSymbol
  and cudaGetSymbolAddress on a __device__/__constant__ variable): a build holding no image this
  GPU can run registers no symbol, so no-kernel-image is named before program-error (a symbol
  passed wrongly), both possible (causes.yaml, re-applied to catalogue.json).

Left, and why: langchain-ai/local-deep-researcher#34 (ggml's "CUDA error: operation not supported"
at cudaMemGetInfo in a GRID vGPU guest whose driver was "not properly installed") shows no sign of
the install in its words: cudaErrorNotSupported at a query keeps [program-error, driver-too-old];
driver-state-stale from it would be a rule fitted to one text. lebedov/scikit-cuda#196 and
anderskm/gputil#20 are `other:` causes no id names (a cusolver older than the binding's function;
nvidia-smi not on the Windows PATH); the first's answer, cuda-lib-missing, is only the key table's
possible lead (lib:cusolver). The confident negatives stay: eosphoros-ai/DB-GPT#107 is torch's own
"CUDA unknown error" warning, whose fix was a later DB-GPT commit nothing in the text shows;
choderalab/openmmtools#693 is "/bin/sh: nvidia-smi: command not found" on a machine without a GPU,
the same words aws/deep-learning-containers#598 (heldout8) gives as nvidia-smi-no-driver, and the
fault (a probe's stderr left to the user) is not in them."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, top_id, top_with_confidence, whole


# --- Kaldi's configure: the host g++ against the CUDA it found ------------------------------------

@pytest.mark.parametrize("text, newest", [
    # configure before 2020 (one line per paste once normalised)
    ("***configure failed: CUDA 8_0 does not support g++ (g++-6.3.0).\n                 You need g++ < 6.0. ***", "5"),
    # from 2020, the second line's other words
    ("***configure failed: CUDA 11_0 does not support g++ (g++-10.2.0). Only versions strictly older than 10.0 are "
     "supported. ***", "9"),
    # CXX set to another compiler name, CUDA 10.1's bound
    ("***configure failed: CUDA 10_1 does not support x86_64-linux-gnu-g++ (g++-9). Only versions strictly older "
     "than 9.0 are supported. ***", "8"),
])
def test_kaldis_configure_refusing_the_host_gxx_is_gcc_too_new(text, newest):
    got = whole(text)
    assert (got["id"], got["confidence"]) == ("gcc-too-new", "exact")
    assert f"Install gcc-{newest} " in got["fix"] and f"-ccbin g++-{newest}" in got["fix"]


@pytest.mark.parametrize("text, want", [
    # the same configure's other failures are not about the host compiler's version: its CUDA
    # release below Kaldi's floor is the toolkit's age (toolkit-too-old, added after round 28,
    # when the key table had started to read it as the driver's)
    ("***configure failed: CUDA version 8_0 is too old and unsupported. ***", "toolkit-too-old"),
    ("***configure failed: Cannnot find nvcc in CUDATKDIR=/usr/local/cuda ***", None),
    # nvcc's own check keeps its bound
    ("#error -- unsupported GNU version! gcc versions later than 6 are not supported!", "gcc-too-new"),
])
def test_kaldis_other_configure_failures_keep_their_answers(text, want):
    assert top_id(text) == want
    if want == "gcc-too-new":
        assert "Install gcc-6 " in whole(text)["fix"]


# --- cudaErrorInvalidSymbol: no image for this GPU before a symbol passed wrongly -----------------

@pytest.mark.parametrize("text", [
    # a project's check macro (PWP3D's cudaSafeCall) after cudaMemcpyToSymbol
    "E:/Github/PWP3D/PerseusLib/CUDA/CUDAConvolution.cu(100) : cudaSafeCall() Runtime API error : invalid device "
    "symbol.",
    # CudaSift's safeCall
    "safeCall() Runtime API error in file </home/kk/CudaSift/cudaSiftH.cu>, line 42 : invalid device symbol.",
    # a framework's CUDA error line, the code's name with it
    "RuntimeError: CUDA error: cudaErrorInvalidSymbol: invalid device symbol",
])
def test_invalid_device_symbol_is_possibly_no_kernel_image_and_possibly_the_program(text):
    assert top_with_confidence(text) == ("no-kernel-image", "possible")
    assert answers(text) == {"no-kernel-image": "possible"}
    assert any(e.id == "program-error" and e.confidence == "possible" for e in explain(text))


@pytest.mark.parametrize("text, want", [
    # the other runtime codes keep theirs: no image at all is likely, an ordinal is exact
    ("RuntimeError: CUDA error: invalid device function", ("no-kernel-image", "likely")),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device", ("no-kernel-image", "exact")),
    ("RuntimeError: CUDA error: invalid device ordinal", ("invalid-device-ordinal", "exact")),
    # a texture reference or a symbol looked up by name (driver API / JIT) stays the program's
    ("Cuda error: invalid texture reference", None),
    ("CUDA error cudaErrorSymbolNotFound [bulk.cuh:239]: named symbol not found", None),
])
def test_other_runtime_codes_keep_their_answers(text, want):
    assert top_with_confidence(text) == want
