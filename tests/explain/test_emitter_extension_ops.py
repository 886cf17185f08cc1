"""Three classes read from what prints them, each tried with its emitter's own format string
(quoted in the comment, with the release or commit it was read at) filled with other values than
any corpus text: a compiled extension's ops missing at run time, cuDNN's loader not finding a
sub-library (Linux and Windows, cuDNN 8 and 9), and an extension build whose CUDA toolkit is not
torch's. And what must not be taken for them: the notices that accept a toolkit pair, torch's own
extension (`torch._C`), an op torch itself lacks, an ordinary missing Python module."""
from __future__ import annotations

import json

import pytest

from envcheck.explain import catalogue
from envcheck.explain.match import explain, top_environment_cause

DOC = json.loads(catalogue.DATA.read_text())


def _top(text: str):
    got = top_environment_cause(explain(text))
    return got.id if got else None


def _confident(text: str):
    return [e.id for e in explain(text) if e.kind == "environment" and e.confidence in ("exact", "likely")]


def test_cudnn_s_loader_is_read_from_its_libraries_string_tables():
    cudnn = {t["t"] for t in DOC["templates"] if t["lib"] == "cuDNN"}
    assert "Unable to load any of {{{}, {}, {}, {}}}" in cudnn
    assert "Could not locate {}. Please make sure it is in your library path!" in cudnn
    refs = {r for s in DOC["sources"] if s[0] == "pypi:nvidia-cudnn-cu12" for r in s[2]}
    assert {"9.1.0.70 (Linux)", "8.9.7.29 (Windows)"} <= refs


@pytest.mark.parametrize("text,major", [
    # cudnn64_8.dll / cudnn_ops_infer64_8.dll (8.9.7.29): "Could not load library %s. Error code %ld"
    ("Could not load library cudnn_cnn_infer64_8.dll. Error code 193", "8"),
    # the same: "Could not locate %s. Please make sure it is in your library path!"
    ("Could not locate cudnn_adv_infer64_8.dll. Please make sure it is in your library path!", "8"),
    # libcudnn.so.9 (9.1.0.70): "Unable to load any of {%s, %s, %s, %s}", then "Invalid handle.
    # Cannot load symbol %s"
    ("Unable to load any of {libcudnn_graph.so.9.3.0, libcudnn_graph.so.9.3, libcudnn_graph.so.9, "
     "libcudnn_graph.so}\nInvalid handle. Cannot load symbol cudnnGetVersion\nAborted (core dumped)", "9"),
])
def test_cudnn_s_loader_not_finding_a_sub_library_is_cudnn_missing(text, major):
    found = explain(text)
    assert found[0].id == "cudnn-lib-missing" and found[0].values.get("major") == major


def test_a_dll_cudnn_needs_not_found_is_named_by_the_catalogue():
    # cudnn64_8.dll: the same "Could not locate %s" for zlibwapi.dll, which cuDNN 8 needs on Windows
    assert _top("Could not locate zlibwapi.dll. Please make sure it is in your library path!") == "cudnn-lib-missing"


