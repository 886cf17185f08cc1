"""The pair rounds on 8 simulated nodes (one module-scoped cluster): real sshd, real gloo over TCP
between the namespaces, a slow link made with `tc` (tbf) on one host, and the link rate read from
the veths' real sysfs `speed`. No threshold is given anywhere: the slow node must be found by
comparison with the other pairs. A healthy cluster first, then the same cluster with node05's link
at 1/20 of the others'.

Every link is shaped, the healthy ones too: the 8 simulated hosts share the machine's CPUs (2 on
CI, with other tests running), so unshaped pairs measure CPU scheduling, not links, and one pair
starved of CPU for both of its tries is honestly "slow" (a CI run saw a pair at 0.32 of the
median). At 200 Mbit/s (25 MB/s) the link is the bottleneck with a wide margin: CI's slowest
CPU-bound pair still moved 92 MB/s."""
from __future__ import annotations

import json
import re
import sys

import pytest

from tests.conftest import run_cli

junitparser = pytest.importorskip("junitparser")
prom_parser = pytest.importorskip("prometheus_client.parser")

PY = sys.executable
SLOW = "node05"
COMMON = ("--node-python", PY, "--backend", "gloo", "--nproc-per-node", "1", "--max-bytes", "1M")


RATE, SLOW_RATE = "200mbit", "10mbit"     # tc's units; burst must hold rate/HZ bytes


@pytest.fixture(scope="module")
def c8(cluster_factory):
    c = cluster_factory(8)
    c.trust_all_host_keys()
    yield c
    c.close()


@pytest.fixture
def healthy(c8):
    for h in c8:
        h.shape(RATE, burst="128kb")
    yield c8
    for h in c8:
        h.unshape()


@pytest.fixture
def slow_link(healthy):
    healthy[SLOW].shape(SLOW_RATE)
    yield healthy


def doctor(c, *extra):
    p = run_cli("doctor", c.hostlist, "--ssh-config", str(c.ssh_config), *COMMON, "--collective-timeout", "30",
                "--connect-timeout", "5", "--no-expect-gpus", "--no-deep", "--json", *extra, timeout=300)
    try:
        return p, json.loads(p.stdout)
    except ValueError:
        raise AssertionError(f"not JSON (rc {p.returncode}): {p.stdout[-500:]} {p.stderr[-2000:]}")


def test_a_healthy_cluster_names_no_node_and_reads_its_link_rate(healthy):
    p, doc = doctor(healthy)
    assert (doc["verdict"], p.returncode, doc["suspects"], doc["pairs"]["calls"]) == ("PASS", 0, [], []), doc["nodes"]
    assert doc["pairs"]["pairs"] == 8
    pairs = {c["host"]: c["message"] for c in doc["checks"] if c["check"] == "pairs"}
    assert set(pairs) == set(healthy.names) and all(c["status"] == "PASS" for c in doc["checks"] if c["check"] == "pairs")
    # the veth's own sysfs speed (10000 Mb/s): 1.25 GB/s per direction
    assert all("of the 1.25 GB/s the link allows" in m for m in pairs.values()), pairs
    assert all(f["allowed"] == pytest.approx(1.25) for f in doc["pairs"]["figures"])
    # the figures measure the shaped link (25 MB/s each way), not the CPU
    assert 0 < doc["pairs"]["median_busbw"] < 0.025 * 1.5, doc["pairs"]["median_busbw"]


def test_one_node_at_a_twentieth_of_the_rate_is_named_alone_with_its_figures_and_the_median(slow_link, tmp_path):
    p, doc = doctor(slow_link, "--junit", str(tmp_path / "d.xml"), "--prometheus", str(tmp_path / "d.prom"))
    named = {n["host"]: n for n in doc["nodes"] if n["verdict"] != "PASS"}
    assert list(named) == [SLOW] and doc["suspects"] == [SLOW], doc["nodes"]
    assert named[SLOW]["verdict"] in ("FAIL", "WARN") and p.returncode == (1 if named[SLOW]["verdict"] == "FAIL" else 0)
    why = named[SLOW]["reasons"][0]
    assert re.search(r"[0-9.]+ GB/s with node04", why) and re.search(r"[0-9.]+ GB/s with node06", why), why
    assert re.search(r"against the median [0-9.]+ GB/s of 8 pairs", why) and "the link allows" in why, why
    # the pair figures in all three outputs
    figures = doc["pairs"]["figures"]
    assert len(figures) == 8 and all(f["busbw"] > 0 for f in figures)
    slow = [f for f in figures if SLOW in f["hosts"]]
    median = doc["pairs"]["median_busbw"]
    assert len(slow) == 2 and all((f["first_busbw"] if f["stopped"] else f["busbw"]) < median / 4 for f in slow)
    xml = junitparser.JUnitXml.fromfile(str(tmp_path / "d.xml"))
    cases = {(s.name, c.name): c for s in xml for c in s}
    assert cases[(SLOW, "pairs")].result and "GB/s with node04" in cases[(SLOW, "pairs")].result[0].text
    assert not cases[("node01", "pairs")].result
    fams = {f.name: f for f in prom_parser.text_string_to_metric_families((tmp_path / "d.prom").read_text())}
    gauges = {(s.labels["host"], s.labels["peer"]): s.value for s in fams["envcheck_allreduce_pair_busbw_gbps"].samples}
    assert len(gauges) == 8 and fams["envcheck_allreduce_pair_median_busbw_gbps"].samples[0].value == pytest.approx(median)
    assert max(v for k, v in gauges.items() if SLOW in k) < median / 4


def test_nccl_test_pairs_prints_every_pair_and_marks_the_slow_nodes(slow_link):
    p = run_cli("nccl-test", slow_link.hostlist, "--ssh-config", str(slow_link.ssh_config), *COMMON, "--pairs",
                timeout=300)
    lines = [x for x in p.stdout.splitlines() if re.match(r"\s+\d+\s+\d+\s+node\d\d-node\d\d", x)]
    assert len(lines) == 8, p.stdout + p.stderr[-2000:]
    marked = [x for x in lines if x.rstrip().endswith(SLOW)]
    assert len(marked) == 2 and all(SLOW in x.split()[2] for x in marked), p.stdout
    assert all(re.search(r"\d+%", x) for x in lines)            # the share of the link rate
    assert p.returncode in (0, 1) and f"slow node" in p.stdout and "the median" in p.stdout
