"""A fix is tried before it is offered.

For each error or warning finding whose rule gave remedies (envcheck/model.py Remedy, best first), the
remedy is applied to a copy of the facts (envcheck/facts/edit.py) and every rule runs again:

- the finding is gone and no new error came: the fix is *verified* and offered as the rule wrote it;
- a new error came (installing CUDA 11.7 on a host whose gcc 12 is too new for it): the new
  error's own remedies are tried on top, at most MAX_DEPTH of them, never one that undoes a change
  already made (a driver upgrade then a downgrade), and the fix offered is *extended* with them,
  saying why ("CUDA 11.7.1 needs gcc <= 11: install gcc-11 too");
- the finding stays, or the new error cannot be cleared: the rule's next candidate is tried, and
  the one that holds is offered instead (*replaced*), saying why the first did not;
- a remedy that changes nothing (the wheel that is installed already) is never offered; when every
  candidate is such, the finding says so (status "none");
- nothing holds within the bounds: the first candidate that changes something is offered, marked
  *unverified*, with what stayed wrong.

"New" means an error whose (code, component) the host did not have before: errors the host
already had are other findings' business. Bounded: MAX_CANDIDATES per finding and per new error,
MAX_DEPTH added fixes, BUDGET rule runs per host, and each distinct facts document judged once.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from envcheck.facts import edit
from envcheck.matrix.load import Matrix
from envcheck.model import (ERROR, EXTENDED, NO_FIX, REPLACED, UNVERIFIED, VERIFIED, WARNING, Finding, FixCheck,
                            Remedy)

Facts = Dict[str, Any]
Run = Callable[[Facts], List[Finding]]

CHECKED = (ERROR, WARNING)  # a fix offered with a warning is tried as one offered with an error
MAX_CANDIDATES = 3  # a rule's candidates tried, per finding and per error met on the way
MAX_DEPTH = 2       # fixes added to the one the rule gave
BUDGET = 48         # rule runs per host: a fleet of hundreds stays a matter of seconds


@dataclass
class _Trial:
    ok: bool
    nochange: bool = False
    steps: List[Tuple[Remedy, Finding]] = field(default_factory=list)  # added fixes, the error each clears
    reason: str = ""


def _key(f: Finding) -> Tuple[str, str]:
    return f.code, f.component


def _short(f: Finding, limit: int = 110) -> str:
    """The new error in a few words: its code and the head of its message."""
    head = f.message.split(": ")[0].split("; ")[0]
    if len(head) > limit:
        head = head[:limit].rsplit(" ", 1)[0] + " …"
    return f"{head} [{f.code}]"


def _conflicts(r: Remedy, applied: Sequence[Remedy]) -> bool:
    """r would undo a change already made: the same fact set to another value."""
    done = {k: v for a in applied for k, v in a.edits}
    return any(k in done and done[k] != v for k, v in r.edits)


class _Checker:
    def __init__(self, facts: Facts, m: Matrix, run: Run, before: Sequence[Finding]):
        self.facts, self.m, self.run = facts, m, run
        self.before: Set[Tuple[str, str]] = {_key(f) for f in before if f.severity == ERROR}
        self.cache: Dict[str, List[Finding]] = {}
        self.runs = 0

    def errors(self, f: Facts) -> Optional[List[Finding]]:
        """The error and warning findings of these facts; None once the budget is spent."""
        key = json.dumps(f, sort_keys=True, default=str)
        if key not in self.cache:
            if self.runs >= BUDGET:
                return None
            self.runs += 1
            self.cache[key] = [x for x in self.run(f) if x.severity in CHECKED]
        return self.cache[key]

    def trial(self, target: Finding, r: Remedy) -> _Trial:
        after = edit.apply(self.facts, r, self.m)
        if after == self.facts:
            return _Trial(False, nochange=True, reason="it changes nothing: it is what the host has already")
        return self.settle(after, target, [r], MAX_DEPTH)

    def settle(self, f: Facts, target: Finding, applied: List[Remedy], depth: int) -> _Trial:
        errs = self.errors(f)
        if errs is None:
            return _Trial(False, reason="not tried to the end: envcheck's bound on re-checks was reached")
        if any(_key(e) == _key(target) for e in errs):
            return _Trial(False, reason=f"the {target.severity} remains after it")
        new = [e for e in errs if e.severity == ERROR and _key(e) not in self.before]
        if not new:
            return _Trial(True)
        e = new[0]
        deeper = ""  # why the first fix tried for the new error did not hold either
        if depth > 0:
            for c in e.remedies[:MAX_CANDIDATES]:
                if _conflicts(c, applied):
                    continue
                nxt = edit.apply(f, c, self.m)
                if nxt == f:
                    continue
                t = self.settle(nxt, target, applied + [c], depth - 1)
                if t.ok:
                    return _Trial(True, steps=[(c, e)] + t.steps)
                deeper = deeper or f"; with {c.label} too, {t.reason}"
        tried = ", which no further fix clears without undoing it" if depth > 0 else \
            f", whose fix would be one more than the {MAX_DEPTH} envcheck adds to one"
        why = deeper or (tried if e.remedies else "")
        return _Trial(False, reason=f"it brings {_short(e)}{why}")


def _extended_text(base: str, steps: List[Tuple[Remedy, Finding]]) -> Tuple[str, List[str]]:
    """'install CUDA 11.7 …. CUDA 11.7.1 needs gcc <= 11, so also: install gcc-11 …'"""
    notes = [f"{s.why or _short(e)}: {s.label} too" for s, e in steps]
    return base + "".join(f". {s.why or _short(e)}, so also: {s.fix}" for s, e in steps), notes


def _offered(fd: Finding, i: int, r: Remedy, t: _Trial, failed: List[Tuple[Remedy, _Trial]]) -> Finding:
    base = r.fix or fd.fix
    instead = [f"instead of {c.label}: {ft.reason}" for c, ft in failed]
    if instead:
        base += f" ({'; '.join(instead)})"
    text, notes = _extended_text(base, t.steps)
    notes = instead + notes
    status = VERIFIED if i == 0 and not t.steps else EXTENDED if i == 0 else REPLACED
    steps = [r] + [s for s, _ in t.steps]
    edits = tuple((k, v) for s in steps for k, v in s.edits)
    return replace(fd, fix=text, fix_check=FixCheck(status, tuple(s.label for s in steps), edits, tuple(notes)))


def _not_offered(fd: Finding, tried: List[Tuple[Remedy, _Trial]]) -> Finding:
    moving = [(c, t) for c, t in tried if not t.nochange]
    notes = tuple(f"{c.label}: {t.reason}" for c, t in tried)
    if not moving:
        text = "none that changes anything: " + "; ".join(notes)
        return replace(fd, fix=text, fix_check=FixCheck(NO_FIX, (), (), notes))
    c, t = moving[0]
    base = c.fix or fd.fix
    return replace(fd, fix=f"{base} (unverified: {t.reason})",
                   fix_check=FixCheck(UNVERIFIED, (c.label,), c.edits, notes))


def check_fix(checker: _Checker, fd: Finding) -> Finding:
    tried: List[Tuple[Remedy, _Trial]] = []
    for i, r in enumerate(fd.remedies[:MAX_CANDIDATES]):
        t = checker.trial(fd, r)
        if t.ok:
            return _offered(fd, i, r, t, tried)
        tried.append((r, t))
    return _not_offered(fd, tried)


def verify(facts: Facts, m: Matrix, findings: List[Finding], run: Run) -> List[Finding]:
    """The findings with each error's fix tried (module docstring); the others as they were.
    `run` judges a facts document without verifying (the rules registry)."""
    if not any(f.severity in CHECKED and f.remedies for f in findings):
        return findings
    checker = _Checker(facts, m, run, findings)
    return [_guarded(checker, f) if f.severity in CHECKED and f.remedies else f for f in findings]


def _guarded(checker: _Checker, fd: Finding) -> Finding:
    try:
        return check_fix(checker, fd)
    except Exception as e:  # noqa: BLE001 - one odd remedy must not cost the host its verdict
        why = f"envcheck could not try it ({type(e).__name__}: {e})"
        return replace(fd, fix_check=FixCheck(UNVERIFIED, notes=(why,)))
