"""Cross-node rules on plain facts documents."""
import copy

from envcheck.model import ERROR, WARNING
from envcheck.rules.fleet import MISSING, drift, fleet_findings

BASE = {
    "hostname": "n", "machine_id": "m",
    "python": {"version": "3.8.10"},
    "driver": {"version": "535.104.05"},
    "gpus": [{"name": "NVIDIA A100-SXM4-40GB"}] * 8,
    "cuda": {"version": "12.1.0"},
    "cudnn": {"version": "8.9.7"},
    "packages": {"torch": {"version": "2.1.0+cu121"}},
    "nccl": {"version": "2.18.1"},
}


def fleet(n=4, **changes):
    """n identical hosts node01…; changes = {host: fn(facts)} to plant a difference."""
    out = {}
    for i in range(1, n + 1):
        h = f"node{i:02d}"
        f = copy.deepcopy(BASE)
        f["hostname"], f["machine_id"] = h, f"id{i}"
        if h in changes:
            changes[h](f)
        out[h] = f
    return out


def test_identical_nodes_have_no_fleet_findings():
    assert fleet_findings(fleet(8)) == []


def test_driver_odd_one_out_is_named_by_majority_with_the_fix():
    f = fleet(8, node05=lambda f: f["driver"].update(version="470.82.01"))
    found = fleet_findings(f)
    assert [(x.severity, x.code, x.host) for x in found] == [(ERROR, "fleet-driver-mismatch", "node05")]
    assert "470.82.01 while 7 of 8 hosts have 535.104.05" in found[0].message
    assert "535.104.05" in found[0].fix and "(as on node[01-04,06-08])" in found[0].fix


def test_each_must_match_component_is_an_error():
    edits = {
        "cuda": lambda f: f["cuda"].update(version="11.8.0"),
        "cudnn": lambda f: f["cudnn"].update(version="8.6.0"),
        "torch": lambda f: f["packages"]["torch"].update(version="2.1.0+cu118"),
        "nccl": lambda f: f["nccl"].update(version="2.14.3"),
        "python": lambda f: f["python"].update(version="3.9.1"),
    }
    for key, edit in edits.items():
        found = fleet_findings(fleet(3, node02=edit))
        assert [(x.code, x.severity, x.host) for x in found] == [(f"fleet-{key}-mismatch", ERROR, "node02")], key


def test_python_patch_level_does_not_matter():
    assert fleet_findings(fleet(3, node02=lambda f: f["python"].update(version="3.8.12"))) == []


def test_gpu_model_and_count_differences_are_warnings():
    f = fleet(4, node03=lambda f: f.update(gpus=[{"name": "Tesla V100-SXM2-16GB"}] * 8),
              node04=lambda f: f.update(gpus=[{"name": "NVIDIA A100-SXM4-40GB"}] * 4))
    found = {(x.code, x.host): x.severity for x in fleet_findings(f)}
    assert found == {("fleet-gpu_model-mismatch", "node03"): WARNING,
                     ("fleet-gpu_model-mismatch", "node04"): WARNING,
                     ("fleet-gpu_count-mismatch", "node04"): WARNING}


def test_a_component_missing_on_one_host_is_a_difference():
    f = fleet(3, node01=lambda f: f.pop("cudnn"))
    found = fleet_findings(f)
    assert [(x.code, x.host) for x in found] == [("fleet-cudnn-mismatch", "node01")]
    assert "has no cuDNN" in found[0].message


def test_a_tie_names_no_odd_one_but_says_the_split():
    f = fleet(4, node03=lambda f: f["nccl"].update(version="2.14.3"), node04=lambda f: f["nccl"].update(version="2.14.3"))
    found = fleet_findings(f)
    assert [(x.code, x.host) for x in found] == [("fleet-nccl-split", None)]
    assert "2.18.1 on node[01-02]" in found[0].message and "2.14.3 on node[03-04]" in found[0].message


def test_duplicate_hostname_on_different_machines_is_an_error():
    f = fleet(3, node02=lambda f: f.update(hostname="node01"))
    found = fleet_findings(f)
    assert [(x.code, x.severity) for x in found] == [("fleet-duplicate-hostname", ERROR)]
    assert found[0].message.startswith("node[01-02] all call themselves")


def test_cloned_machine_id_is_a_warning_and_same_machine_twice_is_recognised():
    cloned = fleet(3, node03=lambda f: f.update(machine_id="id1"))
    assert [x.code for x in fleet_findings(cloned)] == ["fleet-duplicate-machine-id"]
    twice = fleet(3, node03=lambda f: f.update(machine_id="id1", hostname="node01"))
    assert [x.code for x in fleet_findings(twice)] == ["fleet-same-machine"]


def test_drift_table_rows_mark_the_odd_hosts():
    rows = {r.key: r for r in drift(fleet(3, node02=lambda f: f["driver"].update(version="410.48")))}
    assert rows["driver"].values == {"node01": "535.104.05", "node02": "410.48", "node03": "535.104.05"}
    assert rows["driver"].odd == ["node02"] and rows["driver"].majority == "535.104.05"
    assert not rows["cuda"].differs
    assert rows["gpu_model"].values["node01"] == "8x NVIDIA A100-SXM4-40GB"


def test_a_single_host_has_no_fleet_findings():
    assert fleet_findings(fleet(1)) == []
    assert MISSING not in drift(fleet(1))[0].values.values()
