"""The srun command line for `doctor --launcher srun`. srun itself needs a real Slurm; what can
be checked here: the options, and that the per-task wrapper really maps Slurm's task ids onto
torch's env:// variables (run here with sh and python, as srun would run it on a node)."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from envcheck.errors import UsageError
from envcheck.doctor.srun import describe, srun_argv

SOURCE = "import os, sys\nprint(os.environ['RANK'], os.environ['LOCAL_RANK'], os.environ['WORLD_SIZE'], " \
         "os.environ['MASTER_ADDR'], os.environ['MASTER_PORT'], os.environ['NCCL_SOCKET_IFNAME'], sys.argv[1:])"


def build(**kw):
    args = dict(nproc_per_node=2, worker_source=SOURCE, worker_args=["--max-bytes", "256M"],
                python=sys.executable, master_addr="10.0.0.1", master_port=29511, timeout_s=90,
                env={"NCCL_SOCKET_IFNAME": "ib0"})
    args.update(kw)
    return srun_argv(["node01", "node02", "node03"], **args)


def test_srun_options_cover_every_node_kill_on_failure_and_a_time_limit():
    argv = build()
    assert argv[0] == "srun"
    opts = argv[1:argv.index("sh")]
    assert "--nodes=3" in opts and "--ntasks=6" in opts and "--ntasks-per-node=2" in opts
    assert "--nodelist=node01,node02,node03" in opts
    assert "--kill-on-bad-exit=1" in opts and "--wait=10" in opts
    assert "--time=2" in opts  # 90 s rounds up to 2 minutes
    assert "--export=ALL,MASTER_ADDR=10.0.0.1,MASTER_PORT=29511,NCCL_SOCKET_IFNAME=ib0" in opts


def test_the_per_task_wrapper_maps_slurm_ids_to_torch_env_vars():
    argv = build()
    task = argv[argv.index("sh"):]
    env = dict(os.environ, SLURM_PROCID="4", SLURM_LOCALID="0", SLURM_NTASKS="6", SLURM_NODEID="2",
               MASTER_ADDR="10.0.0.1", MASTER_PORT="29511", NCCL_SOCKET_IFNAME="ib0")
    out = subprocess.run(task, env=env, capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(" ", 5)[:5] == ["4", "0", "6", "10.0.0.1", "29511"]
    assert "['--max-bytes', '256M']" in out.stdout


def test_described_command_hides_the_worker_source_and_is_shell_quoted():
    text = describe(build())
    assert "<allreduce_worker.py>" in text and "import os" not in text
    assert "RANK=\"$SLURM_PROCID\"" in text and text.count("'") >= 2


@pytest.mark.parametrize("kw,msg", [
    (dict(nproc_per_node=0), "nproc-per-node"),
    (dict(master_port=70000), "out of range"),
    (dict(env={"X": "a,b"}), "comma"),
])
def test_bad_launch_parameters_are_usage_errors(kw, msg):
    with pytest.raises(UsageError, match=msg):
        build(**kw)
