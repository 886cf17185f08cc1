"""pytest fixtures for the simulated cluster (re-exported by tests/conftest.py, so every test
module can ask for them):

    cluster_factory   session-scoped: cluster_factory(n, per_host_setup=None, expose=...) -> Cluster;
                      every cluster it made is closed at the end of the session (or by .close()).
    make_cluster      function-scoped: the same call, closed when the test ends (pass or fail).
    slurm_factory     session-scoped: slurm_factory(n=3, settings=None, per_host_setup=None) ->
                      slurm.SlurmCluster (real munged, slurmctld and one slurmd per host, over a
                      fresh simulated cluster); closed with its cluster at the end of the session.
    slurm_cluster     module-scoped: slurm_factory(3), closed when the module ends.

Tests using them are marked `cluster` (and `slurm` for the Slurm ones) automatically and skip,
with the reason, where the cluster cannot run (not root, no `ip netns`, no sshd, no Slurm).
"""
from __future__ import annotations

import sys
from typing import List

import pytest

from tests.cluster import sim, slurm

# The interpreter running the tests has torch (tests/run.sh installs it); its installation
# usually lives under /root or /usr/local, which each host hides behind a private tmpfs, so it is
# bound back read-only: `--node-python` can then name it on a simulated node. A clone under /tmp
# (tests/run.sh makes its .venv there) is hidden the same way, so every private dir counts.
DEFAULT_EXPOSE = tuple(p for p in {sys.base_prefix, sys.prefix}
                       if p.startswith(tuple(d + "/" for d in sim.PRIVATE_TMPFS)))


def _skip_reason() -> str:
    return sim.available() or ""


class _Factory:
    def __init__(self) -> None:
        self.made: List[sim.Cluster] = []

    def __call__(self, n: int, per_host_setup=None, expose=DEFAULT_EXPOSE, prefix: str = "node",
                 bastion: bool = False) -> sim.Cluster:
        reason = _skip_reason()
        if reason:
            pytest.skip(reason)
        c = sim.make_cluster(n, per_host_setup=per_host_setup, expose=expose, prefix=prefix, bastion=bastion)
        self.made.append(c)
        return c

    def close_all(self) -> None:
        for c in self.made:
            c.close()
        self.made.clear()


@pytest.fixture(scope="session")
def cluster_factory():
    reason = _skip_reason()
    if reason:
        pytest.skip(reason)
    sim.sweep_stale()
    f = _Factory()
    yield f
    f.close_all()


@pytest.fixture
def make_cluster(cluster_factory):
    f = _Factory()
    yield f
    f.close_all()


class _SlurmFactory:
    def __init__(self, clusters: _Factory) -> None:
        self.clusters = clusters
        self.made: List[slurm.SlurmCluster] = []

    def __call__(self, n: int = 3, settings=None, per_host_setup=None, expose=DEFAULT_EXPOSE) -> slurm.SlurmCluster:
        reason = slurm.available()
        if reason:
            pytest.skip(reason)
        c = self.clusters(n, per_host_setup=per_host_setup, expose=expose)
        try:
            s = slurm.make_slurm(c, settings)
        except BaseException:
            c.close()
            raise
        s.owned_cluster = c   # closed with it
        self.made.append(s)
        return s

    def close_all(self) -> None:
        for s in self.made:
            s.close()
        self.made.clear()


@pytest.fixture(scope="session")
def slurm_factory(cluster_factory):
    reason = slurm.available()
    if reason:
        pytest.skip(reason)
    slurm.sweep_stale()
    f = _SlurmFactory(cluster_factory)
    yield f
    f.close_all()


@pytest.fixture(scope="module")
def slurm_cluster(slurm_factory):
    s = slurm_factory(3)
    yield s
    s.close()


def mark_cluster_tests(items) -> None:  # pragma: no cover - called from conftest's hook
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if {"cluster_factory", "make_cluster"} & names:
            item.add_marker(pytest.mark.cluster)
        if {"slurm_factory", "slurm_cluster"} & names:
            item.add_marker(pytest.mark.slurm)
