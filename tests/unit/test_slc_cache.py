"""SLC-cache cliff detection on constructed per-second bandwidth series, the found-case logs
(B23-B25) and real fio logs."""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.logs import LogSample, read_log, to_series
from pytest_ssdqual.fio.series import BandwidthSeries
from pytest_ssdqual.methodology.slc_cache import (
    MIN_BURST_S,
    FallAndReturn,
    RefillBurst,
    detect_slc_cliff,
    running_median,
)
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts
from pytest_ssdqual.thresholds.verdict import FAIL, MISSING, judge

from ..conftest import cases_dir


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
    spike = detect_slc_cliff(series(100, 100, 100, 100, 100, 30, 30, 95, 30, 30, 30))
    assert spike.cliff_found and spike.slc_cache_bytes == pytest.approx(500e6)


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


def test_a_cliff_after_the_first_window_cannot_be_told_from_a_spike() -> None:
    """One fast window is one sample: a cache that ends in the first second looks exactly like
    a start-up spike, so no cliff is reported (it was a 100 MB cache before)."""
    report = detect_slc_cliff(series(100, 20, 20, 20, 20))
    assert not report.cliff_found and report.slc_cache_bytes is None
    assert report.burst_bw_mbps == pytest.approx(20)  # the write's median level
    assert report.cache_not_exhausted_after_bytes == 180e6
    # two windows are a level when they are a quarter of a short write (found case B23's shape)
    assert detect_slc_cliff(series(100, 100, 20, 20, 20, 20, 20, 20)).slc_cache_bytes == \
        pytest.approx(200e6)
    assert not detect_slc_cliff(series(100, 100, 20, 20, 20, 20, 20, 20, 20)).cliff_found


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


# --- Robust cliff, gap-aware logs --------------------------------------------

FOUND = cases_dir() / "found" / "newbugs-inputs"
REAL_LOGS = cases_dir() / "real" / "fio-logs"


def logged(folder: Path, name: str) -> BandwidthSeries:
    """The write-bandwidth series of one case log, read as the plugin reads a job's logs."""
    path = folder / name
    if not path.is_file():
        pytest.skip(f"case file {path} not present: set SSDQUAL_CASES_DIR")
    return bandwidth_series_of([read_log(path)])


def bandwidth_series_of(per_job: list[list[LogSample]]) -> BandwidthSeries:
    return BandwidthSeries.from_series(to_series(per_job, "bw", "write"))


KIB = 1024 / 1e6  # KiB/s (fio's unit) -> decimal MB/s


@dataclass(frozen=True)
class Cliff:
    """What a log shows, worked out by reading it (the comments say how), not from the code:
    a cache of ``cache_bytes`` (within ``rel``) ending at ``cliff_t_s``, then ``sustained``."""

    cache_bytes: float
    cliff_t_s: float
    burst: float
    sustained: float
    rel: float = 1e-5


@dataclass(frozen=True)
class NoCliff:
    """A log without a cliff: ``burst`` (the median window, MB/s) and the bytes written."""

    burst: float
    written: float


