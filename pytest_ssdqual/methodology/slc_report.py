"""What a sustained write showed about the SLC cache (``slc_cache.detect_slc_cliff``'s result):
the cliff and the levels around it, the refill bursts after it, or why there is no cliff, told
as a report line, metrics and the reasons a metric has no value (``unreached``).

Three outcomes (``slc_cache``'s module docstring is the spec):

* a cliff: ``slc_cache_bytes``, ``burst_bw_mbps`` and ``sustained_bw_mbps``;
* no cliff, the write never fell (a cache, if any, larger than the write):
  ``burst_bw_mbps`` (the write's median) and ``cache_not_exhausted_after_bytes``;
* undetermined (``FallAndReturn``): the write fell well below its early level for a stretch
  that is no transient, then came back to that level at its end for as long as a burst must
  last. The drive ran out of something, so "not exhausted" would be false, but which level it
  holds is not known, so no burst, sustained or cache figure either: a limit on any of the
  four fails with the reason (``unreached``, as ``recovery.RecoveryMetrics.unreached``).

Plain Python: no fio, no pytest.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The four figures of the sustained write (``catalog.workloads.SUSTAINED_WRITE_METRICS``).
_FIGURES = ("slc_cache_bytes", "burst_bw_mbps", "sustained_bw_mbps",
            "cache_not_exhausted_after_bytes")


@dataclass(frozen=True)
class RefillBurst:
    """A stretch of consecutive windows after the cliff back at the burst level (``slc_cache``
    module docstring): the drive wrote to its SLC cache again for a while.

    Attributes:
        start_s: seconds into the write when it began (a window boundary).
        duration_s: its length, seconds (whole windows).
        bw_mbps: its mean bandwidth, decimal MB/s.
        at_end: it lasted to the end of the write (stall windows after it aside).
    """

    start_s: float
    duration_s: float
    bw_mbps: float
    at_end: bool = False

    def describe(self) -> str:
        """``2.0 s from 58.0 s at 2,000.0 MB/s``."""
        return (f"{self.duration_s:.1f} s from {self.start_s:.1f} s at "
                f"{self.bw_mbps:,.1f} MB/s")


@dataclass(frozen=True)
class FallAndReturn:
    """A write without a cliff that fell from its early level to one below ``fraction`` of it
    for a stretch that is no transient, then came back to the early level at its end for as
    long as a burst must last (``slc_cache`` module docstring): which level the drive holds is
    not known, so the cache size cannot be told from this write (10 s at 2,000 MB/s, 48 s at
    500, 30 s at 2,000: fell after 20 GB, back for 30 s).

    Attributes:
        before_bw_mbps: median bandwidth before the fall (stalls left out), decimal MB/s.
        fell_after_bytes: bytes written before the fall (interpolated as ``slc_cache_bytes``).
        fell_at_s: seconds into the write when it fell (interpolated).
        low_bw_mbps: the level it fell to, computed as ``sustained_bw_mbps`` on the write up to
            the return (mean bandwidth after the fall, stalls in, refill bursts out), MB/s.
        back_at_s: seconds into the write when it came back (a window boundary).
        back_s: seconds from then to the end of the write.
        back_bw_mbps: mean bandwidth from then to the end (stalls included), decimal MB/s.
    """

    before_bw_mbps: float
    fell_after_bytes: int
    fell_at_s: float
    low_bw_mbps: float
    back_at_s: float
    back_s: float
    back_bw_mbps: float

    def reason(self) -> str:
        """Why the sustained write's figures have no value (``SlcCacheReport.unreached``)."""
        return (f"not measured (SLC cache undetermined: the write fell to "
                f"{self.low_bw_mbps:,.1f} MB/s after {self.fell_after_bytes / 1e6:,.0f} MB and "
                f"came back to the burst level for {self.back_s:.1f} s, so the cache size cannot "
                "be told from this write)")

    def describe(self) -> str:
        """The report line."""
        return (
            f"SLC cache undetermined: the write fell from {self.before_bw_mbps:,.1f} MB/s to "
            f"{self.low_bw_mbps:,.1f} MB/s after {self.fell_after_bytes / 1e6:,.0f} MB "
            f"({self.fell_at_s:.1f} s) and came back to the burst level for {self.back_s:.1f} s "
            f"(from {self.back_at_s:.1f} s to the end, at {self.back_bw_mbps:,.1f} MB/s), so "
            "the cache size cannot be told from this write: it ran out of something at "
            f"{self.fell_after_bytes / 1e6:,.0f} MB, but which level the drive holds is not "
            "known; no cache size, burst or sustained figure, and no 'cache not exhausted' -- "
            "write longer past the cache (the full run profile: a whole-drive fill) to find it"
        )


