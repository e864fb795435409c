"""The SNIA PTS Write Saturation test's figures from fio's per-second IOPS log: the IOPS per
interval against time and against TGBW (total gigabytes written), the FOB and saturated IOPS and
where the drive fell off its FOB figure.

fio logs one line per second (``log_avg_msec=1000``); the seconds are summed into the test's
intervals (PTS: 1 minute): an interval's IOPS is its I/Os (IOPS x window seconds, summed) over
its seconds, its bytes the bandwidth log's bytes (or, without one, I/Os x the block size).
A last interval shorter than half an interval is left out (a few seconds are not a minute's
figure), unless it is the only one.

Figures (``catalog.pts_wsat_hir``): ``iops_fob`` = mean IOPS of the first ``fob_intervals``
intervals (PTS: the first minute, from FOB); ``iops_steady`` = mean IOPS of the last
``steady_intervals`` (5, the PTS's measurement window; all when fewer); ``steady_fob_ratio``;
``cliff_tgbw_gb`` = the GB written before the first interval whose IOPS fell below
``cliff_pct`` % of ``iops_fob`` (absent when none did: the reason is in ``unreached``);
``tgbw_gb`` (decimal GB, 10^9 bytes) and ``written_multiple`` (of the active range).

Source: SNIA PTS Enterprise 1.1, section 10 "Write Saturation Test" (IOPS per minute, plotted
against time and TGBW). Plain Python: no fio, no pytest.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from pytest_ssdqual.catalog.pts_wsat_hir import WsatPlan
from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.series import Series
from pytest_ssdqual.methodology.curves import Curve

GB = 1e9


@dataclass(frozen=True)
class WsatInterval:
    """One interval of the WSAT.

    Attributes:
        end_s: its end, seconds since the write started. duration_s: its seconds logged.
        iops: I/Os per second over it. written_bytes: bytes written in it.
        tgbw_gb: decimal GB written from the start to its end.
    """

    end_s: float
    duration_s: float
    iops: float
    written_bytes: float
    tgbw_gb: float


def wsat_intervals(iops: Series, interval_s: float, *, bs_bytes: int,
                   bw: Series | None = None) -> tuple[WsatInterval, ...]:
    """fio's per-window IOPS (and bandwidth) log summed into intervals of ``interval_s``.

    A window belongs to the interval its end falls in (``(k - 1) x interval_s < end <= k x
    interval_s``). ``bw`` (decimal MB/s per window, the same windows) gives the bytes; without
    it, I/Os x ``bs_bytes``.

    Raises:
        ValueError: ``interval_s`` not positive, or ``bw`` with other windows than ``iops``.
        FioOutputError: an empty log.
    """
    if not interval_s > 0:
        raise ValueError(f"interval_s must be positive, got {interval_s}")
    if not len(iops):
        raise FioOutputError("the write-saturation IOPS log has no line")
    if bw is not None and len(bw) != len(iops):
        raise ValueError(f"bandwidth log of {len(bw)} windows for {len(iops)} IOPS windows")
    sums: dict[int, list[float]] = {}  # interval index -> [seconds, I/Os, bytes, end]
    for i, (end, value, dur) in enumerate(zip(iops.t_s, iops.values, iops.durations_s,
                                              strict=True)):
        k = max(0, math.ceil(end / interval_s - 1e-9) - 1)
        acc = sums.setdefault(k, [0.0, 0.0, 0.0, 0.0])
        ios = value * dur
        acc[0] += dur
        acc[1] += ios
        acc[2] += bw.values[i] * 1e6 * bw.durations_s[i] if bw is not None else ios * bs_bytes
        acc[3] = end
    keys = sorted(sums)
    if len(keys) > 1 and sums[keys[-1]][0] < interval_s / 2:
        keys = keys[:-1]  # a short last interval: not an interval's figure
    out: list[WsatInterval] = []
    written = 0.0
    for k in keys:
        seconds, ios, moved, end = sums[k]
        written += moved
        out.append(WsatInterval(end, seconds, ios / seconds if seconds > 0 else 0.0, moved,
                                written / GB))
    return tuple(out)


@dataclass(frozen=True)
class WsatReport:
    """The WSAT's figures.

    Attributes:
        intervals: every interval, in order.
        iops_fob, iops_steady: see the module docstring. cliff_tgbw_gb: ``None`` when no
            interval fell below ``cliff_pct`` % of FOB.
        tgbw_gb: decimal GB written in all. written_multiple: that over the active range.
        plan: the schedule the figures were taken with.
    """

    intervals: tuple[WsatInterval, ...]
    iops_fob: float
    iops_steady: float
    cliff_tgbw_gb: float | None
    tgbw_gb: float
    written_multiple: float
    plan: WsatPlan

    def metrics(self) -> dict[str, float]:
        """The catalog's WSAT metrics (``cliff_tgbw_gb`` only when the drive fell)."""
        out = {"iops_fob": self.iops_fob, "iops_steady": self.iops_steady,
               "steady_fob_ratio": self.iops_steady / self.iops_fob if self.iops_fob else 0.0,
               "tgbw_gb": self.tgbw_gb, "written_multiple": self.written_multiple}
        if self.cliff_tgbw_gb is not None:
            out["cliff_tgbw_gb"] = self.cliff_tgbw_gb
        return out

    def unreached(self) -> dict[str, str]:
        """``{"cliff_tgbw_gb": why}`` when no interval fell below the cliff level, else ``{}``."""
        if self.cliff_tgbw_gb is not None:
            return {}
        return {"cliff_tgbw_gb": (
            f"no {self.plan.interval_s:g} s interval fell below {self.plan.cliff_pct:g} % of "
            f"FOB ({self.iops_fob * self.plan.cliff_pct / 100:,.0f} IOPS) in "
            f"{self.tgbw_gb:,.3g} GB written")}

    def describe(self) -> str:
        """One line for reports."""
        cliff = (f"fell below {self.plan.cliff_pct:g} % of FOB after {self.cliff_tgbw_gb:,.3g} "
                 "GB" if self.cliff_tgbw_gb is not None
                 else f"never below {self.plan.cliff_pct:g} % of FOB")
        return (f"WSAT: FOB {self.iops_fob:,.0f} IOPS, saturated {self.iops_steady:,.0f} IOPS "
                f"(mean of the last {min(self.plan.steady_intervals, len(self.intervals))} x "
                f"{self.plan.interval_s:g} s), {cliff}; {self.tgbw_gb:,.3g} GB written "
                f"({self.written_multiple:.2f}x the active range) in {len(self.intervals)} "
                "intervals")

    def curves(self) -> list[Curve]:
        """IOPS against time (``time_s``) and against TGBW (``tgbw_gb``), one point per
        interval (at its end)."""
        return [
            Curve("wsat", "time_s", "s", "write.iops", "IOPS",
                  tuple((i.end_s, i.iops) for i in self.intervals)),
            Curve("wsat", "tgbw_gb", "GB", "write.iops", "IOPS",
                  tuple((i.tgbw_gb, i.iops) for i in self.intervals)),
        ]

    def table(self, rows: int = 12) -> list[str]:
        """The measurement table as text lines (the first and last intervals when there are
        more than ``rows``): interval end (s), IOPS, TGBW (GB)."""
        shown = list(self.intervals)
        cut = len(shown) > rows
        if cut:
            shown = shown[: rows // 2] + shown[-(rows // 2):]
        lines = ["  end_s      IOPS   TGBW_GB"]
        for n, i in enumerate(shown):
            if cut and n == rows // 2:
                lines.append(f"  ... {len(self.intervals) - rows} intervals ...")
            lines.append(f"  {i.end_s:>5.0f}  {i.iops:>8,.0f}  {i.tgbw_gb:>8.3f}")
        return lines


def wsat_report(intervals: tuple[WsatInterval, ...], plan: WsatPlan, area_bytes: int, *,
                written_bytes: float | None = None) -> WsatReport:
    """The WSAT figures of ``intervals`` (see the module docstring).

    Args:
        intervals: from :func:`wsat_intervals`, at least one.
        plan: the schedule (``fob_intervals``, ``steady_intervals``, ``cliff_pct``).
        area_bytes: the active range written over, bytes (> 0).
        written_bytes: the bytes the whole write moved (fio's own ``io_bytes``, which counts a
            left-out short last interval too); ``None``: the intervals' sum.

    Raises:
        ValueError: no interval, or ``area_bytes`` not positive.
    """
    if not intervals:
        raise ValueError("no WSAT interval to judge")
    if area_bytes <= 0:
        raise ValueError(f"area_bytes must be positive, got {area_bytes}")
    fob = statistics.fmean(i.iops for i in intervals[: max(1, plan.fob_intervals)])
    steady = statistics.fmean(i.iops for i in intervals[-max(1, plan.steady_intervals):])
    level = fob * plan.cliff_pct / 100
    cliff = None
    before = 0.0
    for i in intervals:
        if i.iops < level:
            cliff = before
            break
        before = i.tgbw_gb
    total = intervals[-1].tgbw_gb if written_bytes is None else written_bytes / GB
    return WsatReport(intervals, fob, steady, cliff, total, total * GB / area_bytes, plan)
