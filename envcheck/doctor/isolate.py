"""Find the node that breaks a collective by re-testing subsets of the hosts.

`test(hosts) -> bool` runs a short all-reduce over exactly those hosts and says whether it was
correct and fast enough. Halves are tested first: a passing half proves its nodes good. A
single host is never tested alone (an intra-node all-reduce cannot see a bad NIC): it is
paired with a node already proven good. With one bad node among n this takes about 2·log2(n)
tests; several bad nodes are all found; a fault that needs the whole set (every subset passes)
names nobody and says so.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List, Optional, Sequence, Tuple


@dataclass
class Isolation:
    suspects: List[str] = field(default_factory=list)
    good: List[str] = field(default_factory=list)
    trace: List[Tuple[Tuple[str, ...], bool]] = field(default_factory=list)  # every subset tested
    note: str = ""


def isolate(hosts: Sequence[str], test: Callable[[List[str]], bool], max_tests: int = 32) -> Isolation:
    hosts = list(hosts)
    if len(hosts) < 2:
        return Isolation(suspects=list(hosts), note="one host: nothing to compare it with")
    s = _Search(test, max_tests)
    s.bisect(hosts)
    undecided = s.decide_singles()
    if not s.res.good:
        s.find_good_pair(undecided)
    s.pair_with_good(undecided)
    s.clear_shadowed(undecided)
    return s.finish(undecided)


class _Search:
    """The state of one isolation: every subset tested so far and what it proved."""

    def __init__(self, test: Callable[[List[str]], bool], max_tests: int):
        self.test, self.max_tests = test, max_tests
        self.res = Isolation()
        self.singles: List[str] = []   # hosts left to judge one by one after bisection

    def run(self, group: List[str]) -> Optional[bool]:
        if len(self.res.trace) >= self.max_tests:
            return None
        ok = bool(self.test(list(group)))
        self.res.trace.append((tuple(group), ok))
        return ok

    def mark_good(self, group: Sequence[str]) -> None:
        for h in group:
            if h not in self.res.good:
                self.res.good.append(h)

    def bisect(self, group: List[str]) -> None:
        if len(group) <= 2:
            # one host, or a failing pair: which of the two needs a good partner to tell
            self.singles.extend(group)
            return
        mid = (len(group) + 1) // 2
        for half in (group[:mid], group[mid:]):
            if len(half) < 2:
                self.singles.extend(half)
                continue
            ok = self.run(half)
            if ok is None:
                return
            if ok:
                self.mark_good(half)
            else:
                self.bisect(half)

    def decide_singles(self) -> List[str]:
        """With a proven-good partner the answer is direct; without one, a test of the host
        alone still catches a local fault (bad GPU, wrong data). Returns the hosts that passed
        alone with nobody good to pair them with yet."""
        res, undecided = self.res, []
        for h in self.singles:
            if h in res.good or h in res.suspects or h in undecided:
                continue
            if res.good:
                ok = self.run([res.good[0], h])
            else:
                ok = self.run([h])
                if ok:
                    undecided.append(h)
                    continue
            if ok is None:
                res.note = f"stopped after {self.max_tests} tests"
                break
            if ok:
                self.mark_good([h])
            else:
                res.suspects.append(h)
        return undecided

    def find_good_pair(self, undecided: List[str]) -> None:
        """Nobody proven good yet: find a passing pair among the hosts that passed alone."""
        tried = {frozenset(g) for g, _ in self.res.trace}
        for i, a in enumerate(undecided):
            for b in undecided[i + 1:]:
                if self.res.good or frozenset((a, b)) in tried:
                    continue
                if self.run([a, b]):
                    self.mark_good([a, b])

    def pair_with_good(self, undecided: List[str]) -> None:
        for h in undecided:
            if not self.res.good or h in self.res.good:
                continue
            ok = self.run([self.res.good[0], h])
            if ok is None:
                break
            if ok:
                self.mark_good([h])
            else:
                self.res.suspects.append(h)

    def clear_shadowed(self, undecided: List[str]) -> None:
        """A host whose every failing test also held a proven suspect is cleared by that suspect."""
        res = self.res
        for h in undecided:
            if h in res.good or h in res.suspects:
                continue
            failing = [g for g, ok in res.trace if not ok and h in g]
            if res.suspects and all(set(g) & set(res.suspects) for g in failing):
                self.mark_good([h])

    def finish(self, undecided: List[str]) -> Isolation:
        res = self.res
        left = [h for h in undecided if h not in res.good and h not in res.suspects]
        if left:
            res.suspects.extend(left)
            res.note = "could not tell apart (no node proven good to pair with): " + ", ".join(left)
        if not res.suspects and not res.note:
            res.note = "every subset tested passes: the fault needs the full set of hosts (a link or scale problem)"
        return res
