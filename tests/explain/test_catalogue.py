"""The catalogue of what the emitters print (envcheck/explain/catalogue.json): where each entry
comes from, that the causes in it are the ones tools/explain_catalogue/causes.yaml assigns, and
that `explain` reaches a cause from any catalogued message or from an error code alone."""
from __future__ import annotations

import copy
import json
import re

import pytest
import yaml

from envcheck.explain import catalogue
from envcheck.explain.match import explain, top_environment_cause
from envcheck.explain.signatures import signatures
from tests.conftest import REPO

DOC = json.loads(catalogue.DATA.read_text())
RULES = yaml.safe_load((REPO / "tools" / "explain_catalogue" / "causes.yaml").read_text())
IDS = {s.id: s for s in signatures()}
CONTEXT_TEXT = {"distributed": "torch.distributed init_process_group", "shm": "/dev/shm", "devnodes": "/dev/nvidia0",
                "procdriver": "/proc/driver/nvidia/params", "compiler": "/usr/local/cuda/bin/nvcc", "nvcc": "nvcc",
                "nvidia": "docker run --runtime=nvidia",
                # a context that holds where the text names no other refusal: nothing to add
                "not_other_refusal": ""}

# real message texts, as the catalogue's sources print them, for the causes no wording names
CASES = {
    "RuntimeError: CUDA error: CUDA driver is a stub library": "cuda-stub-library",
    "CUDA error: the provided PTX was compiled with an unsupported toolchain.": "ptx-toolchain-too-new",
    "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable": "gpu-busy-or-unavailable",
    "RuntimeError: CUDA error: uncorrectable ECC error encountered": "gpu-hardware-fault",
    "CUDA error: the launch timed out and was terminated": "kernel-launch-timeout",
    "cudaErrorPeerAccessUnsupported: peer access is not supported between these two devices": "p2p-unsupported",
    "nvidia-smi: Failed to initialize NVML: Insufficient Permissions": "device-permission",
    "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].":
        "container-toolkit-missing",
    "nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: cannot open shared "
    "object file: no such file or directory: unknown": "container-no-driver",
    "Failed to initialize NVML: Unknown Error": "container-lost-gpus",
    "RuntimeError: Ninja is required to load C++ extensions (pip install ninja to get it)": "ninja-missing",
    "RuntimeError: nms is not compiled with GPU support": "extension-ops-missing",
    "node1:77:93 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<33123> with error 12, opcode 0, "
    "len 0, vendor err 129 (Recv)": "nccl-ib-error",
    "NCCL WARN NCCL library is too old. This application was compiled with NCCL version 22105, but is "
    "running with NCCL library version 21803.": "nccl-version-mismatch",
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1331, unhandled cuda error "
    "(run with NCCL_DEBUG=INFO for details), NCCL version 2.18.5": "nccl-cuda-error",
    "NCCL error in: ProcessGroupNCCL.cpp:1191, internal error - please report this issue to the NCCL "
    "developers, NCCL version 2.14.3": "nccl-internal-error",
    "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED": "cudnn-execution-failed",
    "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, "
    "n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`": "cublas-execution-failed",
    "OSError: [WinError 1455] The paging file is too small for this operation to complete.": "windows-pagefile",
    "OSError: [WinError 126] The specified module could not be found. Error loading "
    "\"C:\\envs\\t\\lib\\site-packages\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or one of its dependencies.":
        "windows-dll-load-failed",
    "RuntimeError: CUDA error: invalid argument": "program-error",
    "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
    "use the 'spawn' start method": "cuda-fork",
    "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 4129) of binary: "
    "/usr/bin/python3": "host-oom-kill",
    "error: command '/usr/local/cuda/bin/nvcc' failed with exit code 1": "extension-torch-incompatible",
    "RuntimeError: CUDA error: CUBLAS_STATUS_INVALID_VALUE when calling `cublasSgemm( handle, opa, opb, m, n, k, "
    "&alpha, a, lda, b, ldb, &beta, c, ldc)`": "cuda-libs-conflict",
    "nvidia-container-cli: mount error: mount operation failed: /var/lib/docker/overlay2/x/merged/proc/driver/"
    "nvidia/params/version/registry: no such file or directory": "driver-state-stale",
    # the kernel module's message in dmesg, wrapped over lines that each carry the timestamp and tag
    "[ 512.004211] NVRM: The NVIDIA GPU 0000:3b:00.0\n[ 512.004215] NVRM: (PCI ID: 10de:20b0) installed in "
    "this system has\n[ 512.004217] NVRM: fallen off the bus and is not responding to commands.": "gpu-hardware-fault",
    "$ nvidia-smi\nUnable to determine the device handle for GPU0000:65:00.0: Unknown Error": "gpu-hardware-fault",
    "$ nvidia-smi\nNo devices were found": "no-driver-found",
    # torch <= 1.x printed it without the trailing hint newer releases add
    "RuntimeError: Ninja is required to load C++ extensions": "ninja-missing",
}


