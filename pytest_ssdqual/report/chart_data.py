"""Stored results -> the plain inputs of ``plots``: per-second series, limits, baseline figures,
percentile curves, queue-depth scaling, phase bars; ``charts_for_test``, every chart a test's
stored data supports. No I/O on drives; matplotlib is imported only when a chart is drawn.

Inputs are what a test stores (``results.stored``): fio's per-second logs as CSV text (fio's
columns after a header line, read by ``fio.logs``), the metrics by canonical name and the
verdict records with their limits. Units are the project's: seconds, decimal MB/s, IOPS, µs.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ssdqual.catalog.sweeps import size_label
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.fio.job import LOG_AVG_MSEC
from pytest_ssdqual.fio.logs import DIRECTIONS, parse_log, to_series
from pytest_ssdqual.fio.result import PERCENTILE_FIELDS
from pytest_ssdqual.results.record import LimitVerdict
from pytest_ssdqual.results.stored import LOG_CSV_HEADER
from pytest_ssdqual.thresholds.verdict import format_number

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.curves import Curve
    from pytest_ssdqual.report.plots import Panel

_LOG_FILE = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)\.(?P<job>\d+)\.log$")
_QD_ID = re.compile(r"^(?P<pattern>.+)_qd(?P<qd>\d+)$")

#: Phases of a consistency / recovery-after-idle test, in the order they run.
PHASE_ORDER: tuple[str, ...] = ("fresh", "degraded", "steady", "recovered")


def _strip_header(text: str) -> str:
    first, _, rest = text.partition("\n")
    return rest if first.strip() == LOG_CSV_HEADER else text


def log_series(
    logs: Mapping[str, str], kind: str, *, window_ms: float | None = LOG_AVG_MSEC
) -> dict[str, tuple[tuple[float, ...], tuple[float, ...]]]:
    """Per-direction series of one log kind from fio's logs.

    Args:
        logs: file name -> text, e.g. ``{"log_bw.1.log": "time_ms,value,...\\n1000, 512, 0, 0, 0"}``
            (the CSV header line is optional); several jobs' files are combined by
            ``fio.logs.to_series`` (bandwidth and IOPS summed, latency averaged).
        kind: ``bw`` (-> decimal MB/s), ``iops`` or ``clat``/``lat``/``slat`` (-> µs).
        window_ms: the logs' ``log_avg_msec``: by default the one the plugin's jobs set
            (``fio.job.LOG_AVG_MSEC``; the stored logs are theirs), so a stall every other
            second is drawn as 0, not read as a 2 s window; ``None``: inferred from the stamps.

    Returns:
        direction (``read``, ``write``, ``trim``) -> (seconds, values), only directions with data.

    Raises:
        FioOutputError: a malformed log line, or one stamped absurdly late (file and line).
    """
    per_job, names = [], []
    for name in sorted(logs):
        m = _LOG_FILE.match(name)
        if m and m.group("kind") == kind:
            per_job.append(parse_log(_strip_header(logs[name]), source=name))
            names.append(name)
    out: dict[str, tuple[tuple[float, ...], tuple[float, ...]]] = {}
    for direction, code in DIRECTIONS.items():
        if any(s.direction == code for samples in per_job for s in samples):
            series = to_series(per_job, kind, direction, window_ms=window_ms, sources=names)
            out[direction] = (series.t_s, series.values)
    return out


def limit_lines(verdicts: Iterable[LimitVerdict], metric: str) -> dict[str, float]:
    """Limits on ``*.{metric}`` (e.g. ``bw_mbps``) as ``{"read.bw_mbps >= 400": 400.0}``."""
    out: dict[str, float] = {}
    for v in verdicts:
        if v.metric.rpartition(".")[2] != metric or not v.limit:
            continue
        for bound in (b for b in (v.min, v.max) if b is not None):
            out[v.limit] = float(bound)
    return out


def baseline_lines(figures: Mapping[str, float], metrics: Iterable[str], note: str = ""
                   ) -> dict[str, float]:
    """The baseline's figures of ``metrics`` as labelled lines: ``{"baseline write.bw_mbps
    2405 (run R, firmware A)": 2405.0}``; metrics the baseline has no figure for are left out."""
    tail = f" ({note})" if note else ""
    return {f"baseline {m} {format_number(figures[m])}{tail}": float(figures[m])
            for m in metrics if m in figures}


