"""The CUDA runtime's, driver's and NVML's error codes as other languages' bindings print them:
the library's prefix dropped and the rest in camel case, Rust's cust `CudaError::NoBinaryForGpu`
(rust-gpu-tools' "Cuda(NoBinaryForGpu)") for CUDA_ERROR_NO_BINARY_FOR_GPU, CUTLASS's CuTe DSL
"CUDAError InsufficientDriver" for cudaErrorInsufficientDriver. A bare name of one word
(UNKNOWN, cudaErrorAssert) is a plain word in any text, so only names of two words or more, and
only where the text writes one in camel case with its library's word (cuda, nvml) just before it:
"InvalidValue" alone is anyone's. Pure; catalogue.py looks the names up with its codes.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterator, Optional, Set, Tuple

_BARE = re.compile(r"^(?:CUDA_ERROR_|cudaError|NVML_ERROR_)([A-Z][A-Za-z0-9_]+)$")
LIBS = {"CUDA runtime": "cuda", "CUDA driver": "cuda", "NVML": "nvml"}
NEAR = 40        # the library's word at most this far before the bare name

Code = Dict[str, Any]


def bare(name: str) -> Optional[str]:
    """CUDA_ERROR_NO_BINARY_FOR_GPU -> 'nobinaryforgpu', cudaErrorInsufficientDriver ->
    'insufficientdriver'; None for a name that is one word once bare, or no such code's."""
    m = _BARE.match(name)
    if not m:
        return None
    rest = m.group(1)
    words = rest.count("_") + 1 if "_" in rest or rest.isupper() else len(re.findall(r"[A-Z][a-z0-9]*", rest))
    return rest.replace("_", "").lower() if words >= 2 else None


def index(codes: Dict[str, Code], taken: Dict[str, Code]) -> Dict[str, Code]:
    """bare name -> code, for the codes of LIBS, the runtime's before the driver's where both have
    one; none that is already a token of its own (`taken`: the full names and their aliases)."""
    out: Dict[str, Code] = {}
    for name, code in sorted(codes.items(), key=lambda nc: nc[1]["lib"] != "CUDA runtime"):
        b = bare(name) if code["lib"] in LIBS else None
        if b and b not in taken:
            out.setdefault(b, code)
    return out


def find(by_bare: Dict[str, Code], text: str, lower: str, words: Set[str]) -> Iterator[Tuple[Code, int, int]]:
    """(code, start, end) of each bare name the text writes as a binding does (its first place)."""
    for token in words & by_bare.keys():
        code, n = by_bare[token], len(token)
        near, i = LIBS[code["lib"]], lower.find(token)
        while i >= 0:
            if (not lower[i - 1:i].isalnum() and not lower[i + n:i + n + 1].isalnum() and text[i:i + 1].isupper()
                    and text[i:i + n].lower() == token and near in lower[max(0, i - NEAR):i]):
                yield code, i, i + n
                break
            i = lower.find(token, i + n)
