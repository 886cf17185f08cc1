"""The twenty-second round, heldout22's first part: what its misses (scored once, then read) showed
that is general, mended from what the emitter prints and what it means, with texts other than any
held-out one and look-alikes that must stay where they were.

- XLA's PJRT plugin loader (xla/pjrt/pjrt_api.cc InitializePjrtPlugin: "Mismatched PJRT plugin PJRT
  API version (%d.%d) and framework PJRT API version %d.%d).", its major-version form and "Plugin
  PJRT API version %d.%d is older than the minimum supported version %d.%d" under
  ENABLE_PJRT_COMPATIBILITY): a plugin from another release than the framework
  (jax-plugin-mismatch, likely).
- TVM built without CUDA: its runtime's "Device API gpu|cuda is not enabled." (c_runtime_api.cc
  DeviceAPIManager::GetAPI) and its code generator's "Target cuda is not enabled" (codegen.cc before
  0.7) / "target.build.cuda is not enabled" (after), and decord, another copy of TVM's runtime
  (DECORDError): the CPU build of the package is installed (torch-not-cuda, likely, the package
  named).
- The loader's "undefined symbol" for a symbol in LLVM's namespace (_ZN4llvm..., llvm::): the
  library expects another LLVM (or C++ ABI), which says nothing of torch; no longer undefined-symbol
  exact ("built against another torch")."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole_cause_and_values as _whole


# --- a PJRT plugin from another release than the framework ----------------------------------------

_JAX_CAUSE = ("JAX's GPU support is a plugin (jax-cuda12-plugin with jax-cuda12-pjrt, jax-cuda13-*; libtpu on "
              "TPU) built with one jaxlib release and refused by, or incompatible with, any other. pip upgraded "
              "jax/jaxlib or the plugin alone (a pinned jaxlib, a notebook image's preinstalled plugin), so JAX "
              "falls back to the CPU or fails creating the backend.")
_JAX_FIX = ('Install them together, `pip install -U "jax[cuda12]"` (or `jax[cuda13]`, `jax[tpu]`), or pin '
            "jax-cuda12-plugin and jax-cuda12-pjrt to jaxlib's exact version (`pip list | grep -i jax`).")


@pytest.mark.parametrize("text, plugin_api, framework_api", [
    ("RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version "
     "(0.54) and framework PJRT API version 0.51). (you may need to uninstall the failing plugin package, or set "
     "JAX_PLATFORMS=cpu to skip this backend.)", "0.54", "0.51"),
    ("jaxlib.xla_extension.XlaRuntimeError: INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API version (0.47) and "
     "framework PJRT API version 0.60).", "0.47", "0.60"),
    ("RuntimeError: Unable to initialize backend 'METAL': INVALID_ARGUMENT: Mismatched PJRT plugin PJRT API major "
     "version (1) and framework PJRT API major version 0).", "1", "0"),
    ("RuntimeError: Unable to initialize backend 'tpu': INVALID_ARGUMENT: Plugin PJRT API version 0.40 is older "
     "than the minimum supported version 0.48", "0.40", "0.48"),
])
def test_pjrt_api_version_mismatch_is_jax_plugin_mismatch(text, plugin_api, framework_api):
    assert _whole(text) == {
        "id": "jax-plugin-mismatch", "confidence": "likely",
        "title": "JAX's PJRT plugin is from another release than jaxlib",
        "cause": _JAX_CAUSE, "fix": _JAX_FIX,
        "values": {"plugin_api": plugin_api, "framework_api": framework_api},
    }


def test_pjrt_loader_info_line_names_nothing():
    # the same loader's INFO line, printed on every start, matching versions or not
    assert answers("I0000 00:00:1721975334.44 pjrt_api.cc:95] The PJRT plugin has PJRT API version 0.54. The "
                   "framework PJRT API version is 0.54.") == {}


def test_jax_plugin_version_check_keeps_its_answer():
    assert answers("JAX plugin jax_cuda12_plugin version 0.5.1 is installed, but it is not compatible with the "
                   "installed jaxlib version 0.5.3, so it will not be used.") == {"jax-plugin-mismatch": "exact"}


# --- TVM (and decord, a copy of its runtime) built without CUDA -----------------------------------

_TVM = {
    "id": "torch-not-cuda", "confidence": "likely",
    "title": "A CPU-only TVM (built without CUDA) is installed",
    "cause": "The installed TVM (built without CUDA) is a CPU build (+cpu, or a platform with no CUDA wheel).",
    "fix": "Rebuild TVM with CUDA (`set(USE_CUDA ON)` in the build directory's config.cmake, in a clean build "
           "directory) and reinstall its Python package from that build, so that it loads the new libtvm.",
    "values": {"tvm": ""},
}


@pytest.mark.parametrize("text", [
    "tvm.error.InternalError: Traceback (most recent call last):\n  2: tvm::codegen::Build(tvm::IRModule, "
    "tvm::Target)\n  File \"/workspace/tvm/src/target/codegen.cc\", line 57\nInternalError: Check failed: "
    "(bf != nullptr) is false: target.build.cuda is not enabled",
    "tvm._ffi.base.TVMError: [09:02:11] /home/u/tvm/src/codegen/codegen.cc:30: Check failed: bf != nullptr "
    "Target cuda -libs=cudnn is not enabled",
    "tvm._ffi.base.TVMError: Traceback (most recent call last):\n  [bt] (0) /opt/tvm/build/libtvm.so(+0x8c2d1b)\n"
    "  File \"/opt/tvm/src/runtime/c_runtime_api.cc\", line 131\nTVMError: Check failed: allow_missing: Device API "
    "cuda is not enabled.",
])
def test_tvm_built_without_cuda_is_a_cpu_build_of_tvm(text):
    assert _whole(text) == _TVM


def test_decord_built_without_cuda_is_a_cpu_build_of_decord():
    got = _whole("decord._ffi.base.DECORDError: [10:21:03] /github/workspace/src/runtime/c_runtime_api.cc:66: "
                 "Check failed: allow_missing: Device API gpu is not enabled.")
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "torch-not-cuda", "likely", "A CPU-only decord (built without CUDA) is installed", {"decord": ""})
    assert got["fix"].startswith("Build decord from source with `cmake .. -DUSE_CUDA=ON`")


def test_dgl_cpu_package_keeps_its_answer():
    got = _whole("dgl._ffi.base.DGLError: [08:12:19] /opt/dgl/src/runtime/c_runtime_api.cc:88: Check failed: "
                 "allow_missing: Device API cuda is not enabled. Please install the cuda version of dgl.")
    assert (got["id"], got["confidence"], got["title"]) == ("torch-not-cuda", "likely", "A CPU-only dgl is installed")
    assert got["fix"].startswith("Install DGL's CUDA build")


@pytest.mark.parametrize("text", [
    # another device or target left out of the build: not CUDA
    "tvm._ffi.base.TVMError: Check failed: allow_missing: Device API vulkan is not enabled.",
    "TVMError: Check failed: bf != nullptr: Target llvm is not enabled",
    "InternalError: Check failed: (bf != nullptr) is false: target.build.llvm is not enabled",
    # the words alone, with no program that prints them named
    "Check failed: allow_missing: Device API gpu is not enabled.",
])
def test_other_targets_and_unnamed_runtimes_name_nothing(text):
    assert answers(text) == {}


# --- an LLVM symbol missing is not another torch --------------------------------------------------

@pytest.mark.parametrize("text", [
    "ImportError: /usr/lib/python3/dist-packages/triton/_C/libtriton.so: undefined symbol: _ZNK4llvm5Value7getNameEv",
    "OSError: /opt/tvm/build/libtvm.so: undefined symbol: _ZTVN4llvm2cl6OptionE",
])
def test_an_llvm_symbol_is_not_another_torch(text):
    assert answers(text).get("undefined-symbol") not in ("exact", "likely")


@pytest.mark.parametrize("text", [
    "ImportError: /home/u/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
    "_ZN2at5emptyEN3c108ArrayRefIlEENS0_13TensorOptionsENS0_8optionalINS0_12MemoryFormatEEE",
    "ImportError: /x/ext.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE",
])
def test_torch_symbols_keep_their_answer(text):
    assert answers(text) == {"undefined-symbol": "exact"}