def throughput_panels(logs: Mapping[str, str], verdicts: Sequence[LimitVerdict],
                      baseline: tuple[str, Mapping[str, float]] | None = None) -> list[Panel]:
    """Bandwidth (MB/s) and IOPS panels over time with their limits and, with a ``baseline``
    (note, metric -> figure: ``BaselineFinder.figures``), the baseline figure of each direction
    drawn (``baseline_lines``); panels with no log are left out."""
    from pytest_ssdqual.report.plots import Panel

    panels = []
    for kind, metric, ylabel in (("bw", "bw_mbps", "bandwidth (MB/s)"), ("iops", "iops", "IOPS")):
        lines = log_series(logs, kind)
        if lines:
            base = baseline_lines(baseline[1], (f"{d}.{metric}" for d in lines),
                                  baseline[0]) if baseline else {}
            panels.append(Panel(ylabel, lines, limit_lines(verdicts, metric), base))
    return panels


def percentile_curves(
    metrics: Mapping[str, float], label: str = ""
) -> dict[str, dict[float, float]]:
    """Latency percentile curve per direction from the metrics (``read.lat_p99_us``, ...).

    Returns ``{"<label> read": {50.0: 80.0, 99.0: 160.0, ...}}``; directions with fewer than
    two percentiles are left out."""
    out: dict[str, dict[float, float]] = {}
    for direction in ("read", "write", "trim"):
        curve = {
            pct: float(metrics[f"{direction}.{name}"])
            for name, pct in PERCENTILE_FIELDS.items()
            if f"{direction}.{name}" in metrics
        }
        if len(curve) >= 2:
            out[f"{label} {direction}".strip()] = curve
    return out


def latency_limits(verdicts: Iterable[LimitVerdict]) -> dict[str, tuple[float, float]]:
    """Upper limits on latency percentiles as ``{"read.lat_p99_us <= 400": (99.0, 400.0)}``."""
    out: dict[str, tuple[float, float]] = {}
    for v in verdicts:
        pct = PERCENTILE_FIELDS.get(v.metric.rpartition(".")[2])
        if pct is not None and v.max is not None and v.limit:
            out[v.limit] = (pct, float(v.max))
    return out


def primary_iops(workload_id: str, metrics: Mapping[str, float]) -> float | None:
    """The headline IOPS of a workload: ``total.iops`` (mixed), else its single direction's."""
    if "total.iops" in metrics:
        return metrics["total.iops"]
    values = [metrics[f"{d}.iops"] for d in ("read", "write") if f"{d}.iops" in metrics]
    return values[0] if len(values) == 1 else None


def qd_curves(
    results: Iterable[tuple[str, Mapping[str, float]]],
) -> dict[str, list[tuple[int, float]]]:
    """Queue-depth scaling from several workloads' metrics.

    Workloads whose ids differ only in ``_qdN`` (``rand_read_4k_qd1``, ``rand_read_4k_qd32``)
    form one curve of their headline IOPS (``primary_iops``).

    Args:
        results: (workload id, metrics) pairs.

    Returns:
        curve label (the catalog title without its QD, else the id pattern) -> [(qd, iops)]
        sorted by QD; only patterns measured at two or more queue depths.
    """
    groups: dict[str, dict[int, float]] = {}
    labels: dict[str, str] = {}
    for workload_id, metrics in results:
        m = _QD_ID.match(workload_id)
        value = primary_iops(workload_id, metrics)
        if not m or value is None:
            continue
        pattern = m.group("pattern")
        groups.setdefault(pattern, {})[int(m.group("qd"))] = value
        workload = CATALOG.get(workload_id)
        labels[pattern] = (
            re.sub(r",?\s*QD\d+$", "", workload.title) if workload is not None else pattern
        )
    return {labels[p]: sorted(points.items()) for p, points in groups.items() if len(points) >= 2}


