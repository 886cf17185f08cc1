"""The fourteenth round, its distributed, container, driver and other-framework half: what
heldout13's misses (scored once, then read) showed that is general, mended from what the emitter
prints and what it means, with texts other than any held-out one and look-alikes that must stay
where they were.

- torch's ProcessGroupGloo.cpp binds gloo to the loopback when the host name resolves to no usable
  address ("Unable to resolve hostname to a (local) address. Using the loopback address as
  fallback"); with gloo's own connect failing in the same run that is the host name
  (hostname-resolution), alone only a hint (one node works so). gloo's newer connect error
  ("timed out connecting: SO_ERROR: Connection refused, remote=[127.0.1.1]:N") is read as its
  older "connect [127.0.1.1]:N" was.
- NCCL's NVLS setup failing with 'invalid argument' in transport/nvls.cc is the fabric manager
  (restarted under running processes, or not serving the GPUs), NCCL's maintainers' answer.
- nvidia-smi not finding libnvidia-ml.so and taichi's dlopen of the unversioned libcuda.so are the
  driver's library not where the loader looks (libcuda-not-in-ldcache); nvidia-settings' "NVIDIA
  driver is not loaded" (NVML_ERROR_DRIVER_NOT_LOADED) is the kernel module not loaded.
- TensorRT 5-7's deserialize assertion on the engine's size is the program's engine
  (tensorrt-engine-mismatch, workload), only possibly another release's.
- New ids, each from its emitter: jax-plugin-mismatch (jaxlib's plugin version check, XLA's PJRT
  struct-size check), container-toolkit-too-old (libnvidia-container before 1.8 on cgroup v2),
  mpi-slurm-pmi (Open MPI started by srun without a PMI shared with Slurm)."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, confident, whole

GLOO_FALLBACK = ("[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the "
                 "loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME. "
                 "(function operator())\n")


_whole = whole


# --- a host name resolving to loopback, in gloo's and torch's newer words ----------------------

@pytest.mark.parametrize("text, want", [
    # the fallback warning, then gloo's full-mesh connect failing in the same run
    ("[rank3]:[W1105 08:12:44.118 ProcessGroupGloo.cpp:727] " + GLOO_FALLBACK.split("] ", 1)[1]
     + "[rank3]: RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] "
     "no error", {"hostname-resolution": "exact"}),
    (GLOO_FALLBACK + "RuntimeError: Gloo connectFullMesh failed with [/pytorch/third_party/gloo/gloo/transport/tcp/"
     "pair.cc:152] timed out connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:40112",
     {"hostname-resolution": "exact", "rendezvous-refused": "exact"}),
    # gloo's newer connect error at the /etc/hosts entry of a peer's host name
    ("RuntimeError: Gloo connectFullMesh failed with [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:144] "
     "timed out connecting: SO_ERROR: Connection refused, remote=[127.0.1.1]:53711",
     {"hostname-resolution": "exact", "rendezvous-refused": "exact"}),
])
def test_gloo_bound_to_a_loopback_its_peers_cannot_reach_is_the_host_name(text, want):
    assert answers(text) == want


@pytest.mark.parametrize("text, want", [
    # the warning in a one-node run that works: a hint only
    ("INFO 03-14 09:01:12 selector.py:135] Using Flash Attention backend.\n[rank0]:" + GLOO_FALLBACK
     + "INFO 03-14 09:01:15 model_runner.py:1072] Loading model weights took 6.12 GB",
     {"hostname-resolution": "possible"}),
    # another program's refused connect beside it is not gloo's
    (GLOO_FALLBACK + "curl: (7) Failed to connect to localhost port 8000: Connection refused",
     {"rendezvous-refused": "exact", "hostname-resolution": "possible"}),
    # a refused connect to a routable address stays the rendezvous's; to 127.0.0.1 (one node whose
    # peer died as often) the host name is only possible, as in gloo's older words
    ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] timed out "
     "connecting: SO_ERROR: Connection refused, remote=[10.0.3.7]:38121", {"rendezvous-refused": "exact"}),
    ("RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] timed out "
     "connecting: SO_ERROR: Connection refused, remote=[127.0.0.1]:38121",
     {"rendezvous-refused": "exact", "hostname-resolution": "possible"}),
])
def test_the_loopback_look_alikes_keep_their_answers(text, want):
    assert answers(text) == want


# --- NCCL's NVLS setup and the fabric manager ---------------------------------------------------

@pytest.mark.parametrize("text", [
    # CUCHECK's words since NCCL 2.19 ("Cuda failure %d '%s'") and before ("Cuda failure '%s'")
    "gpu-node4:88120:88301 [5] transport/nvls.cc:158 NCCL WARN Cuda failure 1 'invalid argument'\n"
    "gpu-node4:88120:88301 [5] NCCL INFO transport/nvls.cc:330 -> 1\ngpu-node4:88120:88301 [5] NCCL INFO init.cc:1277 -> 1",
    "dgx07:5521:5580 [0] transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'\n"
    "dgx07:5521:5580 [0] NCCL INFO init.cc:1093 -> 1",
])
def test_nvls_refused_as_an_invalid_argument_is_the_fabric_manager(text):
    got = _whole(text)
    assert got["id"] == "fabric-manager" and got["confidence"] == "likely"
    assert "NCCL_NVLS_ENABLE=0" in got["fix"] and answers(text) == {"fabric-manager": "likely"}


@pytest.mark.parametrize("text", [
    # another CUDA error in the NVLS setup, the same error in another transport
    "node2:1200:1290 [3] transport/nvls.cc:251 NCCL WARN Cuda failure 2 'out of memory'",
    "node2:1200:1290 [3] transport/p2p.cc:275 NCCL WARN Cuda failure 'invalid argument'",
])
def test_other_nccl_cuda_failures_are_not_the_fabric_manager(text):
    assert "fabric-manager" not in answers(text)


# --- the driver's libraries where the loader does not look; the module not loaded --------------

LDCACHE_FIX = ("Add the directory holding {lib}.1 to /etc/ld.so.conf.d and run `sudo ldconfig` (check `ldconfig -p | "
               "grep libcuda`; in a container, run ldconfig there), or set TRITON_LIBCUDA_PATH to that directory; to "
               "link, use the toolkit's stub (LIBRARY_PATH=/usr/local/cuda/lib64/stubs) or create the libcuda.so symlink.")


def test_nvidia_smi_without_its_nvml_library_is_the_library_not_where_the_loader_looks():
    text = ("root@3f2a9c1b7d44:/workspace# nvidia-smi\nNVIDIA-SMI couldn't find libnvidia-ml.so library in your system. "
            "Please make sure that the NVIDIA Display Driver is properly installed and present in your system.\n"
            "Please also try adding directory that contains libnvidia-ml.so to your system PATH.")
    assert answers(text) == {"libcuda-not-in-ldcache": "likely", "nvidia-smi-no-driver": "possible"}
    assert _whole(text) == {"id": "libcuda-not-in-ldcache", "confidence": "likely",
                            "title": "The driver's libnvidia-ml.so is not where the loader or linker looks for it",
                            "values": {"lib": "libnvidia-ml.so"}, "fix": LDCACHE_FIX.format(lib="libnvidia-ml.so")}


def test_taichi_not_finding_the_unversioned_libcuda_is_the_library_not_where_the_loader_looks():
    text = ("[Taichi] version 1.7.2, llvm 15.0.1, commit 0131dce9, linux, python 3.11.5\n"
            "[W 11/02/25 10:22:07.512 88431] [cuda_driver.cpp:load_lib@36] libcuda.so lib not found.\n"
            "[W 11/02/25 10:22:07.513 88431] [misc.py:adaptive_arch_select@758] Arch=[<Arch.cuda: 3>] is not "
            "supported, falling back to CPU")
    assert _whole(text) == {"id": "libcuda-not-in-ldcache", "confidence": "likely",
                            "title": "The driver's libcuda.so is not where the loader or linker looks for it",
                            "values": {}, "fix": LDCACHE_FIX.format(lib="libcuda.so")}


@pytest.mark.parametrize("text", [
    # the same loader line for taichi's other libraries, and its ROCm backend
    "[W 11/02/25 10:22:07.512 88431] [cuda_driver.cpp:load_lib@36] libcusparse.so lib not found.",
    "[W 11/02/25 10:22:07.512 88431] [amdgpu_driver.cpp:load_lib@35] libamdhip64.so lib not found.",
])
def test_taichi_missing_another_library_is_not_libcuda(text):
    assert "libcuda-not-in-ldcache" not in answers(text)


@pytest.mark.parametrize("text, want", [
    # nvidia-smi on Windows not finding nvml.dll stays the driver's own
    ("C:/Users/me> nvidia-smi\nNVIDIA-SMI couldn't find nvml.dll library in your system. Please make sure that the "
     "NVIDIA Display Driver is properly installed and present in your system.", {"nvidia-smi-no-driver": "likely"}),
    # nvidia-settings' words for NVML_ERROR_DRIVER_NOT_LOADED: the kernel module is not loaded
    ("user@box:~$ nvidia-settings -q GpuUUID\n\nERROR: NVIDIA driver is not loaded\n", {"nvidia-smi-no-driver": "likely"}),
])
def test_the_driver_not_installed_or_not_loaded_stays_nvidia_smi_no_driver(text, want):
    assert answers(text) == want


# --- a TensorRT engine of another build: the program's artifact ---------------------------------

def test_tensorrt_s_engine_size_assertion_is_the_program_s_engine_and_no_confident_environment_cause():
    text = ("trtexec: engine.cpp:1104: bool nvinfer1::rt::Engine::deserialize(const void*, std::size_t, "
            "nvinfer1::IGpuAllocator&, nvinfer1::IPluginFactory*): Assertion `size >= bsize && \"Mismatch between "
            "allocated memory size and expected size of serialized engine.\"' failed.\nAborted (core dumped)")
    first = explain(text)[0]
    assert (first.id, first.kind, first.confidence) == ("tensorrt-engine-mismatch", "workload", "possible")
    assert confident(text) == []


# --- new ids ------------------------------------------------------------------------------------

JAX_FIX = ('Install them together, `pip install -U "jax[cuda12]"` (or `jax[cuda13]`, `jax[tpu]`), or pin '
           "jax-cuda12-plugin and jax-cuda12-pjrt to jaxlib's exact version (`pip list | grep -i jax`).")
JAX_TITLE = "JAX's PJRT plugin is from another release than jaxlib"


@pytest.mark.parametrize("text, values", [
    ("/usr/local/lib/python3.11/dist-packages/jax/_src/xla_bridge.py:1021: RuntimeWarning: JAX plugin "
     "jax_cuda12_plugin version 0.6.2 is installed, but it is not compatible with the installed jaxlib version 0.6.0, "
     "so it will not be used.",
     {"plugin": "jax_cuda12_plugin", "plugin_version": "0.6.2", "jaxlib": "0.6.0"}),
    ("RuntimeWarning: JAX plugin jax_cuda13_plugin version 0.8.1 is installed, but it is not compatible with the "
     "installed jaxlib version 0.8.0, so it will not be used.\n  warnings.warn(",
     {"plugin": "jax_cuda13_plugin", "plugin_version": "0.8.1", "jaxlib": "0.8.0"}),
])
def test_jaxlib_refusing_a_plugin_of_another_release_is_the_plugin_mismatch(text, values):
    assert _whole(text) == {"id": "jax-plugin-mismatch", "confidence": "exact", "title": JAX_TITLE,
                            "values": values, "fix": JAX_FIX}


def test_pjrt_s_struct_size_check_is_the_plugin_mismatch_likely():
    text = ("jaxlib._jax.XlaRuntimeError: INVALID_ARGUMENT: Unexpected PJRT_Plugin_Attributes_Args size: expected 32, "
            "got 24. The plugin is likely built with a later version than the framework. This plugin is built with "
            "PJRT API version 0.61.")
    assert _whole(text) == {"id": "jax-plugin-mismatch", "confidence": "likely", "title": JAX_TITLE,
                            "values": {}, "fix": JAX_FIX}


def test_jax_and_jaxlib_of_different_releases_is_not_the_plugin():
    text = ("RuntimeError: jaxlib version 0.4.30 is newer than and incompatible with jax version 0.4.26. Please update "
            "your jax and/or jaxlib packages.")
    assert "jax-plugin-mismatch" not in answers(text)


def test_libnvidia_container_without_cgroup_v2_is_a_toolkit_too_old():
    text = ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:380: starting container "
            "process caused: process_linux.go:545: container init caused: Running hook #0:: error running hook: exit "
            "status 1, stdout: , stderr: nvidia-container-cli: container error: cgroup subsystem devices not found: "
            "unknown.")
    assert _whole(text) == {
        "id": "container-toolkit-too-old", "confidence": "exact",
        "title": "The NVIDIA Container Toolkit is too old for this host or image", "values": {},
        "fix": "Upgrade nvidia-container-toolkit, libnvidia-container-tools and libnvidia-container1 to 1.8 or later "
               "(the current release from NVIDIA's repository) and restart Docker; booting with "
               "systemd.unified_cgroup_hierarchy=0 is the old workaround for cgroup v2, an image of CUDA 9.2 or "
               "earlier the one for an image's requirement."}


def test_another_nvidia_container_cli_error_is_not_the_cgroup_one():
    assert "container-toolkit-too-old" not in answers(
        "nvidia-container-cli: container error: file lookup failed: /proc/2231/ns/mnt: no such file or directory")


def test_open_mpi_direct_launched_without_a_pmi_is_the_slurm_pmi_mismatch():
    text = ("[gpu-07:41213] OPAL ERROR: Unreachable in file pmix3x_client.c at line 112\n"
            "--------------------------------------------------------------------------\n"
            "The application appears to have been direct launched using \"srun\",\n"
            "but OMPI was not built with SLURM's PMI support and therefore cannot\n"
            "execute. There are several options for building PMI support under\n"
            "SLURM, depending upon the SLURM version you are using:\n")
    assert _whole(text) == {
        "id": "mpi-slurm-pmi", "confidence": "exact",
        "title": "Open MPI started by srun finds no PMI it shares with Slurm", "values": {},
        "fix": "Launch with `srun --mpi=pmix` where `srun --mpi=list` offers it, or with the Open MPI's own `mpirun` "
               "inside the allocation; otherwise rebuild Slurm --with-pmix or Open MPI --with-pmix / --with-pmi "
               "pointing at Slurm's PMI library. A single process outside srun: unset the SLURM_* variables first."}


def test_a_rank_that_exited_under_srun_is_not_the_pmi():
    assert answers("srun: error: gpu-07: task 3: Exited with exit code 1\n"
                   "srun: launch/slurm: _step_signal: Terminating StepId=41213.0") == {}