EVERY_LOG: list[tuple[Path, str, Cliff | NoCliff]] = [
    # B23, fio 3.16's 4 columns: 2 lines of 390,625 KiB/s (400 MB/s), 2 of 97,656 (100 MB/s)
    (FOUND, "B23_fio-3.16_4col_bw.1.log", Cliff(800e6, 2.0, 400, 100)),
    # B24: 9 windows at 400 MB/s (the 3 s window logged twice is one), then 10 at 100
    (FOUND, "B24_duplicate_timestamp_bw.1.log", Cliff(3.6e9, 9.0, 400, 100)),
    # B25: 400 MB/s in windows 1-3 and 6-8 (no line for 4 and 5: a stall), then 10 at 100
    (FOUND, "B25_stall_no_lines_bw.1.log", Cliff(2.4e9, 8.0, 400, 100)),
    # fio 3.16 HighPoint RAID5, 250 ms windows: a start-up spike (2,192, 2,656, 1,936 KiB/s for
    # 0.75 s), then ~1,500 KiB/s for 59 s: no cache (was a 1.59 MB "cache" at 0.65 s).
    # Median line 1,520 KiB/s; 359,568 KiB/s summed over the lines x 0.25 s.
    (REAL_LOGS, "fio-3.16_highpoint_raid5_randwrite_qd32_j1_4col_250ms_bw.1.log",
     NoCliff(1520 * KIB, 359568 * 1024 * 0.25)),
    # fio 3.1 USB SSD, 250 ms windows: wandering 1-10 MB/s with 25 stalls (the best split still
    # leaves 39 % of the windows on the wrong side; the old rule found a 179 MB "cache").
    # Median line 3,088 KiB/s; 825,700 KiB/s summed x 0.25 s.
    (REAL_LOGS, "fio-3.1_usb_crucial240gb_randwrite_qd2_j8_job1_stall_gap_bw.1.log",
     NoCliff(3088 * KIB, 825700 * 1024 * 0.25)),
    # fio 3.33 Sabrent, one job: ~1,254 MB/s flat for 59 s (74 GB): a 2 TB drive's dynamic
    # cache is larger. Median line 1,224,516 KiB/s; 72,196,047 KiB/s summed x 1 s.
    (REAL_LOGS, "fio-3.33_sabrent_rocket4plus_randwrite_qd32_j1_bw.1.log",
     NoCliff(1224516 * KIB, 72196047 * 1024)),
    # fio 3.33 Sabrent randrw, job 8 of 16, writes: 19 s at ~83 MB/s, 49 / 40 / 37 MB/s in
    # 20-22 s, then ~5 MB/s (median 4,830 KiB/s) from 23 s, a stall at 38 s, and a climb back
    # to 35 and 77 MB/s in the last two seconds. The cache ends where the write falls to the
    # post-cache level: windows 1-22 wrote 1,727 MB (1-21: 1,690 MB); burst = the median of
    # windows 1-21, 81,044 KiB/s. The last window (75,084 KiB/s, 93 % of the burst level) is a
    # refill burst, not post-cache speed: sustained = windows 24-58 (35 s, the stall included)
    # wrote 228,274 KiB/s x 1 s: 6.68 MB/s (with the burst: windows 24-59, 310.6 MB in 36 s,
    # 8.6 MB/s). (It was "no cliff": the climb at the end read as "ends at burst speed".)
    (REAL_LOGS, "fio-3.33_sabrent_rocket4plus_randrw5_qd64_j16_job8_missing_seconds_bw.8.log",
     Cliff(1727e6, 22.0, 81044 * KIB, 228274 * KIB / 35, rel=0.03)),
]


@pytest.mark.parametrize(("folder", "name", "expected"), EVERY_LOG,
                         ids=[name.split("_bw")[0] for _, name, _ in EVERY_LOG])
def test_every_found_and_real_log_gives_the_right_cliff_or_none(
        folder: Path, name: str, expected: Cliff | NoCliff) -> None:
    report = detect_slc_cliff(logged(folder, name))
    if isinstance(expected, NoCliff):
        assert not report.cliff_found, report.describe()
        assert report.slc_cache_bytes is None and report.sustained_bw_mbps is None
        assert report.burst_bw_mbps == pytest.approx(expected.burst, rel=1e-6)
        assert report.cache_not_exhausted_after_bytes == pytest.approx(expected.written, abs=1)
        return
    assert report.cliff_found, report.describe()
    assert report.slc_cache_bytes == pytest.approx(expected.cache_bytes, rel=expected.rel)
    assert report.cliff_t_s == pytest.approx(expected.cliff_t_s, rel=expected.rel)
    assert report.burst_bw_mbps == pytest.approx(expected.burst, rel=max(expected.rel, 1e-4))
    assert report.sustained_bw_mbps == pytest.approx(expected.sustained,
                                                     rel=max(expected.rel, 1e-4))


# --- Start-up spikes are not caches (audit) ---------------------------------


