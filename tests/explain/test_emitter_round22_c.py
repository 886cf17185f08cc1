"""The twenty-second round, heldout22's first part's two top-ups: what their misses (scored once,
then read) showed that is general, mended from what the emitter prints and what it means, with
texts other than any held-out one and look-alikes that must stay where they were.

- cudnn.torch, Torch7's cuDNN bindings (ffi.lua: "'libcudnn (R5) not found in library path.", R4 to
  R7 by branch): the cuDNN major the binding loads is not on the loader's path (cudnn-lib-missing,
  exact, the major read from the R number).
- CUDArt.jl (src/libcudart*.jl: "CUDA runtime API library cannot be found" when find_library finds
  no libcudart): cudart-lib-missing, exact, with no version named (X.Y, not an empty one).
- Kubernetes' scheduler (FitError "0/N nodes are available: ...", NodeResourcesFit's "Insufficient
  nvidia.com/gpu") and the kubelet's device manager ("requested number of devices unavailable for
  nvidia.com/gpu"): no node has the requested GPUs unallocated (gpu-busy-or-unavailable, likely; its
  cause and fix now say the Kubernetes case); other resources insufficient name no GPU cause.
- DeePMD-kit's summaries: "build variant: cpu" is its CPU build (torch-not-cuda for DeePMD-kit,
  likely); a CPU computing device with no GPU counted is only a lead (possible).
- InvokeAI 2.x's ">> Using device_type cpu" (torch sees no CUDA device): a CPU-only torch, possible."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, confident, whole_cause_and_values as _whole


# --- cudnn.torch: libcudnn (RN) not found in library path -----------------------------------------

@pytest.mark.parametrize("text, major", [
    ("/home/u/torch/install/bin/luajit: /home/u/torch/install/share/lua/5.1/cudnn/ffi.lua:1600: "
     "'libcudnn (R4) not found in library path.\nPlease install CuDNN from https://developer.nvidia.com/cuDNN\n"
     "Then make sure files named as libcudnn.so.4 or libcudnn.4.dylib are placed in your library load path", "4"),
    ("luajit: /opt/torch/install/share/lua/5.1/trepl/init.lua:389: /opt/torch/install/share/lua/5.1/cudnn/ffi.lua:"
     "1618: 'libcudnn (R7) not found in library path.", "7"),
])
def test_cudnn_torch_not_finding_its_cudnn_is_cudnn_lib_missing(text, major):
    assert _whole(text) == {
        "id": "cudnn-lib-missing", "confidence": "exact",
        "title": f"cuDNN {major} library not found by the dynamic loader",
        "cause": f"The program was built against cuDNN {major} (it asks for libcudnn.so.{major}) but no directory on "
                 f"LD_LIBRARY_PATH or in the ld.so cache holds it: cuDNN {major} is not installed, is installed for "
                 "another toolkit, or LD_LIBRARY_PATH is not set in the (non-interactive) shell that started the job.",
        "fix": f"Install cuDNN {major} for this CUDA (`envcheck install-cudnn ARCHIVE --cuda X.Y`) and make it visible "
               "(`envcheck env --cuda-home /usr/local/cuda-X.Y`, which also covers non-interactive SSH shells).",
        "values": {"major": major},
    }


def test_another_library_not_found_in_library_path_names_nothing():
    # the same phrase for another library (a Qt device handler's syslog line): no cuDNN
    assert answers('Proprietary lib "libbsapi.so" not found in library path.') == {}


# --- CUDArt.jl: no CUDA runtime library found -------------------------------------------------------

def test_cudart_jl_finding_no_runtime_is_cudart_lib_missing_with_no_version():
    text = ("ERROR: LoadError: LoadError: CUDA runtime API library cannot be found\n in include at ./boot.jl:245\n"
            "while loading /home/u/.julia/v0.4/CUDArt/src/libcudart-6.5.jl, in expression starting on line 17")
    assert _whole(text) == {
        "id": "cudart-lib-missing", "confidence": "exact",
        "title": "CUDA X.Y runtime library not found",
        "cause": "The program was linked against the CUDA X.Y runtime (libcudart.so.X.Y) and the loader cannot find "
                 "it: CUDA X.Y is not installed, or its lib64 is not on LD_LIBRARY_PATH / in ld.so.conf.d for the "
                 "shell that started the job (exports after .bashrc's interactive guard never reach "
                 "ssh/mpirun/torchrun), or the package was built for another CUDA than the one installed.",
        "fix": "Install the CUDA X.Y toolkit (`envcheck install-cuda X.Y`) or the build of the program made for the "
               "CUDA you have, then `envcheck env --cuda-home /usr/local/cuda-X.Y`.",
        "values": {},
    }


def test_a_named_cudart_keeps_its_version():
    got = _whole("OSError: libcudart.so.10.2: cannot open shared object file: No such file or directory")
    assert (got["id"], got["title"], got["values"]) == (
        "cudart-lib-missing", "CUDA 10.2 runtime library not found", {"ver": "10.2"})


def test_cudadrv_jl_not_finding_the_driver_library_is_not_the_runtime():
    # CUDAdrv.jl's build step looks for the driver's libcuda, not the toolkit's runtime
    assert "cudart-lib-missing" not in answers(
        "ERROR: LoadError: Could not find CUDA library -- is the CUDA driver installed?")


# --- Kubernetes' scheduler: Insufficient nvidia.com/gpu ---------------------------------------------

_K8S_GPUS = {
    "id": "gpu-busy-or-unavailable", "confidence": "likely",
    "title": "The GPU is busy or not available to this process",
    "cause": "The GPU's compute mode is EXCLUSIVE_PROCESS (or PROHIBITED) and another process holds it, a hung "
             "process still owns it, an MPS server refuses the client, or a MIG GPU has no instance for this "
             "process. On Kubernetes the scheduler's \"Insufficient nvidia.com/gpu\": no node has the GPUs the pod "
             "requests unallocated (other pods, finished or stuck ones too, hold them), or the nodes do not "
             "advertise the resource (the device plugin is not running there).",
    "fix": "`nvidia-smi` (processes on that GPU, compute mode): kill the stray process, or `nvidia-smi -c DEFAULT`; "
           "on MIG GPUs create an instance and pass its UUID in CUDA_VISIBLE_DEVICES. On Kubernetes `kubectl "
           "describe nodes` (nvidia.com/gpu under Allocatable and Allocated resources): delete the pods holding the "
           "GPUs, or deploy the NVIDIA device plugin (or the GPU Operator) where none is advertised.",
    "values": {},
}


@pytest.mark.parametrize("text", [
    "Warning  FailedScheduling  12s (x3 over 2m)  default-scheduler  0/4 nodes are available: 1 node(s) had "
    "untolerated taint {node-role.kubernetes.io/control-plane: }, 3 Insufficient nvidia.com/gpu. preemption: 0/4 "
    "nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.",
    "Events:\n  Type     Reason            Age   From               Message\n  Warning  FailedScheduling  "
    "default-scheduler  0/2 nodes are available: 2 Insufficient amd.com/gpu.",
    # the kubelet's admission on the node the scheduler chose
    "Status:  Failed\nReason:  UnexpectedAdmissionError\nMessage: Pod Allocate failed due to requested number of "
    "devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected",
])
def test_the_scheduler_finding_no_free_gpus_is_gpu_busy_or_unavailable(text):
    assert _whole(text) == _K8S_GPUS


@pytest.mark.parametrize("text", [
    "0/3 nodes are available: 3 Insufficient memory.",
    "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector.",
    "Pod Allocate failed due to requested number of devices unavailable for example.com/fpga. Requested: 2, "
    "Available: 1, which is unexpected",
])
def test_other_resources_insufficient_name_no_gpu_cause(text):
    assert "gpu-busy-or-unavailable" not in answers(text)
    assert confident(text) == []


def test_the_cuda_busy_error_keeps_its_answer():
    assert answers("RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable") == {
        "gpu-busy-or-unavailable": "likely"}


# --- DeePMD-kit's summaries ---------------------------------------------------------------------------

_DEEPMD_FIX = ("Install DeePMD-kit's CUDA build (`pip install deepmd-kit[gpu,cu12]`, or conda-forge's deepmd-kit "
               "with a cuda build string), whose summary reads `build variant: cuda`; if it already does, see why "
               "its TensorFlow lists no GPU (`python -c \"import tensorflow as tf; "
               "print(tf.config.list_physical_devices('GPU'))\"`).")


@pytest.mark.parametrize("text", [
    "DEEPMD INFO    Installed to:         /opt/conda/lib/python3.10/site-packages/deepmd\n"
    "DEEPMD INFO    Source:               v2.2.7\nDEEPMD INFO    build variant:        cpu\n"
    "DEEPMD INFO    build with tf inc:    /opt/conda/lib/python3.10/site-packages/tensorflow/include",
    # 3.x capitalises the keys and the variant
    "[2025-01-10 09:12:03,511] DEEPMD INFO    Float Precision:       Double\n"
    "[2025-01-10 09:12:03,511] DEEPMD INFO    Build Variant:         CPU",
])
def test_deepmd_cpu_build_variant_is_its_cpu_build(text):
    assert _whole(text) == {
        "id": "torch-not-cuda", "confidence": "likely",
        "title": "A CPU-only DeePMD-kit is installed",
        "cause": "The installed DeePMD-kit is a CPU build (+cpu, or a platform with no CUDA wheel).",
        "fix": _DEEPMD_FIX, "values": {"deepmd": ""},
    }


def test_deepmd_computing_on_the_cpu_with_no_gpu_counted_is_a_lead():
    text = ("[0] DEEPMD INFO    running on:           node07\n[0] DEEPMD INFO    computing device:     cpu:0\n"
            "[0] DEEPMD INFO    CUDA_VISIBLE_DEVICES: 0,1\n[0] DEEPMD INFO    Count of visible GPUs: 0")
    assert answers(text) == {"torch-not-cuda": "possible"}
    assert _whole(text)["title"] == "A CPU-only DeePMD-kit is installed"


@pytest.mark.parametrize("text", [
    "DEEPMD INFO    computing device:     gpu:0\nDEEPMD INFO    CUDA_VISIBLE_DEVICES: 0,1,2,3\n"
    "DEEPMD INFO    Count of visible GPU: 4",
    "DEEPMD INFO    build variant:        cuda",
    # another program's build summary saying cpu: not DeePMD's words
    "-- Build variant: cpu\n-- Configuring done",
])
def test_deepmd_on_a_gpu_or_other_summaries_name_nothing(text):
    assert answers(text) == {}


# --- InvokeAI 2.x: device_type cpu --------------------------------------------------------------------

def test_invokeai_choosing_the_cpu_is_a_lead_to_a_cpu_torch():
    text = "* Initializing, be patient...\n>> Using device_type cpu\n>> Loading stable-diffusion-1.5"
    assert answers(text) == {"torch-not-cuda": "possible"}
    assert _whole(text)["title"] == "A CPU-only torch is installed"


@pytest.mark.parametrize("text", [">> Using device_type cuda", ">> Using device_type mps"])
def test_invokeai_on_a_gpu_names_nothing(text):
    assert answers(text) == {}