def phase_bars(metrics: Mapping[str, float], suffix: str = "iops") -> dict[str, float]:
    """Per-phase figures of a consistency / recovery test (``fresh_iops``, ``degraded_iops``,
    ...) -> ``{"fresh": ..., ...}`` in run order (known phases first, then the others)."""
    found = {}
    for name, value in metrics.items():
        if "." not in name and name.endswith(f"_{suffix}"):
            found[name[: -len(suffix) - 1]] = float(value)
    ordered = [p for p in PHASE_ORDER if p in found] + sorted(set(found) - set(PHASE_ORDER))
    return {p: found[p] for p in ordered}


#: Names of the per-test chart attachments.
CHART_OVER_TIME = "chart: bandwidth and IOPS over time"
CHART_LATENCY = "chart: latency percentiles"
CHART_PHASES = "chart: IOPS per phase"


def charts_for_test(
    *,
    title: str,
    logs: Mapping[str, str],
    metrics: Mapping[str, float],
    verdicts: Sequence[LimitVerdict],
    baseline: tuple[str, Mapping[str, float]] | None = None,
) -> dict[str, bytes]:
    """Every chart one test's stored data supports, as attachment name -> PNG bytes.

    Args:
        title: chart title (the test's title). metrics: measured figures by canonical name.
        logs: fio's per-second logs, file name -> text (CSV header optional).
        verdicts: the test's verdict records (limits are drawn from them).
        baseline: the regression gate's baseline (``throughput_panels``), drawn over time.

    Returns:
        Bandwidth/IOPS over time (when fio wrote logs), latency percentiles (when the metrics
        hold at least two percentiles of a direction), IOPS per phase (``fresh_iops``...).
    """
    from pytest_ssdqual.report import plots
    out: dict[str, bytes] = {}
    panels = throughput_panels(logs, verdicts, baseline)
    if panels:
        out[CHART_OVER_TIME] = plots.over_time_chart(panels, title=title)
    curves = percentile_curves(metrics)
    if curves:
        out[CHART_LATENCY] = plots.latency_percentile_chart(
            curves, title=title, limits=latency_limits(verdicts))
    bars = phase_bars(metrics)
    if bars:
        floor = next(((v.limit, v.min) for v in verdicts
                      if v.metric.endswith("_iops") and v.min is not None and v.limit), None)
        out[CHART_PHASES] = plots.recovery_chart(
            bars, ylabel="IOPS", title=title,
            limit=(floor[0], float(floor[1])) if floor and floor[1] is not None else None)
    return out


# --- methodology tests (purge, precondition, rounds, idle): their stored CSV tables ----------

CHART_STEADY_STATE = "chart: steady state"
CHART_FILL_STATE = "chart: bandwidth by fill state"

#: Rounds in the SNIA PTS measurement window (``steady_state.WINDOW_ROUNDS``).
WINDOW_ROUNDS = 5