def test_a_one_second_spike_on_a_flat_write_is_no_cache() -> None:
    """3 GB/s for 1 s, then 1 GB/s for 50 s: a spike, not a 3 GB cache."""
    report = detect_slc_cliff(series(3000, *[1000] * 50))
    assert not report.cliff_found and report.sustained_bw_mbps is None
    assert report.burst_bw_mbps == 1000 and report.cache_not_exhausted_after_bytes == 53e9


def test_a_two_second_spike_before_the_real_sabrent_log_is_no_cache() -> None:
    """The real fio-3.33 Sabrent log (~1,254 MB/s for 59 s) after 2 s at 3 GB/s: the drive's
    cache is larger than the 80 GB written, so no cliff (it was a 6.1 GB cache, sustained
    1,252 MB/s)."""
    real = logged(REAL_LOGS, "fio-3.33_sabrent_rocket4plus_randwrite_qd32_j1_bw.1.log")
    report = detect_slc_cliff(series(3000, 3000, *real.bw_mbps))
    assert not report.cliff_found, report.describe()
    assert report.written_bytes == pytest.approx(6e9 + 72196047 * 1024, abs=2)
    # the same spike at the cliff's level shows: 5 s at burst speed in a long write count
    cached = detect_slc_cliff(series(*[3000] * 5, *real.bw_mbps))
    assert cached.slc_cache_bytes == pytest.approx(15e9, rel=0.01)
    assert cached.sustained_bw_mbps == pytest.approx(72196047 * KIB / 59, rel=0.01)


def test_the_burst_must_last_five_seconds_in_a_long_write() -> None:
    """In a long write a burst of ``MIN_BURST_S`` (5 s) is a cache; 4 s are taken for a spike
    (a real cache that small is missed and reported as not exhausted: no SLC cache of an
    erased drive in reviewers' fills lasts under ~10 s)."""
    five = detect_slc_cliff(series(*[2000] * 5, *[500] * 100))
    assert five.slc_cache_bytes == pytest.approx(10e9) and five.cliff_t_s == pytest.approx(5)
    assert five.sustained_bw_mbps == pytest.approx(500)
    four = detect_slc_cliff(series(*[2000] * 4, *[500] * 100))
    assert not four.cliff_found and four.cache_not_exhausted_after_bytes == 58e9
    # 250 ms windows: 5 s are 20 windows, not 5 (the HighPoint spike is 3 windows)
    quarter = [0.25 * k for k in range(1, 421)]
    fast = BandwidthSeries(tuple(quarter), tuple([2000.0] * 20 + [500.0] * 400))
    assert detect_slc_cliff(fast).slc_cache_bytes == pytest.approx(10e9)
    short = BandwidthSeries(tuple(quarter), tuple([2000.0] * 19 + [500.0] * 401))
    assert not detect_slc_cliff(short).cliff_found


def noisy(levels: list[tuple[float, int]], seed: int = 9, noise: float = 0.05) -> BandwidthSeries:
    """1 s windows at ``(MB/s, seconds)`` levels, each window off by up to +-``noise``."""
    rng = random.Random(seed)
    values = [bw * (1 + rng.uniform(-noise, noise)) for bw, count in levels for _ in range(count)]
    return series(*values)


def cache_before_level(s: BandwidthSeries, windows: int) -> float:
    return sum(s.bytes_per_interval()[:windows])


def test_start_up_spike_does_not_set_the_burst_level() -> None:
    # 3 s at 3 GB/s (DRAM), 20 s at 1 GB/s (SLC), then 200 MB/s: the cache ends at 23 s.
    # "Below 70 % of the maximum" put the cliff after the spike: 9 GB, burst 3 GB/s.
    s = noisy([(3000, 3), (1000, 20), (200, 30)])
    report = detect_slc_cliff(s)
    assert report.slc_cache_bytes == pytest.approx(cache_before_level(s, 23), rel=0.02)
    assert report.slc_cache_bytes == pytest.approx(29e9, rel=0.05)
    assert report.burst_bw_mbps == pytest.approx(1000, rel=0.05)
    assert report.sustained_bw_mbps == pytest.approx(200, rel=0.05)


