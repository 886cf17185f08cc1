"""The nccl-test report as text (envcheck/allreduce/render.py), whole: the header, the rank
table, nccl-tests' columns (size, count, type, time, algbw, busbw, #wrong), the summary and a
failure with what to look at. Written from nccl-tests' output format, not from a run."""
from envcheck.allreduce.bandwidth import make_row, summarize
from envcheck.allreduce.render import render_text
from envcheck.allreduce.run import Report
from envcheck.model import Outcome
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


# --pairs' table (render_pairs), written from docs/nccl-test.md's example: a row per pair and
# rail (its best try; a stopped pair shows its first size and figure), the pairs a call names
# marked FAIL or WARN, then what they were compared with, each call, and the summary line
from envcheck.allreduce.pairs import FAR_BELOW, SLOW_BUT_CLOSE, Call, PairFigure, PairVerdict  # noqa: E402
from envcheck.allreduce.render import pairs_outcome, render_pairs  # noqa: E402

PAIR_HEAD = [
    "#",
    "# Pairs: disjoint node pairs all-reducing at the same time, one group per rail (best of its tries)",
    "# round rail  pair                          size       time    algbw    busbw  %link #wrong",
    "#                                            (B)       (us)   (GB/s)   (GB/s)" + " " * 14]


def pair(hosts, rnd, rail=0, *, busbw=0.094, stopped=False, first=0.09, allowed=1.34, wrong=0, attempt=0,
         time_us=44783.1):
    return PairFigure(hosts, rail, rnd, attempt, 4 << 20, time_us, busbw, busbw, 256 << 10, first, 50.0, 20,
                      stopped, wrong, allowed)


def test_the_pair_table_marks_the_slow_node_and_says_why():
    ok = pair(("node01", "node02"), 0)
    stopped = [pair(("node05", "node06"), 0, busbw=0.0, stopped=True, first=0.00466),
               pair(("node04", "node05"), 1, busbw=0.0, stopped=True, first=0.00466)]
    v = PairVerdict(figures=[ok, *stopped], best=[stopped[1], ok, stopped[0]], median=0.0938, pairs=8,
                    calls=[Call("node", ["node05"], 0, FAR_BELOW, stopped)])
    rep = Report(hosts=[f"node0{i}" for i in range(1, 7)])
    assert render_pairs(rep, v).splitlines() == PAIR_HEAD + [
        "      0    0  node01-node02                   4M    44783.1    0.094    0.094     7%      0",
        "      0    0  node05-node06                 256K    stopped    0.005    0.005     0%      0  FAIL node05",
        "      1    0  node04-node05                 256K    stopped    0.005    0.005     0%      0  FAIL node05",
        "#",
        "# Compared with the median 0.0938 GB/s of 8 pairs",
        "# FAIL slow node: every pair with it is far below the median: 0.00466 GB/s with node06 (stopped early), "
        "0.00466 GB/s with node04 (stopped early), against the median 0.0938 GB/s of 8 pairs; 0.35% of the "
        "1.34 GB/s the link allows",
        "# FAIL: 6 hosts, pair rounds"]
    assert pairs_outcome(rep, v) == Outcome(1, 0, 0, 0)


def test_a_link_only_warned_about_on_its_own_rail_after_two_tries():
    first = pair(("n1", "n2"), 0, 1, busbw=0.03, allowed=None)
    again = pair(("n1", "n2"), 0, 1, busbw=0.04, allowed=None, attempt=1, time_us=5.0)
    other = pair(("n1", "n2"), 0, 0, busbw=0.1, allowed=None, wrong=2)     # the same hosts, rail 0
    v = PairVerdict(figures=[first, again, other], best=[again, other], median=0.1, pairs=4,
                    calls=[Call("link", ["n1", "n2"], 1, SLOW_BUT_CLOSE, [again])])
    rep = Report(hosts=["n1", "n2", "n3", "n4"])
    assert render_pairs(rep, v).splitlines() == PAIR_HEAD + [
        "      0    0  n1-n2" + " " * 27 + "4M    44783.1    0.100    0.100      -      2",
        "      0    1  n1-n2" + " " * 27 + "4M        5.0    0.040    0.040      -      0  WARN link",
        "#",
        "# Compared with the median 0.1 GB/s of 4 pairs",
        "# WARN link n1-n2 (rail 1): slow but close, 0.04 GB/s with n2 (both ends are fine with their other "
        "partner), against the median 0.1 GB/s of 4 pairs, best of 2 tries",
        "# WARN: 4 hosts, pair rounds"]
    assert pairs_outcome(rep, v) == Outcome(0, 1, 0, 0)


