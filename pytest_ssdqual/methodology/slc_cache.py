"""SLC-cache cliff detection on a per-window (1 s) write-bandwidth series.

Consumer TLC/QLC drives write incoming data to a cache of NAND run in SLC mode first; once it is
full, writes go at the native (much lower) TLC/QLC speed until the drive has time to fold the
cache. A sequential write from FOB across the span therefore shows a *burst* level, a *cliff*,
and a *sustained* level. This module finds them in a bandwidth log (``fio.logs``: one value per
``log_avg_msec`` window, stalls as 0):

* the cliff: the window where the write leaves the cache. For every candidate window ``c`` the
  burst level ``B`` is the median bandwidth before it and the sustained level ``S`` the median
  from it on; a candidate needs ``S < CLIFF_FRACTION * B``, and each window is then classed as
  burst speed (``>= S / CLIFF_FRACTION``) or not. The cliff is the candidate with the fewest
  windows on the wrong side (burst speed after it, below burst speed before it); on a tie the
  later one. The write must not end back at the burst level: the median of the last 3
  (non-stall) windows must be below burst speed or below ``CLIFF_FRACTION`` x ``B`` (a write
  that ends at its burst level has not left the cache; one refill burst among the last windows,
  or a drive climbing part of the way back while it folds its cache, does not hide the cliff).
  At most ``MAX_MISPLACED_SHARE`` of the windows may be on the wrong side (a noisy log that
  merely wanders between two levels has no cliff). Medians and the count make it robust to what
  fools "first fall below 70 % of the maximum": a start-up spike (the maximum is not the burst
  level), a two-tier cache (a second, slower cache tier is still far above the post-cache
  speed, so the cliff is where the write falls to that speed), refill bursts after the cliff (a
  few fast windows while the drive folds its cache are few errors, where moving the cliff after
  them costs every slow window they interrupt) and noisy single windows. Stall windows (no I/O
  completed, logged as 0: ``fio.logs``) take no part in the levels and the count, but write
  nothing.
* the burst must have lasted: a candidate counts only when the (non-stall) windows at burst
  speed before it are at least ``MIN_BURST_WINDOWS`` and either last ``MIN_BURST_S`` or more
  or make up ``MIN_BURST_SHARE`` of the write's non-stall windows. A start-up spike is short:
  the first window or few of a write can run far above the drive's level before it settles
  (the real fio-3.16 HighPoint log: 2.2-2.7 MB/s for 0.75 s, then ~1.5 MB/s for 59 s; the
  tests' DRAM-like spikes: 1-3 s). A real SLC cache on an erased drive lasts far longer: in
  reviewers' fills of erased drives (TechPowerUp's "pSLC Cache / Write Intensive Usage" pages,
  1 MB sequential writes sampled twice a second) even the caches called small there, 42-48 GB
  (Crucial MX300 525 GB, a SATA drive: ~550 MB/s at most; Corsair MP600 Elite 2 TB at
  ~4.7 GB/s), hold the burst speed for 10 s to over a minute, and most caches far longer. So a
  burst shorter than ``MIN_BURST_S`` in a long write is taken for a spike (a real cache that
  small would be missed: the report then says no cliff, and a limit on ``sustained_bw_mbps``
  fails as not measured, never passes). In a short write (the smoke profile writes for at most
  7 s) the log cannot tell a cache of 2 s from a spike of 2 s; a level held for a quarter of
  the write is not a transient at its start, so it counts (an emulated 1 GiB cache at 400 MB/s
  in the smoke profile's 7 s write: 2-3 of 7 windows; found case B23: 2 s at 400 MB/s, then
  2 s at 100 MB/s). One window is a single sample and never a burst level: a cliff after the
  first window is not reported.
* ``burst_bw_mbps``: the median bandwidth of the windows before the cliff (stalls left out).
* ``sustained_bw_mbps``: the mean bandwidth after the cliff (bytes / time, the transition
  window excluded; stalls and refill bursts count, as they are what the drive delivers).
* ``slc_cache_bytes``: bytes written before the cliff. The two windows around the transition
  are interpolated: a window whose mean bandwidth is ``b`` spent the share ``(b - S) / (B - S)``
  of its time at the burst level ``B`` (here the median of the last 5 windows before it, so a
  first cache tier does not count) and ``S``, and only what it wrote beyond ``S`` for the rest
  of the window counts, so the size is not quantised to one window of writing.

No cliff (no candidate: the bandwidth never falls to below ``CLIFF_FRACTION`` of the burst
level for the rest of the write, it ends back at the burst level, or the burst before the fall
was too short): the cache, if any, is larger
than what was written, so the post-cache speed was never seen. Neither ``slc_cache_bytes`` nor
``sustained_bw_mbps`` is reported (a limit on them shows MISSING, a failure, never a silent pass
of a burst figure); ``cache_not_exhausted_after_bytes`` says how much was written without
finding the cliff. Only a *virtual* target (a loop device, zram or a file: no SLC cache at all,
``virtual=True``) reports ``sustained_bw_mbps`` as the mean of the whole write.

Sources: the method reviewers use for "write-cache exhaustion" / "whole-drive fill" tests
(sequential 128 KiB writes from a secure-erased state, bandwidth over time); SNIA PTS Client 2.0
section "Write Saturation" for the FOB-to-steady-state progression.

Plain Python: no fio, no pytest.
"""

