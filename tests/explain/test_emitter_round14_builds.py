"""The fourteenth round, its build/wheel/library half: what heldout13's misses (scored once, then
read) showed that is general, mended from what the emitter prints and what it means, with texts
other than any held-out one and look-alikes that must stay where they were.

torch's legacy TH family: the headers of TH, THC, THNN, THCUNN ... were removed from torch (the
CPU wheels read: TH/ and THCUNN/ in 1.9, TH/ alone in 1.10, none from 1.11; THC/ went with 1.11,
pytorch#65472), so an extension whose source includes one does not build against a newer torch.
The same header missing for torch's OWN header (torch <= 1.10's CPU wheels ship ATen/cuda headers
that include THC headers only the CUDA wheels carry) is a CPU-only torch. torchvision >= 0.16
compares CUDA majors only and says so ("different CUDA major versions"). faiss's GPU classes are
wrapped only in its GPU build (swigfaiss.swig, #ifdef GPU_WRAPPER). A library's development files
(headers, the unversioned .so) are a package apart from its runtime (libnccl-dev beside libnccl2,
cuda-nvrtc-dev-X-Y beside cuda-nvrtc-X-Y, libaio-dev beside libaio1): DeepSpeed's async_io op is
compatible only where libaio's development files are (op_builder/async_io.py is_compatible)."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers as _answers, confident as _confident, top_id as _top_id


def _whole(text):
    e = next(e for e in explain(text) if e.kind == "environment")
    return {"id": e.id, "confidence": e.confidence, "title": e.title, "values": e.values, "fix": e.fix}


# --- torch's TH family missing in an extension build ---------------------------------------------

EXT_TITLE = "An extension's C++/CUDA sources failed to compile"
EXT_FIX = ("Read the first `error:` above; use the torch (and CUDA) release the extension supports, or a "
           "release of the extension made for your torch.")


@pytest.mark.parametrize("text, header", [
    ("/src/ops/roi_align/roi_align_cuda.cu:3:10: fatal error: THC/THCAtomics.cuh: No such file or directory\n"
     " #include <THC/THCAtomics.cuh>\n", "THC/THCAtomics.cuh"),
    ("csrc/nms_cpu.cpp:2:10: fatal error: TH/THGeneral.h: No such file or directory", "TH/THGeneral.h"),
    # clang's and MSVC's words for the same
    ("src/lib/ext.cpp:5:10: fatal error: 'THCUNN/THCUNN.h' file not found", "THCUNN/THCUNN.h"),
    ("C:/build/pkg/src/cuda/sampler.cu(4): fatal error C1083: Cannot open include file: 'THC/THCNumerics.cuh': "
     "No such file or directory", "THC/THCNumerics.cuh"),
    # the header alone, as a title quotes it
    ("Build fails: THNN/THNN.h: No such file or directory", "THNN/THNN.h"),
])
def test_an_extension_including_torch_s_removed_th_headers_is_built_for_an_older_torch(text, header):
    assert _whole(text) == {"id": "extension-torch-incompatible", "confidence": "likely", "title": EXT_TITLE,
                   "values": {"header": header}, "fix": EXT_FIX}
    assert header in next(e for e in explain(text) if e.kind == "environment").cause


TORCH_FIX = ("Install the CUDA build from the PyTorch index that matches your driver "
             "(`envcheck plan --gpu GPU --driver V`).")


@pytest.mark.parametrize("text", [
    # torch <= 1.10's CPU wheel: its ATen/cuda headers include THC headers the wheel lacks
    "/home/u/venv/lib/python3.8/site-packages/torch/include/ATen/cuda/CUDAApplyUtils.cuh:5:10: fatal error: "
    "THC/THCAtomics.cuh: No such file or directory",
    "C:/Python39/lib/site-packages/torch/include/ATen/native/cuda/UpSample.cuh(9): fatal error C1083: Cannot "
    "open include file: 'THC/THCAtomics.cuh': No such file or directory",
])
def test_torch_s_own_cuda_header_missing_its_thc_header_is_a_cpu_only_torch(text):
    assert _whole(text) == {"id": "torch-not-cuda", "confidence": "likely", "title": "A CPU-only torch is installed",
                            "values": {}, "fix": TORCH_FIX}
    assert "extension-torch-incompatible" not in _answers(text)


@pytest.mark.parametrize("text", [
    # other headers missing: not torch's TH family (THC as a word inside another name included)
    "src/x.cpp:1:10: fatal error: THCustom/ops.h: No such file or directory",
    "src/x.cpp:1:10: fatal error: mytorch/THC.h: No such file or directory",
    "src/x.cpp:1:10: fatal error: ATen/cuda/CUDAContext.h: No such file or directory",
])
def test_other_missing_headers_are_not_the_th_family(text):
    got = _answers(text)
    assert got.get("extension-torch-incompatible") in (None, "possible") and "torch-not-cuda" not in got


# --- torchvision's CUDA check, 0.16 on ---------------------------------------------------------

def test_torchvision_s_major_version_check_names_torchvision_built_for_another_cuda():
    # torchvision/extension.py _check_cuda_version() (0.16 - 0.24 read): majors only
    text = ("RuntimeError: Detected that PyTorch and torchvision were compiled with different CUDA major "
            "versions. PyTorch has CUDA Version=13.0 and torchvision has CUDA Version=12.6. Please reinstall "
            "the torchvision that matches your PyTorch install.")
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "torchvision-undefined-symbol", "exact", "torchvision was built for another torch")


def test_pyg_s_own_check_in_the_same_words_stays_its_compiled_ops():
    text = ("RuntimeError: Detected that PyTorch and torch_cluster were compiled with different CUDA major "
            "versions. PyTorch has CUDA version 12.1 and torch_cluster has CUDA version 11.8.")
    assert "torchvision-undefined-symbol" not in _answers(text)
