"""Cross-node rules on plain facts documents."""
import copy

from envcheck.model import ERROR, WARNING, Finding
from envcheck.rules.fleet import CHECKS, MISSING, drift, fleet_findings

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


# --- what a user reads, whole (issue 24 item 8: the survivors of a mutmut run on rules/fleet.py) ---

CLONE_ID = "4c4c4544004d3510804bb4c04f333232"  # a real-looking 32-hex /etc/machine-id


def test_the_same_machine_listed_twice_is_one_warning_with_its_fix_and_no_hostname_error():
    # node01 reached twice (an alias and its IP): same hostname, same machine id. The pair comes after
    # a host whose id is its own, so a rule that stops at the first unique id would miss it.
    f = fleet(3, node02=lambda f: f.update(machine_id="id3", hostname="node03"))
    assert fleet_findings(f) == [Finding(
        WARNING, "fleet-same-machine", "host",
        "node[02-03] are the same machine (same hostname and machine id): it would get two ranks' worth of work",
        fix="list each node once (an alias and its IP are one node)")]


def test_a_cloned_image_is_named_by_the_first_12_characters_of_its_machine_id():
    f = fleet(3, node02=lambda f: f.update(machine_id=CLONE_ID), node03=lambda f: f.update(machine_id=CLONE_ID))
    assert fleet_findings(f) == [Finding(
        WARNING, "fleet-duplicate-machine-id", "host",
        "node[02-03] share machine id 4c4c4544004d…: a cloned image",
        fix="on each clone: rm /etc/machine-id && systemd-machine-id-setup (then reboot)")]


def test_a_duplicate_hostname_after_a_unique_one_is_an_error_with_the_command_that_fixes_it():
    f = fleet(3, node03=lambda f: f.update(hostname="node02"))
    assert fleet_findings(f) == [Finding(
        ERROR, "fleet-duplicate-hostname", "host",
        "node[02-03] all call themselves 'node02': launchers that group ranks by hostname (torchrun, mpirun) "
        "treat them as one node and collide on local ranks",
        fix="give each node a unique name: hostnamectl set-hostname NAME")]


def test_two_hosts_that_differ_are_a_split_with_no_majority():
    f = fleet(2, node02=lambda f: f["driver"].update(version="550.54.15"))
    assert fleet_findings(f) == [Finding(
        ERROR, "fleet-driver-split", "driver",
        "NVIDIA driver differs with no majority: 535.104.05 on node01; 550.54.15 on node02 — "
        "ranks on different drivers fail or hang in NCCL init",
        fix="pick one NVIDIA driver version and install it on every node")]


def test_a_split_does_not_hide_the_components_judged_after_it():
    f = fleet(4, node03=lambda f: f["driver"].update(version="550.54.15"),
              node04=lambda f: (f["driver"].update(version="550.54.15"), f["nccl"].update(version="2.14.3")))
    assert [(x.code, x.host) for x in fleet_findings(f)] == [("fleet-driver-split", None),
                                                             ("fleet-nccl-mismatch", "node04")]


def test_a_mismatch_message_and_fix_whole():
    f = fleet(3, node02=lambda f: f["python"].update(version="3.9.1"))
    assert fleet_findings(f) == [Finding(
        ERROR, "fleet-python-mismatch", "python",
        "node02 has Python 3.9 while 2 of 3 hosts have 3.8 — objects pickled by one Python may not load in another",
        fix="make node02 match the others: Python 3.8 (as on node[01,03])", host="node02")]


def test_a_host_without_python_is_told_so():
    found = fleet_findings(fleet(3, node01=lambda f: f.pop("python")))
    assert [(x.code, x.host) for x in found] == [("fleet-python-mismatch", "node01")]
    assert found[0].message.startswith("node01 has no Python while 2 of 3 hosts have 3.8 — ")


def test_only_the_checks_asked_for_are_judged():
    must_match = tuple(c for c in CHECKS if c.severity == ERROR)
    f = fleet(3, node02=lambda f: f.update(gpus=[{"name": "Tesla V100-SXM2-16GB"}] * 8),
              node03=lambda f: f["nccl"].update(version="2.14.3"))
    assert [(x.code, x.host) for x in fleet_findings(f, must_match)] == [("fleet-nccl-mismatch", "node03")]
    assert [r.key for r in drift(f, must_match)] == ["driver", "cuda", "cudnn", "torch", "nccl", "python"]


