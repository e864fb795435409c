"""SLC-cache cliff detection on constructed per-second bandwidth series."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.logs import BandwidthSeries
from pytest_ssdqual.slc_cache import detect_slc_cliff, running_median
from pytest_ssdqual.thresholds.loader import DriveFacts, ThresholdSet
from pytest_ssdqual.thresholds.verdict import MISSING, judge
from pytest_ssdqual.workloads import CATALOG


def series(*bw_mbps: float) -> BandwidthSeries:
    return BandwidthSeries(tuple(float(i) for i in range(1, len(bw_mbps) + 1)),
                           tuple(float(v) for v in bw_mbps))


def test_clean_cliff_inside_a_second_is_interpolated() -> None:
    # 350 MB cache at 100 MB/s: 3.5 s of burst; the 4th second is half burst, half 25 MB/s
    report = detect_slc_cliff(series(100, 100, 100, 62.5, 25, 25, 25, 25))
    assert report.cliff_found
    assert report.slc_cache_bytes == pytest.approx(350e6, rel=1e-9)
    assert report.cliff_t_s == pytest.approx(3.5)
    assert report.burst_bw_mbps == pytest.approx(100)
    assert report.sustained_bw_mbps == pytest.approx(25)
    assert report.written_bytes == int(100e6 * 3 + 62.5e6 + 25e6 * 4)
    assert report.metrics() == {"burst_bw_mbps": pytest.approx(100),
                                "sustained_bw_mbps": pytest.approx(25),
                                "slc_cache_bytes": pytest.approx(350e6)}
    assert "SLC cache 350 MB" in report.describe() and "then 25.0 MB/s" in report.describe()


def test_cliff_on_a_second_boundary() -> None:
    report = detect_slc_cliff(series(200, 200, 40, 40, 40))
    assert report.slc_cache_bytes == pytest.approx(400e6)
    assert report.sustained_bw_mbps == pytest.approx(40)


def test_noise_around_both_levels_stays_within_ten_percent() -> None:
    # ~3.2 s at ~500 MB/s (1.6 GB), then ~120 MB/s with jitter
    bw = (510, 480, 505, 0.2 * 500 + 0.8 * 120, 118, 125, 117, 122, 119, 121)
    report = detect_slc_cliff(series(*bw))
    assert report.slc_cache_bytes == pytest.approx(1.6e9, rel=0.1)
    assert report.sustained_bw_mbps == pytest.approx(120, rel=0.05)
    assert report.burst_bw_mbps == pytest.approx(500, rel=0.05)


def test_one_noisy_second_neither_makes_nor_hides_a_cliff() -> None:
    # a dip during the burst is not the cliff
    dip = detect_slc_cliff(series(100, 40, 100, 100, 100, 30, 30, 30, 30))
    assert dip.slc_cache_bytes == pytest.approx(100e6 * 3 + 40e6 + 100e6, rel=0.01)
    # a spike after the cliff does not move it to the end
    spike = detect_slc_cliff(series(100, 100, 30, 30, 95, 30, 30, 30))
    assert spike.cliff_found and spike.slc_cache_bytes == pytest.approx(200e6)


def test_flat_series_has_no_cliff() -> None:
    report = detect_slc_cliff(series(600, 580, 620, 590, 610, 600))
    assert not report.cliff_found and report.slc_cache_bytes is None
    assert report.cliff_t_s is None
    # too short to exhaust the cache: the post-cache speed was not seen, so no sustained
    # figure (a limit on it shows MISSING, never a pass of the burst speed)
    assert report.sustained_bw_mbps is None
    assert report.end_bw_mbps == pytest.approx((590 + 610 + 600) / 3)
    assert report.metrics() == {"burst_bw_mbps": pytest.approx(600),
                                "cache_not_exhausted_after_bytes": 3600e6}
    assert "no SLC-cache cliff" in report.describe()
    assert "sustained (post-cache) speed was not measured" in report.describe()


def test_no_cliff_on_a_real_drive_fails_a_sustained_limit(tmp_path: Path) -> None:
    path = tmp_path / "limits.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: e12\n    match: {kind: block}\n"
                    "    source: test\n    limits:\n"
                    "      sustained_write: {sustained_bw_mbps: {min: 900}}\n")
    limits = ThresholdSet.load([path]).resolve(DriveFacts(None, None, kind="block"))
    report = detect_slc_cliff(series(1500, 1500, 1500, 1500))  # cache never exhausted
    verdicts = judge(CATALOG["sustained_write"], report.metrics(), limits)
    [sustained] = [v for v in verdicts if v.metric == "sustained_bw_mbps"]
    assert sustained.status == MISSING and sustained.failed


def test_virtual_target_without_cliff_reports_the_whole_write_mean() -> None:
    report = detect_slc_cliff(series(600, 580, 620, 590, 610, 600), virtual=True)
    assert report.sustained_bw_mbps == pytest.approx(600)
    assert report.metrics()["sustained_bw_mbps"] == pytest.approx(600)
    assert "slc_cache_bytes" not in report.metrics()
    assert "no SLC cache (virtual target): sustained = whole-write mean" in report.describe()


def test_bandwidth_that_recovers_at_the_end_is_no_cliff() -> None:
    # falls, then climbs back above the threshold: it did not *stay* below
    report = detect_slc_cliff(series(100, 100, 30, 30, 30, 90, 95))
    assert not report.cliff_found


def test_cliff_in_the_first_second() -> None:
    report = detect_slc_cliff(series(100, 20, 20, 20, 20))
    assert report.cliff_found
    assert report.slc_cache_bytes == pytest.approx(100e6)
    assert report.burst_bw_mbps == pytest.approx(100)


def test_partial_last_interval_uses_its_real_length() -> None:
    bw = BandwidthSeries((1.0, 2.0, 3.0, 4.0, 4.5), (100.0, 100.0, 20.0, 20.0, 20.0))
    report = detect_slc_cliff(bw)
    assert report.written_bytes == int(100e6 * 2 + 20e6 * 2 + 20e6 * 0.5)
    assert report.slc_cache_bytes == pytest.approx(200e6)


def test_errors() -> None:
    with pytest.raises(FioOutputError, match="measured no I/O: empty"):
        detect_slc_cliff(series())
    with pytest.raises(FioOutputError, match="non-finite"):
        detect_slc_cliff(series(1, float("nan"), 3))
    with pytest.raises(ValueError, match="fraction"):
        detect_slc_cliff(series(1, 2, 3), fraction=1.5)


def test_running_median() -> None:
    assert running_median([1.0, 9.0, 1.0, 1.0]) == [5.0, 1.0, 1.0, 1.0]
    assert running_median([3.0, 5.0]) == [3.0, 5.0]
