"""What tools/explain_catalogue/gen.py reads from built files rather than from source trees:
release wheels (torch's Python sources and headers at several releases, NVIDIA's CUDA runtime and
NVRTC wheels), shared libraries (each error code's description, asked of the library itself with
ctypes), string tables, and the installed pynvml. Our own code: it reads strings and enum
tables, and contains no code of what it reads."""
from __future__ import annotations

import ctypes
import fnmatch
import glob
import os
import re
import sys
import zipfile
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Tuple

import extract as ex  # this directory's own module

Catalogue = Any   # gen.Catalogue (not imported: gen imports this module)


# --- string tables and the torch wheels -----------------------------------------------------

def string_table(blob: bytes, min_len: int = 16) -> Iterable[str]:
    for m in re.finditer(rb"[\x20-\x7e]{%d,}" % min_len, blob):
        yield m.group().decode("ascii")


def _builds(spec: Dict, wheels: Path) -> Iterable[Tuple[str, str, bool]]:
    """(ref, wheel file, whether to read its libraries' strings) for each release of the spec
    whose wheel is there."""
    for b in spec.get("builds") or [{"ref": spec["ref"], "glob": spec["glob"]}]:
        if b.get("names_only"):       # read by torch_names.py alone (which names exist when), not for messages
            continue
        found = sorted(glob.glob(b["glob"].replace("{wheels}", str(wheels))))
        if not found:
            print(f"gen: no wheel matches {b['glob']} (--wheels {wheels}): skipped", file=sys.stderr)
            continue
        yield b["ref"], found[-1], bool(b.get("binary", "builds" not in spec))


def _wheel_sources(spec: Dict, z: zipfile.ZipFile) -> Iterable[Tuple[str, str]]:
    """(member, template) for the Python and C++ sources the spec names."""
    for kind, globs in (("python", spec.get("python", [])), ("c", spec.get("c_concat", []))):
        for name in z.namelist():
            if not any(fnmatch.fnmatchcase(name, g) and name.count("/") == g.count("/") for g in globs):
                continue
            src = z.read(name).decode("utf-8", "replace")
            msgs = (ex.py_messages(src, spec.get("py_calls", ())) if kind == "python"
                    else ex.c_concat_messages(src, spec["c_concat_calls"]))
            for _line, t in msgs:
                yield name, t


def read_wheels(cat: Catalogue, specs: List[Dict], wheels: Path) -> None:
    for spec in specs:
        keep, drop = re.compile(spec.get("binary_keep", "")), re.compile(spec.get("binary_drop", "(?!)"))
        for ref, path, binary in _builds(spec, wheels):
            with zipfile.ZipFile(path) as z:
                for name, t in _wheel_sources(spec, z):
                    cat.add_template(spec["lib"], t, spec["repo"], name, ref)
                members = set(z.namelist())
                for name in (n for n in spec.get("binary", []) if binary and n in members):
                    for s in string_table(z.read(name)):
                        if keep.search(s) and not drop.search(s) and " " in s.strip():
                            cat.add_template(spec["lib"], ex.printf_template(s) if "%" in s else s,
                                             spec["repo"], name + " (string table)", ref)



# --- libraries asked for their descriptions -------------------------------------------------

def describer(lib: str, func: str):
    """A function code -> description string from the library's own *GetErrorString."""
    try:
        so = ctypes.CDLL(lib)
    except OSError:
        return None
    f = getattr(so, func)
    if func == "cuGetErrorString":
        def call(code: int) -> Optional[str]:
            out = ctypes.c_char_p()
            return out.value.decode() if f(code, ctypes.byref(out)) == 0 and out.value else None
        return call
    f.restype = ctypes.c_char_p
    return lambda code: (f(code) or b"").decode() or None


ENUMS = {"runtime": (r"\b(cudaError\w+)\s*=\s*(\d+)", "CUDA runtime"),
          "driver": (r"\b(CUDA_ERROR_\w+)\s*=\s*(\d+)", "CUDA driver"),
          "nvml": (r"\b(NVML_ERROR_\w+)\s*=\s*(\d+)", "NVML"),
          "cublas": (r"\b(CUBLAS_STATUS_\w+)\s*=\s*(\d+)", "cuBLAS")}



def _pip_wheels(specs: List[Dict], wheels: Path) -> Iterable[Tuple[str, str, str, Dict[str, str]]]:
    """(repo, ref, the folder it is unpacked in, {file name: path}) for each of NVIDIA's wheels
    the specs name that is in `wheels` (each unpacked in a temporary folder while it is read)."""
    import tempfile
    for spec in specs:
        found = sorted(glob.glob(spec["glob"].replace("{wheels}", str(wheels))))
        if not found:
            print(f"gen: no wheel matches {spec['glob']} (--wheels {wheels}): skipped", file=sys.stderr)
            continue
        with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(found[-1]) as z:
            z.extractall(tmp)
            files = {os.path.basename(p): p for p in glob.glob(f"{tmp}/**/*", recursive=True)}
            yield "pypi:" + spec["package"], spec["version"], tmp, files


