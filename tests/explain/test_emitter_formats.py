"""General gaps the fourth held-out round showed (docs/doctor.md, "After the fourth round"), each
fixed from what prints the error and tested on that emitter's format filled with values of its
own, not on the threads' texts."""
from __future__ import annotations

import importlib.util

import pytest

from envcheck.explain.match import explain, top_environment_cause
from tests.conftest import REPO


def _extract():
    path = REPO / "tools" / "explain_catalogue" / "extract.py"
    spec = importlib.util.spec_from_file_location("explain_catalogue_extract", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _top(text):
    got = top_environment_cause(explain(text))
    return got.id if got else None


def test_cublas_arch_mismatch_is_a_gpu_below_cublas_minimum_first():
    # torch's TORCH_CUDABLAS_CHECK: "CUDA error: " + cublasGetErrorString(status) + " when calling `" #EXPR "`"
    text = ("RuntimeError: CUDA error: CUBLAS_STATUS_ARCH_MISMATCH when calling `cublasGemmEx( handle, opa, opb, "
            "m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, "
            "CUBLAS_GEMM_DFALT_TENSOR_OP)`")
    found = explain(text)
    assert [e.id for e in found][:2] == ["gpu-too-old", "no-kernel-image"]


def test_a_message_appended_to_an_exceptions_attribute_is_extracted():
    # torch/__init__.py (Windows): err = ctypes.WinError(...); err.strerror += f' Error loading "{dll}" ...'
    src = ("def load(dll):\n    err = ctypes.WinError(ctypes.get_last_error())\n"
           "    err.strerror += (\n        f' Error loading \"{dll}\" or one of its dependencies.'\n    )\n"
           "    raise err\n")
    assert [t for _, t in _extract().py_messages(src)] == [' Error loading "{}" or one of its dependencies.']


def test_any_windows_error_torch_appends_its_dll_note_to_is_a_dll_load_failure():
    # ctypes.WinError(code) is "[WinError <code>] <FormatMessage(code)>"; torch appends the DLL's path
    text = ("OSError: [WinError 1114] A dynamic link library (DLL) initialization routine failed. Error loading "
            "\"C:\\Users\\ana\\miniconda3\\envs\\sd\\lib\\site-packages\\torch\\lib\\torch_cuda.dll\" "
            "or one of its dependencies.")
    assert _top(text) == "windows-dll-load-failed"


def test_a_cuda_librarys_versioned_symbol_missing_is_two_releases_of_it_not_an_extension():
    # glibc elf/dl-lookup.c: "<object>: undefined symbol: %s%s%s" (name, ", version ", version node)
    text = ("OSError: /opt/conda/lib/python3.11/site-packages/nvidia/cusolver/lib/libcusolver.so.11: "
            "undefined symbol: cublasLtMatmulAlgoGetHeuristic, version libcublasLt.so.11")
    found = explain(text)
    assert _top(text) == "cuda-libs-conflict" and found[0].values["lib"] == "libcublasLt.so.11"
    # an unversioned symbol, or one versioned by a library that is not CUDA's, stays an extension's
    other = ("ImportError: /srv/app/ext/_C.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
             "_ZN3c1015SmallVectorBaseIjE8grow_podEPKvmm")
    assert _top(other) == "undefined-symbol"
    glibc = "ImportError: /srv/app/libfoo.so.2: undefined symbol: memfd_create, version GLIBC_2.27"
    assert _top(glibc) != "cuda-libs-conflict"


@pytest.mark.parametrize("lib", ["libtorch_cuda_cpp.so", "libc10_cuda.so", "libtorch_python.so"])
def test_a_torch_library_the_loader_cannot_open_is_an_extension_built_for_another_torch(lib):
    # glibc elf/dl-load.c: "<name>: cannot open shared object file: <strerror>", raised while
    # Python loads an extension that links one of torch's own libraries
    text = (f"  File \"/srv/venv/lib/python3.10/site-packages/mmcv/utils/ext_loader.py\", line 13, in load_ext\n"
            f"    ext = importlib.import_module('mmcv.' + name)\n"
            f"ImportError: {lib}: cannot open shared object file: No such file or directory")
    found = explain(text)
    assert _top(text) == "undefined-symbol" and found[0].values["torchlib"] == lib
    assert lib in found[0].cause


def test_nvcc_refusing_the_cpp_dialect_torch_builds_with_is_a_toolkit_older_than_torchs():
    # nvcc's "Value '%s' is not defined for option '%s'" on torch 2.13's -std=c++20 with a CUDA 11 nvcc
    text = ("[1/3] /usr/local/cuda-11.8/bin/nvcc -I/srv/venv/include -std=c++20 -c kernels.cu -o kernels.cuda.o\n"
            "FAILED: kernels.cuda.o\n"
            "nvcc fatal   : Value 'c++20' is not defined for option 'std'\n"
            "ninja: build stopped: subcommand failed.\n"
            "RuntimeError: Error building extension 'my_ops'")
    found = explain(text)
    assert _top(text) == "toolkit-torch-mismatch" and found[0].values["std"] == "20"
    assert "?" not in found[0].title + found[0].fix
