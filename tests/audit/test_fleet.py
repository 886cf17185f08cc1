"""Fleet audit bookkeeping and rendering on plain HostResults (the SSH path is in test_audit_fleet)."""
import json
import re

from envcheck.audit.fleet import compare, save_facts
from envcheck.audit.render import to_json
from envcheck.model import ERROR, WARNING, Finding, HostResult
from envcheck.audit.render import group_findings, render, render_table


def facts(name, driver="535.104.05", cuda="12.1.0"):
    return {"schema": 1, "hostname": name, "machine_id": name + "-id", "driver": {"version": driver},
            "cuda": {"version": cuda}, "python": {"version": "3.10.12"}, "gpus": [{"name": "Tesla T4"}]}


def test_fleet_finding_lands_on_the_odd_host_and_exit_is_1():
    rs = [HostResult(h, facts(h)) for h in ("n1", "n2", "n3")]
    rs[1].facts["driver"]["version"] = "470.82.01"
    audit = compare(rs)
    assert [f.code for f in audit.results[1].findings] == ["fleet-driver-mismatch"]
    assert audit.results[0].findings == [] and audit.fleet == []
    assert audit.exit_code() == 1


def test_an_unreachable_host_is_reported_and_the_others_are_compared_an_error_outranking_it():
    rs = [HostResult("n1", facts("n1")), HostResult("n2", error="unreachable: connection refused"),
          HostResult("n3", facts("n3", cuda="11.8.0")), HostResult("n4", facts("n4"))]
    audit = compare(rs)
    # something definite is wrong (n3's toolkit): FAIL, 1; without it, the unknown host: 3
    assert audit.exit_code() == 1 and compare([rs[0], rs[1], rs[3]]).exit_code() == 3
    assert [f.host for f in audit.all_findings] == ["n3"]
    text = render(audit)
    assert "  n2: unreachable: connection refused" in text
    assert "11.8.0 *" in text and "1 not audited" in text


def test_clean_fleet_exits_0_and_its_table_says_what_the_stack_is():
    audit = compare([HostResult(h, facts(h)) for h in ("a1", "a2")])
    assert audit.exit_code() == 0
    lines = render_table(audit)
    assert lines[0].split() == ["HOSTS", "DRIVER", "GPUS", "CUDA", "CUDNN", "TORCH", "NCCL", "PYTHON", "STATUS"]
    assert lines[1].split() == ["a[1-2]", "535.104.05", "1", "x", "T4", "12.1.0", "-", "-", "-", "3.10", "ok"]
    assert len(lines) == 2  # no odd value, no legend


def test_save_writes_one_facts_file_per_audited_host(tmp_path):
    rs = [HostResult("root@n1:2222", facts("n1")), HostResult("n2", error="timed out")]
    paths = save_facts(compare(rs), str(tmp_path / "out"))
    assert [p.rsplit("/", 1)[1] for p in paths] == ["root@n1_port2222.json"]
    assert json.loads(open(paths[0]).read())["hostname"] == "n1"


def test_json_has_facts_findings_and_drift_per_host():
    rs = [HostResult("n1", facts("n1"), [Finding(ERROR, "x", "cuda", "m", host="n1")]), HostResult("n2", facts("n2"))]
    doc = to_json(compare(rs))
    assert doc["hosts"][0]["findings"][0]["code"] == "x" and doc["hosts"][1]["facts"]["hostname"] == "n2"
    assert doc["ok"] is False and {r["component"] for r in doc["drift"]} >= {"driver", "cuda"}


# the fleet view: identical rows and findings grouped under a compressed hostlist

WARN = Finding(WARNING, "env-nvcc-not-on-path", "env", "nvcc is not on PATH on {h}",
               fix="export PATH=/usr/local/cuda/bin:$PATH")


def fleet_of(n, edit=None, warn=True):
    rs = []
    for i in range(1, n + 1):
        h = f"node{i:02d}"
        r = HostResult(h, facts(h), [Finding(**{**WARN.to_dict(), "message": WARN.message.format(h=h)})] if warn else [])
        if edit:
            edit(r)
        rs.append(r)
    return rs


def test_identical_stacks_are_one_row_under_a_compressed_hostlist_and_odd_values_are_marked():
    def edit(r):
        if r.host in ("node07", "node19"):
            r.facts["driver"]["version"] = "470.82.01"
    lines = render_table(compare(fleet_of(32, edit)))
    assert [line.split()[0] for line in lines[1:3]] == ["node[01-06,08-18,20-32]", "node[07,19]"]
    assert "470.82.01 *" in lines[2] and "*" not in lines[1]
    assert lines[2].rstrip().endswith("1 error, 1 warning") and lines[1].rstrip().endswith("1 warning")
    assert lines[3].startswith("(* differs from the majority")


