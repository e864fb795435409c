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
  later one. The write must not end back at the burst level: a window is *back at the burst
  level* when it is at burst speed and at ``CLIFF_FRACTION`` x ``B`` or more, and the write
  ends there when its trailing stretch of such windows (stalls skipped) both lasts as long as
  a burst must (``MIN_BURST_WINDOWS`` / ``MIN_BURST_S`` / ``MIN_BURST_SHARE``, below: a shorter
  return is a transient, as a start-up spike is) and makes up ``MAX_MISPLACED_SHARE`` or more
  of it and the windows below burst speed after the candidate together (the drive is back at
  its burst level for a good part of the time after the fall, so which level it holds is not
  known: 10 s at 2,000 MB/s, 12 s at 500, 6 s at 2,000 has no cliff but is undetermined,
  below; with 13 s at 500 it has one). A short refill burst at the end of a long post-cache
  phase (10 s at 2,000 MB/s, 48 s at 500, 2 s back at 2,000: a drive folding its cache)
  therefore keeps its cliff and is reported as a refill burst; so does a drive climbing part
  of the way back at the end (not to the burst level, so not a refill burst either:
  post-cache speed). At most
  ``MAX_MISPLACED_SHARE`` of the windows may be on the wrong side (a noisy log that merely
  wanders between two levels has no cliff). Medians and the count make it robust to what
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
* ``sustained_bw_mbps``: the post-cache level: the mean bandwidth after the cliff (bytes /
  time, the transition window excluded) of the windows that are not *refill bursts*. A refill
  burst is a stretch of windows after the cliff back at the burst level (at burst speed and at
  ``CLIFF_FRACTION`` x the burst level or more): the drive has folded part of its cache and
  writes to SLC again for a while (mid-write, or at the end of the write). Reviewers' sustained
  write charts (AnandTech's and Tom's Hardware's whole-drive fills, TechPowerUp's pSLC pages)
  quote the level the drive holds after its cache, with such recoveries named apart, not
  averaged into it; so the bursts are listed in the report (``refill_bursts``: when, how long,
  how fast) and left out of the level. Stalls (no I/O completed) and a climb part of the way
  back count: they are what the drive delivers in its post-cache state.
  ``post_cache_mean_bw_mbps`` is the mean of every window after the cliff, refill bursts
  included (the report line gives it when there were any).
* ``slc_cache_bytes``: bytes written before the cliff. The two windows around the transition
  are interpolated: a window whose mean bandwidth is ``b`` spent the share ``(b - S) / (B - S)``
  of its time at the burst level ``B`` (here the median of the last 5 windows before it, so a
  first cache tier does not count) and ``S``, and only what it wrote beyond ``S`` for the rest
  of the window counts, so the size is not quantised to one window of writing.

No cliff (no candidate: the bandwidth never falls to below ``CLIFF_FRACTION`` of the burst
level for the rest of the write, it ends back at the burst level, or the burst before the fall
was too short), one of two (``slc_report`` holds the result and its texts):

