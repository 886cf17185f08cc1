"""What a run's records add up to (envcheck/allreduce/run.py): options refused before any node,
the launchers' output read into rows, ranks, logs and the first cause. No ranks started: the
records are those the node launcher and worker print (envcheck/node/rank_protocol.py). The run
directory and the kill command moved with the launcher's start and stop: tests/ranks/test_start.py."""
import json

import pytest

from envcheck.allreduce import run as ar
from envcheck.allreduce.pairs import pair_spec
from envcheck.errors import UsageError
from envcheck.ranks.failure import Failure
from envcheck.ranks.plan import RankPlan
from envcheck.remote import Remote, RunResult


class Named(Remote):
    def __init__(self, name):
        self.name = name


def out(*recs):
    return "noise\n" + "\n".join(json.dumps(r) for r in recs) + "\n"


def test_options_no_node_needs_to_see_are_refused_first():
    assert ar.check_options(ar.Options(min_bytes=8, max_bytes=64, factor=2, dtype="float32")) == [8, 16, 32, 64]
    with pytest.raises(UsageError) as e:
        ar.check_options(ar.Options(backend="mpi"))
    assert (e.value.message, e.value.fix) == ("--backend 'mpi' is not one of nccl, gloo, auto",
                                              "use --backend auto (nccl on GPU nodes, gloo otherwise)")
    with pytest.raises(UsageError) as e:
        ar.check_options(ar.Options(min_bytes=1, max_bytes=3, factor=2, dtype="float64"))
    assert e.value.message == "no message size between --min-bytes 1 and --max-bytes 3 holds one float64"


def test_a_clean_run_is_read_into_rows_ranks_and_summary():
    rep = ar.Report(hosts=["n1", "n2"], world_size=2, dtype="float32")
    results = [RunResult("n1", "", 0, out({"type": "rank", "rank": 1, "pid": 7},
                                          {"type": "result", "bytes": 64, "time_us": 10.0, "wrong": 0},
                                          {"type": "result", "bytes": 32, "time_us": 5.0, "wrong": 2}),
                         stderr="log1"),
               RunResult("n2", "", 0, out({"type": "rank", "rank": 0, "pid": 8}), stderr="log2")]
    rep = ar._analyse(rep, [Named("n1"), Named("n2")], results, [1, 1], [])
    assert rep.failure is None and rep.wrong == 2
    assert [r["rank"] for r in rep.ranks] == [0, 1] and rep.ranks[0]["node"] == "n2"
    assert [(r["bytes"], r["count"], r["wrong"]) for r in rep.rows] == [(32, 8, 2), (64, 16, 0)]
    assert rep.summary["largest_bytes"] == 64 and rep.summary["busbw"] == pytest.approx(64 / 10e-6 / 1e9)
    assert rep.host_status == {"n1": "ok", "n2": "ok"} and rep.logs == {"n1": "log1", "n2": "log2"}


def test_a_run_every_launcher_called_clean_but_a_rank_never_reported_is_no_success():
    rep = ar.Report(hosts=["n1"], world_size=2)
    rep = ar._analyse(rep, [Named("n1")], [RunResult("n1", "", 0, out({"type": "rank", "rank": 0}))], [2], [])
    assert rep.failure == Failure(kind="missing_rank", rank=1, host="n1", message="rank 1 on n1 never reported",
                                  fix="")


def test_a_failed_host_gets_its_cause_status_and_log_tail():
    rep = ar.Report(hosts=["n1", "n2"], world_size=2)
    results = [RunResult("n1", "", 0, out({"type": "rank", "rank": 0})),
               RunResult("n2", "", 1, out({"type": "exit", "rank": 1, "local_rank": 0, "code": -9, "time": 3.5,
                                           "stopped": False}),
                         stderr="\n".join(f"e{i}" for i in range(70)))]
    rep = ar._analyse(rep, [Named("n1"), Named("n2")], results, [1, 1], ["n2"])
    assert (rep.failure.kind, rep.failure.host, rep.failure.rank) == ("rank_lost", "n2", 1)
    assert rep.host_status == {"n1": "ok", "n2": "exit 1"}
    assert rep.logs["n2"].splitlines() == [f"e{i}" for i in range(10, 70)]
    lost = ar._analyse(ar.Report(hosts=["n1"], world_size=1), [Named("n1")],
                       [RunResult("n1", "", None, error="timed out after 30 s")], [1], [])
    assert lost.host_status == {"n1": "timed out after 30 s"} and lost.failure.kind == "host"