@pytest.mark.parametrize("text", [
    # CPython's "No module named %r" for modules the builders' setup.py name: apex CUDAExtension(
    # name="syncbn" ... "mlp_cuda", "amp_C"), detectron2._C, xformers._C, flash_attn_2_cuda
    "ModuleNotFoundError: No module named 'mlp_cuda'",
    "ImportError: No module named amp_C",
    "ModuleNotFoundError: No module named 'detectron2._C'",
    "ModuleNotFoundError: No module named 'flash_attn_2_cuda'",
    # a project's own extension built as a top-level _ext (CppExtension('_ext', ...)), and the
    # bare form Python 3.6 printed for a missing name
    "ModuleNotFoundError: No module named '_ext'",
    "ImportError: cannot import name '_C'",
    "ImportError: cannot import name '_C' from 'pytorch3d' (/opt/conda/lib/python3.10/site-packages/pytorch3d/__init__.py)",
    # torch/_ops.py (v2.1.2 ... v2.13.0): f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'"
    "AttributeError: '_OpNamespace' 'my_ext' object has no attribute 'fused_gelu'",
    # apex/optimizers/fused_lamb.py (22.03 ... 25.09): 'apex.optimizers.FusedLAMB requires cuda extensions'
    "RuntimeError: apex.optimizers.FusedLAMB requires cuda extensions",
    # apex/multi_tensor_apply/multi_tensor_apply.py (22.03 ... 25.09)
    "RuntimeError: ('Attempted to call MultiTensorApply method, but MultiTensorApply is not available, possibly "
    "because Apex was installed without --cpp_ext --cuda_ext.  Original import error message:', "
    "ModuleNotFoundError(\"No module named 'amp_C'\"))",
    # xformers/ops/fmha/common.py (v0.0.20 ... v0.0.32): reasons.append("xFormers wasn't build with CUDA support")
    "NotImplementedError: No operator found for `memory_efficient_attention_backward` with inputs:\n"
    "     query : shape=(2, 1024, 8, 40) (torch.bfloat16)\n`cutlassB` is not supported because:\n"
    "    xFormers wasn't build with CUDA support",
    # GroundingDINO ms_deform_attn.py (19d4439): warnings.warn("Failed to load custom C++ ops. Running on CPU mode Only!")
    "/app/groundingdino/models/GroundingDINO/ms_deform_attn.py:31: UserWarning: Failed to load custom C++ ops. "
    "Running on CPU mode Only!",
    # AutoGPTQ qlinear_cuda.py (058fd80): logger.warning('CUDA extension not installed.')
    "2024-03-01 10:00:00 WARNING [auto_gptq.nn_modules.qlinear.qlinear_cuda] CUDA extension not installed.",
    # mmcv ops (v1.x): 'DeformConv is not compiled with GPU support' (the class, whatever op names it)
    "RuntimeError: MultiScaleDeformableAttention is not compiled with GPU support",
])
def test_an_extension_s_compiled_ops_missing_at_run_time(text):
    assert _top(text) == "extension-ops-missing"


@pytest.mark.parametrize("text", [
    # deepspeed op_builder/builder.py (v0.3.16 ... v0.18.8) assert_no_cuda_mismatch:
    # f">- DeepSpeed Op Builder: Installed CUDA version {sys_cuda_version} does not match the "
    # f"version torch was compiled with {torch.version.cuda}, unable to compile cuda/cpp extensions
    # without a matching cuda version." -- whole, and as pip's captured output cuts it
    ">- DeepSpeed Op Builder: Installed CUDA version 11.5 does not match the version torch was compiled with "
    "12.1, unable to compile cuda/cpp extensions without a matching cuda version.",
    "      Exception: >- DeepSpeed Op Builder: Installed CUDA version 10.2 does not match the version torch was\n"
    "      compiled with 11.3, unable to compile",
])
def test_deepspeed_refusing_a_toolkit_other_than_torch_s(text):
    found = explain(text)
    assert found[0].id == "toolkit-torch-mismatch" and found[0].values["torch_cuda"] in ("12.1", "11.3")


@pytest.mark.parametrize("text", [
    # the same function's notices when it accepts the pair (print, not raise)
    "Installed CUDA version 11.8 does not match the version torch was compiled with 11.7 but since the APIs "
    "are compatible, accepting this combination",
    "DeepSpeed Op Builder: Installed CUDA version 12.4 does not match the version torch was compiled with 12.1."
    "Detected 'DS_SKIP_CUDA_CHECK=1': Allowing this combination of CUDA, but it may result in unexpected behavior.",
    # torch's own extension module: torch broken or shadowed by its source tree, not an add-on's ops
    "ModuleNotFoundError: No module named 'torch._C'",
    "ImportError: cannot import name '_C' from 'torch' (unknown location)",
    # an ordinary package missing, and an op torch itself lacks (aten comes with torch)
    "ModuleNotFoundError: No module named 'scipy'",
    "AttributeError: '_OpNamespace' 'aten' object has no attribute 'my_op'",
    # torch's own CPU-only build is torch-not-cuda, not an extension
    "AssertionError: Torch not compiled with CUDA enabled",
])
def test_what_is_not_these_classes(text):
    assert not {"toolkit-torch-mismatch", "extension-ops-missing"} & set(_confident(text))