@pytest.mark.parametrize("tiers", [[(3000, 20), (1500, 10)], [(3000, 10), (1500, 20)]])
def test_two_tier_cache_ends_where_the_write_falls_to_the_post_cache_speed(
        tiers: list[tuple[float, int]]) -> None:
    # a fast tier, a slower tier (1.5 GB/s, still 5x the native speed), then 300 MB/s.
    # "Below 70 % of the maximum" stopped at the first tier and called 1.5 GB/s sustained.
    s = noisy([*tiers, (300, 30)])
    report = detect_slc_cliff(s)
    assert report.slc_cache_bytes == pytest.approx(cache_before_level(s, 30), rel=0.02)
    assert report.cliff_t_s == pytest.approx(30, abs=1)
    assert report.sustained_bw_mbps == pytest.approx(300, rel=0.05)


def test_refill_bursts_after_the_cliff_do_not_move_it() -> None:
    # 20 s at 1 GB/s, then 200 MB/s with 2 s refill bursts at 1 GB/s while the drive folds.
    # "Stays below to the end" moved the cliff behind the last burst (54 GB).
    s = noisy([(1000, 20), (200, 10), (1000, 2), (200, 10), (1000, 2), (200, 10)])
    report = detect_slc_cliff(s)
    assert report.slc_cache_bytes == pytest.approx(20e9, rel=0.05)
    assert report.slc_cache_bytes == pytest.approx(cache_before_level(s, 20), rel=0.02)
    # the bursts are listed, not averaged into the post-cache level (it was their mean with
    # the level: (30 x 200 + 4 x 1000) / 34 s = 294 MB/s, which the drive never held)
    per = s.bytes_per_interval()
    level = [i for i in range(21, 54) if i not in (30, 31, 42, 43)]
    assert report.sustained_bw_mbps == pytest.approx(sum(per[i] for i in level) / 1e6 / 29)
    assert report.sustained_bw_mbps == pytest.approx(200, rel=0.05)
    assert report.post_cache_mean_bw_mbps == pytest.approx(sum(per[21:]) / 1e6 / 33)
    assert [(b.start_s, b.duration_s, b.at_end) for b in report.refill_bursts] == \
        [(30.0, 2.0, False), (42.0, 2.0, False)]
    assert report.burst_bw_mbps == pytest.approx(1000, rel=0.05)


def test_a_long_stall_inside_the_burst_is_not_the_cliff() -> None:
    # 5 s at 400 MB/s, 10 s with no I/O completed (logged as 0), 5 s at 400, then 100 MB/s
    report = detect_slc_cliff(series(*[400] * 5, *[0] * 10, *[400] * 5, *[100] * 20))
    assert report.slc_cache_bytes == pytest.approx(4e9)
    assert report.burst_bw_mbps == 400 and report.sustained_bw_mbps == pytest.approx(100)
    with pytest.raises(FioOutputError, match="every window of the bandwidth log is a stall"):
        detect_slc_cliff(series(0, 0, 0))


def test_a_write_that_ends_at_burst_speed_has_no_cliff() -> None:
    report = detect_slc_cliff(series(1000, 1000, 200, 200, 200, 200, 1000, 1000, 1000))
    assert not report.cliff_found and report.slc_cache_bytes is None


def test_a_write_climbing_part_of_the_way_back_at_the_end_still_has_its_cliff() -> None:
    """10 s at 1 GB/s, 20 s at 50 MB/s, then 400 MB/s for the last 3 s while the drive folds
    its cache: 8x the post-cache level but 40 % of the burst level -- the write did leave the
    cache (judged against the post-cache level alone, it "ended at burst speed": no cliff)."""
    report = detect_slc_cliff(series(*[1000] * 10, *[50] * 20, 400, 400, 400))
    assert report.slc_cache_bytes == pytest.approx(10e9)
    assert report.sustained_bw_mbps == pytest.approx((19 * 50 + 3 * 400) / 22)
    assert report.refill_bursts == ()  # 400 is post-cache speed, not the burst level
    # back at 70 % of the burst level or more for 3 of the 23 s after the fall: a refill
    # burst at the end, which keeps the cliff (it was "a dip, not a cliff": no figure at all
    # for 20 s at 5 % of the burst level) and stays out of the post-cache level
    back = detect_slc_cliff(series(*[1000] * 10, *[50] * 20, 750, 750, 750))
    assert back.slc_cache_bytes == pytest.approx(10e9) and back.sustained_bw_mbps == 50
    assert back.refill_bursts == (RefillBurst(30.0, 3.0, 750.0, at_end=True),)


