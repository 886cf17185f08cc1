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
    res = Isolation()
    hosts = list(hosts)
    pending_singles: List[str] = []

    def run(group: List[str]) -> Optional[bool]:
        if len(res.trace) >= max_tests:
            return None
        ok = bool(test(list(group)))
        res.trace.append((tuple(group), ok))
        return ok

    def mark_good(group: Sequence[str]) -> None:
        for h in group:
            if h not in res.good:
                res.good.append(h)

    def rec(group: List[str]) -> None:
        if len(group) == 1:
            pending_singles.append(group[0])
            return
        if len(group) == 2:
            # a failing pair: which of the two needs a good partner to tell
            pending_singles.extend(group)
            return
        mid = (len(group) + 1) // 2
        for half in (group[:mid], group[mid:]):
            if len(half) < 2:
                pending_singles.extend(half)
                continue
            ok = run(half)
            if ok is None:
                return
            if ok:
                mark_good(half)
            else:
                rec(half)

    if len(hosts) < 2:
        res.suspects = list(hosts)
        res.note = "one host: nothing to compare it with"
        return res
    rec(hosts)
    # singles: with a proven-good partner the answer is direct; without one, a test of the host
    # alone still catches a local fault (bad GPU, wrong data); a second pass pairs the rest with
    # whatever the first pass proved good
    undecided: List[str] = []
    for h in pending_singles:
        if h in res.good or h in res.suspects or h in undecided:
            continue
        if res.good:
            ok = run([res.good[0], h])
        else:
            ok = run([h])
            if ok:
                undecided.append(h)
                continue
        if ok is None:
            res.note = f"stopped after {max_tests} tests"
            break
        if ok:
            mark_good([h])
        else:
            res.suspects.append(h)
    if not res.good:
        # nobody proven good yet: find a passing pair among the hosts that passed alone
        tried = {frozenset(g) for g, _ in res.trace}
        for i, a in enumerate(undecided):
            for b in undecided[i + 1:]:
                if res.good or frozenset((a, b)) in tried:
                    continue
                ok = run([a, b])
                if ok:
                    mark_good([a, b])
    for h in undecided:
        if not res.good or h in res.good:
            continue
        ok = run([res.good[0], h])
        if ok is None:
            break
        if ok:
            mark_good([h])
        else:
            res.suspects.append(h)
    # a host whose every failing test also held a proven suspect is cleared by that suspect
    for h in undecided:
        if h in res.good or h in res.suspects:
            continue
        failing = [g for g, ok in res.trace if not ok and h in g]
        if res.suspects and all(set(g) & set(res.suspects) for g in failing):
            mark_good([h])
    left = [h for h in undecided if h not in res.good and h not in res.suspects]
    if left:
        res.suspects.extend(left)
        res.note = "could not tell apart (no node proven good to pair with): " + ", ".join(left)
    if not res.suspects and not res.note:
        res.note = "every subset tested passes: the fault needs the full set of hosts (a link or scale problem)"
    return res
