import pytest

from envcheck.allreduce.bandwidth import (algbw, busbw, busbw_factor, human_size, make_row, parse_size,
                                     summarize, sweep_sizes)
from envcheck.errors import UsageError


def test_sizes_use_binary_units_like_nccl_tests():
    assert parse_size("8") == 8
    assert parse_size("64K") == 65536
    assert parse_size("256M") == 268435456
    assert parse_size("1G") == 1073741824
    assert parse_size("4MiB") == 4 * 1048576


def test_a_size_that_is_not_a_byte_count_is_a_usage_error():
    with pytest.raises(UsageError, match="'lots'"):
        parse_size("lots")


def test_sweep_doubles_from_min_to_max_in_whole_elements():
    assert sweep_sizes(8, 128, 2, 4) == [8, 16, 32, 64, 128]
    # 2 bytes cannot hold a float32: dropped; 6 rounds down to one element
    assert sweep_sizes(2, 8, 3, 4) == [4]
    assert sweep_sizes(8, 256 * 1024 ** 2, 2, 4)[-1] == 268435456
    assert len(sweep_sizes(8, 256 * 1024 ** 2, 2, 4)) == 26


def test_a_factor_below_two_is_refused_rather_than_looping_forever():
    with pytest.raises(UsageError):
        sweep_sizes(8, 64, 1, 4)


def test_algbw_is_bytes_over_seconds_in_decimal_gigabytes():
    # 1 GiB in 0.1 s: 1073741824 / 0.1 / 1e9 = 10.73741824 GB/s
    assert algbw(1073741824, 0.1) == pytest.approx(10.73741824)


def test_busbw_applies_two_n_minus_one_over_n():
    # by hand: n=8 -> 2*7/8 = 1.75; n=2 -> 1; n=1 -> 0 (no bus); n=3 -> 4/3
    assert busbw_factor(8) == 1.75
    assert busbw_factor(2) == 1.0
    assert busbw_factor(1) == 0.0
    assert busbw_factor(3) == pytest.approx(4 / 3)
    # nccl-tests-style line: 268435456 B in 1423.3 us on 16 ranks:
    # algbw = 268435456 / 1423.3e-6 / 1e9 = 188.6008...; busbw = algbw * 30/16 = 353.6265...
    assert algbw(268435456, 1423.3e-6) == pytest.approx(188.6007, abs=1e-3)
    assert busbw(268435456, 1423.3e-6, 16) == pytest.approx(353.6264, abs=1e-3)


def test_row_and_summary_report_busbw_at_the_largest_size_not_the_average():
    rows = [make_row(1024, 4, "float32", 100e-6, 2, 0),      # algbw 0.01024
            make_row(1048576, 4, "float32", 1e-3, 2, 0)]     # algbw 1.048576
    assert rows[0]["count"] == 256 and rows[0]["time_us"] == pytest.approx(100)
    s = summarize(rows)
    assert s["largest_bytes"] == 1048576
    assert s["busbw"] == pytest.approx(1.048576)
    assert s["avg_busbw"] == pytest.approx((0.01024 + 1.048576) / 2)
    assert s["wrong"] == 0
    rows.append(make_row(64, 4, "float32", 1e-5, 2, 7))
    assert summarize(rows)["wrong"] == 7


def test_human_sizes_read_like_the_arguments():
    assert human_size(268435456) == "256M"
    assert human_size(65536) == "64K"
    assert human_size(12) == "12"


# the edges (a mutation check found them unpinned): the size cap, units in any case, the
# messages, zero time, a sweep that starts below one element, and dtype sizes
def test_size_forms_and_the_cap():
    from envcheck.allreduce.bandwidth import MAX_BYTES
    assert MAX_BYTES == 256 * 1024 ** 3
    assert [parse_size(x) for x in (" 2k ", "3g", "5mb", "7KiB", "256G")] == [2048, 3 * 1024 ** 3, 5 * 1048576,
                                                                             7168, MAX_BYTES]
    with pytest.raises(UsageError) as e:
        parse_size("257G")
    assert (e.value.message, e.value.fix) == ("size '257G' is above 256G, more than any GPU holds",
                                              "write it as 8, 64K, 256M or 1G")
    for bad in ("", "1T", "-8", "1.5M", "8 K B", "1" * 16):
        with pytest.raises(UsageError) as e:
            parse_size(bad)
        assert e.value.message == f"size {bad!r} is not a byte count"
        assert e.value.fix == "write it as 8, 64K, 256M or 1G"