def test_long_logs_are_judged_quickly() -> None:
    """A whole-drive fill: 6 h of 1 s windows (O(n log n), not one median per candidate)."""
    s = noisy([(2000, 3000), (150, 18600)])
    started = time.perf_counter()
    report = detect_slc_cliff(s)
    assert time.perf_counter() - started < 10  # about 0.2 s here; margin for a loaded machine
    assert report.slc_cache_bytes == pytest.approx(6e12, rel=0.01)


# --- Refill bursts after the cliff (hardening from the trials) ----------------------------


def test_a_refill_burst_at_the_end_keeps_the_cliff_and_the_post_cache_level() -> None:
    """The trial's log: 10 s at 2,000 MB/s (a 20 GB cache), 48 s at 500, then 2 s back at
    2,000 while the drive folds. It was "no cliff" (the median of the last 3 windows is 2,000:
    "ends at burst speed"), burst 500 MB/s and "cache not exhausted after 48 GB"."""
    report = detect_slc_cliff(series(*[2000] * 10, *[500] * 48, 2000, 2000))
    assert report.cliff_found, report.describe()
    assert report.slc_cache_bytes == 20_000_000_000 and report.cliff_t_s == 10.0
    assert report.burst_bw_mbps == 2000 and report.sustained_bw_mbps == 500
    assert report.refill_bursts == (RefillBurst(58.0, 2.0, 2000.0, at_end=True),)
    assert report.refill_bw_mbps == pytest.approx(1400)  # 70 % of the burst level
    # windows 12-60 (the transition window 11 left out): 47 x 500 + 2 x 2000 MB in 49 s
    assert report.post_cache_mean_bw_mbps == pytest.approx(27500 / 49)
    assert report.metrics() == {"burst_bw_mbps": 2000, "sustained_bw_mbps": 500,
                                "slc_cache_bytes": 20e9}
    assert report.describe().endswith(
        "1 refill burst after the cliff, back at the burst level (>= 1,400.0 MB/s) while the "
        "drive folds its cache: 2.0 s from 58.0 s at 2,000.0 MB/s (the last at the end of the "
        "write); not part of the sustained level (with them the post-cache mean is "
        "561.2 MB/s)")


def test_a_refill_burst_in_the_middle_is_listed_and_left_out_of_the_level() -> None:
    """A drive that recovers SLC mid-write (it folds while writing): 10 s at 2,000, 20 s at
    500, 3 s back at 2,000, 27 s at 500."""
    report = detect_slc_cliff(series(*[2000] * 10, *[500] * 20, *[2000] * 3, *[500] * 27))
    assert report.slc_cache_bytes == 20e9 and report.sustained_bw_mbps == 500
    assert report.refill_bursts == (RefillBurst(30.0, 3.0, 2000.0),)
    assert report.post_cache_mean_bw_mbps == pytest.approx((46 * 500 + 3 * 2000) / 49)
    assert "3.0 s from 30.0 s at 2,000.0 MB/s; not part" in report.describe()