* *undetermined*: the write **fell and came back** (``slc_report.FallAndReturn``). The end
  level is the median of the last windows a burst must last (``MIN_BURST_*``); the return is
  the non-stall windows after the last one below ``CLIFF_FRACTION`` x it, as many as a burst
  must last or more; the write up to the return has a cliff (found as above, its burst as long
  as the whole write's must be), ``MIN_BURST_*`` windows or more below burst speed after it (a
  fall, not a dip), and the end level is back at the burst level (at burst speed and
  ``CLIFF_FRACTION`` x the burst level or more). The drive ran out of something where it fell
  (10 s at 2,000 MB/s, 48 s at 500, 30 s at 2,000: after 20 GB; so 10 s, 12 s, 6 s above),
  so "not exhausted after 104 GB" would be false, and which level it holds is not known, so
  the write's median (500 MB/s there) is no burst level either: no ``slc_cache_bytes``,
  ``burst_bw_mbps``, ``sustained_bw_mbps`` or ``cache_not_exhausted_after_bytes``; a limit on
  any of them fails with the reason (``SlcCacheReport.unreached``), and the note says what it
  fell to, after how many bytes, and how long it was back, and asks for a longer write past
  the cache (the ``full`` run profile: a whole-drive fill, as AnandTech's and Tom's
  Hardware's, above).
* otherwise the cache, if any, is larger than what was written (a flat write, or one that
  fell for a transient only), so the post-cache speed was never seen. Neither
  ``slc_cache_bytes`` nor ``sustained_bw_mbps`` is reported (a limit on them shows MISSING, a
  failure, never a silent pass of a burst figure); ``cache_not_exhausted_after_bytes`` says
  how much was written without finding the cliff.

Only a *virtual* target (a loop device, zram or a file: no SLC cache at all,
``virtual=True``) reports ``sustained_bw_mbps`` as the mean of the whole write (never
undetermined: it has no cache to run out of).

Sources: the method reviewers use for "write-cache exhaustion" / "whole-drive fill" tests
(sequential 128 KiB writes from a secure-erased state, bandwidth over time); SNIA PTS Client 2.0
section "Write Saturation" for the FOB-to-steady-state progression.

Plain Python: no fio, no pytest.
"""

from __future__ import annotations

import bisect
import math
import statistics

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.series import BandwidthSeries
from pytest_ssdqual.methodology.slc_report import FallAndReturn, RefillBurst, SlcCacheReport

__all__ = ["CLIFF_FRACTION", "MAX_MISPLACED_SHARE", "MIN_BURST_S", "MIN_BURST_SHARE",
           "MIN_BURST_WINDOWS", "FallAndReturn", "RefillBurst", "SlcCacheReport",
           "detect_slc_cliff", "running_median"]

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
    window_s = statistics.median(durations)
    cliff, threshold = _find_cliff(raw, fraction, window_s)
    if cliff is not None:
        return _cliff_report(raw, durations, per_interval, cliff, threshold, fraction)
    fall = None if virtual else _fall_and_return(raw, durations, per_interval, fraction,
                                                 window_s)
    mean = written / 1e6 / sum(durations)
    median = statistics.median(v for v in raw if v > 0)  # no burst level when undetermined
    return SlcCacheReport(False, None, None, median if fall is None else None,
                          mean if virtual else None, written, threshold, fraction,
                          end_bw_mbps=statistics.fmean(raw[n // 2:] or raw), virtual=virtual,
                          fall=fall)


def _cliff_report(raw: list[float], durations: tuple[float, ...],
                  per_interval: tuple[float, ...], cliff: int, threshold: float,
                  fraction: float) -> SlcCacheReport:
    """The report of a write with its cliff at window ``cliff``, judged with ``threshold``
    (``_find_cliff``)."""
    n = len(raw)
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
    burst_level = statistics.median(before)
    refill_level = max(threshold, fraction * burst_level)
    tail = range(cliff + 1, n)
    tail_bytes, tail_s = sum(per_interval[cliff + 1:]), sum(durations[cliff + 1:])
    post_mean = tail_bytes / 1e6 / tail_s if tail_s > 0 else raw[cliff]
    level_windows = [i for i in tail if raw[i] < refill_level]
    level_s = sum(durations[i] for i in level_windows)
    sustained = (sum(per_interval[i] for i in level_windows) / 1e6 / level_s if level_s > 0
                 else post_mean)
    refills = _refill_bursts(raw, durations, per_interval, cliff + 1, refill_level)
    return SlcCacheReport(True, int(round(cache_bytes)), cliff_t, burst_level,
                          sustained, int(sum(per_interval)), threshold, fraction,
                          refill_bursts=refills, post_cache_mean_bw_mbps=post_mean,
                          refill_bw_mbps=refill_level)


def _fall_and_return(raw: list[float], durations: tuple[float, ...],
                     per_interval: tuple[float, ...], fraction: float,
                     window_s: float) -> FallAndReturn | None:
    """The fall and return of a write without a cliff (module docstring), ``None`` when it has
    none. The return: the non-stall windows after the last one below ``fraction`` x the end
    level (the median of the last windows a burst must last); the fall: the cliff of the write
    up to the return, found as in a whole write (a burst of the whole write's length first)."""
    active = [i for i, v in enumerate(raw) if v > 0]
    need = _min_windows(len(active), window_s)
    end_level = statistics.median(raw[i] for i in active[-need:])
    slow = [i for i in active if raw[i] < fraction * end_level]
    back_windows = [i for i in active if slow and i > slow[-1]]
    if len(back_windows) < need:  # never fell, or back for less than a burst: a transient
        return None
    back = back_windows[0]
    cliff, threshold = _find_cliff(raw[:back], fraction, window_s, need)
    if cliff is None:
        return None
    fell = _cliff_report(raw[:back], durations[:back], per_interval[:back], cliff, threshold,
                         fraction)
    assert fell.refill_bw_mbps is not None and fell.burst_bw_mbps is not None
    assert fell.slc_cache_bytes is not None and fell.cliff_t_s is not None
    assert fell.sustained_bw_mbps is not None
    low = sum(1 for v in raw[cliff:back] if 0 < v < threshold)  # below burst speed
    if end_level < fell.refill_bw_mbps or low < need:  # not back to the burst level, a dip
        return None
    back_s = sum(durations[back:])
    return FallAndReturn(fell.burst_bw_mbps, fell.slc_cache_bytes, fell.cliff_t_s,
                         fell.sustained_bw_mbps, sum(durations[:back]), back_s,
                         sum(per_interval[back:]) / 1e6 / back_s)


def _refill_bursts(raw: list[float], durations: tuple[float, ...],
                   per_interval: tuple[float, ...], start: int,
                   level: float) -> tuple[RefillBurst, ...]:
    """The runs of consecutive windows from index ``start`` on at ``level`` MB/s or more (a
    stall ends a run)."""
    out: list[RefillBurst] = []
    last_active = max(i for i, v in enumerate(raw) if v > 0)
    i, n = start, len(raw)
    while i < n:
        if raw[i] < level:
            i += 1
            continue
        j = i
        while j < n and raw[j] >= level:
            j += 1
        run_s = sum(durations[i:j])
        out.append(RefillBurst(sum(durations[:i]), run_s,
                               sum(per_interval[i:j]) / 1e6 / run_s if run_s > 0 else raw[i],
                               at_end=j > last_active))
        i = j
    return tuple(out)


def _find_cliff(raw: list[float], fraction: float, window_s: float,
                min_windows: int | None = None) -> tuple[int | None, float]:
    """``(c, threshold)``: the index of the first window after the cliff (``None``: no cliff)
    and the burst-speed threshold ``S / fraction`` it was judged with (without a cliff,
    ``fraction`` x the median of the whole write, for the report). ``window_s``: the length of
    a window (the burst's duration is its count of windows at burst speed times it);
    ``min_windows``: the windows a burst must last (default: ``_min_windows`` of this write).

    O(n log n): the medians and counts come from sorted prefix and suffix lists of the non-stall
    windows (a stall is logged as 0)."""
    n = len(raw)
    active = [v for v in raw if v > 0]
    # trailing_min[k - 1]: the slowest of the last k non-stall windows (non-increasing in k),
    # so the trailing stretch at or above x holds the k with trailing_min[k - 1] >= x
    trailing_min_neg: list[float] = []  # negated: non-decreasing, for bisect
    for v in reversed(active):
        trailing_min_neg.append(max(-v, trailing_min_neg[-1]) if trailing_min_neg else -v)
    if min_windows is None:
        min_windows = _min_windows(len(active), window_s)
    # right to left: sustained level S(c), threshold T(c) and windows at burst speed from c on
    suffix: list[float] = []
    thresholds: list[float | None] = [None] * n
    errors_after = [0] * n
    len_after = [0] * n  # non-stall windows from c on
    for c in range(n - 1, 0, -1):
        if raw[c] > 0:
            bisect.insort(suffix, raw[c])
        len_after[c] = len(suffix)
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
        # ends back at the burst level: a trailing return as long as a burst, and a third or
        # more of it and the slow windows after c together (a shorter one is a refill burst
        # and keeps the cliff)
        trailing = min(len_after[c], bisect.bisect_right(
            trailing_min_neg, -max(threshold_c, fraction * burst_c)))
        slow_after = len_after[c] - errors_after[c]
        if trailing >= min_windows and trailing >= MAX_MISPLACED_SHARE * (trailing + slow_after):
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


def _min_windows(active: int, window_s: float) -> int:
    """The non-stall windows a burst (or a return to it) must last in a write of ``active``
    non-stall windows of ``window_s`` seconds (``MIN_BURST_*``, module docstring)."""
    return max(MIN_BURST_WINDOWS, min(math.ceil(MIN_BURST_S / window_s - 1e-9),
                                      math.ceil(MIN_BURST_SHARE * active - 1e-9)))


def _median_sorted(values: list[float]) -> float:
    """Median of an already sorted, non-empty list."""
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def _burst_share(bw: float, burst: float, sustained: float) -> float:
    """Share of an interval spent at the burst level, from its mean bandwidth ``bw``."""
    if burst <= sustained:
        return 1.0 if bw >= burst else 0.0
    return min(1.0, max(0.0, (bw - sustained) / (burst - sustained)))
