"""The doctor's order of things and bookkeeping, over a Backend whose audit and all-reduce
answers are plain data (the real steps are tested in their own modules and, end to end, in
tests/doctor/test_doctor_cluster.py)."""
from __future__ import annotations

from envcheck.doctor.run import AllreduceOutcome, DoctorOptions, run_doctor
from envcheck.doctor.health import FAIL, PASS, SKIP, UNKNOWN, exit_code
from envcheck.model import ERROR, Finding, HostResult

HOSTS = ["node01", "node02", "node03", "node04"]
FACTS = {"driver": {"version": "535.104.05"}, "packages": {"torch": {"version": "2.3.1"}}}


class Scripted:
    def __init__(self, unreachable=(), findings=None, bad=(), preflight=None, busbw=5.0, no_torch=()):
        self.unreachable, self.findings, self.bad = set(unreachable), findings or {}, set(bad)
        self.preflight, self.busbw, self.no_torch = preflight or {}, busbw, set(no_torch)
        self.runs, self.imported = [], []

    def torch_import(self, hosts):
        self.imported += list(hosts)
        return {h: (None, "ModuleNotFoundError: No module named 'torch'") if h in self.no_torch else ("2.3.1", None)
                for h in hosts}

    def audit(self, hosts, deep):
        self.deep = deep
        return [HostResult(h, None, [], error="connection refused") if h in self.unreachable
                else HostResult(h, FACTS, list(self.findings.get(h, []))) for h in hosts]

    def allreduce(self, hosts, max_bytes, quick=False):
        self.runs.append((tuple(hosts), max_bytes))
        pf = {h: r for h, r in self.preflight.items() if h in hosts}
        if pf:
            return AllreduceOutcome(list(hosts), False, preflight=pf, error="preflight failed")
        wrong = 1024 if set(hosts) & self.bad else 0
        return AllreduceOutcome(list(hosts), wrong == 0, self.busbw, wrong=wrong)


def verdicts(r):
    return {n.host: n.verdict for n in r.nodes}


def test_clean_cluster_passes_with_one_allreduce_and_a_busbw_measurement():
    b = Scripted()
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert r.verdict == PASS and set(verdicts(r).values()) == {PASS}
    assert b.runs == [(tuple(HOSTS), 64 << 20)] and b.deep is True
    assert r.measurements[0].value == 5.0 and exit_code(r.verdict) == 0


def test_an_audit_error_fails_that_node_only():
    b = Scripted(findings={"node02": [Finding(ERROR, "fleet-torch", "torch", "torch differs from the majority")]})
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert verdicts(r) == {"node01": PASS, "node02": FAIL, "node03": PASS, "node04": PASS}
    assert r.nodes[1].reasons == ["torch: torch differs from the majority"]


def test_an_unreachable_node_is_unknown_and_the_rest_still_run_the_allreduce():
    b = Scripted(unreachable=["node03"])
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert verdicts(r)["node03"] == UNKNOWN and r.verdict == UNKNOWN and exit_code(r.verdict) == 3
    assert b.runs[0][0] == ("node01", "node02", "node04")


def test_corrupted_data_is_isolated_to_the_bad_node():
    b = Scripted(bad=["node03"])
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert r.suspects == ["node03"] and verdicts(r) == {
        "node01": PASS, "node02": PASS, "node03": FAIL, "node04": PASS}
    assert "wrong element" in r.nodes[2].reasons[0] and "isolated" in r.nodes[2].reasons[0]
    assert all(size < 64 << 20 for _, size in b.runs[1:])


def test_slow_everywhere_fails_every_node_with_the_reason():
    b = Scripted(busbw=0.5)
    r = run_doctor(HOSTS, DoctorOptions(min_busbw=1.0), b)
    assert r.verdict == FAIL and sorted(r.suspects) == HOSTS
    assert all("below --min-busbw" in n.reasons[0] for n in r.nodes)


def test_a_fault_only_the_full_set_shows_fails_everyone_and_says_so():
    class FullSetOnly(Scripted):
        def allreduce(self, hosts, max_bytes, quick=False):
            out = super().allreduce(hosts, max_bytes, quick)
            if len(hosts) == len(HOSTS):
                out.ok, out.error = False, "timed out after 60 s"
            return out

    r = run_doctor(HOSTS, DoctorOptions(), FullSetOnly())
    assert r.suspects == [] and any("full set" in n for n in r.notes)
    assert {n.verdict for n in r.nodes} == {FAIL} and r.nodes[0].reasons == ["allreduce: timed out after 60 s"]


def test_preflight_failure_names_the_host_without_bisecting():
    b = Scripted(preflight={"node04": "cannot reach 10.0.0.1:29500 (connection refused)"})
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert len(b.runs) == 1 and verdicts(r)["node04"] == FAIL and verdicts(r)["node01"] == PASS
    assert "10.0.0.1:29500" in r.nodes[3].reasons[0]


def test_quick_skips_the_network_and_the_deep_probe():
    b = Scripted()
    r = run_doctor(HOSTS, DoctorOptions(quick=True), b)
    assert b.runs == [] and b.deep is False and r.verdict == PASS
    assert {c.status for c in r.checks if c.check == "allreduce"} == {SKIP}


def test_a_node_whose_torch_does_not_import_fails_and_starts_no_rank():
    b = Scripted(no_torch=["node02"])
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert verdicts(r) == {"node01": PASS, "node02": FAIL, "node03": PASS, "node04": PASS}
    (torch,) = [c for c in r.checks if c.host == "node02" and c.check == "torch"]
    assert torch.code == "torch-not-importable" and "No module named 'torch'" in torch.message
    assert "--node-python" in torch.fix
    assert b.runs == [(("node01", "node03", "node04"), 64 << 20)]


def test_quick_still_imports_torch_so_a_node_without_it_is_never_pass():
    b = Scripted(no_torch=HOSTS)
    r = run_doctor(HOSTS, DoctorOptions(quick=True), b)
    assert b.imported == HOSTS and r.verdict == FAIL and exit_code(r.verdict) == 1


def test_the_deep_audits_own_import_is_used_without_a_second_one():
    class Deep(Scripted):
        def audit(self, hosts, deep):
            return [HostResult(h, dict(FACTS, deep={"torch": None, "error": "ImportError: libcudnn.so.9: cannot open"}),
                               []) for h in hosts]

    b = Deep()
    r = run_doctor(HOSTS[:1], DoctorOptions(), b)
    assert b.imported == [] and r.verdict == FAIL and "libcudnn.so.9" in r.nodes[0].reasons[0]
