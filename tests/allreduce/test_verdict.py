"""One verdict for every all-reduce run (envcheck/allreduce/verdict.py): nccl-test, doctor and
provision ask the same function, so the same numbers get the same answer and exit code."""
from types import SimpleNamespace

from envcheck.allreduce.verdict import CORRUPT, LOST, NO_RESULT, PASSED, SLOW, judge, judge_report
from envcheck.ranks.failure import Failure


def test_a_correct_run_passes_with_exit_0_and_says_its_bandwidth():
    v = judge(rows=3, wrong=0, busbw=12.5)
    assert (v.status, v.exit_code, v.ok) == (PASSED, 0, True)
    assert "12.5 GB/s" in v.message


def test_wrong_elements_are_data_corruption_with_exit_1_even_when_fast():
    v = judge(rows=3, wrong=2, busbw=99.0, min_busbw=1.0)
    assert (v.status, v.exit_code) == (CORRUPT, 1)
    assert "2 wrong element(s)" in v.message and "data corruption" in v.message


def test_a_run_below_min_busbw_is_slow_with_exit_1():
    v = judge(rows=3, wrong=0, busbw=0.5, min_busbw=2.0)
    assert (v.status, v.exit_code) == (SLOW, 1)
    assert "below --min-busbw 2 GB/s" in v.message


def test_a_lost_rank_is_exit_3_and_blames_its_host_before_any_number():
    v = judge(rows=0, wrong=5, busbw=None, failure=Failure("rank_lost", "rank 3 on node02 was killed",
                                                           "node02", 3))
    assert (v.status, v.exit_code, v.culprit) == (LOST, 3, "node02")
    assert v.message == "rank 3 on node02 was killed"


def test_a_timeout_is_exit_3_but_blames_no_host_the_rank_named_only_waited():
    v = judge(rows=0, wrong=0, busbw=None, failure=Failure("timeout", "rank 0 on node01: warmup did "
                                                           "not finish", "node01", 0, suspects=["node02"]))
    assert (v.status, v.exit_code, v.culprit) == (LOST, 3, None)


def test_no_rows_and_no_failure_is_never_a_pass():
    v = judge(rows=0, wrong=0, busbw=None)
    assert (v.status, v.exit_code, v.ok) == (NO_RESULT, 3, False)


def test_a_report_is_judged_from_its_rows_summary_and_failure():
    rep = SimpleNamespace(rows=[{}, {}], summary={"busbw": 3.0, "wrong": 0}, wrong=0, failure=None)
    assert judge_report(rep, min_busbw=4.0).status == SLOW
    assert judge_report(rep).status == PASSED


# every field of the verdict, for each way a run ends (a mutation check found fields unpinned)
def test_each_verdict_in_full():
    from envcheck.allreduce.verdict import Verdict
    lost = Failure("rank_lost", "rank 3 on node02 was killed", "node02")
    assert judge(rows=2, wrong=1, busbw=4.0, failure=lost) == Verdict(LOST, "rank 3 on node02 was killed", 4.0, 1,
                                                                       "node02")
    assert judge(rows=0, wrong=0, busbw=None, failure=Failure("timeout", "")).message == "timeout"
    # a failure read back without a kind (a report file) is "unknown", which blames no host
    assert judge(rows=0, wrong=0, busbw=None, failure=Failure.from_dict({"host": "n1"})) == Verdict(
        LOST, "unknown", None, 0, None)
    assert judge(rows=3, wrong=2, busbw=99.0) == Verdict(
        CORRUPT, "2 wrong element(s) in the check pass: data corruption", 99.0, 2)
    assert judge(rows=0, wrong=0, busbw=None) == Verdict(NO_RESULT, "no result from the workers", None, 0)
    # a busbw given without rows is carried as given, as every other verdict carries it
    assert judge(rows=0, wrong=0, busbw=7.5) == Verdict(NO_RESULT, "no result from the workers", 7.5, 0)
    assert judge(rows=3, wrong=0, busbw=0.5, min_busbw=2.0) == Verdict(
        SLOW, "busbw 0.5 GB/s below --min-busbw 2 GB/s", 0.5, 0)
    assert judge(rows=3, wrong=0, busbw=12.5, min_busbw=2.0) == Verdict(
        PASSED, "busbw 12.5 GB/s at the largest size, 0 wrong", 12.5, 0)
    assert judge(rows=3, wrong=0, busbw=None, min_busbw=2.0) == Verdict(PASSED, "correct, 0 wrong", None, 0)


def test_min_busbw_is_a_floor_the_run_may_meet():
    assert judge(rows=1, wrong=0, busbw=2.0, min_busbw=2.0).status == PASSED
    assert judge(rows=1, wrong=0, busbw=1.999, min_busbw=2.0).status == SLOW


def test_a_report_passes_its_parts_to_the_verdict():
    from envcheck.allreduce.verdict import Verdict
    rep = SimpleNamespace(rows=[{}], summary={"busbw": 3.0}, wrong=4, failure=None)
    assert judge_report(rep) == Verdict(CORRUPT, "4 wrong element(s) in the check pass: data corruption", 3.0, 4)
    rep = SimpleNamespace(rows=[], summary=None, wrong=0, failure=Failure("host", "m", "n2"))
    assert judge_report(rep) == Verdict(LOST, "m", None, 0, "n2")


def test_preflight_refusals_name_each_host_once_with_its_first_reason():
    from envcheck.allreduce.verdict import preflight_refusals
    errors = [{"host": "n1", "message": "port busy"}, {"host": "n1", "message": "later"},
              {"host": "n2"}, {"message": "no host"}, {"host": "", "message": "empty"}]
    assert preflight_refusals(errors) == {"n1": "port busy", "n2": "preflight failed"}
