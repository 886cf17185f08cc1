"""The causes added for what the second held-out round could not name (docs/doctor.md, "After the
second round"), each read from what prints the error, and the two general rules that keep a
program's own failure from getting a confident environment cause: an unmangled THP_API symbol
is not an ABI change, and `CUDA error: unknown error` raised mid-run is only possible."""
from __future__ import annotations

import re

import pytest

from envcheck.explain.match import explain, top_environment_cause
from envcheck.explain.signatures import signatures
from envcheck.matrix.load import load_matrix
from envcheck.versions import at_least

SIGS = {s.id: s for s in signatures()}


def _top(text):
    got = top_environment_cause(explain(text))
    return (got.id, got.confidence) if got else None


def _confident_environment(text):
    return [e.id for e in explain(text) if e.kind == "environment" and e.confidence in ("exact", "likely")]


def test_the_archs_called_dropped_are_those_the_matrix_says_cuda_12_cannot_build():
    listed = set()
    for w in SIGS["nvcc-arch-dropped"].wordings:
        alts = re.search(r"(?:compute|sm)\)?_\(\?:([\d|]+)\)", w.regex.pattern).group(1)
        listed |= set(alts.split("|"))
    matrix = {a["cc"].replace(".", "") for a in load_matrix().data["archs"]
              if a.get("last_cuda") and at_least("11.8", a["last_cuda"])}
    assert listed == matrix


