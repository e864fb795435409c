"""``ssdqual trend --model M --workload W --metric X``: one metric across firmware versions.

Reads the results store's index (every complete run), keeps the drives whose model matches
``M`` (fnmatch glob, case-insensitive, like threshold files' ``model``), groups the figures by
firmware and prints a table -- runs, median, min, max, change of the median vs the previous
firmware -- in firmware release order: the order firmware first appears in the store (run
start time), unless ``--order A,B,C`` gives it (firmware not listed follow in first-seen
order). ``-o PNG`` also draws the chart (matplotlib, Agg backend: no display needed): each
run's figure as a dot, the median per firmware as a line.

Runs of different run profiles are not comparable: when the matching figures come from several
profiles, ``--profile`` must pick one (a usage error otherwise).
"""

from __future__ import annotations

import argparse
import fnmatch
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.catalog.health import HEALTH_WORKLOAD_ID
from pytest_ssdqual.catalog.parametric import find_workload
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.comparison import format_figure, signed_pct
from pytest_ssdqual.results.gated_metrics import has_direction, is_higher_better
from pytest_ssdqual.results.store import ResultsStore

__all__ = ["FirmwarePoint", "trend_points", "format_table", "plot_trend", "add_parser",
           "run_command"]


@dataclass
class FirmwarePoint:
    """The figures of one firmware.

    Attributes:
        firmware: the firmware (or ``--firmware`` label). values: one per run (and drive), in
            run order. runs: their run ids. first_seen_utc: start of its first run.
    """

    firmware: str
    values: list[float] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    first_seen_utc: str = ""

    @property
    def median(self) -> float:
        return statistics.median(self.values)


def canonical_metric(workload_id: str, metric: str) -> str:
    """``bw_mbps`` on ``seq_write_128k_qd32`` -> ``write.bw_mbps``; unknown names as given."""
    workload = find_workload(workload_id)
    if workload is None:
        return metric
    return workload.canonical_metric(metric) or metric


def trend_points(
    store: ResultsStore,
    *,
    model: str,
    workload: str,
    metric: str,
    profile: str | None = None,
    order: Sequence[str] = (),
) -> list[FirmwarePoint]:
    """Figures of ``metric`` grouped by firmware, in release order.

    Raises:
        ConfigError: nothing matches; several profiles match and none was chosen; ``order``
            names a firmware with no figure.
    """
    rows = store.query(
        "SELECT m.firmware, m.value, m.model, r.run_id, r.started_utc, r.profile "
        "FROM metrics m JOIN runs r ON r.run_id = m.run_id "
        "WHERE m.workload = ? AND m.metric = ? AND m.value IS NOT NULL "
        "ORDER BY r.started_utc, r.run_id",
        (workload, metric),
    )
    pattern = model.casefold()
    rows = [r for r in rows if fnmatch.fnmatchcase(str(r["model"] or "").casefold(), pattern)]
    if profile is not None:
        rows = [r for r in rows if r["profile"] == profile]
    if not rows:
        raise ConfigError(
            f"no stored figure of {workload} {metric} on a model matching {model!r}"
            + (f" with profile {profile}" if profile else "") + f" in {store.root}",
            key="--model/--workload/--metric",
            fix=("drive health is filed per reading: --workload 'health @ session end' (or "
                 "'health @ session start', 'health @ session start -> session end')"
                 if workload == HEALTH_WORKLOAD_ID else
                 "check the names (ssdqual compare shows what a run holds) and --results-dir"),
        )
    profiles = sorted({str(r["profile"]) for r in rows})
    if len(profiles) > 1:
        raise ConfigError(
            f"figures from several run profiles match ({', '.join(profiles)}): they are not "
            "comparable",
            key="--profile",
            fix=f"pick one, e.g. --profile {profiles[0]}",
        )
    points: dict[str, FirmwarePoint] = {}
    for r in rows:
        firmware = str(r["firmware"])
        point = points.setdefault(firmware, FirmwarePoint(firmware, first_seen_utc=str(
            r["started_utc"])))
        point.values.append(float(r["value"]))
        point.runs.append(str(r["run_id"]))
    missing = [fw for fw in order if fw not in points]
    if missing:
        raise ConfigError(
            f"--order names firmware with no figure here: {', '.join(missing)}",
            key="--order",
            fix=f"firmware with figures: {', '.join(points)}",
        )
    ordered = [points[fw] for fw in order]
    ordered += [p for fw, p in points.items() if fw not in order]
    return ordered


