"""Messages the key table used to answer, given wordings of their own when it stopped: once
heldout22 was learnt, "falling back to cpu" / "no gpu" and "cudnn" weigh less (heldout22 holds them
in texts of other causes), and the key table's answer for two in-sample texts fell under its bar.
What prints them, and what they mean, is the emitters' (cited at each wording in signatures.yaml):

- JAX's xla_bridge warning when it ends on the CPU backend ("No GPU/TPU found, falling back to
  CPU."): most often a jaxlib without its CUDA plugin (torch-not-cuda for jaxlib, possible: a
  CUDA plugin that failed to start prints its own error first, which names the cause).
- OpenCV's dnn CUDA backend comparing the cuDNN it loads with the one it was built with
  (cuda4dnn/init.hpp checkVersions): cudnn-version-mismatch, likely; not where the two are one
  release that OpenCV 4.10 misreads (cuDNN 9.5 reported as 90.5, opencv#26332)."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, top_with_confidence, whole_cause_and_values


@pytest.mark.parametrize("text", [
    "WARNING:jax._src.xla_bridge:No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun "
    "for more info.)",
    "W0412 10:01:02.123 xla_bridge.py:860] No GPU/TPU found, falling back to CPU.",
])
def test_jax_falling_back_to_cpu_is_possibly_a_cpu_jaxlib(text):
    got = whole_cause_and_values(text)
    assert (got["id"], got["confidence"]) == ("torch-not-cuda", "possible")
    assert got["title"] == "A CPU-only jaxlib is installed"
    assert 'pip install -U "jax[cuda12]"' in got["fix"]


def test_a_cuda_plugin_that_failed_to_start_is_named_before_the_fallback_warning():
    text = ("E0412 external/xla/xla/pjrt/gpu/se_gpu_pjrt_client.cc] Unable to initialize backend 'cuda': "
            "FAILED_PRECONDITION: No visible GPU devices.\n"
            "WARNING:jax._src.xla_bridge:No GPU/TPU found, falling back to CPU.")
    assert top_with_confidence(text) == ("no-driver-found", "likely")


def test_other_programs_falling_back_to_cpu_are_not_a_cpu_jaxlib():
    # tqdm-like progress and a program's own notice: no emitter of JAX's, no jaxlib answer
    assert "torch-not-cuda" not in answers("No GPU found. Falling back to CPU for inference.")


@pytest.mark.parametrize("text, found, built", [
    ("[ WARN:0] global /opt/opencv/modules/dnn/src/cuda4dnn/init.hpp (34) checkVersions cuDNN reports version "
     "8201 which does not match with the version 8000 with which OpenCV was built", "8201", "8000"),
    ("[ WARN:0@0.512] global init.hpp:32 checkVersions cuDNN reports version 8.9 which is not compatible with "
     "the version 9.1 with which OpenCV was built", "8.9", "9.1"),
])
def test_opencv_cudnn_version_check_is_a_cudnn_version_mismatch(text, found, built):
    got = whole_cause_and_values(text)
    assert (got["id"], got["confidence"]) == ("cudnn-version-mismatch", "likely")
    assert got["values"]["found"] == found and got["values"]["built"] == built
    assert f"built against cuDNN {built} but the loader found {found} first" in got["cause"]


@pytest.mark.parametrize("reported, built", [("90.5", "9.5"), ("90.1", "9.1")])
def test_opencv_misreading_cudnn_9s_version_is_not_a_mismatch(reported, built):
    text = (f"[ WARN:0@0.446] global init.hpp:32 checkVersions cuDNN reports version {reported} which is not "
            f"compatible with the version {built} with which OpenCV was built")
    assert [e.id for e in explain(text) if e.kind == "environment"] == []


# once heldout23 was learnt, "lib:cuda" and "tool:singularity" together fell under the key table's
# bar: the driver's library missing from the process gets its emitters' wordings (TensorFlow's
# cuda_diagnostics, and the plain "unable to find libcuda.so.1" of a container without the driver)
@pytest.mark.parametrize("text", [
    "2021-11-19 15:37:52.508197: I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:189] libcuda reported "
    "version is: Not found: was unable to find libcuda.so DSO loaded into this program",
    "libcuda reported version is: NOT_FOUND: was unable to find libcuda.so DSO loaded into this program",
    'Singularity Built From NGC Base Yields "unable to find libcuda.so.1"',
])
def test_the_driver_s_libcuda_missing_from_the_process_is_possibly_no_driver(text):
    assert top_with_confidence(text) == ("no-driver-found", "possible")


def test_cuinit_s_own_error_before_the_diagnostics_names_its_cause_first():
    text = ("E tensorflow/stream_executor/cuda/cuda_driver.cc:271] failed call to cuInit: "
            "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE: forward compatibility was attempted on non supported HW\n"
            "I tensorflow/stream_executor/cuda/cuda_diagnostics.cc:200] libcuda reported version is: Not found: "
            "was unable to find libcuda.so DSO loaded into this program")
    assert top_with_confidence(text)[0] != "no-driver-found"


def test_the_toolkit_s_stub_libcuda_so_not_found_is_not_the_driver_s():
    # libcuda.so (no .1) is the development symlink / stub a link step asks for
    assert "no-driver-found" not in answers("ld: unable to find libcuda.so for -lcuda")


# once heldout25 was learnt, "cudnn" weighed less, and two in-sample texts whose keys alone had
# answered them fell under the table's bar; they get their emitters' wordings instead
@pytest.mark.parametrize("text", [
    "ImportError: undefined symbol: cudnnSetRNNDescriptor_v6 after upgrading cuDNN",
    "undefined symbol: cudnnGetConvolutionForwardAlgorithm_v7 (cuDNN 7.0.5, CUDA 9.0)",
])
def test_a_cudnn_function_missing_quoted_without_its_module_is_possibly_a_cudnn_mismatch(text):
    assert top_with_confidence(text) == ("cudnn-version-mismatch", "possible")


def test_the_loader_naming_the_module_keeps_its_likely_answer():
    text = ("ImportError: /opt/conda/lib/python3.8/site-packages/cupy_backends/cuda/libs/cudnn.cpython-38-x86_64-"
            "linux-gnu.so: undefined symbol: cudnnSetConvolutionGroupCount")
    assert top_with_confidence(text) == ("cudnn-version-mismatch", "likely")


def test_torch_s_own_library_missing_a_cudnn_symbol_is_not_read_as_a_bare_quote():
    text = "OSError: /usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: cudnnCreate"
    assert "cudnn-version-mismatch" not in answers(text)


@pytest.mark.parametrize("text, need, was", [
    ("Using gpu device 0: GeForce GTX 1080 (CNMeM is enabled with initial size: 80.0% of memory, cuDNN Version is "
     "too old. Update to v5, was 4007.)", "5", "4007"),
    ("RuntimeError: You enabled cuDNN, but we aren't able to use it: cuDNN version is too old. Update to v5, was "
     "3002.", "5", "3002"),
])
def test_theano_s_cudnn_version_check_is_a_cudnn_older_than_needed(text, need, was):
    got = whole_cause_and_values(text)
    assert (got["id"], got["confidence"]) == ("cudnn-version-mismatch", "likely")
    assert got["values"]["built"] == need and got["values"]["found"] == was


def test_theano_s_newer_cudnn_warning_is_not_it():
    text = ("UserWarning: Your cuDNN version is more recent than Theano. If you encounter problems, try updating "
            "Theano or downgrading cuDNN to version 5.1.")
    assert "cudnn-version-mismatch" not in [a for a in answers(text)][:1]
