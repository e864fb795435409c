"""The SNIA PTS tests' plots, drawn from their report tables (``methodology.pts_tables``): the
steady-state convergence of each tracked figure with its measurement window and fit line
(``plots.steady_state_chart``, as the steady-state test's), and the measurement window's figures
-- IOPS per R/W mix by block size, throughput per point, latency (average, maximum, five nines)
per mix by block size. Source of the layout: SNIA PTS "Reporting requirements" (the steady-state
convergence and measurement-window plots, the 2D IOPS and latency plots by block size)."""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping

from pytest_ssdqual.catalog import pts

__all__ = ["pts_charts"]

ROUNDS = "pts-rounds.csv"
STEADY = "pts-steady-state.csv"
WINDOW = "pts-window.csv"


def _rows(text: str | None) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text or "")))


def _num(value: str | None) -> float | None:
    try:
        return float(value) if value else None
    except ValueError:
        return None


def _size(x: float) -> str:
    return pts.size_text(int(x))


def steady_charts(tables: Mapping[str, str], *, title: str) -> dict[str, bytes]:
    """``chart: PTS steady state <tracked>`` per row of ``pts-steady-state.csv`` whose figure
    has a value in every round of ``pts-rounds.csv`` up to its window."""
    from pytest_ssdqual.report import plots

    rounds = _rows(tables.get(ROUNDS))
    out: dict[str, bytes] = {}
    for row in _rows(tables.get(STEADY)):
        name = row["tracked"]
        values = [v for r in rounds if (v := _num(r.get(name))) is not None]
        first, last = int(row["window_first_round"] or 0), int(row["window_last_round"] or 0)
        if not values or not 1 <= first <= last <= len(values):
            continue
        reached = int(row["steady_state_round"]) if row.get("steady_state_round") else None
        out[f"chart: PTS steady state {name}"] = plots.steady_state_chart(
            values, window_first_round=first, window_last_round=last,
            ylabel=f"{name} ({row.get('unit', '')}) per round", title=title,
            reached_round=reached)
    return out


def window_charts(tables: Mapping[str, str], *, title: str) -> dict[str, bytes]:
    """The measurement window's chart: IOPS or latency per R/W mix by block size (log axes),
    throughput per point (bars)."""
    from pytest_ssdqual.report import plots

    rows = _rows(tables.get(WINDOW))
    if not rows:
        return {}
    if "iops" in rows[0]:
        lines: dict[str, list[tuple[float, float]]] = {}
        for r in rows:
            iops = _num(r["iops"])
            if iops:
                lines.setdefault(f"R/W {r['rw_mix']}", []).append((float(r["bs_bytes"]), iops))
        return {"chart: PTS IOPS by block size": plots.qd_scaling_chart(
            lines, ylabel="IOPS (window mean)", title=title, xlabel="block size",
            x_tick=_size)}
    if "bw_mbps" in rows[0]:
        bars = {r["point"]: v for r in rows if (v := _num(r["bw_mbps"])) is not None}
        return {"chart: PTS throughput": plots.bar_chart(
            bars, ylabel="MB/s (window mean)", title=title)}
    lat: dict[str, list[tuple[float, float]]] = {}
    for r in rows:
        for figure, label in (("lat_mean_us", "average"), ("lat_p99_999_us", "p99.999"),
                              ("lat_max_us", "maximum")):
            v = _num(r.get(figure))
            if v:
                lat.setdefault(f"R/W {r['rw_mix']} {label}", []).append(
                    (float(r["bs_bytes"]), v))
    return {"chart: PTS latency by block size": plots.qd_scaling_chart(
        lat, ylabel="latency (µs)", title=title, xlabel="block size", x_tick=_size)}


def pts_charts(tables: Mapping[str, str], *, title: str) -> dict[str, bytes]:
    """Every PTS chart the tables support (``{}`` for a test without PTS tables)."""
    if STEADY not in tables and WINDOW not in tables:
        return {}
    return {**steady_charts(tables, title=title), **window_charts(tables, title=title)}
