"""The drive's temperature on the per-second bandwidth chart: a second y-axis on the same time
axis, with WCTEMP as a dotted line.

Input: a test's ``temperature.csv`` (``qualify.temperature``: ``time_s, t_s, temperature_c,
warning_c``; ``t_s`` already on the chart's axis: seconds after the workload's measured start,
or after a methodology test's start). No I/O but reading that file; matplotlib only when drawn.
"""

from __future__ import annotations

import csv
import io
from collections.abc import MutableMapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ssdqual.report.plots import Panel

__all__ = ["TEMPERATURE_AXIS", "temperature_secondary", "with_temperature_chart"]

#: The second y-axis' label.
TEMPERATURE_AXIS = "drive temperature (°C)"


def temperature_secondary(csv_text: str
                          ) -> tuple[str, tuple[tuple[float, ...], tuple[float, ...]],
                                     dict[str, float]] | None:
    """``Panel.secondary`` from a ``temperature.csv`` text: the samples on the chart's axis and
    ``{"WCTEMP 70 °C": 70.0}`` when the drive reports one; None without a sample."""
    times: list[float] = []
    temps: list[float] = []
    warning: float | None = None
    for row in csv.DictReader(io.StringIO(csv_text)):
        try:
            times.append(float(row["t_s"]))
            temps.append(float(row["temperature_c"]))
        except (KeyError, TypeError, ValueError):
            continue
        try:
            warning = float(row.get("warning_c") or "")
        except ValueError:
            pass
    if not times:
        return None
    refs = {f"WCTEMP {warning:g} °C": warning} if warning is not None else {}
    return TEMPERATURE_AXIS, (tuple(times), tuple(temps)), refs


def with_temperature_chart(charts: MutableMapping[str, bytes], name: str,
                           panels: Sequence[Panel], csv_path: Path, *, title: str) -> bool:
    """Redraw ``charts[name]`` (the over-time chart of ``panels``) with the temperature of
    ``csv_path`` on its bandwidth panel's second y-axis. False (nothing changed) when the file
    is missing or has no sample, or no panel is a bandwidth panel."""
    try:
        secondary = temperature_secondary(csv_path.read_text())
    except OSError:
        return False
    bandwidth = [i for i, p in enumerate(panels) if p.ylabel.startswith("bandwidth")]
    if secondary is None or not bandwidth:
        return False
    from pytest_ssdqual.report.plots import over_time_chart

    drawn = list(panels)
    drawn[bandwidth[0]] = replace(drawn[bandwidth[0]], secondary=secondary)
    charts[name] = over_time_chart(drawn, title=title)
    return True