def test_a_folding_drive_with_periodic_stalls_and_refills() -> None:
    """Post-cache, every 11 s: 8 s at 500 MB/s, a stall (no I/O completed: 0), 2 s at
    2,000. The stalls are post-cache behaviour (the drive delivers nothing): they count in
    the level; the refills do not. Levels: 5 x 8 x 500 MB over 5 x 9 s = 444.4 MB/s."""
    report = detect_slc_cliff(series(*[2000] * 10, *([500] * 8 + [0] + [2000] * 2) * 5))
    assert report.slc_cache_bytes == 20e9 and report.cliff_t_s == 10.0
    # the transition window (index 10, 500 MB/s) is left out of the level: 39 x 500 / 44 s
    assert report.sustained_bw_mbps == pytest.approx(39 * 500 / 44)
    assert [(b.start_s, b.duration_s) for b in report.refill_bursts] == \
        [(19.0 + 11 * k, 2.0) for k in range(5)]
    assert [b.at_end for b in report.refill_bursts] == [False] * 4 + [True]
    assert "and" not in report.describe().split("cache: ")[1].split(";")[0]  # 5 listed
    # stalls only (no refill): 4 x 500 then a stall, ten times: 500 x 39 / 49 s
    stalls = detect_slc_cliff(series(*[2000] * 10, *([500] * 4 + [0]) * 10))
    assert stalls.slc_cache_bytes == 20e9 and stalls.refill_bursts == ()
    assert stalls.sustained_bw_mbps == pytest.approx(39 * 500 / 49)
    # more than five bursts: the first five are listed, the rest counted
    many = detect_slc_cliff(series(*[2000] * 10, *([500] * 8 + [2000]) * 7))
    assert len(many.refill_bursts) == 7 and "and 2 more (the last at the end" in \
        many.describe()


def test_a_long_return_to_the_burst_level_at_the_end_is_no_cliff() -> None:
    """Back at the burst level at the end for as long as a burst must last (5 s) and for a
    third of the windows after the fall or more: which level the drive holds is not known, so
    no cliff. 6 s back after 12 s at 500 MB/s: 6 of 18 windows, no cliff; after 13 s: 6 of
    19, a refill burst at the end; 4 s back (under 5 s) after 6 s: a refill burst as well."""
    back = detect_slc_cliff(series(*[2000] * 10, *[500] * 12, *[2000] * 6))
    assert not back.cliff_found and back.fall is not None  # undetermined, below
    refill = detect_slc_cliff(series(*[2000] * 10, *[500] * 13, *[2000] * 6))
    assert refill.slc_cache_bytes == 20e9 and refill.sustained_bw_mbps == 500
    assert refill.refill_bursts == (RefillBurst(23.0, 6.0, 2000.0, at_end=True),)
    assert MIN_BURST_S == 5.0
    short = detect_slc_cliff(series(*[2000] * 10, *[500] * 6, *[2000] * 4))
    assert short.slc_cache_bytes == 20e9 and short.sustained_bw_mbps == 500
    assert short.refill_bursts == (RefillBurst(16.0, 4.0, 2000.0, at_end=True),)


def test_a_short_write_ending_with_one_refill_window() -> None:
    """The smoke profile's 7 s write: 2 s at 400 MB/s, 4 at 100, the last back at 400. The
    cliff stood before; the level was the mean with the refill window, 175 MB/s."""
    report = detect_slc_cliff(series(400, 400, 100, 100, 100, 100, 400))
    assert report.slc_cache_bytes == 800e6 and report.sustained_bw_mbps == 100
    assert report.refill_bursts == (RefillBurst(6.0, 1.0, 400.0, at_end=True),)
    assert report.post_cache_mean_bw_mbps == 175


def test_a_short_write_that_never_left_the_cache() -> None:
    report = detect_slc_cliff(series(400, 395, 405, 400, 398, 402, 400))
    assert not report.cliff_found and report.sustained_bw_mbps is None
    assert report.burst_bw_mbps == 400 and report.refill_bursts == ()
    assert report.metrics() == {"burst_bw_mbps": 400,
                                "cache_not_exhausted_after_bytes": 2800e6}