from __future__ import annotations

import bisect
import math
import statistics
from dataclasses import dataclass

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.series import BandwidthSeries

#: The post-cache (median) level must be below this share of the burst (median) level, and a
#: window at burst speed is one at or above the post-cache level divided by it.
CLIFF_FRACTION = 0.7

#: At most this share of the (non-stall) windows may be on the wrong side of the best split:
#: beyond it the log is noise around one level, not a burst and a post-cache level.
MAX_MISPLACED_SHARE = 1 / 3

#: A burst lasting this long (windows at burst speed before the cliff, seconds) is a cache,
#: not a start-up spike (module docstring: spikes last up to ~3 s, the smallest caches of
#: erased drives in reviewers' fills ~10 s or more).
MIN_BURST_S = 5.0

#: ... or one taking this share of the write's non-stall windows (a short write).
MIN_BURST_SHARE = 1 / 4

#: A burst level is never one window (a single sample).
MIN_BURST_WINDOWS = 2


@dataclass(frozen=True)
class SlcCacheReport:
    """What the sustained write showed.

    Attributes:
        cliff_found: the write fell from the burst level to a post-cache level below
            ``fraction`` x burst (module docstring).
        slc_cache_bytes: bytes written at the burst level before the cliff, ``None`` without one.
        cliff_t_s: seconds into the write when the burst ended (interpolated), or ``None``.
        burst_bw_mbps: median bandwidth of the windows before the cliff (of the whole write
            without one), stalls left out, decimal MB/s.
        sustained_bw_mbps: mean bandwidth after the cliff (bytes / seconds, stalls
            included), decimal MB/s; ``None`` without a
            cliff (the post-cache speed was not seen), except on a virtual target (no SLC
            cache: the whole write's mean).
        written_bytes: bytes written during the whole log.
        threshold_bw_mbps: the burst-speed threshold the cliff was judged with (post-cache
            level / ``fraction``); without a cliff ``fraction`` x the median of the write.
        fraction: the cliff fraction used.
        end_bw_mbps: mean bandwidth over the second half of the write (for the report).
        virtual: the target has no SLC cache (loop, zram, file).
    """

    cliff_found: bool
    slc_cache_bytes: int | None
    cliff_t_s: float | None
    burst_bw_mbps: float
    sustained_bw_mbps: float | None
    written_bytes: int
    threshold_bw_mbps: float
    fraction: float = CLIFF_FRACTION
    end_bw_mbps: float | None = None
    virtual: bool = False

    @property
    def cache_not_exhausted_after_bytes(self) -> int | None:
        """Bytes written without finding the cliff (``None`` when there is one)."""
        return None if self.cliff_found else self.written_bytes

    def describe(self) -> str:
        """One line for reports."""
        if not self.cliff_found:
            end = self.end_bw_mbps if self.end_bw_mbps is not None else self.burst_bw_mbps
            line = (
                f"no SLC-cache cliff within {self.written_bytes / 1e6:,.0f} MB written: "
                f"bandwidth stayed near {self.burst_bw_mbps:,.1f} MB/s (ended at "
                f"{end:,.1f} MB/s)"
            )
            if self.virtual:
                return line + "; no SLC cache (virtual target): sustained = whole-write mean"
            return (line + "; cache not exhausted: a cache, if any, is larger, so the "
                    "sustained (post-cache) speed was not measured -- write more (a larger "
                    "span or multiple) to find it")
        assert self.slc_cache_bytes is not None and self.cliff_t_s is not None
        assert self.sustained_bw_mbps is not None
        return (
            f"SLC cache {self.slc_cache_bytes / 1e6:,.0f} MB "
            f"({self.slc_cache_bytes / 2**20:,.0f} MiB): burst {self.burst_bw_mbps:,.1f} MB/s "
            f"for {self.cliff_t_s:.1f} s, then {self.sustained_bw_mbps:,.1f} MB/s sustained "
            f"(cliff: where the write drops under the burst-speed threshold "
            f"{self.threshold_bw_mbps:,.1f} MB/s; post-cache level below {self.fraction:.0%} "
            "of the burst level)"
        )

    def metrics(self) -> dict[str, float]:
        """``burst_bw_mbps``; with a cliff ``sustained_bw_mbps`` and ``slc_cache_bytes``;
        without one ``cache_not_exhausted_after_bytes`` (and, on a virtual target only,
        ``sustained_bw_mbps`` = the whole write's mean)."""
        out = {"burst_bw_mbps": self.burst_bw_mbps}
        if self.sustained_bw_mbps is not None:
            out["sustained_bw_mbps"] = self.sustained_bw_mbps
        if self.slc_cache_bytes is not None:
            out["slc_cache_bytes"] = float(self.slc_cache_bytes)
        if self.cache_not_exhausted_after_bytes is not None:
            out["cache_not_exhausted_after_bytes"] = float(self.cache_not_exhausted_after_bytes)
        return out