def read_pip_cuda(cat: Catalogue, specs: List[Dict], wheels: Path) -> None:
    """CUDA releases newer than this machine's, from NVIDIA's runtime wheels on PyPI (a few MB
    each): the runtime's and driver's enum names and numbers from the headers they ship, and
    what that release's libcudart prints for each runtime code (cudaGetErrorString needs no
    driver). A description that differs from the one already known is kept beside it (alt)."""
    for repo, ref, tmp, files in _pip_wheels(specs, wheels):
        lib = next(n for n in files if n.startswith("libcudart.so."))
        describe = describer(files[lib], "cudaGetErrorString")
        for key, header in (("runtime", "driver_types.h"), ("driver", "cuda.h")):
            pattern, libname = ENUMS[key]
            where = os.path.relpath(files[header], tmp)
            for name, num in re.findall(pattern, Path(files[header]).read_text(errors="replace")):
                if name.endswith(("SUCCESS", "Success")) or name.startswith("cudaErrorApiFailureBase"):
                    continue
                text = describe(int(num)) if key == "runtime" and describe else None
                known = cat.codes.get(name, {}).get("text")
                if text and known and text != known:
                    cat.add_code(name, libname, int(num), None, repo, f"{lib} cudaGetErrorString()", ref, alt=text)
                elif text:
                    cat.add_code(name, libname, int(num), text, repo, f"{lib} cudaGetErrorString()", ref)
                cat.add_code(name, libname, int(num), None, repo, where, ref)


def read_pip_nvrtc(cat: Catalogue, specs: List[Dict], wheels: Path) -> None:
    """NVRTC's codes (the runtime compiler torch's jiterator and fused kernels use), from
    NVIDIA's nvidia-cuda-nvrtc wheels: nvrtcResult's names and numbers (nvrtc.h) and what
    nvrtcGetErrorString prints (the name itself, so kept only where it differs)."""
    for repo, ref, tmp, files in _pip_wheels(specs, wheels):
        lib = next(n for n in files if n.startswith("libnvrtc.so."))
        describe = describer(files[lib], "nvrtcGetErrorString")
        header = files["nvrtc.h"]
        for name, num in re.findall(r"\b(NVRTC_ERROR_\w+)\s*=\s*(\d+)", Path(header).read_text()):
            text = describe(int(num)) if describe else None
            cat.add_code(name, "NVRTC", int(num), None if text == name else text, repo,
                         os.path.relpath(header, tmp), ref)


# nvidia-ml-py's pynvml.py turns every NVML_ERROR_X into an exception class NVMLError_<X in
# CamelCase> (_extractNVMLErrorsAsClasses: "NVMLError_" + string.capwords(rest, "_") without the
# underscores), so a traceback names the code only by its class
_PYNVML_RULE = 'class_name = "NVMLError_" + string.capwords(err_name.replace("NVML_ERROR_", ""), "_").replace("_", "")'


def read_pynvml(cat: Catalogue, spec: Dict) -> None:
    """NVML's codes as the Python bindings raise them (the installed nvidia-ml-py, a dependency
    of envcheck): each code's exception class name, and the descriptions pynvml prints itself
    when the library cannot say (_errcode_to_string)."""
    import importlib.metadata
    import importlib.util
    import string
    found = importlib.util.find_spec(spec["module"])
    if found is None or not found.origin:
        print(f"gen: {spec['module']} not importable (pip install {spec['package']}): skipped", file=sys.stderr)
        return
    src = Path(found.origin).read_text()
    if _PYNVML_RULE not in src:
        sys.exit(f"gen: {found.origin} no longer names its exception classes as gen.py assumes")
    repo, ref = "pypi:" + spec["package"], importlib.metadata.version(spec["package"])
    consts = dict(re.findall(r"^(NVML_ERROR_\w+)\s*=\s*(\d+)", src, re.M))
    table = src[src.index("_errcode_to_string = {"):]
    own = dict(re.findall(r"(NVML_ERROR_\w+):\s*\"([^\"]+)\"", table[:table.index("}")]))
    for name, num in consts.items():
        cls = "NVMLError_" + string.capwords(name.replace("NVML_ERROR_", ""), "_").replace("_", "")
        cat.add_code(name, "NVML", int(num), own.get(name), repo, "pynvml.py", ref, aka=cls)
