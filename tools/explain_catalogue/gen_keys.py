#!/usr/bin/env python3
"""Build envcheck/explain/keys.json: for each stable key of an error text (envcheck/explain/keys.py:
error names and numbers, library file names, tools, environment phrases), the environment causes of
the labelled texts that held it, with a weight: the share of the texts holding the key that had the
cause. Every labelled text counts in that share: negatives (OOMs, program bugs), texts whose cause
is the workload's, and `other:` causes no id names, so a key common among them weighs little.

    python3 tools/explain_catalogue/gen_keys.py           # writes envcheck/explain/keys.json
    python3 tools/explain_catalogue/gen_keys.py --check   # exit 1 when the file is not current

The labelled texts: tests/fixtures/errors/<cause>.yaml (_negatives.yaml: negatives) and the scored
held-out rounds, heldout.yaml .. heldout38.yaml, heldout34 not yet (ROUNDS; a round joins only once it has been scored
once, since what is learnt from it is in-sample for it). bench/explain_cv.py builds the same table
without one round at a time to measure what it gives a round it never saw.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Dict, Iterable, List, Sequence, Tuple

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from envcheck.explain.keys import Model  # noqa: E402
from envcheck.explain.normalise import Normalised  # noqa: E402

OUT = ROOT / "envcheck" / "explain" / "keys.json"
CORPUS = ROOT / "tests" / "fixtures" / "errors"
HELDOUT = ROOT / "tests" / "fixtures" / "errors-heldout"
# the scored rounds, by name: a round collected and not yet scored is never read here
ROUNDS = ("heldout.yaml", "heldout2.yaml", "heldout3.yaml", "heldout4.yaml", "heldout5.yaml",
          "heldout6.yaml", "heldout7.yaml", "heldout8.yaml", "heldout9.yaml", "heldout10.yaml",
          "heldout11.yaml", "heldout12.yaml", "heldout13.yaml", "heldout14.yaml", "heldout15.yaml",
          "heldout16.yaml", "heldout17.yaml", "heldout18.yaml", "heldout19.yaml",
          "heldout20.yaml", "heldout21.yaml", "heldout22.yaml", "heldout23.yaml", "heldout24.yaml",
          "heldout25.yaml", "heldout26.yaml", "heldout27.yaml", "heldout28.yaml",
          "heldout29.yaml", "heldout30.yaml", "heldout31.yaml", "heldout32.yaml",
          "heldout33.yaml", "heldout35.yaml", "heldout36.yaml", "heldout37.yaml", "heldout38.yaml")
# the tools, libraries, frameworks and variables whose name is a key (tool:NAME)
TOOLS = ("nvcc", "ptxas", "nvidia-smi", "nvidia-container-cli", "nvidia-container-runtime",
         "nvidia-container-toolkit", "nvidia-docker", "nvidia-modprobe", "nvidia-installer",
         "nvidia-persistenced", "nv-fabricmanager", "cl.exe", "gcc", "g++", "clang", "ld", "ninja",
         "cmake", "dkms", "modprobe", "slurmstepd", "srun", "sbatch", "mpirun", "docker", "podman",
         "singularity", "apptainer", "enroot", "kubectl", "containerd", "rocm-smi", "rocminfo",
         "hipcc", "torchrun", "deepspeed", "triton", "jaxlib", "tensorflow", "onnxruntime",
         "bitsandbytes", "xformers", "flash_attn", "vllm", "apex", "mmcv", "detectron2", "cupy",
         "numba", "pycuda", "tensorrt", "wsl", "conda", "pip", "setup.py", "nvrtc", "nvml",
         "nccl", "cudnn", "cublas", "gloo", "ucx", "libfabric", "mpi", "rocm", "hip", "rccl",
         "miopen", "cuda_home", "cuda_path", "ld_library_path", "cuda_visible_devices",
         "nccl_socket_ifname", "gloo_socket_ifname", "master_addr", "master_port",
         "torch_cuda_arch_list", "nccl_ib_disable", "nccl_p2p_disable", "hsa_override_gfx_version")

# environment phrases: what the messages of the environment's failures say, in any wording
PHRASES = ("cannot open shared object file", "undefined symbol", "not found", "no such file",
           "undefined reference", "version mismatch", "mismatch", "driver", "toolkit", "runtime",
           "kernel module", "compute capability", "architecture", "no kernel image", "not compiled",
           "compiled with", "built with", "not supported", "unsupported", "too old", "newer",
           "insufficient", "no cuda gpus", "no gpu", "falling back to cpu", "cpu only", "cpu-only",
           "not available", "unavailable", "busy", "permission denied", "operation not permitted",
           "connection refused", "connection reset", "timed out", "timeout", "address already in use",
           "socket", "rendezvous", "hostname", "getaddrinfo", "interface", "watchdog", "heartbeat",
           "container", "prestart hook", "oci runtime", "mount error", "cgroup", "device rules",
           "unknown runtime", "secure boot", "fabric manager", "fallen off the bus", "nvlink", "pcie",
           "infiniband", "rdma", "ptx", "jit", "stub", "visual studio", "msvc", "python.h",
           "no matching distribution", "wheel", "build isolation", "failed to initialize",
           "initialization error", "dll load failed", "could not load", "unable to load",
           "failed to load", "shared memory", "device ordinal", "visible devices",
           "unknown error", "not initialized", "internal error", "system error", "remote process",
           "reboot", "upgrade", "suspend", "wsl", "windows")

MIN_TEXTS = 2          # a key held by one labelled text only says which text it was
PRECISION = 4

Labelled = Tuple[str, str, List[str]]     # (where from, text, the ids of its environment causes)


def read_yaml(path: Path) -> Any:
    """A fixture's YAML, by libyaml: about 17 times PyYAML's own parser, and the rounds are 6 MB that
    every bench and replay reads (the hash-seed test alone read them three times, ~25 s of CPU
    each on CI). PyYAML's own parser only where libyaml refuses the text: an older commit's round
    with a tab where libyaml wants an indentation space (rounds 2, 11 and 21 had one until 2026-12-04;
    the two parsers give equal data for every file both read)."""
    text = Path(path).read_text()
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506
    except yaml.YAMLError:
        return yaml.safe_load(text)


def environment_ids() -> set:
    sigs = read_yaml(ROOT / "envcheck" / "explain" / "signatures.yaml")
    return {s["id"] for s in sigs if s.get("kind", "environment") == "environment"}


def corpus_texts(env: set) -> List[Labelled]:
    out = []
    for f in sorted(CORPUS.glob("*.yaml")):
        for item in read_yaml(f):
            out.append((f"errors/{f.name}", item["text"], [f.stem] if f.stem in env else []))
    return out


def round_texts(name: str, env: set) -> List[Labelled]:
    out = []
    for item in read_yaml(HELDOUT / name):
        want = item["cause"] or []
        want = want if isinstance(want, list) else [want]
        out.append((name, item["text"], [c for c in want if c in env]))
    return out


def build(texts: Iterable[Labelled], min_texts: int = MIN_TEXTS) -> Dict[str, Any]:
    """keys.json's document: the vocabulary, and per key [[cause, weight]...], heaviest first:
    weight = (texts with the key and the cause, a text of k causes counting 1/k for each) /
    (texts with the key + 1)."""
    doc: Dict[str, Any] = {"tools": sorted(TOOLS), "phrases": sorted(PHRASES)}
    extract = Model(doc).keys
    held: Counter = Counter()
    with_cause: Dict[str, Counter] = defaultdict(Counter)
    for _, text, causes in texts:
        for key in extract(Normalised(text).lower):
            held[key] += 1
            for c in causes:
                with_cause[key][c] += 1 / len(causes)
    table = {}
    for key in sorted(with_cause):
        if held[key] < min_texts:
            continue
        row = [[c, round(n / (held[key] + 1), PRECISION)] for c, n in with_cause[key].items()]
        table[key] = sorted(row, key=lambda r: (-r[1], r[0]))
    doc["weights"] = table
    return doc


def labelled(rounds: Sequence[str] = ROUNDS) -> List[Labelled]:
    env = environment_ids()
    return corpus_texts(env) + [t for r in rounds for t in round_texts(r, env)]


def document() -> str:
    texts = labelled()
    doc = {"generated_by": "tools/explain_catalogue/gen_keys.py",
           "from": ["tests/fixtures/errors/*.yaml", *(f"tests/fixtures/errors-heldout/{r}" for r in ROUNDS)],
           "texts": len(texts), "min_texts": MIN_TEXTS, **build(texts)}
    return json.dumps(doc, indent=0, sort_keys=True) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when keys.json is not what this builds")
    args = ap.parse_args(argv)
    text = document()
    if args.check:
        current = OUT.read_text() if OUT.exists() else ""
        print("keys.json is current" if current == text else "keys.json is stale: run gen_keys.py")
        return 0 if current == text else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {len(json.loads(text)['weights'])} keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
