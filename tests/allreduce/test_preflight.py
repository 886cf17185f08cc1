"""The preflight's pure parts: which interface to suggest, --ifname checks, reading records."""
from envcheck.allreduce.run import Report, _analyse
from envcheck.ranks import records as rr
from envcheck.ranks.plan import NodeFacts, check_ifname, pick_master_addr, suggest_ifname
from envcheck.remote import LocalRemote, RunResult


def node(host, **ifaces):
    return NodeFacts(host, interfaces=[{"name": k, "addrs": v} for k, v in ifaces.items()])


# every node has lo and docker0 with the same look-alike address: both classic wrong picks
A = node("node01", lo=["127.0.0.1/8"], docker0=["172.17.0.1/16"], eth0=["192.168.5.11/24"],
         ib0=["10.10.0.11/16"])
B = node("node02", lo=["127.0.0.1/8"], docker0=["172.17.0.1/16"], eth0=["192.168.5.12/24"],
         ib0=["10.10.0.12/16"])
C = node("node03", lo=["127.0.0.1/8"], eno1=["192.168.5.13/24"], ib0=["10.10.0.13/16"])


def test_the_interface_whose_subnet_holds_every_other_node_is_suggested_never_lo_or_docker0():
    assert suggest_ifname([A, B]) in ("eth0", "ib0")
    assert suggest_ifname([A, B]) != "docker0"
    # node03 names its Ethernet eno1: only ib0 is one name on every node
    assert suggest_ifname([A, B, C]) == "ib0"


def test_no_suggestion_when_no_single_interface_joins_the_nodes():
    lonely = node("node04", lo=["127.0.0.1/8"], eth0=["10.99.0.4/24"])
    assert suggest_ifname([A, lonely]) is None
    assert suggest_ifname([A]) is None


def test_an_ifname_missing_on_one_host_names_that_host_and_what_it_has():
    errs = check_ifname([A, B, C], "eth0")
    assert [e.host for e in errs] == ["node03"]
    assert "'eth0'" in errs[0].message and "eno1" in errs[0].message
    noaddr = NodeFacts("node05", interfaces=[{"name": "eth0", "addrs": []}])
    assert "no IPv4 address" in check_ifname([noaddr], "eth0")[0].message


def test_master_addr_is_the_first_hosts_address_on_the_chosen_interface():
    class R(LocalRemote):
        is_local = False
    assert pick_master_addr([A, B], [R("node01"), R("node02")], "ib0") == "10.10.0.11"
    assert pick_master_addr([A], [LocalRemote()], None) == "127.0.0.1"


def test_records_are_json_lines_with_a_type_and_noise_is_ignored():
    text = '\n{"type": "rank", "rank": 0}\nNCCL INFO hello\n{"no_type": 1}\n{bad json\n'
    assert rr.parse_text(text) == [rr.Joined(0, {"type": "rank", "rank": 0})]


def test_a_rank_killed_on_one_host_is_named_over_the_timeouts_it_caused_elsewhere():
    a, b = LocalRemote("node01"), LocalRemote("node02")
    killed = RunResult("node02", "", 3, stdout='{"type": "exit", "rank": 1, "local_rank": 0, '
                       '"code": -9, "time": 5.0, "stopped": false}\n')
    waited = RunResult("node01", "", 3, stdout='{"type": "rank", "rank": 0}\n{"type": "timeout",'
                       ' "rank": 0, "phase": "warmup", "bytes": 1024, "seconds": 5}\n'
                       '{"type": "exit", "rank": 0, "code": 3, "time": 5.1, "stopped": false}\n')
    rep = _analyse(Report(hosts=["node01", "node02"], world_size=2), [a, b], [waited, killed],
                   [1, 1], ["node01"])
    assert rep.failure.kind == "rank_lost"
    assert rep.failure.host == "node02" and rep.failure.rank == 1
    assert "killed by signal 9" in rep.failure.message
    assert "never joined: 1 (node02)" in rep.failure.message


def test_a_rendezvous_timeout_names_the_ranks_that_never_joined():
    a, b = LocalRemote("node01"), LocalRemote("node02")
    waited = RunResult("node01", "", 3, stdout='{"type": "timeout", "rank": 0, "phase": '
                       '"rendezvous", "seconds": 5}\n{"type": "exit", "rank": 0, "code": 3, "time": 5.1, "stopped": false}\n')
    lost = RunResult("node02", "", None, error="timed out after 40 s")
    rep = _analyse(Report(hosts=["node01", "node02"], world_size=3), [a, b], [waited, lost],
                   [1, 2], ["node01"])
    assert rep.failure.kind == "rendezvous"
    assert "rank 0 on node01: rendezvous did not finish in 5 s" in rep.failure.message
    assert "1 (node02), 2 (node02)" in rep.failure.message
    assert rep.failure.suspects == ["node02"]


def test_a_bridge_with_the_same_address_on_every_node_is_not_mistaken_for_the_network():
    x = node("node01", br0=["172.20.0.1/16"], eth1=["10.1.0.1/24"])
    y = node("node02", br0=["172.20.0.1/16"], eth1=["10.1.0.2/24"])
    assert suggest_ifname([x, y]) == "eth1"


def test_a_rank_that_hangs_mid_run_is_named_as_the_one_that_never_timed_out_itself():
    a, b = LocalRemote("node01"), LocalRemote("node02")
    waited = RunResult("node01", "", 3, stdout='{"type": "rank", "rank": 0}\n{"type": "timeout",'
                       ' "rank": 0, "phase": "warmup", "bytes": 1024, "seconds": 5}\n'
                       '{"type": "exit", "rank": 0, "code": 3, "time": 5.1, "stopped": false}\n')
    hung = RunResult("node02", "", 3, stdout='{"type": "rank", "rank": 1}\n{"type": "launcher",'
                     ' "status": "stopped", "why": "signal 15"}\n')
    rep = _analyse(Report(hosts=["node01", "node02"], world_size=2), [a, b], [waited, hung],
                   [1, 1], ["node01"])
    assert rep.failure.kind == "timeout"
    assert "rank 0 on node01: warmup at 1KB did not finish in 5 s" in rep.failure.message
    assert "(stuck or too slow): 1 (node02)" in rep.failure.message
    assert rep.failure.host == "node01" and rep.failure.suspects == ["node02"]


def test_every_nccl_test_option_is_documented():
    import typer.main

    from envcheck.cli import app
    from tests.conftest import REPO
    doc = (REPO / "docs" / "nccl-test.md").read_text()
    command = typer.main.get_command(app).commands["nccl-test"]
    opts = [o for p in command.params for o in p.opts if o.startswith("--") and o != "--help"]
    assert len(opts) > 20, "too few options found: the test would prove little"
    missing = [o for o in opts if "`%s" % o not in doc]
    assert not missing, "document these in docs/nccl-test.md: %s" % missing