def test_the_real_sabrent_log_after_a_cache_and_before_a_refill_burst() -> None:
    """The real fio-3.33 Sabrent log (59 s, no cliff of its own) after 20 s at 3 GB/s, ending
    with 2 s back at 3 GB/s: a 60 GB cache, the real log's level after it (its windows 2-59,
    the first is the transition), and the 2 s as a refill burst at the end. It was no cliff,
    burst = the median window (1.2 GB/s), "cache not exhausted"."""
    real = logged(REAL_LOGS, "fio-3.33_sabrent_rocket4plus_randwrite_qd32_j1_bw.1.log")
    report = detect_slc_cliff(series(*[3000] * 20, *real.bw_mbps, 3000, 3000))
    assert report.cliff_found, report.describe()
    assert report.slc_cache_bytes == pytest.approx(60e9, rel=0.01)
    assert report.burst_bw_mbps == 3000
    level = real.bw_mbps[1:]
    assert report.sustained_bw_mbps == pytest.approx(sum(level) / len(level))
    assert report.refill_bursts == (RefillBurst(20.0 + len(real.bw_mbps), 2.0, 3000.0,
                                                at_end=True),)


def test_the_real_randrw_log_names_its_refill_burst() -> None:
    """The real fio-3.33 randrw job 8 log ends with one window at 75,084 KiB/s (93 % of the
    burst level, 81,044 KiB/s): a refill burst at 58 s; the post-cache mean with it is the
    whole tail's, 310.6 MB over 36 s."""
    report = detect_slc_cliff(logged(
        REAL_LOGS, "fio-3.33_sabrent_rocket4plus_randrw5_qd64_j16_job8_missing_seconds_bw.8.log"))
    [burst] = report.refill_bursts
    assert burst.start_s == 58.0 and burst.duration_s == 1.0 and burst.at_end
    assert burst.bw_mbps == pytest.approx(75084 * KIB)
    assert report.post_cache_mean_bw_mbps == pytest.approx((228274 + 75084) * KIB / 36)


# --- A fall and a long return at the end: undetermined (audit) ---------------


def limits_on(tmp_path: Path, **mins: float) -> ThresholdSet:
    path = tmp_path / "limits.yaml"
    rows = ", ".join(f"{metric}: {{min: {value}}}" for metric, value in mins.items())
    path.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {kind: block}\n"
                    f"    source: test\n    limits:\n      sustained_write: {{{rows}}}\n")
    return ThresholdSet.load([path])


def test_a_long_fall_then_a_long_return_is_undetermined(tmp_path: Path) -> None:
    """10 s at 2,000 MB/s, 48 s at 500, 30 s back at 2,000: the 30 s return is a third of the
    time after the fall or more, so no cliff (which level the drive holds is not known); it
    was burst 500 MB/s (the write's median) and "cache not exhausted after 104 GB", though it
    fell after 20 GB. Now undetermined: where it fell (10 x 2,000 MB; the window at 500 wrote
    nothing beyond the level), to what (windows 12-58: 500 MB/s), back from 58 s for 30 s."""
    report = detect_slc_cliff(series(*[2000] * 10, *[500] * 48, *[2000] * 30))
    assert not report.cliff_found and report.written_bytes == 104e9
    assert report.fall == FallAndReturn(2000.0, 20_000_000_000, 10.0, 500.0, 58.0, 30.0, 2000.0)
    assert report.cache_not_exhausted_after_bytes is None
    assert report.burst_bw_mbps is None and report.sustained_bw_mbps is None
    assert report.slc_cache_bytes is None and report.metrics() == {}
    why = ("not measured (SLC cache undetermined: the write fell to 500.0 MB/s after 20,000 MB "
           "and came back to the burst level for 30.0 s, so the cache size cannot be told "
           "from this write)")
    assert report.unreached() == {"slc_cache_bytes": why, "burst_bw_mbps": why,
                                  "sustained_bw_mbps": why,
                                  "cache_not_exhausted_after_bytes": why}
    assert report.describe() == (
        "SLC cache undetermined: the write fell from 2,000.0 MB/s to 500.0 MB/s after "
        "20,000 MB (10.0 s) and came back to the burst level for 30.0 s (from 58.0 s to the "
        "end, at 2,000.0 MB/s), so the cache size cannot be told from this write: it ran out "
        "of something at 20,000 MB, but which level the drive holds is not known; no cache "
        "size, burst or sustained figure, and no 'cache not exhausted' -- write longer past "
        "the cache (the full run profile: a whole-drive fill) to find it")
    # a limit on the burst or sustained level fails, saying why -- never passes on 500 MB/s
    limits = limits_on(tmp_path, burst_bw_mbps=400, sustained_bw_mbps=400,
                       cache_not_exhausted_after_bytes=1e9)
    verdicts = judge(CATALOG["sustained_write"], report.metrics(),
                     limits.resolve(DriveFacts(None, None, kind="block")),
                     unreached=report.unreached())
    assert {v.metric: (v.status, v.measured) for v in verdicts} == {
        m: (FAIL, None) for m in ("burst_bw_mbps", "sustained_bw_mbps",
                                  "cache_not_exhausted_after_bytes")}
    [burst] = [v for v in verdicts if v.metric == "burst_bw_mbps"]
    assert burst.failed and burst.line().startswith(f"burst_bw_mbps {why}: fails the limit")


