"""The catalogue's families read from what prints the errors (tools/explain_catalogue/sources.yaml),
each tried with a message its emitter prints: the emitter's own format string (quoted in the
comment, with the release it was read at) filled with realistic values, not a text copied from a
thread. And the negatives: the program's own failures get no confident environment cause, however
many library words they carry."""
from __future__ import annotations

import json

import pytest

from envcheck.explain import catalogue
from envcheck.explain.match import explain, top_environment_cause

DOC = json.loads(catalogue.DATA.read_text())
CODES = {c["name"]: c for c in DOC["codes"]}


def _refs(repo: str) -> set:
    return {r for s in DOC["sources"] if s[0] == repo for r in s[2]}


def _top(text: str):
    got = top_environment_cause(explain(text))
    return got.id if got else None


# --- NVML as Python raises it (nvidia-ml-py's pynvml) ----------------------------------------

@pytest.mark.parametrize("text,cause", [
    # pynvml.py: class NVMLError_<CamelCase of NVML_ERROR_X>, str() = nvmlErrorString(code)
    ("  File \"/usr/lib/python3/dist-packages/pynvml.py\", line 1842, in _nvmlCheckReturn\n"
     "    raise NVMLError(ret)\npynvml.NVMLError_LibRmVersionMismatch: RM has detected an NVML/RM version "
     "mismatch.", "nvml-driver-mismatch"),
    ("pynvml.nvml.NVMLError_DriverNotLoaded: Driver Not Loaded", "nvidia-smi-no-driver"),
    ("pynvml.NVMLError_LibraryNotFound: NVML Shared Library Not Found", "no-driver-found"),
    ("pynvml.NVMLError_GpuIsLost: GPU is lost", "gpu-hardware-fault"),
    # nvml.h: NVML_ERROR_FUNCTION_NOT_FOUND "Local version of NVML doesn't implement this function"
    ("pynvml.NVMLError_FunctionNotFound: Function Not Found", "driver-too-old"),
    # pynvml's NVMLError.__str__ when the library cannot describe the code: "NVML Error with code %d"
    ("pynvml.NVMLError: NVML Error with code 18", "nvml-driver-mismatch"),
])
def test_nvml_codes_are_known_by_the_exception_classes_pynvml_raises(text, cause):
    assert _top(text) == cause


def test_every_nvml_code_has_the_class_name_pynvml_gives_it():
    nvml = [c for c in DOC["codes"] if c["lib"] == "NVML"]
    assert len(nvml) >= 30 and all(c.get("aka") for c in nvml)
    assert CODES["NVML_ERROR_LIB_RM_VERSION_MISMATCH"]["aka"] == ["NVMLError_LibRmVersionMismatch"]


# --- negatives --------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 23.69 GiB total "
    "capacity; 21.10 GiB already allocated; 1.05 GiB free; 21.50 GiB reserved in total by PyTorch)",
    "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call",
    "pynvml.NVMLError_NotSupported: Not Supported",
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x512 and 256x10)",
    "IndexError: index out of range in self",
    "RuntimeError: CUDA error: device-side assert triggered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
    "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
])
def test_the_program_s_own_failures_get_no_confident_environment_cause(text):
    assert [e.id for e in explain(text) if e.kind == "environment" and e.confidence in ("exact", "likely")] == []
