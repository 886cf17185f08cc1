"""The sixteenth round, heldout17's half: what its misses (scored once, then read) showed that is
general, mended from what the emitter prints and what it means, with texts other than any held-out
one and look-alikes that must stay where they were.

- distutils' spawn of CUDA_HOME/bin/nvcc when CUDA_HOME names no toolkit: Python's old
  _spawn_posix child writes "unable to execute %r: %s" (then "command %r failed with exit status
  1"), setuptools' _distutils raises DistutilsExecError("command %r failed: %s"): cuda-home-unset.
- TensorRT's builder refusing an FP8 network on a GPU without FP8 ("Networks with FP8 Q/DQ layers
  require hardware with FP8 support."; FP8 from Ada/Hopper, sm_89): gpu-too-old.
- The CUDA driver API's string for CUDA_ERROR_PEER_ACCESS_UNSUPPORTED ("peer access is not
  supported across the given devices"; the runtime's was already there): p2p-unsupported.
- Ultralytics' select_device, which logs its banner with torch's version before refusing a CUDA
  device (torch_utils.py: "Ultralytics YOLOv%s ... torch-%s", then "Invalid CUDA 'device=%s'
  requested."): with a +cpu torch the cause is the CPU build (torch-not-cuda)."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, whole


_whole = whole


# --- distutils spawning a CUDA_HOME/bin/nvcc that is not there ------------------------------------

@pytest.mark.parametrize("text", [
    "building 'roi_align_cuda' extension\n/opt/cuda-10.2/bin/nvcc -I/usr/include/python3.6m -c roi_align_kernel.cu\n"
    "unable to execute '/opt/cuda-10.2/bin/nvcc': No such file or directory\n"
    "error: command '/opt/cuda-10.2/bin/nvcc' failed with exit status 1",
    "    raise DistutilsExecError(\ndistutils.errors.DistutilsExecError: command '/usr/local/cuda-12.1/bin/nvcc' "
    "failed: No such file or directory\nerror: command '/usr/local/cuda-12.1/bin/nvcc' failed: No such file or "
    "directory",
])
def test_a_spawned_cuda_home_nvcc_that_is_not_there_is_no_toolkit(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "cuda-home-unset", "likely", "No CUDA toolkit found for compiling GPU code")


@pytest.mark.parametrize("text, want", [
    # nvcc there, failing on the code: the compile's own error, not a missing toolkit
    ("error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1", {"extension-torch-incompatible": "possible"}),
    # another program not there: the host compiler
    ("unable to execute 'x86_64-linux-gnu-gcc': No such file or directory", {"host-compiler-missing": "exact"}),
])
def test_the_spawn_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- TensorRT refusing FP8 on a GPU without it ----------------------------------------------------

@pytest.mark.parametrize("text", [
    "[TRT] [E] 9: [standardEngineBuilder.cpp::buildEngine::2265] Error Code 9: API Usage Error (Networks with FP8 "
    "Q/DQ layers require hardware with FP8 support.)\n[TRT] [E] 2: [builder.cpp::buildSerializedNetwork::751] "
    "Error Code 2: Internal Error (Assertion engine != nullptr failed. )",
    "IBuilder::buildSerializedNetwork: Error Code 9: API Usage Error (Networks with FP8 Q/DQ layers require "
    "hardware with FP8 support.)\nRuntimeError: Failed to build the engine for rank 0",
])
def test_tensorrt_refusing_fp8_is_a_gpu_without_it(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "gpu-too-old", "likely",
        "GPU too old for this torch build or the feature asked for (compute capability (not in the text))", {})


@pytest.mark.parametrize("text, want", [
    # FP8 on a GPU that has it, failing elsewhere: not the GPU's age
    ("[TRT] [W] FP8 Q/DQ layers found; building with FP8 support on sm_90", {}),
    ("Error Code 4: Internal Error (Network has dynamic or shape inputs, but no optimization profile has been "
     "defined.)", {}),
])
def test_the_tensorrt_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- the driver API's peer-access string ------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "cuCtxEnablePeerAccess failed: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: peer access is not supported across the "
    "given devices",
    "pycuda._driver.LogicError: cuCtxEnablePeerAccess failed: peer access is not supported across the given devices",
])
def test_the_driver_apis_peer_access_unsupported_is_p2p(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "p2p-unsupported", "exact", "GPU peer-to-peer access does not work between these GPUs")


def test_the_runtimes_peer_access_string_keeps_its_answer():
    text = "RuntimeError: CUDA error: peer access is not supported between these two devices"
    assert answers(text) == {"p2p-unsupported": "exact"}


# --- Ultralytics refusing a CUDA device with a CPU torch ------------------------------------------

def _ultra(version, torch_version, device, visible):
    return (f"Ultralytics YOLOv{version} \U0001F680 Python-3.11.4 torch-{torch_version} \n"
            "Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
            f"    model.train(data='coco8.yaml', device={device!r})\n"
            f"ValueError: Invalid CUDA 'device={device}' requested. Use 'device=cpu' or pass valid CUDA device(s) "
            "if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n\ntorch.cuda.is_available(): False\n"
            f"torch.cuda.device_count(): 0\nos.environ['CUDA_VISIBLE_DEVICES']: {visible}\n"
            "See https://pytorch.org/get-started/locally/ for up-to-date torch install instructions if no CUDA "
            "devices are seen by torch.")


@pytest.mark.parametrize("version, torch_version, device, visible", [
    ("8.0.196", "2.0.1+cpu", "0", "None"), ("11.2.5", "2.4.1+cpu", "0,1", "0,1")])
def test_ultralytics_refusing_cuda_with_a_cpu_torch_is_the_cpu_build(version, torch_version, device, visible):
    got = _whole(_ultra(version, torch_version, device, visible))
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "torch-not-cuda", "likely", "A CPU-only torch is installed", {"torch_version": torch_version})


@pytest.mark.parametrize("torch_version", ["2.1.0+cu121", "2.1.0"])
def test_ultralytics_refusing_cuda_with_a_cuda_torch_is_not_the_cpu_build(torch_version):
    assert "torch-not-cuda" not in answers(_ultra("8.1.3", torch_version, "0", "0"))


# --- the MPI launcher's daemon not found by a remote node's shell ---------------------------------

MPI_FIX_START = "Install the MPI at the same path on every node and either run mpirun by its absolute path"


@pytest.mark.parametrize("text, daemon", [
    ("bash: line 1: orted: command not found\n------------------------------------------------------------------"
     "--------\nORTE was unable to reliably start one or more daemons.\nThis usually is caused by:", "orted"),
    ("bash: /opt/intel/oneapi/mpi/2021.9.0/bin/hydra_pmi_proxy: No such file or directory\n"
     "[mpiexec@login01] HYD_sock_write (../../../../../src/pm/i_hydra/libhydra/sock/hydra_sock_intel.c:353): "
     "write error (Bad file descriptor)", "hydra_pmi_proxy"),
    ("orted: Command not found.\nORTE was unable to reliably start one or more daemons.", "orted"),
])
def test_the_mpi_daemon_not_found_by_the_remote_shell(text, daemon):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "mpi-daemon-not-on-remote-path", "likely",
        f"The MPI launcher's daemon ({daemon}) is not found on a remote node", {"daemon": daemon})
    assert got["fix"].startswith(MPI_FIX_START) and got["fix"].endswith(f"`ssh NODE which {daemon}`.")


@pytest.mark.parametrize("text, want", [
    # ORTE's help text alone has other causes (ssh refused, a firewall, /tmp): not named
    ("ORTE was unable to reliably start one or more daemons.\nThis usually is caused by:", {}),
    # mpirun itself missing on the local node
    ("bash: mpirun: command not found", {}),
])
def test_the_mpi_daemon_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- NVML's Unknown Error in a container just started with --gpus ---------------------------------

@pytest.mark.parametrize("text", [
    "$ docker run --rm --gpus all nvidia/cuda:12.4.1-base-ubuntu22.04 nvidia-smi\n"
    "Failed to initialize NVML: Unknown Error",
    "ci@runner-3:~$ sudo podman run -it --gpus=all docker.io/pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime bash\n"
    "root@4f1e2a9c:/workspace# nvidia-smi\nFailed to initialize NVML: Unknown Error",
])
def test_nvml_unknown_error_in_a_container_just_started_is_its_setup(text):
    assert answers(text) == {"container-toolkit-missing": "likely", "container-lost-gpus": "possible"}


@pytest.mark.parametrize("text", [
    # a running container (no docker run in the text): the cgroup rules rewritten under it
    "root@7d2c:/workspace# nvidia-smi\nFailed to initialize NVML: Unknown Error",
    # a container started earlier, without the GPU request in the text
    "$ docker exec -it trainer nvidia-smi\nFailed to initialize NVML: Unknown Error",
])
def test_nvml_unknown_error_elsewhere_stays_a_lost_gpu(text):
    assert answers(text) == {"container-lost-gpus": "likely"}


# --- CMake's find modules not finding NCCL's or nvJPEG's development files ---------------------------

NVJPEG_CAUSE_START = "The build includes nvJPEG's header or links its unversioned .so; both come in its development package (libnvjpeg-dev-X-Y"


@pytest.mark.parametrize("text, lib", [
    ("CMake Error at /usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n"
     "  Could NOT find NCCL (missing: NCCL_INCLUDE_DIR NCCL_LIBRARY)\nCall Stack (most recent call first):\n"
     "  cmake/Modules/FindNCCL.cmake:52 (find_package_handle_standard_args)", "NCCL"),
    ("CMake Error at /opt/cmake/share/cmake-3.16/Modules/FindPackageHandleStandardArgs.cmake:146 (message):\n"
     "  Could NOT find NVJPEG (missing: NVJPEG_INCLUDE_DIR NVJPEG_LIBRARY)", "nvJPEG"),
    # DALI's FindNVJPEG reads the version from nvjpeg.h: an empty one is the header not found
    ("CMake Error at /usr/local/share/cmake-3.14/Modules/FindPackageHandleStandardArgs.cmake:137 (message):\n"
     "  Could NOT find NVJPEG: Found unsuitable version \"\", but required is at least\n  \"10.0\" (found "
     "/opt/nvjpeg/lib64/libnvjpeg.so)", "nvJPEG"),
])
def test_cmake_not_finding_a_cuda_librarys_dev_files(text, lib):
    got = explain(text)
    e = next(e for e in got if e.kind == "environment")
    assert (e.id, e.confidence, e.title) == (
        "dev-package-missing", "likely",
        "A library's development files (headers, link library) are not installed for the build")
    assert f"includes {lib}'s header" in e.cause
    if lib == "nvJPEG":
        assert e.cause.startswith(NVJPEG_CAUSE_START)


@pytest.mark.parametrize("text, want", [
    # a version found and refused: an older NCCL installed, not its files missing (what the key
    # table guesses from "nccl" and ".so" changes as it learns: only ever possible)
    ("Could NOT find NCCL: Found unsuitable version \"2.4.8\", but required is at least \"2.7\" (found "
     "/usr/lib/x86_64-linux-gnu/libnccl.so)", None),
    # another package's find module
    ("Could NOT find PNG (missing: PNG_LIBRARY PNG_PNG_INCLUDE_DIR)", {}),
])
def test_the_cmake_look_alikes_keep_their_answers(text, want):
    got = answers(text)
    if want is None:
        assert "dev-package-missing" not in got and set(got.values()) <= {"possible"}, got
    else:
        assert got == want


# --- onnxruntime's available providers without a GPU one ------------------------------------------

ORT_TITLE = "A CPU-only onnxruntime (no GPU provider) is installed"


@pytest.mark.parametrize("text", [
    ">>> import onnxruntime as ort\n>>> ort.get_available_providers()\n['AzureExecutionProvider', "
    "'CPUExecutionProvider']\n>>> ort.get_device()\n'CPU'\n# but the model was exported for CUDA",
    "available providers: ['AzureExecutionProvider', 'CPUExecutionProvider']\nRuntimeError: CUDA inference "
    "requested (providers=['CUDAExecutionProvider']) but it is unavailable",
])
def test_ort_listing_no_gpu_provider_is_the_cpu_package(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == ("torch-not-cuda", "likely", ORT_TITLE)
    assert got["fix"].startswith("Uninstall `onnxruntime` and install `onnxruntime-gpu` alone")


@pytest.mark.parametrize("text, want", [
    # a GPU package's list: CUDA is there
    ("['TensorrtExecutionProvider', 'CUDAExecutionProvider', 'AzureExecutionProvider', 'CPUExecutionProvider'] "
     "with CUDA 12.4", {}),
    # a CPU-only list where nobody asked for CUDA
    ("ort.get_available_providers() -> ['AzureExecutionProvider', 'CPUExecutionProvider'] on the laptop", {}),
])
def test_the_provider_list_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want
