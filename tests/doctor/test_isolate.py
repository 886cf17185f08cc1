"""Bisection over hosts: the test function is a plain predicate over a host set standing for
'an all-reduce over these hosts passed', so every fault model can be enumerated."""
from __future__ import annotations

import math

import pytest

from envcheck.doctor.isolate import isolate

HOSTS = [f"node{i:02d}" for i in range(1, 9)]


def node_fault(bad):
    """A node-local fault: any set containing a bad node fails, even that node alone."""
    return lambda hs: not (set(hs) & set(bad))


def link_fault(bad):
    """A network fault: the node fails only together with others (alone it passes)."""
    return lambda hs: len(hs) == 1 or not (set(hs) & set(bad))


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("fault", [node_fault, link_fault])
def test_one_bad_node_is_named_wherever_it_is(n, fault):
    hosts = HOSTS[:n]
    for bad in hosts:
        r = isolate(hosts, fault([bad]))
        if n == 2 and fault is link_fault:
            # two hosts and a fault that only shows between them: no way to tell which
            assert set(r.suspects) == set(hosts) and "could not tell apart" in r.note
            continue
        assert r.suspects == [bad], (n, bad, r)
        assert len(r.trace) <= 2 * math.ceil(math.log2(n)) + 3


def test_two_bad_nodes_are_both_named():
    r = isolate(HOSTS, node_fault(["node02", "node07"]))
    assert sorted(r.suspects) == ["node02", "node07"]


def test_a_fault_that_needs_every_host_names_nobody():
    r = isolate(HOSTS, lambda hs: len(hs) < len(HOSTS))
    assert r.suspects == [] and "full set" in r.note


def test_never_tests_more_than_the_budget():
    calls = []
    r = isolate(HOSTS, lambda hs: calls.append(hs) or False, max_tests=3)
    assert len(calls) == 3 and len(r.trace) == 3


def test_single_host_is_its_own_suspect_without_testing():
    calls = []
    r = isolate(["a"], lambda hs: calls.append(hs) or False)
    assert r.suspects == ["a"] and calls == []
