"""The twenty-fourth round, heldout24's first part (texts 1-20, HaveAGitGat/Tdarr#745 to
chelsea0x3b/cudarc#246): what its misses (scored once, then read) showed that is general, mended
from what the emitter prints and what it means, with texts other than any held-out one and
look-alikes that keep their answers.

- torch.utils.cpp_extension looking the host compiler up with a subprocess: on Windows
  _write_ninja_file's `subprocess.check_output(['where', 'cl'])` (a JIT load()'s link rule, to find
  link.exe beside cl.exe; "MSVC is required to load C++ extensions" when where printed nothing),
  elsewhere check_compiler_ok_for_platform's `subprocess.check_output(['which', compiler])`.
  where.exe and which exit 1 when nothing on PATH matches, so Python's CalledProcessError "Command
  '['where', 'cl']' returned non-zero exit status 1." is the compiler not on PATH:
  host-compiler-missing (likely).
- JCuda's LibUtils.loadLibrary ("Error while loading native library \"%s\"", then the OS, the
  architecture and the nested stack traces of loading it as a file and as a resource) for a
  binding of a CUDA library (JCublas2, JCufft, JCurand, JCusparse, JCusolver, JNvrtc ...): each
  binding is built for one CUDA release and links that release's library, so most often that CUDA
  is not installed or not on PATH: cuda-lib-missing (likely). Not where the natives jar has no
  file for the platform ("No resource found with name"), nor for JCudaDriver/JCudaRuntime;
  JCudnn, JCuda's cuDNN binding (jcuda/jcudnn), through the same loader: cudnn-lib-missing. With
  it named, the key table is not asked, whose "architecture" (JCuda's "Architecture         :
  amd64", the JVM's os.arch) weighs to nvcc-arch-unsupported.
- nvcc's own words for archs it still builds no longer count as the key table's arch keys
  (keys.py _ARCH_BUILT): its deprecation warnings (CUDA 9-11 "The 'compute_35', ... and 'sm_37'
  architectures are deprecated, and may be removed in a future release", CUDA 12 "Support for
  offline compilation for architectures prior to '<compute/sm/lto>_75' will be removed") and its
  intermediate files' names (tmpxft_..._device.compute_35.cubin in fatbinary's and nvlink's
  messages): an arch named there was built, so a build failing for another reason is no longer
  answered nvcc-arch-dropped/-unsupported from them (MouseLand/Kilosort#515, an `other:` positive,
  got nvcc-arch-dropped that way, possible).

Left, and why (each in docs/doctor.md's paragraph for this part):
- benedekrozemberczki/SimGNN#26: the reporter's prose ("no module named touchy_scatter
  .scatter_cuda", an autocorrected torch_scatter with a space before the dot); Python's own words
  ("No module named 'torch_scatter.scatter_cuda'") are extension-ops-missing (exact) already, and a
  wording for the mangled name would be fitted to the one text.
- lattice/quda#425: QUDA's "ERROR: (CUDA) unknown error (... in createTexObject())" carries no sign
  of the cause (a Kepler+ build on a Fermi GPU); reading QUDA's format as the runtime's description
  would name cuda-unknown-error here and on the negative lattice/quda#507 (the same words, a QUDA
  bug).
- MouseLand/Kilosort#515 (an `other:` positive): now no answer; its failing line, fatbinary's
  "'%s' is not in 'keyword=value' format" (its argument list broken by a temporary file's name),
  has no cause id to name.
- HaveAGitGat/Tdarr#745, Askannz/optimus-manager#354, kwonoh/glam#5 (`other:` positives): no
  answer given, none wrong."""
from __future__ import annotations

import pytest

from envcheck.explain.match import explain
from tests.explain.answers import answers, top_with_confidence, whole_cause_and_values


# --- the host compiler looked up with where/which ---------------------------------------------------

@pytest.mark.parametrize("text", [
    # torch.utils.cpp_extension.load() on Windows outside a Visual Studio prompt, the whole traceback
    'Traceback (most recent call last):\n  File "C:\\app\\ops\\load.py", line 12, in <module>\n'
    '    mod = load(name="wkv", sources=["wkv_op.cpp", "wkv_cuda.cu"], verbose=True)\n'
    '  File "C:\\Python310\\lib\\site-packages\\torch\\utils\\cpp_extension.py", line 1572, in _write_ninja_file\n'
    "    cl_paths = subprocess.check_output(['where', 'cl']).decode(*SUBPROCESS_DECODE_ARGS).split('\\r\\n')\n"
    "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 1.",
    # where.exe's own words before it, the executable's name with its suffix
    "INFO: Could not find files for the given pattern(s).\n"
    "subprocess.CalledProcessError: Command '['where.exe', 'cl.exe']' returned non-zero exit status 1.",
    # the same function when where printed nothing
    "RuntimeError: MSVC is required to load C++ extensions",
    # check_compiler_ok_for_platform on Linux, CXX unset (c++) or set to a path
    '  File "/opt/conda/lib/python3.8/site-packages/torch/utils/cpp_extension.py", line 311, in '
    "check_compiler_ok_for_platform\n    which = subprocess.check_output(['which', compiler], "
    "stderr=subprocess.STDOUT)\nsubprocess.CalledProcessError: Command '['which', 'c++']' returned non-zero "
    "exit status 1.",
    "subprocess.CalledProcessError: Command '['which', '/usr/bin/x86_64-linux-gnu-g++-9']' returned non-zero "
    "exit status 1.",
])
def test_the_compiler_not_found_by_where_or_which_is_host_compiler_missing(text):
    assert top_with_confidence(text) == ("host-compiler-missing", "likely")


