"""The fifteenth round, its package-versions half: what heldout14's misses (scored once, then read)
showed that is general, mended from what the emitting software prints, with texts other than any
held-out one and look-alikes that must stay where they were.

- NumPy's C-API check both ways (numpy 2.0's numpy/core/_multiarray_umath.py shim: "A module that
  was compiled using NumPy 1.x cannot be run in NumPy %s as it may crash", then the module's own
  _import_array: "_ARRAY_API not found"; __multiarray_api.h of 1.x and 2.x: "module compiled
  against API version 0x%x but this version of numpy is 0x%x", "module was compiled against NumPy
  C-API version 0x%x (NumPy %s) but the running NumPy has C-API version 0x%x"; Cython's
  "numpy.dtype size changed"): numpy-abi-mismatch, its fix the one `envcheck check`'s numpy rule
  gives (`pip install "numpy<2"` or torch >= 2.3.0).
- torch's Python API of another release imported by a package: torch._six (removed in 2.0), its
  container_abcs / string_classes / int_classes (removed in 1.9), torch.compile (2.0),
  torch.compiler (2.1); torch.backends.mps (1.12) only possible, a program's own probe being as
  common: package-torch-mismatch. torch.utils.ffi (torch >= 1.0 raises "torch.utils.ffi is
  deprecated. Please use cpp extensions instead.") is an extension written for torch 0.4:
  extension-torch-incompatible.
- OpenMMLab's import-time version check ('MMCV==%s is used but incompatible. Please install
  mmcv>=%s, <=%s.' in mmdet/mmseg/mmdet3d/mmocr __init__.py; MMEngine== the same):
  package-version-refused."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, confident, whole


_whole = whole


# --- NumPy's C API check ------------------------------------------------------------------------

NUMPY_TITLE = "A compiled module was built against another NumPy than the one installed"
NUMPY_FIX = ('Under NumPy 2.x with a module built for 1.x: `pip install "numpy<2"`, or upgrade the module to a '
             "release built for NumPy 2 (torch >= 2.3.0, torchvision >= 0.19.0). Under an older NumPy than the "
             "module's: upgrade numpy (`pip install -U numpy`), or reinstall the module built for this one. "
             "`envcheck check` judges numpy against torch.")


@pytest.mark.parametrize("text, confidence, values", [
    ("\nA module that was compiled using NumPy 1.x cannot be run in\nNumPy 2.1.3 as it may crash. To support both "
     "1.x and 2.x\nversions of NumPy, modules must be compiled with NumPy 2.0.\n", "exact", {"numpy": "2.1.3"}),
    ("/opt/venv/lib/python3.9/site-packages/torch/nn/modules/transformer.py:20: UserWarning: Failed to initialize "
     "NumPy: _ARRAY_API not found (Triggered internally at ../torch/csrc/utils/tensor_numpy.cpp:84.)", "likely", {}),
    ("RuntimeError: module compiled against API version 0x10 but this version of numpy is 0xd\n"
     "ImportError: numpy.core.multiarray failed to import", "exact", {"built_api": "10", "numpy_api": "d"}),
    ("ImportError: module was compiled against NumPy C-API version 0x12 (NumPy 2.1) but the running NumPy has "
     "C-API version 0x11. Check the section C-API incompatibility", "exact", {"built_api": "12", "numpy_api": "11"}),
    ("ValueError: numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 "
     "from PyObject", "likely", {}),
])
def test_numpy_s_c_api_check_either_way_is_the_numpy_abi_and_check_s_fix(text, confidence, values):
    assert _whole(text) == {"id": "numpy-abi-mismatch", "confidence": confidence, "title": NUMPY_TITLE,
                            "values": values, "fix": NUMPY_FIX}


def test_the_explain_fix_names_what_check_s_numpy_rule_names():
    from envcheck.matrix.load import load_matrix
    first = load_matrix().numpy2()
    assert f"torch >= {first['torch']}" in NUMPY_FIX and f"torchvision >= {first['torchvision']}" in NUMPY_FIX
    assert 'pip install "numpy<2"' in NUMPY_FIX


@pytest.mark.parametrize("text, want", [
    # what import_array's caller adds after any failure, a broken numpy install included: a hint
    ("ImportError: numpy.core.multiarray failed to import", {"numpy-abi-mismatch": "possible"}),
    # torch's own words with no numpy at all stay unnamed
    ("RuntimeError: Numpy is not available", {}),
])
def test_numpy_look_alikes_stay_unconfident(text, want):
    assert answers(text) == want


# --- torch's Python API of another release --------------------------------------------------------

TORCH_TITLE = "A package written for another torch release than the installed one"
TORCH_FIX = ("Install the package's release made for your torch (a newer one for a torch that removed the name, e.g. "
             "current apex/timm/DeepSpeed for torch >= 2.0), or the torch release the package needs (`pip show "
             "PACKAGE` for its requirement; `envcheck plan` for a torch matching the GPU and driver).")


@pytest.mark.parametrize("text, confidence, values", [
    ('  File "/opt/conda/lib/python3.10/site-packages/apex/_autocast_utils.py", line 5, in <module>\n'
     "    from torch._six import string_classes\nImportError: cannot import name 'string_classes' from 'torch._six' "
     "(/opt/conda/lib/python3.10/site-packages/torch/_six.py)", "likely", {"api": "string_classes"}),
    ("ImportError: cannot import name 'int_classes'", "likely", {"api": "int_classes"}),
    ('  File "/home/u/.local/lib/python3.11/site-packages/megatron/core/utils.py", line 9, in <module>\n'
     "    from torch._six import inf\nModuleNotFoundError: No module named 'torch._six'", "likely", {}),
    ('  File "/srv/app/lib/python3.8/site-packages/lightning/fabric/wrappers.py", line 30, in <module>\n'
     "AttributeError: module 'torch' has no attribute 'compile'", "likely", {"api": "compile"}),
    ("AttributeError: module 'torch.backends' has no attribute 'mps'", "possible", {"api": "mps"}),
])
def test_torch_s_python_api_of_another_release_is_the_package_torch_mismatch(text, confidence, values):
    assert _whole(text) == {"id": "package-torch-mismatch", "confidence": confidence, "title": TORCH_TITLE,
                            "values": values, "fix": TORCH_FIX}


@pytest.mark.parametrize("text", [
    "ImportError: cannot import name 'container_abcs' from 'collections' (/usr/lib/python3.10/collections/__init__.py)",
    "AttributeError: module 'torch' has no attribute 'compile_mode'",
    "ModuleNotFoundError: No module named 'torch'",
    # a program's own MPS probe under an old torch is the program's (pytorch/examples' kind): never confident
    "    elif torch.backends.mps.is_available():\nAttributeError: module 'torch.backends' has no attribute 'mps'",
])
def test_torch_api_look_alikes_get_no_confident_package_torch_mismatch(text):
    assert "package-torch-mismatch" not in confident(text)


def test_torch_utils_ffi_is_an_extension_written_for_torch_0_4():
    text = ('    from torch.utils.ffi import create_extension\n  File "/usr/lib/python3.6/site-packages/torch/utils/'
            'ffi/__init__.py", line 1, in <module>\n    raise ImportError("torch.utils.ffi is deprecated. Please use '
            'cpp extensions instead.")\nImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.')
    assert answers(text) == {"extension-torch-incompatible": "likely"}


# --- a package refusing another's release by its own check ---------------------------------------

def _refused_fix(pkg, want):
    return (f"Install the {pkg} release the message asks for ({want}) (mmcv with `mim install`, which picks the "
            "build for your torch and CUDA; torch from pytorch.org's index for your CUDA, into the Python that runs "
            f"setup.py), or the release of the refusing package made for the installed {pkg}; OpenMMLab's "
            "compatibility tables list the pairs.")


@pytest.mark.parametrize("text, pkg, have, named, want", [
    ("AssertionError: MMCV==2.2.0 is used but incompatible. Please install mmcv>=2.0.0rc4, <2.2.0.",
     "mmcv", "2.2.0", "MMCV", "mmcv>=2.0.0rc4, <2.2.0"),
    ("AssertionError: MMCV==1.4.0 is used but incompatible. Please install mmcv>=[1, 4, 8], <=[1, 9, 0].",
     "mmcv", "1.4.0", "MMCV", "mmcv>=[1, 4, 8], <=[1, 9, 0]"),
    ("AssertionError: MMEngine==0.7.0 is used but incompatible. Please install mmengine>=0.8.0, <1.0.0.",
     "mmengine", "0.7.0", "MMEngine", "mmengine>=0.8.0, <1.0.0"),
])
def test_openmmlab_s_version_check_is_the_package_version_refused(text, pkg, have, named, want):
    assert _whole(text) == {"id": "package-version-refused", "confidence": "exact",
                            "title": f"The installed {pkg} is outside the range the package importing it accepts",
                            "values": {"named": named, "have": have, "pkg": pkg, "want": want},
                            "fix": _refused_fix(pkg, want)}


def test_mmcv_without_its_ops_stays_extension_ops_missing():
    assert answers("ModuleNotFoundError: No module named 'mmcv._ext'") == {"extension-ops-missing": "exact"}


# --- ops modules built by hand and never built ------------------------------------------------------

@pytest.mark.parametrize("text", [
    # Deformable-DETR's models/ops CUDAExtension, copied by DINO, Mask2Former, MaskDINO ...
    '  File "/work/mask2former/modeling/pixel_decoder/ops/functions/ms_deform_attn_func.py", line 22, in <module>\n'
    "    import MultiScaleDeformableAttention as MSDA\nModuleNotFoundError: No module named "
    "'MultiScaleDeformableAttention'",
    # InternImage's ops_dcnv3
    '  File "/work/segmentation/ops_dcnv3/functions/dcnv3_func.py", line 14, in <module>\n    import DCNv3\n'
    "ModuleNotFoundError: No module named 'DCNv3'",
    # NATTEN's own check of its compiled library, both of its wordings
    "ImportError: Failed to import libnatten. Did you build / download NATTEN with the CUDA backend (libnatten)? "
    "Please make sure you built NATTEN correctly, or refer to https://shi-labs.com/natten for more information.",
    "ImportError: Failed to import libnatten. This could be due to an invalid/incomplete install. Please make sure "
    "you built NATTEN correctly, or refer to https://shi-labs.com/natten for more information.",
])
def test_ops_modules_never_built_are_the_extension_ops_missing(text):
    assert answers(text) == {"extension-ops-missing": "likely"}


@pytest.mark.parametrize("text", [
    # a submodule of the package (the package is there; its Python code moved) and another module
    "ModuleNotFoundError: No module named 'DCNv3.functions'",
    "ModuleNotFoundError: No module named 'MultiScaleDeformableAttention_v2'",
])
def test_other_modules_of_those_names_stay_unnamed(text):
    assert answers(text) == {}


# --- a GPU no build of the extension is for; half precision on the CPU ------------------------------

def test_tiny_cuda_nn_built_for_other_gpus_is_no_kernel_image():
    text = ('  File "/opt/venv/lib/python3.10/site-packages/tinycudann/modules.py", line 51, in <module>\n'
            '    raise EnvironmentError(f"Could not find compatible tinycudann extension for compute capability '
            '{system_compute_capability}.")\nOSError: Could not find compatible tinycudann extension for compute '
            "capability 52.")
    assert answers(text) == {"no-kernel-image": "likely"}


@pytest.mark.parametrize("text", [
    "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'",
    "  File \"/env/lib/python3.10/site-packages/torch/nn/functional.py\", line 2515, in layer_norm\n"
    "RuntimeError: \"LayerNormKernelImpl\" not implemented for 'Half'",
])
def test_a_cpu_kernel_without_float16_is_only_possibly_a_torch_without_cuda(text):
    # the model ran on the CPU: most often torch cannot use CUDA, but a program's own .half() reads the same
    assert answers(text) == {"torch-not-cuda": "possible"}


@pytest.mark.parametrize("text", [
    "RuntimeError: \"histogram_cuda\" not implemented for 'Half'",      # a CUDA kernel: the op's own limit
    "RuntimeError: \"slow_conv2d_cpu\" not implemented for 'Long'",     # another dtype: the program's tensors
])
def test_other_dispatch_errors_stay_unnamed(text):
    assert answers(text) == {}


# --- an ATen symbol undefined in a session that never imported torch -------------------------------

SESSION = (">>> import lltm_cpp\nTraceback (most recent call last):\n  File \"<stdin>\", line 1, in <module>\n"
           "ImportError: /home/u/.local/lib/python3.8/site-packages/lltm_cpp-0.0.0-py3.8-linux-x86_64.egg/lltm_cpp."
           "cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at6detail10empty_cpuEN3c108ArrayRefIlEE")


def test_an_aten_symbol_undefined_before_torch_was_imported_is_no_confident_environment_cause():
    # torch's libraries are not loaded until `import torch`: the session's order, or an ABI mismatch
    assert [(e.id, e.kind, e.confidence) for e in explain(SESSION)] == [
        ("extension-imported-before-torch", "workload", "possible"), ("undefined-symbol", "environment", "possible")]


@pytest.mark.parametrize("text", [
    # torch imported first in the same session: the symbol names the ABI mismatch, as before
    ">>> import torch\n" + SESSION,
    # a program's traceback, not a session
    SESSION.split("\n", 1)[1],
])
def test_the_same_symbol_after_import_torch_or_outside_a_session_stays_confident(text):
    assert confident(text) == ["undefined-symbol"]