def csv_rows(text: str) -> list[dict[str, str]]:
    """The rows of a CSV table with a header line (a methodology test's ``rounds``...)."""
    return list(csv.DictReader(io.StringIO(text)))


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def methodology_panels(per_second_csv: str, verdicts: Sequence[LimitVerdict]) -> list[Panel]:
    """Bandwidth and IOPS per second over the whole test (``t_s`` since it started), one line
    per phase, with the limits on ``*bw_mbps`` / ``*iops`` metrics (e.g. ``sustained_bw_mbps
    >= 1000``). Columns read: ``t_s, phase, bw_mbps, iops``."""
    from pytest_ssdqual.report.plots import Panel

    rows = csv_rows(per_second_csv)
    panels = []
    for column, ylabel in (("bw_mbps", "bandwidth (MB/s)"), ("iops", "IOPS")):
        lines: dict[str, tuple[list[float], list[float]]] = {}
        last_step: dict[str, tuple[str, str]] = {}
        for row in rows:
            t, v = _float(row.get("t_s")), _float(row.get(column))
            if t is None or v is None:
                continue
            phase = row.get("phase") or "-"
            step = (row.get("round") or "", row.get("job") or "")
            xs, ys = lines.setdefault(phase, ([], []))
            if xs and (last_step[phase] != step or t <= xs[-1]):
                xs.append(xs[-1])  # a gap: the line breaks between two steps of a phase
                ys.append(math.nan)
            last_step[phase] = step
            xs.append(t)
            ys.append(v)
        if lines:
            limits = {v.limit: float(b) for v in verdicts if v.limit and v.metric.endswith(column)
                      for b in (v.min, v.max) if b is not None}
            panels.append(Panel(ylabel, {k: (tuple(x), tuple(y)) for k, (x, y) in lines.items()},
                                limits))
    return panels


@dataclass(frozen=True)
class SteadyStateInputs:
    """The steady-state chart's inputs: ``values`` (tracking figure per round, 1-based
    rounds), the window's first and last round, and the round steady state was reached at."""

    values: list[float]
    window_first_round: int
    window_last_round: int
    reached_round: int | None


def steady_state_inputs(rounds_csv: str, metrics: Mapping[str, float],
                        phase: str = "steady state") -> SteadyStateInputs | None:
    """The steady-state chart's inputs: the tracking figure (IOPS) of each ``phase`` round and
    the measurement window -- the last ``WINDOW_ROUNDS`` rounds up to ``steady_state_round``
    when steady state was reached, else the last ones run. None without such rounds or without
    a steady-state verdict in the metrics (``steady_state_reached``)."""
    if "steady_state_reached" not in metrics:
        return None
    values = [v for row in csv_rows(rounds_csv)
              if row.get("phase") == phase and row.get("round")
              and (v := _float(row.get("iops"))) is not None]
    if not values:
        return None
    reached = metrics["steady_state_reached"] >= 1 and "steady_state_round" in metrics
    last = min(len(values), int(metrics["steady_state_round"])) if reached else len(values)
    return SteadyStateInputs(values, max(1, last - WINDOW_ROUNDS + 1), last,
                             int(metrics["steady_state_round"]) if reached else None)


def fill_state_bars(per_second_csv: str, phase: str = "sustained write",
                    buckets: int = 5) -> dict[str, float]:
    """Mean bandwidth (MB/s) of ``phase`` by how much of its data had been written: the bytes
    of each second (``bw_mbps`` x 1 s) are summed, and the seconds are split into ``buckets``
    equal shares of the total (``"0-20 %"``, ...). A sequential fill of the span once (the
    sustained-write test) makes that share the drive's fill state. Empty without such rows."""
    samples = [(t, v) for row in csv_rows(per_second_csv)
               if row.get("phase") == phase
               and (t := _float(row.get("t_s"))) is not None
               and (v := _float(row.get("bw_mbps"))) is not None]
    total = sum(v for _, v in samples)
    if not samples or total <= 0:
        return {}
    sums = [0.0] * buckets
    counts = [0] * buckets
    written = 0.0
    for _, mbps in sorted(samples):
        index = min(buckets - 1, int(written / total * buckets))
        sums[index] += mbps
        counts[index] += 1
        written += mbps
    step = 100 // buckets
    return {f"{i * step}-{(i + 1) * step} %": sums[i] / counts[i]
            for i in range(buckets) if counts[i]}