def test_every_entry_says_where_it_comes_from():
    sources = DOC["sources"]
    for repo, path, refs in sources:
        assert repo and path and refs and all(refs), (repo, path)
    for item in DOC["templates"] + DOC["codes"]:
        assert item["s"] and all(0 <= i < len(sources) for i in item["s"]), item
    repos = {s[0] for s in sources}
    assert {"pytorch/pytorch", "NVIDIA/nccl", "NVIDIA/nvidia-container-toolkit", "NVIDIA/libnvidia-container",
            "deepspeedai/DeepSpeed", "NVIDIA/apex", "open-mmlab/mmcv", "facebookresearch/detectron2",
            "vllm-project/vllm", "moby/moby", "ROCm/HIPIFY"} <= repos


def test_pytorch_and_nccl_messages_are_read_at_several_releases():
    refs = {}
    for repo, _path, rs in DOC["sources"]:
        refs.setdefault(repo, set()).update(rs)
    assert len(refs["NVIDIA/nccl"]) >= 10 and len(refs["deepspeedai/DeepSpeed"]) >= 5
    assert len(refs["open-mmlab/mmcv"]) >= 4 and len(refs["NVIDIA/nvidia-container-toolkit"]) >= 5


def test_every_library_error_code_is_there_with_its_number_and_a_cause():
    by_lib = {}
    for c in DOC["codes"]:
        by_lib.setdefault(c["lib"], []).append(c)
    floors = {"CUDA runtime": 120, "CUDA driver": 90, "cuDNN": 40, "cuBLAS": 9, "NVML": 20, "NCCL": 7, "errno": 100}
    for lib, n in floors.items():
        assert len(by_lib[lib]) >= n, lib
        if lib != "errno":
            assert all(c.get("c") for c in by_lib[lib]), [c["name"] for c in by_lib[lib] if not c.get("c")]
    numbered = {lib: sum(c["num"] is not None for c in cs) / len(cs) for lib, cs in by_lib.items()}
    assert all(numbered[lib] > 0.95 for lib in ("CUDA runtime", "CUDA driver", "NVML", "cuBLAS", "NCCL"))
    described = [c for c in by_lib["CUDA runtime"] if c.get("text")]
    assert len(described) >= 100 and any(c["text"] == "no kernel image is available for execution on the device"
                                         for c in described)


def test_the_causes_in_the_catalogue_are_those_the_rules_assign_and_exist():
    again = catalogue.apply_causes(copy.deepcopy(DOC), RULES)
    for a, b in zip(DOC["templates"] + DOC["codes"], again["templates"] + again["codes"]):
        assert (a.get("c"), a.get("w"), a.get("x")) == (b.get("c"), b.get("w"), b.get("x")), \
            "catalogue.json is stale: python3 tools/explain_catalogue/gen.py --causes-only"
    named = {c for item in DOC["templates"] + DOC["codes"] for c, _ in item.get("c", [])}
    assert named <= set(IDS), named - set(IDS)


def _fill(template: str) -> str:
    """A text the program could print from the template: each wildcard filled."""
    return catalogue.WILD.sub("x7", template).replace("{{", "{").replace("}}", "}")


@pytest.mark.parametrize("lib", ["CUDA runtime", "CUDA driver", "cuDNN", "cuBLAS", "NVML", "NCCL", "NVRTC", "errno"])
def test_an_error_code_alone_gets_its_ranked_causes(lib):
    checked = 0
    for code in DOC["codes"]:
        if code["lib"] != lib or not code.get("c"):
            continue
        ctx = next((k for k, v in RULES["contexts"].items() if v == code.get("x")), None)
        text = f"RuntimeError: the call failed with {code['name']}" + (f" ({CONTEXT_TEXT[ctx]})" if ctx else "")
        found = explain(text)
        ids = [e.id for e in found]
        assert ids[0] == code["c"][0][0], (code["name"], ids)
        if found[0].via:   # no wording knows the name: the code's own ranking, in order
            assert ids[:len(code["c"])] == [c for c, _ in code["c"]], (code["name"], ids)
        checked += 1
    assert checked >= 5


