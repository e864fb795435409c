"""Exact tails from fio's json+ histogram (issue 18 item 1): ``fio.histogram``, ``fio.tails``
and what ``fio.parse`` makes of ``clat_ns.bins``.

Hand-built bins whose percentiles are known exactly, and json+ outputs recorded with fio 3.33 on
a file here (``tests/data/fio/README.md``), whose bins must give fio's own percentile map.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.histogram import (
    FIO_IO_U_PLAT_NR,
    LatencyHistogram,
    agrees_within_one_bucket,
    min_ios_for,
    plat_idx_to_val,
    plat_val_to_idx,
    too_few_ios,
)
from pytest_ssdqual.fio.parse import parse_fio_file, parse_fio_output
from pytest_ssdqual.fio.tails import merged_run_figures

DATA = Path(__file__).resolve().parents[1] / "data" / "fio"
JSON_PLUS = sorted(DATA.glob("*json_plus.json"))
READ_2S = DATA / "fio-3.33_local_randread_4k_qd1_2s_json_plus.json"
READ_1S = DATA / "fio-3.33_local_randread_4k_qd1_json_plus.json"
TWO_JOBS = DATA / "fio-3.33_local_randread_4k_qd2_2jobs_no_group_reporting_json_plus.json"


def _hist(**counts: int) -> LatencyHistogram:
    return LatencyHistogram.from_bins({k.lstrip("v"): c for k, c in counts.items()})


# --- fio's buckets --------------------------------------------------------------------------


def test_bucket_values_round_trip_and_are_what_fio_prints() -> None:
    for index in range(FIO_IO_U_PLAT_NR):
        assert plat_val_to_idx(plat_idx_to_val(index)) == index
    # exact below 128 ns; above, 64 buckets per power of two, the value the midpoint
    assert [plat_idx_to_val(i) for i in (0, 1, 127)] == [0, 1, 127]
    assert plat_idx_to_val(128) == 129  # bucket [128, 130)
    assert plat_idx_to_val(plat_val_to_idx(45_824)) == 45_824  # a key fio wrote
    assert plat_val_to_idx(45_800) == plat_val_to_idx(45_824)
    assert agrees_within_one_bucket(45_824, 46_336)  # the next bucket up (512 ns wide here)
    assert not agrees_within_one_bucket(45_824, 46_848)


# --- hand-built bins: exact percentiles -----------------------------------------------------


def test_percentiles_of_hand_built_bins_are_exact() -> None:
    """1,000 I/Os: 900 at 10 ns, 90 at 20, 9 at 30, 1 at 40 (ns below 128 are exact buckets).
    The p-th percentile is the first bucket whose running count reaches p/100 * 1000."""
    hist = _hist(v10=900, v20=90, v30=9, v40=1)
    assert hist.total == 1000 and hist.max_ns == 40
    # (99.9 and 99.99 as doubles are a hair above: 999.0000000000001 and 999.9 I/Os -> the
    # 1,000th I/O, as fio counts them; 99.0 x 10 is exactly 990)
    expected = {"50": 10, "90": 10, "90.1": 20, "99": 20, "99.8": 30, "99.9": 40, "99.95": 40,
                "99.99": 40, "100": 40, "0": 10}
    assert {p: hist.percentile_ns(p) for p in expected} == expected
    # large buckets: 999,990 I/Os at ~100 us and 10 at ~10 ms; p99.999 needs 10 beyond it
    fast, slow = plat_idx_to_val(plat_val_to_idx(100_000)), plat_idx_to_val(
        plat_val_to_idx(10_000_000))
    tail = LatencyHistogram({fast: 999_990, slow: 10})
    assert tail.percentile_ns("99.999") == fast  # cumulative 999,990 reaches 999,990
    assert tail.percentile_ns("99.9991") == slow
    assert tail.percentile_ns(99.9999) == slow
    assert LatencyHistogram().percentile_ns(99) is None


def test_merging_sums_counts_never_averages_percentiles() -> None:
    a = _hist(v10=99, v100=1)  # p99 = 10
    b = _hist(v20=50, v100=50)  # p99 = 100
    merged = LatencyHistogram.merge([a, b])
    assert merged.counts == {10: 99, 20: 50, 100: 51}
    assert merged.total == 200
    # p99 of all 200 I/Os: the 198th is at 100 ns; the average of the runs' p99s (55) is no I/O
    assert merged.percentile_ns(99) == 100
    assert merged.percentile_ns(50) == 20  # the 100th I/O


def test_minimum_io_count_of_a_tail() -> None:
    assert [min_ios_for(p) for p in ("99", "99.9", "99.99", "99.999", "99.9999")] == [
        1_000, 10_000, 100_000, 1_000_000, 10_000_000]
    assert min_ios_for(99.9999) == 10_000_000  # a float read as printed
    assert too_few_ios("99.9999", 10_000_000) is None
    assert too_few_ios("99.9999", 200_000) == (
        "not measured: p99.9999 needs >= 10,000,000 I/Os, the run had 200,000")


@pytest.mark.parametrize(("bins", "message"), [
    ({"128": 1}, "not one of fio's bucket values"),
    ({"x": 1}, "not a latency"),
    ({"10": -1}, "not a count"),
    ({"10": True}, "not a count"),
])
def test_bins_fio_never_writes_are_refused(bins: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LatencyHistogram.from_bins(bins)


# --- recorded json+ outputs -----------------------------------------------------------------


@pytest.mark.parametrize("path", JSON_PLUS, ids=lambda p: p.name)
def test_bins_give_fio_s_own_percentile_map(path: Path) -> None:
    """Every percentile fio printed for every job entry and direction is the bins' one (fio
    computes its map from the same buckets)."""
    checked = 0
    for job in json.loads(path.read_text())["jobs"]:
        for name in ("read", "write"):
            clat = job[name]["clat_ns"]
            if not job[name]["total_ios"]:
                continue
            hist = LatencyHistogram.from_bins(clat["bins"])
            assert hist.total == job[name]["total_ios"]
            for percent, value in clat["percentile"].items():
                assert hist.percentile_ns(percent) == value, (name, percent)
                checked += 1
            assert plat_val_to_idx(clat["max"]) == plat_val_to_idx(hist.max_ns or 0)
    assert checked >= 11  # fio's default list has 17 entries; the plugin's jobs print 11


def test_an_exact_boundary_goes_to_the_next_io_as_in_fio() -> None:
    """p99.9 of 5,000 I/Os: 0.999 * 5000 is exactly 4,995, but fio multiplies the double 99.9
    (99.900000000000006) and takes the 4,996th I/O; so do the bins (recorded with fio 3.33 on
    an emulated drive: the 4,995th is 2,342,912 ns, the 4,996th 2,670,592 ns)."""
    doc = json.loads((DATA / "fio-3.33_local_randread_4k_qd32_rate_paced_5000_ios_json_plus.json"
                      ).read_text())
    clat = doc["jobs"][0]["read"]["clat_ns"]
    hist = LatencyHistogram.from_bins(clat["bins"])
    assert hist.total == 5000
    assert clat["percentile"]["99.900000"] == 2_670_592
    assert hist.percentile_ns("99.9") == 2_670_592


def test_parsed_tails_and_the_io_count_they_rest_on() -> None:
    result = parse_fio_file(READ_2S)
    read = result.directions["read"]
    assert read.lat_tail_ios == read.total_ios == 3_306_202
    metrics = result.metrics()
    assert metrics["read.lat_p99_us"] == 0.052 and metrics["read.lat_p99_99_us"] == 0.233
    assert metrics["read.lat_p99_999_us"] == 17.28  # >= 1,000,000 I/Os: reported
    assert "read.lat_p99_9999_us" not in metrics  # < 10,000,000: refused, with the reason
    assert result.unmeasured() == {"read.lat_p99_9999_us": (
        "not measured: p99.9999 needs >= 10,000,000 I/Os, the run had 3,306,202")}
    assert result.unreached == result.unmeasured()  # what the results store keeps
    small = parse_fio_file(READ_1S)
    assert set(small.unmeasured()) == {"read.lat_p99_999_us", "read.lat_p99_9999_us"}
    write = parse_fio_file(DATA / "fio-3.33_local_randwrite_4k_qd4_2s_json_plus.json")
    assert write.metrics()["write.lat_tail_ios"] == 102_047
    assert write.metrics()["write.lat_p99_9_us"] == 419.84


def test_two_job_entries_merge_by_summed_bins() -> None:
    doc = json.loads(TWO_JOBS.read_text())
    jobs = [LatencyHistogram.from_bins(j["read"]["clat_ns"]["bins"]) for j in doc["jobs"]]
    result = parse_fio_file(TWO_JOBS)
    read = result.directions["read"]
    assert not result.percentiles_worst_of_jobs
    assert read.lat_tail_ios == sum(j["read"]["total_ios"] for j in doc["jobs"]) == 39_758
    merged = LatencyHistogram.merge(jobs)
    assert read.lat_p99_us == merged.percentile_ns(99) / 1000  # type: ignore[operator]
    per_job = sorted(h.percentile_ns("99.9") or 0 for h in jobs)
    assert per_job[0] <= (read.lat_p99_9_us or 0) * 1000 <= per_job[1]


def test_a_percentile_map_the_bins_do_not_give_is_refused() -> None:
    doc = json.loads(READ_1S.read_text())
    doc["jobs"][0]["read"]["clat_ns"]["percentile"]["99.000000"] *= 2
    with pytest.raises(FioOutputError, match=r"clat_ns.bins: p99 is 93696 ns from the bins but "
                                             r"fio printed 187392 ns"):
        parse_fio_output(json.dumps(doc))


def test_runs_merge_by_summed_bins() -> None:
    """Two runs of one workload (1 s and 2 s of random reads): percentiles of all their I/Os,
    the count summed, a tail too deep for both together refused with the runs' count."""
    runs = [parse_fio_file(READ_1S), parse_fio_file(READ_2S)]
    figures, unmeasured, directions = merged_run_figures(runs)
    assert directions == ["read"]
    assert figures["read.lat_tail_ios"] == 15_191 + 3_306_202
    both = LatencyHistogram.merge(r.directions["read"].histogram for r in runs  # type: ignore[misc]
                                  )
    assert figures["read.lat_p99_99_us"] == both.percentile_ns("99.99") / 1000  # type: ignore[operator]
    assert figures["read.lat_p99_999_us"] == both.percentile_ns("99.999") / 1000  # type: ignore[operator]
    assert unmeasured == {"read.lat_p99_9999_us": (
        "not measured: p99.9999 needs >= 10,000,000 I/Os, the 2 runs had 3,321,393")}
    # a run without bins (plain json): the direction is not merged
    plain = parse_fio_file(DATA / "fio-3.33_local_randread_4k_qd4_status_interval.json")
    assert merged_run_figures([runs[0], plain]) == ({}, {}, [])
