"""The thirty-second round (scoped, like the thirty-first, to texts that name PyTorch), heldout32's
s-z part, texts 64-79 (speechbrain/speechbrain#2225 to SHI-Labs/Compact-Transformers#1): what its
misses (scored once at fe46cea, then read) showed that is general, mended from what the emitter
prints and what it means, with texts other than any held-out one and look-alikes that keep their
answers. No confident negative was in this part.

- glibc's loader before 2.31 (elf/dl-lookup.c _dl_lookup_symbol_x at glibc-2.27, read from the
  bminor/glibc mirror): when the file named in a relocation entry's version need carries version
  information but not the symbol, "symbol %s version %s not defined in file %s with link time
  reference%s" (version->name, version->filename); 2.31 and later say "undefined symbol: %s,
  version %s", which cuda-libs-conflict already read. For a CUDA library's version node
  (libcublasLt.so.11, libcudnn.so.7 ...) it is the same thing: a library of another release loaded
  under that soname than the one the caller was linked against (Sara-Ahmed/SiT#12: CUDA 11.0's
  libcublasLt under torch's 11.1 libcublas; heldout11's deepmd-kit#2241, the same words with a
  comma, now answered too). cuda-libs-conflict, likely, {CUDALIB} only: zlib's and the like are not
  read.
- torch's Python API that a release added, missing under an older torch. The words are Python's
  own (module __getattr__'s "module %R has no attribute %R", the import system's "cannot import
  name" and "No module named", pickle's find_class "Can't get attribute %R on %R", a call's
  "missing 1 required positional argument"), so what they mean is in the name: each name below was
  read in torch's wheels (1.0.1, 1.2.0, 1.4.0, 1.6.0, 1.8.1, 1.13.1, 2.1.2, 2.5.1 and the installed
  2.13) to be in a later release and not an earlier one: torch/nn/init.py's trunc_normal_ (1.6.0's,
  not 1.4.0's); torch/nn/modules/activation.py's SiLU (1.8.1's, not 1.6.0's; a checkpoint pickled
  whole with nn.SiLU in it cannot be unpickled by an older torch, yolov5's); torch/hub.py's
  load(github, model, ...) up to 1.6.0, load(repo_or_dir, model, ...) from 1.8.1's (1.7 by the
  silero-vad README); torch/library.py's custom_op, torch/distributed's DeviceMesh and
  device_mesh, torch/nn/attention and its flex_attention (2.5.1's, none of them 2.1.2's; the
  releases between, 2.2, 2.4 and 2.5, are the release notes' and the threads', no wheel of them
  was read). package-torch-mismatch, likely, each name in its own module's words (the id's cause,
  shared with the other parts' readers, left as it was: it names the API and both directions).
  Only these names: the same words for a name some torch has and the installed one lacks were, in
  this very part, the program's own slip against the torch it declares (ultralytics/ultralytics#487,
  torch.cuda.OutOfMemoryError, 1.13; suno-ai/bark#40, torch.cuda.is_bf16_supported, 1.10; both
  fixed in the package's code), so no wording reads any torch name missing; a name no torch ever
  had (a typo) is not read either. (Since then the release table torch_names.json gives every name
  some release read has and another lacks a `possible` lead, these two included.)
- cuda-oom's bare 'outofmemoryerror' read "module 'torch.cuda' has no attribute
  'OutOfMemoryError'" (ultralytics#487, a negative) as memory run out, exact: the name in Python's
  words for a torch without it is now passed over (a workload answer, not scored, but wrong).

Relabels: none.

Left, and why: wochenlong/lora-scripts-next#47 (`other:`, no Triton on Windows) is torch's
"TritonMissing: Cannot find a working triton installation" (torch/_inductor/exc.py), which on
Linux means a Triton missing or too old for torch, a different cause than the thread's: it gets no
answer, as an `other:` should. The part's other texts were hits or negatives answered without
confidence (speechbrain#2225 torchaudio's backend, unsloth#1250, Rerender_A_Video#48 a truncated
checkpoint, silero-models#109, papr#4's deprecation warning, bark#40 and ultralytics#487 above)."""
from __future__ import annotations

import pytest

from tests.explain.answers import answers, top_with_confidence, whole_cause_and_values

# --- glibc before 2.31: a versioned CUDA symbol not in the library loaded ---------------------------


@pytest.mark.parametrize("text", [
    "OSError: /opt/conda/lib/python3.7/site-packages/torch/lib/libtorch_cuda.so: symbol "
    "cudnnGetConvolutionForwardAlgorithm_v7, version libcudnn.so.7 not defined in file libcudnn.so.7 with "
    "link time reference",
    "ImportError: /usr/local/lib/python3.8/dist-packages/torch/lib/libtorch_cuda_cu.so: symbol "
    "cufftXtMakePlanMany version libcufft.so.10 not defined in file libcufft.so.10 with link time reference",
])
def test_old_glibcs_versioned_cuda_symbol_not_in_the_file_is_two_releases(text):
    assert top_with_confidence(text) == ("cuda-libs-conflict", "likely")


