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
from tests.explain.answers import answers as _answers, confident as _confident, top_id as _top_id, whole


_whole = whole


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


# --- CPU-only builds named by faiss's and TensorFlow's own words --------------------------------

FAISS_FIX = ("Uninstall faiss-cpu and install a GPU build of faiss alone (`pip install faiss-gpu-cu12` for CUDA 12, "
             "or conda's faiss-gpu): the CPU and GPU packages install the same `faiss` module, and the one "
             "installed last replaces the other.")


@pytest.mark.parametrize("text", [
    "    index = faiss.GpuIndexFlatL2(res, 768, cfg)\nAttributeError: module 'faiss' has no attribute 'GpuIndexFlatL2'",
    "AttributeError: module 'faiss' has no attribute 'index_cpu_to_gpu'",
    "AttributeError: module 'faiss' has no attribute 'GpuClonerOptions'",
    # faiss's own gpu_wrappers.py in a CPU build (get_num_gpus() is 0 there; the GPU classes are absent)
    '  File "/opt/venv/lib/python3.11/site-packages/faiss/gpu_wrappers.py", line 27, in index_cpu_to_gpu_multiple_py\n'
    "    vres = GpuResourcesVector()\nNameError: name 'GpuResourcesVector' is not defined",
])
def test_faiss_without_its_gpu_classes_is_a_cpu_only_faiss(text):
    assert _whole(text) == {"id": "torch-not-cuda", "confidence": "likely", "title": "A CPU-only faiss is installed",
                            "values": {"faiss": ""}, "fix": FAISS_FIX}


DGL_FIX = "Install DGL's CUDA build for your torch and CUDA from DGL's wheel index (the PyPI dgl is CPU-only)."


@pytest.mark.parametrize("text", [
    # DGL < 1.0 named the device "gpu" (TVM's DeviceName), 1.0 on "cuda"
    "dgl._ffi.base.DGLError: [09:12:41] /opt/dgl/src/runtime/c_runtime_api.cc:87: Check failed: allow_missing: "
    "Device API gpu is not enabled. Please install the cuda version of dgl.",
    "DGLError: Check failed: allow_missing: Device API cuda is not enabled. Please install the cuda version of dgl.",
])
def test_dgl_without_its_cuda_device_api_is_a_cpu_only_dgl(text):
    assert _whole(text) == {"id": "torch-not-cuda", "confidence": "likely", "title": "A CPU-only dgl is installed",
                            "values": {"pkg": "dgl"}, "fix": DGL_FIX}


@pytest.mark.parametrize("text", [
    # attributes every faiss has, and another module's GPU names
    "AttributeError: module 'faiss' has no attribute 'IndexHNSWFlat'",
    "AttributeError: module 'faiss' has no attribute 'get_num_gpus'",
    "AttributeError: module 'annoy' has no attribute 'StandardGpuResources'",
])
def test_faiss_look_alikes_name_no_cpu_only_build(text):
    assert "torch-not-cuda" not in _answers(text)


TF_FIX = ("TensorFlow 2.11 and later have no GPU build for native Windows: run it under WSL2 (`pip install "
          "tensorflow[and-cuda]`), or use TensorFlow 2.10 with CUDA 11.2 and cuDNN 8.1; on Linux install "
          "`tensorflow[and-cuda]` (tensorflow-cpu and the macOS builds have no CUDA).")


@pytest.mark.parametrize("text", [
    ">>> import tensorflow as tf\n>>> tf.test.is_built_with_cuda()\nFalse\n>>> tf.config.list_physical_devices('GPU')\n[]",
    "In [3]: print(tf.test.is_built_with_cuda())\nFalse",
])
def test_tensorflow_saying_it_was_built_without_cuda_is_a_cpu_only_tensorflow(text):
    assert _whole(text) == {"id": "torch-not-cuda", "confidence": "likely",
                            "title": "A CPU-only TensorFlow is installed", "values": {"tf": ""}, "fix": TF_FIX}


