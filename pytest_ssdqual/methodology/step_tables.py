"""A methodology test's steps as tables: one row per fio step, and every step's per-second
log on one time line (``MethodologyResult.rounds_csv`` / ``per_second_csv``; attached to
Allure and read back by the charts, ``report.chart_data``). Plain Python (no pytest)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.base import Step

__all__ = ["per_second_csv", "rounds_csv"]


def rounds_csv(steps: Sequence[Step]) -> str:
    """One row per fio step: ``phase, round, state, idle_before_s, start_s, job, iops,
    bw_mbps, lat_mean_us, lat_p99_us, lat_max_us`` (figures of the job's direction; empty
    when NaN)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["phase", "round", "state", "idle_before_s", "start_s", "job",
                     "iops", "bw_mbps", "lat_mean_us", "lat_p99_us", "lat_max_us"])
    for s in steps:
        writer.writerow([
            s.phase, "" if s.round is None else s.round, s.state,
            "" if s.idle_before_s is None else f"{s.idle_before_s:g}", f"{s.start_s:.1f}",
            s.job.name, *(_fmt(s.figure(m)) for m in
                          ("iops", "bw_mbps", "lat_mean_us", "lat_p99_us", "lat_max_us")),
        ])
    return out.getvalue()


def per_second_csv(steps: Sequence[Step]) -> str:
    """Every step's per-second log on one time line (seconds since the test started):
    ``t_s, phase, round, job, bw_mbps, iops, lat_mean_us``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["t_s", "phase", "round", "job", "bw_mbps", "iops", "lat_mean_us"])
    for s in steps:
        rows: dict[float, list[str]] = {}
        for col, series in enumerate((s.bw, s.iops, s.lat)):
            if series is None:
                continue
            for t, v in zip(series.t_s, series.values, strict=True):
                rows.setdefault(round(t), ["", "", ""])[col] = _fmt(v)
        for t in sorted(rows):
            writer.writerow([f"{s.start_s + t:.0f}", s.phase,
                             "" if s.round is None else s.round, s.job.name, *rows[t]])
    return out.getvalue()


def _fmt(value: float) -> str:
    return "" if value != value else f"{value:.6g}"  # NaN -> empty