def test_pairs_that_name_nothing_but_a_run_that_failed_are_unknown():
    v = PairVerdict(figures=[pair(("n1", "n2"), 0)], best=[pair(("n1", "n2"), 0)], median=0.094, pairs=1)
    rep = Report(hosts=["n1", "n2"], failure=Failure("timeout", "rank 3 on n2: round 1 did not finish in 60 s"))
    assert render_pairs(rep, v).splitlines()[-3:] == [
        "#", "# Compared with the median 0.094 GB/s of 1 pairs: no node or link stands out",
        "# UNKNOWN: 2 hosts, pair rounds; rank 3 on n2: round 1 did not finish in 60 s"]
    assert pairs_outcome(rep, v) == Outcome(0, 0, 0, 1)
    assert render_pairs(Report(hosts=["n1"]), v).splitlines()[-1] == "# PASS: 1 host, pair rounds"


# the summary's other lines (allowed_lines) and the NVLink note (nvlink_lines), in render_text
def test_what_the_link_allows_and_where_the_sweep_stops_rising():
    s = {"largest_bytes": 256 << 20, "busbw": 21.9, "algbw": 11.0, "avg_busbw": 9.0, "wrong": 0,
         "percent_of_allowed": 87.4, "allowed_gbps": 25.0, "allowed_by": "eth0 at 200 Gbit/s",
         "plateau_bytes": 1 << 20, "still_rising": False}
    rep = Report(hosts=["n1", "n2"], backend="nccl", world_size=16, rows=[make_row(256 << 20, 4, "float32", 0.0229, 16, 0)],
                 summary=s, nvlinks={"n1": {"gpus": 8, "gpu": "H100", "generation": 4, "links": 18, "links_max": 18,
                                            "gbps": 450.0},
                                     "n2": {"gpus": 8, "gpu": "H100", "generation": 4, "links": 18, "links_max": 18,
                                            "gbps": 450.0}, "n3": None})
    text = render_text(rep, summarize=False).splitlines()
    assert text[1] == "# nvlink: n[1-2]: 8x H100, NVLink 4, 18 of 18 links up: 450 GB/s per GPU and direction"
    assert text[-3:] == [
        "# That is 87% of the 25 GB/s that eth0 at 200 Gbit/s allows one rank, at 256MB",
        "# busbw is within 10% of its best from 1MB: smaller sizes measure latency more than the link",
        "# Wrong elements: 0 OK"]
    s.update(percent_of_allowed=0.0, allowed_gbps=0.125, allowed_by="eth0 at 1 Gbit/s", still_rising=True)
    assert render_text(rep, summarize=False).splitlines()[-3:] == [
        "# That is 0% of the 0.125 GB/s that eth0 at 1 Gbit/s allows one rank, at 256MB",
        "# busbw is still rising at 256MB: the link allows more than this measures; raise --max-bytes to reach the plateau",
        "# Wrong elements: 0 OK"]
    s.update(percent_of_allowed=None, still_rising=None, plateau_bytes=None)
    assert render_text(rep, summarize=False).splitlines()[-2:] == [
        "# Bus bandwidth at the largest size (256MB): 21.900 GB/s (algbw 11.000 GB/s; nccl-tests' average over the "
        "sweep would say 9.000)", "# Wrong elements: 0 OK"]