def format_table(points: Sequence[FirmwarePoint], metric: str) -> list[str]:
    """Markdown table: firmware, runs, median, min, max, change of the median vs the previous
    firmware (with better/worse, direction-aware; ``changed`` for a metric without a direction),
    latest run."""
    higher = is_higher_better(metric)
    lines = [
        "| firmware | runs | median | min | max | vs previous | latest run |",
        "|---|---|---|---|---|---|---|",
    ]
    previous: float | None = None
    for p in points:
        change = "-"
        if previous:
            pct = (p.median - previous) / abs(previous) * 100
            word = "better" if (pct > 0) == higher and pct != 0 else ("same" if pct == 0
                                                                         else "worse")
            if pct != 0 and not has_direction(metric):
                word = "changed"  # neither better nor worse (``gated_metrics.has_direction``)
            change = f"{signed_pct(pct)} ({word})"
        lines.append(
            f"| {p.firmware} | {len(p.values)} | {format_figure(p.median)} | "
            f"{format_figure(min(p.values))} | {format_figure(max(p.values))} | {change} | "
            f"{p.runs[-1]} |"
        )
        previous = p.median
    return lines


def plot_trend(points: Sequence[FirmwarePoint], *, title: str, metric: str, out: Path) -> Path:
    """Draw the trend as a PNG at ``out`` (matplotlib, Agg backend). Returns ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
    try:
        xs = list(range(len(points)))
        for x, p in zip(xs, points, strict=True):
            ax.scatter([x] * len(p.values), p.values, color="#8aa9d6", s=18, zorder=2,
                       label="run" if x == 0 else None)
        ax.plot(xs, [p.median for p in points], marker="o", color="#1f4e9a", zorder=3,
                label="median")
        ax.set_xticks(xs, [p.firmware for p in points])
        ax.set_xlabel("firmware (release order)")
        ax.set_ylabel(metric)
        ax.set_title(title)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(loc="best")
        fig.tight_layout()
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, format="png")
    finally:
        plt.close(fig)
    return out


def add_parser(sub: Any) -> None:
    """Register ``trend`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("trend", help="one metric across firmware versions (table, PNG chart)")
    p.add_argument("--model", required=True, help="drive model (glob, case-insensitive)")
    p.add_argument("--workload", required=True, help="workload id, e.g. seq_write_128k_qd32")
    p.add_argument("--metric", required=True,
                   help="metric, e.g. write.bw_mbps (a bare name is the workload's direction)")
    p.add_argument("--order", default="", metavar="A,B,C",
                   help="firmware release order (default: first-seen run order)")
    p.add_argument("--profile", default=None, help="run profile (needed when several match)")
    p.add_argument("-o", "--output", metavar="PNG", help="write the chart here")
    p.add_argument("--results-dir", default="ssdqual-results", metavar="DIR",
                   help="results store (default ssdqual-results)")
    p.set_defaults(ssdqual_handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual trend``: prints the table, writes the PNG when asked; exit 0."""
    metric = canonical_metric(args.workload, args.metric)
    order = [fw.strip() for fw in args.order.split(",") if fw.strip()]
    points = trend_points(ResultsStore(args.results_dir), model=args.model,
                          workload=args.workload, metric=metric, profile=args.profile,
                          order=order)
    title = f"{args.model} {args.workload} {metric}"
    print(f"# {title}")
    for line in format_table(points, metric):
        print(line)
    if args.output:
        plot_trend(points, title=title, metric=metric, out=Path(args.output))
        print(f"wrote {args.output}")
    return 0
