"""The twenty-ninth round, heldout29's 0-9/a-h part, texts 1-19 (arrayfire/arrayfire-python#39 to
lululxvi/deepxde#37, the i-r texts 18-19 with it): what its misses and its two confident negatives
(scored once at 3823f6e, then read) showed that is general, mended from what the emitter prints
and what it means, with texts other than any held-out one and look-alikes that keep their answers.

- COLMAP's CUDA build, asked for every GPU (gpu_index -1, its default, in SIFT extraction and
  matching and in patch-match stereo), counts them (src/util/cuda.cc GetNumCudaDevices:
  cudaGetDeviceCount; today's src/colmap/util/cuda.cc returns 0 on cudaErrorNoDevice and
  cudaErrorInsufficientDriver) and checks glog's CHECK_GT(num_cuda_devices, 0) (THROW_CHECK_GT
  from 3.9): "Check failed: num_cuda_devices > 0 (0 vs. 0)", with "No CUDA devices available" from
  SetBestCudaDevice, and "num_devices" in today's FindBestCudaDevice. The code is compiled only
  #ifdef CUDA_ENABLED, so the CUDA runtime counted no GPU: no-driver-found, likely (colmap#1032 got
  nothing; the maintainer: "Colmap cannot find a GPU that is able to run CUDA"). A bare
  "num_devices > 0 (0 vs. 0)" names no CUDA and is not read.
- ArrayFire's Python binding of 2015 (arrayfire/library.py, Aug - Dec 2015, before the unified
  backend): libafcpu, libafopencl and libafcuda each loaded with ctypes.CDLL under a bare except,
  the import failing when none loads ("Could not load any ArrayFire libraries"), and
  af.backend.set(name) raising "Could not load any ArrayFire %s backend" for one that did not. For
  cuda another backend of the same install loaded, so libafcuda's own dependencies did not: the
  CUDA toolkit's libraries, NVVM's in cuda/nvvm/lib64 among them, which ArrayFire's install notes
  put on LD_LIBRARY_PATH. cuda-lib-missing, likely (arrayfire-python#39: "you need to set
  LD_LIBRARY_PATH to point to cuda/nvvm/lib64 as well"). Its opencl backend is not read.
- OpenMM's Platform::getPlatformByName (olla/src/Platform.cpp: "There is no registered Platform
  called \\"%s\\""): the CUDA platform registers itself when its plugin, libOpenMMCUDA.so, loads at
  import; a plugin that does not load is only listed by Platform.getPluginLoadFailures(). It links
  the driver's libcuda and the cuFFT of the CUDA it was built with (7.4
  platforms/cuda/sharedTarget/CMakeLists.txt), and the omnia and conda builds are made per CUDA
  release: most often that CUDA's libraries are not found (OpenMM's maintainers in openmm#1233,
  #1991: each binary works only with the CUDA it was compiled against). cuda-lib-missing, likely
  (essex-lab/grand#7: "OpenMM not being able to find your CUDA installation"); where the plugin's
  load failure printed before it names libcuda.so.1 that answers (no-driver-found), and one naming
  a CUDA library keeps the loader's exact answer. Other platforms (OpenCL, CPU) are not read.
- libnvidia-container's requirement check (src/cli/dsl.c dsl_evaluate: "invalid expression" when
  evaluate_rule knows no rule of a term's name or finds no operator; configure.c prints
  "nvidia-container-cli: requirement error: %s"). Its rules are cuda, driver, arch (1.0.0~alpha.2)
  and brand, added in 1.0.0 (September 2018, "Add device brand to the device informations and
  requirements"), when the CUDA 10.0 images' NVIDIA_REQUIRE_CUDA gained "brand=tesla,driver>=384,
  driver<385": a CLI before 1.0 finds that term invalid. With a brand= term in the hook's --require
  list, container-toolkit-too-old, likely (awsdocs/amazon-eks-user-guide#22 got driver-too-old from
  the key table: the EKS GPU AMI of 2018 "only supports CUDA image versions < 10.0"); without one,
  where a malformed requirement of the image's or the user's reads the same, possible. The id's
  title and cause, written for cgroup v2 alone, now name both (test_emitter_round14_dist.py follows).
  "unsatisfied condition" keeps driver-too-old.
- MNN's scheduler (source/core/Schedule.cpp getApprociateType: "Can't Find type=%d backend, use %d
  instead") when no runtime creator is registered for the forward type asked; type 2 is
  MNN_FORWARD_CUDA from 1.1 (include/MNN/MNNForwardType.h), whose creator
  source/backend/cuda/Register.cpp registers when the library loads in a build with MNN_CUDA=ON:
  this MNN has no CUDA backend, the PyPI wheels' case (pymnn's build_deps.py adds -DMNN_CUDA=ON only
  when asked). torch-not-cuda with MNN as the package, likely; alibaba/MNN#2297 relabelled from
  `other:` to torch-not-cuda by the id's own definition, "A CPU-only {pkg} is installed", as round
  18 did for the CPU-only jaxlibs (was: in the file). Other types (OpenCL 3, Vulkan 7, Metal 1) are
  not read.

The two confident negatives stay, and why: lammps/lammps#2343 (nvcc-arch-dropped, exact) is nvcc's
own "Unsupported gpu architecture 'compute_30'": LAMMPS's 24Aug2020 CMake fatbin step asked an nvcc
newer than CUDA 10.2 for compute_30, which is what the id says (the build's arch list names an arch
this nvcc has dropped) and its fix, removing compute_30 from that list, is the build's; no word of
the text tells a project's stale list from a user's. jina-ai/executor-clip-encoder#7 (no-kernel-image) is another part's text.

Left, and why: alpa-projects/alpa#896 (gcc-too-old): the text is the shell's "27348 segmentation
fault  python quickstart.py", naming nothing. aws/aws-ofi-nccl#663 (`other:`, the EC2 security
group without the outbound self-rule EFA needs) keeps nccl-internal-error, likely: the text is
torch's "ncclInternalError: Internal check failed." with the plugin's "Unable to insert remote
address into address vector" (fi_av_insert failing for the peer's EFA address), NCCL's internal
error indeed; a cloud network rule has no id, and a later reporter in the same thread met the line
with the rule in place. The negatives without confidence stay as they were. No other relabels."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, top_id, top_with_confidence, whole_cause


# --- COLMAP's count of CUDA devices ---------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "F0312 10:22:11.123456 12345 patch_match.cc:399] Check failed: num_cuda_devices > 0 (0 vs. 0)\n"
    "*** Check failure stack trace: ***\n    @     0x7f3a1c2d4b0d  google::LogMessage::Fail()",
    "F1103 08:01:02.000000  4711 cuda.cc:66] Check failed: num_cuda_devices > 0 (0 vs. 0) No CUDA devices available",
    # today's FindBestCudaDevice
    "E20260101 12:00:00.000000 1 cuda.cc:66] Check failed: num_devices > 0 (0 vs. 0) No CUDA devices available",
])
def test_colmap_counting_no_cuda_device_is_no_driver_or_gpu(text):
    assert top_with_confidence(text) == ("no-driver-found", "likely")


@pytest.mark.parametrize("text", [
    # a count of something else, or of devices not said to be CUDA's
    "Check failed: num_devices > 0 (0 vs. 0)",
    "Check failed: gpu_indices.size() > 0 (0 vs. 0)",
])
def test_other_count_checks_are_not_read(text):
    assert "no-driver-found" not in answers(text)


# --- ArrayFire's 2015 binding without its CUDA backend --------------------------------------------

def test_arrayfire_cuda_backend_not_loading_is_a_cuda_library_missing():
    text = ('  File "/home/u/.local/lib/python2.7/site-packages/arrayfire/library.py", line 59, in set\n'
            '    raise RuntimeError("Could not load any ArrayFire %s backend" % name)\n'
            "RuntimeError: Could not load any ArrayFire cuda backend")
    assert top_with_confidence(text) == ("cuda-lib-missing", "likely")
    assert "LD_LIBRARY_PATH" in whole_cause(text)["cause"]


@pytest.mark.parametrize("text", [
    "RuntimeError: Could not load any ArrayFire opencl backend",
    "RuntimeError: Could not load any ArrayFire libraries.\n"
    "Please look at https://github.com/arrayfire/arrayfire-python/wiki for more information.",
])
def test_arrayfire_other_load_failures_are_not_a_cuda_library(text):
    assert "cuda-lib-missing" not in answers(text)


# --- OpenMM's CUDA platform not registered --------------------------------------------------------

@pytest.mark.parametrize("text", [
    'openmm.OpenMMException: There is no registered Platform called "CUDA"',
    # the C++ API's examples print the exception so
    'EXCEPTION: There is no registered Platform called "CUDA"',
])
def test_openmm_without_its_cuda_platform_is_a_cuda_library_missing(text):
    assert top_with_confidence(text) == ("cuda-lib-missing", "likely")


@pytest.mark.parametrize("text, want", [
    # the plugin's load failure, printed before, names the library: that answers
    ("('Error loading library /home/u/miniconda3/envs/md/lib/plugins/libOpenMMCUDA.so: libcuda.so.1: cannot open "
     "shared object file: No such file or directory',)\n"
     'openmm.OpenMMException: There is no registered Platform called "CUDA"', ("no-driver-found", "likely")),
    ("('Error loading library /opt/conda/lib/plugins/libOpenMMCUDA.so: libcufft.so.10: cannot open shared object "
     "file: No such file or directory',)\n"
     'openmm.OpenMMException: There is no registered Platform called "CUDA"', ("cuda-lib-missing", "exact")),
    # other platforms are not CUDA's
    ('Exception: There is no registered Platform called "OpenCL"', None),
    ('EXCEPTION: There is no registered Platform called "CPU"', None),
])
def test_openmm_look_alikes_keep_their_answers(text, want):
    assert top_with_confidence(text) == want


# --- nvidia-container-cli before brand requirements -----------------------------------------------

_HOOK = ('docker: Error response from daemon: OCI runtime create failed: container_linux.go:348: starting container '
         'process caused "process_linux.go:402: container init caused \\"process_linux.go:385: running prestart hook '
         '1 caused \\\\\\"error running hook: exit status 1, stdout: , stderr: exec command: '
         '[/usr/bin/nvidia-container-cli --load-kmods configure --ldconfig=@/sbin/ldconfig.real --device=all '
         '--compute --utility --require=cuda>=10.1 brand=tesla,driver>=384,driver<385 '
         'brand=tesla,driver>=396,driver<397 brand=tesla,driver>=410,driver<411 --pid=3101 '
         '/var/lib/docker/overlay2/5f0c2e/merged]\\\\\\\\n')


def test_a_cli_without_brand_rules_is_a_toolkit_too_old():
    text = _HOOK + 'nvidia-container-cli: requirement error: invalid expression\\\\\\\\n\\\\\\"\\"": unknown.'
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("container-toolkit-too-old", "likely")
    assert got["title"] == "The NVIDIA Container Toolkit is too old for this host or image"
    assert "brand" in got["cause"] and "CUDA 9.2" in got["fix"]


def test_an_invalid_requirement_with_no_brand_term_shown_is_a_lead():
    text = "stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: requirement error: invalid expression: unknown."
    assert top_with_confidence(text) == ("container-toolkit-too-old", "possible")


@pytest.mark.parametrize("text, want", [
    # a requirement the CLI parsed and the driver does not meet
    ("nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.2, please update your driver to a "
     "newer version, or use an earlier cuda container", "driver-too-old"),
    (_HOOK + "nvidia-container-cli: requirement error: unsatisfied condition: brand = tesla", "driver-too-old"),
    # the cgroup v2 message keeps its exact answer
    ("nvidia-container-cli: container error: cgroup subsystem devices not found: unknown.", "container-toolkit-too-old"),
])
def test_other_requirement_errors_keep_their_answers(text, want):
    assert top_id(text) == want
    if want != "container-toolkit-too-old":
        assert "container-toolkit-too-old" not in answers(text)


# --- MNN without its CUDA backend -----------------------------------------------------------------

def test_mnn_without_a_cuda_runtime_creator_is_a_cpu_only_build():
    text = ("The device support i8sdot:0, support fp16:0, support i8mm: 0\n"
            "Can't Find type=2 backend, use 0 instead")
    got = whole_cause(text)
    assert (got["id"], got["confidence"]) == ("torch-not-cuda", "likely")
    assert got["title"] == "A CPU-only MNN (no CUDA backend) is installed"
    assert "-DMNN_CUDA=ON" in got["fix"]


@pytest.mark.parametrize("text", [
    # OpenCL, Vulkan and Metal are not CUDA's
    "Can't Find type=3 backend, use 0 instead",
    "Can't Find type=7 backend, use 0 instead",
    "Can't Find type=1 backend, use 0 instead",
])
def test_mnn_other_backends_missing_are_not_read(text):
    assert top_id(text) is None
