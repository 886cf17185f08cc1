"""What the thirty-seventh held-out round's misses with a cause id taught (tests/fixtures/errors-heldout/
heldout37.yaml, the second round from files), read after it was scored once (33/66): in-sample, each
with the look-alikes it must leave alone.

- torch's TCPStore refusing libuv in its later spelling ("built without libuv support, run with
  USE_LIBUV=0 to disable it": store-libuv-missing);
- Cython's "numpy.ndarray size changed" beside the "numpy.dtype size changed" already read
  (numpy-abi-mismatch);
- Paddle's "Cannot load cudnn shared library." without its second sentence (cudnn-lib-missing);
- MSVC's C3861 on torch's removed AT_CHECK macro in a localised compiler (extension-torch-incompatible)."""
import pytest

from tests.explain.answers import answers, top_with_confidence


@pytest.mark.parametrize("text, want", [
    ("DistStoreError: use_libuv was requested but PyTorch was built without libuv support, run with "
     "USE_LIBUV=0 to disable it.", ("store-libuv-missing", "exact")),
    ("RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
     ("store-libuv-missing", "exact")),
    ("ValueError: numpy.ndarray size changed, may indicate binary incompatibility. Expected 88 from C header, "
     "got 80 from PyObject", ("numpy-abi-mismatch", "likely")),
    ("Error: Cannot load cudnn shared library.", ("cudnn-lib-missing", "likely")),
    ("mmdet\\ops\\nms\\src/nms_cuda.cpp(9): error C3861:“AT_CHECK”: 找不到标识符",
     ("extension-torch-incompatible", "likely")),
    ("nms_cuda.cpp(9): error C3861: 'AT_CHECK': identifier not found", ("extension-torch-incompatible", "likely")),
])
def test_round37_misses_are_answered(text, want):
    assert top_with_confidence(text) == want


@pytest.mark.parametrize("text, not_this", [
    # another name MSVC does not find is the program's own, not torch's removed macro
    ("foo.cpp(12): error C3861: 'AT_CHECK_SHAPE': identifier not found", "extension-torch-incompatible"),
    ("foo.cpp(12): error C3861: 'my_check': identifier not found", "extension-torch-incompatible"),
    # a pandas frame's size, not numpy's struct
    ("ValueError: DataFrame size changed during iteration", "numpy-abi-mismatch"),
    # a cuDNN found and loaded, failing later
    ("Error: cudnn shared library loaded, but cudnnCreate failed", "cudnn-lib-missing"),
])
def test_round37_look_alikes_are_left_alone(text, not_this):
    assert not_this not in answers(text)


# --- driver-module-in-use: added after the round, four `other:` positives of rounds 36-37 ----------

@pytest.mark.parametrize("text", [
    "rmmod: ERROR: Module nvidia is in use",
    "rmmod: ERROR: Module nvidia_drm is in use",
    "rmmod: ERROR: Module nvidia_modeset is in use by: nvidia_drm",
    "modprobe: FATAL: Module nvidia_uvm is in use.",
    "ERROR: An NVIDIA kernel module 'nvidia-uvm' appears to already be loaded in your kernel.  This may be because it\n"
    "      is in use (for example, by an X server, a CUDA program, or the NVIDIA Persistence Daemon)",
    "An NVIDIA kernel module ‘nvidia-drm‘ appears to already be loaded in your kernel...",
    "WARNING: An NVIDIA kernel module 'nvidia-drm' appears to be already loaded in your kernel.",
])
def test_a_driver_module_held_by_a_process_is_named(text):
    assert top_with_confidence(text) == ("driver-module-in-use", "exact")


@pytest.mark.parametrize("text", [
    # another module in use, and the nvidia module merely not loaded
    "rmmod: ERROR: Module nouveau is in use",
    "rmmod: ERROR: Module nvidia_uvm is not currently loaded",
    "modprobe: FATAL: Module nvidia not found in directory /lib/modules/6.8.0-45-generic",
])
def test_look_alikes_of_a_driver_module_in_use_are_left_alone(text):
    assert "driver-module-in-use" not in answers(text)
