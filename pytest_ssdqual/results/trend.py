"""``ssdqual trend --model M --workload W --metric X``: one metric across firmware versions.

Reads the results store's index (every complete run), keeps the drives the selection matches --
``--model`` (fnmatch glob, case-insensitive, like threshold files' ``model``), ``--controller``
and ``--nand`` (equal, case-insensitive), ``--capacity-gb`` (``128``: within 5 % of 128 GB, or a
range ``120-130``, decimal GB) -- groups the figures by firmware and prints a table -- runs,
median, min, max, change of the median vs the previous firmware -- in firmware release order:
the order firmware first appears in the store (run start time), unless ``--order A,B,C`` gives
it (firmware not listed follow in first-seen order). ``-o PNG`` also draws the chart
(matplotlib, Agg backend: no display needed): each run's figure as a dot, the median per
firmware as a line.

Without a selection, the one drive model holding figures of the metric is taken
(``stored_models``: the command says so); several models need a selection. Runs of different
run profiles are not comparable: when the matching figures come from several profiles,
``--ssd-profile`` must pick one (a usage error otherwise). Nor are drives of different
controller, NAND or capacity: a firmware build is made per flash type (JMF667H: SVN417w for IMFT
L85C / L85A, SVN418a for Toshiba A19 128 GB, SVN423a for A19 240 GB), so a selection that mixes
them would chart the NAND's difference as a firmware change. Such a selection is refused,
naming each board it holds (controller, NAND, capacity, firmware, runs) and the options that
select one (``--nand L85C --capacity-gb 128``).
"""

from __future__ import annotations

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

__all__ = ["FirmwarePoint", "Selection", "trend_points", "format_table", "parse_capacity_gb",
           "plot_trend", "stored_models"]


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


def parse_capacity_gb(text: str) -> tuple[float, float]:
    """``--capacity-gb``: ``'128'`` -> ``(121.6, 134.4)`` (within 5 %), ``'120-130'`` ->
    ``(120.0, 130.0)``; decimal GB (10^9 bytes), inclusive.

    Raises:
        ConfigError: not a number or a ``LOW-HIGH`` range with ``LOW <= HIGH``.
    """
    try:
        if "-" in text.strip().lstrip("-"):
            low, high = (float(x) for x in text.split("-", 1))
        else:
            value = float(text)
            low, high = value * (1 - CAPACITY_TOLERANCE), value * (1 + CAPACITY_TOLERANCE)
    except ValueError:
        low = high = -1.0
    if not 0 <= low <= high:
        raise ConfigError(f"--capacity-gb {text!r} is neither a capacity nor a range",
                          key="--capacity-gb", fix="give decimal GB: 128 (within 5 %) or 120-130")
    return low, high


#: ``--capacity-gb N`` matches drives within this share of N GB (a 128 GB board reports 128.04).
CAPACITY_TOLERANCE = 0.05


@dataclass(frozen=True)
class Selection:
    """Which drives ``ssdqual trend`` charts (each ``None``: any).

    Attributes:
        model: fnmatch glob, case-insensitive. controller, nand: equal, case-insensitive.
        capacity_gb: ``(low, high)`` inclusive, decimal GB (``parse_capacity_gb``).
    """

    model: str | None = None
    controller: str | None = None
    nand: str | None = None
    capacity_gb: tuple[float, float] | None = None

    def matches(self, row: Any) -> bool:
        """True when an index row (``model``, ``controller``, ``nand``, ``capacity_bytes``)
        is selected."""
        if self.model is not None and not fnmatch.fnmatchcase(
                str(row["model"] or "").casefold(), self.model.casefold()):
            return False
        for key in ("controller", "nand"):
            wanted = getattr(self, key)
            if wanted is not None and str(row[key] or "").casefold() != wanted.casefold():
                return False
        if self.capacity_gb is not None:
            low, high = self.capacity_gb
            return low <= (row["capacity_bytes"] or 0) / 1e9 <= high
        return True

    def describe(self) -> str:
        """``model '*JMF667H*', nand L85C`` (``any drive`` when nothing is selected)."""
        parts = [f"{k} {v!r}" if k == "model" else f"{k} {v}"
                 for k, v in (("model", self.model), ("controller", self.controller),
                              ("nand", self.nand)) if v is not None]
        if self.capacity_gb is not None:
            parts.append(f"capacity {format_figure(self.capacity_gb[0])}-"
                         f"{format_figure(self.capacity_gb[1])} GB")
        return ", ".join(parts) or "any drive"


