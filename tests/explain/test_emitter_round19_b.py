"""The nineteenth round, heldout19's second part (owners n-z): what its misses and confident
negatives (scored once, then read) showed that is general, mended from what the emitter prints and
what it means, with texts other than any held-out one and look-alikes that keep their answers.

- glog's CHECK_EQ(error, cudaSuccess) in Caffe's CUDA_CHECK and its forks ("Check failed: error ==
  cudaSuccess (999 vs. 0)  unknown error"): the CUDA runtime's number, read as the catalogue reads
  "CUDA error 999" (cudaErrorUnknown: cuda-unknown-error).
- torchvision's transforms.functional_tensor / functional_pil, private since 0.15 (their shims warn
  "... is deprecated in 0.15 and will be **removed in 0.17**") and gone in 0.17: a package importing
  them was written for an older torchvision (package-torch-mismatch).
- The loader's "undefined symbol" names torch only for torch's own symbols (C++ names in its
  namespaces, its THP globals, torch <= 0.4's TH/THC C API); a global C++ function or a plain C
  name is the package's own (a broken wheel, a stale build/, its library not loaded), not "built
  against another torch".
- TensorRT 6/7's engine header check ("Serialization Error in verifyHeader: 0 (Version tag does not
  match)"): an engine serialised by another release, the program's artifact (kind workload)."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, confident, whole_cause as _whole



# --- Caffe's CUDA_CHECK: glog's CHECK_EQ with the runtime's number ----------------------------------

@pytest.mark.parametrize("text", [
    "I0315 09:12:44.120001 12345 net.cpp:255] Network initialization done.\n"
    "F0315 09:12:44.123456 12345 syncedmem.cpp:71] Check failed: error == cudaSuccess (999 vs. 0)  unknown error\n"
    "*** Check failure stack trace: ***\n    @     0x7f1c2a6e05cd  google::LogMessage::Fail()",
    "common.cpp:152] Check failed: error == cudaSuccess (999 vs. 0)",
])
def test_caffes_cuda_check_with_cudas_unknown_error_number_is_cuda_unknown_error(text):
    assert _whole(text) == {
        "id": "cuda-unknown-error", "confidence": "likely", "title": "The CUDA driver reported an unknown error",
        "cause": "CUDA initialisation or a call failed with cudaErrorUnknown.",
        "fix": "Reload the nvidia_uvm module or reboot the node; check the job sees /dev/nvidia*; on Windows "
               "upgrade torch.",
    }


@pytest.mark.parametrize("text, want", [
    # the number another code's: out of memory is the workload's, no environment cause
    ("F0101 math_functions.cu:28] Check failed: error == cudaSuccess (2 vs. 0)  out of memory", {}),
    # the same check with the description: as before
    ("Check failed: error == cudaSuccess (35 vs. 0)  CUDA driver version is insufficient for CUDA runtime version",
     {"driver-too-old": "exact"}),
    # the runtime's number not first against cudaSuccess's 0: not read as a CUDA code
    ("Check failed: cudaSuccess == err (0 vs. 999)", {}),
    ("Check failed: error == cudaSuccess (999 vs. 2)", {}),
    # cuDNN's check: its own status, as before
    ("Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)  CUDNN_STATUS_INTERNAL_ERROR",
     {"cudnn-execution-failed": "possible"}),
])
def test_the_check_failed_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- torchvision's private transforms modules ----------------------------------------------------

_FUNCTIONAL_TENSOR = {
    "id": "package-torch-mismatch", "confidence": "likely",
    "title": "A package written for another torch release than the installed one",
    "cause": "A package (apex, timm, DeepSpeed, mmcv, basicsr, a project's code) uses torch's (or "
             "torchvision's) Python API of another release: {api} is gone from newer torch (torch._six went "
             "in 2.0, its container_abcs, string_classes and int_classes in 1.9; torchvision's "
             "transforms.functional_tensor and functional_pil in torchvision 0.17, with torch 2.2) or not "
             "yet in an older one (torch.compile in 2.0, torch.compiler in 2.1, torch.backends.mps in 1.12).",
    "fix": "Install the package's release made for your torch (a newer one for a torch that removed the name, "
           "e.g. current apex/timm/DeepSpeed for torch >= 2.0), or the torch release the package needs (`pip "
           "show PACKAGE` for its requirement; `envcheck plan` for a torch matching the GPU and driver).",
}


@pytest.mark.parametrize("text, api", [
    ('  File "/home/u/GFPGAN/venv/lib/python3.10/site-packages/basicsr/data/degradations.py", line 8, in <module>\n'
     "    from torchvision.transforms.functional_tensor import rgb_to_grayscale\n"
     "ModuleNotFoundError: No module named 'torchvision.transforms.functional_tensor'",
     "torchvision.transforms.functional_tensor"),
    ("ModuleNotFoundError: No module named 'torchvision.transforms.functional_pil'",
     "torchvision.transforms.functional_pil"),
])
def test_torchvisions_removed_transforms_modules_are_a_package_for_another_torch(text, api):
    want = dict(_FUNCTIONAL_TENSOR, cause=_FUNCTIONAL_TENSOR["cause"].replace("{api}", api))
    assert _whole(text) == want


@pytest.mark.parametrize("text, want", [
    # modules torchvision never had, or has since 0.15: not a removal (the release table,
    # torch_names.json, gives transforms.v2, new in 0.15, only its `possible` lead)
    ("ModuleNotFoundError: No module named 'torchvision.transforms.v2'", {"package-torch-mismatch": "possible"}),
    ("No module named 'torchvision.transforms.functional_tensors'", {}),
    ("No module named 'torchvision.transforms.functional_tensor.extra'", {}),
    # torchvision itself missing
    ("ModuleNotFoundError: No module named 'torchvision'", {}),
])
def test_the_other_torchvision_modules_keep_their_answers(text, want):
    assert answers(text) == want


# --- an undefined symbol that is not torch's -----------------------------------------------------

@pytest.mark.parametrize("text", [
    # a global C++ function of the package's own ops, missing from its build
    "ImportError: /opt/conda/lib/python3.8/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: "
    "undefined symbol: _Z24roi_align_rotated_forwardN2at6TensorES0_S0_iiffib",
    # a plain C name of the package's own library, not loaded by the extension
    "ImportError: /usr/local/lib/python3.10/dist-packages/transformer_engine_torch.cpython-310-x86_64-linux-gnu.so: "
    "undefined symbol: nvte_fused_attn_fwd",
    "OSError: /home/u/.local/lib/python3.9/site-packages/bitsandbytes/libbitsandbytes_cuda117.so: undefined symbol: "
    "cquantize_blockwise_fp16",
])
def test_an_undefined_symbol_of_the_packages_own_is_not_confidently_another_torch(text):
    assert confident(text) == []


@pytest.mark.parametrize("text", [
    # torch's C++ names in its namespaces and typeinfo: as before
    "ImportError: /x/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN3c104impl23ExcludeDispatchKeyGuardC1ENS_11DispatchKeyE",
    "ImportError: /x/knn.cpython-37m-x86_64-linux-gnu.so: undefined symbol: _ZTIN3c1021AutogradMetaInterfaceE",
    # torch's THP global C++ function (Tensor became TensorBase in 1.10)
    "ImportError: /x/spconv/spconv_utils.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
    "_Z16THPVariable_WrapN2at6TensorE",
    # torch <= 0.4's THC C API, gone from torch 1.x
    "ImportError: /x/_ext/roi_pooling/_roi_pooling.so: undefined symbol: THCudaTensor_data",
])
def test_torchs_own_undefined_symbols_keep_their_answer(text):
    assert answers(text) == {"undefined-symbol": "exact"}


# --- TensorRT 6/7's engine header --------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "[TensorRT] ERROR: coreReadArchive.cpp (31) - Serialization Error in verifyHeader: 0 (Version tag does not match)\n"
    "[TensorRT] ERROR: INVALID_STATE: std::exception\n[TensorRT] ERROR: INVALID_CONFIG: Deserialize the cuda engine failed.",
])
def test_tensorrts_version_tag_is_an_engine_of_another_release(text):
    got = explain(text)[0]
    assert (got.id, got.kind, got.confidence) == ("tensorrt-engine-mismatch", "workload", "likely")
    assert answers(text) == {}


def test_tensorrts_magic_tag_is_not_a_release():
    # a file that is no engine at all (another format, a truncated download): no cause named
    text = "[TensorRT] ERROR: coreReadArchive.cpp (38) - Serialization Error in verifyHeader: 0 (Magic tag does not match)"
    assert [e.id for e in explain(text)] == []
