"""The twenty-eighth round, heldout28's s-z part, texts 46-71 (the collector's s-z owners,
SwinTransformer/Swin-Transformer-Object-Detection#107 to XChenZ/havatar#5 and the rest of that
part in file order): what its misses and its one confident negative (scored once, then read)
showed that is general, mended from what the emitter prints and what it means, with texts other
than any held-out one and look-alikes that keep their answers.

- Theano's version() (theano/sandbox/cuda/dnn.py and theano/gpuarray/dnn.py, 0.8 - 1.0): its
  DnnVersion op, compiled against the cudnn.h Theano finds (dnn.include_path), returns
  (CUDNN_VERSION, cudnnGetVersion()), and `if v[0] != v[1]: raise RuntimeError("Mixed dnn
  version. The header is version %s while the library is version %s." % v)`: the libcudnn the
  process loaded is another release than the header Theano compiled with (two cuDNNs on the
  paths, one often another framework's: Theano#5581, torch's cuDNN 5110 against the system's
  5005). Theano's own words for cudnn-version-mismatch's definition: exact, with the header as
  "built" and the library as "found". The existing "cuDNN version is too old" keeps likely.
- BasicSR's three compiled ops (basicsr/ops/dcn/deform_conv.py, fused_act/fused_act.py,
  upfirdn2d/upfirdn2d.py, the code GFPGAN, Real-ESRGAN and CodeFormer import): unless
  BASICSR_JIT is 'True', each does `try: from . import deform_conv_ext` (fused_act_ext,
  upfirdn2d_ext) `except ImportError: pass`, so the op's first call raises "NameError: name
  'fused_act_ext' is not defined": the package was installed without BASICSR_EXT=True, or its ops
  do not load. extension-ops-missing, likely, for those three names only (a NameError of another
  *_ext name is as often the program's own variable, which the id's entry already leaves).
- rosinality's stylegan2-pytorch ops (op/upfirdn2d.py: `upfirdn2d_op = load("upfirdn2d", ...)`),
  which the projects copying them often build ahead with a setup.py (CUDAExtension('upfirdn2d'))
  and then `import upfirdn2d as upfirdn2d_op`: a top-level module upfirdn2d is that compiled op
  (no PyPI package has the name), so "No module named 'upfirdn2d'" is the op not built or not
  installed here: extension-ops-missing, likely. A dotted op.upfirdn2d (the source tree's own
  .py file) and its twin `fused` (a PyPI package's name too) are not read.
- apex imported in a bare try/except that prints "apex is not installed" and carries on
  (Swin-Transformer's mmcv_custom/runner and mmdet/apis/train.py, its mmseg and SegmentronV2
  ports), then used for fp16 (apex.amp.initialize): "NameError: name 'apex' is not defined" says
  `import apex` failed, either apex absent or, since apex.transformer (2021) imports amp_C at
  `import apex`, apex installed without its compiled ops (a Python-only or Windows build,
  Swin-Transformer-Object-Detection#107). The two read the same: extension-ops-missing, possible.
- undefined-symbol (a compiled extension built against another torch) no longer reads a symbol
  in TensorRT's namespace (_ZN8nvinfer1) or TensorRT-LLM's (_ZN12tensorrt_llm, _ZNK12...) as
  another torch, with the LLVM and TensorFlow namespaces it already leaves: Triton's tensorrtllm
  backend (libtriton_tensorrtllm.so, "unable to load shared library: %s: undefined symbol: %s")
  or a TensorRT plugin built against another TensorRT(-LLM) than the one beside it, which no
  torch fixes. triton-inference-server/tensorrtllm_backend#662 (`other:`, the backend and the
  TensorRT-LLM of the 24.10 image) lost its exact undefined-symbol; the key table's "undefined
  symbol" phrase still offers undefined-symbol as `possible`, a lead a reader can weigh (it is an
  undefined symbol between two builds), and the `other:` cause is still a miss as every `other:`.

Left, and why: triton-inference-server/server#2562 (gpu-busy-or-unavailable; "ERROR: No
supported GPU(s) detected to run this container") is the NGC images' entrypoint check
(nvidia_entrypoint.sh's SM check, not in any public repository), whose verdict on its list of GPUs
reads the same for a GPU newer than the image (then after "WARNING: Detected NVIDIA %s GPU, which
is not yet supported in this version of the container"), a container run without the NVIDIA
runtime (triton#135, in this part, container-toolkit-missing) and a GPU the check could not use
(here an MPS server others had started): nothing in the line names the busy GPU. stereolabs/
zed-ros-wrapper#423 and stereolabs/zed-sdk#164 (`other:`, the ZED SDK's CUDA version) are the
coordinator's (a new id toolkit-too-old, added in parallel): left to it. stereolabs/
zed-python-api#21 (`other:`, "Executable was designed for a newer version of the SDK. EXE v2.2.1 /
installed v2.2.0") gets no answer, as an `other:` cause should: a ZED SDK older than the one the
wrapper was built with, which no id names. The confident negative wpybtw/Skywalker#2 stays: its
text is the CUDA runtime's own "invalid device ordinal (101)" for a cudaMemAdvise(...,
cudaMemAdviseSetAccessedBy, device_id) the project's check prints, and the maintainer's cause (the
program used a GPU id the machine's first-ngpu layout did not give it) is invalid-device-ordinal's
own definition (a hard-coded device index); the text shows nothing of the program's fault. The
other texts of the part were hits or negatives answered without confidence, as scored."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, confident, top_with_confidence, whole


# --- Theano: cudnn.h and libcudnn of two releases -----------------------------------------------

@pytest.mark.parametrize("text, built, found", [
    ("ERROR (theano.gpuarray): Could not initialize pygpu, support disabled\nTraceback (most recent call last):\n"
     '  File "/opt/conda/lib/python3.6/site-packages/theano/gpuarray/dnn.py", line 343, in version\n'
     "RuntimeError: Mixed dnn version. The header is version 7005 while the library is version 7102.",
     "7005", "7102"),
    # the old back-end's sandbox/cuda/dnn.py, in a Keras banner
    ("Using Theano backend.\nRuntimeError: Mixed dnn version. The header is version 5110 while the library is "
     "version 7401.", "5110", "7401"),
])
def test_theanos_mixed_dnn_version_is_exact(text, built, found):
    got = whole(text, ("id", "confidence", "values"))
    assert (got["id"], got["confidence"]) == ("cudnn-version-mismatch", "exact")
    assert got["values"]["built"] == built and got["values"]["found"] == found


def test_theanos_other_cudnn_checks_keep_their_answers():
    # too old keeps likely; cuDNN not found is not a mismatch
    assert top_with_confidence("Using gpu device 0: GeForce GTX 1080 (CNMeM is disabled, cuDNN Version is too old. "
                               "Update to v5, was 4007.)") == ("cudnn-version-mismatch", "likely")
    assert "cudnn-version-mismatch" not in answers(
        "Exception: (\"We can't determine the cudnn version as it is not available\", "
        "'Can not compile with cuDNN. We got this error:\\n')")


# --- BasicSR's ops imported in a try/except ------------------------------------------------------

@pytest.mark.parametrize("name, path", [
    ("deform_conv_ext", "basicsr/ops/dcn/deform_conv.py"),
    ("upfirdn2d_ext", "basicsr/ops/upfirdn2d/upfirdn2d.py"),
    ("fused_act_ext", "basicsr/ops/fused_act/fused_act.py"),
])
def test_basicsrs_ops_not_built_are_extension_ops_missing(name, path):
    text = (f'  File "/usr/local/lib/python3.8/dist-packages/{path}", line 88, in forward\n'
            f"NameError: name '{name}' is not defined")
    assert top_with_confidence(text) == ("extension-ops-missing", "likely")


@pytest.mark.parametrize("text", [
    "NameError: name 'file_ext' is not defined",
    "NameError: name 'img_ext' is not defined",
    "NameError: name 'upfirdn2d' is not defined",
])
def test_other_name_errors_are_not_extension_ops_missing(text):
    assert "extension-ops-missing" not in confident(text)


# --- stylegan2's compiled upfirdn2d --------------------------------------------------------------

@pytest.mark.parametrize("text", [
    '  File "D:\\\\stylegan2\\\\op\\\\upfirdn2d.py", line 9, in <module>\n    import upfirdn2d as upfirdn2d_op\n'
    "ModuleNotFoundError: No module named 'upfirdn2d'",
    "ImportError: No module named upfirdn2d",
])
def test_stylegan2s_upfirdn2d_not_built_is_extension_ops_missing(text):
    assert top_with_confidence(text) == ("extension-ops-missing", "likely")


@pytest.mark.parametrize("text", [
    # the source tree's own file, and the twin whose name a PyPI package has
    "ModuleNotFoundError: No module named 'op.upfirdn2d'",
    "ModuleNotFoundError: No module named 'fused'",
    "ModuleNotFoundError: No module named 'upfirdn2d_utils'",
])
def test_other_missing_modules_are_not_upfirdn2d(text):
    assert "extension-ops-missing" not in confident(text)


# --- apex after a try/except import ---------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "apex is not installed\n...\n"
    '  File "/home/u/Swin-Transformer-Semantic-Segmentation/mmseg/apis/train.py", line 78, in train_segmentor\n'
    '    model, optimizer = apex.amp.initialize(\nNameError: name \'apex\' is not defined',
    "NameError: name 'apex' is not defined",
])
def test_apex_not_imported_is_a_lead_to_its_ops(text):
    assert top_with_confidence(text) == ("extension-ops-missing", "possible")


@pytest.mark.parametrize("text", [
    "NameError: name 'apex_C' is not defined",
    "NameError: name 'apex_available' is not defined",
])
def test_other_apex_names_are_not_read(text):
    assert "extension-ops-missing" not in answers(text)


# --- undefined symbols of TensorRT and TensorRT-LLM -----------------------------------------------

@pytest.mark.parametrize("text", [
    "E1105 10:02:11.123 1 model_lifecycle.cc:638] failed to load 'tensorrt_llm' version 1: Not found: unable to "
    "load shared library: /opt/tritonserver/backends/tensorrtllm/libtriton_tensorrtllm.so: undefined symbol: "
    "_ZN12tensorrt_llm8executor8ExecutorC1ERKNSt10filesystem4pathENS0_9ModelTypeERKNS0_14ExecutorConfigE",
    "OSError: /usr/local/lib/python3.10/dist-packages/torch_tensorrt/lib/libtorchtrt.so: undefined symbol: "
    "_ZN8nvinfer117getPluginRegistryEv",
])
def test_tensorrt_namespaces_are_not_another_torch(text):
    assert "undefined-symbol" not in confident(text)


def test_torch_symbols_in_a_triton_backend_keep_undefined_symbol():
    text = ("UNAVAILABLE: Not found: unable to load shared library: /opt/tritonserver/backends/pytorch/"
            "libtriton_pytorch.so: undefined symbol: _ZN3c1019UndefinedTensorImpl10_singletonE")
    assert top_with_confidence(text) == ("undefined-symbol", "exact")
