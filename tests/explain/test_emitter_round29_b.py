"""The twenty-ninth round, heldout29's s-z part, texts 20-40 (the collector's s-z owners,
wenet-e2e/wenet#1335 to soumith/cudnn.torch#382 in file order): what its misses (scored once, then
read) showed that is general, mended from what the emitter prints and what it means, with texts
other than any held-out one and look-alikes that keep their answers. The part had no confident
negative.

- Lua Torch's cudnn.torch (ffi.lua, every branch R2-R7 and master, 2015-2017): its FFI
  declarations are written for one cuDNN major; it loads libcudnn (CUDNN_PATH, else the branch's
  libcudnn.so.N), reads cudnnGetVersion(), and outside the releases the branch declares raises
  "These bindings are for version %d or above, while the loaded CuDNN is version: %d" (master and
  R5 from 2016: "These bindings are for CUDNN 5.x (5005 <= cudnn.version > 6000) , while ...").
  The bindings' own words for a libcudnn of another release than they were written for:
  cudnn-version-mismatch, exact, the bindings' release as built and the library's as found
  (soumith/cudnn.torch#359, which before had only a key-table guess).
- CMake's FindCUDA module (find_package(CUDA REQUIRED), here cutorch's FIND_PACKAGE(CUDA 6.5
  REQUIRED)): message(FATAL_ERROR "Specify CUDA_TOOLKIT_ROOT_DIR") when no nvcc was found. The
  words keep their meaning quoted without CMake's "CMake Error at ... (message):" line (a thread's
  title, torch/cutorch#425): cuda-home-unset, likely, as with that line. Advice giving the
  variable a value or a purpose ("specify CUDA_TOOLKIT_ROOT_DIR=...", "... to point at ...") is
  not read.
- TensorFlow before 1.13 kept its NCCL ops in tf.contrib.nccl, whose op library
  (contrib/nccl/BUILD, python/ops/_nccl_ops.so) the Windows and macOS builds did not have: a graph
  with NcclAllReduce (MirroredStrategy's default all-reduce on GPUs) stops at the op registry
  (framework/op.cc: "Op type not registered '%s' in binary running on %s. Make sure the Op and
  Kernel are registered ..."), the same build without NCCL whose later words ("No OpKernel was
  registered to support Op 'NcclAllReduce' ... <no registered kernels>") nccl-not-built already
  read. Likely: a saved graph imported on Linux before tf.contrib.nccl was touched reads the same,
  as the message's own note says (tensorflow/tensorflow#21470).

Left, and why: thewh1teagle/sherpa-rs#8 ("strange error when using cuda: 0xc0000409,
STATUS_STACK_BUFFER_OVERRUN", `other:`, an onnxruntime newer than sherpa-onnx supports) and
tensorflow/tensorflow#6486 (nvcc's "Stray '\"' character" under CMake 3.7.1's Visual Studio
generator, `other:`) get no answer, as an `other:` cause should: a Windows fail-fast code and
nvcc's command-line parser on a quote name no cause of their own. sokrypton/ColabDesign#66
(toolkit-too-old, a label the collector flagged: the reporter's fix is cut off at "I upgraded
Cud[...]") shows only JAX's xla_bridge warning "No GPU/TPU found, falling back to CPU", printed
whenever the backend it ends with is the CPU; its most common cause is a jaxlib without the CUDA
plugin (torch-not-cuda, possible, a lead it keeps), and a CUDA plugin that fails to start prints
its own error first, which this text lacks. soumith/dcgan.torch#33 ("cudnn SpatialFullConvolution:
Only Cuda supported duh!", labelled cudnn-version-mismatch) is cudnn.torch's assert on the
module's tensors (SpatialFullConvolution.lua: `assert(torch.typename(self.weight) ==
'torch.CudaTensor' ...)`, the bias the same until June 2016): a model not moved to the GPU, or an
older cudnn.torch than a program that drops the bias (dcgan's m:noBias()), which reinstalling the
rock fixed; neither is a cuDNN library of another release, and the words say nothing of one.
soumith/cudnn.torch#186 ("For R5 branch Error in CuDNN: CUDNN_STATUS_NOT_INITIALIZED") and #192
("Error in CuDNN: STATUS_EXECUTION_FAILED (cudnnSetDropoutDescriptor)"), both toolkit-too-old
(cuDNN v5 needs CUDA 7.5, the reporters had 7.0), show only cuDNN's status through cudnn.torch's
errcheck; #186 keeps cudnn-not-initialized (possible), the message's own reading, whose
alternatives name a cuDNN for another CUDA; nothing in either names the CUDA release. No relabels:
the collector flagged both labels, and the answers they could be read as are what the texts get or
say. tensorflow/tensorflow#152 (gpu-busy-or-unavailable: exclusive compute mode, the GPU taken) is
TensorFlow 0.5's "Local device intra op parallelism threads" and then the shell's "Segmentation
fault": nothing names the GPU. The other texts of the part were hits or negatives answered without
confidence, as scored."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, confident, top_id, top_with_confidence, whole


# --- cudnn.torch: bindings for one cuDNN, another loaded ------------------------------------------

@pytest.mark.parametrize("text, built, found", [
    # the R7 branch with a cuDNN 6 library
    ("/home/u/torch/install/bin/luajit: /home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:1769: These bindings are "
     "for version 7000 or above, while the loaded CuDNN is version: 6021  \nAre you using an older or newer version "
     "of CuDNN?", "7000", "6021"),
    # the R5 branch of May 2016 with a cuDNN 4 still first on the path
    ("...torch/install/share/lua/5.1/cudnn/ffi.lua:1607: These bindings are for version 5005 or above, while the "
     "loaded CuDNN is version: 4007  \nAre you using an older version of CuDNN?", "5005", "4007"),
    # master's 5.x range with a cuDNN 7 library given through CUDNN_PATH
    ("Found Environment variable CUDNN_PATH = /usr/local/cuda/lib64/libcudnn.so.7\n"
     "/opt/torch/install/share/lua/5.1/cudnn/ffi.lua:1618: These bindings are for CUDNN 5.x (5005 <= cudnn.version > "
     "6000) , while the loaded CuDNN is version: 7102  \nAre you using an older or newer version of CuDNN?",
     "5.x", "7102"),
])
def test_cudnn_torchs_bindings_for_another_cudnn_are_exact(text, built, found):
    got = whole(text, ("id", "confidence", "values"))
    assert (got["id"], got["confidence"]) == ("cudnn-version-mismatch", "exact")
    assert got["values"]["built"] == built and got["values"]["found"] == found


def test_cudnn_torchs_other_words_keep_their_answers():
    # no libcudnn of the branch's major at all is cudnn-lib-missing, not a mismatch
    text = ("/home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:1600: 'libcudnn (R5) not found in library path.\n"
            "Please install CuDNN from https://developer.nvidia.com/cuDNN")
    assert top_id(text) == "cudnn-lib-missing"
    assert "cudnn-version-mismatch" not in answers(text)
    # other bindings' version words are not cudnn.torch's
    assert "cudnn-version-mismatch" not in answers("These bindings are for Python 3.8 or above, while the loaded "
                                                   "interpreter is 3.6")


# --- FindCUDA's FATAL_ERROR quoted alone --------------------------------------------------------

@pytest.mark.parametrize("text", [
    'Install caffe fail: "Specify CUDA_TOOLKIT_ROOT_DIR"',
    "luarocks install cunn fails: Specify CUDA_TOOLKIT_ROOT_DIR\n-- Configuring incomplete, errors occurred!",
])
def test_findcudas_message_quoted_alone_is_cuda_home_unset(text):
    assert top_with_confidence(text) == ("cuda-home-unset", "likely")


@pytest.mark.parametrize("text", [
    "you can specify CUDA_TOOLKIT_ROOT_DIR=/usr/local/cuda-10.1 on the cmake line",
    "Specify CUDA_TOOLKIT_ROOT_DIR to point at the toolkit you want when two are installed",
    "-- CUDA_TOOLKIT_ROOT_DIR = /usr/local/cuda",
])
def test_advice_naming_the_variable_is_not_a_missing_toolkit(text):
    assert "cuda-home-unset" not in answers(text)


# --- TensorFlow 1.x's NCCL ops not in the binary -------------------------------------------------

@pytest.mark.parametrize("text", [
    "tensorflow.python.framework.errors_impl.NotFoundError: Op type not registered 'NcclBroadcast' in binary running "
    "on WIN-GPU01. Make sure the Op and Kernel are registered in the binary running in this process.",
    "InvalidArgumentError: Op type not registered 'NcclAllReduce' in binary running on ws-mac.local. Make sure the "
    "Op and Kernel are registered in the binary running in this process. Note that if you are loading a saved graph "
    "which used ops from tf.contrib, accessing (e.g.) `tf.contrib.resampler` should be done before importing the "
    "graph, as contrib ops are lazily registered when the module is first accessed.",
])
def test_tensorflows_contrib_nccl_ops_missing_are_nccl_not_built(text):
    assert top_with_confidence(text) == ("nccl-not-built", "likely")
    assert "TensorFlow" in whole(text)["title"]


@pytest.mark.parametrize("text", [
    # another contrib or add-on op not registered: not NCCL
    "NotFoundError: Op type not registered 'Addons>ImageProjectiveTransformV2' in binary running on host1. Make sure "
    "the Op and Kernel are registered in the binary running in this process.",
    "Op type not registered 'ImageProjectiveTransform' in binary running on gpu-node-3.",
    # a CPU-only TensorFlow lists no GPU: not a build without NCCL
    "No OpKernel was registered to support Op 'NcclAllReduce' used by {{node NcclAllReduce}} with these attrs: "
    "[T=DT_FLOAT, num_devices=4]\nRegistered devices: [CPU, XLA_CPU]\nRegistered kernels:\n  <no registered kernels>",
])
def test_other_unregistered_ops_are_not_nccl_not_built(text):
    assert "nccl-not-built" not in confident(text)
