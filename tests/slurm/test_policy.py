"""The hook's pure parts: Slurm's node text (captured from the real Slurm of the simulated
cluster), the reason envcheck writes, which reasons are its own, and the decision table."""
from __future__ import annotations

from pathlib import Path

import pytest

from envcheck.doctor.health import FAIL, PASS, UNKNOWN, WARN, CheckResult
from envcheck.errors import UsageError
from envcheck.slurm import policy
from envcheck.slurm.config import parse_duration
from envcheck.facts.recent import drop_stale_xids
from envcheck.slurm.nodes import NodeState, parse_show_node
from envcheck.slurm.policy import DRAIN, NOTHING, RESUME, decide, wanted

SHOW = (Path(__file__).resolve().parent.parent / "fixtures" / "slurm" / "scontrol-show-node.txt").read_text()


def test_real_scontrol_lines_give_state_flags_and_the_reason_without_slurms_suffix():
    lines = [l for l in SHOW.splitlines() if l.startswith("NodeName=")]
    nodes = [parse_show_node(l) for l in lines]
    ours, down, prolog, busy = (list(n.values())[0] for n in nodes)
    assert (ours.base, ours.flags, ours.drained) == ("IDLE", ["DRAIN"], True)
    assert ours.reason == "envcheck: xid-79: GPU has fallen off the bus (a=b)"   # an '=' inside survives
    assert ours.reason_user == "root" and ours.reason_time.startswith("2026-12-01T")
    assert (down.base, down.hands_off) == ("DOWN", "the node is DOWN")
    assert down.reason == "PSU replaced, waiting for burn-in"
    assert prolog.reason == "Prolog error" and prolog.drained and not prolog.hands_off
    assert (busy.base, busy.flags, busy.drained, busy.reason) == ("MIXED", ["DRAIN"], True, "maintenance: fan")


def test_a_reason_is_one_line_prefixed_and_bounded():
    r = policy.reason_for("driver-not-found", "NVIDIA GPUs on the bus\nand   no driver " + "x" * 300)
    assert r.startswith("envcheck: driver-not-found: NVIDIA GPUs on the bus and no driver x")
    assert "\n" not in r and len(r) == policy.MAX_REASON and r.endswith("…")
    assert policy.owned(r) and not policy.owned("NHC: check_hw_cpuinfo failed") and not policy.owned("Prolog error")


def node(state: str = "IDLE", reason: str = "") -> NodeState:
    base, *flags = state.split("+")
    return NodeState("node02", base, flags, reason)


OURS = "envcheck: xid-79: GPU has fallen off the bus"
NEW = "envcheck: driver-not-found: no driver"


@pytest.mark.parametrize("want, st, reason, record, action", [
    (DRAIN, "IDLE", "", None, DRAIN),                                          # plain drain
    (DRAIN, "MIXED", "", None, DRAIN),                                         # a job runs: draining
    (DRAIN, "IDLE+DRAIN", "maintenance: fan", None, NOTHING),                  # an operator's reason kept
    (DRAIN, "IDLE+DRAIN", "NHC: check_fs_mount failed", None, NOTHING),
    (DRAIN, "IDLE+DRAIN", "Prolog error", None, NOTHING),                      # not caused by envcheck
    (DRAIN, "IDLE+DRAIN", "Prolog error", {"mode": "prolog"}, DRAIN),           # caused by envcheck: re-worded
    (DRAIN, "IDLE+DRAIN", "Epilog error", {"mode": "prolog"}, NOTHING),         # the record is for the other script
    (DRAIN, "IDLE+DRAIN", OURS, None, DRAIN),                                  # own drain, new fault: re-worded
    (DRAIN, "IDLE+DRAIN", NEW, None, NOTHING),                                 # already so
    (DRAIN, "DOWN", "", None, NOTHING),
    (DRAIN, "IDLE+MAINT", "", None, NOTHING),
    (DRAIN, "IDLE+RESERVED", "", None, NOTHING),
    (RESUME, "IDLE+DRAIN", OURS, None, RESUME),
    (RESUME, "MIXED+DRAIN", OURS, None, RESUME),
    (RESUME, "IDLE+DRAIN", "maintenance: fan", None, NOTHING),                 # never resumes others' drains
    (RESUME, "IDLE+DRAIN", "Prolog error", None, NOTHING),
    (RESUME, "IDLE+DRAIN", "Prolog error", {"mode": "prolog"}, RESUME),
    (RESUME, "DOWN+DRAIN", OURS, None, NOTHING),                               # down: the operator's business
    (RESUME, "IDLE", "", None, NOTHING),
    (NOTHING, "IDLE", "", None, NOTHING),
])
def test_the_decision_table(want, st, reason, record, action):
    d = decide(want, node(st, reason), NEW, record)
    assert d.action == action, d
    assert d.why                                                               # a no-op says why, too
    if action == DRAIN:
        assert d.reason == NEW


