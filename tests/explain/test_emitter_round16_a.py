"""The sixteenth round, heldout16's half: what its misses (scored once, then read) showed that is
general, mended from what the emitter prints and what it means, with texts other than any held-out
one and look-alikes that must stay where they were.

- k2's setup (get_version.py get_cuda_version: "PyTorch is built with CUDA version: {torch.version.cuda}.\\n
  The current running CUDA version is: {collect_env.get_running_cuda_version()}", i.e. `nvcc --version`),
  raised only when torch's CUDA is not a prefix of nvcc's: the toolkit building it differs from torch's
  (toolkit-torch-mismatch).
- containerd's CRI plugin (internal/cri/.../sandbox_run.go, config.go: "failed to get sandbox runtime:
  no runtime for %q is configured") for the handler "nvidia": containerd's config registers no NVIDIA
  runtime (container-toolkit-missing, with containerd's configure step).
- Headers that only a library's development package installs, in the compilers' own forms (gcc/nvcc
  "fatal error: %s: No such file or directory", clang "'%s' file not found", MSVC C1083 in any
  language, NVRTC's EDG "catastrophic error: cannot open source file \\"%s\\""): TensorRT's (NvInfer.h,
  NvCaffeParser.h, NvOnnxParser.h ...), OpenCL's CL/cl.h, and the CUDA runtime's headers NVRTC needs
  at run time (dev-package-missing)."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, WHOLE, whole


def _whole(text):
    return whole(text, WHOLE + ("cause",))


# --- k2's check of nvcc's CUDA against torch's ---------------------------------------------------

@pytest.mark.parametrize("torch_cuda, nvcc", [("12.1", "11.8.89"), ("11.6", "11.7.99")])
def test_k2_refusing_nvcc_of_another_cuda_than_torchs_is_the_toolkit_mismatch(torch_cuda, nvcc):
    text = ("Traceback (most recent call last):\n  File \"setup.py\", line 214, in <module>\n"
            "    version=get_package_version(),\n  File \"/src/k2/get_version.py\", line 48, in get_cuda_version\n"
            "    assert cuda_version in running_cuda_version, \\\n"
            f"AssertionError: PyTorch is built with CUDA version: {torch_cuda}.\n"
            f"The current running CUDA version is: {nvcc}\n")
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "toolkit-torch-mismatch", "exact", f"nvcc/CUDA_HOME toolkit {nvcc} differs from torch's CUDA {torch_cuda}")
    assert got["values"]["torch_cuda"] == torch_cuda and got["values"]["detected"] == nvcc


@pytest.mark.parametrize("text, want", [
    # a report of both versions that are not k2's refusal: nothing named
    ("PyTorch is built with CUDA version 12.1 and the NVIDIA driver supports CUDA 12.4, fine", {}),
    ("Is debug build: False\nCUDA used to build PyTorch: 12.1\nROCM used to build PyTorch: N/A", {}),
])
def test_the_two_versions_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- containerd without an nvidia runtime handler ----------------------------------------------

@pytest.mark.parametrize("text", [
    "Warning  FailedCreatePodSandBox  12s (x7 over 90s)  kubelet  Failed to create pod sandbox: rpc error: "
    "code = Unknown desc = failed to get sandbox runtime: no runtime for \"nvidia\" is configured",
    "E0412 09:14:02.118 kubelet.go:1823] \"CreatePodSandbox for pod failed\" err=\"rpc error: code = Unknown "
    "desc = failed to get sandbox runtime: no runtime for \\\"nvidia\\\" is configured\" pod=\"gpu-ops/cuda-vectoradd\"",
])
def test_containerd_without_the_nvidia_handler_is_the_toolkit_not_configured(text):
    got = _whole(text)
    assert (got["id"], got["confidence"]) == ("container-toolkit-missing", "exact")
    assert got["fix"].startswith("With containerd (Kubernetes) register the runtime: `sudo nvidia-ctk runtime "
                                 "configure --runtime=containerd` and `sudo systemctl restart containerd` "
                                 "(microk8s: `microk8s enable gpu`; the GPU Operator does it for the cluster). "
                                 "Elsewhere: Install nvidia-container-toolkit")


@pytest.mark.parametrize("text, want", [
    # another handler (gVisor, Kata) missing: not NVIDIA's toolkit
    ("failed to get sandbox runtime: no runtime for \"runsc\" is configured", {}),
    ("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: "
     "no runtime for \"kata-qemu\" is configured", {}),
])
def test_the_other_runtime_handlers_keep_their_answers(text, want):
    assert answers(text) == want


DEV_PKG = {
    "TensorRT": "libnvinfer-dev with libnvinfer-plugin-dev, libnvparsers-dev and libnvonnxparsers-dev of the TensorRT "
                "installed (or the TensorRT tar's include/ and lib/)",
    "OpenCL": "opencl-headers and ocl-icd-opencl-dev (RHEL: opencl-headers, ocl-icd-devel; Windows: the CUDA toolkit's "
              "or another vendor's OpenCL SDK)",
    "the CUDA runtime": "cuda-cudart-dev-X-Y for the CUDA X.Y installed (pip: nvidia-cuda-runtime-cuXX; conda: "
                        "cuda-cudart-dev)",
}


# --- development headers: TensorRT, OpenCL, the CUDA runtime's for NVRTC -----------------------

@pytest.mark.parametrize("text, lib_name", [
    ("In file included from yoloPlugins.cpp:26:\nyoloPlugins.h:30:10: fatal error: NvInferPlugin.h: No such file "
     "or directory\n   30 | #include \"NvInferPlugin.h\"\ncompilation terminated.", "TensorRT"),
    ("/opt/src/onnx_export/engine.cpp:4:10: fatal error: 'NvOnnxParser.h' file not found\n#include "
     "\"NvOnnxParser.h\"", "TensorRT"),
    ("C:\\src\\trt\\builder.cpp(3): fatal error C1083: Cannot open include file: 'NvInfer.h': No such file or "
     "directory", "TensorRT"),
    ("ocl_device.c:2:10: fatal error: CL/cl.h: No such file or directory\n    2 | #include <CL/cl.h>", "OpenCL"),
    ("E:\\build\\src\\kernels.cpp(12): fatal error C1083: Impossible d'ouvrir le fichier include : \"CL/cl.h\" : "
     "No such file or directory", "OpenCL"),
    ("cupy.cuda.compiler.CompileException: /tmp/tmpk3/kern.cu(1): catastrophic error: cannot open source file "
     "\"cuda_fp16.h\"\n\n1 catastrophic error detected in the compilation of \"/tmp/tmpk3/kern.cu\".",
     "the CUDA runtime"),
])
def test_a_missing_library_header_is_its_development_package(text, lib_name):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == (
        "dev-package-missing", "likely",
        "A library's development files (headers, link library) are not installed for the build")
    assert got["cause"].startswith(f"The build includes {lib_name}'s header or links its unversioned .so; both come "
                                   f"in its development package ({DEV_PKG[lib_name]})")
    assert got["fix"].startswith(f"Install {DEV_PKG[lib_name]}; ")


@pytest.mark.parametrize("text, want", [
    # the project's own header (a path or checkout problem): nothing named
    ("yoloPlugins.cpp:3:10: fatal error: yoloPlugins.h: No such file or directory", {}),
    ("catastrophic error: cannot open source file \"my_kernels.cuh\"", {}),
    # a CUDA toolkit header in a gcc/nvcc build keeps the toolkit's answer
    ("fatal error: cuda_runtime.h: No such file or directory", {"cuda-home-unset": "likely"}),
])
def test_the_header_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- native builds published for a few CUDA versions only: DJL's engines, R's torch ----------------

DJL_NOTE = ("DJL downloads its engine's native library for the CUDA it detects (flavor {flavor}) and publishes "
            "builds for a few CUDA versions per engine release; with none for this CUDA on {os} it falls back to "
            "the CPU. ")
R_NOTE = ("R's torch (and packages built like it) downloads libtorch and lantern for the CUDA named by `type` "
          "(or the CUDA variable) from the builds its release lists; CUDA {cuda} is not one of them. ")


@pytest.mark.parametrize("text, flavor, os", [
    ("12:01:44.310 [main] WARN ai.djl.pytorch.jni.LibUtils - No matching cuda flavor for linux-x86_64 found: "
     "cu101.\n12:01:47.002 [main] INFO ai.djl.examples.training.TrainMnist - Training on: cpu().", "cu101", "linux-x86_64"),
    ("[main] WARN ai.djl.mxnet.jna.LibUtils -- No matching cuda flavor for linux found: cu102mkl/sm_89.",
     "cu102mkl", "linux"),
])
def test_djl_without_a_native_build_for_the_cuda_found_is_no_build_for_the_platform(text, flavor, os):
    got = _whole(text)
    assert (got["id"], got["confidence"]) == ("no-wheel-for-platform", "likely")
    assert got["cause"].startswith(DJL_NOTE.format(flavor=flavor, os=os) + "Elsewhere: pip found no file of ")
    assert got["fix"].startswith("Install a CUDA the DJL engine release has native builds for (its engine page lists "
                                 "them), or pin one it has with PYTORCH_FLAVOR or the engine's -native-cuXXX "
                                 "dependency. Elsewhere: Pick a release")


@pytest.mark.parametrize("cuda", ["11.6", "12.2"])
def test_r_torch_asked_for_a_cuda_it_has_no_build_for_is_no_build_for_the_platform(cuda):
    text = (f"> torch::install_torch(type = \"{cuda}\")\nError in lantern_install_libs(version, type, path, "
            f"install_config) : \n  The {cuda} installation type is currently unsupported.")
    got = _whole(text)
    assert (got["id"], got["confidence"]) == ("no-wheel-for-platform", "likely")
    assert got["cause"].startswith(R_NOTE.format(cuda=cuda) + "Elsewhere: pip found no file of ")
    assert got["fix"].startswith("Install alongside a CUDA the release has builds for (its installation docs list "
                                 "them) and point CUDA_HOME at it, or pass `type = \"cpu\"`. "
                                 "Elsewhere: Pick a release")


@pytest.mark.parametrize("text, want", [
    # the words' other halves: an operating system unsupported, a flavor that is not CUDA: not named
    ("Error in lantern_install_libs(version, type, path, install_config) : \n  The sunos operating system is "
     "currently unsupported.", {}),
    ("The cpu installation type is currently unsupported.", {}),
    ("java.io.IOException: No matching flavor for osx-aarch64 found: cpu-precxx11", {}),
    # pip's own words keep pip's answer (no note)
    ("ERROR: Could not find a version that satisfies the requirement torch==2.1.0+cu121 (from versions: none)\n"
     "ERROR: No matching distribution found for torch==2.1.0+cu121", {"no-wheel-for-platform": "likely"}),
])
def test_the_native_build_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want
    if want:
        assert _whole(text)["cause"].startswith("pip found no file of torch==2.1.0+cu121")


# --- the store's port taken: also by another process of the same job that started it as rank 0 ----

ADDR_CAUSE = ("The rendezvous TCPStore cannot listen on MASTER_ADDR:MASTER_PORT because another process holds the "
              "port: an earlier run that did not exit, a second job, or another process of this job that also "
              "started the store (torch starts it in the process whose RANK is 0, so a launcher that gives several "
              "processes RANK=0 makes all but one fail here).")


def test_address_in_use_names_every_holder_of_the_port_its_words_allow():
    # the words mean the port is held; which process holds it they do not say, so the cause names each
    got = _whole("  File \"train.py\", line 12, in <module>\n    dist.init_process_group(\"nccl\")\n"
                 "    store = TCPStore(master_addr, master_port, world_size, start_daemon, timeout)\n"
                 "RuntimeError: Address already in use")
    assert (got["id"], got["confidence"], got["title"], got["cause"]) == (
        "address-in-use", "exact", "MASTER_PORT already taken on the master node", ADDR_CAUSE)
    assert got["fix"] == ("Pick a free MASTER_PORT (or stop the stray process: `ss -ltnp | grep PORT`); when every "
                          "process of the job fails so, give each its own RANK (torchrun, or the launcher's rank "
                          "variables). `envcheck nccl-test` picks a free port itself.")


# --- COLMAP's SiftGPU on OpenGL: a COLMAP built without CUDA ----------------------------------------

COLMAP_FIX = ("Use a COLMAP built with CUDA (CUDA_ENABLED; the distributions' packages and the non-CUDA release "
              "builds have none, so SiftGPU runs on OpenGL shaders), or run on the CPU with "
              "`--SiftExtraction.use_gpu 0` / `--SiftMatching.use_gpu 0` (newer releases: `--FeatureExtraction.use_gpu 0` / "
              "`--FeatureMatching.use_gpu 0`).")


@pytest.mark.parametrize("text", [
    "==============================================================================\nFeature extraction\n"
    "==============================================================================\n\nShader not supported by your "
    "hardware!\nERROR: SiftGPU not fully supported.",
    "$ colmap sequential_matcher --database_path db.db\nShader not supported by your hardware!\n"
    "ERROR: SiftGPU not fully supported\nElapsed time: 0.002 [minutes]",
])
def test_colmaps_siftgpu_on_opengl_is_a_colmap_without_cuda(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"], got["fix"]) == (
        "torch-not-cuda", "likely", "A CPU-only COLMAP (SiftGPU on OpenGL, no CUDA) is installed", COLMAP_FIX)


@pytest.mark.parametrize("text, want", [
    # SiftGPU failing without its OpenGL shader line (a CUDA build's own failure): not named
    ("ERROR: SiftGPU not fully supported.", {}),
    # another program's shader check: not named
    ("ShowMessage('shader not supported by your hardware'); Halt;", {}),
])
def test_the_siftgpu_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want