@pytest.mark.parametrize("text,want", [
    ("nvcc fatal   : Unsupported gpu architecture 'compute_35'", "nvcc-arch-dropped"),
    ("nvcc fatal : Value 'sm_30' is not defined for option 'gpu-architecture'", "nvcc-arch-dropped"),
    # a newer arch than the toolkit: the toolkit is too old, as before
    ("nvcc fatal   : Unsupported gpu architecture 'compute_86'", "nvcc-arch-unsupported"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_70'", "nvcc-arch-unsupported"),
])
def test_an_arch_nvcc_refuses_is_too_new_or_dropped_by_its_number(text, want):
    assert _top(text)[0] == want


def test_a_failed_compiler_run_of_an_extension_build_is_a_possible_source_incompatibility():
    text = "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1"
    assert _top(text) == ("extension-torch-incompatible", "possible")
    assert _top("error: command '/usr/bin/x86_64-linux-gnu-gcc' failed with exit code 1")[0] == \
        "extension-torch-incompatible"
    # distutils prints the same line for any command: only a compiler's is an extension build
    assert _top("error: command 'git' failed with exit status 128") is None


def test_a_more_specific_build_error_ranks_above_the_failed_command():
    text = ("/usr/local/cuda/include/crt/host_config.h:129:2: error: #error -- unsupported GNU version! gcc "
            "versions later than 10 are not supported!\n"
            "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1")
    assert _top(text)[0] == "gcc-too-new"


def test_a_mount_of_the_driver_proc_entries_failing_is_a_stale_driver_state():
    text = ("stderr: nvidia-container-cli: mount error: mount operation failed: /var/lib/docker/overlay2/ab12/"
            "merged/proc/driver/nvidia/params/version/registry: no such file or directory: unknown.")
    assert _top(text) == ("driver-state-stale", "likely")
    # another path failing to mount says nothing of the driver's state (the key fallback may hint
    # at the container toolkit's files, possible only, since it learnt from heldout10 and 11)
    other = "nvidia-container-cli: mount error: mount operation failed: /run/nvidia-persistenced/socket"
    assert _top(other) in (None, ("container-image-driver-files", "possible")) and not _confident_environment(other)


def test_cublas_invalid_value_points_first_at_a_second_cublas_and_is_only_possible():
    found = explain("RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasGemmEx( handle, "
                    "opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, "
                    "CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`")
    assert [(e.id, e.confidence) for e in found][:2] == [("cuda-libs-conflict", "possible"), ("program-error", "possible")]


def test_distnetworkerror_unknown_error_is_windows_and_other_store_errors_stay_the_rendezvous():
    assert _top("torch.distributed.DistNetworkError: Unknown error")[0] == "windows-store-socket"
    assert _top("torch.distributed.DistNetworkError: Connection reset by peer")[0] == "rendezvous-refused"


def test_an_unmangled_thp_symbol_is_the_import_order_not_an_abi_change():
    text = "ImportError: /env/lib/python3.9/site-packages/my_ext.cpython-39-x86_64-linux-gnu.so: undefined symbol: THPVariableClass"
    found = explain(text)
    assert found[0].id == "extension-imported-before-torch" and found[0].kind == "workload"
    assert not _confident_environment(text)
    # a mangled C++ symbol is what another torch build loses: still an ABI mismatch, exact
    mangled = "ImportError: /env/x/_C.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"
    assert _top(mangled) == ("undefined-symbol", "exact")


def test_cuda_unknown_error_mid_run_is_only_possible_and_at_initialisation_stays_likely():
    mid_run = ('  File "/src/model.py", line 313, in forward\n    attn = attn.softmax(dim=-1)\n'
               "RuntimeError: CUDA error: unknown error\nCUDA kernel errors might be asynchronously reported at "
               "some other API call, so the stacktrace below might be incorrect.")
    assert _top(mid_run) == ("cuda-unknown-error", "possible")
    at_init = ('  File "/env/lib/python3.8/site-packages/torch/cuda/__init__.py", line 172, in _lazy_init\n'
               "    torch._C._cuda_init()\nRuntimeError: CUDA error: unknown error")
    assert _top(at_init) == ("cuda-unknown-error", "likely")


# --- after the third held-out round (in-sample: prompted by its misses, each read from an emitter) ---

def test_the_drivers_own_library_missing_is_no_driver():
    assert _top("OSError: libcuda.so.1: cannot open shared object file: No such file or directory")[0] == \
        "no-driver-found"
    # a toolkit library missing is still the toolkit's
    assert _top("OSError: libcublas.so.11: cannot open shared object file: No such file or directory")[0] == \
        "cuda-lib-missing"


def test_the_container_toolkits_requirement_check_without_its_later_hint_is_an_old_driver():
    text = ("stderr: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=11.0\\n\": unknown.")
    assert _top(text)[0] == "driver-too-old"


def test_distutils_unable_to_execute_nvcc_is_a_missing_toolkit_not_a_failed_compile():
    text = ("unable to execute '/usr/local/cuda/bin/nvcc': No such file or directory\n"
            "error: command '/usr/local/cuda/bin/nvcc' failed with exit status 1")
    assert _top(text)[0] == "cuda-home-unset"
    # another program missing says nothing of CUDA: the host compiler's is its own cause (round 9)
    assert _top("unable to execute 'x86_64-linux-gnu-gcc': No such file or directory")[0] == "host-compiler-missing"


def test_cudnn_arch_mismatch_is_a_gpu_below_cudnns_minimum_first():
    assert _top("RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH")[0] == "gpu-too-old"


def test_a_status_enum_in_a_wrappers_camel_case_is_the_same_code():
    found = explain("    raise cudnnExceptions[status]\nlibcudnn.cudnnStatusArchMismatch")
    assert found and found[0].id == "gpu-too-old" and found[0].values["code"] == "CUDNN_STATUS_ARCH_MISMATCH"


def test_a_library_cudnns_loader_names_as_missing_is_the_missing_one():
    text = "Could not load library libcudnn_cnn_infer.so.8. Error: libnvrtc.so: cannot open shared object file: No such file or directory"
    assert _top(text)[0] == "cuda-lib-missing"
    own = "Could not load library libcudnn_cnn_infer.so.8. Error: libcudnn_ops_infer.so.8: cannot open shared object file"
    assert _top(own)[0] == "cudnn-lib-missing"