@pytest.mark.parametrize("text, want", [
    # another library's version node: not a CUDA library's two releases
    ("ImportError: /usr/lib/x86_64-linux-gnu/libpng16.so.16: symbol gzopen64 version ZLIB_1.2.3.3 not "
     "defined in file libz.so.1 with link time reference", None),
    # glibc 2.31's form keeps its answer
    ("ImportError: /home/u/env/lib/python3.9/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: "
     "cublasLtGetStatusString, version libcublasLt.so.11", ("cuda-libs-conflict", "likely")),
])
def test_old_glibc_look_alikes_keep_their_answers(text, want):
    assert top_with_confidence(text) == want


# --- names torch added, missing under an older torch ------------------------------------------------


@pytest.mark.parametrize("text, api", [
    ('  File "/work/vit/models/vit.py", line 61, in _init_weights\n'
     "    nn.init.trunc_normal_(m.weight, std=.02)\n"
     "AttributeError: module 'torch.nn.init' has no attribute 'trunc_normal_'", "trunc_normal_"),
    ('  File "/usr/lib/python3.6/pickle.py", line 1388, in find_class\n'
     "    return getattr(sys.modules[module], name)\n"
     "AttributeError: Can't get attribute 'SiLU' on <module 'torch.nn.modules.activation' from "
     "'/usr/local/lib/python3.6/dist-packages/torch/nn/modules/activation.py'>", "SiLU"),
    ("  File \"/srv/vad.py\", line 4, in <module>\n"
     "    model, utils = torch.hub.load(repo_or_dir='snakers4/silero-vad', model='silero_vad')\n"
     "TypeError: load() got an unexpected keyword argument 'repo_or_dir'", "repo_or_dir"),
    ("TypeError: load() missing 1 required positional argument: 'github'", "github"),
    ('  File "/src/kernels/ops.py", line 9, in <module>\n'
     '    @torch.library.custom_op("mylib::gather", mutates_args=())\n'
     "AttributeError: module 'torch.library' has no attribute 'custom_op'", "custom_op"),
    ("ImportError: cannot import name 'init_device_mesh' from 'torch.distributed' "
     "(/opt/venv/lib/python3.10/site-packages/torch/distributed/__init__.py)", "init_device_mesh"),
    ("ModuleNotFoundError: No module named 'torch.distributed.device_mesh'", "torch.distributed.device_mesh"),
    ("    from torch.nn.attention import SDPBackend, sdpa_kernel\n"
     "ModuleNotFoundError: No module named 'torch.nn.attention'", "torch.nn.attention"),
])
def test_a_name_a_later_torch_added_is_package_torch_mismatch(text, api):
    got = whole_cause_and_values(text)
    assert (got["id"], got["confidence"]) == ("package-torch-mismatch", "likely")
    assert got["values"]["api"].lower() == api.lower()
    assert f"Python API of another release: {got['values']['api']} is gone" in got["cause"]


@pytest.mark.parametrize("text", [
    # a name no torch had (a typo)
    "AttributeError: module 'torch.nn.init' has no attribute 'trunc_normal'",
    # pickle's words for the program's own classes
    "AttributeError: Can't get attribute 'MyModel' on <module '__main__' from 'serve.py'>",
    "AttributeError: Can't get attribute 'SiLU' on <module 'models.common' from '/app/models/common.py'>",
    # another load()
    "TypeError: load() missing 1 required positional argument: 'path'",
    # the private path a later torch moved it from: not these words
    "ImportError: cannot import name 'DeviceMesh' from 'torch.distributed._tensor' "
    "(/opt/venv/lib/python3.10/site-packages/torch/distributed/_tensor/__init__.py)",
])
def test_torch_name_look_alikes_are_not_read(text):
    assert "package-torch-mismatch" not in answers(text)


@pytest.mark.parametrize("text", [
    # names some torch lacks, read as the program's own slip as often: no wording reads them, only
    # the release table (torch_names.json) as a lead
    "AttributeError: module 'torch.cuda' has no attribute 'is_bf16_supported'",
    "AttributeError: module 'torch.library' has no attribute 'register_fake'",
    "AttributeError: module 'torch.distributed' has no attribute 'device_mesh'",
])
def test_names_some_torch_lacks_are_only_the_release_tables_lead(text):
    assert answers(text) == {"package-torch-mismatch": "possible"}


def test_the_older_names_keep_their_answer():
    assert top_with_confidence("ImportError: cannot import name 'container_abcs' from 'torch._six'") == (
        "package-torch-mismatch", "likely")


# --- cuda-oom and Python's words for a torch without OutOfMemoryError ------------------------------


def test_a_torch_without_out_of_memory_error_is_no_memory_run_out():
    from envcheck.explain.match import explain
    # no memory run out; only the release table's lead (OutOfMemoryError is new in torch 1.13)
    assert [(e.id, e.confidence) for e in explain(
        "AttributeError: module 'torch.cuda' has no attribute 'OutOfMemoryError'")] == [("package-torch-mismatch",
                                                                                          "possible")]
    assert "cuda-oom" in [e.id for e in explain(
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB")]
    assert "cuda-oom" in [e.id for e in explain("torch.OutOfMemoryError: out of memory on device 0")]
