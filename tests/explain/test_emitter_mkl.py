"""mkl-lib-mismatch: the Intel MKL that a conda torch (or numpy) loads is missing, too new or another
install's. Added in round 35's session, before that round was read, because five `other:`
positives of the scored rounds named it in their own words (heldout32's jantic/DeOldify#504,
pytorch/pytorch#5099 and #1621, relabelled to it; and two threads of round 35 as collected).

What the emitters print, read in their binaries (PyPI's mkl wheels, 2024.0.0 and 2024.1.0):
- MKL's own words, from libmkl_core.so.2: "Intel MKL FATAL ERROR: Cannot load %s." and "... Cannot
  load %s or %s." (2024.1 on: "Intel oneMKL FATAL ERROR: ..."), when its CPU-dispatch or threading
  library does not load, and "INTEL MKL ERROR: %s." carrying the loader's dlerror(). exact for the
  first (MKL naming its own missing part), likely for the second.
- iJIT_NotifyEvent: `nm -D --defined-only` lists it in 2024.0.0's libmkl_core.so.2 and not in
  2024.1.0's; conda's torch builds linked against an older mkl import it, so glibc's "undefined
  symbol: iJIT_NotifyEvent" is an MKL too new for that torch. likely.
- glibc's loader for a symbol of MKL's own (mkl_*) missing from torch's or MKL's libraries, and for
  a libmkl_* it cannot open: another MKL first on the path, or none in the environment. likely.
A Linux pip wheel of torch carries MKL inside libtorch_cpu.so (it needs no libmkl_*: readelf -d of
2.13.0's), so the fix is conda's (one mkl, pinned) and LD_LIBRARY_PATH's.

The texts below are written for these tests, none a held-out one. Look-alikes keep their answers: a
CUDA library's undefined symbol, an extension's undefined torch symbol, a missing libcudart."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, top_with_confidence, whole_cause


@pytest.mark.parametrize("text, confidence", [
    ("Intel MKL FATAL ERROR: Cannot load libmkl_avx2.so or libmkl_def.so.", "exact"),
    ("Intel oneMKL FATAL ERROR: Cannot load libmkl_avx512.so.2 or libmkl_def.so.2.", "exact"),
    ("INTEL MKL ERROR: /opt/conda/lib/libmkl_avx2.so: undefined symbol: mkl_sparse_optimize_bsr_trsm_i8.\n"
     "Intel MKL FATAL ERROR: Cannot load libmkl_avx2.so or libmkl_def.so.", "exact"),
    ("INTEL MKL ERROR: /home/u/env/lib/libmkl_vml_avx2.so.1: undefined symbol: mkl_serv_getenv.", "likely"),
    ("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n    import torch\n"
     "  File \"/home/u/miniconda3/envs/dl/lib/python3.9/site-packages/torch/__init__.py\", line 229, in <module>\n"
     "    from torch._C import *  # noqa: F403\n"
     "ImportError: /home/u/miniconda3/envs/dl/lib/python3.9/site-packages/torch/lib/libtorch_cpu.so: "
     "undefined symbol: iJIT_NotifyEvent", "likely"),
    ("ImportError: /apps/envs/py36/lib/python3.6/site-packages/torch/lib/libtorch.so.1: undefined symbol: "
     "mkl_lapack_dgeqrf", "likely"),
    ("  File \"/usr/lib/python3.6/site-packages/torch/__init__.py\", line 56, in <module>\n"
     "    from torch._C import *\n"
     "ImportError: libmkl_intel_lp64.so.2: cannot open shared object file: No such file or directory",
     "likely"),
])
def test_mkl_missing_too_new_or_foreign(text, confidence):
    assert top_with_confidence(text) == ("mkl-lib-mismatch", confidence)


def test_the_cause_and_fix_name_mkl_and_the_pin():
    got = whole_cause("ImportError: /x/site-packages/torch/lib/libtorch_cpu.so: undefined symbol: iJIT_NotifyEvent")
    assert "mkl 2024.1 no longer exports iJIT_NotifyEvent" in got["cause"]
    assert 'conda install "mkl<2024.1"' in got["fix"]


@pytest.mark.parametrize("text, want", [
    # a CUDA library's versioned symbol: two CUDA releases, not MKL
    ("ImportError: /x/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: cublasLtGetStatusString, "
     "version libcublasLt.so.11", "cuda-libs-conflict"),
    # the CUDA runtime missing stays the CUDA runtime's
    ("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory",
     "cudart-lib-missing"),
])
def test_look_alikes_keep_their_causes(text, want):
    assert top_with_confidence(text)[0] == want
    assert "mkl-lib-mismatch" not in answers(text)


def test_an_extensions_undefined_torch_symbol_is_not_mkl():
    text = ("ImportError: /x/site-packages/mmcv/_ext.cpython-38-x86_64-linux-gnu.so: undefined symbol: "
            "_ZN3c106detail14torchCheckFailEPKcS2_jRKSs")
    assert "mkl-lib-mismatch" not in answers(text)
