"""General gaps the fourth held-out round showed (docs/doctor.md, "After the fourth round"), each
fixed from what prints the error and tested on that emitter's format filled with values of its
own, not on the threads' texts."""
from __future__ import annotations

from envcheck.explain.match import explain, top_environment_cause


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