# --plot (matplotlib, an optional extra): busbw against the message size on a log2 axis, 7 x 4
# inches, in the format the file name says (png without one); refused before any run when
# matplotlib is missing or cannot write that format
def test_plot_draws_busbw_against_size_in_the_named_format(tmp_path):
    import re
    pytest = __import__("pytest")
    pytest.importorskip("matplotlib")
    from envcheck.allreduce.render import plot
    rows = [make_row(1024, 4, "float32", 1e-4, 2, 0), make_row(1 << 20, 4, "float32", 1e-3, 2, 0)]
    rep = Report(hosts=["n1"], backend="gloo", world_size=2, rows=rows)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # nothing on the user's stderr (a grid told False, say)
        plot(rep, str(tmp_path / "a.SVG"))
    svg = (tmp_path / "a.SVG").read_text()
    assert svg.startswith("<?xml") and 'width="504pt" height="288pt"' in svg
    texts = re.findall(r"<!-- (.*?) -->", svg)          # matplotlib's SVG names each text it draws
    assert "all_reduce, 2 ranks on 1 host(s), gloo" in texts
    assert "message size (bytes)" in texts and "busbw (GB/s)" in texts
    assert [t for t in texts if "2^" in t] == [f"$\\mathdefault{{2^{{{e}}}}}$" for e in range(10, 21, 2)]
    assert "stroke-opacity: 0.3" in svg                 # the grid, faint
    assert len(re.findall(r'<use xlink:href="#\w+" x="[\d.]+" y="[\d.]+" style="fill: #1f77b4', svg)) == 2  # a marker per size
    plot(rep, str(tmp_path / "plot"))
    assert (tmp_path / "plot").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from envcheck.errors import OutputError
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(OutputError) as e:              # written as every report is, named as --plot's
        plot(rep, str(tmp_path / "dir.png"))
    assert (e.value.message, e.value.fix) == (f"--plot {str(tmp_path / 'dir.png')!r} is a directory now; not writing to it",
                                              "name a file")


def test_plot_formats_are_checked_before_the_run(monkeypatch):
    import sys

    import pytest

    from envcheck.allreduce.render import require_matplotlib
    from envcheck.errors import UsageError
    mpl = pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    known = sorted(FigureCanvasAgg(Figure()).get_supported_filetypes())
    assert require_matplotlib("out.PNG") is mpl and require_matplotlib("out") is mpl and require_matplotlib() is mpl
    with pytest.raises(UsageError) as e:
        require_matplotlib("dir.svg/out.bmp")
    assert (e.value.message, e.value.fix) == ("--plot dir.svg/out.bmp: matplotlib cannot write .bmp images",
                                              "name a file ending in one of ." + ", .".join(known))
    with pytest.raises(UsageError) as e:                   # the extension as written, lower-cased
        require_matplotlib("out.XCF")
    assert e.value.message == "--plot out.XCF: matplotlib cannot write .xcf images"
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # as if not installed
    for path in (None, "out.png"):
        with pytest.raises(UsageError) as e:
            require_matplotlib(path)
        assert (e.value.message, e.value.fix) == ("--plot needs matplotlib, which is not installed",
                                                  "pip install 'envcheck[plot]' (or pip install matplotlib)")


def test_a_rank_table_and_rows_with_what_the_records_left_out_and_a_verdict_given():
    from envcheck.allreduce.verdict import SLOW, Verdict
    rows = [make_row(64, 1, "int8", 1e-5, 2, 0)]                     # a type nccl-tests has no name for: as given
    rep = Report(hosts=["n1", "n2"], world_size=2, rows=rows, summary=summarize(rows),
                 ranks=[{"rank": 0}], failure=Failure("timeout", "rank 0 on n1: warmup did not finish",
                                                       suspects=["n2", "n3"]))
    text = render_text(rep, Verdict(SLOW, "busbw 0.0064 GB/s below --min-busbw 1 GB/s", 0.0064)).splitlines()
    assert text[2:4] == ["#  rank  host                 local_rank       pid  device",
                         "#     0  ?                             ?            ?"]
    assert "            64            64      int8       10.0     0.01     0.01       0" in text
    assert text[-2:] == ["#   look at: n2, n3",
                         "# FAIL: 2 hosts, 2 ranks; busbw 0.0064 GB/s below --min-busbw 1 GB/s"]


def test_a_pair_two_calls_name_is_marked_with_both():
    f = pair(("n1", "n2"), 0)
    v = PairVerdict(figures=[f], best=[f], median=0.2, pairs=4,
                    calls=[Call("node", ["n1"], 0, FAR_BELOW, [f]), Call("link", ["n1", "n2"], 0, SLOW_BUT_CLOSE, [f])])
    assert render_pairs(Report(hosts=["n1", "n2"]), v).splitlines()[4].endswith("      0  FAIL n1, link")
