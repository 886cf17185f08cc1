"""Audit results -> doctor checks, and regressions against a baseline."""
from __future__ import annotations

from envcheck.doctor import health
from envcheck.doctor.checks import AUDIT_CHECKS, checks_from_audit, compare_baseline, inventory_of
from envcheck.doctor.health import FAIL, PASS, UNKNOWN, WARN, DoctorReport, Measurement
from envcheck.model import ERROR, INFO, WARNING, Finding, HostResult

FACTS = {
    "driver": {"version": "535.104.05"}, "cuda": {"version": "12.2.140"}, "cudnn": {"version": "8.9.7"},
    "packages": {"torch": {"version": "2.3.1+cu121"}}, "python": {"version": "3.10.12"},
    "gpus": [{"name": "NVIDIA A100-SXM4-80GB"}] * 8, "nccl": {"version": "2.20.5"},
}


def results():
    return [
        HostResult("node01", FACTS, [Finding(INFO, "cuda-ok", "cuda", "fine")]),
        HostResult("node02", FACTS, [
            Finding(ERROR, "fleet-torch", "torch", "torch 2.1.0+cu118 differs from the majority", "pip install torch==2.3.1"),
            Finding(WARNING, "torch-minor", "torch", "a warning about torch"),
            Finding(WARNING, "gcc-new", "gcc", "gcc 13 newer than nvcc 12.2 accepts")]),
        HostResult("node03", None, [], error="connection refused"),
    ]


def by(checks, host, check):
    return [c for c in checks if c.host == host and c.check == check][0]


def test_every_component_is_a_check_and_the_worst_finding_decides():
    cs = checks_from_audit(results())
    assert {c.check for c in cs if c.host == "node01"} == set(AUDIT_CHECKS) | {"reach"}
    assert all(c.status == PASS for c in cs if c.host == "node01")
    assert by(cs, "node01", "driver").message == "535.104.05"
    t = by(cs, "node02", "torch")
    assert t.status == FAIL and t.message == "torch 2.1.0+cu118 differs from the majority"
    assert t.fix == "pip install torch==2.3.1" and t.code == "fleet-torch"
    assert by(cs, "node02", "gcc").status == WARN


def test_an_unreachable_host_is_one_unknown_check_with_the_reason():
    cs = [c for c in checks_from_audit(results()) if c.host == "node03"]
    assert [(c.check, c.status, c.message) for c in cs] == [("reach", UNKNOWN, "connection refused")]


def test_inventory_keeps_the_versions_that_matter():
    inv = inventory_of(FACTS)
    assert inv == {"driver": "535.104.05", "cuda": "12.2.140", "cudnn": "8.9.7", "torch": "2.3.1+cu121",
                   "nccl": "2.20.5", "python": "3.10.12", "gpu": "8x NVIDIA A100-SXM4-80GB"}


def report(driver="535.104.05", busbw=10.0, fail_node=None):
    r = DoctorReport(hosts=["node01", "node02"])
    r.checks = checks_from_audit([HostResult(h, dict(FACTS, driver={"version": driver}),
                                             [Finding(ERROR, "x", "driver", "bad")] if h == fail_node else [])
                                  for h in r.hosts])
    r.inventory = {h: inventory_of(dict(FACTS, driver={"version": driver})) for h in r.hosts}
    r.measurements = [Measurement("allreduce_busbw_gbps", busbw, {"hosts": "node01,node02"})]
    return health.finalize(r)


def test_a_clean_rerun_matches_its_baseline():
    base = health.from_dict(report().to_dict())
    cs = compare_baseline(report(busbw=9.5), base)
    assert cs and all(c.status == PASS for c in cs)


def test_changed_versions_slower_busbw_and_a_newly_failing_node_are_regressions():
    base = health.from_dict(report().to_dict())
    cs = compare_baseline(report(driver="550.54.15", busbw=6.0, fail_node="node02"), base)
    warns = [c for c in cs if c.status == WARN]
    assert by(warns, "node01", "baseline").message == "changed since the baseline: driver 535.104.05 -> 550.54.15"
    assert "40% below the baseline 10 GB/s" in by(warns, "node01", "baseline-busbw").message
    assert any("regressed: PASS in the baseline, FAIL now" in c.message for c in warns if c.host == "node02")


def test_ignored_codes_do_not_make_a_node_warn():
    r = HostResult("node01", FACTS, [Finding(WARNING, "driver-not-found", "driver", "No NVIDIA driver found")])
    assert by(checks_from_audit([r]), "node01", "driver").status == WARN
    assert by(checks_from_audit([r], ignore=["driver-not-found"]), "node01", "driver").status == PASS


def test_on_a_cpu_cluster_driver_packages_without_a_module_do_not_make_a_node_warn():
    from envcheck.doctor.checks import GPU_ONLY_CODES
    f = Finding(WARNING, "driver-module-not-loaded", "driver",
                "NVIDIA driver 535.261.03 userspace installed, kernel module not loaded")
    r = HostResult("node01", FACTS, [f])
    assert by(checks_from_audit([r]), "node01", "driver").status == WARN  # --expect-gpus
    assert by(checks_from_audit([r], ignore=GPU_ONLY_CODES), "node01", "driver").status == PASS
    # a mismatch means a loaded module, so a GPU: it counts either way
    m = Finding(ERROR, "driver-version-mismatch", "driver", "NVIDIA driver/library version mismatch")
    assert by(checks_from_audit([HostResult("node01", FACTS, [m])], ignore=GPU_ONLY_CODES),
              "node01", "driver").status == FAIL


def test_on_a_cpu_cluster_gpus_on_the_bus_without_a_working_driver_still_fail_the_node():
    """--no-expect-gpus forgives a node without GPUs, not GPUs that are there and unusable: the
    driver rules make that an error (the one finding for it) and an error always counts."""
    from envcheck.doctor.checks import GPU_ONLY_CODES
    for code in ("driver-not-found", "driver-module-not-loaded"):
        f = Finding(ERROR, code, "driver", "2 NVIDIA GPU(s) on the PCI bus (0000:07:00.0, 0000:17:00.0) but no driver")
        r = HostResult("node01", FACTS, [f])
        assert by(checks_from_audit([r], ignore=GPU_ONLY_CODES), "node01", "driver").status == FAIL