def test_dtype_sizes():
    from envcheck.allreduce.bandwidth import dtype_size
    assert [dtype_size(d) for d in ("float32", "float", "float16", "half", "bfloat16", "float64", "double",
                                    "int32", "int")] == [4, 4, 2, 2, 2, 8, 8, 4, 4]
    with pytest.raises(UsageError) as e:
        dtype_size("int8")
    assert e.value.message == "dtype 'int8' is not supported"
    assert e.value.fix == "use one of bfloat16, double, float, float16, float32, float64, half, int, int32"


def test_sweep_edges():
    assert sweep_sizes(0, 16, 2, 4) == [4, 8, 16]          # starts at 1 byte, not 0 (no endless loop)
    assert sweep_sizes(4, 4, 2, 4) == [4]
    assert sweep_sizes(5, 12, 2, 4) == [4, 8]              # 5 -> 4, 10 -> 8, 20 past the end
    assert sweep_sizes(4, 24, 2, 8) == [8, 16]             # 4 < one element: dropped
    with pytest.raises(UsageError) as e:
        sweep_sizes(64, 8, 2, 4)
    assert (e.value.message, e.value.fix) == ("--min-bytes 64 is above --max-bytes 8", "swap them")
    with pytest.raises(UsageError) as e:
        sweep_sizes(8, 64, 1, 4)
    assert (e.value.message, e.value.fix) == ("--factor 1 must be at least 2", "use --factor 2")
    assert sweep_sizes(8, 64, 2, 4) == [8, 16, 32, 64]


def test_rates_for_no_time_and_no_ranks():
    assert algbw(1024, 0) == 0.0 and algbw(1024, -1.0) == 0.0 and algbw(1000, 1e-6) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        busbw_factor(0)


def test_a_row_and_an_empty_summary_in_full():
    assert make_row(1024, 4, "float32", 2e-6, 4, None) == {
        "bytes": 1024, "count": 256, "type": "float32", "time_us": pytest.approx(2.0),
        "algbw": pytest.approx(0.512), "busbw": pytest.approx(0.768), "wrong": None}
    assert summarize([]) == {"largest_bytes": None, "busbw": None, "algbw": None, "avg_busbw": None, "wrong": 0,
                             "plateau_bytes": None, "still_rising": None}


def test_human_sizes_of_every_unit():
    assert [human_size(n) for n in (1, 1023, 1024, 1536, 1048576, 3 * 1024 ** 3, 1024 ** 3 + 1024)] == \
        ["1", "1023", "1K", "1536", "1M", "3G", "1048577K"]


# ---- exact values (each seen to fail on a planted change: bench/mutation.py)

def test_bandwidths_are_decimal_gb_per_second_exactly():
    assert algbw(2_000_000_000, 2.0) == 1.0
    assert busbw(2_000_000_000, 2.0, 4) == 1.5
    with pytest.raises(ValueError, match=r"^nranks must be >= 1$"):
        busbw_factor(0)


def test_a_row_counts_whole_elements_and_the_summary_is_whole():
    import json
    row = make_row(4096, 4, "float", 0.001, 2, 0)
    assert json.dumps(row["count"]) == "1024"          # an integer in the JSON, as nccl-tests prints it
    s = summarize([make_row(8, 4, "float", 1.0, 2, 0), row])
    assert set(s) >= {"largest_bytes", "busbw", "algbw", "avg_busbw", "wrong"}
    assert (s["largest_bytes"], s["algbw"], s["busbw"]) == (4096, row["algbw"], row["busbw"])


def test_a_sweep_from_one_byte_starts_at_one_element_of_one_byte():
    assert sweep_sizes(0, 8, 2, 1) == [1, 2, 4, 8]
    assert sweep_sizes(1, 4, 2, 1) == [1, 2, 4]
