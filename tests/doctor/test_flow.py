"""The doctor's order of things and bookkeeping, over a Backend whose audit and all-reduce
answers are plain data (the real steps are tested in their own modules and, end to end, in
tests/doctor/test_doctor_cluster.py)."""
from __future__ import annotations

from envcheck.allreduce.pairs import PairFigure, schedule
from envcheck.doctor.run import AllreduceOutcome, DoctorOptions, run_doctor
from envcheck.doctor.health import FAIL, PASS, SKIP, UNKNOWN, WARN, exit_code
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

    def allreduce(self, hosts, max_bytes, quick=False, pairs=False):
        self.runs.append((tuple(hosts), max_bytes))
        self.asked_pairs = pairs
        pf = {h: r for h, r in self.preflight.items() if h in hosts}
        if pf:
            return AllreduceOutcome(list(hosts), False, preflight=pf, error="preflight failed")
        wrong = 1024 if set(hosts) & self.bad else 0
        return AllreduceOutcome(list(hosts), wrong == 0, self.busbw, wrong=wrong)


class WithPairs(Scripted):
    """The pair rounds' figures as the worker reports them: each pair at `busbw`, a pair with a
    node in `slow` at `busbw / factor` (twice: its round ran again), `bad` nodes corrupt theirs."""

    def __init__(self, slow=(), factor=20.0, **kw):
        super().__init__(**kw)
        self.slow, self.factor = set(slow), factor

    def allreduce(self, hosts, max_bytes, quick=False, pairs=False):
        out = super().allreduce(hosts, max_bytes, quick, pairs)
        if pairs:
            out.pairs = [self.figure(a, b, r, t, max_bytes) for t in (0, 1)
                         for r, rnd in enumerate(schedule(len(hosts))) for a, b in ((hosts[x], hosts[y]) for x, y in rnd)]
        return out

    def figure(self, a, b, rnd, attempt, size):
        bw = self.busbw / (self.factor if {a, b} & self.slow else 1.0)
        return PairFigure((a, b), 0, rnd, attempt, size, size / bw / 1e3, bw, bw, size // 16, bw, 50.0, 5, False,
                          2 if {a, b} & self.bad else 0, allowed=1.25)


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
        def allreduce(self, hosts, max_bytes, quick=False, pairs=False):
            out = super().allreduce(hosts, max_bytes, quick, pairs)
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


def test_the_pairs_name_a_slow_node_with_its_figures_and_the_median_when_the_fleet_passes():
    b = WithPairs(slow=["node03"])
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert b.asked_pairs is True and len(b.runs) == 1          # one run: the fleet, then the rounds
    assert verdicts(r) == {"node01": PASS, "node02": PASS, "node03": FAIL, "node04": PASS}
    assert r.suspects == ["node03"] and r.pairs["calls"][0]["hosts"] == ["node03"]
    why = r.nodes[2].reasons[0]
    assert why.startswith("pairs: slow node") and "0.25 GB/s with node02" in why and "0.25 GB/s with node04" in why
    assert "the median 5 GB/s of 4 pairs" in why and "best of 2 tries" in why and "20% of the 1.25 GB/s" in why
    gauges = [m for m in r.measurements if m.name == "allreduce_pair_busbw_gbps"]
    assert len(gauges) == 4 and {m.labels["rail"] for m in gauges} == {"0"}


def test_slow_but_close_is_a_warning_and_the_run_still_exits_0():
    r = run_doctor(HOSTS, DoctorOptions(), WithPairs(slow=["node02"], factor=2.5))
    assert verdicts(r)["node02"] == WARN and r.verdict == WARN and exit_code(r.verdict) == 0
    assert "slow but close" in r.nodes[1].reasons[0]


def test_corruption_is_named_by_the_pairs_without_a_bisection():
    b = WithPairs(bad=["node04"])
    r = run_doctor(HOSTS, DoctorOptions(), b)
    assert len(b.runs) == 1 and r.suspects == ["node04"]
    assert verdicts(r) == {"node01": PASS, "node02": PASS, "node03": PASS, "node04": FAIL}
    assert any("the pair rounds name this node" in x for x in r.nodes[3].reasons)


def test_no_pairs_with_two_hosts_or_when_turned_off():
    b = WithPairs()
    run_doctor(HOSTS[:2], DoctorOptions(), b)
    assert b.asked_pairs is False
    run_doctor(HOSTS, DoctorOptions(pairs=False), b)
    assert b.asked_pairs is False


class OnNvlink(Scripted):
    """One node of H100s: the backend's outcome carries what NVLink allows (the preflight's
    NVML facts, envcheck/allreduce/nvlink.py)."""

    def allreduce(self, hosts, max_bytes, quick=False, pairs=False):
        out = super().allreduce(hosts, max_bytes, quick, pairs)
        out.allowed_gbps, out.allowed_by = 450.0, "NVLink 4 \u00d7 18"
        return out


def test_one_node_is_judged_against_what_its_nvlinks_allow_at_the_size_used():
    r = run_doctor(["node01"], DoctorOptions(), OnNvlink(busbw=360.0))
    msg = next(c.message for c in r.checks if c.check == "allreduce")
    assert msg == "busbw 360 GB/s, 0 wrong (80% of the 450 GB/s that NVLink 4 \u00d7 18 allows one rank, at 64MB)"
    m = next(m for m in r.measurements if m.name == "allreduce_allowed_gbps")
    assert (m.value, m.labels) == (450.0, {"hosts": "node01", "by": "NVLink 4 \u00d7 18"})
