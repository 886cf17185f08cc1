"""The thirtieth round, heldout30's g-m part, texts 22-55 (the collector's g-m owners,
jax-ml/jax#35 to IPPL-framework/ippl#119 in file order): what its misses and its confident
negatives (scored once, then read) showed that is general, mended from what the emitter prints and
what it means, with texts other than any held-out one and look-alikes that keep their answers.

- MadGraph5_aMC@NLO's CUDA/C++ plugin (madgraph4gpu, SubProcesses/cudacpp.mk) looks for nvcc
  through CUDA_HOME, then PATH. With none found and REQUIRE_CUDA set it stops:
  $(error No cuda installation found (set CUDA_HOME or make nvcc visible in PATH)), the toolkit
  missing for a build that asked for it: cuda-home-unset, likely. Otherwise it only warns,
  $(warning CUDA_HOME is not set or is invalid: export CUDA_HOME to compile with cuda) ("...
  invalid. Export ..." in 2022's releases), empties NVCC, CUINC and CURANDLIBFLAGS and goes on with
  the C++ backends: a notice that the GPU build is skipped, and whatever stops the build later is
  its own. The catalogue's vLLM template "CUDA_HOME is not set" read the notice as vLLM's error
  (likely), a confident answer on madgraph4gpu#503 (a negative: the Fortran driver still linked
  the CUDA library when only C++ was built, the maintainer's own issue). Now cuda-home-unset,
  possible, a lead: the wording's span covers the catalogue's hit.
- bert-as-service's server (server/bert_serving/server/__init__.py: "no GPU resource available,
  fall back to CPU" from December 2018, "no GPU available, fall back to CPU" from 2019) prints its
  fallback when GPUtil.getAvailable() lists no GPU under its load and memory bounds: every GPU
  busy with other processes. GPUtil 1.4's getGPUs() returns [] when nvidia-smi cannot be run at
  all (a bare except around its Popen), so a machine with no GPU or no driver reads the same:
  gpu-busy-or-unavailable, possible, a lead.

Left, and why: jina-ai/clip-as-service#81 (gpu-busy-or-unavailable, a label the collector
flagged: the reporter later found tensorflow-gpu installed instead of tensorflow) is the title
'"no available GPU thus back-off to CPU". How to support it?': the reporter's paraphrase, in words
no release of the server printed (its history has "only %d GPU(s) is available, but ask for %d",
"nvidia-smi is missing ... will run service on cpu instead" and the two fallbacks above, no
"back-off"); the server's own words are now read, the paraphrase is not. The `other:` positives
llnl/smith#480, mfem/mfem#619, microsoft/onnxruntime#8907, lmstudio-bug-tracker#447,
mozilla/DeepSpeech#3494, HolyWu/vs-dpir#20, isaac-sim/IsaacSim#537 and IPPL-framework/ippl#119 get
no answer, as an `other:` cause should (an MFEM/spack arch default, a hypre GPU build under MFEM
3.4, a driver release, a Cray MPI fault ...). keras-team/keras#13984 (`other:`, TF/CUDA versions)
keeps cudnn-version-mismatch as a lead only (possible: cuDNN's BAD_PARAM from
cudnnSetTensorNdDescriptor in TensorFlow's cuda_dnn.cc), not confident. gpustack/gpustack#4678
(`other:`, the vLLM >= 0.15 image's ld.so.conf leaving CUDA driver libraries that do not match the
host's driver) keeps nvml-driver-mismatch, likely, then cuda-compat-unsupported: the CUDA
driver's error 803 "system has unsupported display driver / cuda driver combination" is what it
reads, and the thread's own words are "a CUDA driver/library mismatch"; not relabelled, as the
thread does not say which libraries the ldcache put first (the image's CUDA forward-compat
libcuda would be the second reading). Confident negatives that stay, each showing only an
environment error's own words: pytorch-CycleGAN-and-pix2pix#310 (the CUDA runtime's error 35,
"CUDA driver version is insufficient for CUDA runtime version", on a machine the reporter wanted
to run on the CPU; the maintainer's fix is the program's --gpu_ids -1; the runtime gives 35 for a
driver older than it and, in the releases of that era, when no libcuda loads at all (plain
docker without the NVIDIA runtime): either way no driver it can use; the thread does not say
which, and nothing in the words is the program's); hpc/ior#451 (gcc's "fatal error:
cuda_runtime.h: No such file or directory" on an EC2 host with no CUDA, cuda-home-unset likely:
true of that host, the fault being ior's configure enabling its CUDA path there, which the
compiler's words cannot show); marian-nmt/marian-dev#899 (the title "NCCL error 2 'unhandled
system error' only with 4 GPUs", nccl-system-error likely: NCCL's own status for a failed system
call, the maintainer's hedged reading an MPI build run on one node, which nothing in the words
names). No relabels. The other texts of the part were hits or negatives answered without
confidence, as scored."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, confident, top_with_confidence


# --- madgraph4gpu's cudacpp.mk: the notice a lead, the REQUIRE_CUDA error likely ----------------

@pytest.mark.parametrize("text", [
    # 2023's wording, a C++-only build going on
    "cudacpp.mk:98: CUDA_HOME is not set or is invalid: export CUDA_HOME to compile with cuda\n"
    "cudacpp.mk:156: Using AVX='avx512z' because this is faster than avx2 for gcc\n"
    "make[1]: Entering directory '/home/u/madgraph4gpu/epochX/cudacpp/gg_tt.mad/SubProcesses/P1_gg_ttx'",
    # 2022's, then a failure of its own
    "cudacpp.mk:110: CUDA_HOME is not set or is invalid. Export CUDA_HOME to compile with cuda\n"
    "make: *** [cudacpp.mk:622: ../../lib/libmg5amc_gg_ttx_cpp.so] Error 1",
])
def test_cudacpp_mks_notice_is_only_a_lead(text):
    assert top_with_confidence(text) == ("cuda-home-unset", "possible")
    assert confident(text) == []


def test_cudacpp_mks_require_cuda_error_is_likely():
    text = ("cudacpp.mk:95: *** No cuda installation found (set CUDA_HOME or make nvcc visible in PATH).  Stop.\n"
            "make: *** [makefile:72: bldcuda] Error 2")
    assert top_with_confidence(text) == ("cuda-home-unset", "likely")


@pytest.mark.parametrize("text", [
    # vLLM's own setup.py error keeps the catalogue's reading
    "RuntimeError: CUDA_HOME is not set",
    # torch.utils.cpp_extension's keeps its exact wording
    "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
])
def test_other_cuda_home_errors_keep_their_answers(text):
    assert text and top_with_confidence(text)[0] == "cuda-home-unset"
    assert "cuda-home-unset" in confident(text)


# --- bert-as-service's fallback to the CPU: a lead ----------------------------------------------

@pytest.mark.parametrize("text", [
    "I:VENTILATOR:[__i:_ru: 81]:bind all sockets\nW:VENTILATOR:[__i:_ru:104]:no GPU resource available, fall "
    "back to CPU",
    "W:PREDICTOR:[__i:_ru:246]:no GPU available, fall back to CPU\nI:WORKER-0:[__i:_ru:493]:use device cpu, "
    "load graph from /tmp/tmpq3k9f0",
])
def test_bert_as_services_fallback_is_a_lead_for_busy_gpus(text):
    assert top_with_confidence(text) == ("gpu-busy-or-unavailable", "possible")


def test_other_fallbacks_to_the_cpu_keep_their_answers():
    # JAX's backend warning stays the lead it was (a jaxlib without its CUDA plugin)
    text = "WARNING:absl:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)"
    assert "gpu-busy-or-unavailable" not in answers(text)
    # the server's other branch: nvidia-smi missing is no busy GPU
    text = "W:VENTILATOR:nvidia-smi is missing, often means no gpu on this machine. fall back to cpu!"
    assert "gpu-busy-or-unavailable" not in answers(text)
