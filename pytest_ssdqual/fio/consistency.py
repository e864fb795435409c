"""IOPS consistency figures from fio's per-second IOPS log (what each figure is, its source and
how many seconds it needs: ``catalog.consistency``).

The seconds are the windows of the IOPS series (``fio.logs.to_series``, read with
``log_avg_msec=1000``): a window in which no I/O completed (fio wrote no line: a stall) is a
second of 0 IOPS and counts; the last window when shorter than the others (fio's partial last
interval) is left out, as pynvme keeps only ``mseconds // 1000`` whole seconds.

Plain Python, reads files only in :func:`log_figures`.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from fractions import Fraction
from pathlib import Path

from pytest_ssdqual.catalog.consistency import (
    BELOW_MIN_S,
    CONSISTENCY_MIN_S,
    CONSISTENCY_SLOWEST_PCT,
    LOG_SECONDS,
    ConsistencyPlan,
)
from pytest_ssdqual.fio.logs import find_logs, read_series
from pytest_ssdqual.fio.series import Series

__all__ = ["consistency_figures", "log_figures", "slowest_index", "whole_seconds"]

#: A window this close to the series' window (relative) is a whole one (float stamps).
_WHOLE = 1e-9


def whole_seconds(series: Series) -> list[float]:
    """The IOPS of each whole window of ``series`` in order (stalls as 0), without a last
    window shorter than the logging window (``series.gaps.window_s``, else the longest).

    Raises:
        ValueError: ``series`` is not an IOPS series.
    """
    if series.unit != "IOPS":
        raise ValueError(f"not an IOPS series: unit {series.unit!r}")
    durations = series.durations_s
    if not durations:
        return []
    window = series.gaps.window_s if series.gaps is not None else max(durations)
    values = list(series.values)
    if durations[-1] < window * (1 - _WHOLE):
        values.pop()
    return values


def slowest_index(n: int, slowest_pct: Fraction = CONSISTENCY_SLOWEST_PCT) -> int:
    """The index, in ``n`` seconds sorted fastest first, of the ``slowest_pct`` %-slowest one:
    ``floor(n * slowest_pct / 100)`` (pynvme's ``int(n * 99.9) // 100``; the same for every
    ``n``: the double 99.9 is a little above 99.9, so the product never drops below a whole
    number it equals exactly)."""
    return math.floor(n * slowest_pct / 100)


def consistency_figures(seconds: Sequence[float], plan: ConsistencyPlan) -> dict[str, float]:
    """The bare figures of one direction's whole seconds of IOPS (``catalog.consistency``):
    ``iops_log_s`` always, and each of ``iops_consistency_pct``, ``iops_cov_pct`` and
    ``seconds_below_<X>pct_of_mean`` the seconds suffice for (``CONSISTENCY_MIN_S``,
    ``plan.cov_last_s``, ``BELOW_MIN_S``) and whose mean is above 0 (no I/O: no ratio).

    ``iops_consistency_pct`` = IOPS of the ``slowest_index``-th second sorted fastest first /
    mean of all seconds x 100; ``iops_cov_pct`` = population standard deviation / mean of the
    last ``plan.cov_last_s`` seconds x 100; ``seconds_below_<X>pct_of_mean`` = seconds with
    IOPS < X / 100 x the mean of all seconds.
    """
    n = len(seconds)
    out: dict[str, float] = {LOG_SECONDS: float(n)}
    mean = math.fsum(seconds) / n if n else 0.0
    if n >= CONSISTENCY_MIN_S and mean > 0:
        ranked = sorted(seconds, reverse=True)
        out["iops_consistency_pct"] = ranked[slowest_index(n)] / mean * 100
    if n >= plan.cov_last_s:
        last = seconds[-plan.cov_last_s:]
        last_mean = math.fsum(last) / len(last)
        if last_mean > 0:
            out["iops_cov_pct"] = statistics.pstdev(last) / last_mean * 100
    if n >= BELOW_MIN_S and mean > 0:
        floor = plan.below_mean_pct / 100 * mean
        out[plan.below_metric] = float(sum(1 for v in seconds if v < floor))
    return out


def log_figures(workdir: Path, directions: Iterable[str], plan: ConsistencyPlan, *,
                window_ms: float, runtime_ms: int = 0) -> dict[str, float]:
    """``{'write.iops_cov_pct': ..., 'write.iops_log_s': 3.0, ...}``: the figures of each of
    ``directions`` from the IOPS logs fio wrote in ``workdir`` (``fio.logs``, read with
    ``window_ms``; a line stamped after twice ``runtime_ms`` plus a minute is an error, as for
    the methodology steps); ``{}`` when fio wrote no IOPS log, nothing for a direction with no
    line in it.

    Raises:
        FioOutputError: a malformed log.
    """
    if not find_logs(workdir, "iops"):
        return {}
    span_ms = 2 * runtime_ms + 60 * window_ms if runtime_ms > 0 else None
    out: dict[str, float] = {}
    for d in directions:
        series = read_series(workdir, "iops", d, window_ms=window_ms, max_span_ms=span_ms)
        if not len(series):
            continue
        for name, value in consistency_figures(whole_seconds(series), plan).items():
            out[f"{d}.{name}"] = value
    return out
