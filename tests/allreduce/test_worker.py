"""The node-side worker and launcher on their own: real torch, real processes."""
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from envcheck.allreduce.bandwidth import busbw
from tests.conftest import REPO

pytest.importorskip("torch")
pytestmark = pytest.mark.torch
WORKER = REPO / "envcheck" / "node" / "allreduce_worker.py"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_rank_whose_peer_never_joins_reports_a_rendezvous_timeout_and_exits_3():
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0",
               LOCAL_RANK="0", WORLD_SIZE="2")
    start = time.monotonic()
    r = subprocess.run([sys.executable, str(WORKER), "--rendezvous-timeout", "3",
                        "--max-bytes", "64"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 3, r.stderr
    # the 3 s bound held, not torch's 30 min default; the margin is for importing torch on a
    # loaded 2-core CI machine (over 15 s seen), the subprocess's own 60 s is the hang guard
    assert time.monotonic() - start < 45
    rec = json.loads(r.stdout.strip().splitlines()[-1])
    assert rec["type"] == "timeout" and rec["phase"] == "rendezvous" and rec["rank"] == 0


def test_a_single_rank_runs_the_sweep_and_checks_its_sums():
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0",
               LOCAL_RANK="0", WORLD_SIZE="1")
    r = subprocess.run([sys.executable, str(WORKER), "--max-bytes", "1K", "--iters", "2",
                        "--dtype", "bfloat16"], env=env, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    results = [x for x in recs if x["type"] == "result"]
    assert [x["bytes"] for x in results] == [8 * 2 ** k for k in range(8)]
    assert all(x["wrong"] == 0 and x["world"] == 1 and x["time_us"] > 0 for x in results)
    assert all(busbw(x["bytes"], x["time_us"] / 1e6, x["world"]) == 0.0 for x in results)  # 2(n-1)/n = 0
    assert recs[-1]["type"] == "done"


@pytest.mark.parametrize("budget,iters", [("1e-9", 1), ("100", 50)])
def test_a_budget_fits_the_timed_iterations_to_what_the_first_warmup_took(budget, iters):
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0",
               LOCAL_RANK="0", WORLD_SIZE="1")
    r = subprocess.run([sys.executable, str(WORKER), "--min-bytes", "4K", "--max-bytes", "4K", "--iters", "50",
                        "--budget", budget], env=env, capture_output=True, text=True, timeout=60)
    res = [json.loads(line) for line in r.stdout.splitlines() if '"result"' in line]
    assert r.returncode == 0 and [x["iters"] for x in res] == [iters], r.stderr


def test_four_ranks_run_the_pair_rounds_at_once_and_a_perturbed_rank_corrupts_only_its_pairs(tmp_path):
    import shutil
    from envcheck.allreduce.pairs import pair_spec, spec_doc
    for name in ("allreduce_worker.py", "allreduce_pairs.py"):
        shutil.copy(REPO / "envcheck" / "node" / name, tmp_path / name)
    (tmp_path / "pairs.json").write_text(json.dumps(spec_doc(pair_spec(256 << 10), [1, 1, 1, 1])))
    port = str(free_port())
    procs = [subprocess.Popen([sys.executable, str(tmp_path / "allreduce_worker.py"), "--pairs", "pairs.json",
                               "--no-sweep", "--timeout", "30"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, RANK=str(r), LOCAL_RANK="0",
                                       WORLD_SIZE="4", ENVCHECK_TEST_PERTURB_RANK="2"), cwd="/")
             for r in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, outs[0][1][-2000:]
    recs = [json.loads(line) for line in outs[0][0].splitlines()]
    assert not [x for x in recs if x["type"] == "result"]          # --no-sweep
    pairs = [x for x in recs if x["type"] == "pair" and x["attempt"] == 0]
    assert sorted(map(tuple, (x["ranks"] for x in pairs))) == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert {tuple(x["ranks"]): bool(x["wrong"]) for x in pairs} == {(0, 1): False, (2, 3): True, (1, 2): True, (3, 0): False}
    assert all(x["time_us"] > 0 and x["first_us"] > 0 and x["lat_us"] > 0 and x["iters"] >= 1 for x in pairs)
    assert all(x["bytes"] == (x["first_bytes"] if x["stopped"] else 256 << 10) for x in pairs)
    assert not any(x["type"] == "pair" for line in outs[1][0].splitlines() for x in [json.loads(line)])  # rank 0 reports


def test_the_worker_is_python_36_syntax():
    vermin = Path(sys.executable).parent / "vermin"
    exe = str(vermin) if vermin.exists() else "vermin"
    for name in ("allreduce_worker.py", "allreduce_launcher.py", "rank_supervisor.py", "rank_preflight.py",
                 "rank_protocol.py", "allreduce_pairs.py"):
        try:
            r = subprocess.run([exe, "-t=3.6-", "--no-tips", "--violations",
                                str(REPO / "envcheck" / "node" / name)],
                               capture_output=True, text=True)
        except FileNotFoundError:
            pytest.skip("vermin is not installed")
        assert r.returncode == 0, r.stdout + r.stderr


def test_killing_the_controller_leaves_no_rank_behind(tmp_path):
    from tests.conftest import envcheck_exe
    tmp = tmp_path / "t"
    tmp.mkdir()
    p = subprocess.Popen([envcheck_exe(), "nccl-test", "--backend", "gloo", "--max-bytes", "64K",
                          "--iters", "400"], env=dict(os.environ, TMPDIR=str(tmp)),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def ours():
        r = subprocess.run(["pgrep", "-f", str(tmp)], capture_output=True, text=True)
        return r.stdout.split()

    deadline = time.monotonic() + 60
    while len(ours()) < 3 and time.monotonic() < deadline:   # launcher + 2 ranks
        time.sleep(0.1)
    assert len(ours()) >= 3
    p.send_signal(signal.SIGKILL)
    p.wait()
    deadline = time.monotonic() + 15
    while ours() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ours() == []
    assert list(tmp.iterdir()) == []


def _top_imports(path):
    import ast
    mods = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            mods.add((node.module or "").split(".")[0])
    return mods


def test_node_files_import_only_the_stdlib_and_torch_never_envcheck():
    stdlib = getattr(sys, "stdlib_module_names", None)
    if stdlib is None:
        pytest.skip("sys.stdlib_module_names needs Python >= 3.10")
    worker = _top_imports(WORKER)
    launcher = _top_imports(REPO / "envcheck" / "node" / "allreduce_launcher.py")
    supervisor = _top_imports(REPO / "envcheck" / "node" / "rank_supervisor.py")
    assert worker - stdlib == {"torch", "allreduce_pairs"}
    assert _top_imports(REPO / "envcheck" / "node" / "allreduce_pairs.py") - stdlib == set()   # torch: the worker's
    # the launcher must run where torch is broken: the stdlib, and the supervision and protocol
    # shipped beside it
    assert launcher - stdlib == {"rank_supervisor", "rank_protocol"}
    assert supervisor - stdlib == {"rank_protocol"}
    assert "envcheck" not in worker | launcher | supervisor


def test_every_node_module_a_launcher_imports_is_shipped_beside_it():
    """The launchers import the shared supervision from their run directory: whatever a run
    ships must hold every non-stdlib module its files import (torch is the node's own)."""
    stdlib = getattr(sys, "stdlib_module_names", None)
    if stdlib is None:
        pytest.skip("sys.stdlib_module_names needs Python >= 3.10")
    from envcheck.allreduce.run import node_sources as nccl_test_files
    from envcheck.launch.preflight import node_sources as launch_files
    for files in (nccl_test_files(), launch_files()):
        shipped = {name[:-3] for name in files}
        for name in files:
            assert _top_imports(REPO / "envcheck" / "node" / name) - stdlib - {"torch"} <= shipped, name
    assert "rank_supervisor" in {n[:-3] for n in launch_files()} & {n[:-3] for n in nccl_test_files()}
