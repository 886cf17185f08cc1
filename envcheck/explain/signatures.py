"""Load envcheck/explain/signatures.yaml (data) and compile it for matching: placeholders
expanded, one literal "anchor" per wording so a megabyte of log is scanned with str.find and
only the wordings whose anchor occurs pay for a regex (compiled then, not before). Also the
derive functions the data names, which add template values (a CUDA major from a soname, an
index URL)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Pattern, Tuple

from envcheck import inputs
from envcheck.explain.fixes import driver_cuda, index_hint, tag_of

DATA = Path(__file__).with_name("signatures.yaml")
CONFIDENCE = ("exact", "likely", "possible")
_FLAGS = re.IGNORECASE | re.DOTALL
# what the text-volatile parts of a message look like after normalisation (match.normalise)
_PLACEHOLDERS = {
    "{V}": r"\d+(?:\.\d+)*",
    "{N}": r"\d+",
    "{S}": r"\S*",
    "{GAP}": r".{0,200}?",
    # a CUDA library's soname as a versioned symbol's version node names it (not libcuda: the driver's)
    "{CUDALIB}": r"lib(?:cudart|cublas(?:lt)?|cudnn\w*|cufft\w*|curand|cusolver\w*|cusparse\w*|nvrtc\w*|nvjitlink"
                 r"|nvtoolsext|cupti|nccl|npp\w*)\.so(?:\.\d+)*",
}
_META = set(".^$*+?{}[]|()")


@dataclass(frozen=True)
class Wording:
    """One wording of a signature. Its regexes are compiled the first time they are used: a
    text is searched only with the wordings whose anchor it holds, and compiling all 129 cost
    each `explain` ~14 ms CPU (issue 26; tests/explain compile every one)."""
    pattern: str
    anchor: Optional[str]      # lower-case literal that must occur for the regex to match
    confidence: str
    context_pattern: Optional[str] = None   # must also occur somewhere in the text

    @cached_property
    def regex(self) -> Pattern[str]:
        return re.compile(self.pattern, _FLAGS)

    @cached_property
    def context(self) -> Optional[Pattern[str]]:
        return re.compile(self.context_pattern, _FLAGS) if self.context_pattern is not None else None


@dataclass
class Signature:
    id: str
    kind: str
    priority: int
    title: str
    cause: str
    fix: str
    components: Tuple[str, ...]
    checks: Tuple[str, ...]
    wordings: List[Wording]
    alternatives: List[Dict[str, str]] = field(default_factory=list)
    supersedes: Tuple[str, ...] = ()
    defaults: Dict[str, str] = field(default_factory=dict)
    derive: Optional[Callable[[Dict[str, str]], Dict[str, Optional[str]]]] = None
    mid_run: Optional[str] = None   # the confidence when the text shows it raised mid-run
    cpu_run: Optional[str] = None   # the confidence when the text shows the run asked for the CPU
    # the words any program uses for this cause (no one emitter's sentence): looked for only in a
    # text nothing else blames on the environment, always `possible` (match.explain)
    generic: List[Wording] = field(default_factory=list)


# where a text shows a CUDA error surfaced in the middle of a run (torch's note on asynchronous
# kernel errors, a frame of a model's forward/backward) and where it shows CUDA's initialisation
MID_RUN = re.compile(r"kernel errors might be asynchronously reported|\bin (?:forward|backward)\b"
                     r"|\.backward\(|optimizer\.step\(", re.IGNORECASE)
# where a text shows the program was asked to run on the CPU (a command line's --device cpu,
# --cpu, --no-cuda; a device='cpu' argument): a CUDA probe that finds no GPU there is expected
# (PaddlePaddle's programs take --use_gpu: `--use_gpu=false` in Paddle v1's trainer, `--use_gpu False`
# in PaddleOCR's tools, use_gpu=False in their Python APIs)
CPU_ASKED = re.compile(r"--device[= ]['\"]?cpu\b|--(?:use[-_])?cpu\b|--no[-_]cuda\b|\bdevice\s*=\s*['\"]cpu['\"]"
                       r"|\buse_gpu(?:\s*=\s*|\s+)['\"]?(?:false|0)(?![\w.])", re.IGNORECASE)
# (a driver/library mismatch in NVML's or the kernel module's own words is printed only where the
# driver is opened, at initialisation)
AT_INIT = re.compile(r"_lazy_init|_cuda_init|\bcuinit\b|getdevicecount|cuda initialization|is_available"
                     r"|ctxcreate|device_count|cudasetdevice|cuda_visible_devices"
                     r"|driver/library version mismatch|api mismatch: the client", re.IGNORECASE)


def anchor_of(pattern: str) -> Optional[str]:
    """The longest literal run outside groups, which every match contains (lower case), or None
    when the pattern has a top-level alternative or no such literal of 4+ characters."""
    runs, cur, depth, i = [], "", 0, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            n = pattern[i + 1]
            if n.isalnum() or depth:  # \d \s \w ..., or inside a group: not a sure literal
                runs.append(cur)
                cur = ""
            else:
                cur += n
            i += 2
            continue
        if c == "[":
            # a character class stands for one character, never for its letters
            j = i + 1 + (pattern.startswith("^", i + 1)) + (pattern.startswith("]", i + 1))
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            runs.append(cur)
            cur = ""
            i = j + 1
            continue
        if c == "(" and pattern.startswith("?", i + 1):
            # a group's own syntax ((?:  (?P<name>  (?=) is not text
            end = pattern.find(">", i) + 1 if pattern.startswith("?P<", i + 1) else i + 3
            runs.append(cur)
            cur = ""
            depth += 1
            i = end
            continue
        if c in "?*" or (c == "{" and i + 1 < len(pattern) and pattern[i + 1].isdigit()):
            cur = cur[:-1]           # the character before is optional
            runs.append(cur)
            cur = ""
        elif c in _META:
            if c == "|" and depth == 0:
                return None
            depth += {"(": 1, ")": -1}.get(c, 0)
            runs.append(cur)
            cur = ""
        elif depth == 0:
            cur += c                 # text inside a group may be optional or one alternative
        i += 1
    runs.append(cur)
    best = max((" ".join(r.split()) for r in runs), key=len, default="")
    return best.lower() if len(best) >= 4 else None


def _expand(pattern: str) -> str:
    for k, v in _PLACEHOLDERS.items():
        pattern = pattern.replace(k, v)
    return pattern


def _wording(w: Any) -> Wording:
    if isinstance(w, str):
        pat, conf, ctx = w, "exact", None
    else:
        pat, conf, ctx = w["re"], w.get("confidence", "exact" if "context" in w else "likely"), w.get("context")
    assert conf in CONFIDENCE, conf
    full = _expand(pat)
    return Wording(full, anchor_of(full), conf, _expand(ctx) if ctx else None)


# --- derive functions (named in the data) -------------------------------------------------

def _cudart(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # libcudart.so.10.0 names the exact runtime; from 11 the soname is the major only
    # (libcudart.so.11.0 is shared by all 11.x, libcudart.so.12 by all 12.x)
    ver = g.get("ver") or ""
    if not ver:             # a loader that names no version (CUDArt.jl's "cannot be found")
        return {"cuda": "X.Y", "ver": "X.Y", "install_ver": "X.Y"}
    if g.get("minor"):      # Windows' cudart64_101.dll: CUDA 10.1
        ver = f"{ver}.{g['minor']}"
    parts = ver.split(".")
    if parts[0].isdigit() and int(parts[0]) >= 11:
        return {"cuda": f"{parts[0]}.x", "install_ver": f"{parts[0]}.Y"}
    return {"cuda": ver, "install_ver": ver}


def _mismatch(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    detected = g.get("detected") or ""
    return {"torch_tag": tag_of(g.get("torch_cuda")) or "cuXYZ",
            "index_hint": index_hint(detected) if detected[:1].isdigit() else None}


def _nccl_version(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    v = g.get("nccl")
    return {"nccl_note": f" (NCCL {v})" if v else ""}


def _driver_cuda(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    cuda = driver_cuda(g.get("found"))
    if not cuda:
        return {}
    return {"found_note": f" (the driver supports CUDA {cuda} at most)", "index_hint": index_hint(cuda)}


def _cpu_build(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # which framework's CPU-only build the words name (torch's by default): a group the data describes
    own = next((k[:-4] for k in g if k.endswith("_pkg") and g.get(k[:-4]) is not None), None)
    if own:  # its package, fix and cause are the data's (defaults <group>_pkg, <group>_fix, <group>_cause)
        return {"pkg": g[own + "_pkg"], "pkg_fix": g[own + "_fix"], "cpu_cause": g.get(own + "_cause")}
    if g.get("pkg") == "dgl":
        return {"pkg_fix": "Install DGL's CUDA build for your torch and CUDA from DGL's wheel index (the PyPI dgl is CPU-only)."}
    if g.get("pkg", "").lower() == "mxnet" or g.get("mxnet") is not None:
        return {"pkg": "MXNet", "pkg_fix": "Install MXNet's CUDA build for your CUDA (`pip install mxnet-cuXYZ`, e.g. "
                                           "mxnet-cu112, in place of the CPU `mxnet`), or build it with USE_CUDA=1."}
    if g.get("pkg") == "jaxlib" or g.get("jax") is not None:
        return {"pkg": "jaxlib", "pkg_fix": 'Install JAX with its CUDA plugin for your CUDA major (`pip install -U "jax[cuda12]"`).'}
    return {}


def _nccl_build(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # which framework's build without NCCL the words name (torch's by default)
    if g.get("tf") is not None:
        return {"fw": "TensorFlow", "fw_ask": "TensorFlow for its NCCL all-reduce (MirroredStrategy's default on GPUs)",
                "fw_fix": "Give MirroredStrategy another cross-device reduction there "
                          "(`cross_device_ops=tf.distribute.HierarchicalCopyAllReduce()` or "
                          "`tf.distribute.ReductionToOneDevice()`), or run on Linux/WSL2, whose GPU build has NCCL."}
    if g.get("dist") is not None:  # no torch.distributed at all (USE_DISTRIBUTED=0)
        return {"fw_ask": f"torch.distributed for {g['dist']}, absent from this build (USE_DISTRIBUTED=0: torch's "
                          "Windows wheels before 1.7, its macOS wheels), and for NCCL",
                "fw_fix": "Run the multi-GPU training on Linux/WSL2; on Windows torch 1.7 or later has torch.distributed "
                          "with the gloo backend (`init_process_group(backend=\"gloo\")`); on one GPU run the program "
                          "without its distributed launch."}
    return {}


def _sm_digits(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # a compute capability written as digits (50, 120) read as major.minor
    sm = g.get("sm")
    return {"cc": f"{sm[:-1]}.{sm[-1]}"} if sm else {}


def _l4t_note(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # Jetson: the NVIDIA runtime mounts the device's own JetPack libraries into the container
    if g.get("containerd") is not None:
        return {"l4t_note": "With containerd (Kubernetes) register the runtime: `sudo nvidia-ctk runtime configure "
                            "--runtime=containerd` and `sudo systemctl restart containerd` (microk8s: `microk8s enable "
                            "gpu`; the GPU Operator does it for the cluster). Elsewhere: "}
    if g.get("nvd1") is not None:
        # nvidia-docker 1.0 mounts the driver through its own volume plugin (nvidia-docker-plugin)
        return {"l4t_note": "nvidia-docker 1.0 mounts the driver through its volume plugin, nvidia-docker-plugin, which "
                            "is not running: start it (`sudo systemctl start nvidia-docker`, or `sudo -b nohup "
                            "nvidia-docker-plugin`) before `nvidia-docker run`, or (1.0 is retired) move to the toolkit: "}
    if g.get("l4t") is None:
        return {}
    return {"l4t_note": "On Jetson run the container with `--runtime nvidia` (or \"default-runtime\": \"nvidia\" in "
                        "/etc/docker/daemon.json, for `docker build` too), and install JetPack's CUDA, cuDNN and TensorRT "
                        "on the device itself: the runtime mounts them from there (the csv lists in "
                        "/etc/nvidia-container-runtime/host-files-for-container.d/). Elsewhere: "}


def _native_build(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # a framework that downloads native builds for a few CUDA versions only (DJL's engines, R's torch)
    if g.get("flavor"):
        return {"native_cause": f"DJL downloads its engine's native library for the CUDA it detects (flavor "
                                f"{g['flavor']}) and publishes builds for a few CUDA versions per engine release; with "
                                f"none for this CUDA on {g.get('djl_os')} it falls back to the CPU. Elsewhere: ",
                "native_fix": "Install a CUDA the DJL engine release has native builds for (its engine page lists them), "
                              "or pin one it has with PYTORCH_FLAVOR or the engine's -native-cuXXX dependency. Elsewhere: "}
    if g.get("djl_platform"):
        return {"native_cause": f"DJL downloads PyTorch's native library from the builds it publishes per release and "
                                f"lists none for {g['djl_platform']} (flavor-OS-arch:release). Elsewhere: ",
                "native_fix": "Use a DJL release whose PyTorch engine has a build for this OS and architecture, or point "
                              "PYTORCH_LIBRARY_PATH at a local libtorch. Elsewhere: "}
    if g.get("libtf"):
        return {"native_cause": "TensorFlow built its C library for GPUs on native Windows up to 2.10 only; "
                                f"for {g['libtf']} there is no such file to download. Elsewhere: ",
                "native_fix": "Use libtensorflow-gpu-windows-x86_64-2.10.0 (CUDA 11.2, cuDNN 8.1), the CPU build of "
                              f"{g['libtf']}, or the Linux GPU build under WSL2. Elsewhere: "}
    if g.get("r_cuda"):
        return {"native_cause": "R's torch (and packages built like it) downloads libtorch and lantern for the CUDA named "
                                "by `type` (or the CUDA variable) from the builds its release lists; CUDA "
                                f"{g['r_cuda']} is not one of them. Elsewhere: ",
                "native_fix": "Install alongside a CUDA the release has builds for (its installation docs list them) "
                              "and point CUDA_HOME at it, or pass `type = \"cpu\"`. Elsewhere: "}
    return {}


_ALLOC_SINCE = {"backend": "2.0", "expandable_segments": "2.1"}   # PYTORCH_CUDA_ALLOC_CONF option -> first torch


def _torch_binding(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # an allocator option of a later torch, TorchSharp built against one libtorch, pip's pin conflict: the defaults'
    v = {"opt": g.get("allocopt") or "", "since": _ALLOC_SINCE.get(g.get("allocopt") or "")}
    if v["since"]:
        return {"api": "PYTORCH_CUDA_ALLOC_CONF's {opt}".format(**v), "binding_cause": g["alloc_cause"].format(**v)
                + " ", "binding_fix": g["alloc_fix"].format(**v) + " "}
    own = next((k for k in ("torchsharp", "pipreq", "plsched", "opsabort")
               if g.get(k) is not None), None)  # <own>_cause, <own>_fix
    api = "added_" + g.get("api", "?").lower()   # a name a later torch added (the defaults' added_<api>)
    added = {"api": g[api]} if api in g else {}
    return {**added, "binding_cause": g[own + "_cause"] + " ", "binding_fix": g[own + "_fix"] + " "} if own else added


# a library's name and its development package (dev-package-missing), by what the text names
_DEV_PACKAGES = {
    "nccl": ("NCCL", "libnccl-dev of the libnccl2 version installed (libnccl-devel on RHEL)"),
    "nvrtc": ("NVRTC", "cuda-nvrtc-dev-X-Y for the CUDA X.Y installed (the toolkit's own installer has it)"),
    "libaio": ("libaio", "libaio-dev (libaio-devel on RHEL)"),
    "tensorrt": ("TensorRT", "libnvinfer-dev with libnvinfer-plugin-dev, libnvparsers-dev and libnvonnxparsers-dev "
                             "of the TensorRT installed (or the TensorRT tar's include/ and lib/)"),
    "opencl": ("OpenCL", "opencl-headers and ocl-icd-opencl-dev (RHEL: opencl-headers, ocl-icd-devel; Windows: "
                         "the CUDA toolkit's or another vendor's OpenCL SDK)"),
    "cudart": ("the CUDA runtime", "cuda-cudart-dev-X-Y for the CUDA X.Y installed (pip: nvidia-cuda-runtime-cuXX; "
                                             "conda: cuda-cudart-dev)"),
    "sparsehash": ("sparsehash", "libsparsehash-dev (sparsehash-devel on RHEL, sparsehash on conda-forge)"),
    "nvjpeg": ("nvJPEG", "libnvjpeg-dev-X-Y for the CUDA X.Y installed (libnvjpeg-devel-X-Y on RHEL; CUDA before 10.0 "
               "has none in the toolkit)"),
    # the CUDA math libraries' link libraries (conda: their -dev packages hold lib/libNAME.so)
    **{lib: (name, f"lib{lib}-dev-X-Y for the CUDA X.Y installed (conda: lib{lib}-dev)")
       for lib, name in (("cublas", "cuBLAS"), ("cufft", "cuFFT"), ("curand", "cuRAND"), ("cusparse", "cuSPARSE"),
                         ("cusolver", "cuSOLVER"), ("nvjitlink", "nvJitLink"))},
}


def _dev_package(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    lib = (g.get("lib") or "").lower()
    # TensorRT's headers by their own names (nvjpeg and nvrtc are CUDA's, also nv-)
    lib = "tensorrt" if lib.startswith(("nvinfer", "nvcaffeparser", "nvonnxparser", "nvuffparser", "nvparsers")) \
        else "opencl" if lib.startswith("cl/") else lib
    lib = "cudart" if lib.startswith(("cuda", "vector_", "crt/", "host_", "driver_")) else lib
    lib = "sparsehash" if lib.startswith("google/") else "cublas" if lib == "cublaslt" else lib
    lib = "libaio" if lib in ("aio", "async_io") else lib
    if lib not in _DEV_PACKAGES and re.fullmatch(r"[a-z][\w+.-]*", lib):
        # any other library a linker names (-lNAME): Debian's and RHEL's names for its package
        name = lib if lib.startswith("lib") else f"lib{lib}"
        return {"lib_name": name, "dev_pkg": f"the development package that has {name}.so, often {name}-dev: "
                                             f"`apt-file search {name}.so` on Debian and Ubuntu, "
                                             f"`dnf provides '*/{name}.so'` on RHEL"}
    name, pkg = _DEV_PACKAGES.get(lib, ("the library", "its -dev (-devel) package"))
    return {"lib_name": name, "dev_pkg": pkg}


def _driver_lib(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # which of the driver's libraries the words are about, where they do not name it: nnabla's
    # GPU check lists the GPUs through NVML (libnvidia-ml.so.1)
    return {"lib": "libnvidia-ml.so"} if g.get("nvml") is not None else {}


def _gcc_below(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # a build script that names the first gcc major a CUDA release refuses (Kaldi's configure:
    # "You need g++ < 7.0"): the newest it takes is the major below
    below = g.get("gcc_below")
    return {"max_gcc": str(int(below) - 1)} if below and int(below) > 1 else {}


def _lib_kit(g: Dict[str, str]) -> Dict[str, Optional[str]]:
    # TensorRT's libraries (libnvinfer*, the ONNX and Caffe/UFF parsers) ship apart from CUDA's toolkit
    return {"kit": "TensorRT"} if re.match(r"(?:lib)?nv(?:infer|onnxparser|parsers|caffe_parser)", g.get("lib", "")) else {}


DERIVE: Dict[str, Callable[[Dict[str, str]], Dict[str, Optional[str]]]] = {
    "cudart": _cudart, "mismatch": _mismatch, "nccl_version": _nccl_version,
    "driver_cuda": _driver_cuda, "cpu_build": _cpu_build, "nccl_build": _nccl_build, "sm_digits": _sm_digits,
    "dev_package": _dev_package, "l4t_note": _l4t_note,
    "native_build": _native_build, "torch_binding": _torch_binding, "driver_lib": _driver_lib,
    "gcc_below": _gcc_below, "lib_kit": _lib_kit,
}


def _table() -> List[Dict[str, Any]]:
    """The table as the wheel's build compiled it (issue 26: no YAML parser on every `explain`),
    else the YAML, with libyaml's loader when PyYAML has it."""
    packaged = inputs.compiled(DATA)
    if packaged is not None:
        return packaged
    import yaml  # lazy: PyYAML costs ~17 ms CPU to load (-X importtime, issue 26); the wheel's table is JSON
    return yaml.load(DATA.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506


@lru_cache(maxsize=1)
def signatures() -> Tuple[Signature, ...]:
    out = []
    for d in _table():
        out.append(Signature(
            id=d["id"], kind=d.get("kind", "environment"), priority=int(d.get("priority", 0)),
            title=d["title"], cause=d["cause"], fix=d["fix"],
            components=tuple(d.get("components", ())), checks=tuple(d.get("checks", ())),
            wordings=[_wording(w) for w in d.get("wordings") or []],
            alternatives=list(d.get("alternatives", [])),
            supersedes=tuple(d.get("supersedes", ())), defaults=dict(d.get("defaults", {})),
            derive=DERIVE[d["derive"]] if d.get("derive") else None, mid_run=d.get("mid_run"),
            cpu_run=d.get("cpu_run"),
            generic=[_wording({**w, "confidence": "possible"}) for w in d.get("generic") or []]))
    return tuple(out)