@pytest.mark.parametrize("text", [
    # another program looked up: not the host compiler
    "subprocess.CalledProcessError: Command '['where', 'nvcc']' returned non-zero exit status 1.",
    "subprocess.CalledProcessError: Command '['which', 'nvidia-smi']' returned non-zero exit status 1.",
    # where.exe failing (bad syntax, 2) is not "nothing found"
    "subprocess.CalledProcessError: Command '['where', 'cl']' returned non-zero exit status 2.",
    # the compiler found and run, the build failing
    "subprocess.CalledProcessError: Command '['ninja', '-v']' returned non-zero exit status 1.",
    "subprocess.CalledProcessError: Command '['cl', '/c', 'a.cpp']' returned non-zero exit status 1.",
])
def test_other_commands_exiting_are_not_a_missing_compiler(text):
    assert "host-compiler-missing" not in answers(text)


# --- JCuda's native library not loading -------------------------------------------------------------

@pytest.mark.parametrize("text, lib", [
    # the binding found, the CUDA library it links not (Windows' loader: "Can't find dependent libraries")
    ('Exception in thread "main" java.lang.UnsatisfiedLinkError: Error while loading native library '
     '"JCufft-10.1.0-windows-x86_64"\nOperating system name: Windows 10\nArchitecture         : amd64\n'
     "Architecture bit size: 64\n---(start of nested stack traces)---\nStack trace from the attempt to load "
     "the library as a file:\njava.lang.UnsatisfiedLinkError: C:\\Users\\u\\AppData\\Local\\Temp\\"
     "JCufft-10.1.0-windows-x86_64.dll: Can't find dependent libraries", "JCufft"),
    # JCuda 11's NVRTC binding on Linux, the message alone
    ('java.lang.UnsatisfiedLinkError: Error while loading native library "JNvrtc-11.2.0-linux-x86_64"',
     "JNvrtc"),
    ('java.lang.UnsatisfiedLinkError: Error while loading native library "JCusparse-11.0.0-windows-x86_64"\n'
     "Operating system name: Windows 10", "JCusparse"),
])
def test_a_jcuda_binding_of_a_cuda_library_not_loading_is_cuda_lib_missing(text, lib):
    got = whole_cause_and_values(text)
    assert (got["id"], got["confidence"]) == ("cuda-lib-missing", "likely")
    assert got["values"]["lib"] == lib[1:]


def test_jcudas_cudnn_binding_not_loading_is_cudnn_lib_missing():
    # JCudnn (jcuda/jcudnn), linked against cuDNN's library, through the same LibUtils
    text = ('Exception in thread "main" java.lang.UnsatisfiedLinkError: Error while loading native library '
            '"JCudnn-10.1.0-windows-x86_64"\nOperating system name: Windows 10\nArchitecture         : amd64')
    assert top_with_confidence(text) == ("cudnn-lib-missing", "likely")
    assert "cuda-lib-missing" not in answers(text)


@pytest.mark.parametrize("binding", ["JCurand-0.8.0-linux-ppc_64", "JCudnn-0.8.0-linux-ppc_64"])
def test_the_binding_not_in_the_natives_jar_is_no_missing_library(binding):
    text = (f'java.lang.UnsatisfiedLinkError: Error while loading native library "{binding}"\n'
            "Stack trace from the attempt to load the library as a resource:\n"
            f"java.lang.NullPointerException: No resource found with name '/lib/lib{binding}.so'")
    assert not {"cuda-lib-missing", "cudnn-lib-missing"} & set(answers(text))


