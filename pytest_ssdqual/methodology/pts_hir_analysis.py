"""The SNIA PTS Host Idle Recovery test's figures: the IOPS of every burst and baseline stretch on
one time line, cut into segments (the preconditioning's steady state, each wait state's bursts,
each return to baseline), and per wait state the mean burst IOPS and its ratio to the baseline
just before it.

A segment is named ``precondition``, ``w5s`` (the bursts of the PTS's 5 s wait state, whatever
the profile scales the wait to) or ``w5s baseline`` (the return to baseline after it). Figures
(``catalog.pts_wsat_hir``): ``baseline_iops`` = mean IOPS of the preconditioning's last
``WINDOW`` rounds (the steady-state measurement window); ``w5s_iops`` = mean IOPS of the wait
state's bursts; ``w5s_recovery_ratio`` = that over the baseline before it (the preconditioning's
for the first wait state, the previous return to baseline's for the others);
``w5s_rebaseline_iops`` = mean IOPS of the last ``WINDOW`` stretches of its return to baseline.

Source: SNIA PTS Enterprise 1.1, section 11 "Host Idle Recovery Test" (wait states of 5, 10, 15,
25 and 50 s between 5 s bursts of RND 4 KiB writes, each followed by a return to baseline;
IOPS plotted against time). Plain Python: no fio, no pytest.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ssdqual.catalog.pts_wsat_hir import HIR_FIGURES, PTS_WAITS_S, wait_name
from pytest_ssdqual.fio.series import Series
from pytest_ssdqual.methodology.curves import Curve

#: Rounds (stretches) the baselines average: the PTS steady-state measurement window.
WINDOW = 5
PRECONDITION = "precondition"


def baseline_segment(pts_wait_s: float) -> str:
    """``w5s baseline``: the return to baseline after the PTS wait state ``pts_wait_s``."""
    return f"{wait_name(pts_wait_s)} baseline"


@dataclass(frozen=True)
class HirPoint:
    """One burst, round or baseline stretch.

    Attributes:
        t_s: its end, seconds since the test started. segment: ``precondition``, ``w5s``,
            ``w5s baseline``... iops: its I/Os per second.
    """

    t_s: float
    segment: str
    iops: float


def stretches(series: Series, chunk_s: float, *, start_s: float, segment: str
              ) -> list[HirPoint]:
    """A continuous run's per-window IOPS log cut into stretches of ``chunk_s`` seconds (the
    PTS's 5 s), each a point at its end on the test's time line (``start_s`` + the stretch's
    end); a window belongs to the stretch its end falls in, and a stretch's IOPS is its I/Os
    over its logged seconds. A ``chunk_s`` shorter than the log's windows gives one stretch per
    window. A last stretch shorter than half ``chunk_s`` is left out unless it is the only one.

    Raises:
        ValueError: ``chunk_s`` not positive.
    """
    if not chunk_s > 0:
        raise ValueError(f"chunk_s must be positive, got {chunk_s}")
    acc: dict[int, list[float]] = {}  # stretch -> [seconds, I/Os, end]
    for end, value, dur in zip(series.t_s, series.values, series.durations_s, strict=True):
        k = max(0, math.ceil(end / chunk_s - 1e-9) - 1)
        a = acc.setdefault(k, [0.0, 0.0, 0.0])
        a[0] += dur
        a[1] += value * dur
        a[2] = end
    keys = sorted(acc)
    if len(keys) > 1 and acc[keys[-1]][0] < min(chunk_s, max(acc[k][0] for k in keys)) / 2:
        keys = keys[:-1]
    return [HirPoint(start_s + acc[k][2], segment, acc[k][1] / acc[k][0])
            for k in keys if acc[k][0] > 0]


def segment_means(points: Sequence[HirPoint], *, last: int | None = None) -> dict[str, float]:
    """Mean IOPS of each segment, in the order the segments first appear (``last``: of its
    last ``last`` points only)."""
    groups: dict[str, list[float]] = {}
    for p in points:
        groups.setdefault(p.segment, []).append(p.iops)
    return {s: statistics.fmean(v[-last:] if last else v) for s, v in groups.items()}


@dataclass(frozen=True)
class WaitState:
    """One wait state's figures.

    Attributes:
        pts_wait_s: the PTS's wait (names the metrics). wait_s: the wait the profile ran.
        bursts: bursts measured. iops: their mean IOPS. baseline_iops: the baseline before it.
        rebaseline_iops: its return to baseline (``None`` when none was measured).
    """

    pts_wait_s: float
    wait_s: float
    bursts: int
    iops: float
    baseline_iops: float
    rebaseline_iops: float | None

    @property
    def recovery_ratio(self) -> float:
        return self.iops / self.baseline_iops if self.baseline_iops > 0 else math.nan


@dataclass(frozen=True)
class HirReport:
    """The HIR's figures: ``baseline_iops`` (preconditioning steady state), one ``WaitState``
    per wait state run, every point (for the plot)."""

    baseline_iops: float
    states: tuple[WaitState, ...]
    points: tuple[HirPoint, ...]

    def metrics(self) -> dict[str, float]:
        """``baseline_iops`` and ``w5s_iops``, ``w5s_recovery_ratio``, ``w5s_rebaseline_iops``
        per wait state (NaN figures left out)."""
        out = {"baseline_iops": self.baseline_iops}
        for ws in self.states:
            name = wait_name(ws.pts_wait_s)
            values = dict(zip(HIR_FIGURES, (ws.iops, ws.recovery_ratio, ws.rebaseline_iops),
                              strict=True))
            out.update({f"{name}_{f}": v for f, v in values.items()
                        if v is not None and v == v})
        return out

    def table(self) -> list[str]:
        """The measurement table, one line per wait state."""
        lines = ["  wait  (run)  bursts  burst_IOPS  baseline_IOPS  ratio  rebaseline_IOPS"]
        for ws in self.states:
            re_iops = "-" if ws.rebaseline_iops is None else f"{ws.rebaseline_iops:,.0f}"
            lines.append(f"  {ws.pts_wait_s:>3g} s  ({ws.wait_s:g} s)  {ws.bursts:>6}  "
                         f"{ws.iops:>10,.0f}  {ws.baseline_iops:>13,.0f}  "
                         f"{ws.recovery_ratio:>5.2f}  {re_iops:>15}")
        return lines

    def curves(self) -> list[Curve]:
        """IOPS against time (``time_s``), one curve per segment: the wait states' bursts and
        the baselines drawn apart (the chart marks the segments by colour)."""
        by_segment: dict[str, list[tuple[float, float]]] = {}
        for p in self.points:
            by_segment.setdefault(p.segment, []).append((p.t_s, p.iops))
        return [Curve(f"hir {s}", "time_s", "s", "write.iops", "IOPS", tuple(pts))
                for s, pts in by_segment.items()]


def hir_report(points: Sequence[HirPoint], waits_s: Sequence[float]) -> HirReport:
    """The HIR figures of ``points`` (every round, burst and baseline stretch, in time order).

    Args:
        points: with segments ``precondition``, ``w5s``, ``w5s baseline``, ... (the wait
            states that ran, in the PTS's order).
        waits_s: the waits the profile ran, in the PTS's order (for the table).

    Raises:
        ValueError: no ``precondition`` point (no baseline to compare with).
    """
    means = segment_means(points)
    windows = segment_means(points, last=WINDOW)
    if PRECONDITION not in means:
        raise ValueError("no preconditioning round: the HIR has no baseline")
    counts: dict[str, int] = {}
    for p in points:
        counts[p.segment] = counts.get(p.segment, 0) + 1
    baseline = windows[PRECONDITION]
    states = []
    before = baseline
    for pts_wait, wait in zip(PTS_WAITS_S, waits_s, strict=False):
        name = wait_name(pts_wait)
        if name not in means:
            break
        after = windows.get(baseline_segment(pts_wait))
        states.append(WaitState(pts_wait, wait, counts[name], means[name], before, after))
        if after is not None:
            before = after
    return HirReport(baseline, tuple(states), tuple(points))
