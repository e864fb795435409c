"""The latency exceedance chart's data (report/exceedance.py): exact fractions from built bins,
runs merged by summing bins (never averaging percentiles), and a real json+ output."""

from __future__ import annotations

from pathlib import Path

from pytest_ssdqual.fio.histogram import LatencyHistogram
from pytest_ssdqual.fio.parse import parse_fio_file
from pytest_ssdqual.report.exceedance import (
    exceedance_chart,
    exceedance_points,
    merged_histograms,
)

DATA = Path(__file__).parent.parent / "data" / "fio"
PNG = b"\x89PNG\r\n\x1a\n"


def test_fractions_slower_than_each_bucket_are_exact() -> None:
    hist = LatencyHistogram({100_000: 900, 200_000: 90, 400_000: 9, 800_000: 1})
    xs, ys = exceedance_points(hist)
    assert xs == [100.0, 200.0, 400.0]  # µs; the slowest bucket has nothing above it
    assert ys == [0.1, 0.01, 0.001]  # 100, 10 and 1 of 1000 I/Os are slower
    assert exceedance_points(LatencyHistogram({})) == ([], [])


def test_runs_are_merged_by_summing_bins_not_by_averaging_percentiles() -> None:
    fast = LatencyHistogram({100_000: 3000})  # p99.9 of this run alone: 100 µs
    slow = LatencyHistogram({100_000: 998, 10_000_000: 2})  # p99.9 alone: 10 ms
    assert fast.percentile_ns("99.9") == 100_000 and slow.percentile_ns("99.9") == 10_000_000
    both = LatencyHistogram.merge([fast, slow])
    assert both.counts == {100_000: 3998, 10_000_000: 2}
    assert exceedance_points(both) == ([100.0], [2 / 4000])  # 0.05 % slower than 100 µs
    assert both.percentile_ns("99.9") == 100_000  # not the runs' average, ~5 ms


def test_a_real_json_plus_run_and_two_of_them_merged() -> None:
    result = parse_fio_file(DATA / "fio-3.33_local_randwrite_4k_qd4_2s_json_plus.json")
    one = merged_histograms([result])["write"]
    assert one.total == 102_047  # fio's own I/O count of the run (tests/data/fio/README.md)
    two = merged_histograms([result, result])["write"]
    assert two.total == 2 * one.total
    xs1, ys1 = exceedance_points(one)
    xs2, ys2 = exceedance_points(two)
    assert xs1 == xs2 and ys1 == ys2  # the same run twice: the same fractions
    assert all(a > b for a, b in zip(ys1, ys1[1:], strict=False))  # falling: no empty bucket
    slowest = list(one.counts.values())[-1]  # the last point: the slowest bucket's I/Os
    assert round(ys1[-1] * one.total) == slowest and len(xs1) == len(one.counts) - 1
    png = exceedance_chart({"write": two}, title="randwrite 4k qd4",
                           limits={"write.lat_p99_9_us <= 400": (99.9, 400.0)})
    assert png.startswith(PNG) and len(png) > 10_000
    assert exceedance_chart({}, title="none").startswith(PNG)
