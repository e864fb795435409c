"""Time series read from fio's per-interval logs, in the project's units.

``Series``: one value per log window (seconds, decimal MB/s, IOPS or microseconds), with the
windows in which fio logged nothing (``LogGaps``: each ``Stall``, repeated stamps).
``BandwidthSeries``: a bandwidth series with the bytes each interval moved. ``fio.logs`` builds
them from the log files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["BandwidthSeries", "LogGaps", "Series", "Stall"]


@dataclass(frozen=True)
class Stall:
    """A stretch of consecutive windows in which fio logged no line (no I/O completed).

    Attributes:
        start_s, end_s: seconds since the job started (window boundaries).
    """

    start_s: float
    end_s: float

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True)
class LogGaps:
    """What the log said about itself besides its figures.

    Attributes:
        window_s: the logging window (fio ``log_avg_msec``), seconds.
        stalls: stretches of windows with no line (no completed I/O), in order.
        repeated_lines: lines that repeated a window already logged by the same job (fio <= 3.24),
            averaged into it.
    """

    window_s: float
    stalls: tuple[Stall, ...] = ()
    repeated_lines: int = 0

    @property
    def stall_count(self) -> int:
        return len(self.stalls)

    @property
    def longest_stall_s(self) -> float:
        """The longest stall in seconds, 0.0 without one."""
        return max((s.duration_s for s in self.stalls), default=0.0)

    @property
    def stalled_s(self) -> float:
        """Seconds without a completed I/O, all stalls together."""
        return sum(s.duration_s for s in self.stalls)

    def describe(self) -> str:
        """One line for reports, e.g. ``2 stalls (no I/O completed), longest 4.0 s at 5.5 s``."""
        parts = []
        if self.stalls:
            longest = max(self.stalls, key=lambda s: s.duration_s)
            parts.append(
                f"{self.stall_count} stall{'s' if self.stall_count != 1 else ''} (no I/O "
                f"completed for a whole {self.window_s:g} s window or more), {self.stalled_s:g} s "
                f"in all, longest {longest.duration_s:g} s from {longest.start_s:g} s"
            )
        else:
            parts.append("no stalls")
        if self.repeated_lines:
            parts.append(f"{self.repeated_lines} repeated log line(s) of one window averaged "
                         "(fio <= 3.24 repeats stamps)")
        return "; ".join(parts)


@dataclass(frozen=True)
class Series:
    """A per-interval series of one figure.

    Attributes:
        t_s: end of each interval, seconds since the job started (increasing).
        values: the figure in each interval, in ``unit`` (0 in a stall window of a bandwidth or
            IOPS series).
        unit: ``MB/s`` (decimal), ``IOPS`` or ``us``.
        interval_s: length of each interval in seconds; ``None``: from the stamps (the first
            interval starts at 0).
        gaps: stalls and repeated lines found in the log (``None`` for a series built by hand).
    """

    t_s: tuple[float, ...]
    values: tuple[float, ...]
    unit: str
    interval_s: tuple[float, ...] | None = None
    gaps: LogGaps | None = None

    def __len__(self) -> int:
        return len(self.values)

    @property
    def durations_s(self) -> tuple[float, ...]:
        """Length of each interval in seconds."""
        if self.interval_s is not None:
            return self.interval_s
        starts = (0.0, *self.t_s[:-1])
        return tuple(end - start for start, end in zip(starts, self.t_s, strict=True))

    def shifted(self, offset_s: float) -> Series:
        """The same series with ``offset_s`` added to every time (to lay phases end to end)."""
        gaps = self.gaps and replace(self.gaps, stalls=tuple(
            Stall(s.start_s + offset_s, s.end_s + offset_s) for s in self.gaps.stalls))
        return Series(tuple(t + offset_s for t in self.t_s), self.values, self.unit,
                      self.durations_s, gaps)


@dataclass(frozen=True)
class BandwidthSeries:
    """Per-window bandwidth of one direction.

    Attributes:
        t_s: end of each interval, seconds since the job started.
        bw_mbps: decimal MB/s in each interval (0 in a stall window).
        interval_s: length of each interval; ``None``: from the stamps.
        gaps: stalls and repeated lines found in the log, ``None`` when built by hand.
    """

    t_s: tuple[float, ...]
    bw_mbps: tuple[float, ...]
    interval_s: tuple[float, ...] | None = None
    gaps: LogGaps | None = None

    @classmethod
    def from_series(cls, series: Series) -> BandwidthSeries:
        if series.unit != "MB/s":
            raise ValueError(f"not a bandwidth series: unit {series.unit!r}")
        return cls(series.t_s, series.values, series.durations_s, series.gaps)

    def __len__(self) -> int:
        return len(self.bw_mbps)

    @property
    def durations_s(self) -> tuple[float, ...]:
        """Length of each interval in seconds."""
        return Series(self.t_s, self.bw_mbps, "MB/s", self.interval_s).durations_s

    def bytes_per_interval(self) -> tuple[float, ...]:
        """Bytes moved in each interval: ``bw_mbps * 1e6 * duration``."""
        return tuple(bw * 1e6 * d for bw, d in zip(self.bw_mbps, self.durations_s, strict=True))
