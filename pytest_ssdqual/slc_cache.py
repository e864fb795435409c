"""SLC-cache cliff detection on a per-second write-bandwidth series.

Consumer TLC/QLC drives write incoming data to a cache of NAND run in SLC mode first; once it is
full, writes go at the native (much lower) TLC/QLC speed until the drive has time to fold the
cache. A sequential write from FOB across the span therefore shows a *burst* level, a *cliff*,
and a *sustained* level. This module finds them in a 1-second bandwidth log:

* ``burst_bw_mbps``: mean bandwidth before the cliff.
* the cliff: the first second after which the bandwidth stays below ``CLIFF_FRACTION`` of the
  burst level to the end of the write (judged on a 3-sample running median, so one noisy second
  neither makes nor hides a cliff).
* ``sustained_bw_mbps``: mean bandwidth after the cliff (the transition second excluded).
* ``slc_cache_bytes``: bytes written before the cliff. The two seconds around the transition are
  interpolated: a second whose mean bandwidth is ``b`` spent the share
  ``(b - S) / (B - S)`` of its time at the burst level ``B`` (``S``: the sustained level; both
  medians, so one odd second does not shift them), and only what it wrote beyond ``S`` for the
  rest of the second counts, so the size is not quantised to one second of writing.

No cliff (the bandwidth never falls and stays below the fraction): the cache, if any, is larger
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

import math
import statistics
from dataclasses import dataclass

from .errors import FioOutputError
from .fio.logs import BandwidthSeries

#: The bandwidth must fall and stay below this share of the burst level to count as the cliff.
CLIFF_FRACTION = 0.7


@dataclass(frozen=True)
class SlcCacheReport:
    """What the sustained write showed.

    Attributes:
        cliff_found: the bandwidth fell and stayed below ``fraction`` x burst.
        slc_cache_bytes: bytes written at the burst level before the cliff, ``None`` without one.
        cliff_t_s: seconds into the write when the burst ended (interpolated), or ``None``.
        burst_bw_mbps: mean bandwidth before the cliff, decimal MB/s.
        sustained_bw_mbps: mean bandwidth after the cliff, decimal MB/s; ``None`` without a
            cliff (the post-cache speed was not seen), except on a virtual target (no SLC
            cache: the whole write's mean).
        written_bytes: bytes written during the whole log.
        threshold_bw_mbps: ``fraction`` x the burst level used to find the cliff.
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
            f"(cliff: below {self.fraction:.0%} of the burst level to the end)"
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
    """Find the SLC-cache cliff in a sequential write's per-second bandwidth.

    Args:
        series: per-second write bandwidth from FOB (``fio.logs.bandwidth_series``).
        fraction: share of the burst level the bandwidth must fall and stay below (0-1).
        virtual: the target is a loop device, zram or a file (no SLC cache): without a cliff
            the whole write's mean is the sustained figure. A real or emulated drive must show
            the cliff for ``sustained_bw_mbps`` to be reported.

    Raises:
        ValueError: ``fraction`` outside (0, 1).
        FioOutputError: an empty series or a non-finite bandwidth (fio logged no write I/O).
    """
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be between 0 and 1, got {fraction}")
    raw = list(series.bw_mbps)
    n = len(raw)
    if n == 0:
        raise FioOutputError("the sustained write measured no I/O: empty bandwidth series "
                             "(fio logged no write interval)")
    if not all(math.isfinite(v) for v in raw):
        raise FioOutputError(f"the sustained write's bandwidth log holds a non-finite value: {raw}")
    durations = series.durations_s
    per_interval = series.bytes_per_interval()
    written = int(sum(per_interval))
    smooth = running_median(raw)
    threshold = fraction * max(smooth)
    cliff = n
    while cliff > 0 and smooth[cliff - 1] < threshold:
        cliff -= 1
    if cliff == n or cliff == 0:  # still fast at the end (or never fast): no cliff
        half = raw[n // 2:] or raw
        mean = statistics.fmean(raw)
        return SlcCacheReport(False, None, None, mean, mean if virtual else None, written,
                              threshold, fraction, end_bw_mbps=statistics.fmean(half),
                              virtual=virtual)
    # The smoothed series lags or leads the raw one by a sample around a clean step.
    while cliff > 1 and raw[cliff - 1] < threshold:
        cliff -= 1
    while cliff < n - 1 and raw[cliff] >= threshold:
        cliff += 1
    # Seconds cliff-1 and cliff hold the transition; those before it are all burst.
    before, after = raw[:cliff - 1] or raw[:1], raw[cliff + 1:] or raw[cliff:]
    burst_level, sustained_level = statistics.median(before), statistics.median(after)
    cache_bytes = sum(per_interval[:cliff - 1])
    cliff_t = sum(durations[:cliff - 1])
    for i in (cliff - 1, cliff):
        share = _burst_share(raw[i], burst_level, sustained_level)
        # what the second wrote, less its share at the sustained level
        cache_bytes += max(0.0, per_interval[i] - (1 - share) * sustained_level * 1e6
                           * durations[i])
        cliff_t += share * durations[i]
    return SlcCacheReport(True, int(round(cache_bytes)), cliff_t, statistics.fmean(before),
                          statistics.fmean(after), written, threshold, fraction)


def _burst_share(bw: float, burst: float, sustained: float) -> float:
    """Share of an interval spent at the burst level, from its mean bandwidth ``bw``."""
    if burst <= sustained:
        return 1.0 if bw >= burst else 0.0
    return min(1.0, max(0.0, (bw - sustained) / (burst - sustained)))
