"""One GPU count in every command. Nodes where NVML answers (the fake libnvidia-ml.so.1 with two
A100s) and no nvidia-smi is on any path: audit, doctor's inventory, nccl-test and launch all see
2 GPUs. Before the node probe read GPUs for every command, nccl-test and launch counted
`nvidia-smi -L` lines: 0 here, so they took these GPU nodes for CPU nodes and picked gloo.

nccl-test and launch are asked for 3 ranks per node with the backend left to them: the preflight
refuses that in seconds (before any rank starts) naming the GPU count it saw."""
import json
import sys

import pytest

from envcheck.doctor.checks import inventory_of
from envcheck.facts import views
from tests.cluster.standins import gpu_list, set_nvml
from tests.conftest import run_cli

pytestmark = [pytest.mark.cluster]


@pytest.fixture(scope="module")
def cl(cluster_factory):
    c = cluster_factory(2)
    for h in c:
        set_nvml(h, "535.104.05", gpu_list("A100", 2))
        assert h.run_local("command -v nvidia-smi || echo none").stdout.strip() == "none"
    c.trust_all_host_keys()
    yield c
    c.close()


def hosts_args(cl):
    return ["node[01-02]", "--ssh-config", str(cl.ssh_config), "--node-python", sys.executable]


def test_audit_and_doctor_inventory_count_the_gpus_nvml_lists(cl):
    proc = run_cli("audit", *hosts_args(cl), "--json", timeout=120)
    facts = [h["facts"] for h in json.loads(proc.stdout)["hosts"]]
    assert [views.gpu_count(f) for f in facts] == [2, 2]
    assert [f["driver"]["source"] for f in facts] == ["nvml", "nvml"]
    assert [inventory_of(f)["gpu"].split("x ")[0] for f in facts] == ["2", "2"]


def test_nccl_test_sees_two_gpus_per_node_and_picks_nccl(cl):
    proc = run_cli("nccl-test", *hosts_args(cl), "--nproc-per-node", "3", "--json", timeout=180)
    doc = json.loads(proc.stdout)
    messages = [e["message"] for e in doc["preflight_errors"]]
    assert messages == [f"node0{i}: 3 rank(s) for nccl but 2 GPU(s): two ranks would share a GPU"
                        for i in (1, 2)], proc.stdout + proc.stderr


def test_launch_sees_two_gpus_per_node(cl, tmp_path):
    script = tmp_path / "noop.py"
    script.write_text("pass\n")
    proc = run_cli("launch", *hosts_args(cl), "--nproc-per-node", "3", "--no-audit", "--chdir",
                   str(tmp_path), "--sync", str(script), "--json", "--", "noop.py", timeout=180)
    assert proc.stdout.strip(), proc.stderr
    doc = json.loads(proc.stdout)
    messages = [e["message"] for e in doc.get("preflight_errors") or []]
    assert messages == [f"node0{i}: 3 rank(s) but 2 GPU(s): two ranks would share a GPU"
                        for i in (1, 2)], proc.stdout + proc.stderr