def test_every_catalogued_message_with_a_cause_finds_it():
    checked = 0
    for t in DOC["templates"]:
        if not t.get("c"):
            continue
        ctx = next((k for k, v in RULES["contexts"].items() if v == t.get("x")), None)
        text = "Traceback (most recent call last):\nRuntimeError: " + _fill(t["t"]) + (f" {CONTEXT_TEXT[ctx]}" if ctx else "")
        assert t["c"][0][0] in {e.id for e in explain(text)}, t["t"]
        checked += 1
    assert checked >= 200


@pytest.mark.parametrize("text,cause", list(CASES.items()), ids=list(CASES.values()))
def test_messages_no_wording_knows_are_explained_from_the_catalogue(text, cause):
    found = explain(text)
    assert found and found[0].id == cause, [(e.id, e.confidence) for e in found]
    assert found[0].cause and found[0].fix


def test_numbers_count_only_where_the_text_says_whose_number_it_is():
    e = explain("RuntimeError: CUDA error 209 at kernel.cu:12")[0]
    assert e.id == "no-kernel-image" and e.values["code"] == "cudaErrorNoKernelImageForDevice"
    assert "by its number" in e.via
    e = explain("[E socket.cpp:860] The server socket has failed to listen (errno: 98 - Address already in use).")[0]
    assert e.id == "address-in-use"
    # a bare number, and a generic description without the library's prefix, name nothing
    assert explain("epoch 209 finished, loss 0.3") == []
    assert explain("ValueError: invalid argument for --lr") == []


def test_codes_in_the_forms_other_emitters_print_them():
    # the kernel module's Xid line, numba's CudaAPIError, CUDA <= 4.x's description of code 46
    assert explain("kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>")[0].id == "gpu-hardware-fault"
    assert explain("NVRM: Xid (PCI:0000:3b:00): 13, Graphics Exception")[0].id == "illegal-memory-access"
    assert explain("numba.cuda.cudadrv.driver.CudaAPIError: [34] Call to cuInit results in CUDA_ERROR_STUB_LIBRARY")[0].id \
        == "cuda-stub-library"
    assert explain("numba.cuda.cudadrv.driver.CudaAPIError: [34]")[0].id == "cuda-stub-library"
    assert explain("RuntimeError: cuda runtime error (46) : all CUDA-capable devices are busy or unavailable")[0].id \
        == "gpu-busy-or-unavailable"
    # nvcc's own message without its "nvcc fatal :" prefix; NCCL's IB wrapper, whose call name a
    # macro splices in, by the file that prints it
    assert explain("Unsupported gpu architecture 'compute_90a'")[0].id == "nvcc-arch-unsupported"
    assert explain("misc/ibvwrap.cc:262 NCCL WARN Call to ibv_reg_mr failed with error Cannot allocate memory")[0].id \
        == "nccl-ib-error"


def test_errno_descriptions_alone_name_nothing():
    # "Connection timed out" is plain English: only an errno name or number counts
    assert all(e.id != "rendezvous-refused" for e in explain("NCCL WARN socket: Connection timed out"))


def test_a_generic_socket_errno_is_blamed_on_the_rendezvous_only_in_a_distributed_run():
    assert explain("requests.exceptions.ConnectionError: [Errno 111] ECONNREFUSED huggingface.co") == []
    found = explain("torch.distributed init_process_group: [Errno 111] ECONNREFUSED")
    assert top_environment_cause(found).id == "rendezvous-refused"


def test_a_catalogue_match_says_what_was_recognised_and_where_it_comes_from():
    [e] = explain("ncclInternalError")
    assert e.id == "nccl-internal-error" and "NCCL" in e.via and "NVIDIA/nccl" in e.via
    assert "via" in e.to_dict() and re.search(r"v2\.\d+\.\d+-1", e.via)


def test_the_catalogue_is_loaded_only_when_explain_runs():
    import subprocess
    import sys
    code = ("import sys, envcheck.cli; import envcheck.explain.match; "
            "print(any(m.endswith('catalogue') and hasattr(sys.modules[m], 'table') and "
            "sys.modules[m].table.cache_info().currsize for m in list(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