def test_full_gives_one_row_per_host_in_the_order_given():
    lines = render_table(compare(fleet_of(3)), full=True)
    assert [line.split()[0] for line in lines[1:]] == ["node01", "node02", "node03"]


def test_a_warning_every_host_has_is_printed_once_with_the_hostlist():
    text = render(compare(fleet_of(32)))
    assert text.count("nvcc is not on PATH") == 1
    assert "WARNING node[01-32]: env: nvcc is not on PATH on node[01-32] [env-nvcc-not-on-path]" in text
    assert text.splitlines()[-1] == "WARN: 32 hosts: 32 without errors"


def test_findings_that_differ_only_in_the_host_name_are_one_and_host_specific_ones_stay_apart():
    def edit(r):
        if r.host in ("node05", "node09"):
            r.facts["driver"]["version"] = "470.82.01"
        if r.host == "node11":
            r.facts["cuda"]["version"] = "11.8.0"
    groups = group_findings(compare(fleet_of(12, edit)))
    hosts = {(f.code, tuple(h)) for f, h in groups}
    assert hosts == {("fleet-driver-mismatch", ("node05", "node09")), ("fleet-cuda-mismatch", ("node11",)),
                     ("env-nvcc-not-on-path", tuple(f"node{i:02d}" for i in range(1, 13)))}
    assert [f.severity for f, _ in groups] == [ERROR, ERROR, WARNING]  # errors first
    text = render(compare(fleet_of(12, edit)), width=200)
    assert "ERROR   node[05,09]: driver: node[05,09] has NVIDIA driver 470.82.01 while 10 of 12 hosts" in text
    assert "fix: make node[05,09] match the others" in text
    assert "ERROR   node11: cuda: node11 has CUDA toolkit 11.8.0" in text


def test_a_host_name_inside_another_word_is_not_taken_for_the_host():
    rs = [HostResult(h, facts(h), [Finding(WARNING, "x", "env", f"{h}: path /opt/{h}x/lib is stale")])
          for h in ("n1", "n2")]
    groups = group_findings(compare(rs))
    assert len(groups) == 2  # /opt/n1x and /opt/n2x differ: not one finding


def test_unreachable_hosts_are_grouped_by_reason_whatever_their_address():
    rs = fleet_of(3, warn=False) + [
        HostResult("node07", error="unreachable: connection refused (10.0.0.7:22: is sshd running?)"),
        HostResult("node19", error="unreachable: connection refused (10.0.0.19:22: is sshd running?)"),
        HostResult("node20", error="timed out connecting after 3 s (10.0.0.20:22: no SSH banner)"),
        HostResult("node21", error="authentication failed for root@node21 (check --user)")]
    lines = render(compare(rs)).splitlines()
    i = lines.index("Not audited (4):")
    assert lines[i + 1:i + 4] == [
        "  node[07,19]: unreachable: connection refused (…:22: is sshd running?)",
        "  node20: timed out connecting after 3 s (10.0.0.20:22: no SSH banner)",
        "  node21: authentication failed for root@node21 (check --user)"]


def test_colour_marks_severity_odd_values_and_status_only_when_asked():
    def edit(r):
        if r.host == "node02":
            r.facts["driver"]["version"] = "470.82.01"
    audit = compare(fleet_of(3, edit))
    plain, coloured = render(audit), render(audit, color=True)
    assert "\033[" not in plain
    assert "\033[1;33m470.82.01 *" in coloured          # the odd value
    assert "\033[1;31mERROR  \033[0m node02" in coloured  # severity
    assert "\033[33mWARNING\033[0m node[01-03]" in coloured
    # colour changes nothing else: stripped, the two are the same text
    assert re.sub(r"\033\[[0-9;]*m", "", coloured) == plain


def test_json_keeps_every_host_full_facts_and_findings_whatever_the_grouping():
    doc = to_json(compare(fleet_of(32)))
    assert doc["schema"] == 2 and len(doc["hosts"]) == 32
    assert all(h["facts"]["hostname"] == h["host"] for h in doc["hosts"])
    assert [h["findings"][0]["message"] for h in doc["hosts"]] == [
        f"nvcc is not on PATH on node{i:02d}" for i in range(1, 33)]
