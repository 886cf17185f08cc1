"""What the link allows (envcheck/allreduce/linkrate.py) from the facts the preflight reads, and the
probe's reading of sysfs `speed` (section net) and InfiniBand port rates (section ib; a planted
sysfs tree, IB does not exist here; the real /sys/class/net for the interfaces)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from envcheck.allreduce.linkrate import Link, node_link, of_run, percent, slowest

ETH = [{"name": "lo", "addrs": ["127.0.0.1/8"], "speed": None},
       {"name": "eth0", "addrs": ["10.0.0.2/24"], "speed": 25000}]
IB = [{"device": "mlx5_0", "port": "1", "rate_gbps": 400.0, "link_layer": "InfiniBand"},
      {"device": "mlx5_1", "port": "1", "rate_gbps": 400.0, "link_layer": "InfiniBand"}]


def test_sockets_use_the_speed_of_the_interface_in_use():
    assert node_link(ETH, [], "eth0", "gloo") == Link(25000 / 8000, "eth0 25 Gb/s")
    assert node_link(ETH, IB, "eth0", "gloo").source == "eth0 25 Gb/s"      # gloo never uses IB verbs


def test_nccl_uses_the_infiniband_ports_when_there_are_active_ones():
    link = node_link(ETH, IB, "eth0", "nccl")
    assert link.gbps == pytest.approx(100.0) and link.source == "2 InfiniBand port(s), 400 Gb/s each"


def test_an_unknown_rate_is_none_never_a_guess():
    assert node_link(ETH, [], None, "gloo") is None
    assert node_link([{"name": "eth0", "addrs": [], "speed": None}], [], "eth0", "gloo") is None
    assert slowest([Link(1.25, "x"), None], [1, 1]) is None and percent(1.0, None) is None


def test_ranks_of_one_node_share_its_link_and_the_slower_node_bounds_the_run():
    links = {"a": {"gbps": 100.0, "source": "ib"}, "b": {"gbps": 12.5, "source": "eth0 100 Gb/s"}}
    ranks = [{"rank": 0, "node": "a"}, {"rank": 1, "node": "a"}, {"rank": 2, "node": "b"}, {"rank": 3, "node": "b"}]
    assert of_run(links, ranks) == pytest.approx(12.5 / 2)
    assert of_run(links, ranks, ["a"]) == pytest.approx(50.0)
    assert of_run(links, ranks, ["c"]) is None


def test_the_probe_ib_section_keeps_the_active_ports_with_their_rate(tmp_path):
    from tests.node.probe_helpers import load_probe
    for dev, state, rate in (("mlx5_0", "4: ACTIVE", "400 Gb/sec (4X NDR)"), ("mlx5_1", "1: DOWN", "400 Gb/sec (4X NDR)"),
                             ("mlx5_2", "4: ACTIVE", "200 Gb/sec (4X HDR)")):
        d = tmp_path / dev / "ports" / "1"
        d.mkdir(parents=True)
        (d / "state").write_text(state + "\n")
        (d / "rate").write_text(rate + "\n")
        (d / "link_layer").write_text("InfiniBand\n")
    ports = load_probe().collect_ib_rates(root=str(tmp_path))
    assert [(p["device"], p["rate_gbps"]) for p in ports] == [("mlx5_0", 400.0), ("mlx5_2", 200.0)]


def test_the_probe_gives_every_interface_its_sysfs_speed_or_none():
    from tests.node.probe_helpers import PROBE
    r = subprocess.run([sys.executable, str(PROBE), "--only", "net,ib"], capture_output=True, text=True, timeout=60)
    doc = json.loads(r.stdout)
    assert doc["interfaces"], r.stderr
    for i in doc["interfaces"]:
        raw = None
        try:
            raw = int(open(f"/sys/class/net/{i['name']}/speed").read())
        except (OSError, ValueError):
            pass
        assert i["speed"] == (raw if raw and raw > 0 else None), i
    assert doc["ib_ports"] == [] or all(p["rate_gbps"] for p in doc["ib_ports"])


# ---- whole values (each seen to fail on a planted change: bench/mutation.py)

def test_infiniband_ports_of_one_rate_or_of_several_are_said_as_such():
    one = node_link([], [{"name": "mlx5_0", "rate_gbps": 100}], None, "nccl")
    assert one == Link(12.5, "1 InfiniBand port(s), 100 Gb/s each")
    mixed = node_link([], [{"name": "mlx5_0", "rate_gbps": 200}, {"name": "mlx5_1", "rate_gbps": 400}], None, "nccl")
    assert mixed == Link(75.0, "2 InfiniBand ports, 600 Gb/s together")
    assert mixed.to_dict() == {"gbps": 75.0, "source": "2 InfiniBand ports, 600 Gb/s together"}


def test_a_link_shared_by_no_rank_or_one_rank_is_the_whole_link():
    assert Link(10.0, "x").per_rank(0) == Link(10.0, "x").per_rank(1) == 10.0
    assert Link(10.0, "x").per_rank(4) == 2.5


def test_a_run_s_ranks_may_name_their_host_as_host_and_a_host_without_a_rate_is_unknown():
    links = {"a": {"gbps": 10.0, "source": "eth0 80 Gb/s"}, "b": None}
    assert of_run(links, [{"rank": 0, "host": "a"}, {"rank": 1, "host": "a"}]) == 5.0
    assert of_run(links, [{"rank": 0, "node": "a"}, {"rank": 1, "node": "b"}]) is None


def test_a_share_is_a_percentage_of_what_the_link_allows():
    assert percent(5.0, 20.0) == 25.0
    assert percent(None, 20.0) is None and percent(5.0, 0.0) is None
