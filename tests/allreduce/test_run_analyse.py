"""What a run's records add up to (envcheck/allreduce/run.py): options refused before any node,
the launchers' output read into rows, ranks, logs and the first cause. No ranks started: the
records are those the node launcher and worker print (envcheck/node/rank_protocol.py). The run
directory and the kill command moved with the launcher's start and stop: tests/ranks/test_start.py."""
import json

import pytest

from envcheck.allreduce import run as ar
from envcheck.errors import UsageError
from envcheck.ranks.failure import Failure
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