@pytest.mark.parametrize("text, want", [
    # the driver's binding with the loader's own words: the driver library, not a toolkit's
    ('java.lang.UnsatisfiedLinkError: Error while loading native library "JCudaDriver-0.9.0d-linux-x86_64"\n'
     "Stack trace from the attempt to load the library as a resource:\n"
     "java.lang.UnsatisfiedLinkError: /tmp/libJCudaDriver-0.9.0d-linux-x86_64.so: libcuda.so.1: cannot open "
     "shared object file: No such file or directory", ("no-driver-found", "likely")),
    # a glibc older than the binding's build keeps its exact answer first
    ('java.lang.UnsatisfiedLinkError: Error while loading native library "JCublas2-0.8.0-linux-x86_64"\n'
     "java.lang.UnsatisfiedLinkError: /tmp/libJCublas2-0.8.0-linux-x86_64.so: /lib/libc.so.6: version "
     "`GLIBC_2.14' not found", ("system-lib-too-old", "exact")),
])
def test_the_loaders_own_words_inside_a_jcuda_error_keep_their_answers(text, want):
    assert top_with_confidence(text) == want


@pytest.mark.parametrize("text", [
    # JCuda's runtime binding (cudart) and another Java project's native library: not named here
    'java.lang.UnsatisfiedLinkError: Error while loading native library "JCudaRuntime-0.8.0-windows-x86_64"',
    'java.lang.UnsatisfiedLinkError: Error while loading native library "jnind4jcuda-10.2-linux-x86_64"',
])
def test_other_native_libraries_are_not_a_missing_cuda_library(text):
    assert "cuda-lib-missing" not in answers(text)


def test_jcudas_architecture_line_no_longer_gives_an_nvcc_answer():
    # the JVM's os.arch ("Architecture         : amd64") is not a GPU's: with JCuda's error named, the
    # key table (where "architecture" weighs to nvcc-arch-unsupported) is not asked
    text = ('java.lang.UnsatisfiedLinkError: Error while loading native library "JCurand-10.2.0-windows-x86_64"\n'
            "Operating system name: Windows 10\nArchitecture         : amd64\nArchitecture bit size: 64")
    assert [e.id for e in explain(text)] == ["cuda-lib-missing"]


# --- nvcc's words for archs it built are not the key table's arch keys ------------------------------

_DEPRECATED = ("nvcc warning : The 'compute_35', 'compute_37', 'compute_50', 'sm_35', 'sm_37' and 'sm_50' "
               "architectures are deprecated, and may be removed in a future release (Use "
               "-Wno-deprecated-gpu-targets to suppress warning).\n")


@pytest.mark.parametrize("text", [
    # CUDA 11's deprecation warning alone, and before a failure no wording knows
    _DEPRECATED,
    _DEPRECATED + "nvlink fatal   : Could not open input file '/tmp/tmpxft_0000_00000000-10_kern.o'",
    # CUDA 9's, the archs then deprecated
    "nvcc warning : The 'compute_20', 'sm_20', and 'sm_21' architectures are deprecated, and may be removed in a "
    "future release (Use -Wno-deprecated-gpu-targets to suppress warning).",
    # CUDA 12's, one arch as a bound
    "nvcc warning : Support for offline compilation for architectures prior to '<compute/sm/lto>_75' will be "
    "removed in a future release (Use -Wno-deprecated-gpu-targets to suppress warning).",
    # an intermediate file nvcc made for an arch, named by fatbinary
    "fatbinary fatal   : '12_kernel.sm_52.cubin' is not in 'keyword=value' format\nnvcc error   : 'fatbinary' "
    "died with status 0x1",
])
def test_archs_nvcc_shows_it_built_give_no_arch_answer(text):
    assert not {"nvcc-arch-dropped", "nvcc-arch-unsupported", "arch-not-compatible"} & set(answers(text))


@pytest.mark.parametrize("text", [
    # the arch asked for on the command line still counts, beside the warning or alone
    _DEPRECATED + "nvcc -gencode arch=compute_90,code=sm_90 -c k.cu\nnvcc error   : the build failed",
    "nvcc -gencode arch=compute_90,code=sm_90 -c k.cu\nnvcc error   : the build failed",
])
def test_an_arch_asked_for_keeps_the_key_tables_answer(text):
    # which arch causes the key table ranks follows what it has learnt (each scored round moves
    # the weights): the answers are arch causes, and there are some
    got = set(answers(text))
    assert got and got <= {"nvcc-arch-dropped", "nvcc-arch-unsupported", "arch-not-compatible"}, got


@pytest.mark.parametrize("text, want", [
    # nvcc's refusals keep their wordings' answers, the deprecation warning beside them
    (_DEPRECATED + "nvcc fatal   : Unsupported gpu architecture 'compute_30'", ("nvcc-arch-dropped", "exact")),
    (_DEPRECATED + "nvcc fatal   : Unsupported gpu architecture 'compute_90'", ("nvcc-arch-unsupported", "exact")),
])
def test_nvccs_refusals_beside_the_warning_keep_their_answers(text, want):
    assert top_with_confidence(text) == want
