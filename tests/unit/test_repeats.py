"""One figure per metric from the runs of ``--repeat`` (``results.repeats``): the rule of each
metric kind -- a maximum is the maximum, a latency percentile the worst run's, throughput the
median run's, never a mean of two runs -- and the per-run samples the gate still judges on."""

from __future__ import annotations

import math

import pytest

from pytest_ssdqual.catalog.health_ocp import OCP_DELTA_BASES
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.results.regression import aggregate_repeats, repetition_samples
from pytest_ssdqual.results.repeats import (
    MAX,
    MEDIAN,
    MIN,
    SUM,
    WORST,
    aggregation_labels,
    aggregation_rule,
    combine,
    describe_aggregation,
)


def _runs(metric: str, *values: float) -> list[dict[str, float]]:
    return [{metric: v} for v in values]


def test_a_maximum_is_the_maximum_of_the_runs() -> None:
    """The trial's runs: maxima of 1,000, 50,000 and 2,000 us were reported as 2,000 (the
    median), hiding the one 50 ms I/O."""
    figures, spread = aggregate_repeats(_runs("read.lat_max_us", 1000, 50000, 2000))
    assert figures == {"read.lat_max_us": 50000}
    assert spread == {"read.lat_max_us": pytest.approx((50000 - 1000) / 2000 * 100)}
    assert combine("read.lat_min_us", [30.0, 12.0, 20.0]) == 12.0


def test_a_latency_percentile_is_the_worst_runs() -> None:
    figures, _ = aggregate_repeats([
        {"write.lat_p99_us": 250.0, "write.lat_p99_99_us": 900.0, "write.lat_p50_us": 80.0},
        {"write.lat_p99_us": 12500.0, "write.lat_p99_99_us": 40000.0, "write.lat_p50_us": 95.0},
        {"write.lat_p99_us": 500.0, "write.lat_p99_99_us": 1100.0, "write.lat_p50_us": 82.0},
    ])
    assert figures == {"write.lat_p99_us": 12500.0, "write.lat_p99_99_us": 40000.0,
                       "write.lat_p50_us": 95.0}
    # a methodology phase's percentile too
    assert combine("fresh_lat_p99_us", [300.0, 410.0, 290.0]) == 410.0


def test_an_even_number_of_runs_never_averages_two_runs() -> None:
    """4 runs at 400, 500, 600, 700 MB/s gave 550 (no run measured it): now the worse of the
    two middle runs, 500 (higher is better); a mean latency takes the higher middle run."""
    figures, _ = aggregate_repeats([
        {"write.bw_mbps": bw, "write.iops": iops, "write.lat_mean_us": lat,
         "write.lat_p99_us": p99}
        for bw, iops, lat, p99 in ((400, 3200, 100, 300), (700, 5600, 80, 200),
                                   (500, 4000, 90, 250), (600, 4800, 85, 260))])
    assert figures == {"write.bw_mbps": 500.0, "write.iops": 4000.0,
                       "write.lat_mean_us": 90.0, "write.lat_p99_us": 300.0}
    # two runs: the worse one; a metric without a direction: the upper middle run
    assert combine("read.iops", [1000.0, 1100.0]) == 1000.0
    assert combine("burst_rand_write_4k_qd32.write.iops_ratio", [1.2, 1.6]) == 1.6
    # odd N: the middle run whatever the direction
    assert combine("read.iops", [9.0, 1.0, 5.0]) == combine("read.lat_mean_us",
                                                             [9.0, 1.0, 5.0]) == 5.0


def test_a_counters_increase_is_summed_and_a_runs_bytes_are_the_median() -> None:
    assert combine("media_errors_delta", [0.0, 2.0, 1.0]) == 3.0
    # a cache size or a byte count a run measured is one measurement repeated: not summed
    assert combine("slc_cache_bytes", [20e9, 21e9, 19e9]) == 20e9
    assert combine("written_bytes", [1e9, 1e9, 1e9]) == 1e9


def test_every_catalog_metric_has_its_rule() -> None:
    """The table keyed on the bare name, over every metric the catalog produces: the
    exceptions to the median are exactly these."""
    names = {n.rpartition(".")[2] for w in CATALOG.values() for n in w.metric_names()}
    rules = {n: aggregation_rule(n) for n in names}
    assert {n for n, r in rules.items() if r == MAX} == {
        "lat_max_us", "max_idle_exit_latency_us", "max_transition_latency_us",
        "power_peak_w", "ps0_max_power_w", "deepest_idle_max_power_w",
        "ocp_max_user_erase_count", "ocp_max_temperature_recorded_c"}  # OCP C0h maxima
    assert {n for n, r in rules.items() if r == MIN} == {"ocp_min_user_erase_count"}
    assert {n for n, r in rules.items() if r == WORST} == {
        "lat_p50_us", "lat_p99_us", "lat_p99_9_us", "lat_p99_99_us", "lat_p99_999_us",
        "lat_p99_9999_us", "fresh_lat_p99_us", "degraded_lat_p99_us", "steady_lat_p99_us",
        "recovered_lat_p99_us"}
    assert {n for n, r in rules.items() if r == SUM} == {
        "available_spare_pct_delta", "error_log_entries_delta", "host_written_bytes_delta",
        "media_errors_delta", "nand_written_bytes_delta", "percentage_used_delta",
        "unsafe_shutdowns_delta", *(f"{m}_delta" for m in OCP_DELTA_BASES)}
    for median in ("iops", "bw_mbps", "lat_mean_us", "lat_p99_us_ratio", "sustained_bw_mbps",
                   "slc_cache_bytes", "rounds", "time_to_recover_s", "recovery_ratio"):
        assert rules[median] == MEDIAN, median
    # a metric no rule names takes the median run (the documented safe default)
    assert aggregation_rule("some_new_figure") == MEDIAN
    assert combine("some_new_figure", [3.0, 1.0, 2.0]) == 2.0


def test_the_gate_still_gets_every_runs_figure() -> None:
    runs = _runs("read.lat_max_us", 1000, 50000, 2000)
    assert repetition_samples(runs) == {"read.lat_max_us": [1000.0, 50000.0, 2000.0]}
    figures, _ = aggregate_repeats([{"x": math.nan}, {"x": 1.0}])
    assert math.isnan(figures["x"])  # a run without a figure is not hidden, as before


def test_the_labels_say_how_each_figure_was_taken() -> None:
    metrics = ["read.iops", "read.lat_p99_us", "read.lat_max_us"]
    assert aggregation_labels(metrics, 3) == {
        "read.iops": "median of 3 runs", "read.lat_p99_us": "worst of 3 runs",
        "read.lat_max_us": "max of 3 runs"}
    assert aggregation_labels(metrics, 4)["read.iops"] == \
        "median of 4 runs (the worse middle run)"
    assert aggregation_labels(metrics, 1) == {}
    assert describe_aggregation(metrics, 3) == (
        "figures of 3 runs: read.lat_p99_us the worst run; read.lat_max_us the maximum; "
        "the others the median run")
    assert describe_aggregation(["read.iops"], 2) == (
        "figures of 2 runs: each the median run (even N: the worse of the two middle runs)")
    assert describe_aggregation(metrics, 1) is None


def test_no_runs_is_an_error() -> None:
    with pytest.raises(ValueError, match="no repetitions"):
        aggregate_repeats([])
    with pytest.raises(ValueError, match="no runs to combine for read.iops"):
        combine("read.iops", [])
