"""nccl-test's own part of the preflight (the rest is the rank harness's, envcheck/ranks/): the
backend and how many ranks each host runs, and whether the node can hold them, before any rank
starts: 100000 gloo ranks or a 12 GB message on a small node must be a preflight error, not an
OOM kill or a fork storm.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

from envcheck.ranks.plan import NodeFacts, PreflightError
from envcheck.ranks.preflight import PROBE_SECTIONS

# host memory one gloo rank holds at the largest size: the send/receive buffer and the copy the
# sums are checked against (the worker's allocations), with room for torch itself
RANK_BUFFERS = 3


def ranks_per_host(nodes: Sequence[NodeFacts], backend: str, nproc_per_node: Optional[int],
                   max_bytes: int) -> Tuple[str, List[int], List[PreflightError]]:
    """The backend (auto: nccl when every node has a GPU, else gloo) and the ranks per host: one
    per GPU for nccl, never two on one GPU (nor one on a node without); 2 per node for gloo unless told."""
    if backend == "auto":
        backend = "nccl" if all(n.gpus > 0 for n in nodes) else "gloo"
    nprocs: List[int] = []
    errs: List[PreflightError] = []
    for n in nodes:
        k = nproc_per_node or (n.gpus if backend == "nccl" else 2)
        if backend == "nccl" and (k > n.gpus or not n.gpus):   # 0 GPUs: not 0 ranks, unsaid
            errs.append(PreflightError(
                f"{n.host}: {k} rank(s) for nccl but {n.gpus} GPU(s): two ranks would share a GPU"
                if n.gpus else f"{n.host}: --backend nccl but the node's driver lists no GPU",
                n.host, "use --nproc-per-node at most the GPU count, or --backend gloo"))
        errs += check_capacity(n, k, backend, max_bytes)
        nprocs.append(k)
    return backend, nprocs, errs


def check_capacity(n: NodeFacts, ranks: int, backend: str, max_bytes: int) -> List[PreflightError]:
    """Ranks a node can run at once and the memory the largest message needs."""
    errs = []
    if backend == "gloo" and n.cpus and ranks > n.cpus:
        errs.append(PreflightError(f"{n.host}: {ranks} gloo rank(s) but the node has {n.cpus} CPU(s)",
                                   n.host, f"use --nproc-per-node {n.cpus} or fewer"))
    need = ranks * RANK_BUFFERS * max_bytes
    if backend == "gloo" and n.mem_available is not None and need > n.mem_available:
        errs.append(PreflightError(
            f"{n.host}: {ranks} rank(s) x {max_bytes} bytes need about {need >> 20} MiB of memory, "
            f"{n.mem_available >> 20} MiB is available", n.host, "lower --max-bytes or --nproc-per-node"))
    return errs


# nccl-test's sections: the harness's, and whether torch imports (launch has its own node check,
# which looks for the script too)
RANK_SECTIONS = PROBE_SECTIONS + ("torch_import",)
TORCH_FIX = "pass --node-python with the venv or conda env that has torch, or install torch there"
TORCH_TIMEOUT = 60.0    # seconds on top of the harness's: the probe gives the import 60 s


def check_torch(nodes: Sequence[NodeFacts], python: Optional[str]) -> List[PreflightError]:
    """Every rank imports torch: a node where it does not import is named before any starts
    (what launch's preflight says too), instead of 'rank 1 could not start: No module named'."""
    return [PreflightError(f"{n.host}: torch does not import under {n.torch.executable or python or 'python3'}: "
                           f"{n.torch.error or 'unknown error'}", n.host, TORCH_FIX)
            for n in nodes if n.torch is not None and not n.torch.version]
