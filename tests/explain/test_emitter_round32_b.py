"""The thirty-second round (scoped to texts that name PyTorch), heldout32's i-o part, texts 28-48
(JaidedAI/EasyOCR#23 to NVIDIA-NeMo/Speech#186): what its misses and its confident negative (scored
once at fe46cea, then read) showed that is general, mended from what the emitter prints and what it
means, with texts other than any held-out one and look-alikes that keep their answers.

- Names a later torch added, read from torch's own sources (the wheels of torch 1.0.1, 1.2.0, 1.4.0,
  1.6.0, 1.8.1, 1.13.1, 2.1.2, 2.5.1 and the installed 2.13): torch.frombuffer
  (torch/_torch_docs.py add_docstr(torch.frombuffer, ...): not in 1.8.1, in 1.13.1 and later),
  torch.nn.Buffer (torch/nn/parameter.py `class Buffer`, exported by torch/nn/__init__.py: not in
  2.1.2, in 2.5.1 and later), torch.utils._python_dispatch.return_and_correct_aliasing (not in
  2.1.2's _python_dispatch.py, in 2.5.1's and later), torch.Size.numel (torch/csrc/Size.cpp
  THPSize_numel, in 1.0.1's libtorch_python and every later one). Python's "module 'torch' has no
  attribute 'frombuffer'", "module 'torch.nn' has no attribute 'Buffer'", "cannot import name
  'return_and_correct_aliasing' from 'torch.utils._python_dispatch'", "'torch.Size' object has no
  attribute 'numel'" (and the other form of each) say a torch older than the one the code was
  written for: package-torch-mismatch, likely, its cause naming the name and the releases
  (signatures.py _torch_binding reads the defaults' added_<name>). Kept to these names (the other
  readers of this round see the same class); a name no torch ever had (a typo) is the program's and
  stays unread.
- torch's autograd before 0.4, when Tensors and Variables were apart: "expected Variable or None
  (got %s)" with the argument's type name (the format string is still in 1.0.1's libtorch_python;
  0.3's own source could not be read here, no wheel of it is stored and pytorch/pytorch is over the
  fetch limit). From 0.4 a tensor's type is torch.Tensor, so "(got torch.FloatTensor)" is a torch
  older than 0.4 handed a plain tensor by code (or an extension's binding: warp-ctc's, in
  crnn.pytorch#133) written for 0.4; a 0.3-era program missing a Variable() reads the same:
  package-torch-mismatch, possible (a lead).
- c10's getDeviceGuardImpl (c10/core/impl/DeviceGuardImplInterface.h in the installed torch's
  headers: TORCH_CHECK(p, "PyTorch is not linked with support for ", type, " devices")): the first
  use of a device type whose guard no loaded library registered; for cuda, libtorch's CUDA part
  (torch_cuda, which registers CUDAGuardImpl) is absent: a CPU libtorch (R torch installed one for
  a CUDA it did not support, mlverse/torch#1082). torch-not-cuda, likely (a C++ program whose
  linker dropped torch_cuda reads the same). Other device types (mps, xla) are not read.

The confident negative, mended: NVIDIA-NeMo/Megatron-Bridge#1901 (nccl-cuda-error, likely) shows,
under torch's "NCCL error ... unhandled cuda error", NCCL's own "Last error: Cuda failure 2 'out of
memory'": NCCL's checks of a CUDA call (src/include/checks.h CUDACHECK, WARN("Cuda failure '%s'",
cudaGetErrorString(err)); src/include/cudawrap.h CUCHECK, the driver API's WARN("Cuda failure %d
'%s'"), CUDA_ERROR_OUT_OF_MEMORY being 2; NCCL v2.28.9-1) before it returns ncclUnhandledCudaError.
That is NCCL failing to allocate on a GPU the workload filled, nccl-cuda-error's own alternative
"GPU memory exhausted": cuda-oom (the workload) now reads that line and supersedes nccl-cuda-error.
An unhandled cuda error whose WARN line names another CUDA failure keeps nccl-cuda-error.

No relabels.

Left, and why: meta-pytorch/torchcodec#671 (package-torch-mismatch) is the title's prose "nvidia RTX
5090 + pytorch=2.8 + torchcodec=0.3, An error occurred: NotImplementedError": nothing an emitter
prints that names a version. microsoft/human-pose-estimation.pytorch#112 (package-torch-mismatch
from the reporter's "version mistake") is cuDNN's bare CUDNN_STATUS_BAD_PARAM in backward, which
names no version; it gets program-error (possible, the workload), and nothing in its words could
honestly say which torch. jantic/DeOldify#504 (`other:`, a conda mkl update) gets undefined-symbol,
possible: the undefined symbol (iJIT_NotifyEvent) is in torch's own libtorch_cpu.so, and the text
does not name mkl; no id names an MKL that another package updated, so it stays a lead.
iffiX/machin#17 (`other:`, torch.distributed.rpc absent from Windows builds) gets no answer, as it
should: torch/distributed/rpc/__init__.py (1.4.0, where rpc_sync first is) imports its API only
`if is_available()` (hasattr(torch._C, "_rpc_init")), so the AttributeError says a build without
RPC, like round 31's torch.distributed reading; but no id names a build without RPC (nccl-not-built
names NCCL, which this build may have), so nothing was added. The part's other texts were hits or
negatives answered without confidence."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, top_with_confidence, whole_cause

# --- names a later torch added ----------------------------------------------------------------------


@pytest.mark.parametrize("text, name", [
    ('  File "/opt/conda/lib/python3.8/site-packages/mylib/io.py", line 98, in _view2torch\n'
     '    arr = torch.frombuffer(buf, dtype=torch.uint8)\n'
     "AttributeError: module 'torch' has no attribute 'frombuffer'",
     "torch.frombuffer (not in torch 1.8.1, in 1.13.1 and later)"),
    ("ImportError: cannot import name 'Buffer' from 'torch.nn' "
     "(/home/u/.local/lib/python3.10/site-packages/torch/nn/__init__.py)",
     "torch.nn.Buffer (not in torch 2.1.2, in 2.5.1 and later)"),
    ("AttributeError: module 'torch.utils._python_dispatch' has no attribute 'return_and_correct_aliasing'",
     "torch.utils._python_dispatch.return_and_correct_aliasing (not in torch 2.1.2, in 2.5.1 and later)"),
    ('  File "/home/u/proj/flops.py", line 40, in count\n    n = x.shape[1:].numel()\n'
     "AttributeError: 'torch.Size' object has no attribute 'numel'",
     "torch.Size.numel (in every torch from 1.0 on)"),
])
def test_a_name_a_later_torch_added_is_a_package_for_another_torch(text, name):
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("package-torch-mismatch", "likely")
    assert f"Python API of another release: {name} is gone" in got["cause"]


@pytest.mark.parametrize("text", [
    # a name no torch ever had: the program's own typo
    "AttributeError: module 'torch' has no attribute 'frombufer'",
    "AttributeError: module 'torch' has no attribute 'Buffer'",
    "AttributeError: module 'torch.nn' has no attribute 'Buffers'",
    # numpy's frombuffer, and another torch.Size attribute
    "ImportError: cannot import name 'frombuffer' from 'numpy' (/usr/lib/python3/dist-packages/numpy/__init__.py)",
    "AttributeError: 'torch.Size' object has no attribute 'nelement'",
])
def test_names_no_torch_release_added_stay_unread(text):
    assert answers(text) == {}


def test_torch_before_0_4_handed_a_plain_tensor_is_a_lead():
    text = ('  File "train.py", line 88, in trainBatch\n    cost.backward()\n'
            "RuntimeError: expected Variable or None (got torch.cuda.FloatTensor)")
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("package-torch-mismatch", "possible")
    assert "the Variable/Tensor split of torch before 0.4" in got["cause"]


def test_a_variable_check_naming_no_torch_tensor_is_not_read():
    assert answers("RuntimeError: expected Variable or None (got numpy.ndarray)") == {}
    assert answers("TypeError: expected Tensor as element 0 in argument 0, but got list") == {}


# --- c10 finding no CUDA guard ------------------------------------------------------------------------


@pytest.mark.parametrize("text", [
    # R torch (lantern) on a CPU libtorch
    'Error in cpp_torch_tensor(data, rev(dimension), options, requires_grad, inherits(data, "integer64")) : \n'
    "  PyTorch is not linked with support for cuda devices\n"
    "Exception raised from getDeviceGuardImpl at ../c10/core/impl/DeviceGuardImplInterface.h:319 "
    "(most recent call first):",
    # a libtorch C++ program
    "terminate called after throwing an instance of 'c10::Error'\n"
    "  what():  PyTorch is not linked with support for cuda devices\n"
    "Exception raised from getDeviceGuardImpl at /pytorch/c10/core/impl/DeviceGuardImplInterface.h:216",
])
def test_no_cuda_guard_linked_is_a_torch_without_cuda(text):
    assert top_with_confidence(text) == ("torch-not-cuda", "likely")


@pytest.mark.parametrize("text", [
    "RuntimeError: PyTorch is not linked with support for mps devices",
    "RuntimeError: PyTorch is not linked with support for xla devices",
])
def test_other_device_types_are_not_read(text):
    assert answers(text) == {}


# --- NCCL's CUDA failure naming out of memory ---------------------------------------------------------

def test_nccl_failing_to_allocate_is_the_workloads_memory():
    text = ("node1:123:456 [0] include/alloc.h:48 NCCL WARN Cuda failure 'out of memory'\n"
            "node1:123:456 [0] NCCL INFO init.cc:1234 -> 1\n"
            "RuntimeError: NCCL error in: /opt/pytorch/pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:825, "
            "unhandled cuda error, NCCL version 2.7.8\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.")
    assert answers(text) == {}
    assert top_with_confidence(text) is None


def test_an_unhandled_cuda_error_naming_another_failure_keeps_nccl_cuda_error():
    text = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
            "ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), "
            "NCCL version 2.19.3\nncclUnhandledCudaError: Call to CUDA function failed.\nLast error:\n"
            "Cuda failure 'invalid device ordinal'")
    assert answers(text)["nccl-cuda-error"] == "likely"
    text = ("RuntimeError: NCCL error in: ../torch/lib/c10d/ProcessGroupNCCL.cpp:825, unhandled cuda error, "
            "NCCL version 2.7.8\nncclUnhandledCudaError: Call to CUDA function failed.")
    assert top_with_confidence(text) == ("nccl-cuda-error", "likely")