@pytest.mark.parametrize("text", [
    ">>> tf.test.is_built_with_cuda()\nTrue\n>>> tf.config.list_physical_devices('GPU')\n[]",
    "if not tf.test.is_built_with_cuda(): raise SystemExit('no CUDA')",
])
def test_tensorflow_built_with_cuda_or_only_asked_names_no_cpu_only_build(text):
    assert "torch-not-cuda" not in _answers(text)


# --- a library's development package missing at build --------------------------------------------

DEV_TITLE = "A library's development files (headers, link library) are not installed for the build"


@pytest.mark.parametrize("text, lib", [
    ("csrc/comm/nccl_comm.cpp:4:10: fatal error: nccl.h: No such file or directory\n #include <nccl.h>", "nccl"),
    ("/usr/bin/ld: cannot find -lnccl: No such file or directory\ncollect2: error: ld returned 1 exit status",
     "nccl"),
    ("src/jit/kernel_cache.cpp:12:10: fatal error: nvrtc.h: No such file or directory", "nvrtc"),
    ("C:/src/rtc.cpp(3): fatal error C1083: Cannot open include file: 'nvrtc.h': No such file or directory", "nvrtc"),
    ("/usr/bin/ld: cannot find -lnvrtc", "nvrtc"),
    ("csrc/aio/py_lib/deepspeed_aio_thread.h:9:10: fatal error: libaio.h: No such file or directory", "libaio"),
])
def test_a_header_or_link_library_of_a_runtime_without_its_dev_package(text, lib):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "dev-package-missing", "likely", DEV_TITLE, {"lib": lib})


@pytest.mark.parametrize("text", [
    # DeepSpeed's jit_load() for its async_io op: is_compatible() is libaio's development files
    "RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software "
    "issue. async_io requires the dev libaio .so object and headers but these were not found.",
    "  File \"/opt/conda/lib/python3.10/site-packages/deepspeed/ops/op_builder/builder.py\", line 446, in jit_load\n"
    "RuntimeError: Unable to JIT load the async_io op due to it not being compatible due to hardware/software issue.",
])
def test_deepspeed_s_async_io_not_compatible_is_libaio_s_dev_package(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["values"]) == ("dev-package-missing", "likely", {"lib": "async_io"})
    assert "libaio-dev" in got["fix"]


@pytest.mark.parametrize("text", [
    # ds_report lists every op; its libaio warning is printed on every machine without libaio,
    # whatever failed: possible only
    "[WARNING]  async_io requires the dev libaio .so object and headers but these were not found.\n"
    "[WARNING]  async_io: please install the libaio-dev package with apt\n"
    "async_io ............... [NO] ....... [NO]",
    "[WARNING]  async_io requires the libraries: ['libaio-dev'] but are missing.",
])
def test_deepspeed_s_libaio_warning_alone_is_only_possible(text):
    assert _confident(text) == [] and _answers(text).get("dev-package-missing") == "possible"


@pytest.mark.parametrize("text, cause", [
    # another op not compatible (its own reasons: a GPU arch, triton, a torch version) stays the
    # compiled-ops cause; the toolkit's own headers stay the toolkit's
    ("RuntimeError: Unable to JIT load the evoformer_attn op due to it not being compatible due to "
     "hardware/software issue.", "extension-ops-missing"),
    ("kernel.cu:1:10: fatal error: cuda_runtime.h: No such file or directory", "cuda-home-unset"),
    ("src/conv.cpp:3:10: fatal error: cudnn.h: No such file or directory", "cudnn-lib-missing"),
    ("ImportError: libnccl.so.2: cannot open shared object file: No such file or directory", None),
])
def test_look_alikes_keep_their_causes(text, cause):
    if cause:
        assert _top_id(text) == cause
    assert "dev-package-missing" not in _answers(text)
