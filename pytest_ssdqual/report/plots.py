"""Charts for reports, as PNG bytes: plain functions of stored data, no I/O, no pytest.

Every function takes figures already in the project's units (seconds, decimal MB/s, IOPS,
microseconds) and returns the PNG image as ``bytes``, so a chart can be attached to an Allure
result, embedded in the one-page summary, or regenerated later from a results folder
(``chart_data`` turns stored results into these inputs).

matplotlib is used through its object API (``Figure`` + the Agg canvas), never ``pyplot``: no
global state, no display needed, safe in pytest-xdist workers.

Charts:

* ``over_time_chart`` -- bandwidth / IOPS (or latency) per second, one panel per figure, the
  limit drawn as a dashed line, the regression gate's baseline figure as a dash-dot line; a
  panel's ``secondary`` line (the drive's temperature) on a second y-axis.
* ``qd_scaling_chart`` -- a figure against queue depth (log2 axis), one curve per I/O pattern.
* ``latency_percentile_chart`` -- completion latency against percentile on a "nines" axis
  (p50, p99, p99.9, p99.99 equally spaced), latency on a log axis, limits as markers.
* ``steady_state_chart`` -- the tracking figure per round with the SNIA PTS measurement window,
  its average, the +-10 % band (data excursion 20 %) and the least-squares fit line.
* ``bar_chart`` (``fill_state_chart``, ``recovery_chart``) -- one bar per state or phase,
  optional limit line and reference line.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from matplotlib.axes import Axes
from matplotlib.ticker import FixedLocator, FuncFormatter, MaxNLocator, NullLocator

from pytest_ssdqual.report.chart_figure import (
    new_figure,
    no_data,
    set_title,
    short_number,
    to_png,
)

#: (times in seconds, values) of one line.
Line = tuple[Sequence[float], Sequence[float]]


@dataclass(frozen=True)
class Panel:
    """One panel of an ``over_time_chart``.

    Attributes:
        ylabel: axis label with the unit, e.g. ``"bandwidth (MB/s)"``.
        lines: label -> (times in s, values), e.g. ``{"read": ((1, 2, 3), (510, 498, 505))}``.
        limits: label -> value drawn as a horizontal dashed line, e.g.
            ``{"read.bw_mbps >= 400": 400.0}``.
        baselines: label -> value drawn as a horizontal dash-dot line: the regression gate's
            baseline figure, e.g. ``{"baseline write.bw_mbps 2405 (run R, firmware A)": 2405.0}``.
        secondary: a line on a second y-axis on the same time axis: ``(axis label with unit,
            (times in s, values), {label: value} reference lines)``, e.g. the drive's
            temperature (°C) with its WCTEMP.
    """

    ylabel: str
    lines: Mapping[str, Line]
    limits: Mapping[str, float] = field(default_factory=dict)
    baselines: Mapping[str, float] = field(default_factory=dict)
    secondary: tuple[str, Line, Mapping[str, float]] | None = None


def _secondary(ax: Axes, secondary: tuple[str, Line, Mapping[str, float]]) -> None:
    """Draw ``Panel.secondary`` on a second y-axis (right) of ``ax``, in orange."""
    label, (t_s, values), refs = secondary
    ax2 = ax.twinx()
    ax2.plot(list(t_s), list(values), color="darkorange", marker=".", label=label)
    for name, value in refs.items():
        ax2.axhline(value, linestyle=":", color="darkorange", linewidth=2, label=name)
    ax2.set_ylabel(label, color="darkorange")
    ax2.legend(loc="upper right", fontsize="small")


def over_time_chart(panels: Sequence[Panel], *, title: str) -> bytes:
    """Figures per second over the run, one panel each, limits as dashed lines, baseline
    figures as dash-dot lines.

    Args:
        panels: e.g. bandwidth (MB/s) and IOPS, each with its directions and limits.
        title: chart title, e.g. ``"128 KiB sequential read, QD32 -- /dev/sdb"``.

    Returns:
        PNG bytes. A panel without points says "no data" (fio wrote no log for it).

    Raises:
        ValueError: no panel.
    """
    if not panels:
        raise ValueError("over_time_chart needs at least one panel")
    fig, axes = new_figure(len(panels))
    for ax, panel in zip(axes, panels, strict=True):
        drawn = False
        for label, (t_s, values) in panel.lines.items():
            if len(t_s):
                ax.plot(list(t_s), list(values), marker="o", markersize=3, label=label)
                drawn = True
        for label, value in panel.limits.items():
            ax.axhline(value, linestyle="--", color="crimson", linewidth=2, label=label)
        for label, value in panel.baselines.items():
            ax.axhline(value, linestyle="-.", color="navy", linewidth=2, label=label)
        if not drawn:
            no_data(ax)
        ax.set_ylabel(panel.ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        if drawn or panel.limits or panel.baselines:
            ax.legend(loc="lower right", fontsize="small")
        if panel.secondary is not None and len(panel.secondary[1][0]):
            _secondary(ax, panel.secondary)
    for ax in axes:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes[-1].set_xlabel("time (s)")
    set_title(axes[0], title)
    return to_png(fig)


def qd_scaling_chart(
    curves: Mapping[str, Sequence[tuple[float, float]]], *, ylabel: str, title: str,
    log_y: bool = True, xlabel: str = "queue depth",
    x_tick: str | Callable[[float], str] = "QD{x:g}", log2_x: bool = True,
) -> bytes:
    """A figure against queue depth, one curve per I/O pattern (or against any swept axis:
    transfer size, write share).

    Args:
        curves: label -> [(queue depth, value), ...], e.g.
            ``{"4 KiB random read": [(1, 12000), (32, 250000)]}``; points are sorted by QD.
        ylabel: e.g. ``"IOPS"``. log_y: log scale on the value axis (patterns differ by orders
            of magnitude).
        xlabel, x_tick: the axis label and each tick's label (``str.format`` with ``x``, or a
            function of ``x``).
        log2_x: a log2 axis (queue depths, sizes), else linear (a write share in %).

    Returns:
        PNG bytes ("no data" when no curve has a point).
    """
    fig, (ax,) = new_figure()
    qds: set[float] = set()
    for label, points in curves.items():
        pts = sorted(points)
        if not pts:
            continue
        qds.update(q for q, _ in pts)
        ax.plot([q for q, _ in pts], [v for _, v in pts], marker="o", label=label)
        for q, v in pts:
            ax.annotate(short_number(v), (q, v), textcoords="offset points", xytext=(4, 4),
                        fontsize="x-small")
    if qds:
        if log2_x:
            ax.set_xscale("log", base=2)
        ax.xaxis.set_major_locator(FixedLocator(sorted(qds)))
        ax.xaxis.set_minor_locator(NullLocator())
        pattern = x_tick
        tick: Callable[[float], str] = (
            pattern if callable(pattern) else lambda x: pattern.format(x=x))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: tick(x)))
        if log_y:
            ax.set_yscale("log")
        ax.margins(x=0.1)  # room for the last point's value label inside the axes
        ax.legend(fontsize="small")
    else:
        no_data(ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    set_title(ax, title)
    ax.grid(True, which="both", alpha=0.3)
    return to_png(fig)


def nines(percentile: float) -> float:
    """The "nines" coordinate of a percentile: ``-log10(1 - p/100)``; p50 -> 0.301,
    p99 -> 2, p99.9 -> 3, p99.99 -> 4.

    Raises:
        ValueError: percentile outside (0, 100).
    """
    if not 0 < percentile < 100:
        raise ValueError(f"percentile {percentile} is outside (0, 100)")
    return -math.log10(1 - percentile / 100)


def latency_percentile_chart(
    curves: Mapping[str, Mapping[float, float]],
    *,
    title: str,
    limits: Mapping[str, tuple[float, float]] | None = None,
) -> bytes:
    """Completion latency against percentile, latency on a log axis.

    Args:
        curves: label -> {percentile: latency in µs}, e.g.
            ``{"rand_read_4k_qd1 read": {50: 80, 99: 160, 99.9: 400, 99.99: 900}}``.
        limits: label -> (percentile, max latency in µs) drawn as a red "v" marker, e.g.
            ``{"read.lat_p99_us <= 400": (99, 400)}``.

    Returns:
        PNG bytes ("no data" when no curve has a point).
    """
    fig, (ax,) = new_figure()
    ticks: set[float] = set()
    for label, points in curves.items():
        pts = sorted((p, v) for p, v in points.items() if v is not None and v > 0)
        if not pts:
            continue
        ticks.update(p for p, _ in pts)
        ax.plot([nines(p) for p, _ in pts], [v for _, v in pts], marker="o", label=label)
    for label, (pct, value) in (limits or {}).items():
        ticks.add(pct)
        ax.plot([nines(pct)], [value], marker="v", color="crimson", markersize=9,
                linestyle="none", label=label)
    if ticks:
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(FixedLocator([nines(p) for p in sorted(ticks)]))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _pos: f"p{_from_nines(x):g}"))
        ax.legend(fontsize="small")
    else:
        no_data(ax)
    ax.set_xlabel("percentile")
    ax.set_ylabel("completion latency (µs)")
    set_title(ax, title)
    ax.grid(True, which="both", alpha=0.3)
    return to_png(fig)


def _from_nines(x: float) -> float:
    return round(100 * (1 - 10 ** (-x)), 4)


def steady_state_chart(
    values: Sequence[float],
    *,
    window_first_round: int,
    window_last_round: int,
    ylabel: str,
    title: str,
    slope_per_round: float | None = None,
    reached_round: int | None = None,
    data_excursion_limit_pct: float = 20.0,
) -> bytes:
    """The tracking figure per round with the SNIA PTS measurement window and its fit line.

    Args:
        values: the tracking figure of rounds 1..N (e.g. 4 KiB random-write IOPS).
        window_first_round, window_last_round: 1-based rounds of the measurement window.
        slope_per_round: the window's least-squares slope; computed here when ``None``. The
            line is drawn through the window's centroid (where a least-squares line passes).
        reached_round: the round steady state was reached, or ``None`` (title says "not
            reached").
        data_excursion_limit_pct: allowed max-min spread, percent of the window average; the
            band drawn is the average +- half of it.

    Returns:
        PNG bytes.

    Raises:
        ValueError: no values, or a window outside 1..len(values).
    """
    if not values:
        raise ValueError("steady_state_chart needs at least one round")
    if not 1 <= window_first_round <= window_last_round <= len(values):
        raise ValueError(
            f"window {window_first_round}..{window_last_round} is outside rounds 1..{len(values)}"
        )
    rounds = list(range(1, len(values) + 1))
    win_x = rounds[window_first_round - 1:window_last_round]
    win_y = list(values[window_first_round - 1:window_last_round])
    avg = sum(win_y) / len(win_y)
    mean_x = sum(win_x) / len(win_x)
    if slope_per_round is None:
        sxx = sum((x - mean_x) ** 2 for x in win_x)
        slope_per_round = (
            sum((x - mean_x) * (y - avg) for x, y in zip(win_x, win_y, strict=True)) / sxx
            if sxx else 0.0
        )
    fig, (ax,) = new_figure()
    ax.plot(rounds, list(values), marker="o", color="steelblue", label=ylabel)
    ax.axvspan(window_first_round - 0.5, window_last_round + 0.5, color="gold", alpha=0.2,
               label=f"window rounds {window_first_round}-{window_last_round}")
    half = data_excursion_limit_pct / 200 * avg
    ax.hlines([avg], win_x[0] - 0.5, win_x[-1] + 0.5, colors="black",
              label=f"average {short_number(avg)}")
    ax.hlines([avg - half, avg + half], win_x[0] - 0.5, win_x[-1] + 0.5, colors="grey",
              linestyles=":", label=f"average ± {data_excursion_limit_pct / 2:g} %")
    fit_x = [win_x[0], win_x[-1]]
    ax.plot(fit_x, [avg + slope_per_round * (x - mean_x) for x in fit_x], color="crimson",
            linewidth=2, label=f"least-squares fit ({slope_per_round:+.3g}/round)")
    state = f"steady at round {reached_round}" if reached_round else "steady state not reached"
    set_title(ax, f"{title} — {state}")
    ax.set_xlabel("round")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.xaxis.set_major_locator(FixedLocator(rounds if len(rounds) <= 25 else rounds[::5]))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="lower right")
    return to_png(fig)


def bar_chart(
    bars: Mapping[str, float],
    *,
    ylabel: str,
    title: str,
    limit: tuple[str, float] | None = None,
    reference: tuple[str, float] | None = None,
) -> bytes:
    """One bar per state or phase, each labelled with its value.

    Args:
        bars: label -> value in order, e.g. ``{"fresh": 90000, "degraded": 21000}``.
        limit: (label, value) drawn as a red dashed line, e.g. ``("recovery floor", 63000)``.
        reference: (label, value) drawn as a grey line, e.g. ``("fresh", 90000)``.

    Returns:
        PNG bytes ("no data" when ``bars`` is empty).
    """
    fig, (ax,) = new_figure()
    labels = list(bars)
    values = [bars[k] for k in labels]
    if labels:
        colors = ["steelblue"] * len(labels)
        if limit is not None:
            colors = ["steelblue" if v >= limit[1] else "indianred" for v in values]
        rects = ax.bar(labels, values, color=colors)
        ax.bar_label(rects, labels=[short_number(v) for v in values], fontsize="small")
    else:
        no_data(ax)
    if reference is not None:
        ax.axhline(reference[1], color="grey", linewidth=1, label=reference[0])
    if limit is not None:
        ax.axhline(limit[1], color="crimson", linestyle="--", linewidth=2, label=limit[0])
    if limit is not None or reference is not None:
        ax.legend(fontsize="small")
    ax.set_ylabel(ylabel)
    set_title(ax, title)
    ax.set_ylim(bottom=0)
    ax.grid(True, axis="y", alpha=0.3)
    return to_png(fig)


def fill_state_chart(states: Mapping[str, float], *, ylabel: str, title: str,
                     limit: tuple[str, float] | None = None) -> bytes:
    """A figure per drive state (e.g. ``{"FOB": .., "preconditioned": .., "steady state": ..}``
    or per fill level ``{"0 % full": .., "50 % full": .., "100 % full": ..}``)."""
    return bar_chart(states, ylabel=ylabel, title=title, limit=limit)


def recovery_chart(phases: Mapping[str, float], *, ylabel: str, title: str,
                   limit: tuple[str, float] | None = None) -> bytes:
    """A figure per phase of a consistency / recovery-after-idle test (fresh, degraded,
    steady, each recovery round), with the fresh figure as reference line."""
    fresh = next(iter(phases.values()), None)
    reference = ("fresh", fresh) if fresh is not None else None
    return bar_chart(phases, ylabel=ylabel, title=title, limit=limit, reference=reference)