@dataclass(frozen=True)
class SlcCacheReport:
    """What the sustained write showed.

    Attributes:
        cliff_found: the write fell from the burst level to a post-cache level below
            ``fraction`` x burst (``slc_cache`` module docstring).
        slc_cache_bytes: bytes written at the burst level before the cliff, ``None`` without one.
        cliff_t_s: seconds into the write when the burst ended (interpolated), or ``None``.
        burst_bw_mbps: median bandwidth of the windows before the cliff (of the whole write
            without one), stalls left out, decimal MB/s; ``None`` when undetermined (``fall``).
        sustained_bw_mbps: the post-cache level: mean bandwidth after the cliff (bytes /
            seconds, stalls included, refill bursts left out), decimal MB/s; ``None`` without a
            cliff (the post-cache speed was not seen), except on a virtual target (no SLC
            cache: the whole write's mean).
        written_bytes: bytes written during the whole log.
        threshold_bw_mbps: the burst-speed threshold the cliff was judged with (post-cache
            level / ``fraction``); without a cliff ``fraction`` x the median of the write.
        fraction: the cliff fraction used.
        end_bw_mbps: mean bandwidth over the second half of the write (for the report).
        virtual: the target has no SLC cache (loop, zram, file).
        refill_bursts: the stretches after the cliff back at the burst level (``slc_cache``
            module docstring), in order; empty without a cliff or without any.
        post_cache_mean_bw_mbps: mean bandwidth of every window after the cliff (refill
            bursts and stalls included), decimal MB/s; ``None`` without a cliff.
        refill_bw_mbps: the level a window must reach to be part of a refill burst (at
            burst speed and ``fraction`` x the burst level or more); ``None`` without a cliff.
        fall: no cliff, but the write fell and came back at its end (``FallAndReturn``): the
            cache size is undetermined; ``None`` otherwise.
    """

    cliff_found: bool
    slc_cache_bytes: int | None
    cliff_t_s: float | None
    burst_bw_mbps: float | None
    sustained_bw_mbps: float | None
    written_bytes: int
    threshold_bw_mbps: float
    fraction: float
    end_bw_mbps: float | None = None
    virtual: bool = False
    refill_bursts: tuple[RefillBurst, ...] = ()
    post_cache_mean_bw_mbps: float | None = None
    refill_bw_mbps: float | None = None
    fall: FallAndReturn | None = None

    @property
    def cache_not_exhausted_after_bytes(self) -> int | None:
        """Bytes written without finding the cliff (``None`` when there is one, and when the
        write fell and came back: ``fall``, it did exhaust something)."""
        return None if self.cliff_found or self.fall is not None else self.written_bytes

    def describe(self) -> str:
        """One line for reports."""
        if self.fall is not None:
            return self.fall.describe()
        assert self.burst_bw_mbps is not None
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
        line = (
            f"SLC cache {self.slc_cache_bytes / 1e6:,.0f} MB "
            f"({self.slc_cache_bytes / 2**20:,.0f} MiB): burst {self.burst_bw_mbps:,.1f} MB/s "
            f"for {self.cliff_t_s:.1f} s, then {self.sustained_bw_mbps:,.1f} MB/s sustained "
            f"(cliff: where the write drops under the burst-speed threshold "
            f"{self.threshold_bw_mbps:,.1f} MB/s; post-cache level below {self.fraction:.0%} "
            "of the burst level)"
        )
        if not self.refill_bursts:
            return line
        assert self.refill_bw_mbps is not None and self.post_cache_mean_bw_mbps is not None
        count = len(self.refill_bursts)
        bursts = ", ".join(b.describe() for b in self.refill_bursts[:5])
        more = f" and {count - 5} more" if count > 5 else ""
        last = self.refill_bursts[-1]
        at_end = " (the last at the end of the write)" if last.at_end else ""
        return (f"{line}; {count} refill burst{'s' if count != 1 else ''} after the cliff, "
                f"back at the burst level (>= {self.refill_bw_mbps:,.1f} MB/s) while the "
                f"drive folds its cache: {bursts}{more}{at_end}; not part of the sustained "
                f"level (with them the post-cache mean is "
                f"{self.post_cache_mean_bw_mbps:,.1f} MB/s)")

    def metrics(self) -> dict[str, float]:
        """``burst_bw_mbps``; with a cliff ``sustained_bw_mbps`` and ``slc_cache_bytes``;
        without one ``cache_not_exhausted_after_bytes`` (and, on a virtual target only,
        ``sustained_bw_mbps`` = the whole write's mean); undetermined (``fall``): none of
        them (see :meth:`unreached`)."""
        out: dict[str, float] = {}
        if self.burst_bw_mbps is not None:
            out["burst_bw_mbps"] = self.burst_bw_mbps
        if self.sustained_bw_mbps is not None:
            out["sustained_bw_mbps"] = self.sustained_bw_mbps
        if self.slc_cache_bytes is not None:
            out["slc_cache_bytes"] = float(self.slc_cache_bytes)
        if self.cache_not_exhausted_after_bytes is not None:
            out["cache_not_exhausted_after_bytes"] = float(self.cache_not_exhausted_after_bytes)
        return out

    def unreached(self) -> dict[str, str]:
        """Metric -> why it has no value, when undetermined (``fall``): a limit on it then
        fails with that reason (``thresholds.verdict.judge``), never passes; else ``{}``."""
        if self.fall is None:
            return {}
        return dict.fromkeys(_FIGURES, self.fall.reason())
