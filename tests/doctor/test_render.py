"""The doctor's JUnit and Prometheus outputs, checked with the standard parsers (junitparser,
prometheus_client's text parser) rather than by comparing strings."""
from __future__ import annotations

import os

import pytest

from envcheck.doctor import health
from envcheck.errors import UsageError
from envcheck.doctor.health import FAIL, PASS, SKIP, UNKNOWN, WARN, CheckResult, DoctorReport, Measurement
from envcheck.doctor.render import escape_label, render_junit, render_prometheus, render_table
from envcheck.paths import out_file, write_output


def write_atomic(path, text):
    """What doctor does with --junit/--prometheus (envcheck/paths.py; the cases: tests/cli/test_outputs.py)."""
    write_output(out_file(str(path), "--junit", "fix"), text, "--junit")

junitparser = pytest.importorskip("junitparser")
prom_parser = pytest.importorskip("prometheus_client.parser")

NASTY = 'gpu"01\\x\nb'  # a host name with every character the label format must escape


def sample_report() -> DoctorReport:
    r = DoctorReport(hosts=["node01", "node02", "node03", NASTY])
    r.checks = [
        CheckResult("node01", "driver", PASS, "535.104.05", duration=0.01),
        CheckResult("node01", "torch", PASS, "2.3.1+cu121"),
        CheckResult("node01", "deep", SKIP, "torch not importable"),
        CheckResult("node02", "driver", PASS, "535.104.05"),
        CheckResult("node02", "torch", FAIL, 'torch 2.1.0+cu118 differs from the majority "2.3.1+cu121"',
                    fix="pip install torch==2.3.1 --index-url https://download.pytorch.org/whl/cu121",
                    code="fleet-mismatch-torch"),
        CheckResult("node03", "reach", UNKNOWN, "connection refused (port 22)"),
        CheckResult(NASTY, "gcc", WARN, "gcc 13 newer than CUDA 12.1 accepts"),
    ]
    r.measurements = [Measurement("allreduce_busbw_gbps", 1.25, {"hosts": "node01,node02"},
                                  "Bus bandwidth of the all-reduce at the largest size, GB/s.")]
    r.duration = 4.5
    return health.finalize(r)


def test_verdicts_take_the_worst_check_and_fail_outranks_unknown():
    r = sample_report()
    assert [(n.host, n.verdict) for n in r.nodes] == [
        ("node01", PASS), ("node02", FAIL), ("node03", UNKNOWN), (NASTY, WARN)]
    assert r.verdict == FAIL
    assert health.exit_code(FAIL) == 1 and health.exit_code(UNKNOWN) == 3
    assert health.exit_code(WARN) == 0 and health.exit_code(WARN, strict=True) == 1
    assert "differs from the majority" in r.nodes[1].reasons[0]


def test_junit_has_a_testcase_per_check_per_host_and_parses(tmp_path):
    path = tmp_path / "doctor.xml"
    write_atomic(path, render_junit(sample_report()))
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = {s.name: s for s in xml}
    assert set(suites) == {"node01", "node02", "node03", NASTY}
    assert suites["node01"].tests == 3 and suites["node01"].skipped == 1
    assert suites["node02"].failures == 1
    assert suites["node03"].errors == 1
    case = [c for c in suites["node02"] if c.name == "torch"][0]
    res = case.result[0]
    assert isinstance(res, junitparser.Failure)
    assert "differs from the majority" in res.message and "pip install torch" in res.text
    warn_case = list(suites[NASTY])[0]
    assert warn_case.is_passed


def test_junit_strict_turns_warnings_into_failures():
    xml = junitparser.JUnitXml.fromstring(render_junit(sample_report(), strict=True))
    nasty = [s for s in xml if s.name == NASTY][0]
    assert nasty.failures == 1


def test_prometheus_text_parses_with_escaped_labels_and_expected_values(tmp_path):
    path = tmp_path / "envcheck.prom"
    write_atomic(path, render_prometheus(sample_report(), now=1700000000))
    fams = {f.name: f for f in prom_parser.text_string_to_metric_families(path.read_text())}
    ok = {(s.labels["host"], s.labels["check"]): s.value for s in fams["envcheck_check_ok"].samples}
    assert ok[("node01", "driver")] == 1 and ok[("node02", "torch")] == 0
    assert ok[("node03", "reach")] == 0 and ok[(NASTY, "gcc")] == 1   # the host name round-trips
    bw = fams["envcheck_allreduce_busbw_gbps"].samples[0]
    assert bw.labels == {"hosts": "node01,node02"} and bw.value == pytest.approx(1.25)
    verdict = {s.labels["host"]: s.value for s in fams["envcheck_node_verdict"].samples}
    assert verdict == {"node01": 0, "node02": 2, "node03": 3, NASTY: 1}
    assert fams["envcheck_doctor_verdict"].samples[0].value == 2
    assert fams["envcheck_check_ok"].type == "gauge" and fams["envcheck_check_ok"].documentation


def test_label_escaping_follows_the_exposition_format():
    assert escape_label('a"b\\c\nd') == 'a\\"b\\\\c\\nd'


def test_atomic_write_replaces_the_file_and_leaves_no_temp(tmp_path):
    path = tmp_path / "out.prom"
    path.write_text("old\n")
    write_atomic(path, "new\n")
    assert path.read_text() == "new\n"
    assert os.listdir(tmp_path) == ["out.prom"]


def test_atomic_write_into_a_missing_directory_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        write_atomic(tmp_path / "nope" / "x.xml", "x")


def test_table_names_each_node_its_verdict_reason_and_fix_and_ends_with_the_summary_line():
    text = render_table(sample_report())
    lines = text.splitlines()
    row = [line.split() for line in lines if line.startswith("node02")][0]
    assert row[:3] == ["node02", "FAIL", "torch:"]
    i = next(i for i, line in enumerate(lines) if line.startswith("node02"))
    assert lines[i + 1].split() == ["fix:", "pip", "install", "torch==2.3.1", "--index-url",
                                    "https://download.pytorch.org/whl/cu121"]
    assert "connection refused" in text
    # the network figure in words, not a metric name; the summary line last, as every command's
    assert "all-reduce bus bandwidth: 1.25 GB/s" in text and "allreduce_busbw_gbps" not in text
    assert lines[-1] == "FAIL: 4 hosts: 1 FAIL, 1 UNKNOWN, 1 WARN, 1 PASS; 4.5 s"


def test_identical_nodes_share_one_row_under_their_hostlist():
    r = DoctorReport(hosts=[f"node{i:02d}" for i in range(1, 33)])
    r.checks = [CheckResult(h, "driver", PASS, "535.104.05") for h in r.hosts]
    r.checks += [CheckResult("node07", "health", WARN, "node07 has GPU PCIe link x8 of x16", fix="reseat it")]
    text = render_table(health.finalize(r))
    assert [line.split()[:2] for line in text.splitlines()[1:3]] == [["node[01-06,08-32]", "PASS"], ["node07", "WARN"]]
    assert "fix: reseat it" in text and len(text.splitlines()) == 5


def test_report_round_trips_through_json_for_baselines():
    r = sample_report()
    back = health.from_dict(r.to_dict())
    assert back.verdict == r.verdict and len(back.checks) == len(r.checks)
    assert health.measurement(back, "allreduce_busbw_gbps").value == pytest.approx(1.25)
