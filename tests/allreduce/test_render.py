"""The nccl-test report as text (envcheck/allreduce/render.py), whole: the header, the rank
table, nccl-tests' columns (size, count, type, time, algbw, busbw, #wrong), the summary and a
failure with what to look at. Written from nccl-tests' output format, not from a run."""
from envcheck.allreduce.bandwidth import make_row, summarize
from envcheck.allreduce.render import render_text
from envcheck.allreduce.run import Report
from envcheck.ranks.failure import Failure


def test_a_passing_run_reads_like_nccl_tests():
    rows = [make_row(1024, 4, "float32", 100e-6, 2, 0), make_row(1048576, 4, "float32", 1e-3, 2, None)]
    rep = Report(hosts=["node01", "node02"], backend="gloo", world_size=2, master_addr="10.0.0.1",
                 master_port=29500, ifname="eth0", rows=rows, summary=summarize(rows),
                 notes=["one rank per host"],
                 ranks=[{"rank": 0, "node": "node01", "local_rank": 0, "pid": 11, "device": "cpu"},
                        {"rank": 1, "host": "node02", "local_rank": 0, "pid": 12}])
    assert render_text(rep).splitlines() == [
        "# envcheck nccl-test: all_reduce sum, 2 rank(s) on 2 host(s), backend gloo, MASTER 10.0.0.1:29500, ifname eth0",
        "# note: one rank per host",
        "#",
        "#  rank  host                 local_rank       pid  device",
        "#     0  node01                        0        11  cpu",
        "#     1  node02                        0        12  ?",
        "#",
        "#         size         count      type       time    algbw    busbw  #wrong",
        "#          (B)    (elements)                 (us)   (GB/s)   (GB/s)        ",
        "          1024           256     float      100.0     0.01     0.01       0",
        "       1048576        262144     float     1000.0     1.05     1.05     N/A",
        "#",
        "# Bus bandwidth at the largest size (1MB): 1.049 GB/s (algbw 1.049 GB/s; nccl-tests' average over the "
        "sweep would say 0.529)",
        "# busbw is still rising at 1MB: the link allows more than this measures; raise --max-bytes to reach the plateau",
        "# Wrong elements: 0 OK",
        "# PASS: 2 hosts, 2 ranks; busbw 1.05 GB/s at the largest size, 0 wrong",   # the summary line, last
    ]


def test_one_rank_corruption_and_a_failure_with_its_hosts_and_logs():
    rows = [make_row(64, 2, "bfloat16", 1e-5, 1, 3)]
    rep = Report(hosts=["n1", "n2"], world_size=1, rows=rows, summary=summarize(rows),
                 failure=Failure("timeout", "rank 0 on n1: collective did not finish", suspects=["n2"],
                                 fix="check --ifname"),
                 preflight_errors=[{"message": "first"}, {"message": "port 29500 busy on n2"}],
                 host_status={"n1": "ok", "n2": "exit 3"},
                 logs={"n1": "fine", "n2": "\n".join(f"l{i}" for i in range(25)), "n3": "  "})
    text = render_text(rep).splitlines()
    assert text[0] == "# envcheck nccl-test: all_reduce sum, 1 rank(s) on 2 host(s), backend -, MASTER -"
    assert "            64            32  bfloat16       10.0     0.01     0.00       3" in text
    i = text.index("# One rank: nothing crosses a bus, busbw is 0 by definition; a single GPU cannot show "
                   "multi-GPU bandwidth.")
    assert text[i + 1:] == [
        "# Wrong elements: 3  DATA CORRUPTION: the all-reduce returned wrong sums",
        "# FAILED (timeout): rank 0 on n1: collective did not finish",
        "#   look at: n2",
        "#   fix: check --ifname",
        "#   also: port 29500 busy on n2",
        "#   n1: ok",
        "#   n2: exit 3",
        "# --- n2: log tail ---",
        *[f"l{i}" for i in range(5, 25)],
        "# UNKNOWN: 2 hosts, 1 rank; rank 0 on n1: collective did not finish"]


def test_a_failure_without_rows_suspects_or_fix():
    rep = Report(hosts=["n1"], backend="nccl", world_size=2, failure=Failure("setup", "no torch"))
    assert render_text(rep).splitlines() == [
        "# envcheck nccl-test: all_reduce sum, 2 rank(s) on 1 host(s), backend nccl, MASTER -",
        "# FAILED (setup): no torch",
        "# UNKNOWN: 1 host, 2 ranks; no torch"]


def test_plot_needs_matplotlib_or_says_how_to_get_it():
    import pytest

    from envcheck.allreduce.render import require_matplotlib
    from envcheck.errors import UsageError
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        with pytest.raises(UsageError) as e:
            require_matplotlib()
        assert e.value.fix == "pip install 'envcheck[plot]' (or pip install matplotlib)"
    else:
        assert require_matplotlib() is matplotlib
