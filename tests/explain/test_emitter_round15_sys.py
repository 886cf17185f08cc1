"""The fifteenth round, its systems and other-framework half: what heldout15's misses (scored once,
then read) showed that is general, mended from what the emitter prints and what it means, with
texts other than any held-out one and look-alikes that must stay where they were.

- LightGBM's GPU and CUDA tree learners in a build without them (gpu_tree_learner.h,
  cuda_tree_learner.h: "GPU Tree Learner was not enabled in this build.\\nPlease recompile with
  CMake option -DUSE_GPU=1"): a CPU-only LightGBM (torch-not-cuda's class, with LightGBM's fix).
- MPICH's nemesis TCP netmod failing to resolve the node's own name for its business card
  ("gethostbyname failed, %s (errno %d)" in its error stack): the host name (hostname-resolution).
- Jetson (L4T) containers: the NVIDIA runtime mounts the device's libraries from its csv lists;
  an image built with it keeps empty files at the mount points, so a container run without it
  finds 0-byte libraries ("file too short"): the runtime not used (container-toolkit-missing)."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole


_whole = whole


LGBM_FIX = ("Install a LightGBM built with the learner asked for: `pip install lightgbm --no-binary lightgbm "
            "--config-settings=cmake.define.USE_CUDA=ON` (device='cuda') or `USE_GPU=ON` (device='gpu', OpenCL), "
            "or use device='cpu'.")


# --- LightGBM without its GPU learners ---------------------------------------------------------

@pytest.mark.parametrize("text", [
    "[LightGBM] [Fatal] CUDA Tree Learner was not enabled in this build.\nPlease recompile with CMake option "
    "-DUSE_CUDA=1\nTraceback (most recent call last):\n  File \"fit.py\", line 41, in <module>\n"
    "    booster = lgb.train(params, dtrain)\nlightgbm.basic.LightGBMError: CUDA Tree Learner was not enabled in "
    "this build.\nPlease recompile with CMake option -DUSE_CUDA=1",
    "LightGBMError: GPU Tree Learner was not enabled in this build.\nPlease recompile with CMake option -DUSE_GPU=1 "
    "(while fitting LGBMClassifier(device='gpu'))",
])
def test_a_lightgbm_without_its_gpu_learners_is_a_cpu_build(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["fix"]) == (
        "torch-not-cuda", "likely", "A CPU-only LightGBM (no GPU learner) is installed", LGBM_FIX)


@pytest.mark.parametrize("text, want", [
    # the words' other half: a learner that exists, a CPU device asked for: nothing to name
    ("[LightGBM] [Warning] Using GPU Tree Learner with 2 GPUs; tree learner was set to data", {}),
    # torch's own CPU build keeps torch's answer
    ("AssertionError: Torch not compiled with CUDA enabled", {"torch-not-cuda": "exact"}),
])
def test_the_cpu_build_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- MPICH resolving the node's own name --------------------------------------------------------

MPICH_STACK = ("Fatal error in MPI_Init: Other MPI error, error stack:\nMPIR_Init_thread(586)..............: \n"
               "MPID_Init(224).....................: channel initialization failed\n"
               "MPIDI_CH3_Init(105)................: \nMPID_nem_init(324).................: \n"
               "MPID_nem_tcp_init(175).............: \nMPID_nem_tcp_get_business_card(401): \n"
               "MPID_nem_tcp_init(373).............: gethostbyname failed, {host} (errno {n})")


@pytest.mark.parametrize("host, n", [("gpu-node-07", 1), ("worker3.cluster.local", 2)])
def test_mpich_not_resolving_its_own_host_name_is_the_host_name(host, n):
    got = _whole(MPICH_STACK.format(host=host, n=n))
    assert (got["id"], got["confidence"], got["values"]["host"]) == ("hostname-resolution", "likely", host)


@pytest.mark.parametrize("text, want", [
    # another program's gethostbyname (no MPI stack around it): not named
    ("easyway() - gethostbyname failed, relay unknown", {}),
    ("proxy: gethostbyname failed, mirror.example.org (errno 2) while fetching the index", {}),
])
def test_the_gethostbyname_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- Jetson containers run without the NVIDIA runtime ---------------------------------------------

L4T_NOTE = ("On Jetson run the container with `--runtime nvidia` (or \"default-runtime\": \"nvidia\" in "
            "/etc/docker/daemon.json, for `docker build` too), and install JetPack's CUDA, cuDNN and TensorRT on the "
            "device itself: the runtime mounts them from there (the csv lists in "
            "/etc/nvidia-container-runtime/host-files-for-container.d/). Elsewhere: ")


@pytest.mark.parametrize("text", [
    "./detectnet: error while loading shared libraries: /usr/lib/aarch64-linux-gnu/libcudnn.so.8: file too short",
    "python3: error while loading shared libraries: /usr/lib/aarch64-linux-gnu/tegra/libnvos.so file too short",
    "/usr/local/bin/trtexec: error while loading shared libraries: /usr/lib/aarch64-linux-gnu/libnvinfer_plugin.so.8: "
    "file too short",
])
def test_jetson_libraries_left_empty_are_the_nvidia_runtime_not_used(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["values"]) == (
        "container-toolkit-missing", "likely",
        "Docker has no NVIDIA runtime (the container toolkit is not installed or not configured)", {"l4t": ""})
    assert got["fix"].startswith(L4T_NOTE + "Install nvidia-container-toolkit, run ")


def test_dockers_own_missing_runtime_keeps_its_fix_without_the_jetson_note():
    got = _whole('docker: Error response from daemon: unknown or invalid runtime name: nvidia.')
    assert got["id"] == "container-toolkit-missing" and got["fix"].startswith("Install nvidia-container-toolkit, run ")


@pytest.mark.parametrize("text", [
    # an x86 library cut short (a broken download or disk): not the Jetson runtime's mounts
    "./app: error while loading shared libraries: /usr/lib/x86_64-linux-gnu/libnvinfer.so.8: file too short",
    # a Jetson library of another kind (not a mounted NVIDIA one)
    "./app: error while loading shared libraries: /usr/lib/aarch64-linux-gnu/libpng16.so.16: file too short",
])
def test_the_file_too_short_look_alikes_are_not_the_container_runtime(text):
    assert "container-toolkit-missing" not in answers(text)


# --- TensorFlow's NCCL ops in a build without them ------------------------------------------------

TF_FIX = ("Give MirroredStrategy another cross-device reduction there "
          "(`cross_device_ops=tf.distribute.HierarchicalCopyAllReduce()` or `tf.distribute.ReductionToOneDevice()`), "
          "or run on Linux/WSL2, whose GPU build has NCCL.")


@pytest.mark.parametrize("text", [
    "tensorflow.python.framework.errors_impl.NotFoundError: No OpKernel was registered to support Op "
    "'NcclAllReduce' used by {{node NcclAllReduce_1}} with these attrs: [reduction=\"sum\", shared_name=\"c0\", "
    "T=DT_HALF, num_devices=4]\nRegistered devices: [CPU, GPU]\nRegistered kernels:\n  <no registered kernels>\n\n"
    "\t [[NcclAllReduce_1]] [Op:__inference_train_step_4410]",
    "No OpKernel was registered to support Op 'NcclAllReduce' used by {{node Adam/NcclAllReduce}} with these attrs: "
    "[num_devices=2, reduction=\"sum\", shared_name=\"c3\", T=DT_FLOAT]\nRegistered devices: [CPU, GPU, XLA_CPU, "
    "XLA_GPU]\nRegistered kernels:\n  <no registered kernels>",
])
def test_tensorflow_without_its_nccl_kernels_is_a_build_without_nccl(text):
    got = _whole(text)
    assert got == {"id": "nccl-not-built", "confidence": "likely",
                   "title": "TensorFlow on Windows or macOS has no NCCL", "values": {"tf": ""}, "fix": TF_FIX}


def test_torch_without_nccl_keeps_its_whole_answer():
    got = _whole("  File \"C:\\work\\train.py\", line 12, in main\n"
                 "RuntimeError: Distributed package doesn't have NCCL built in")
    assert got == {"id": "nccl-not-built", "confidence": "exact", "title": "torch on Windows or macOS has no NCCL",
                   "values": {}, "fix": "Use the gloo backend there (`init_process_group(backend=\"gloo\")`, PL's "
                   "`DDPStrategy(process_group_backend=\"gloo\")`, or the program's own backend option), or run the "
                   "training on Linux/WSL2 for NCCL."}


@pytest.mark.parametrize("text", [
    # a CPU-only TensorFlow: no GPU among the devices (not a build without NCCL alone)
    "No OpKernel was registered to support Op 'NcclAllReduce' used by {{node NcclAllReduce}} with these attrs: "
    "[reduction=\"sum\", shared_name=\"c1\", T=DT_FLOAT, num_devices=2]\nRegistered devices: [CPU]\n"
    "Registered kernels:\n  <no registered kernels>",
    # the kernel exists for the GPU, the op was placed on the CPU: placement, not the build
    "No OpKernel was registered to support Op 'NcclAllReduce' used by {{node NcclAllReduce}} with these attrs: "
    "[reduction=\"sum\", shared_name=\"c1\", T=DT_FLOAT, num_devices=2]\nRegistered devices: [CPU, GPU]\n"
    "Registered kernels:\n  device='GPU'; T in [DT_HALF]\n  device='GPU'; T in [DT_FLOAT]",
])
def test_the_opkernel_look_alikes_are_not_a_build_without_nccl(text):
    assert "nccl-not-built" not in answers(text)


# --- new ids: GLOO_SOCKET_IFNAME in NCCL's syntax; a MIG device in the pre-R470 form ---------------

@pytest.mark.parametrize("text, ifname", [
    ("[rank2]: RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. "
     "Unable to find address for: ^lo", "^lo"),
    ("RuntimeError: [enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] ifa != nullptr. "
     "Unable to find address for: =ens5", "=ens5"),
])
def test_gloo_given_nccls_interface_syntax_is_named(text, ifname):
    got = _whole(text)
    assert got == {"id": "gloo-ifname-nccl-syntax", "confidence": "exact",
                   "title": f"GLOO_SOCKET_IFNAME given NCCL's ^/= syntax ({ifname}), which gloo reads as an interface "
                            "name",
                   "values": {"ifname": ifname},
                   "fix": "Set GLOO_SOCKET_IFNAME to the name of the interface the nodes share (`ip -br addr`; "
                          "several names comma-separated), not a copy of NCCL_SOCKET_IFNAME's exclusion list, or "
                          "unset it."}


@pytest.mark.parametrize("text, want", [
    # a plain interface name that is not there stays the missing interface
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != nullptr. Unable to "
     "find address for: eth0", {"nccl-no-socket-interface": "likely"}),
    # the host-name lookup stays the host name's
    ("RuntimeError: [enforce fail at ../third_party/gloo/gloo/transport/tcp/device.cc:127] rp != nullptr. Unable to "
     "find address for: trainer-0", {"hostname-resolution": "exact"}),
])
def test_the_gloo_interface_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


@pytest.mark.parametrize("dev", ["MIG-GPU-0f3c2a91-7b6e-4d2f-a8c5-19e0d4b7a6f3/1/0",
                                 "MIG-GPU-e4b1c7d2-55aa-4c3e-9f10-2b8d6a0c9e71/13/0"])
def test_a_mig_device_in_the_pre_r470_form_is_named(dev):
    got = _whole(f"nvidia-container-cli: device error: {dev}: unknown device: unknown")
    assert got == {"id": "mig-device-old-name", "confidence": "exact",
                   "title": f"A MIG device named in the pre-R470 form ({dev}), which this driver does not know",
                   "values": {"dev": dev},
                   "fix": "Name the MIG device by the MIG-<uuid> that `nvidia-smi -L` lists (NVIDIA_VISIBLE_DEVICES, "
                          "`--gpus device=`, CUDA_VISIBLE_DEVICES), or upgrade the device plugin or tool that wrote "
                          "the old form."}


def test_an_unknown_device_in_the_current_form_is_not_the_old_name():
    text = "nvidia-container-cli: device error: MIG-0f3c2a91-7b6e-5d2f-a8c5-19e0d4b7a6f3: unknown device: unknown"
    assert "mig-device-old-name" not in answers(text)


# --- cuDF's UDF module on a GPU below RAPIDS' lowest architecture --------------------------------

@pytest.mark.parametrize("text, cc", [
    ("  File \"/opt/conda/lib/python3.10/site-packages/cudf/core/udf/utils.py\", line 95, in _get_ptx_file\n"
     "    raise RuntimeError(\nRuntimeError: This cuDF installation is missing the necessary PTX files that are <=52.",
     "5.2"),
    ("RuntimeError: This cuDF installation is missing the necessary PTX files that are <=61.", "6.1"),
])
def test_cudf_without_ptx_for_the_gpu_is_a_gpu_too_old(text, cc):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "gpu-too-old", "exact", f"GPU too old for this torch build or the feature asked for (compute capability {cc})")


def test_cudf_without_any_ptx_is_not_the_gpu():
    # no PTX file at all ("Missing PTX files for cc=NN"): a broken install, not the GPU's age
    assert "gpu-too-old" not in answers("RuntimeError: Missing PTX files for cc=75")


# --- Jittor not finding cuDNN's header --------------------------------------------------------------

def test_jittor_not_finding_cudnn_h_is_cudnn_missing():
    text = ("[w 1108 09:14:02.551320 12 compile_extern.py:203] CUDA found but cudnn is not loaded:\n"
            "RuntimeError: [f 1108 09:14:02.551102 12 compile_extern.py:29] file cudnn.h not found in "
            "['/usr/local/cuda-11.3/include', '/usr/include', '/usr/local/cuda/include']")
    got = _whole(text)
    assert (got["id"], got["confidence"]) == ("cudnn-lib-missing", "likely")


def test_jittor_not_finding_another_header_is_not_cudnn():
    text = ("RuntimeError: [f 1108 09:14:02.551102 12 compile_extern.py:29] file cublas_v2.h not found in "
            "['/usr/local/cuda/include', '/usr/include']")
    assert "cudnn-lib-missing" not in answers(text)
