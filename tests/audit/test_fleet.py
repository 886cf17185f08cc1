"""Fleet audit bookkeeping and rendering on plain HostResults (the SSH path is in test_audit_fleet)."""
import json

from envcheck.audit.fleet import compare, save_facts, to_json
from envcheck.model import ERROR, Finding, HostResult
from envcheck.audit.render import render, render_drift


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


def test_an_unreachable_host_is_reported_and_exit_is_3_while_others_are_compared():
    rs = [HostResult("n1", facts("n1")), HostResult("n2", error="unreachable: connection refused"),
          HostResult("n3", facts("n3", cuda="11.8.0")), HostResult("n4", facts("n4"))]
    audit = compare(rs)
    assert audit.exit_code() == 3
    assert [f.host for f in audit.all_findings] == ["n3"]
    text = render(audit)
    assert "n2: NOT AUDITED — unreachable: connection refused" in text
    assert "11.8.0 *" in text and "1 not audited" in text


def test_clean_fleet_exits_0_and_says_no_drift():
    audit = compare([HostResult(h, facts(h)) for h in ("a", "b")])
    assert audit.exit_code() == 0
    assert render_drift(audit)[0].startswith("No drift")


def test_many_hosts_show_majority_column_and_only_odd_hosts():
    rs = [HostResult(f"n{i:02d}", facts(f"n{i:02d}")) for i in range(1, 21)]
    rs[6].facts["driver"]["version"] = "470.82.01"
    lines = render_drift(compare(rs))
    assert lines[1].split() == ["component", "majority", "n07"]
    assert "535.104.05 (19/20)" in lines[2] and "470.82.01 *" in lines[2]


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
