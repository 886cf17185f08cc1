"""The nineteenth round, heldout19's first part: what its misses (scored once, then read) showed
that is general, mended from what the emitter prints and what it means, with texts other than any
held-out one and look-alikes that must stay where they were.

- faiss's GPU index constructor (gpu/GpuIndex.cu: FAISS_THROW_IF_NOT_FMT(config_.device <
  getNumDevices(), "Invalid GPU device %d", ...), printed after "Error: '%s' failed: "): a device
  number past the GPUs the process sees (invalid-device-ordinal).
- A build rule naming a CUDA toolkit library under an empty $CUDA_HOME, so the path starts at the
  root (ninja's "'%s', needed by '%s', missing and no known rule to make it", GNU make's "No rule to
  make target '%s', needed by '%s'"): CUDA_HOME unset for the build (cuda-home-unset).
- glibc's loader starting an executable ("%s: error while loading shared libraries: %s: %s") that
  cannot find libtorch's libraries: a program linked against libtorch (C++, tch-rs) run without
  libtorch's lib directory on its loader path, not an extension built against another torch
  (undefined-symbol no more); no id says it, so no confident cause."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, whole_cause as _whole



# --- faiss: a GPU index on a device the process does not have --------------------------------------

_ORDINAL = {
    "id": "invalid-device-ordinal", "confidence": "likely",
    "title": "A rank asked for a GPU the node does not have",
    "cause": "torch.cuda.set_device / .to('cuda:N') with N >= the visible GPU count: more ranks per node than "
             "GPUs, a hard-coded device index, or CUDA_VISIBLE_DEVICES hiding GPUs.",
    "fix": "Start --nproc-per-node ranks equal to the GPUs each node shows (nvidia-smi -L) and use LOCAL_RANK "
           "as the device; check CUDA_VISIBLE_DEVICES.",
}


@pytest.mark.parametrize("text", [
    "Traceback (most recent call last):\n  File \"build_index.py\", line 22, in <module>\n"
    "    index = faiss.GpuIndexFlatL2(res, 128, cfg)\n"
    "RuntimeError: Error in faiss::gpu::GpuIndex::GpuIndex(std::shared_ptr<faiss::gpu::GpuResources>, int, "
    "faiss::MetricType, float, faiss::gpu::GpuIndexConfig) at /project/faiss/faiss/gpu/GpuIndex.cu:46: "
    "Error: 'config_.device < getNumDevices()' failed: Invalid GPU device 3",
    "terminate called after throwing an instance of 'faiss::FaissException'\n"
    "  what():  Error in faiss::gpu::GpuIndex::GpuIndex at gpu/GpuIndex.cu:52: "
    "Error: 'device_ < getNumDevices()' failed: Invalid GPU device 2\nAborted (core dumped)",
])
def test_faiss_invalid_gpu_device_is_an_invalid_device_ordinal(text):
    assert _whole(text) == _ORDINAL


@pytest.mark.parametrize("text, want", [
    # faiss's other checks in the same constructor: the program's arguments, not the GPU count
    ("RuntimeError: Error in faiss::gpu::GpuIndex::GpuIndex at gpu/GpuIndex.cu:49: "
     "Error: 'dims > 0' failed: Invalid number of dimensions", {}),
    # another program's own "Invalid GPU device %d" without faiss's check before it
    ("processinfo: Invalid GPU device 1", {}),
])
def test_the_other_faiss_checks_keep_their_answers(text, want):
    assert answers(text) == want


# --- a build rule under an empty CUDA_HOME ----------------------------------------------------------

_NO_TOOLKIT = ("cuda-home-unset", "likely", "No CUDA toolkit found for compiling GPU code")


@pytest.mark.parametrize("text", [
    "ninja: error: '/lib64/libcublas.so', needed by 'build/lib.linux-x86_64-cpython-310/fused_ops.so', "
    "missing and no known rule to make it",
    "make[2]: *** No rule to make target '/lib64/libcudart_static.a', needed by 'bin/solver'.  Stop.\n"
    "make[1]: *** [CMakeFiles/Makefile2:97: CMakeFiles/solver.dir/all] Error 2",
    "make: *** No rule to make target `/lib/libcufft.so', needed by `spectral'.  Stop.",
])
def test_a_toolkit_library_at_the_root_is_cuda_home_unset(text):
    got = _whole(text)
    assert (got["id"], got["confidence"], got["title"]) == _NO_TOOLKIT


@pytest.mark.parametrize("text, want", [
    # a toolkit path with its prefix: CUDA_HOME set, the library not there (the versioned name the
    # loader reads, as before)
    ("ninja: error: '/usr/local/cuda/lib64/libcudart.so', needed by 'x.so', missing and no known rule to make it",
     {"cudart-lib-missing": "possible"}),
    # another library at the root: not the toolkit's
    ("ninja: error: '/lib64/libsquirrel_static.a', needed by 'supertux2', missing and no known rule to make it", {}),
])
def test_the_other_missing_build_inputs_keep_their_answers(text, want):
    assert answers(text) == want


# --- an executable that cannot find libtorch ---------------------------------------------------------

@pytest.mark.parametrize("text", [
    "./build/resnet_infer: error while loading shared libraries: libtorch_cpu.so: cannot open shared object "
    "file: No such file or directory",
    "target/release/trainer: error while loading shared libraries: libc10.so: cannot open shared object file: "
    "No such file or directory",
])
def test_an_executable_without_libtorch_on_its_path_is_not_another_torch(text):
    assert "undefined-symbol" not in answers(text)
    assert not [c for c in answers(text).values() if c in ("exact", "likely")]


@pytest.mark.parametrize("text, want", [
    # Python importing an extension that needs a torch library this torch does not have: as before
    ("ImportError: libtorch_cuda.so: cannot open shared object file: No such file or directory",
     {"undefined-symbol": "likely"}),
    ("OSError: libtorch_cuda_cu.so: cannot open shared object file: No such file or directory",
     {"undefined-symbol": "likely"}),
])
def test_the_extension_imports_keep_their_answers(text, want):
    assert answers(text) == want
