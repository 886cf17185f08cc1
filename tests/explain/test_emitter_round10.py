"""The tenth round: what the eighth and ninth held-out rounds (scored once, then read) showed
about the words behind a confident answer on a negative, a cause that had no id, and label/answer
disagreements — each mended from what the emitter prints and what it means, with values other
than any corpus text's, and look-alikes that must stay unnamed or only possible."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers as _answers, confident as _confident, top_with_confidence as _top


# --- 1. the words behind a confident answer on a negative ---------------------------------------

@pytest.mark.parametrize("text", [
    # pip's resolver: a GPU build the indexes read do not have while what they list holds none
    # (PyPI without download.pytorch.org; CuPy's per-CUDA package on a platform it has no wheel for)
    "ERROR: Could not find a version that satisfies the requirement torchvision==0.17.2+cu121 (from versions: "
    "0.16.0, 0.17.0, 0.17.2)\nERROR: No matching distribution found for torchvision==0.17.2+cu121",
    "ERROR: No matching distribution found for torch==2.2.1+rocm5.7",
    "ERROR: No matching distribution found for cupy-cuda117",
])
def test_a_gpu_build_missing_from_the_indexes_read_is_no_wheel_for_platform(text):
    assert _top(text) == ("no-wheel-for-platform", "likely")


@pytest.mark.parametrize("text", [
    # the indexes list other CUDA builds of the release: the asked name is one nobody built
    "ERROR: Could not find a version that satisfies the requirement torch==2.0.1+cu119 (from versions: 1.13.1+cu117, "
    "2.0.0+cu117, 2.0.1+cu117, 2.0.1+cu118)\nERROR: No matching distribution found for torch==2.0.1+cu119",
    # nothing at all for this Python, even from torch's own index: no release has a wheel for it yet
    "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/cu121\n"
    "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
    "ERROR: No matching distribution found for torch",
    "ERROR: No matching distribution found for tensorflow-gpu==2.20.0",
])
def test_pip_finding_no_wheel_that_does_not_show_a_gpu_miss_is_only_possible(text):
    assert _top(text) == ("no-wheel-for-platform", "possible")


@pytest.mark.parametrize("text", [
    "ImportError: libc10.so: cannot open shared object file: No such file or directory",
    "OSError: libtorch_python.so: cannot open shared object file: No such file or directory",
    "ImportError: libc10_cuda.so: cannot open shared object file",
])
def test_a_library_every_torch_ships_not_found_is_only_possibly_another_torch(text):
    # every release has it: it is missing because `import torch` had not loaded it yet
    assert _confident(text) == [] and _top(text) == ("undefined-symbol", "possible")


@pytest.mark.parametrize("text, lib", [
    ("ImportError: libtorch_cuda_cpp.so: cannot open shared object file: No such file or directory", "libtorch_cuda_cpp.so"),
    ("OSError: libtorch_cpu.so: cannot open shared object file: No such file or directory", "libtorch_cpu.so"),
])
def test_a_library_only_some_torch_releases_have_is_still_another_torch(text, lib):
    assert _top(text) == ("undefined-symbol", "likely")
    assert next(e for e in explain(text) if e.id == "undefined-symbol").values["torchlib"] == lib


@pytest.mark.parametrize("text", [
    "$ python detect.py --device cpu --source img/\nUserWarning: CUDA initialization: Found no NVIDIA driver on your "
    "system. Please check that you have an NVIDIA GPU and installed a driver",
    "python run.py --cpu\nRuntimeError: No CUDA GPUs are available",
    "model = Net().to(device='cpu')\nRuntimeError: Found no NVIDIA driver on your system.",
])
def test_no_driver_words_in_a_run_asked_for_the_cpu_are_only_possible(text):
    assert _confident(text) == [] and _top(text) == ("no-driver-found", "possible")


@pytest.mark.parametrize("text", [
    "$ python detect.py --device 0\nRuntimeError: Found no NVIDIA driver on your system. Please check that you have "
    "an NVIDIA GPU and installed a driver",
    # a CPU name elsewhere in the text (a log line, another flag) is not a request for the CPU
    "INFO cpu count: 16, cpu_device_id=0\nRuntimeError: No CUDA GPUs are available",
])
def test_no_driver_words_in_a_gpu_run_stay_confident(text):
    assert _top(text)[0] == "no-driver-found" and _top(text)[1] in ("exact", "likely")


# --- 2. a node's host name resolving to a loopback address, or to none --------------------------

@pytest.mark.parametrize("text, confidence", [
    # gloo's tcp pair told to connect to the /etc/hosts entry of a peer's host name
    ("terminate called after throwing an instance of 'gloo::IoException'\n  what():  [/pytorch/third_party/gloo/gloo/"
     "transport/tcp/pair.cc:799] connect [127.0.1.1]:48213: Connection refused", "exact"),
    ("[W socket.cpp:663] [c10d] The client socket has failed to connect to [127.0.1.1]:29400 (errno: 111 - "
     "Connection refused).", "exact"),
    # gloo's host-name lookup (rp != nullptr), and a name that resolves to an address not this machine's
    ("RuntimeError: [enforce fail at /opt/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:215] rp != nullptr. "
     "Unable to find address for: node-17.cluster.local", "exact"),
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:168] bind_rv == 0. Unable to "
     "find address for gpu-a3; bind(2) for 10.9.8.7 failed with: Cannot assign requested address", "likely"),
    # c10d's getaddrinfo for the store's host
    ("[W1102 10:00:00.000 socket.cpp:760] [c10d] The IPv4 network addresses of (trainer-xyz, 41000) cannot be "
     "retrieved (gai error: -2 - Name or service not known).", "likely"),
    ("[c10d] The client socket has failed to connect to [vm-3fa9.internal]:6000 (errno: 22 - Invalid argument).\n"
     "[c10d] The IPv6 network addresses of (vm-3fa9.internal, 6000) cannot be retrieved (gai error: -2 - Name or "
     "service not known).", "likely"),
    # the IPv6 lookup alone fails for any host without an AAAA record: a hint
    ("[W socket.cpp:601] [c10d] The IPv6 network addresses of (box7, 30211) cannot be retrieved (gai error: -3 - "
     "Temporary failure in name resolution).", "possible"),
])
def test_a_host_name_that_resolves_to_loopback_or_nothing_is_named(text, confidence):
    assert _top(text) == ("hostname-resolution", confidence)


@pytest.mark.parametrize("text, cause", [
    # gloo's interface lookup (ifa != nullptr) is the interface's, not the host name's
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. Unable "
     "to find address for: enp9s0", "nccl-no-socket-interface"),
    # a refused connect to a routable address is the rendezvous's
    ("[c10d] The client socket has failed to connect to [10.1.2.3]:29500 (errno: 111 - Connection refused).",
     "rendezvous-refused"),
])
def test_the_look_alikes_keep_their_own_cause(text, cause):
    assert _top(text)[0] == cause


@pytest.mark.parametrize("text", [
    # a loopback address outside a distributed run; 127.0.1.1 in an unrelated service's log
    "curl: (7) Failed to connect to 127.0.1.1 port 8080: Connection refused",
    "nginx: connect() to 127.0.1.1:9000 failed (111: Connection refused) while connecting to upstream",
    # a name lookup of something else
    "socket.gaierror: [Errno -2] Name or service not known (huggingface.co)",
])
def test_no_host_name_cause_outside_gloo_and_c10d(text):
    assert "hostname-resolution" not in _answers(text)


# --- 3. label/answer disagreements read from the ids' definitions -------------------------------

@pytest.mark.parametrize("text, gfx", [
    # rocBLAS' "Cannot read %s: %s for GPU arch : %s" with any strerror, and a Windows path with spaces
    ("rocBLAS error: Cannot read /opt/rocm-6.3.1/lib/rocblas/library/TensileLibrary.dat: Illegal seek for GPU arch "
     ": gfx1151", "gfx1151"),
    ("rocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\/rocblas/library/TensileLibrary.dat: No such "
     "file or directory for GPU arch : gfx1103", "gfx1103"),
])
def test_rocblas_without_a_library_for_the_gfx_is_no_kernel_image(text, gfx):
    assert _top(text) == ("no-kernel-image", "likely")
    assert next(e for e in explain(text) if e.id == "no-kernel-image").values["gfx"] == gfx


def test_rocblas_reading_another_file_is_not_a_missing_gfx():
    assert "no-kernel-image" not in _answers("rocBLAS error: Cannot read /home/me/config.yaml: Permission denied")


@pytest.mark.parametrize("text, sm", [
    # torch.utils.cpp_extension's arch list: the GPU (or the arch asked for) is newer than this torch
    ('  File "/env/lib/python3.8/site-packages/torch/utils/cpp_extension.py", line 1561, in _get_cuda_arch_flags\n'
     "    raise ValueError(f\"Unknown CUDA arch ({arch}) or GPU not supported\")\nValueError: Unknown CUDA arch (8.9) "
     "or GPU not supported", "8.9"),
    ("ValueError: Unknown CUDA arch (12.0+PTX) or GPU not supported", "12.0"),
])
def test_cpp_extension_not_knowing_the_gpus_arch_is_arch_not_compatible(text, sm):
    assert _top(text) == ("arch-not-compatible", "likely")
    assert next(e for e in explain(text) if e.id == "arch-not-compatible").values["sm"] == sm


def test_tensorflows_minimum_capability_sentence_alone_is_the_gpu_too_old():
    # the first sentence broken where the paste wrapped a line
    text = ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1700] Ignoring visible gpu device (device: 0, name: "
            "Quadro K2000, pci bus id: 0000:03:00.0) with Cuda c\nompute capability 3.0. The minimum required Cuda "
            "capability is 3.5.")
    assert _top(text) == ("gpu-too-old", "likely")


@pytest.mark.parametrize("text", [
    "the minimum required python version is 3.9",
    "ValueError: Unknown compute arch (sm_90) in config file",
])
def test_the_look_alikes_of_the_arch_messages_stay_unnamed(text):
    assert _confident(text) == []


def test_no_driver_found_names_a_job_given_no_gpu_in_its_cause_and_fix():
    found = next(e for e in explain("srun: job 4242 step 0\ncudaHostRegister: no CUDA-capable device is detected")
                 if e.id == "no-driver-found")
    assert "--gpus" in found.cause and "MIG" in found.cause and "ConstrainDevices" in found.fix


# --- 4. the commonest wordings that answered nothing, as families from their emitters -----------

@pytest.mark.parametrize("text, cause", [
    # cuDNN: ld without it, cuDNN 9's symbol lookup, a DLL named not found in a paraphrase
    ("g++ -o detector obj/conv.o -lcuda -lcudart -lcublas -lcudnn\n/usr/bin/ld: cannot find -lcudnn", "cudnn-lib-missing"),
    ("Could not load library libcudnn_graph.so.9. Invalid handle. Cannot load symbol cudnnCreate", "cudnn-lib-missing"),
    ("Cannot load symbol cudnnGetVersion", "cudnn-lib-missing"),
    ("Error: cudnn_cnn64_9.dll is not found", "cudnn-lib-missing"),
    ("cudnn adv64_9.dll was not found", "cudnn-lib-missing"),
    # TensorFlow's dso_loader on Linux with the dlerror cut; NVRTC's builtins; TensorRT imported
    ("2021-03-01 10:00:00.1: W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic "
     "library 'libcufft.so.10'; dlerror: libcufft.so.10", "cuda-lib-missing"),
    ("RuntimeError: Error compiling program: nvrtc: error: failed to load builtins for compute_86", "cuda-lib-missing"),
    ("  File \"/opt/app/trt.py\", line 3, in <module>\n    import tensorrt\nImportError: libnvinfer.so.10: cannot "
     "open shared object file: No such file or directory", "cuda-lib-missing"),
    # Windows' TDR as what noticed it names it
    ("[renderer] A TDR has been detected; the GPU was reset", "kernel-launch-timeout"),
    ("Display driver nvlddmkm stopped responding and has successfully recovered (TDR occurred)",
     "kernel-launch-timeout"),
    # torch's no-GPU error as people retype it
    ("RuntimeError: No CUDA GPU is available", "no-driver-found"),
    # the k8s device plugin without the driver mounted
    ("I0101 12:00:00 main.go:44] Loading NVML\nI0101 12:00:00 main.go:46] Failed to initialize NVML: could not load "
     "NVML library.", "container-toolkit-missing"),
    # ctypes on an extension module or DLL
    ("FileNotFoundError: Could not find module 'C:\\venv\\Lib\\site-packages\\torch_sparse\\_convert_cuda.pyd' (or one "
     "of its dependencies). Try using the full path with constructor syntax.", "windows-dll-load-failed"),
])
def test_the_families_that_answered_nothing_name_their_cause(text, cause):
    got = _top(text)
    assert got and got[0] == cause and got[1] in ("exact", "likely"), (got, _answers(text))


@pytest.mark.parametrize("text", [
    # TensorRT probed (optional) by TensorFlow; another library than cuDNN or CUDA's
    "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT\n"
    "Could not load dynamic library 'libnvinfer_plugin.so.8'; dlerror: libnvinfer_plugin.so.8",
    "/usr/bin/ld: cannot find -lcudnnwrapper_static_extra",
    "Cannot load symbol png_create_read_struct",
    # a program's own words that share a part
    "INFO: no cuda graphs available for this model, running eagerly",
    "tdr_config.yaml not found",
    "could not load NVML library config from /etc/app.toml",
])
def test_their_look_alikes_stay_unnamed(text):
    assert _confident(text) == [], _answers(text)


@pytest.mark.parametrize("text, cause", [
    ('error: failed to run custom build command for `candle-kernels`\n  cl.exe not found in the PATH', "host-compiler-missing"),
])
def test_msvc_not_on_path_in_other_build_tools_words_is_the_host_compiler(text, cause):
    assert _top(text) == (cause, "likely")


def test_another_program_not_found_on_path_is_not_the_host_compiler():
    assert "host-compiler-missing" not in _answers("error: mycl.exe not found in the PATH")


def test_dkms_holding_an_nvidia_tree_without_its_sources_is_stale_driver_state():
    text = ("$ sudo dkms autoinstall\nError! Could not locate dkms.conf file.\nFile: /var/lib/dkms/nvidia/470.82.01/"
            "source/dkms.conf does not exist.")
    assert _top(text) == ("driver-state-stale", "likely")
    assert "470.82.01" in next(e for e in explain(text) if e.id == "driver-state-stale").fix


def test_dkms_missing_another_modules_conf_is_not_the_drivers():
    text = "Error! Could not locate dkms.conf file.\nFile: /var/lib/dkms/zfs/2.1.5/source/dkms.conf does not exist."
    assert "driver-state-stale" not in _answers(text)
