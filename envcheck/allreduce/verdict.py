"""Whether an all-reduce passed: the one place that turns a run's numbers into a verdict.

nccl-test, doctor (both launchers) and provision's nccl-test step all ask here, so the same run
gets the same answer and the same words everywhere. Exit codes follow the README: 0 passed;
1 the collective ran but is wrong (corrupted sums) or too slow (below --min-busbw); 3 it could
not be measured (preflight refused, a rank lost or timed out, no result).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional, Sequence

from envcheck.model import Outcome
from envcheck.ranks.failure import Failure

PASSED, CORRUPT, SLOW, LOST, NO_RESULT = "passed", "corrupt", "slow", "lost", "no-result"


@dataclass
class Verdict:
    status: str                      # one of the constants above
    message: str                     # one line, for tables and reasons
    busbw: Optional[float] = None    # GB/s at the largest size (nccl-tests' definition)
    wrong: int = 0
    culprit: Optional[str] = None    # the host a failure is blamed on, when one is (Failure.culprit)

    @property
    def ok(self) -> bool:
        return self.status == PASSED

    @property
    def outcome(self) -> Outcome:
        """Wrong or slow is an error; a run that could not be measured is unknown."""
        bad = self.status in (CORRUPT, SLOW)
        return Outcome(errors=int(bad), unknown=int(not bad and self.status != PASSED))

    @property
    def exit_code(self) -> int:
        return self.outcome.exit_code()


def judge(*, rows: int, wrong: int, busbw: Optional[float], failure: Optional[Failure] = None,
          min_busbw: Optional[float] = None) -> Verdict:
    """The verdict of one all-reduce run from its parts (a Report's, or srun's parsed output)."""
    if failure:
        return Verdict(LOST, failure.message or failure.kind, busbw, wrong, failure.culprit)
    if wrong:
        return Verdict(CORRUPT, f"{wrong} wrong element(s) in the check pass: data corruption", busbw, wrong)
    if not rows:
        return Verdict(NO_RESULT, "no result from the workers", busbw, wrong)
    if min_busbw is not None and busbw is not None and busbw < min_busbw:
        return Verdict(SLOW, f"busbw {busbw:.3g} GB/s below --min-busbw {min_busbw:g} GB/s", busbw, wrong)
    ok = f"busbw {busbw:.3g} GB/s at the largest size, 0 wrong" if busbw is not None else "correct, 0 wrong"
    return Verdict(PASSED, ok, busbw, wrong)


def judge_report(rep: Any, min_busbw: Optional[float] = None) -> Verdict:
    """The verdict of an allreduce.run.Report."""
    summary: Dict[str, Any] = rep.summary or {}
    return judge(rows=len(rep.rows), wrong=rep.wrong, busbw=summary.get("busbw"), failure=rep.failure,
                 min_busbw=min_busbw)


def preflight_refusals(errors: Sequence[Mapping[str, Any]]) -> Dict[str, str]:
    """host -> why the preflight refused it, from a Report's preflight_errors."""
    out: Dict[str, str] = {}
    for e in errors:
        if e.get("host"):
            out.setdefault(e["host"], e.get("message", "preflight failed"))
    return out