def running_median(values: tuple[float, ...] | list[float]) -> list[float]:
    """3-sample running median (the ends use their 2 neighbours' mean)."""
    n = len(values)
    if n < 3:
        return list(values)
    out = [(values[0] + values[1]) / 2]
    out += [statistics.median(values[i - 1:i + 2]) for i in range(1, n - 1)]
    out.append((values[-2] + values[-1]) / 2)
    return out


def detect_slc_cliff(series: BandwidthSeries, *, fraction: float = CLIFF_FRACTION,
                     virtual: bool = False) -> SlcCacheReport:
    """Find the SLC-cache cliff in a sequential write's per-window bandwidth (module docstring).

    Args:
        series: per-window write bandwidth from FOB (``fio.logs.bandwidth_series``; stall
            windows are 0).
        fraction: share of the burst level the bandwidth must fall and stay below (0-1).
        virtual: the target is a loop device, zram or a file (no SLC cache): without a cliff
            the whole write's mean is the sustained figure. A real or emulated drive must show
            the cliff for ``sustained_bw_mbps`` to be reported.

    Raises:
        ValueError: ``fraction`` outside (0, 1).
        FioOutputError: an empty series, a non-finite or negative bandwidth, or only stalls
            (fio logged no write I/O).
    """
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction}")
    raw = list(series.bw_mbps)
    n = len(raw)
    if n == 0:
        raise FioOutputError("the sustained write measured no I/O: empty bandwidth series "
                             "(fio logged no write interval)")
    if not all(math.isfinite(v) and v >= 0 for v in raw):
        raise FioOutputError("the sustained write's bandwidth log holds a non-finite or "
                             f"negative value: {raw}")
    if not any(raw):
        raise FioOutputError("the sustained write measured no I/O: every window of the "
                             "bandwidth log is a stall (no write completed)")
    durations = series.durations_s
    per_interval = series.bytes_per_interval()
    written = int(sum(per_interval))
    cliff, threshold = _find_cliff(raw, fraction, statistics.median(durations))
    if cliff is None:
        half = raw[n // 2:] or raw
        mean = written / 1e6 / sum(durations)
        return SlcCacheReport(False, None, None, statistics.median(v for v in raw if v > 0),
                              mean if virtual else None, written, threshold, fraction,
                              end_bw_mbps=statistics.fmean(half), virtual=virtual)
    # Windows cliff-1 and cliff hold the transition; those before it are all burst.
    before = [v for v in raw[:cliff - 1] if v > 0] or [raw[0]]
    after = [v for v in raw[cliff + 1:] if v > 0] or [raw[cliff]]
    local_burst, sustained_level = statistics.median(before[-5:]), statistics.median(after)
    cache_bytes = sum(per_interval[:cliff - 1])
    cliff_t = sum(durations[:cliff - 1])
    for i in (cliff - 1, cliff):
        share = _burst_share(raw[i], local_burst, sustained_level)
        # what the window wrote, less its share at the sustained level
        cache_bytes += max(0.0, per_interval[i] - (1 - share) * sustained_level * 1e6
                           * durations[i])
        cliff_t += share * durations[i]
    tail_bytes, tail_s = sum(per_interval[cliff + 1:]), sum(durations[cliff + 1:])
    sustained = tail_bytes / 1e6 / tail_s if tail_s > 0 else raw[cliff]
    return SlcCacheReport(True, int(round(cache_bytes)), cliff_t, statistics.median(before),
                          sustained, written, threshold, fraction)


def _find_cliff(raw: list[float], fraction: float,
                window_s: float) -> tuple[int | None, float]:
    """``(c, threshold)``: the index of the first window after the cliff (``None``: no cliff)
    and the burst-speed threshold ``S / fraction`` it was judged with (without a cliff,
    ``fraction`` x the median of the whole write, for the report). ``window_s``: the length of
    a window (the burst's duration is its count of windows at burst speed times it).

    O(n log n): the medians and counts come from sorted prefix and suffix lists of the non-stall
    windows (a stall is logged as 0)."""
    n = len(raw)
    active = [v for v in raw if v > 0]
    end_level = statistics.median(active[-3:])
    min_windows = max(MIN_BURST_WINDOWS, min(math.ceil(MIN_BURST_S / window_s - 1e-9),
                                             math.ceil(MIN_BURST_SHARE * len(active) - 1e-9)))
    # right to left: sustained level S(c), threshold T(c) and windows at burst speed from c on
    suffix: list[float] = []
    thresholds: list[float | None] = [None] * n
    errors_after = [0] * n
    for c in range(n - 1, 0, -1):
        if raw[c] > 0:
            bisect.insort(suffix, raw[c])
        if suffix:
            t = _median_sorted(suffix) / fraction
            thresholds[c] = t
            errors_after[c] = len(suffix) - bisect.bisect_left(suffix, t)
    # left to right: burst level B(c) and windows below burst speed before c
    prefix: list[float] = []
    best: tuple[int, int] | None = None  # (errors, -c)
    for c in range(1, n):
        if raw[c - 1] > 0:
            bisect.insort(prefix, raw[c - 1])
        threshold_c = thresholds[c]
        if threshold_c is None or not prefix:
            continue
        burst_c = _median_sorted(prefix)
        if threshold_c >= burst_c:  # no real drop: S = fraction * T must be < fraction * B
            continue
        if end_level >= max(threshold_c, fraction * burst_c):  # ends back at the burst level
            continue
        slow_before = bisect.bisect_left(prefix, threshold_c)
        if len(prefix) - slow_before < min_windows:  # too short a burst: a start-up spike
            continue
        key = (slow_before + errors_after[c], -c)
        if best is None or key < best:
            best = key
    if best is None or best[0] > MAX_MISPLACED_SHARE * len(active):
        return None, fraction * statistics.median(active)
    cliff = -best[1]
    threshold = thresholds[cliff]
    assert threshold is not None
    return cliff, threshold


def _median_sorted(values: list[float]) -> float:
    """Median of an already sorted, non-empty list."""
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def _burst_share(bw: float, burst: float, sustained: float) -> float:
    """Share of an interval spent at the burst level, from its mean bandwidth ``bw``."""
    if burst <= sustained:
        return 1.0 if bw >= burst else 0.0
    return min(1.0, max(0.0, (bw - sustained) / (burst - sustained)))
