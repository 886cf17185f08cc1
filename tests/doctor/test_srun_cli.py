"""`doctor --launcher srun` through a stand-in srun (tests/fixtures/slurm/srun: the tasks run on
this machine with the SLURM_* variables a real srun sets). What is real: the srun command line,
the per-task wrapper, the worker, gloo between the tasks, the doctor's reading of the results."""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

SRUN_DIR = Path(__file__).resolve().parent.parent / "fixtures" / "slurm"

pytestmark = pytest.mark.torch


def run(cli, tmp_path, extra_env=None):
    log = tmp_path / "srun.log"
    env = {"PATH": f"{SRUN_DIR}:{os.environ['PATH']}", "SRUN_STANDIN_LOG": str(log)}
    env.update(extra_env or {})
    r = cli("doctor", "--local", "--launcher", "srun", "--backend", "gloo", "--nproc-per-node", "2",
            "--max-bytes", "1M", "--no-expect-gpus", "--no-deep", "--node-python", sys.executable,
            "--collective-timeout", "30", "--json", env=env, timeout=300)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return r, json.loads(r.stdout), calls


def test_srun_launched_allreduce_passes_and_reports_busbw(cli, tmp_path):
    pytest.importorskip("torch")
    r, doc, calls = run(cli, tmp_path)
    assert r.returncode == 0, (doc["nodes"], r.stderr[-1500:])
    assert doc["verdict"] == "PASS"
    assert [m["name"] for m in doc["measurements"]] == ["allreduce_busbw_gbps"]
    assert len(calls) == 1 and "--ntasks=2" in calls[0] and "--kill-on-bad-exit=1" in calls[0]


def test_srun_launched_allreduce_with_a_perturbed_rank_fails_as_corruption(cli, tmp_path):
    pytest.importorskip("torch")
    r, doc, _ = run(cli, tmp_path, {"ENVCHECK_TEST_PERTURB_RANK": "1"})
    assert r.returncode == 1, doc["nodes"]
    assert "data corruption" in doc["nodes"][0]["reasons"][0]


def test_quick_local_doctor_on_a_python_without_torch_is_fail_not_pass(cli):
    # /usr/bin/python3: the machine's own, which has no torch (tests/conftest.py makes sure)
    r = cli("doctor", "--local", "--quick", "--no-expect-gpus", "--node-python", "/usr/bin/python3", "--json",
            timeout=120)
    doc = json.loads(r.stdout)
    assert (r.returncode, doc["verdict"]) == (1, "FAIL"), doc["nodes"]
    (torch,) = [c for c in doc["checks"] if c["check"] == "torch"]
    assert torch["code"] == "torch-not-importable" and "No module named 'torch'" in torch["message"]
