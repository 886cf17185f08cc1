"""The eighteenth round: `other:` causes that recur across the held-out rounds (heldout.yaml ..
heldout18.yaml) and got an id, read from what prints the error, tested here with texts other than
any held-out one (built from the emitters' format strings) and look-alikes that must keep their
answers.

- FFmpeg's loader of the driver's NVENC / NVDEC libraries (nv-codec-headers' dynlink_loader.h
  LOAD_LIBRARY: "Cannot load %s\\n" with NVENC_LIBNAME "libnvidia-encode.so.1" or
  "nvEncodeAPI64.dll", NVCUVID_LIBNAME "libnvcuvid.so.1" or "nvcuvid.dll"). libavcodec/nvenc.c
  loads the driver's CUDA library first, so the driver is there and its video part is not (a
  container without the `video` driver capability, a host without the encode/decode packages):
  video-codec-libs-missing, whatever "The minimum required Nvidia driver for nvenc is %s or newer"
  FFmpeg prints after any load failure says.
- Open MPI's MPI_Init asked for CUDA support in a library built without it (ompi_mpi_params.c shows
  help-mpi-runtime.txt's [no cuda support]) and torch.distributed's MPI backend given a CUDA tensor
  (ProcessGroupMPI.cpp: "CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI
  support"): mpi-not-cuda-aware.
- nvidia-smi reporting NVML_ERROR_IN_USE ("In use by another client") for the GPU reset a MIG mode
  change needs ("MIG mode is in pending enable state for GPU ...") or for nvidia-smi -r / mig-parted's
  reset ("The following GPUs could not be reset:"): gpu-reset-in-use; the same NVML error for a GPU
  instance that still has compute instances is not it.
- The OpenCL ICD loader finding no vendor implementation (clGetPlatformIDs returning
  CL_PLATFORM_NOT_FOUND_KHR, -1001), in OpenMM's ("Error initializing context: %s (%d)") and
  pyopencl's ("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR") words: opencl-no-platform; a
  platform without the device asked for (CL_DEVICE_NOT_FOUND, -1) is not it.
- An RDMA adapter the process cannot open or no provider with a device: brpc's rdma_helper.cpp
  ("Fail to open rdma device %s" with errno's text) and aws-ofi-nccl's "OFI fi_getinfo() call failed:
  No data available" (-FI_ENODATA): rdma-device-unavailable; NCCL's own INFO line that it found no IB
  device, and other libfabric errors, are not it."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole_cause as _whole



def _video_libs(lib):
    return {
        "id": "video-codec-libs-missing", "confidence": "exact",
        "title": f"The driver's video codec library ({lib}) is not available to the program",
        "cause": "NVENC and NVDEC are libraries of the display driver (libnvidia-encode.so.1, libnvcuvid.so.1), "
                 f"not of CUDA, and the program could load the driver's CUDA library but not {lib}: in a "
                 "container the NVIDIA Container Toolkit mounts them only when NVIDIA_DRIVER_CAPABILITIES "
                 "includes `video` (the default is compute,utility; an image or chart that sets only "
                 "NVIDIA_VISIBLE_DEVICES gets no video libraries); on a host, the distribution packages them "
                 "apart from the driver (libnvidia-encode-<branch>, libnvidia-decode-<branch>), or an "
                 "environment's library path (Nix, flox, a sandbox) does not reach the driver's directory.",
        "fix": "In a container, set NVIDIA_DRIVER_CAPABILITIES=compute,video,utility (or `all`) in the image, "
               "the compose file or the pod (`docker run --gpus 'all,\"capabilities=compute,video,utility\"'`); "
               "on a host, install the driver's encode/decode packages of the running driver's branch, or make "
               "the driver's library directory visible to the program; check with "
               "`ldconfig -p | grep -E 'libnvidia-encode|libnvcuvid'`.",
    }


# --- FFmpeg cannot load the driver's NVENC / NVDEC library ----------------------------------------

@pytest.mark.parametrize("text, lib", [
    ("[h264_nvenc @ 0x55d1c2e4a7c0] Cannot load libnvidia-encode.so.1\n"
     "[h264_nvenc @ 0x55d1c2e4a7c0] The minimum required Nvidia driver for nvenc is 470.57.02 or newer\n"
     "[vost#0:0/h264_nvenc @ 0x55d1c2e49f00] Error while opening encoder - maybe incorrect parameters such as "
     "bit_rate, rate, width or height.\nConversion failed!", "libnvidia-encode.so.1"),
    ("[hevc_cuvid @ 0x5604e5f0b840] Cannot load libnvcuvid.so.1\n[hevc_cuvid @ 0x5604e5f0b840] Failed loading "
     "nvcuvid.\nError while opening decoder for input stream #0:0 : Operation not permitted", "libnvcuvid.so.1"),
    ("[h264_nvenc @ 000001e0a2c3f1c0] Cannot load nvEncodeAPI64.dll\n[h264_nvenc @ 000001e0a2c3f1c0] The "
     "minimum required Nvidia driver for nvenc is 471.41 or newer\nError initializing output stream 0:0 --",
     "nvEncodeAPI64.dll"),
])
def test_ffmpeg_unable_to_load_the_drivers_video_library_is_the_video_part_missing(text, lib):
    assert _whole(text) == _video_libs(lib)


_DRIVER_TOO_OLD = {
    "id": "driver-too-old", "confidence": "exact", "title": "NVIDIA driver older than the CUDA runtime needs",
    "cause": "The program's CUDA runtime (for pip torch: the CUDA it was built for, e.g. +cu121) needs a newer "
             "kernel driver than the node has. Each CUDA release has a minimum driver; minor-version "
             "compatibility only helps within a major (11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580). "
             "FFmpeg's NVENC encoders the same: the NVENC API its build uses needs a newer driver than the node "
             "has.",
    "fix": "Either upgrade the NVIDIA driver on that node to at least the minimum for torch's CUDA, or install "
           "the torch built for a CUDA this driver runs (`envcheck plan --gpu GPU --driver V` lists them).",
}


def test_ffmpeg_finding_the_nvenc_api_too_old_stays_the_driver_too_old():
    text = ("[h264_nvenc @ 0x5618a04f6c40] Driver does not support the required nvenc API version. Required: "
            "12.1 Found: 12.0\n[h264_nvenc @ 0x5618a04f6c40] The minimum required Nvidia driver for nvenc is "
            "530.41.03 or newer\nError initializing output stream 0:0 -- Error while opening encoder for output "
            "stream #0:0 - maybe incorrect parameters such as bit_rate, rate, width or height")
    assert _whole(text) == _DRIVER_TOO_OLD


def test_ffmpeg_unable_to_load_the_drivers_cuda_library_stays_no_driver():
    text = ("[h264_nvenc @ 0x5581f3a2c1c0] Cannot load libcuda.so.1\n"
            "[vost#0:0/h264_nvenc @ 0x5581f3a2c000] Error while opening encoder")
    assert _whole(text)["id"] == "no-driver-found"


# --- an MPI without CUDA support given GPU buffers ------------------------------------------------

_MPI_NOT_CUDA_AWARE = {
    "id": "mpi-not-cuda-aware", "confidence": "exact", "title": "The MPI library is not CUDA-aware",
    "cause": "A GPU buffer was handed to MPI (or CUDA support asked for) but the MPI stack was built without "
             "CUDA support: a distribution's or conda's Open MPI built without --with-cuda (or with it "
             "disabled), an Open MPI whose UCX was configured without CUDA, an MPICH without GPU support, or "
             "Cray MPICH run without MPICH_GPU_SUPPORT_ENABLED=1. MPI then cannot read device memory (it "
             "refuses, or faults on the device pointer).",
    "fix": "Use an MPI built with CUDA: Open MPI configured --with-cuda and, when it runs over UCX, a UCX "
           "configured --with-cuda (HPC-X and NVIDIA's containers ship both); conda-forge's openmpi with "
           "OMPI_MCA_opal_cuda_support=true; on Cray, MPICH_GPU_SUPPORT_ENABLED=1. Or copy GPU tensors to the "
           "host before MPI calls, or use the NCCL backend for GPU tensors. Check with "
           "`ompi_info --parsable --all | grep mpi_built_with_cuda_support:value` and `ucx_info -v`.",
}


@pytest.mark.parametrize("text", [
    "$ mpirun --mca mpi_cuda_support 1 -np 4 ./jacobi_cuda_aware\n"
    "--------------------------------------------------------------------------\n"
    "The user requested CUDA support with the --mca mpi_cuda_support 1 flag\n"
    "but the library was not compiled with any support.\n"
    "--------------------------------------------------------------------------\n"
    "[node17:04211] 3 more processes have sent help message help-mpi-runtime.txt / no cuda support",
    'Traceback (most recent call last):\n  File "train.py", line 41, in <module>\n    dist.all_reduce(t)\n'
    '  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050, in '
    "all_reduce\n    work = group.allreduce([tensor], opts)\n"
    "RuntimeError: CUDA tensor detected and the MPI used doesn't have CUDA-aware MPI support",
])
def test_mpi_refusing_gpu_buffers_is_an_mpi_built_without_cuda(text):
    assert _whole(text) == _MPI_NOT_CUDA_AWARE


@pytest.mark.parametrize("text, want", [
    # the same backend's other refusals are the program's use or the MPI's threading, not CUDA
    ("RuntimeError: MPI process group does not support multi-GPU collectives", {}),
    ("RuntimeError: Used MPI implementation doesn't have the minimum level of threading support: "
     "MPI_THREAD_SERIALIZED. This is required by c10d package", {}),
    # ompi_info saying so is a check's output, not an error
    ("mca:mpi:base:param:mpi_built_with_cuda_support:value:false", {}),
])
def test_the_mpi_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- a GPU reset (MIG mode change, nvidia-smi -r) refused while something holds the GPU ------------

_RESET_IN_USE = {
    "id": "gpu-reset-in-use", "confidence": "exact",
    "title": "The GPU reset (a MIG mode change, nvidia-smi -r) is refused because something holds the GPU",
    "cause": "Enabling or disabling MIG (on A100/A30-class GPUs) and nvidia-smi -r reset the GPU, which the "
             "driver refuses while any client holds it open: a CUDA job, a daemon (nvidia-persistenced, "
             "nv-hostengine/DCGM and its exporter, NVSM, nvidia-fabricmanager, a monitoring agent or another "
             "nvidia-smi), or a kernel module using it (nvidia_drm under a display server); NVIDIA's MIG guide "
             "asks for every daemon holding the driver to be stopped first.",
    "fix": "Stop what holds the GPU (`nvidia-smi --query-compute-apps=pid,name --format=csv`, "
           "`sudo lsof /dev/nvidia*`): end the jobs, `sudo systemctl stop nvidia-persistenced nvidia-dcgm nvsm` "
           "(and dcgm-exporter or the GPU operator's operands on Kubernetes), `sudo modprobe -r nvidia_drm` with "
           "the display manager stopped; then repeat the MIG change or `nvidia-smi -r`, or reboot to apply a "
           "pending MIG mode.",
}


@pytest.mark.parametrize("text", [
    "$ sudo nvidia-smi -i 0 -mig 1\nWarning: MIG mode is in pending enable state for GPU 00000000:07:00.0:In use "
    "by another client\n00000000:07:00.0 is currently being used by one or more other processes (e.g. CUDA "
    "application or a monitoring application such as another instance of nvidia-smi). Please first kill all "
    "processes using the device and retry the command or reboot the system to make MIG mode effective.\nAll done.",
    "$ sudo nvidia-smi --gpu-reset -i 0\nThe following GPUs could not be reset:\n  GPU 00000000:3B:00.0: In use by "
    "another client\n\n1 device is currently being used by one or more other processes (e.g., Fabric Manager, "
    "CUDA application, graphics application such as an X server, or a monitoring application such as another "
    "instance of nvidia-smi). Please first kill all processes using this device and all compute applications "
    "running in the system.",
])
def test_a_gpu_reset_refused_as_in_use_is_something_holding_the_gpu(text):
    assert _whole(text) == _RESET_IN_USE


@pytest.mark.parametrize("text, want", [
    # the same NVML error when a GPU instance still has compute instances: the order of the commands
    ("root@gpu-8:~# sudo nvidia-smi mig -i 0 -dgi\nUnable to destroy GPU instance ID  3 from GPU  0: In use by "
     "another client\nFailed to destroy GPU instances: In use by another client", {}),
    ("pynvml.nvml.NVMLError_InUse: In use by another client", {}),
])
def test_the_in_use_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- no OpenCL implementation registered ----------------------------------------------------------

_OPENCL_NO_PLATFORM = {
    "id": "opencl-no-platform", "confidence": "exact",
    "title": "No OpenCL implementation is registered (the ICD loader finds no platform)",
    "cause": "OpenCL programs load libOpenCL (the ICD loader), which finds the vendors' implementations through "
             "the files in /etc/OpenCL/vendors (or OCL_ICD_VENDORS); none names a library that loads: the "
             "vendor's OpenCL runtime is not installed (only the loader and headers), a container has no "
             "/etc/OpenCL/vendors/nvidia.icd for the driver's libnvidia-opencl.so.1, or a conda environment's "
             "ocl-icd looks only in the environment's own etc/OpenCL/vendors.",
    "fix": "Install the vendor's OpenCL ICD (NVIDIA's comes with the driver's compute libraries, e.g. "
           "nvidia-opencl-icd or libnvidia-compute; pocl for a CPU); in a container add the ICD file "
           "(`mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd`); "
           "in conda `conda install -c conda-forge ocl-icd-system`; check with `clinfo -l`.",
}


@pytest.mark.parametrize("text", [
    "$ python -m openmm.testInstallation\nThere are 3 Platforms available:\n\n1 Reference - Successfully computed "
    "forces\n2 CPU - Successfully computed forces\n3 OpenCL - Error computing forces with OpenCL platform\n\n"
    "OpenCL platform error: Error initializing context: clGetPlatformIDs (-1001)",
    'Traceback (most recent call last):\n  File "/opt/conda/lib/python3.11/site-packages/pyopencl/__init__.py", '
    "line 815, in choose_devices\n    platforms = get_platforms()\n"
    "pyopencl._cl.LogicError: clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR",
])
def test_no_opencl_platform_is_no_implementation_registered(text):
    assert _whole(text) == _OPENCL_NO_PLATFORM


@pytest.mark.parametrize("text, want", [
    # a platform found without the device type asked for, or another call failing: not this
    ("Exception: Error initializing context: clGetDeviceIDs (-1)", {}),
    ("pyopencl._cl.RuntimeError: clGetDeviceIDs failed: DEVICE_NOT_FOUND", {}),
    ("Error creating context: clCreateContext (-6)", {}),
])
def test_the_opencl_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- the RDMA adapter not available to the process --------------------------------------------------

_RDMA_UNAVAILABLE = {
    "id": "rdma-device-unavailable", "confidence": "likely",
    "title": "The RDMA (InfiniBand/RoCE/EFA) device is not available to the process",
    "cause": "The program asked for RDMA and could not open the adapter or found no provider with a device: a "
             "container started without the /dev/infiniband device nodes (sysfs still lists the adapter), a node "
             "or instance without the adapter (EFA not enabled at launch), or the RDMA drivers and user-space "
             "provider (rdma-core, the EFA installer's libfabric) not installed.",
    "fix": "Pass the devices in (`docker run --device=/dev/infiniband --cap-add=IPC_LOCK --ulimit memlock=-1`; on "
           "Kubernetes request the RDMA or EFA device plugin's resource, e.g. vpc.amazonaws.com/efa, or run "
           "privileged); on the host check `ibv_devinfo` (`fi_info -p efa` for EFA) and install or load the "
           "drivers; NCCL falls back to TCP with NCCL_IB_DISABLE=1 or without the OFI plugin.",
}


@pytest.mark.parametrize("text", [
    "E0512 09:14:02.118532  2318 rdma_helper.cpp:273] Fail to open rdma device mlx5_0: No such file or directory "
    "[2]\nE0512 09:14:02.118601  2318 rdma_helper.cpp:498] Fail to find available RDMA device",
    "[2025-01-14 08:01:12] node-3:1211:1290 [0] nccl_net_ofi_rdma_init:7737 NCCL WARN NET/OFI OFI fi_getinfo() call "
    "failed: No data available\nnode-3:1211:1290 [0] nccl_net_ofi_create_plugin:261 NCCL WARN NET/OFI Unable to "
    "find a protocol that worked.  Failing initialization.",
])
def test_an_rdma_adapter_the_process_cannot_open_is_the_device_not_available(text):
    assert _whole(text) == _RDMA_UNAVAILABLE


@pytest.mark.parametrize("text, want", [
    # NCCL saying it found no IB device and using sockets is information, not a failure
    ("node-3:1211:1290 [0] NCCL INFO NET/IB : No device found.\n"
     "node-3:1211:1290 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.3<0>", {}),
    # another libfabric error is not a missing device
    ("node-3:1211:1290 [0] NCCL WARN NET/OFI OFI fi_getinfo() call failed: Function not implemented", {}),
])
def test_the_rdma_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want
