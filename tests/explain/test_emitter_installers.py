"""Messages read from the emitters' wheels and trees in session 36 (tools/explain_catalogue/
sources.yaml): pip's and conda's refusals when no build fits this platform or Python, torch
1.0-1.6's own words (torch.utils.ffi gone, NVTX in a CPU build, torch.load of GPU tensors where
torch sees no GPU), PyTorch Lightning's device choice and torchvision's image extension. Texts
written from the emitters' sources (each test names where), none from a held-out round; and the
look-alikes that must not read as them."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, top_with_confidence


@pytest.mark.parametrize("text", [
    # pip/_internal/req/constructors.py (19.3 - 23.x) and models/wheel.py's tag check (25.0)
    "ERROR: torch-1.13.1+cu117-cp38-cp38-linux_x86_64.whl is not a supported wheel on this platform.",
    "ERROR: flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl is not a supported wheel on "
    "this platform.",
    # pip/_internal/utils/packaging.py check_requires_python, raised by the resolver (21.3)
    "ERROR: Package 'mmcv' requires a different Python: 3.6.9 not in '>=3.7'",
    # pip/_internal/resolution/resolvelib/factory.py (23.3): every release excluded by Requires-Python
    "ERROR: Ignored the following versions that require a different python version: 2.1.0 Requires-Python >=3.8; "
    "2.1.1 Requires-Python >=3.8",
])
def test_pip_refusing_a_wheel_for_this_platform_or_python_is_no_wheel_for_it(text):
    assert top_with_confidence(text) == ("no-wheel-for-platform", "likely")


def test_pips_requires_python_note_before_its_could_not_find_keeps_the_cause():
    # the same, followed by the resolver's "Could not find a version" (signatures.yaml's wording,
    # a lead by itself for a plain torch requirement): the cause is the same, first
    text = ("ERROR: Ignored the following versions that require a different python version: 2.1.0 Requires-Python "
            ">=3.8\nERROR: Could not find a version that satisfies the requirement torch==2.1.0 (from versions: none)")
    assert top_with_confidence(text)[0] == "no-wheel-for-platform"


def test_conda_finding_no_build_in_its_channels_names_the_spec():
    # conda/exceptions.py PackagesNotFoundError (4.6 - 24.11), pasted without its tail
    text = ("PackagesNotFoundError: The following packages are not available from current channels:\n\n"
            "  - pytorch==1.2.0=py3.7_cuda10.0.130_cudnn7.6.2_0\n\nCurrent channels:\n\n"
            "  - https://conda.anaconda.org/pytorch/linux-64\n")
    assert top_with_confidence(text) == ("no-wheel-for-platform", "likely")
    assert explain(text)[0].title == "No wheel of pytorch for this Python, platform or package index"


def test_an_unsatisfiable_conda_environment_is_only_a_lead():
    text = ("UnsatisfiableError: The following specifications were found to be incompatible with each other:\n\n"
            "Package python conflicts for:\n  pytorch==1.4.0 -> python[version='>=3.6,<3.7.0a0|>=3.7,<3.8.0a0']")
    assert top_with_confidence(text) == ("no-wheel-for-platform", "possible")


@pytest.mark.parametrize("text", [
    # pip's resolver conflicts name no cause by themselves (the requirements may be their own fault)
    "ERROR: Cannot install torch==2.0.1 and torchvision==0.16.0 because these package versions have conflicting "
    "dependencies.\n\nThe conflict is caused by:\n    The user requested torch==2.0.1\n    torchvision 0.16.0 "
    "depends on torch==2.1.0",
    # pip failing to build a wheel says nothing of why
    "ERROR: Could not build wheels for flash-attn, which is required to install pyproject.toml-based projects",
])
def test_pip_conflicts_and_failed_builds_are_not_read_as_a_platform_gap(text):
    assert "no-wheel-for-platform" not in answers(text)
    assert not any(c in ("exact", "likely") for c in answers(text).values())


def test_torch_utils_ffi_gone_in_1_0_is_an_extension_written_for_torch_0_4():
    # torch/utils/ffi/__init__.py (1.0.1 - 1.2.0)
    text = ("  File \"build.py\", line 3, in <module>\n    from torch.utils.ffi import create_extension\n"
            "ImportError: torch.utils.ffi is deprecated. Please use cpp extensions instead.")
    assert top_with_confidence(text) == ("extension-torch-incompatible", "likely")


def test_nvtx_in_a_cpu_build_is_the_cpu_build():
    # torch/cuda/nvtx.py (1.0.1 - 2.x): the stub when torch._C has no _nvtx
    text = 'RuntimeError: NVTX functions not installed. Are you sure you have a CUDA build?'
    assert top_with_confidence(text) == ("torch-not-cuda", "likely")


@pytest.mark.parametrize("text", [
    # pytorch_lightning/trainer/connectors/accelerator_connector.py (2.1.4, 2.6.6)
    "lightning_fabric.utilities.exceptions.MisconfigurationException: No supported gpu backend found!",
    # its device parser (1.2.10 - 2.6.6)
    "pytorch_lightning.utilities.exceptions.MisconfigurationException: GPUs requested but none are available.",
    # 1.9.5's accelerator check
    "MisconfigurationException: `CUDAAccelerator` can not run on your system since the accelerator is not "
    "available. The following accelerator(s) is available and can be passed into `accelerator` argument of "
    "`Trainer`: ['cpu'].",
])
def test_lightning_counting_no_gpu_is_a_cpu_torch_or_no_driver(text):
    assert top_with_confidence(text) == ("torch-not-cuda", "likely")
    assert set(answers(text)) <= {"torch-not-cuda", "no-driver-found"}


def test_torchvision_image_extension_not_loading_is_a_torchvision_for_another_torch():
    # torchvision/io/image.py (0.8.2 - 0.20.1)
    text = ("UserWarning: Failed to load image Python extension: libc10_cuda.so: cannot open shared object file: No "
            "such file or directory\n  warn(f\"Failed to load image Python extension: {e}\")")
    assert top_with_confidence(text)[0] == "torchvision-undefined-symbol"


def test_a_gpu_checkpoint_on_fewer_gpus_is_only_a_lead():
    # torch/serialization.py validate_cuda_device (1.0.1 - 2.x): the index saved is past this node's
    text = ("RuntimeError: Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. "
            "Please use torch.load with map_location to map your storages to an existing device.")
    got = answers(text)
    assert got.get("no-driver-found") == "possible" and got.get("invalid-device-ordinal") == "possible"
    assert not any(c in ("exact", "likely") for c in got.values())


@pytest.mark.parametrize("text", [
    # transformers/modeling_utils.py (4.40.2)
    "ValueError: Flash Attention 2 is not available on CPU. Please make sure torch can access a CUDA device.",
    # transformers 4.30.2 - 4.46.3 modeling_utils.py / quantizers: quantization asked with no GPU
    "RuntimeError: No GPU found. A GPU is needed for quantization.",
    # accelerate/accelerator.py (0.20.3 - 1.15.0)
    "ValueError: fp16 mixed precision requires a GPU (not 'mps').",
    # transformers/integrations/bitsandbytes.py (4.46.3)
    "RuntimeError: CUDA is required but not available for bitsandbytes. Please consider installing the "
    "multi-platform enabled version of bitsandbytes, which is currently a work in progress. Please check currently "
    "supported platforms and installation instructions at "
    "https://huggingface.co/docs/bitsandbytes/main/en/installation#multi-backend",
])
def test_hugging_face_finding_no_gpu_is_a_cpu_torch_or_no_driver(text):
    assert top_with_confidence(text) == ("torch-not-cuda", "likely")
    assert answers(text).get("no-driver-found") == "possible"


def test_accelerates_rtx_4000_warning_is_no_p2p_between_those_gpus():
    # accelerate/state.py (0.34.2)
    text = ("NotImplementedError: Using RTX 4000 series doesn't support faster communication broadband via P2P or IB. "
            "Please set `NCCL_P2P_DISABLE=\"1\"` and `NCCL_IB_DISABLE=\"1\" or use `accelerate launch` which will do "
            "this automatically.")
    assert top_with_confidence(text) == ("p2p-unsupported", "likely")


def test_a_gpu_below_flash_attentions_compute_capability_is_too_old():
    # transformers/modeling_utils.py (5.17.0)
    text = ("ValueError: FlashAttention3 requires compute capability >= 9.0, but found NVIDIA A100-SXM4-80GB with "
            "compute capability 8.x")
    assert top_with_confidence(text)[0] == "gpu-too-old"


def test_bitsandbytes_quantization_asking_for_accelerate_names_no_gpu_cause():
    # a package missing from the environment, not the GPU stack (transformers' quantizers)
    text = "ImportError: Using `bitsandbytes` 8-bit quantization requires Accelerate: `pip install 'accelerate>=0.26.0'`"
    assert not any(c in ("exact", "likely") for c in answers(text).values())


def test_inductor_finding_no_working_triton_is_only_a_lead():
    # torch/_inductor/scheduler.py (2.1.2) / exc.py (2.13.0)
    text = ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nRuntimeError: Cannot find a working "
            "triton installation. Either the package is not installed or it is too old. More information on "
            "installing Triton can be found at https://github.com/openai/triton")
    assert answers(text) == {"no-wheel-for-platform": "possible", "package-torch-mismatch": "possible"}


@pytest.mark.parametrize("text, pkg", [
    ("ERROR: torch-1.13.1+cu117-cp38-cp38-linux_x86_64.whl is not a supported wheel on this platform.", "torch"),
    ("ERROR: flash_attn-2.5.8+cu122torch2.3cxx11abiFALSE-cp310-cp310-linux_x86_64.whl is not a supported wheel on "
     "this platform.", "flash_attn"),
    # a build tag (PEP 427) between the version and the tags
    ("ERROR: mmcv_full-1.7.1-1-cp39-cp39-win_amd64.whl is not a supported wheel on this platform.", "mmcv_full"),
])
def test_pips_refused_wheel_names_its_package_from_the_file_name(text, pkg):
    got = explain(text)[0]
    assert (got.id, got.confidence) == ("no-wheel-for-platform", "likely")
    assert got.title == f"No wheel of {pkg} for this Python, platform or package index"