def test_the_fall_after_20_gb_with_6_s_back_is_undetermined() -> None:
    """10 s at 2,000 MB/s, 12 s at 500, 6 s back at 2,000: 6 of 18 windows after the fall,
    no cliff (above). It said "not exhausted after 38 GB"; the cache ran out at 20 GB."""
    report = detect_slc_cliff(series(*[2000] * 10, *[500] * 12, *[2000] * 6))
    assert report.fall == FallAndReturn(2000.0, 20_000_000_000, 10.0, 500.0, 22.0, 6.0, 2000.0)
    assert report.cache_not_exhausted_after_bytes is None and report.metrics() == {}
    assert report.burst_bw_mbps is None
    assert report.describe().startswith(
        "SLC cache undetermined: the write fell from 2,000.0 MB/s to 500.0 MB/s after "
        "20,000 MB (10.0 s) and came back to the burst level for 6.0 s (from 22.0 s")
    # the same with stalls in the fall and in the return: they are post-cache behaviour in
    # the fall's level (windows 12-24, the transition window left out: 11 x 500 MB over 13 s)
    # and time of the return (windows 25-31: 6 x 2,000 MB over 7 s)
    stalls = detect_slc_cliff(series(*[2000] * 10, *[500] * 6, 0, *[500] * 6, 0,
                                     *[2000] * 3, 0, *[2000] * 3))
    assert stalls.fall == FallAndReturn(2000.0, 20_000_000_000, 10.0, 500 * 11 / 13, 24.0,
                                        7.0, 12000 / 7)


def test_a_flat_write_or_a_short_dip_is_still_not_exhausted(tmp_path: Path) -> None:
    """Never fell (no cache, or one larger than the write): "not exhausted after" the bytes
    written, as before; so with a dip shorter than a burst must last (3 s at 500 in a write at
    2,000: a transient, not a fall)."""
    flat = detect_slc_cliff(series(*[2000] * 88))
    assert flat.fall is None and flat.unreached() == {}
    assert flat.metrics() == {"burst_bw_mbps": 2000, "cache_not_exhausted_after_bytes": 176e9}
    dip = detect_slc_cliff(series(*[2000] * 10, *[500] * 3, *[2000] * 30))
    assert dip.fall is None and not dip.cliff_found and dip.unreached() == {}
    assert dip.metrics() == {"burst_bw_mbps": 2000,
                             "cache_not_exhausted_after_bytes": 81.5e9}
    assert "cache not exhausted" in dip.describe()
    # a virtual target has no cache to run out of: never undetermined
    virtual = detect_slc_cliff(series(*[2000] * 10, *[500] * 48, *[2000] * 30), virtual=True)
    assert virtual.fall is None and virtual.sustained_bw_mbps == pytest.approx(104e9 / 88e6)
    # a limit on the sustained level of a flat write shows MISSING (not measured), as before
    verdicts = judge(CATALOG["sustained_write"], flat.metrics(),
                     limits_on(tmp_path, sustained_bw_mbps=400).resolve(
                         DriveFacts(None, None, kind="block")), unreached=flat.unreached())
    assert [(v.metric, v.status) for v in verdicts] == [
        ("sustained_bw_mbps", MISSING), ("burst_bw_mbps", "not_judged"),
        ("cache_not_exhausted_after_bytes", "not_judged")]