def test_ranks_on_a_later_host_are_placed_after_the_earlier_hosts_ranks():
    # host i's ranks start at the sum of the ranks before it: rank 2 runs on n2 when n1 runs two
    rep = ar.Report(hosts=["n1", "n2"], world_size=3)
    results = [RunResult("n1", "", 0, out({"type": "rank", "rank": 0}, {"type": "rank", "rank": 1})),
               RunResult("n2", "", 0, out())]
    rep = ar._analyse(rep, [Named("n1"), Named("n2")], results, [2, 1], [])
    assert rep.failure == Failure("missing_rank", "rank 2 on n2 never reported", "n2", 2)


# the launcher's and worker's arguments (allreduce_launcher.py's usage: launch --dir D --nproc N
# --rank-base B [--deadline S] -- WORKER ARGS), the ranks' environment, and the report's own fields
def test_the_launcher_gets_its_ranks_then_the_workers_options():
    opts = ar.Options(min_bytes=8, max_bytes=1 << 20, factor=4, dtype="bfloat16", warmup=2, iters=7, timeout=30.0,
                      rendezvous_timeout=45.0, run_timeout=600.0)
    head = ["--nproc", 3, "--rank-base", 5, "--deadline", 600.0, "--run-id", "envcheck-ar-abc", "--"]
    worker = ["--backend", "gloo", "--min-bytes", 8, "--max-bytes", 1 << 20, "--factor", 4, "--dtype", "bfloat16",
              "--warmup", 2, "--iters", 7, "--timeout", 30.0, "--rendezvous-timeout", 45.0, "--run-id", "envcheck-ar-abc"]
    assert ar.launcher_args(opts, "gloo", 3, 5, "envcheck-ar-abc") == head + worker
    # --pairs: the spec the run directory holds; without the sweep, and a time budget per size
    opts.pairs, opts.sweep, opts.budget = pair_spec(1 << 20), False, 2.5
    assert ar.launcher_args(opts, "gloo", 3, 5, "envcheck-ar-abc") == head + worker + [
        "--pairs", "pairs.json", "--no-sweep", "--budget", 2.5]
    opts.sweep = True
    assert ar.launcher_args(opts, "gloo", 3, 5, "envcheck-ar-abc") == head + worker + [
        "--pairs", "pairs.json", "--budget", 2.5]


def test_every_rank_gets_the_rendezvous_nccl_debug_and_the_test_switch(monkeypatch):
    plan = RankPlan(["n1", "n2"], [2, 1], "eth0", "10.0.0.1", 29500)
    monkeypatch.setenv("ENVCHECK_TEST_PERTURB_RANK", "1")
    assert ar._rank_env(plan, ar.Options(nccl_debug="WARN")) == {
        "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "WORLD_SIZE": "3", "NCCL_SOCKET_IFNAME": "eth0",
        "GLOO_SOCKET_IFNAME": "eth0", "NCCL_DEBUG": "WARN", "ENVCHECK_TEST_PERTURB_RANK": "1"}
    monkeypatch.delenv("ENVCHECK_TEST_PERTURB_RANK")
    assert ar._rank_env(plan, ar.Options(nccl_debug="")) == {
        "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500", "WORLD_SIZE": "3", "NCCL_SOCKET_IFNAME": "eth0",
        "GLOO_SOCKET_IFNAME": "eth0"}


def test_no_hosts_or_a_bad_option_is_refused_before_any_node_is_asked():
    with pytest.raises(UsageError) as e:
        ar.run_allreduce([], ar.Options())
    assert (e.value.message, e.value.fix) == ("no hosts to test", "name hosts, or none for this machine")
    with pytest.raises(UsageError) as e:      # Named has no transport: reaching a node would raise otherwise
        ar.run_allreduce([Named("n1")], ar.Options(backend="mpi"))
    assert e.value.message == "--backend 'mpi' is not one of nccl, gloo, auto"


def test_the_node_files_a_run_ships():
    from envcheck.ranks.start import NODE_DIR
    names = ["allreduce_launcher.py", "rank_supervisor.py", "rank_protocol.py", "allreduce_worker.py",
             "allreduce_pairs.py"]
    assert ar.node_sources() == {n: (NODE_DIR / n).read_text() for n in names}