def methodology_charts(
    *, title: str, rounds_csv: str, per_second_csv: str, metrics: Mapping[str, float],
    verdicts: Sequence[LimitVerdict],
) -> dict[str, bytes]:
    """Every chart a methodology test's stored tables support: bandwidth/IOPS over the whole
    test per phase, the steady-state window with its fit line, bandwidth by fill state
    (sustained write), IOPS per phase (consistency / recovery after idle)."""
    from pytest_ssdqual.report import plots
    out: dict[str, bytes] = {}
    panels = methodology_panels(per_second_csv, verdicts)
    if panels:
        out[CHART_OVER_TIME] = plots.over_time_chart(panels, title=title)
    steady = steady_state_inputs(rounds_csv, metrics)
    if steady is not None:
        out[CHART_STEADY_STATE] = plots.steady_state_chart(
            steady.values, window_first_round=steady.window_first_round,
            window_last_round=steady.window_last_round, reached_round=steady.reached_round,
            ylabel="IOPS per round", title=title)
    fill = fill_state_bars(per_second_csv)
    if fill:
        floor = next(((v.limit, v.min) for v in verdicts
                      if v.metric.endswith("sustained_bw_mbps") and v.min is not None), None)
        out[CHART_FILL_STATE] = plots.fill_state_chart(
            fill, ylabel="mean bandwidth (MB/s)", title=f"{title} — share of the data written",
            limit=(floor[0], float(floor[1])) if floor and floor[1] is not None else None)
    bars = phase_bars(metrics)
    if bars:
        out[CHART_PHASES] = plots.recovery_chart(bars, ylabel="IOPS", title=title)
    return out


#: Swept axes of ``methodology.curves.Curve`` (``x_name``): axis label, tick label of ``x``,
#: log2 axis. Every axis a methodology writes has one (tests/unit/test_sweeps.py reads them from
#: the source). ``fill_pct``: ``drive_with_data``'s fill levels (0 = empty; its one-point
#: ``<test>.dirty`` curve sits at 0 too), "fill level", not the sustained-write test's "fill
#: state" bars (``CHART_FILL_STATE``).
_CURVE_AXES: dict[str, tuple[str, Callable[[float], str], bool]] = {
    "qd": ("queue depth", lambda x: f"QD{x:g}", True),
    "write_pct": ("write share (%)", lambda x: f"{x:g} %", False),
    "bs_bytes": ("transfer size", lambda x: size_label(int(x)), True),  # 4096 -> 4k, as fio
    "test_size_bytes": ("test size", lambda x: size_label(int(x)), True),
    "fill_pct": ("fill level (% of the span)", lambda x: f"{x:g} %", False),
}
#: Figures of curves (the name after the direction): axis label.
_CURVE_FIGURES: dict[str, str] = {
    "iops": "IOPS", "bw_mbps": "bandwidth (MB/s)", "lat_p99_us": "p99 latency (µs)",
    "lat_mean_us": "mean latency (µs)",
}


def curve_charts(curves: Sequence[Curve], *, title: str) -> dict[str, bytes]:
    """One chart per swept axis and figure (``chart: IOPS by queue depth``), one line per curve
    (e.g. ``rand_read_4k read``, ``seq_write_128k write``), from a methodology test's curves
    (``MethodologyResult.curves``); axes this module does not know are left out."""
    from pytest_ssdqual.report import plots
    groups: dict[tuple[str, str], dict[str, list[tuple[float, float]]]] = {}
    for c in curves:
        direction, _, figure = c.y_name.rpartition(".")
        if c.x_name not in _CURVE_AXES or figure not in _CURVE_FIGURES:
            continue
        label = c.name if not direction or direction in c.name else f"{c.name} {direction}"
        groups.setdefault((c.x_name, figure), {})[label] = [
            (x, y) for x, y in c.points if y == y and y > 0]
    out: dict[str, bytes] = {}
    for (x_name, figure), lines in groups.items():
        xlabel, tick, log2_x = _CURVE_AXES[x_name]
        ylabel = _CURVE_FIGURES[figure]
        out[f"chart: {ylabel.split(' (')[0]} by {xlabel.split(' (')[0]}"] = \
            plots.qd_scaling_chart(lines, ylabel=ylabel, title=title, xlabel=xlabel,
                                   x_tick=tick, log2_x=log2_x, log_y=log2_x)
    return out
