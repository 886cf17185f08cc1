"""The thirty-third round (scoped, like rounds 31 and 32, to texts that name PyTorch), heldout33's
l-z part, texts 19-45 (microsoft/Tutel#163 to yerfor/GeneFace#266): what its misses and its
confident negative (scored once at 3d8d456, then read) showed that is general, mended from what the
emitter prints and what it means, with texts other than any held-out one and look-alikes that keep
their answers.

- torch 1.0-1.4's torch/cuda/__init__.py _check_capability() (read in the 1.0.1, 1.2.0 and 1.4.0
  wheels), at CUDA's first use: incorrect_binary_warn, "Found GPU%d %s which requires CUDA_VERSION
  >= %d for optimal performance and fast startup time, but your PyTorch was compiled with
  CUDA_VERSION %d. Please install the correct PyTorch binary using instructions from
  https://pytorch.org" (1.2 on: "... >= %d to work properly, but ..."), warned when torch's own CUDA
  is older than the GPU's generation needs (1.0: CUDA < 8000 on sm_6x, < 9000 on sm_7x; 1.2 on:
  <= 9000 on sm_75). The build carries no kernel of the GPU's arch: arch-not-compatible. The
  catalogue holds the whole message (causes.yaml already gave it arch-not-compatible), but a paste
  cut before "Please install the correct PyTorch binary" (NVlabs/Deep_Object_Pose#35) missed the
  template; a wording in signatures.yaml reads the message up to the compiled CUDA_VERSION, likely
  (PTX of an older arch may still JIT, the 1.0 wording's "optimal performance"), the GPU's name in
  the cause.
- Two names torch added, read in the wheels as round 32's readers read theirs:
  torch/cuda/amp/__init__.py's autocast (`from .autocast_mode import autocast`: in 1.6.0 and later;
  1.4.0 has no torch/cuda/amp; no 1.5 wheel was read) and torch/utils/_python_dispatch.py's class
  TorchDispatchMode (in 1.13.1's and later; 1.8.1 has no such module). Python's "module
  'torch.cuda.amp' has no attribute 'autocast'", "cannot import name 'TorchDispatchMode' from
  'torch.utils._python_dispatch'" (and the other form of each) say a torch older than the one the
  code was written for (ultralytics/yolov5#776, sovrasov/flops-counter.pytorch#137):
  package-torch-mismatch, likely, the cause naming the name and the releases. The release table
  (torch_names.json) could not answer them: each name is in every release read that has its module
  (the user's torch, between two releases read, was not), and the table keeps no such name, so it cannot
  tell it from a typo. Only these names in their own modules: torch.autocast, torch.amp, other names
  of either module and names no torch had stay as they were.
- Tutel's JIT (tutel/custom/custom_kernel.cpp, read in microsoft/Tutel's history): up to 0.1.x
  (41358d7, 2022-05) nvrtc_compile() gives NVRTC "--include-path=/usr/local/cuda/include", a fixed
  folder, and on failure warns "<NVRTC's log> Failed to use NVRTC for JIT compilation in this
  Pytorch version, try another approach using CUDA compiler.. (To always disable NVRTC, please:
  export USE_NVRTC=0)", then runs /usr/local/cuda/bin/nvcc if that file exists (else an empty
  kernel, and file_read's CHECK_EQ(true, fp != nullptr) fails); #164 (2cc72fa, 2022-06, "allow
  CUDA_HOME to specify CUDA SDK location") made both CUDA_HOME's, a missing nvcc then LOG(FATAL) "Failed to detect CUDA
  compiler file: %s, please set CUDA_HOME environment to configure CUDA SDK location correctly.".
  NVRTC's "catastrophic error: cannot open source file "cuda_runtime.h"" under Tutel's warning is no
  toolkit at the folder Tutel searched, not a -dev package missing beside a found toolkit:
  cuda-home-unset, likely, and dev-package-missing's NVRTC wording passes it over there (CuPy's,
  numba's and torch's own NVRTC keep dev-package-missing); Tutel's later FATAL: cuda-home-unset,
  likely.

The confident negative, kept: MgArcher/Text_select_captcha#20 (user-bug: the maintainer's newer
code solved it) gets package-torch-mismatch, likely, from pickle's "Can't get attribute 'SiLU' on
<module 'torch.nn.modules.activation'", round 32's wording: a checkpoint pickled whole with nn.SiLU
(torch 1.7) loaded by a torch without it. That is all the text shows and what it means; the
program's fix (code that no longer unpickles those modules) worked around an older torch, as the
torch._six negatives kept in round 32 did. Weakening it would lose the same words where the thread
upgraded torch (the collector notes it could be read as package-torch-mismatch).

Relabels: pytorch/TensorRT#588 [cuda-lib-missing], was: other: (TensorRT's libnvinfer_plugin.so.8
not found by the dynamic loader, the TensorRT libraries not on the loader's path): cuda-lib-missing's
own definition, a library the loader cannot find, whose wordings read TensorRT's libnvinfer* imported
by name ("TensorRT's libraries imported"), as the collector's note says it could be read.
sniklaus/3d-ken-burns#15 [torchvision-undefined-symbol, no-kernel-image], was:
torchvision-undefined-symbol: the text is the CUDA runtime's "no kernel image is available" from
torchvision's own nms kernel, a torchvision pip built from source (/tmp/pip-req-build-...), on an
RTX 2080 and a K40; no-kernel-image's cause names torchvision carrying no kernel for the GPU, and the
maintainer's reading (another thread's, "indicates") was never confirmed: both ids, as round 32
labels pytorch-scripts#18.

Left, and why: leftthomas/SRGAN#84 (package-torch-mismatch from "use the version the readme states")
is autograd's "one of the variables needed for gradient computation has been modified by an inplace
operation" (in the installed torch's libtorch_cpu.so), a check of the program's own graph that names
no release; newer torch enforcing it on code an older one let pass is not in its words, and the
maintainer later fixed the code: no answer. zhanghang1989/PyTorch-Encoding#134
(package-torch-mismatch from the label "update pytorch") shows cpp_extension's "Error building
extension 'enclib_cpu'" and ninja's "FAILED: nms_cpu.o" with the compiler's own lines cut off:
the include paths (torch/lib/include, as 1.0.1's cpp_extension.py gives them) say roughly which
torch, not that the package needs another, and nothing names the failure. The `other:` positives SKTBrain/KoBERT#31 (a transformers
release newer than KoBERT's code; it gets checkpoint-mismatch, the workload's, from torch's
"Missing key(s) in state_dict") and yisol/IDM-VTON#126 (a broken torch reinstalled: "No module
named 'torch._C'", which torch's own import raises for a torch whose compiled part is absent or run
from its source tree, no id naming it) get no environment answer, as they should. The part's other
texts were hits or negatives answered without confidence (sparseml#1781's torch.concatenate and
onediff#977's "PyTorch should be >= 1.12", under oneflow's mock, possible or none)."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, top_with_confidence, whole_cause

# --- torch 1.x's _check_capability: a GPU newer than the CUDA torch was built with ----------------


@pytest.mark.parametrize("text, gpu", [
    # 1.2-1.4's wording, whole, as the warnings module prints it
    ("/opt/conda/lib/python3.7/site-packages/torch/cuda/__init__.py:125: UserWarning: \n"
     "    Found GPU0 GeForce RTX 2080 Ti which requires CUDA_VERSION >= 10000 to\n"
     "     work properly, but your PyTorch was compiled\n"
     "     with CUDA_VERSION 9000. Please install the correct PyTorch binary\n"
     "     using instructions from https://pytorch.org\n    \n"
     "  warnings.warn(incorrect_binary_warn % (d, name, 10000, CUDA_VERSION))", "GeForce RTX 2080 Ti"),
    # 1.0's wording, cut before its advice
    ("UserWarning:\n    Found GPU1 Tesla V100-SXM2-16GB which requires CUDA_VERSION >= 9000 for\n"
     "     optimal performance and fast startup time, but your PyTorch was compiled\n"
     "     with CUDA_VERSION 8000.", "Tesla V100-SXM2-16GB"),
])
def test_torch_built_for_a_cuda_older_than_the_gpu_is_arch_not_compatible(text, gpu):
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("arch-not-compatible", "likely")
    assert f"no kernels for {gpu}" in got["cause"]


def test_the_same_functions_old_gpu_warning_keeps_gpu_too_old():
    text = ("UserWarning:\n    Found GPU0 GeForce GTX 770 which is of cuda capability 3.0.\n"
            "    PyTorch no longer supports this GPU because it is too old.\n"
            "    The minimum cuda capability that we support is 3.5.")
    assert top_with_confidence(text) == ("gpu-too-old", "exact")
    assert "arch-not-compatible" not in answers(text)


# --- two names a later torch added ----------------------------------------------------------------


@pytest.mark.parametrize("text, name", [
    ('  File "/home/u/yolo/train.py", line 16, in <module>\n'
     "    from torch.cuda.amp import autocast, GradScaler\n"
     "ImportError: cannot import name 'autocast' from 'torch.cuda.amp' "
     "(/home/u/.local/lib/python3.7/site-packages/torch/cuda/amp/__init__.py)",
     "torch.cuda.amp.autocast (not in torch 1.4.0, in 1.6.0 and later)"),
    ('  File "/work/seg/engine.py", line 77, in train_one_epoch\n'
     "    with torch.cuda.amp.autocast(enabled=args.amp):\n"
     "AttributeError: module 'torch.cuda.amp' has no attribute 'autocast'",
     "torch.cuda.amp.autocast (not in torch 1.4.0, in 1.6.0 and later)"),
    ("AttributeError: module 'torch.utils._python_dispatch' has no attribute 'TorchDispatchMode'",
     "torch.utils._python_dispatch.TorchDispatchMode (not in torch 1.8.1, in 1.13.1 and later)"),
    ('  File "/opt/conda/lib/python3.9/site-packages/fvcore_ext/counter.py", line 5, in <module>\n'
     "    from torch.utils._python_dispatch import TorchDispatchMode\n"
     "ImportError: cannot import name 'TorchDispatchMode' from 'torch.utils._python_dispatch' "
     "(/opt/conda/lib/python3.9/site-packages/torch/utils/_python_dispatch.py)",
     "torch.utils._python_dispatch.TorchDispatchMode (not in torch 1.8.1, in 1.13.1 and later)"),
])
def test_a_name_a_later_torch_added_is_a_package_for_another_torch(text, name):
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("package-torch-mismatch", "likely")
    assert f"Python API of another release: {name} is gone" in got["cause"]


@pytest.mark.parametrize("text", [
    # names no torch had (typos), and another name of the same modules
    "AttributeError: module 'torch.cuda.amp' has no attribute 'autocasts'",
    "ImportError: cannot import name 'TorchDispatchModes' from 'torch.utils._python_dispatch'",
    "AttributeError: module 'torch.cuda.amp' has no attribute 'GradScaler'",
    # the name in another module
    "ImportError: cannot import name 'TorchDispatchMode' from 'torch.overrides'",
])
def test_other_names_and_modules_are_not_read(text):
    assert answers(text) == {}


def test_torch_autocast_keeps_the_release_tables_lead():
    # torch.autocast (1.10) is the release table's, a lead only
    text = "ImportError: cannot import name 'autocast' from 'torch' (/usr/lib/python3/dist-packages/torch/__init__.py)"
    assert answers(text) == {"package-torch-mismatch": "possible"}


# --- Tutel's NVRTC pointed at one toolkit folder ----------------------------------------------------

@pytest.mark.parametrize("text", [
    '[W custom_kernel.cpp:140] default_program(1): catastrophic error: cannot open source file "cuda_fp16.h"\n\n'
    '1 catastrophic error detected in the compilation of "default_program".\nCompilation terminated.\n'
    " Failed to use NVRTC for JIT compilation in this Pytorch version, try another approach using CUDA "
    "compiler.. (To always disable NVRTC, please: export USE_NVRTC=0)",
    "[F custom_kernel.cpp:116] Failed to detect CUDA compiler file: /usr/local/cuda/bin/nvcc, please set "
    "CUDA_HOME environment to configure CUDA SDK location correctly.",
])
def test_tutel_finding_no_toolkit_where_it_looks_is_cuda_home(text):
    assert answers(text) == {"cuda-home-unset": "likely"}


def test_another_programs_nvrtc_missing_a_cuda_header_keeps_dev_package_missing():
    text = ('cupy.cuda.compiler.CompileException: /tmp/tmpabc/kern.cu(1): catastrophic error: cannot open '
            'source file "cuda_fp16.h"\n\n1 catastrophic error detected in the compilation of '
            '"/tmp/tmpabc/kern.cu".\nCompilation terminated.')
    assert answers(text) == {"dev-package-missing": "likely"}


def test_tutels_warning_over_another_nvrtc_failure_is_not_cuda_home():
    text = ("[W custom_kernel.cpp:140] nvrtc: error: invalid value for --gpu-architecture (-arch)\n"
            " Failed to use NVRTC for JIT compilation in this Pytorch version, try another approach using "
            "CUDA compiler.. (To always disable NVRTC, please: export USE_NVRTC=0)")
    assert "cuda-home-unset" not in answers(text)


# --- what the relabels and the kept negative rest on ------------------------------------------------

def test_tensorrts_library_imported_and_not_found_is_cuda_lib_missing():
    text = ("    import tensorrt as trt\nImportError: libnvinfer.so.7: cannot open shared object file: "
            "No such file or directory")
    assert top_with_confidence(text) == ("cuda-lib-missing", "likely")


def test_a_pip_built_torchvision_kernel_missing_for_the_gpu_is_no_kernel_image():
    text = ("RuntimeError: CUDA error: no kernel image is available for execution on the device "
            "(roi_align_forward_cuda at /tmp/pip-req-build-x1y2z3/torchvision/csrc/cuda/ROIAlign_cuda.cu:266)")
    assert top_with_confidence(text) == ("no-kernel-image", "exact")
