"""nccl-test's sizing (envcheck/allreduce/preflight.py), called alone on made-up node facts: the
backend auto picks, the ranks each host runs, and every refusal whole (message, host, fix),
written from the docstrings and docs/nccl-test.md ("--nproc-per-node N: default the GPU count; 2
on a node without GPUs"; "more ranks than GPUs is refused"), not from a run."""
from envcheck.allreduce.preflight import RANK_BUFFERS, check_capacity, check_torch, ranks_per_host
from envcheck.facts.views import TorchImport
from envcheck.ranks.plan import NodeFacts, PreflightError

SHARE_FIX = "use --nproc-per-node at most the GPU count, or --backend gloo"
MiB = 1 << 20


def test_auto_is_nccl_with_one_rank_per_gpu_when_every_node_has_a_gpu():
    nodes = [NodeFacts("n1", gpus=4), NodeFacts("n2", gpus=8)]
    assert ranks_per_host(nodes, "auto", None, 1024) == ("nccl", [4, 8], [])
    # one GPU is a GPU
    assert ranks_per_host([NodeFacts("n1", gpus=1)], "auto", None, 1024) == ("nccl", [1], [])


def test_auto_is_gloo_with_two_ranks_per_node_when_one_node_has_no_gpu():
    nodes = [NodeFacts("n1", gpus=4), NodeFacts("n2", gpus=0)]
    assert ranks_per_host(nodes, "auto", None, 1024) == ("gloo", [2, 2], [])
    # told: as many as told, GPUs or not
    assert ranks_per_host(nodes, "gloo", 3, 1024) == ("gloo", [3, 3], [])


def test_nccl_runs_at_most_one_rank_per_gpu():
    nodes = [NodeFacts("n1", gpus=2), NodeFacts("n2", gpus=3)]
    assert ranks_per_host(nodes, "nccl", 3, 1024) == ("nccl", [3, 3], [PreflightError(
        "n1: 3 rank(s) for nccl but 2 GPU(s): two ranks would share a GPU", "n1", SHARE_FIX)])
    assert ranks_per_host(nodes, "nccl", 2, 1024) == ("nccl", [2, 2], [])


def test_nccl_on_a_node_without_gpus_is_refused_told_a_rank_count_or_not():
    nodes = [NodeFacts("n1", gpus=2), NodeFacts("n2", gpus=0)]
    refused = PreflightError("n2: --backend nccl but the node's driver lists no GPU", "n2", SHARE_FIX)
    assert ranks_per_host(nodes, "nccl", 1, 1024) == ("nccl", [1, 1], [refused])
    # without --nproc-per-node the node's GPU count, 0: no rank there would shrink the run unsaid
    assert ranks_per_host(nodes, "nccl", None, 1024) == ("nccl", [2, 0], [refused])


def test_gloo_ranks_are_held_to_the_nodes_cpus():
    n = NodeFacts("n1", cpus=4)
    assert check_capacity(n, 4, "gloo", 8) == []
    assert check_capacity(n, 5, "gloo", 8) == [
        PreflightError("n1: 5 gloo rank(s) but the node has 4 CPU(s)", "n1", "use --nproc-per-node 4 or fewer")]
    assert check_capacity(NodeFacts("n1"), 500, "gloo", 8) == []       # CPUs unknown
    assert check_capacity(n, 5, "nccl", 8) == []                        # nccl ranks run on GPUs


def test_gloo_ranks_need_three_buffers_of_the_largest_message_in_memory():
    assert RANK_BUFFERS == 3
    need = 2 * 3 * 64 * MiB                  # 384 MiB
    fits = NodeFacts("n1", mem_available=need)
    short = NodeFacts("n2", mem_available=need - 1)
    assert check_capacity(fits, 2, "gloo", 64 * MiB) == []
    assert check_capacity(short, 2, "gloo", 64 * MiB) == [PreflightError(
        f"n2: 2 rank(s) x {64 * MiB} bytes need about 384 MiB of memory, 383 MiB is available", "n2",
        "lower --max-bytes or --nproc-per-node")]
    assert check_capacity(NodeFacts("n3"), 2, "gloo", 64 * MiB) == []        # memory unknown
    assert check_capacity(short, 2, "nccl", 64 * MiB) == []                   # nccl's buffers are on the GPU


def test_both_capacity_refusals_of_a_node_come_together():
    n = NodeFacts("n1", gpus=0, cpus=1, mem_available=0)
    assert ranks_per_host([n], "gloo", None, 8) == ("gloo", [2], [
        PreflightError("n1: 2 gloo rank(s) but the node has 1 CPU(s)", "n1", "use --nproc-per-node 1 or fewer"),
        PreflightError("n1: 2 rank(s) x 8 bytes need about 0 MiB of memory, 0 MiB is available", "n1",
                       "lower --max-bytes or --nproc-per-node")])


def test_a_node_where_torch_does_not_import_is_named_with_its_interpreter_and_error():
    fix = "pass --node-python with the venv or conda env that has torch, or install torch there"
    nodes = [NodeFacts("n1", torch=TorchImport("2.4.0", None, "/usr/bin/python3")),
             NodeFacts("n2", torch=TorchImport(None, "ModuleNotFoundError: No module named 'torch'", "/opt/py")),
             NodeFacts("n3", torch=TorchImport(None, None, "")),
             NodeFacts("n4")]                                          # not asked
    assert check_torch(nodes, "/venv/bin/python") == [
        PreflightError("n2: torch does not import under /opt/py: ModuleNotFoundError: No module named 'torch'",
                       "n2", fix),
        PreflightError("n3: torch does not import under /venv/bin/python: unknown error", "n3", fix)]
    assert check_torch(nodes[2:3], None) == [
        PreflightError("n3: torch does not import under python3: unknown error", "n3", fix)]
