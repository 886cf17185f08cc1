"""A whole nccl-test run on this machine (envcheck/allreduce/run.py's preflight and ranks), through
the real probe, launcher and worker (LocalRemote), with a stand-in `torch` package on PYTHONPATH in
place of torch: one whose import fails, so the preflight must refuse before any rank starts, and
one without torch.distributed, so the rank fails at its setup and the run must say which rank, on
which host, and stop. No torch, no GPU, no network; a few seconds each."""
import sys

from envcheck.allreduce import run as ar
from envcheck.allreduce.preflight import TORCH_FIX
from envcheck.ranks.failure import Failure
from envcheck.remote import LocalRemote

BOUNDS = dict(timeout=20.0, rendezvous_timeout=20.0, run_timeout=60.0, connect_timeout=10.0)


def standin_torch(tmp_path, monkeypatch, body):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(body)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))     # the probe and the ranks run with our environment


def node_python(tmp_path, body):
    """An interpreter (--node-python) that alone sees the stand-in torch: the probe and the ranks
    must run under the one named, not python3."""
    (tmp_path / "lib" / "torch").mkdir(parents=True)
    (tmp_path / "lib" / "torch" / "__init__.py").write_text(body)
    py = tmp_path / "python"
    py.write_text(f"#!/bin/sh\nPYTHONPATH={tmp_path / 'lib'} exec {sys.executable} \"$@\"\n")
    py.chmod(0o755)
    return str(py)


def free_port(addr):
    import socket
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def test_a_node_where_torch_does_not_import_is_refused_before_any_rank_starts(tmp_path, monkeypatch):
    standin_torch(tmp_path, monkeypatch, "raise ImportError('no torch here')\n")
    said = []
    rep = ar.run_allreduce([LocalRemote("n1")], ar.Options(node_python=sys.executable, max_bytes=64, **BOUNDS),
                           said.append)
    refused = Failure("preflight", f"n1: torch does not import under {sys.executable}: ImportError: no torch here",
                      "n1", None, TORCH_FIX)
    assert rep.failure == refused and rep.preflight_errors == [
        {"message": refused.message, "host": "n1", "fix": TORCH_FIX}]
    # nothing was planned: no backend, no ranks, no master, no run
    assert (rep.backend, rep.world_size, rep.master_addr, rep.master_port, rep.run_id, rep.links) == ("", 0, "", 0, "", {})
    assert said == ["preflight: node facts"]


def test_a_rank_that_cannot_set_up_is_named_and_the_run_stopped(tmp_path, monkeypatch):
    standin_torch(tmp_path, monkeypatch, "__version__ = '2.4.0'\n")      # imports; has no torch.distributed
    said = []
    rep = ar.run_allreduce([LocalRemote("n1")], ar.Options(node_python=sys.executable, nproc_per_node=1,
                                                           max_bytes=64, **BOUNDS), said.append)
    assert rep.failure == Failure("setup", "rank 0 on n1 could not start: No module named 'torch.distributed'; "
                                  "ranks that never joined: 0 (n1)", "n1", 0,
                                  "see the log below; torch must import under --node-python")
    # the plan: no GPU here, so gloo (one rank, as told); one host: this machine's loopback, no interface
    port = rep.master_port
    assert (rep.backend, rep.world_size, rep.master_addr, rep.ifname, rep.notes) == ("gloo", 1, "127.0.0.1", None, [])
    assert 0 < port < 65536 and rep.run_id.startswith(ar.MARKER) and len(rep.run_id) == len(ar.MARKER) + 12
    assert (rep.links, rep.nvlinks, rep.host_status) == ({"n1": None}, {"n1": None}, {"n1": "exit 1"})
    assert rep.logs["n1"].endswith("setup failed: No module named 'torch.distributed'")
    assert (rep.rows, rep.ranks, rep.pairs, rep.preflight_errors) == ([], [], [], [])
    assert said == ["preflight: node facts", f"preflight: every node reaches MASTER_ADDR 127.0.0.1:{port}",
                    "running: 1 ranks on 1 host(s), backend gloo", "n1 failed: stopping the ranks on every other host"]


def test_the_ranks_run_under_the_node_python_with_the_interface_and_master_given(tmp_path):
    py = node_python(tmp_path, "__version__ = '2.4.0'\n")
    port = free_port("127.0.0.2")
    rep = ar.run_allreduce([LocalRemote("n1")], ar.Options(node_python=py, nproc_per_node=1, max_bytes=64,
                                                           dtype="bfloat16", ifname="lo", master_addr="127.0.0.2",
                                                           master_port=port, **BOUNDS))
    # under python3 the rank would not have found torch at all
    assert rep.failure.message == ("rank 0 on n1 could not start: No module named 'torch.distributed'; "
                                   "ranks that never joined: 0 (n1)")
    assert (rep.hosts, rep.dtype, rep.ifname, rep.master_addr, rep.master_port) == (
        ["n1"], "bfloat16", "lo", "127.0.0.2", port)


def test_a_node_short_of_memory_for_the_largest_message_is_refused_sweep_or_pairs(tmp_path):
    from envcheck.allreduce.pairs import pair_spec
    py = node_python(tmp_path, "__version__ = '2.4.0'\n")
    fix = "lower --max-bytes or --nproc-per-node"
    tib = 1 << 40       # 3 TiB for one gloo rank's buffers: more than this machine has
    for opts, nbytes in ((ar.Options(max_bytes=tib), tib),
                         (ar.Options(max_bytes=64, pairs=pair_spec(tib)), tib)):   # --pairs runs at its own size
        opts.node_python, opts.nproc_per_node, opts.backend = py, 1, "gloo"
        rep = ar.run_allreduce([LocalRemote("n1")], opts)
        assert rep.failure.kind == "preflight" and rep.failure.fix == fix
        assert rep.failure.message.startswith(f"n1: 1 rank(s) x {nbytes} bytes need about {3 * nbytes >> 20} MiB")
