"""The ninth round: families of emitters read from what prints them, not from held-out texts —
TensorFlow's and JAX's loaders and XLA's toolkit lookups, ROCm/HIP, Windows' DLL loaders
(TensorFlow's dso_loader, ctypes, onnxruntime's provider bridge, ctranslate2), onnxruntime's CUDA
provider, the container runtimes (libnvidia-container's init and mount errors, CDI),
ProcessGroupNCCL's heartbeat monitor and gloo's timed-out waits, ptxas' target gate, Triton's
libcuda lookup, bitsandbytes' binary lookup, torch's missing NCCL on Windows, the kernel module that
does not load (kmod, the installer, DKMS, NVRM's version check), NVSwitch's CUDA code by number,
ptxas older than its PTX, vLLM's quantization gate, launchers that check the driver themselves
(AUTOMATIC1111's, numba's), rootless runtimes and Apptainer's --nv, no host compiler for a build or
JIT (Triton, inductor, nvcc on Windows, setuptools, distutils), Python.h missing, CMake's CUDA
discovery, pip's build isolation hiding torch and its resolver finding no wheel, cpp_extension's
compiler check, gloo's interface lookup, the store's libuv, CPU builds of OpenCV and DGL, Windows'
loader dialogs. Each format string is tried with values other than any corpus text's."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain, top_environment_cause
from tests.explain.answers import answers as _answers, top_with_confidence as _top


CASES = [
    # TensorFlow's dso_loader on Windows: the CUDA libraries other than cudart/cuDNN by DLL name
    ("W tensorflow/stream_executor/platform/default/dso_loader.cc:60] Could not load dynamic library "
     "'cusparse64_11.dll'; dlerror: cusparse64_11.dll not found", "cuda-lib-missing"),
    ("Could not load dynamic library 'cublasLt64_12.dll'; dlerror: cublasLt64_12.dll not found", "cuda-lib-missing"),
    # gpu_device.cc's summary after them
    ("2023-01-02 10:11:12.000: W tensorflow/core/common_runtime/gpu/gpu_device.cc:1934] Cannot dlopen some GPU "
     "libraries. Please make sure the missing libraries mentioned above are installed properly if you would "
     "like to use GPU.", "cuda-lib-missing"),
    # ctranslate2 (faster-whisper) on Windows and Linux
    ("RuntimeError: Library cublas64_11.dll is not found or cannot be loaded", "cuda-lib-missing"),
    ("RuntimeError: Library libcublasLt.so.11 is not found or cannot be loaded", "cuda-lib-missing"),
    ("RuntimeError: Library cudnn_ops64_9.dll is not found or cannot be loaded", "cudnn-lib-missing"),
    # ctypes on Windows (Python 3.8+)
    ("FileNotFoundError: Could not find module 'D:\\envs\\x\\Lib\\site-packages\\nvidia\\cufft\\bin\\cufft64_11.dll' "
     "(or one of its dependencies). Try using the full path with constructor syntax.", "cuda-lib-missing"),
    # onnxruntime's provider bridge and its CUDA provider
    ('[E:onnxruntime:Default, provider_bridge_ort.cc:1992 onnxruntime::TryGetProviderInfo_CUDA] Error loading '
     '"E:\\app\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll" which depends on "curand64_10.dll" which is '
     'missing. (Error 126: "The specified module could not be found.")', "cuda-lib-missing"),
    ('Error loading "C:\\py\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll" which depends on "cudnn_graph64_9.dll" '
     'which is missing. (Error 126)', "cudnn-lib-missing"),
    ("[W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 CreateExecutionProviderInstance] Failed to create "
     "CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*, and the latest MSVC runtime.", "cuda-lib-missing"),
    ("onnxruntime::python::CreateExecutionProviderInstance CUDA_PATH is set but CUDA wasn't able to be loaded. "
     "Please install the correct version of CUDA and cuDNN", "cuda-lib-missing"),
    ("[ONNXRuntimeError] : 1 : FAIL : LoadLibrary failed with error 126 \"\" when trying to load "
     "\"D:\\venv\\lib\\site-packages\\onnxruntime\\capi\\onnxruntime_providers_cuda.dll\"", "cuda-lib-missing"),
    # onnxruntime's CPU package, JAX's CPU-only jaxlib
    ("UserWarning: Specified provider 'TensorrtExecutionProvider' is not in available provider names."
     "Available providers: 'CPUExecutionProvider'", "torch-not-cuda"),
    ("WARNING:2024-03-01 12:00:00,000:jax._src.xla_bridge:909: An NVIDIA GPU may be present on this machine, "
     "but a CUDA-enabled jaxlib is not installed. Falling back to cpu.", "torch-not-cuda"),
    ("jax.errors.JaxRuntimeError: Unable to initialize backend 'cuda': FAILED_PRECONDITION: No visible GPU "
     "devices.", "no-driver-found"),
    # JAX's CUDA plugin checking the libraries it loads (jax_plugins/cuda _check_cuda_versions)
    ("RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\nOutdated cuDNN "
     "installation found.\nVersion JAX was built against: 91000\nMinimum supported: 90000\nInstalled version: "
     "8902\nThe local installation version must be no lower than 90000.", "cudnn-version-mismatch"),
    ("Outdated cuSPARSE installation found.\nVersion JAX was built against: 12500\nMinimum supported: 12100\n"
     "Installed version: 12001", "cuda-libs-conflict"),
    ("CUDA version check failed during initialization. CUDA backend will not be available. Error: Unable to load "
     "cuFFT. Is it installed?", "cuda-lib-missing"),
    # XLA's toolkit lookups, and its ptxas newer than the driver
    ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: libdevice not found at /opt/cuda/nvvm/libdevice/libdevice.10.bc",
     "cuda-home-unset"),
    ("external/xla/xla/service/gpu/llvm_gpu_backend/gpu_backend_lib.cc:271] Can't find libdevice directory "
     "${CUDA_DIR}/nvvm/libdevice.", "cuda-home-unset"),
    ("XlaRuntimeError: INTERNAL: Couldn't invoke ptxas --version", "cuda-home-unset"),
    ("W external/xla/xla/service/gpu/nvptx_compiler.cc:718] The NVIDIA driver's CUDA version is 11.8 which is "
     "older than the ptxas CUDA version (12.2.140).", "ptx-toolchain-too-new"),
    # ROCm / HIP
    ('"hipErrorNoBinaryForGpu: Unable to find code object for all current devices!"\nAborted', "no-kernel-image"),
    (":1:hip_code_object.cpp :507 : 0123 us: hipErrorNoBinaryForGpu: Unable to find code object for all current "
     "devices!", "no-kernel-image"),
    ("rocBLAS error: Cannot read /usr/lib/python3/site-packages/torch/lib/rocblas/library/TensileLibrary.dat: "
     "No such file or directory for GPU arch : gfx1103", "no-kernel-image"),
    ("torch.cuda.DeferredCudaCallError: ... RuntimeError: No HIP GPUs are available", "no-driver-found"),
    ("ggml_cuda_init: failed to initialize ROCm: no ROCm-capable device is detected", "no-driver-found"),
    ("ROCk module is loaded\nUnable to open /dev/kfd read-write: Permission denied\nalice is not member of "
     '"render" group, the default DRM access group.', "device-permission"),
    # libnvidia-container's initialisation and mounts; CDI
    ("nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown", "container-no-driver"),
    ("stderr: nvidia-container-cli: initialization error: WSL environment detected but no adapters were found: "
     "unknown.", "container-no-driver"),
    ("nvidia-container-cli: initialization error: driver rpc error: timed out: unknown", "container-no-driver"),
    ("nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/0123abcd/merged/usr/lib64/"
     "libcuda.so.1: file exists: unknown", "container-image-driver-files"),
    ("Error: crun: setting up CDI devices: unresolvable CDI devices nvidia.com/gpu=0", "container-toolkit-missing"),
    ("failed to create shim task: OCI runtime create failed: could not apply required modification to OCI "
     "specification: error modifying OCI spec: failed to inject CDI devices: unresolvable CDI devices "
     "nvidia.com/gpu=all: unknown", "container-toolkit-missing"),
    # ProcessGroupNCCL's heartbeat monitor and the older watchdog's summary
    ("[rank5]:[E1105 10:00:00.000 ProcessGroupNCCL.cpp:1400] [PG 1 Rank 5] Heartbeat monitor timed out! Process "
     "will be terminated after dumping debug info. workMetaList_.size()=3", "watchdog-timeout"),
    ("[PG 0 Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring "
     "enqueued collectives.", "watchdog-timeout"),
    ("[E ProcessGroupNCCL.cpp:828] [Rank 7] Timeout at NCCL work: 4411, last enqueued NCCL work: 4411, last "
     "completed NCCL work: 4410.", "watchdog-timeout"),
    # gloo's collectives waiting on a peer
    ("RuntimeError: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting "
     "600000ms for send operation to complete", "watchdog-timeout"),
    # ptxas' target gate
    ("ptxas /tmp/tmpxft_0001/kernel.ptx, line 120; error   : Instruction 'cp.async' requires .target sm_80 or higher",
     "gpu-too-old"),
    ("RuntimeError: Internal Triton PTX codegen error:\nptxas error   : Feature '.bf16' requires .target sm_80 or "
     "higher", "gpu-too-old"),
    # Triton's libcuda lookup
    ("AssertionError: libcuda.so cannot found!\nPossible files are located at ['/usr/lib/wsl/lib/libcuda.so.1'].",
     "libcuda-not-in-ldcache"),
    # the unversioned libcuda.so a loader asks for, -lcuda at link time; nvidia-smi without NVML
    ("OSError: /usr/lib/x86_64-linux-gnu/libcuda.so: cannot open shared object file: No such file or directory",
     "libcuda-not-in-ldcache"),
    ("/usr/bin/ld: cannot find -lcuda: No such file or directory\ncollect2: error: ld returned 1 exit status",
     "libcuda-not-in-ldcache"),
    # (the fourteenth round: nvidia-smi is there, so the driver was installed; its library is not where the
    # loader looks, as nvidia-smi's own advice and the threads say: tests/explain/test_emitter_round14_dist.py)
    ("NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA Display "
     "Driver is properly installed and present in your system.", "libcuda-not-in-ldcache"),
    # bitsandbytes' binary lookup and its CPU library
    ("CUDA SETUP: Required library version not found: libbitsandbytes_cuda118_nocublaslt.so. Maybe you need to "
     "compile it from source?", "extension-ops-missing"),
    ("RuntimeError: Configured CUDA binary not found at /opt/venv/lib/python3.12/site-packages/bitsandbytes/"
     "libbitsandbytes_cuda126.so", "extension-ops-missing"),
    ("AttributeError: /home/u/.local/lib/python3.9/site-packages/bitsandbytes/libbitsandbytes_cpu.so: undefined "
     "symbol: cget_col_row_stats", "extension-ops-missing"),
    # the NVSwitch fabric's CUDA code by number alone
    ("RuntimeError: CUDA error 802 at init (cudaGetDeviceCount)", "fabric-manager"),
    ("cuda runtime: cudaSetDevice failed with 802", "fabric-manager"),
    # NCCL's shared-memory segments
    ("transport/shm.cc:120 NCCL WARN Error: failed to extend /dev/shm/nccl-q1W2e3 to 4194560 bytes, error: No "
     "space left on device (28)", "shm-too-small"),
    ("include/shm.h:48 NCCL WARN Call to posix_fallocate failed : No space left on device", "shm-too-small"),
    # nvcc 11.x on GCC 11's <functional>
    ("/usr/include/c++/11/bits/std_function.h:530:146: error: parameter packs not expanded with '...':",
     "gcc-too-new"),
    # the runtime registered, its binaries gone; the k8s device plugin without it
    ('error running hook #0: error running hook: exec: "nvidia-container-runtime-hook": executable file not found '
     "in $PATH: unknown", "container-toolkit-missing"),
    ("OCI runtime create failed: fork/exec /usr/local/bin/nvidia-container-runtime: no such file or directory: "
     "unknown", "container-toolkit-missing"),
    ("2024/05/06 07:08:09 Failed to initialize NVML: could not load NVML library.\n2024/05/06 07:08:09 If this is a "
     "GPU node, did you set the docker default runtime to `nvidia`?", "container-toolkit-missing"),
    # the kernel module: not built for the running kernel, refused by Secure Boot, of another
    # release than the user space; nvidia-smi without its library; the board's InfoROM
    ("modprobe: FATAL: Module nvidia_uvm not found in directory /lib/modules/5.4.0-150-generic", "nvidia-smi-no-driver"),
    ("modprobe: ERROR: could not insert 'nvidia': Required key not available", "nvidia-smi-no-driver"),
    ("ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel module "
     "was built against the wrong or improperly configured kernel sources", "nvidia-smi-no-driver"),
    ("nvidia-smi: error while loading shared libraries: libnvidia-ml.so.1: cannot open shared object file: No such "
     "file or directory", "nvidia-smi-no-driver"),
    ("[ 12.3] NVRM: API mismatch: the client has the version 550.90.07, but\n[ 12.3] NVRM: this kernel module has "
     "the version 550.54.15.  Please", "nvml-driver-mismatch"),
    ("WARNING: infoROM is corrupted at gpu 0000:81:00.0", "gpu-hardware-fault"),
    # launchers and libraries that check the driver themselves: AUTOMATIC1111's, numba's
    ("Traceback (most recent call last):\n  File \"launch.py\", line 48, in <module>\nRuntimeError: Torch is not able "
     "to use GPU; add --skip-torch-cuda-test to COMMANDLINE_ARGS variable to disable this check", "no-driver-found"),
    ("numba.cuda.cudadrv.error.CudaSupportError: Error at driver init:\nCUDA driver library cannot be found.\nIf you "
     "are sure that a CUDA driver is installed,", "no-driver-found"),
    ("numba.cuda.cudadrv.error.NvvmSupportError: libNVVM cannot be found. Do `conda install cudatoolkit`:\nlibrary "
     "nvvm not found", "cuda-lib-missing"),
    # rootless runtimes and Apptainer's --nv
    ("Error: OCI runtime error: crun: error executing hook `/usr/bin/nvidia-container-toolkit` (exit code: 1)\n"
     "nvidia-container-cli: mount error: failed to add device rules: unable to find any existing device filters "
     "attached to the cgroup: bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted: unknown",
     "container-no-driver"),
    # (Apptainer's --nv notice "Could not find any nv files on this host!" is only possible since the
    # twelfth round: tests/explain/test_emitter_round12.py)
    # nvcc itself missing; ptxas older than the PTX, the driver's JIT linker older than it
    ("/bin/sh: 1: nvcc: not found\nninja: build stopped: subcommand failed.", "cuda-home-unset"),
    ("error: [Errno 2] No such file or directory: '/opt/cuda-12.4/bin/nvcc'", "cuda-home-unset"),
    ("ptxas /tmp/tmp3x/kernel.ptx, line 5; fatal   : Unsupported .version 8.7; current version is '8.5'\nptxas fatal   "
     ": Ptx assembly aborted due to errors", "ptxas-too-old"),
    ("numba.cuda.cudadrv.driver.LinkerError: [222] Call to cuLinkAddData results in UNKNOWN_CUDA_ERROR\nptxas "
     "application ptx input, line 9; fatal   : Unsupported .version 8.1; current version is '7.6'",
     "ptx-toolchain-too-new"),
    # TensorFlow skipping a GPU below its build's minimum
    ("I tensorflow/core/common_runtime/gpu/gpu_device.cc:1934] Ignoring visible gpu device (device: 0, name: Quadro "
     "K4000, pci bus id: 0000:03:00.0, compute capability: 3.0) with Cuda compute capability 3.0. The minimum "
     "required Cuda capability is 3.5.", "gpu-too-old"),
    # flash-attn's setup.py on an older nvcc
    ("RuntimeError: FlashAttention is only supported on CUDA 11.6 and above.  Note: make sure nvcc has a supported "
     "version by running nvcc -V.", "toolkit-torch-mismatch"),
    # vLLM's gate on a quantization method
    ("ValueError: The quantization method gptq_marlin is not supported for the current GPU. Minimum capability: 80. "
     "Current capability: 75.", "gpu-too-old"),
    # the driver's module never built
    ("ERROR: Unable to find the kernel source tree for the currently running kernel.  Please make sure you have "
     "installed the kernel source files", "nvidia-smi-no-driver"),
    ("Building module:\ncleaning build area...\nError! Bad return status for module build on kernel: 6.1.0-18-amd64 "
     "(x86_64)\nConsult /var/lib/dkms/nvidia-current/525.147.05/build/make.log for more information.",
     "nvidia-smi-no-driver"),
    # no host compiler for a build or a JIT, in each caller's words; Python's headers missing
    ("  File \"/venv/lib/python3.11/site-packages/triton/runtime/build.py\", line 32, in _build\nRuntimeError: Failed "
     "to find C compiler. Please specify via CC environment variable or set triton.knobs.build.impl.",
     "host-compiler-missing"),
    ("torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:\nInvalidCxxCompiler: No working C++ compiler "
     "found in torch._inductor.config.cpp.cxx: (None, 'g++')", "host-compiler-missing"),
    ("nvcc fatal   : Cannot find compiler 'cl.exe' in PATH", "host-compiler-missing"),
    ("      error: Microsoft Visual C++ 14.0 or greater is required. Get it with \"Microsoft C++ Build Tools\"",
     "host-compiler-missing"),
    ("unable to execute 'x86_64-linux-gnu-gcc': No such file or directory\nerror: command 'x86_64-linux-gnu-gcc' "
     "failed with exit status 1", "host-compiler-missing"),
    ("error: command '/opt/conda/bin/x86_64-conda-linux-gnu-c++' failed: No such file or directory",
     "host-compiler-missing"),
    ("/tmp/tmpab12/main.c:5:10: fatal error: Python.h: No such file or directory\n    5 | #include <Python.h>\n"
     "compilation terminated.", "python-headers-missing"),
    # CMake's CUDA discovery
    ("CMake Error at /usr/share/cmake-3.28/Modules/CMakeDetermineCUDACompiler.cmake:180 (message):\n  Failed to find "
     "nvcc.\n\n  Compiler requires the CUDA toolkit.  Please set the CUDAToolkit_ROOT\n  variable.", "cuda-home-unset"),
    ("CMake Error at csrc/CMakeLists.txt:12 (enable_language):\n  No CMAKE_CUDA_COMPILER could be found.",
     "cuda-home-unset"),
    ("CMake Error at /usr/share/cmake-3.22/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n  Could NOT "
     "find CUDA (missing: CUDA_TOOLKIT_ROOT_DIR CUDA_NVCC_EXECUTABLE CUDA_INCLUDE_DIRS)", "cuda-home-unset"),
    ("CMake Error at CMakeLists.txt:5 (project):\n  No CUDA toolset found.", "cuda-home-unset"),
    # the toolkit's headers and link libraries absent from a build
    ("/opt/venv/lib/python3.10/site-packages/torch/include/ATen/cuda/CUDAContext.h:5:10: fatal error: "
     "cuda_runtime_api.h: No such file or directory\n    5 | #include <cuda_runtime_api.h>", "cuda-home-unset"),
    ("C:/venv/include/c10/cuda/CUDAStream.h(5): fatal error C1083: Cannot open include file: 'cuda_runtime_api.h': "
     "No such file or directory", "cuda-home-unset"),
    ("/usr/bin/ld: cannot find -lcublas: No such file or directory", "cuda-home-unset"),
    ("src/conv.cpp:3:10: fatal error: cudnn.h: No such file or directory", "cudnn-lib-missing"),
    # pip: a build that imports torch under build isolation; no wheel for this Python/platform/index
    ("  Preparing metadata (pyproject.toml) ... error\n  error: subprocess-exited-with-error\n  File \"<string>\", "
     "line 19, in <module>\n  ModuleNotFoundError: No module named 'torch'", "build-isolation-no-torch"),
    ("ERROR: Could not find a version that satisfies the requirement torchaudio==0.13.1+cu116 (from versions: 2.5.0)\n"
     "ERROR: No matching distribution found for torchaudio==0.13.1+cu116", "no-wheel-for-platform"),
    # cpp_extension's host-compiler check against the CUDA it builds with, both ways
    ("RuntimeError: The current installed version of g++ (5.4.0) is less than the minimum required version by CUDA "
     "12.4 (6.0.0). Please make sure to use an adequate version of g++ (>=6.0.0, <14.0).", "gcc-too-old"),
    ("RuntimeError: The current installed version of g++ (14.1.1) is greater than the maximum required version by "
     "CUDA 12.1. Please make sure to use an adequate version of g++ (>=6.0.0, <13.0).", "gcc-too-new"),
    # torchvision's ops without a CUDA kernel; gloo's interface lookup; the store's libuv on Windows
    ("NotImplementedError: Could not run 'torchvision::roi_align' with arguments from the 'CUDA' backend. This could "
     "be because the operator doesn't exist for this backend", "torchvision-nms-missing"),
    ("RuntimeError: [enforce fail at C:/actions-runner/_work/pytorch/third_party/gloo/gloo/transport/tcp/device.cc:83] "
     "ifa != nullptr. Unable to find address for: ens5", "nccl-no-socket-interface"),
    ("torch.distributed.DistStoreError: use_libuv was requested but PyTorch was build without libuv support",
     "store-libuv-missing"),
    # CPU builds of OpenCV and DGL
    ("cv2.error: OpenCV(4.10.0) /io/opencv/modules/core/include/opencv2/core/private.cuda.hpp:112: error: "
     "(-216:No CUDA support) The library is compiled without CUDA support in function 'throw_no_cuda'",
     "torch-not-cuda"),
    ("dgl._ffi.base.DGLError: [12:00:01] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check failed: allow_missing: "
     "Device API cuda is not enabled. Please install the cuda version of dgl.", "torch-not-cuda"),
    # Windows' own loader dialogs, by the DLL they name
    ("python.exe - System Error\nThe code execution cannot proceed because cudnn_ops_infer64_8.dll was not found. "
     "Reinstalling the program may fix this problem.", "cudnn-lib-missing"),
    ("The code execution cannot proceed because cufft64_10.dll was not found.", "cuda-lib-missing"),
    ("The code execution cannot proceed because cudart64_12.dll was not found.", "cudart-lib-missing"),
    ("The code execution cannot proceed because VCRUNTIME140_1.dll was not found. Reinstalling the program may fix "
     "this problem.", "windows-dll-load-failed"),
    ("The procedure entry point ?empty@at@@YA?AVTensor@1@V?$ArrayRef@_J@c10@@ could not be located in the dynamic "
     "link library C:/venv/Lib/site-packages/torch/lib/torch_cpu.dll.", "windows-dll-load-failed"),
    # torch.distributed's NCCL check on Windows
    ('File "C:\\Users\\me\\train.py", line 40\n    dist.init_process_group("nccl")\nRuntimeError: Distributed '
     "package doesn't have NCCL built in", "nccl-not-built"),
]


@pytest.mark.parametrize("text, cause", CASES)
def test_each_emitter_family_names_its_cause(text, cause):
    got = _top(text)
    assert got and got[0] == cause and got[1] in ("exact", "likely"), (got, _answers(text))


@pytest.mark.parametrize("text", [
    # TensorFlow's cudart stub prints this on every CPU-only machine: only possible
    "I tensorflow/tsl/cuda/cudart_stub.cc:28] Could not find cuda drivers on your machine, GPU will not be used.",
    # TensorRT, an optional library TensorFlow looks for on every start
    "W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library "
    "'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory",
    # a heartbeat monitor that is not torch's
    "2025-01-01 watchdog: heartbeat monitor timed out for service api-gateway",
    # a ROCm user in the group: not a permission problem
    "alice is member of render group",
    # DKMS failing on another module than NVIDIA's
    "Error! Bad return status for module build on kernel: 6.1.0-18-amd64 (x86_64)\nConsult "
    "/var/lib/dkms/zfs/2.1.11/build/make.log for more information.",
    # a compiler that ran and failed, or whose output torch could not decode
    "error: command 'gcc' failed with exit status 1",
    "UserWarning: Error checking compiler version for cl: 'utf-8' codec can't decode byte 0xd3 in position 0",
    "/bin/sh: 1: distcc: not found",
    # a project's own header
    "src/kernels.cu:2:10: fatal error: mycuda_utils.h: No such file or directory",
    # another library whose name starts the same
    "/usr/bin/ld: cannot find -lcudart_static",
    # gloo's words without gloo: an address lookup of something else
    "ValueError: Unable to find address for: printer-queue",
    # torch missing at run time, not in a build; a package nobody here knows without a wheel
    "Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n    import torch\n"
    "ModuleNotFoundError: No module named 'torch'",
    "ERROR: Could not find a version that satisfies the requirement leftpad-utils==9.9 (from versions: none)",
    # a driver file mount error that is not about an existing file
    "nvidia-container-cli: mount error: stat failed: /dev/nvidia-modeset: no such file or directory: unknown",
])
def test_no_confident_environment_cause(text):
    assert [i for i, c in _answers(text).items() if c in ("exact", "likely")] == [], _answers(text)


def test_the_device_index_assert_with_mig_slices_is_one_mig_device_per_process():
    text = ("CUDA_VISIBLE_DEVICES=MIG-5c1a2b3c-0000-1111-2222-333344445555,MIG-9d8e7f6a-0000-1111-2222-333344445555\n"
            "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at \"../aten/src/ATen/cuda/"
            "CUDAContext.cpp\":50")
    assert _top(text) == ("mig-one-device-per-process", "likely")


def test_torchs_device_index_assert_is_only_possibly_a_missing_gpu():
    text = ('RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at '
            '"/opt/pytorch/aten/src/ATen/cuda/CUDAContext.cpp":50, please report a bug to PyTorch.')
    assert _top(text) == ("invalid-device-ordinal", "possible")


@pytest.mark.parametrize("text", [
    "File \"/home/u/train.py\", line 3\nRuntimeError: Distributed package doesn't have NCCL built in",
    # a URL's scheme is not a drive letter, a sliding window not Windows
    "Downloading https://example.org/w.pt\nsliding windows of 512\nRuntimeError: Distributed package doesn't "
    "have NCCL built in",
])
def test_no_nccl_on_linux_is_still_a_cpu_only_torch(text):
    assert _top(text)[0] == "torch-not-cuda"


@pytest.mark.parametrize("text, pkg", [
    ("Specified provider 'CUDAExecutionProvider' is not in available provider names.Available providers: "
     "'CPUExecutionProvider'", "onnxruntime"),
    ("An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed.", "jaxlib"),
    ("AssertionError: Torch not compiled with CUDA enabled", "torch"),
])
def test_the_cpu_only_build_is_named_by_its_framework(text, pkg):
    e = top_environment_cause(explain(text))
    assert e.id == "torch-not-cuda" and f"A CPU-only {pkg}" in e.title, e.title
    assert (pkg == "torch") == ("PyTorch index" in e.fix), e.fix


def test_a_windows_dll_names_its_library_in_the_title():
    e = top_environment_cause(explain("Could not load dynamic library 'curand64_10.dll'; dlerror: curand64_10.dll not found"))
    assert e.id == "cuda-lib-missing" and "curand64_10" in e.title and e.values.get("ver") == "10"