def _board(row: Any) -> tuple[str, str, int]:
    """(controller, NAND, capacity in whole GB) of an index row: what a firmware build is made
    for."""
    return (str(row["controller"] or "?"), str(row["nand"] or "?"),
            round((row["capacity_bytes"] or 0) / 1e9))


def _refuse_mixed_boards(rows: Sequence[Any], selection: Selection) -> None:
    """Raise when ``rows`` hold more than one (controller, NAND, capacity): a firmware trend
    across them would chart the NAND's (or the capacity's) difference as a firmware change."""
    boards: dict[tuple[str, str, int], dict[str, set[str]]] = {}
    for r in rows:
        entry = boards.setdefault(_board(r), {"firmware": set(), "runs": set()})
        entry["firmware"].add(str(r["firmware"]))
        entry["runs"].add(str(r["run_id"]))
    if len(boards) < 2:
        return
    listed = "; ".join(
        f"controller {c}, NAND {n}, {gb} GB: firmware {', '.join(sorted(e['firmware']))} "
        f"({len(e['runs'])} run(s))" for (c, n, gb), e in sorted(boards.items()))
    options = [" ".join(f"--{k} {v}" for k, v in (("controller", c), ("nand", n),
                                                    ("capacity-gb", gb)) if v not in ("?", 0))
               for c, n, gb in sorted(boards)]
    raise ConfigError(
        f"the selection ({selection.describe()}) mixes {len(boards)} drive types: {listed}. "
        "Firmware is built per flash type, so a trend across them would chart NAND or "
        "capacity differences as firmware changes",
        key="--model/--controller/--nand/--capacity-gb",
        fix="narrow it to one, e.g. " + " or ".join(options),
    )


def trend_points(
    store: ResultsStore,
    *,
    model: str | None = None,
    workload: str,
    metric: str,
    profile: str | None = None,
    order: Sequence[str] = (),
    selection: Selection | None = None,
) -> list[FirmwarePoint]:
    """Figures of ``metric`` grouped by firmware, in release order, for the drives of
    ``selection`` (``model``: shorthand for ``Selection(model=model)``, merged into it).

    Raises:
        ConfigError: nothing matches; the match mixes controllers, NAND types or capacities
            (``_refuse_mixed_boards``: the message lists them and how to narrow it); several
            profiles match and none was chosen; ``order`` names a firmware with no figure.
    """
    selection = selection or Selection()
    if model is not None:
        selection = Selection(model, selection.controller, selection.nand, selection.capacity_gb)
    rows = store.query(
        "SELECT m.firmware, m.value, m.model, m.controller, m.nand, d.capacity_bytes, "
        "r.run_id, r.started_utc, r.profile "
        "FROM metrics m JOIN runs r ON r.run_id = m.run_id "
        "LEFT JOIN drives d ON d.run_id = m.run_id AND d.drive = m.drive "
        "WHERE m.workload = ? AND m.metric = ? AND m.value IS NOT NULL "
        "ORDER BY r.started_utc, r.run_id",
        (workload, metric),
    )
    rows = [r for r in rows if selection.matches(r)]
    if profile is not None:
        rows = [r for r in rows if r["profile"] == profile]
    if not rows:
        raise ConfigError(
            f"no stored figure of {workload} {metric} on a drive matching "
            f"{selection.describe()}"
            + (f" with profile {profile}" if profile else "") + f" in {store.root}"
            + store.damaged_note(),
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
            key="--ssd-profile",
            fix=f"pick one, e.g. --ssd-profile {profiles[0]}",
        )
    _refuse_mixed_boards(rows, selection)
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


def stored_models(store: ResultsStore, workload: str, metric: str) -> list[str]:
    """The drive models with a stored figure of ``workload`` ``metric``, sorted."""
    rows = store.query("SELECT DISTINCT model FROM metrics WHERE workload = ? AND metric = ? "
                       "AND value IS NOT NULL ORDER BY model", (workload, metric))
    return [str(r["model"] or "") for r in rows]