def test_a_kept_reason_is_named_in_why():
    d = decide(DRAIN, node("IDLE+DRAIN", "maintenance: fan"), NEW)
    assert "maintenance: fan" in d.why and "did not write" in d.why


def checks(*rows):
    return [CheckResult("n", c, s, m, code=code) for c, s, m, code in rows]


def test_wanted_names_the_first_failing_code_and_counts_the_rest():
    cs = checks(("driver", FAIL, "NVIDIA GPUs on the PCI bus and no driver. More text", "driver-not-found"),
                ("torch", FAIL, "CPU-only torch; other", "torch-cpu-only,torch-other"),
                ("cuda", WARN, "w", "cuda-x"))
    want, reason = wanted(FAIL, cs)
    assert want == DRAIN
    assert reason == "envcheck: driver-not-found: NVIDIA GPUs on the PCI bus and no driver (+2 more)"


@pytest.mark.parametrize("verdict, strict, unknown, want", [
    (PASS, False, False, RESUME), (WARN, False, False, RESUME), (WARN, True, False, DRAIN),
    (UNKNOWN, False, False, NOTHING), (UNKNOWN, False, True, DRAIN), (FAIL, False, False, DRAIN),
])
def test_warn_drains_only_when_strict_and_unknown_only_when_asked(verdict, strict, unknown, want):
    cs = checks(("probe", verdict, "the probe did not finish: timed out", "probe-failed"))
    got, _ = wanted(verdict, cs, strict=strict, drain_unknown=unknown)
    assert got == want


def test_a_prolog_record_round_trips_and_clears(tmp_path):
    d = str(tmp_path / "state")
    assert policy.read_record(d) is None
    assert policy.write_record(d, "prolog", NEW, "42") is None
    rec = policy.read_record(d)
    assert (rec["mode"], rec["reason"], rec["job"]) == ("prolog", NEW, "42")
    policy.clear_record(d)
    assert policy.read_record(d) is None


def test_xids_older_than_the_window_are_dropped_and_unstamped_ones_kept():
    facts = {"health": {"kernel_log": {"uptime_s": 100000.0, "events": [
        {"xid": 79, "pci": "0000:2b:00", "count": 1, "last_s": 100.0},          # a day ago and more
        {"xid": 48, "pci": "0000:07:00", "count": 2, "last_s": 99000.0},        # 1000 s ago
        {"xid": 13, "pci": "0000:07:00", "count": 1}]}}}                          # no stamp: kept
    assert drop_stale_xids(facts, 24 * 3600.0) == 1
    assert [e["xid"] for e in facts["health"]["kernel_log"]["events"]] == [48, 13]
    assert drop_stale_xids({"health": {"kernel_log": {"events": []}}}, 1.0) == 0   # no uptime: nothing judged


@pytest.mark.parametrize("text, seconds", [("3600", 3600), ("90m", 5400), ("24h", 86400), ("7d", 604800), ("1.5h", 5400)])
def test_durations(text, seconds):
    assert parse_duration(text, "--xid-since") == seconds


@pytest.mark.parametrize("bad", ["", "0", "-1h", "24 hours", "1w"])
def test_bad_durations_name_the_flag_and_the_fix(bad):
    with pytest.raises(UsageError) as e:
        parse_duration(bad, "--xid-since")
    assert "--xid-since" in e.value.one_line() and "24h" in e.value.one_line()
