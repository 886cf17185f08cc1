"""What the thirty-sixth held-out round's misses with a cause id taught (tests/fixtures/errors-heldout/
heldout36.yaml, the first round from files: FAQs, troubleshooting pages, people's notes), read after
it was scored once (46/94): in-sample, each with the look-alikes it must leave alone.

- nvcc not on PATH as build scripts, notes and cmd.exe put it, and a project's bare CMake "Could not
  find CUDA" (cuda-home-unset);
- torch's arch warning shortened to the GPU's name ("NVIDIA A100 is not compatible with the current
  PyTorch": arch-not-compatible);
- NVIDIA's k8s device plugin finding no NVML in its container (its platform detection, go-nvml's
  ERROR_LIBRARY_NOT_FOUND: container-toolkit-missing);
- DCGM's diagnostics on a GPU with uncorrectable memory errors and row remapping pending or failed
  (gpu-hardware-fault);
- bitsandbytes' CUDA library named missing in notes' words (extension-ops-missing)."""
import pytest

from tests.explain.answers import answers, top_with_confidence


@pytest.mark.parametrize("text, want", [
    ("docker: nvcc not found, skipping CUDA builds", ("cuda-home-unset", "likely")),
    ("nvcc command not found", ("cuda-home-unset", "likely")),
    ("bash: nvcc: command not found", ("cuda-home-unset", "likely")),
    ("'nvcc' is not recognized as an internal or external command,\noperable program or batch file.",
     ("cuda-home-unset", "likely")),
    ("CMake Error: Could not find CUDA", ("cuda-home-unset", "likely")),
    ("NVIDIA A100 is not compatible with the current PyTorch", ("arch-not-compatible", "likely")),
    ("NVIDIA GeForce RTX 5090 is not compatible with the current PyTorch installation.",
     ("arch-not-compatible", "likely")),
    ("I0128 04:57:24.895105       1 factory.go:107] Detected non-NVML platform: could not load NVML library:"
     " libnvidia-ml.so.1: cannot open shared object file: No such file or directory\n"
     "E0128 04:57:24.895246       1 factory.go:115] Incompatible platform detected\n"
     "I0128 04:57:24.895371       1 main.go:287] No devices found. Waiting indefinitely.",
     ("container-toolkit-missing", "likely")),
    ("E0925 19:53:51.423171 factory.go:135] Incompatible strategy detected auto\n"
     "E0925 19:53:51.428513 main.go:201] error starting plugins: ... invalid device discovery strategy",
     ("container-toolkit-missing", "likely")),
    ("E... If this is a GPU node, did you configure the NVIDIA Container Toolkit?",
     ("container-toolkit-missing", "likely")),
    ("Received error: failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND", ("container-toolkit-missing", "likely")),
    ("ERROR_LIBRARY_NOT_FOUND", ("container-toolkit-missing", "possible")),
    ("| Error                     | GPU 3 has uncorrectable memory errors and row  |\n"
     "|                           |  remappings are pending                        |",
     ("gpu-hardware-fault", "likely")),
    ("GPU 1 had uncorrectable memory errors and row remapping failed", ("gpu-hardware-fault", "likely")),
    ("CUDA Setup failed despite GPU being available.\nlibbitsandbytes_cuda124.so not found.\n"
     "Defaulting to libbitsandbytes_cpu.so...", ("extension-ops-missing", "likely")),
])
def test_round36_misses_are_answered(text, want):
    assert top_with_confidence(text) == want


@pytest.mark.parametrize("text, not_this", [
    # another tool's name ending in nvcc
    ("libnvcc not found", "cuda-home-unset"),
    # a toolkit found, too old or not the one asked for; cuda-gdb's back-end missing from a container
    ('CMake Error at CMakeLists.txt:12 (find_package): Could NOT find CUDA: Found unsuitable version "9.2", '
     'but required is at least "10" (found /usr/local/cuda)', "cuda-home-unset"),
    ("Could not find CUDA Debugger back-end. Please try upgrading/re-installing the GPU driver", "cuda-home-unset"),
    # a package's own check against torch, not the GPU's arch
    ("UserWarning: torchvision 0.15 is not compatible with the current PyTorch version", "arch-not-compatible"),
    # NVML's return code under its C name is NVML's own table's, not the device plugin's
    ("NVML_ERROR_LIBRARY_NOT_FOUND", "container-toolkit-missing"),
    # correctable errors are not a fault
    ("Volatile correctable memory errors: 3", "gpu-hardware-fault"),
])
def test_round36_look_alikes_are_left_alone(text, not_this):
    assert not_this not in answers(text)
