"""The seventeenth round, heldout18's second part: what its misses (scored once, then read) showed
that is general, mended from what the emitter prints and what it means, with texts other than any
held-out one and look-alikes that must stay where they were.

- A project's compiled ops module that did not import, seen where the project imports it in a
  try/except and carries on: GroundingDINO's ms_deform_attn.py (`from groundingdino import _C`,
  on failure warnings.warn("Failed to load custom C++ ops. Running on CPU mode Only!"), later
  `_C.ms_deform_attn_forward` raises NameError "name '_C' is not defined"); BasicSR's ops
  (setup.py make_cuda_ext(name='deform_conv_ext' / 'fused_act_ext' / 'upfirdn2d_ext'), imported
  as `from . import deform_conv_ext`: "cannot import name 'deform_conv_ext'"). The builders' `_C` /
  `*_ext` names: extension-ops-missing. A NameError of a `*_ext` name is left alone: as often the
  program's own variable (file_ext)."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, whole


_whole = whole


_OPS_TITLE = "The framework's compiled CUDA ops are missing or built without CUDA"


@pytest.mark.parametrize("text", [
    "/opt/GroundingDINO/groundingdino/models/GroundingDINO/ms_deform_attn.py:31: UserWarning: Failed to load "
    "custom C++ ops. Running on CPU mode Only!\n  warnings.warn(\"Failed to load custom C++ ops. Running on CPU "
    "mode Only!\")",
    "  File \"/srv/dino/models/ops/ms_deform_attn.py\", line 53, in forward\n    output = "
    "_C.ms_deform_attn_forward(\nNameError: name '_C' is not defined",
    "  File \"/srv/sr/basicsr/ops/upfirdn2d/upfirdn2d.py\", line 11, in <module>\n    from . import upfirdn2d_ext\n"
    "ImportError: cannot import name 'upfirdn2d_ext' from 'basicsr.ops.upfirdn2d' (/srv/sr/basicsr/ops/"
    "upfirdn2d/__init__.py)",
])
def test_a_compiled_ops_module_that_did_not_import_is_ops_missing(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == ("extension-ops-missing", "likely", _OPS_TITLE)


@pytest.mark.parametrize("text, want", [
    # a Python name of the program's own that is not defined: no compiled module
    ("NameError: name 'model' is not defined", {}),
    # a NameError of a *_ext name is as often the program's own variable (file_ext): left alone
    ("NameError: name 'file_ext' is not defined. Did you mean: 'file_text'?", {}),
    # torch's own _C not importable: torch broken or shadowed, not an extension's ops
    ("ImportError: cannot import name '_C' from 'torch' (/home/u/src/torch/__init__.py)", {}),
    # an ordinary module name ending in "ext..." is no builder's ops module
    ("ImportError: cannot import name 'cpp_extension' from 'torch.utils'", {}),
])
def test_the_ops_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- sparsehash's headers, which only a development package installs ------------------------------

_SPARSEHASH_FIX = (
    "Install libsparsehash-dev (sparsehash-devel on RHEL, sparsehash on conda-forge); for files installed elsewhere point the build at them (NCCL: NCCL_ROOT, "
    "or NCCL_INCLUDE_DIR and NCCL_LIB_DIR; others: CFLAGS=-I<dir>/include LDFLAGS=-L<dir>/lib).")


@pytest.mark.parametrize("text, header", [
    ("      src/backend/hash/hash_cpu.hpp:4:10: fatal error: google/sparse_hash_map: No such file or directory\n"
     "          4 | #include <google/sparse_hash_map>\n      compilation terminated.\n"
     "      error: command '/usr/bin/gcc' failed with exit code 1", "google/sparse_hash_map"),
    ("In file included from csrc/hashing/table.cpp:2:\ncsrc/hashing/table.h:9:10: fatal error: "
     "'google/dense_hash_set' file not found\n#include <google/dense_hash_set>\n         ^~~~~~~~~~~~~~~~~~~~~~~\n"
     "1 error generated.", "google/dense_hash_set"),
])
def test_a_sparsehash_header_not_found_is_its_dev_package(text, header):
    got = _whole(text)
    assert got["id"] == "dev-package-missing" and got["confidence"] == "likely"
    assert got["title"] == "A library's development files (headers, link library) are not installed for the build"
    assert got["values"] == {"lib": header}
    assert got["fix"] == _SPARSEHASH_FIX
    assert explain(text)[0].cause.startswith(
        "The build includes sparsehash's header or links its unversioned .so; both come in its development "
        "package (libsparsehash-dev (sparsehash-devel on RHEL, sparsehash on conda-forge)), not in the runtime")


@pytest.mark.parametrize("text, want", [
    # another project's own google/ header (protobuf's, glog's) is no sparsehash
    ("fatal error: google/protobuf/message.h: No such file or directory", {}),
])
def test_the_sparsehash_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- tinygrad's CUDA libraries not found by its own loader ----------------------------------------

@pytest.mark.parametrize("text, lib", [
    # its autogen modules bind each function in `try: ... except AttributeError: pass`, and its DLL
    # raises AttributeError for every name when the library was not found: the function is missing
    ("  File \"/home/u/.venv/lib/python3.12/site-packages/tinygrad/runtime/support/compiler_cuda.py\", line 31, in "
     "__init__\n    self.version = nvjitlink.nvJitLinkVersion(ctypes.byref(major), ctypes.byref(minor))\n"
     "AttributeError: module 'tinygrad.runtime.autogen.nvjitlink' has no attribute 'nvJitLinkVersion'", "nvjitlink"),
    # its DLL's own word for it (runtime/support/c.py: "failed to load library {name}: try setting
    # {NAME}_PATH?")
    ("AttributeError: failed to load library nvrtc: try setting NVRTC_PATH?", "nvrtc"),
])
def test_tinygrad_not_finding_a_cuda_toolkit_library_is_cuda_lib_missing(text, lib):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "cuda-lib-missing", "likely", f"CUDA library {lib} not found by the dynamic loader", {"lib": lib})


@pytest.mark.parametrize("text, want", [
    # another tinygrad autogen module (its own structures) missing a name: a version skew, not a library
    ("AttributeError: module 'tinygrad.runtime.autogen.kfd' has no attribute 'AMDKFD_IOC_GET_VERSION'", {}),
    # a library found but failing to load (the loader's own error in place of the hint): as before
    ("AttributeError: failed to load library nvrtc: /opt/x/libnvrtc.so: invalid ELF header",
     {"cuda-lib-missing": "possible"}),
])
def test_the_tinygrad_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- flash-attention's checks of the GPU's architecture --------------------------------------------


@pytest.mark.parametrize("text", [
    # torch's TORCH_CHECK(cond) without a message prints "Expected <cond> to be true, but got
    # false."; flash-attn 1.x gates head dims > 64 in the backward on TORCH_CHECK(is_sm80 || is_sm90)
    "  File \"/opt/conda/lib/python3.10/site-packages/flash_attn/flash_attn_interface.py\", line 42, in "
    "_flash_attn_backward\n    _, _, _, softmax_d = flash_attn_cuda.bwd(\nRuntimeError: Expected is_sm80 || is_sm90 "
    "to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement "
    "request to PyTorch.)",
    # flash-attn 2.x's own words for the same gate on head dims > 192
    "RuntimeError: FlashAttention backward for head dim > 192 requires A100/A800 or H100/H800",
    "RuntimeError: FlashAttention backward for head dim 256 with dropout, or head dim 224 with/without dropout "
    "requires A100/A800 or H100/H800",
])
def test_flash_attention_gating_on_the_gpu_architecture_is_gpu_too_old(text):
    got = _whole(text)
    assert (got["id"], got["confidence"]) == ("gpu-too-old", "likely")
    assert got == _whole("RuntimeError: FlashAttention only supports Ampere GPUs or newer.") | {
        "confidence": "likely"}


@pytest.mark.parametrize("text, want", [
    # another message-less TORCH_CHECK: the program's tensors, not the GPU
    ("RuntimeError: Expected q.is_cuda() to be true, but got false.", {}),
    ("RuntimeError: Expected is_causal to be true, but got false.", {}),
])
def test_the_arch_check_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want