def test_torch_without_its_package_record_is_its_version_and_local_tag():
    def torch_only(local):
        def edit(f):
            f.pop("packages")
            f["torch"] = {"version": "2.1.0", "local": local} if local else {"version": "2.1.0"}
        return edit
    f = fleet(4, node01=torch_only("cu121"), node02=torch_only("cu121"), node03=torch_only("cu118"),
              node04=torch_only(None))
    assert {r.key: r for r in drift(f)}["torch"].values == {
        "node01": "2.1.0+cu121", "node02": "2.1.0+cu121", "node03": "2.1.0+cu118", "node04": "2.1.0"}


def test_gpu_models_count_each_model_and_show_a_single_gpu_by_name():
    f = fleet(3, node03=lambda f: f.update(gpus=[{"name": "Tesla V100-SXM2-16GB"}] * 2
                                           + [{"name": "NVIDIA A100-SXM4-40GB"}, {}]))
    row = {r.key: r for r in drift(f)}["gpu_model"]
    assert row.values["node03"] == "?, NVIDIA A100-SXM4-40GB, 2x Tesla V100-SXM2-16GB"
    assert row.values["node01"] == "8x NVIDIA A100-SXM4-40GB"


def _pci(*widths):
    return lambda f: f.setdefault("health", {}).update(
        pci=[{"address": f"0000:{i:02x}:00.0", "link": {"width": w, "max_width": 16}} for i, w in enumerate(widths)])


def test_pcie_widths_are_counted_widest_first_and_unknown_widths_left_out():
    f = fleet(3, node01=_pci(16, 16, 16, 16), node02=_pci(16, 16, 16, 16),
              node03=_pci(16, 8, 16, 1, 0, None))
    assert fleet_findings(f) == [Finding(
        WARNING, "fleet-pcie_width-mismatch", "health",
        "node03 has GPU PCIe link widths 2x x16, 1x x8, 1x x1 while 2 of 3 hosts have 4x x16 — GPUs behind "
        "narrower links load data and exchange with the NIC slower, and every step waits",
        fix="make node03 match the others: GPU PCIe link widths 4x x16 (as on node[01-02])", host="node03")]


def _ib(*ports):
    return lambda f: f.setdefault("health", {}).update(
        ib=[{"device": "mlx5_0", "port": i + 1, "state": s, "rate": r} for i, (s, r) in enumerate(ports)])


def test_ib_ports_are_counted_by_state_and_rate():
    up = ("4: ACTIVE", "400 Gb/sec (4X NDR)")
    f = fleet(3, node01=_ib(up, up), node02=_ib(up, up), node03=_ib(up, ("1: DOWN", None), (None, None)))
    row = {r.key: r for r in drift(f)}["ib_ports"]
    assert row.values == {"node01": "2x ACTIVE 400 Gb/sec (4X NDR)", "node02": "2x ACTIVE 400 Gb/sec (4X NDR)",
                          "node03": "1x ? ?, 1x ACTIVE 400 Gb/sec (4X NDR), 1x DOWN ?"}
    assert [(x.code, x.severity, x.host) for x in fleet_findings(f)] == [("fleet-ib_ports-mismatch", WARNING, "node03")]


def test_nvlinks_up_are_counted_per_gpu_most_links_first():
    def links(*ups):
        return lambda f: f.update(gpus=[{"name": "NVIDIA H100 80GB HBM3", "health": {"nvlink": {"up": u}}}
                                        for u in ups])
    f = fleet(3, node01=links(*[18] * 4), node02=links(*[18] * 4), node03=links(18, 18, 12, None))
    row = {r.key: r for r in drift(f)}["nvlinks"]
    assert row.values == {"node01": "4x 18 up", "node02": "4x 18 up", "node03": "2x 18 up, 1x 12 up"}
    assert row.odd == ["node03"] and row.label == "NVLinks per GPU"


def test_a_tie_marks_every_host_odd_in_the_drift_table():
    f = fleet(2, node02=lambda f: f["driver"].update(version="550.54.15"))
    row = {r.key: r for r in drift(f)}["driver"]
    assert (row.majority, row.odd, row.label) == (None, ["node01", "node02"], "NVIDIA driver")


def test_a_component_absent_everywhere_is_left_out_and_the_rest_kept():
    rows = [r.key for r in drift(fleet(3, **{h: (lambda f: f.pop("cudnn")) for h in ("node01", "node02", "node03")}))]
    assert rows == ["driver", "cuda", "torch", "nccl", "python", "gpu_model", "gpu_count"]