def test_the_reports_wrong_count_and_dict():
    assert ar.Report(hosts=["n1"], summary={"wrong": None}).wrong == 0
    assert ar.Report(hosts=["n1"], summary={"wrong": 3}).wrong == 3
    d = ar.Report(hosts=["n1"], failure=Failure("host", "n1: lost", "n1")).to_dict()
    assert d["failure"] == Failure("host", "n1: lost", "n1").to_dict() and d["hosts"] == ["n1"]
    assert ar.Report(hosts=["n1"]).to_dict()["failure"] is None


def test_rows_in_the_runs_dtype_pairs_from_every_host_and_the_share_of_what_the_links_allow():
    rep = ar.Report(hosts=["n1", "n2"], world_size=2, dtype="bfloat16", backend="gloo",
                    links={"n1": {"gbps": 1.25, "source": "eth0 10 Gb/s"}, "n2": {"gbps": 12.5, "source": "eth0 100 Gb/s"}})
    pair1, pair2 = {"type": "pair", "round": 0, "ranks": [0, 1]}, {"type": "pair", "round": 1, "ranks": [1, 0]}
    results = [RunResult("n1", "", 0, out({"type": "rank", "rank": 0}, pair1,
                                          {"type": "result", "bytes": 1 << 20, "time_us": 1000.0, "wrong": 0})),
               RunResult("n2", "", 0, out({"type": "rank", "rank": 1}, pair2))]
    rep = ar._analyse(rep, [Named("n1"), Named("n2")], results, [1, 1], [])
    assert rep.failure is None and rep.pairs == [pair1, pair2]
    # nccl-tests' figures for 2 ranks: busbw = algbw = bytes / time
    assert rep.rows == [{"bytes": 1 << 20, "count": 1 << 19, "type": "bfloat16", "time_us": 1000.0,
                         "algbw": pytest.approx(1.048576), "busbw": pytest.approx(1.048576), "wrong": 0}]
    # the slowest node's link, one rank each: n1's 1.25 GB/s
    assert (rep.summary["allowed_gbps"], rep.summary["allowed_by"]) == (1.25, "eth0 10 Gb/s, eth0 100 Gb/s")
    assert rep.summary["percent_of_allowed"] == pytest.approx(100 * 1.048576 / 1.25)
    # on one host NCCL's ranks talk over NVLink: its figure (what allowed() reads for nccl only)
    one = ar.Report(hosts=["n1"], world_size=1, backend="nccl",
                    nvlinks={"n1": {"gpu": "H100", "gpus": 8, "generation": 4, "links": 18, "links_max": 18,
                                    "per_link_gbps": 25.0, "source": "https://www.nvidia.com/", "gbps": 450.0}})
    one = ar._analyse(one, [Named("n1")], [RunResult("n1", "", 0, out({"type": "rank", "rank": 0}))], [1], [])
    assert one.summary["allowed_gbps"] == 450.0


def test_a_rank_that_failed_mid_run_had_joined_one_that_failed_to_start_had_not():
    def run(phase, message):
        rep = ar.Report(hosts=["n1", "n2"], world_size=2)
        results = [RunResult("n1", "", 0, out({"type": "rank", "rank": 0})),
                   RunResult("n2", "", 1, out({"type": "error", "rank": 1, "phase": phase, "message": message}))]
        return ar._analyse(rep, [Named("n1"), Named("n2")], results, [1, 1], ["n2"]).failure
    # rank 1 joined: it is no "never joined"; rank 0, which never reported an error itself, is the suspect
    assert run("warmup", "Connection reset by peer") == Failure(
        "collective_error", "rank 1 on n2: warmup failed: Connection reset by peer; rank(s) that never reported "
        "a timeout themselves (stuck or too slow): 0 (n1)", "n2", 1,
        "a peer rank died, hung or cannot reach the others: check --ifname and the firewall between the nodes; "
        "see the logs", ["n1"])
    assert run("setup", "No module named 'torch'") == Failure(
        "setup", "rank 1 on n2 could not start: No module named 'torch'; ranks that never joined: 1 (n2)", "n2", 1,
        "see the log below; torch must import under --node-python")


def test_each_backend_is_taken_and_a_size_refusal_says_how_to_fix_it():
    for backend in ("auto", "nccl", "gloo"):
        assert ar.check_options(ar.Options(backend=backend, min_bytes=8, max_bytes=8)) == [8]
    with pytest.raises(UsageError) as e:
        ar.check_options(ar.Options(min_bytes=1, max_bytes=3, factor=2, dtype="float64"))
    assert e.value.fix == "raise --max-bytes to at least the size of one element"
