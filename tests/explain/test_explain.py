"""`envcheck explain` over error texts as users paste them (taken from public issue reports;
the source of each is named next to it)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from envcheck.errors import UsageError
from envcheck.explain.match import explain, signature_ids

# (text, expected first id, values that must be read from the text)
CASES = [
    # mlcommons/inference#54
    ("THCudaCheck FAIL file=/pytorch/torch/csrc/cuda/Module.cpp line=34 error=35 : CUDA driver version "
     "is insufficient for CUDA runtime version\nTraceback (most recent call last):\n"
     "RuntimeError: cuda runtime error (35) : CUDA driver version is insufficient for CUDA runtime "
     "version at /pytorch/torch/csrc/cuda/Module.cpp:34", "driver-too-old", {}),
    # sconlyshootery/FeatDepth#68: the warning comes first, then the failure
    ("UserWarning: \nNVIDIA GeForce RTX 3060 Laptop GPU with CUDA capability sm_86 is not compatible "
     "with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities "
     "sm_37 sm_50 sm_60 sm_70.\nIf you want to use the NVIDIA GeForce RTX 3060 Laptop GPU GPU with "
     "PyTorch, please check the instructions at https://pytorch.org/get-started/locally/\n"
     "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
     "arch-not-compatible", {"sm": "sm_86", "archs": "sm_37 sm_50 sm_60 sm_70"}),
    ("RuntimeError: CUDA error: no kernel image is available for execution on the device\nCUDA kernel "
     "errors might be asynchronously reported at some other API call", "no-kernel-image", {}),
    # tensorflow/tensorflow#20271
    ("ImportError: libcudnn.so.7: cannot open shared object file: No such file or directory",
     "cudnn-lib-missing", {"major": "7"}),
    # a cuDNN 9 sub-library
    ("Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_cnn_infer.so.8: cannot open "
     "shared object file: No such file or directory", "cudnn-lib-missing", {"major": "8"}),
    ("ImportError: libcudart.so.10.0: cannot open shared object file: No such file or directory",
     "cudart-lib-missing", {"ver": "10.0"}),
    # tianzhi0549/FCOS#37
    ("/usr/local/cuda-9.0/include/crt/host_config.h:119:2: error: #error -- unsupported GNU version! "
     "gcc versions later than 6 are not supported!", "gcc-too-new", {"max_gcc": "6"}),
    # pytorch/pytorch#17349 comment and WZMIAOMIAO/deep-learning-for-image-processing#545
    ("RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:518, unhandled system "
     "error, NCCL version 2.4.8", "nccl-system-error", {"nccl": "2.4.8"}),
    # NVIDIA/nccl#2076
    ("torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
     "remote process exited or there was a network error, NCCL version 2.21.5\nncclRemoteError: A call "
     "failed possibly due to a network error or a remote process exiting prematurely.\nLast error:\n"
     "socketProgressOpt: Call to recv from 172.16.0.3<33759> failed : Connection reset by peer",
     "nccl-remote-error", {"nccl": "2.21.5"}),
    # NVIDIA/Megatron-LM#343
    ('File "/root/miniconda3/lib/python3.8/site-packages/torch/distributed/rendezvous.py", line 142, in '
     "_tcp_rendezvous_handler\nstore = TCPStore(result.hostname, result.port, world_size, start_daemon, "
     "timeout)\nRuntimeError: Address already in use", "address-in-use", {}),
    # pytorch/pytorch#85604
    ("[W socket.cpp:401] [c10d] The server socket has failed to listen on [::]:47531 (errno: 98 - "
     "Address already in use).", "address-in-use", {}),
    # pytorch/pytorch#76913
    ("    return TCPStore(\nRuntimeError: Connection reset by peer", "rendezvous-refused", {}),
    ("[W426 16:56:01.831041000 TCPStore.cpp:347] [c10d] TCP client failed to connect/validate to host "
     "100.64.0.1:59782 - retrying (try=6, timeout=1800000ms, delay=5241ms): Connection refused",
     "rendezvous-refused", {}),
    # tczhangzhi/pytorch-distributed#18
    ("RuntimeError: Timed out initializing process group in store based barrier on rank: 2, for key: "
     "store_based_barrier_key:1 (world_size=2, worker_count=4, timeout=0:30:00)", "pg-init-timeout",
     {"rank": "2", "world": "2", "count": "4"}),
    # icip-cas/AutoAlign#25 (line break inside the message, as printed)
    ("RuntimeError:\n      The detected CUDA version (11.8) mismatches the version that was used to compile\n"
     "      PyTorch (12.4). Please make sure to use the same CUDA versions.", "toolkit-torch-mismatch",
     {"detected": "11.8", "torch_cuda": "12.4"}),
    ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.78 GiB total capacity; "
     "14.21 GiB already allocated)", "cuda-oom", {"want": "20.00 MiB"}),
    ("RuntimeError: CUDA error: out of memory", "cuda-oom", {}),
    ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the "
     "latest NVIDIA driver is installed and running.", "nvidia-smi-no-driver", {}),
    ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
     "installed a driver from http://www.nvidia.com/Download/index.aspx", "no-driver-found", {}),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED", "cudnn-not-initialized", {}),
    # jwyang/faster-rcnn.pytorch#612
    ("ImportError: /.../python3.6/site-packages/torchvision/_C.cpython-36m-x86_64-linux-gnu.so: "
     "undefined symbol: _ZN3c1019UndefinedTensorImpl10_singletonE", "torchvision-undefined-symbol",
     {"symbol": "_ZN3c1019UndefinedTensorImpl10_singletonE"}),
    # fudan-generative-vision/hallo#98
    ('  File "/usr/local/lib/python3.10/dist-packages/torchvision/_meta_registrations.py", line 164, in '
     "<module>\n    def meta_nms(dets, scores, iou_threshold):\nRuntimeError: operator torchvision::nms "
     "does not exist", "torchvision-nms-missing", {}),
    ("[E ProcessGroupNCCL.cpp:828] [Rank 1] Watchdog caught collective operation timeout: "
     "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800602 milliseconds before "
     "timing out.", "watchdog-timeout", {"op": "ALLREDUCE", "ms": "1800602"}),
    ("AssertionError: Torch not compiled with CUDA enabled", "torch-not-cuda", {}),
    # NVIDIA/Megatron-LM#661
    ("torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/"
     "ProcessGroupNCCL.cpp:1727, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.19.3\n"
     "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\nLast error:\n"
     "Duplicate GPU detected : rank 3 and rank 0 both on CUDA device f000", "duplicate-gpu",
     {"rank_a": "3", "rank_b": "0", "bus": "f000"}),
    # microsoft/SimXNS#2
    ('    torch._C._cuda_setDevice(device)\nRuntimeError: CUDA error: invalid device ordinal',
     "invalid-device-ordinal", {}),
    ("    from PIL import Image, ImageOps, ImageEnhance, PILLOW_VERSION\nImportError: cannot import name "
     "'PILLOW_VERSION' from 'PIL'", "pillow-too-new", {}),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_37'", "nvcc-arch-dropped", {"arch": "compute_37"}),
    ('  File "C:/env/lib/site-packages/torch/distributed/rendezvous.py", line 174, in _create_c10d_store\n'
     "torch.distributed.DistNetworkError: Unknown error", "windows-store-socket", {}),
    ("ImportError: /env/lib/python3.9/site-packages/lltm_cpp.cpython-39-x86_64-linux-gnu.so: undefined symbol: "
     "THPVariableClass", "extension-imported-before-torch", {}),
    # the ninth round's new causes, in their emitters' words (tests/explain/test_emitter_round9.py)
    ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/9f0e/merged/usr/bin/"
     "nvidia-smi: file exists: unknown", "container-image-driver-files", {}),
    ('AssertionError: libcuda.so cannot found!\nPlease make sure GPU is set up and then run "/sbin/ldconfig" '
     "(requires sudo) to refresh the linker cache.", "libcuda-not-in-ldcache", {}),
    # a toolkit older than the build needs, in its emitters' words (Kaldi's src/configure,
    # configure_cuda; CMake's FindPackageHandleStandardArgs; tests/explain/test_emitter_toolkit_too_old.py)
    ("***configure failed: CUDA version 8_0 is too old and unsupported. ***", "toolkit-too-old", {"found": "8_0"}),
    ('CMake Error: Could NOT find CUDA: Found unsuitable version "9.2", but required is at least "10.0" '
     "(found /usr/local/cuda)", "toolkit-too-old", {"found": "9.2", "need": "10.0"}),
    ('  File "C:\\work\\train.py", line 12, in main\nRuntimeError: Distributed package doesn\'t have NCCL built in',
     "nccl-not-built", {}),
    ("ptxas add_kernel.ptx, line 5; fatal   : Unsupported .version 8.6; current version is '8.2'\nptxas fatal   : "
     "Ptx assembly aborted due to errors", "ptxas-too-old", {"ptx": "8.6", "cur": "8.2"}),
    ("RuntimeError: Failed to find C compiler. Please specify via CC environment variable.", "host-compiler-missing", {}),
    ("triton_launcher.c:2:10: fatal error: Python.h: No such file or directory", "python-headers-missing", {}),
    ("  Getting requirements to build wheel ... error\n  ModuleNotFoundError: No module named 'torch'",
     "build-isolation-no-torch", {}),
    ("ERROR: No matching distribution found for torch==1.8.1+cu111", "no-wheel-for-platform", {"pkg": "torch==1.8.1+cu111"}),
    ("torch.distributed.DistStoreError: use_libuv was requested but PyTorch was build without libuv support",
     "store-libuv-missing", {}),
    ('RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED on 2 GPU A100-SXM4-40GB-MIG-1g.5gb',
     "mig-one-device-per-process", {}),
    # the tenth round's new cause (tests/explain/test_emitter_round10.py)
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. Unable to "
     "find address for: head-node.lan", "hostname-resolution", {"host": "head-node.lan"}),
    # TensorRT's runtime on an engine another release serialised (written from its message)
    ("[E] [TRT] 6: The engine plan file is not compatible with this version of TensorRT, expecting library version "
     "8.6.1 got 8.5.3, please rebuild.", "tensorrt-engine-mismatch", {"expected": "8.6.1", "got": "8.5.3"}),
    # the fourteenth round's new causes (tests/explain/test_emitter_round14_dist.py), from their emitters
    ("RuntimeWarning: JAX plugin jax_cuda12_plugin version 0.7.1 is installed, but it is not compatible with the "
     "installed jaxlib version 0.7.0, so it will not be used.", "jax-plugin-mismatch",
     {"plugin": "jax_cuda12_plugin", "plugin_version": "0.7.1", "jaxlib": "0.7.0"}),
    ("stderr: nvidia-container-cli: container error: cgroup subsystem devices not found: unknown.",
     "container-toolkit-too-old", {}),
    ('The application appears to have been direct launched using "srun",\nbut OMPI was not built with SLURM\'s PMI '
     "support and therefore cannot\nexecute.", "mpi-slurm-pmi", {}),
    ("sh: 1: prted: not found\n--------------------------------------------------------------------------\n"
     "PRTE has lost communication with a remote daemon.", "mpi-daemon-not-on-remote-path", {"daemon": "prted"}),
    # and the builds half's (tests/explain/test_emitter_round14_builds.py)
    ("src/comm.cpp:7:10: fatal error: nccl.h: No such file or directory\ncompilation terminated.",
     "dev-package-missing", {"lib": "nccl"}),
    # the fifteenth round's package versions (tests/explain/test_emitter_round15_py.py), from their emitters
    ("RuntimeError: module compiled against API version 0xf but this version of numpy is 0xe", "numpy-abi-mismatch",
     {"built_api": "f", "numpy_api": "e"}),
    ("ImportError: cannot import name 'container_abcs' from 'torch._six' (/env/lib/python3.9/site-packages/torch/"
     "_six.py)", "package-torch-mismatch", {"api": "container_abcs"}),
    ("AssertionError: MMCV==1.2.4 is used but incompatible. Please install mmcv>=1.3.8, <=1.4.0.",
     "package-version-refused", {"named": "MMCV", "have": "1.2.4", "want": "mmcv>=1.3.8, <=1.4.0", "pkg": "mmcv"}),
    # the fifteenth round's new causes (tests/explain/test_emitter_round15_sys.py), from their emitters
    ("RuntimeError: [enforce fail at /opt/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. "
     "Unable to find address for: ^docker0", "gloo-ifname-nccl-syntax", {"ifname": "^docker0"}),
    ("docker: Error response from daemon: failed to create shim task: nvidia-container-cli: device error: "
     "MIG-GPU-5a1e0b7c-3f42-11ee-9d1a-0242ac120002/3/0: unknown device: unknown.", "mig-device-old-name",
     {"dev": "MIG-GPU-5a1e0b7c-3f42-11ee-9d1a-0242ac120002/3/0"}),
    # the eighteenth round's new causes (tests/explain/test_emitter_round18_ids.py), from their emitters
    ("[hevc_nvenc @ 0x5597c1d0e2c0] Cannot load libnvidia-encode.so.1", "video-codec-libs-missing",
     {"lib": "libnvidia-encode.so.1"}),
    ("RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
     "mpi-not-cuda-aware", {}),
    ("The following GPUs could not be reset:\n  GPU 00000000:47:00.0: In use by another client",
     "gpu-reset-in-use", {}),
    ("Exception: Error initializing context: clGetPlatformIDs (-1001)", "opencl-no-platform", {}),
    ("rdma_helper.cpp:273] Fail to open rdma device mlx5_0: No such file or directory [2]",
     "rdma-device-unavailable", {}),
    # MKL's own words (tests/explain/test_emitter_mkl.py), the library it names read from the text
    ("Intel MKL FATAL ERROR: Cannot load libmkl_avx2.so.2 or libmkl_def.so.2.", "mkl-lib-mismatch",
     {"lib": "libmkl_avx2.so.2"}),
]


@pytest.mark.parametrize("text,first,values", CASES, ids=[c[1] + str(i) for i, c in enumerate(CASES)])
def test_known_error_texts_are_explained_with_values_read_from_the_text(text, first, values):
    found = explain(text)
    assert found, text
    assert found[0].id == first
    for k, v in values.items():
        assert found[0].values.get(k) == v
    assert found[0].cause and found[0].fix and found[0].checks


def test_every_signature_is_exercised_by_a_case():
    # the rest are held by the corpus (tests/fixtures/errors, test_corpus.py) and the workload ones here
    corpus = {p.stem for p in (Path(__file__).resolve().parents[1] / "fixtures" / "errors").glob("*.yaml")}
    workload = {"cuda-oom", "device-side-assert", "tensor-device-mismatch", "shape-mismatch", "checkpoint-mismatch"}
    from tests.explain.test_catalogue import CASES as CATALOGUE_CASES   # the causes the catalogue names
    covered = {c[1] for c in CASES} | corpus | workload | set(CATALOGUE_CASES.values())
    assert set(signature_ids()) <= covered


def test_extracted_versions_reach_the_cause_and_the_suggested_check():
    e = explain("libcudnn.so.7: cannot open shared object file")[0]
    assert "cuDNN 7" in e.title and "--cudnn 7" in " ".join(e.checks)
    e = explain("The detected CUDA version (11.8) mismatches the version that was used to compile PyTorch (12.4)")[0]
    assert "--torch V+cu124" in e.checks[-1] and "whl/cu118" in e.fix
    e = explain("ImportError: libcudart.so.12: cannot open shared object file")[0]
    assert e.title == "CUDA 12.x runtime library not found"


def test_a_value_with_spaces_is_one_shell_word_in_the_suggested_check():
    # torch 1.x's capability warning names the GPU as the driver does, spaces and all
    import shlex
    e = explain("UserWarning: Found GPU0 GeForce RTX 2080 which requires CUDA_VERSION >= 10000 to work "
                "properly, but your PyTorch was compiled with CUDA_VERSION 9000.")[0]
    words = shlex.split(e.checks[-1])
    assert words[words.index("--gpu") + 1] == "GeForce RTX 2080", e.checks
    # a value that is one word already stays as it is, and a stand-in is not quoted
    e = explain("libcudnn.so.7: cannot open shared object file")[0]
    assert "--cudnn 7" in " ".join(e.checks) and "'" not in " ".join(e.checks)


def test_a_missing_tensorrt_library_is_said_to_be_tensorrts_not_the_cuda_toolkits():
    e = explain("OSError: libnvinfer_plugin.so.8: cannot open shared object file: No such file or directory")[0]
    assert e.id == "cuda-lib-missing" and "TensorRT" in e.cause and "CUDA toolkit" not in e.cause + e.fix
    e = explain("ImportError: libcublasLt.so.12: cannot open shared object file: No such file or directory")[0]
    assert e.id == "cuda-lib-missing" and "CUDA toolkit" in e.cause and "TensorRT" not in e.cause


def test_a_traceback_lists_the_root_cause_first_and_keeps_the_consequence():
    ids = [e.id for e in explain(CASES[1][0])]
    assert ids == ["arch-not-compatible", "no-kernel-image"]


def test_a_specific_match_suppresses_the_generic_one():
    ids = [e.id for e in explain(CASES[8][0])]
    assert "nccl-remote-error" in ids and "rendezvous-refused" not in ids
    ids = [e.id for e in explain(CASES[20][0])]
    assert ids == ["torchvision-undefined-symbol"]


def test_generic_undefined_symbol_outside_torchvision():
    e = explain("ImportError: /x/my_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: _ZN2at5ErrorC1E")
    assert [x.id for x in e] == ["undefined-symbol"]


def test_unknown_text_gives_nothing_and_empty_text_is_a_usage_error():
    assert explain("SyntaxError: invalid syntax") == []
    with pytest.raises(UsageError):
        explain("   ")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text_never_raises(text):
    if text.strip():
        explain(text)


def test_cli_prints_the_explanation_and_exits_0(cli):
    r = cli("explain", "RuntimeError: CUDA error: no kernel image is available for execution on the device")
    assert r.returncode == 0, r.stderr
    assert "No GPU kernel" in r.stdout and "envcheck audit --deep HOSTS" in r.stdout


def test_cli_unknown_text_is_one_line_exit_2_suggesting_audit(cli):
    r = cli("explain", "everything is fine")
    assert r.returncode == 2
    assert r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1 and "envcheck audit" in r.stderr


def test_cli_reads_a_traceback_from_stdin_as_json(cli):
    r = cli("explain", "--json", input=CASES[7][0])
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["known"] is True and doc["matches"][0]["values"]["nccl"] == "2.4.8"


def test_cli_json_for_unknown_text_says_so_and_exits_2(cli):
    r = cli("explain", "--json", "nothing to see")
    assert r.returncode == 2
    assert json.loads(r.stdout) == {"known": False, "environment": False, "matches": []}


def test_cli_local_takes_no_hosts(cli):
    r = cli("explain", "--local", "invalid device ordinal", "node01")
    assert r.returncode == 2 and "--local" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_cli_local_audits_this_machine_and_never_rules_out_what_it_could_not_see(cli):
    import glob
    if glob.glob("/usr/lib/x86_64-linux-gnu/libcudnn.so*") or glob.glob("/usr/local/cuda*/lib64/libcudnn.so*"):
        pytest.skip("this machine has a cuDNN; the verdict would depend on it")
    r = cli("explain", "--local", "--json", "ImportError: libcudnn.so.8: cannot open shared object file")
    assert r.returncode == 0, r.stderr
    [host] = json.loads(r.stdout)["hosts"]
    [cause] = host["causes"]
    assert host["error"] is None and cause["id"] == "cudnn-lib-missing"
    assert cause["verdict"] == "not checked" and "cudnn" in cause["why"]


def test_cli_text_output_ranks_with_confidence_and_lists_the_causes_of_an_ambiguous_error(cli):
    r = cli("explain", "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
    assert r.returncode == 0, r.stderr
    # possible: its most frequent cause is the workload's (no memory left), listed first
    assert r.stdout.startswith("1. cuDNN failed to initialise (possible)")
    assert "1. likely: no GPU memory" in r.stdout and "2. possible:" in r.stdout and "tell apart:" in r.stdout


def test_a_causes_strongest_wording_sets_its_confidence_wherever_it_stands_in_the_text():
    # a pasted log's generic final line (numpy's "multiarray failed to import", only `possible`)
    # pasted above the emitter's own words (numpy 2's banner, `exact`): the answer is numpy's own
    text = ("ImportError: numpy.core.multiarray failed to import\n"
            "\n"
            "A module that was compiled using NumPy 1.x cannot be run in\n"
            "NumPy 2.1.3 as it may crash. To support both 1.x and 2.x\n"
            "versions of NumPy, modules must be compiled with NumPy 2.0.")
    found = [e for e in explain(text) if e.id == "numpy-abi-mismatch"]
    assert [(e.confidence, e.line, e.values.get("numpy")) for e in found] == [("exact", 3, "2.1.3")]
