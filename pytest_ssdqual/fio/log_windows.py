"""The windows of fio logs read as arrays (``fio.log_arrays``), placed and combined by the rule
of ``fio.logs`` (its module docstring; ``fio.logs._place`` and ``fio.logs.to_series`` are the
line-by-line statement of it), with numpy: the same series to the last bit.

Placing lines sorted by stamp: the first and the last line go by ``fio.logs.window_index``
with the drift of the line before them; every line between closes the window
``k_prev + floor((t - t_prev) / w + 0.5)``. Lines of one stamp between others therefore close
the same window, so the windows of a job are: the first line's ``k1``, then ``k1`` plus the
running sum of the rounded steps between distinct stamps, then the last line's. Arithmetic is
done in the same order and precision as there (float64; integer sums exact in int64, the
inputs being below 2**53), and sums of more than two floats with ``math.fsum``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pytest_ssdqual.fio.log_arrays import StampGroups, infer_window, locate_line, read_groups
from pytest_ssdqual.fio.log_format import (
    DIRECTIONS,
    LATE_SHARE,
    beyond_bound,
    series_unit,
    window_bound,
    window_index,
)
from pytest_ssdqual.fio.series import LogGaps, Series, Stall

#: (log path, direction, stamp, last occurrence) -> its line number (``log_arrays.locate_line``).
Locate = Callable[..., int | None]


@dataclass
class JobWindows:
    """One job's windows: index (1-based), the mean of its lines (fio's unit), its latest
    stamp (ms), its length (ms); and how many lines repeated a window."""

    k: np.ndarray
    mean: np.ndarray
    stamp_ms: np.ndarray
    span_ms: np.ndarray
    repeated: int


def _edge(t_ms: int, t_prev: float, k_prev: int, w: float) -> tuple[int, float]:
    """(window, length ms) of the first or last line: ``fio.logs._place``'s own arithmetic."""
    drift = t_prev - k_prev * w
    k = window_index(t_ms, w, drift)
    nominal = t_ms - drift
    span = w if nominal >= (k - LATE_SHARE) * w else nominal - (k - 1) * w
    return k, max(span, 1.0)


def place(g: StampGroups, w: float, bound: tuple[int, str], locate: Locate) -> JobWindows:
    """``fio.logs._place`` on a job's stamp groups: each window's mean, latest stamp, length.

    Raises:
        FioOutputError: a line closing a window beyond ``bound`` (the last window allowed, what
            that is); the message names the log and the line (found by ``locate``).
    """
    limit_k, why = bound

    def beyond(t_ms: int, k: int, last: bool = False) -> Exception:
        line = locate(Path(g.source), g.code, t_ms, last=last)
        return beyond_bound(f"{g.source}:{line}", t_ms, k, w, limit_k, why)

    t0, v0 = g.first
    k0, span0 = _edge(t0, 0.0, 0, w)
    if k0 > limit_k:
        raise beyond(t0, k0)
    if g.lines == 1:
        one = np.array([k0])
        return JobWindows(one, np.array([float(v0)]), np.array([t0]), np.array([span0]), 0)
    count, total = g.count.copy(), g.total.copy()
    count[0] -= 1  # the first line, placed above
    total[0] -= v0
    t_last, v_last = g.last
    count[-1] -= 1  # the last line, placed below
    total[-1] -= v_last
    keep = count > 0
    mid_t, mid_count, mid_total = g.t_ms[keep], count[keep], total[keep]
    k_prev, t_prev = k0, t0
    mid_k = np.zeros(0, dtype=np.int64)
    if mid_t.size:
        step = np.floor(np.diff(mid_t, prepend=t0) / w + 0.5)
        k_float = k0 + np.cumsum(step)
        over = np.flatnonzero(k_float > limit_k)
        if over.size:
            j = int(over[0])
            k_before = k0 if j == 0 else int(k_float[j - 1])
            raise beyond(int(mid_t[j]), k_before + int(step[j]))
        mid_k = k_float.astype(np.int64)
        k_prev, t_prev = int(mid_k[-1]), int(mid_t[-1])
    k_last, span_last = _edge(t_last, t_prev, k_prev, w)
    if k_last > limit_k:
        raise beyond(t_last, k_last, last=True)
    k = np.concatenate(([k0], mid_k, [k_last]))
    t = np.concatenate(([t0], mid_t, [t_last]))
    lines = np.concatenate(([1], mid_count, [1]))
    sums = np.concatenate(([v0], mid_total, [v_last]))
    spans = np.concatenate(([span0], np.full(mid_t.size, max(w, 1.0)), [span_last]))
    starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    window_lines = np.add.reduceat(lines, starts)
    mean = np.add.reduceat(sums, starts).astype(np.float64) / window_lines
    return JobWindows(k[starts], mean, np.maximum.reduceat(t, starts),
                      np.maximum.reduceat(spans, starts), g.lines - starts.size)


def _across_jobs(jobs: Sequence[JobWindows], average: bool
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(window, value, latest stamp, length) over jobs: each window's job means summed
    (``math.fsum``), or averaged (``statistics.fmean``) when ``average``."""
    if len(jobs) == 1:
        j = jobs[0]
        return j.k, j.mean, j.stamp_ms, j.span_ms
    k = np.concatenate([j.k for j in jobs])
    order = np.argsort(k, kind="stable")
    k, mean = k[order], np.concatenate([j.mean for j in jobs])[order]
    stamp = np.concatenate([j.stamp_ms for j in jobs])[order]
    span = np.concatenate([j.span_ms for j in jobs])[order]
    starts = np.flatnonzero(np.concatenate(([True], k[1:] != k[:-1])))
    size = np.diff(np.append(starts, k.size))
    value = np.add.reduceat(mean, starts)  # exact for one or two floats (one rounding)
    for i in np.flatnonzero(size > 2).tolist():  # more: math.fsum, as fmean and fsum do
        value[i] = math.fsum(mean[starts[i]:starts[i] + size[i]].tolist())
    if average:
        value = value / size
    return (k[starts], value, np.maximum.reduceat(stamp, starts),
            np.maximum.reduceat(span, starts))


def _stalls(missing: np.ndarray, drift: np.ndarray, w: float) -> tuple[Stall, ...]:
    """The stalls of the windows no job logged (``fio.logs.to_series``): each from its nominal
    boundaries plus ``drift``, joined to the one before when they meet (``math.isclose``)."""
    if not missing.size:
        return ()
    start = ((missing - 1) * w + drift) / 1000
    end = (missing * w + drift) / 1000
    a, b = end[:-1], start[1:]
    gap = np.abs(b - a)
    joined = (a == b) | (gap <= np.abs(1e-9 * b)) | (gap <= np.abs(1e-9 * a))
    first = np.flatnonzero(np.concatenate(([True], ~joined)))
    final = np.append(first[1:] - 1, missing.size - 1)
    return tuple(Stall(s, e) for s, e in zip(start[first].tolist(), end[final].tolist(),
                                              strict=True))


def combine(groups: Sequence[StampGroups], kind: str, w: float, max_span_ms: float | None,
            locate: Locate) -> Series:
    """``fio.logs.to_series`` of jobs read as stamp groups, in windows of ``w`` ms.

    Raises:
        FioOutputError: a line stamped beyond ``max_span_ms`` (see ``fio.logs.window_bound``).
    """
    bound = window_bound(w, max_span_ms)
    jobs = [place(g, w, bound, locate) for g in groups if g.lines]
    unit, scale, average = series_unit(kind)
    if not jobs:
        return Series((), (), unit, (), LogGaps(w / 1000))
    k, value, stamp, span = _across_jobs(jobs, average)
    repeated = sum(j.repeated for j in jobs)
    logged = np.zeros(int(k[-1]), dtype=bool)
    logged[k - 1] = True
    missing = np.flatnonzero(~logged) + 1
    full = span == w  # the windows whose drift a stall after them follows
    drift_at = stamp[full] - k[full] * w
    before = np.searchsorted(k[full], missing) - 1
    drift = np.where(before >= 0, drift_at[np.maximum(before, 0)] if drift_at.size else 0.0,
                     0.0)
    stalls = _stalls(missing, drift, w)
    if average:
        t_s, values, spans = stamp / 1000, value * scale, span / 1000
    else:
        t_s = np.empty(logged.size)
        values = np.zeros(logged.size)
        spans = np.full(logged.size, w / 1000)
        t_s[k - 1], values[k - 1], spans[k - 1] = stamp / 1000, value * scale, span / 1000
        t_s[missing - 1] = (missing * w + drift) / 1000
    return Series(tuple(t_s.tolist()), tuple(values.tolist()), unit, tuple(spans.tolist()),
                  LogGaps(w / 1000, stalls, repeated))


def series_from_files(paths: Sequence[Path], kind: str, direction: str, *,
                      window_ms: float | None = None, max_span_ms: float | None = None
                      ) -> Series | None:
    """``fio.logs.to_series`` of the logs at ``paths`` (one per job), read with numpy; ``None``
    when a log needs the per-line reader (module docstring).

    Raises:
        ValueError: a window that is not positive.
        FioOutputError: unreadable, a malformed line, or a line stamped beyond ``max_span_ms``
            (or ``MAX_LOG_WINDOWS`` windows); the message names the file and line.
    """
    groups = []
    for path in paths:
        g = read_groups(path, DIRECTIONS[direction], count_steps=window_ms is None)
        if g is None:
            return None
        groups.append(g)
    w = infer_window(groups) if window_ms is None else float(window_ms)
    if not w > 0:
        raise ValueError(f"the logging window must be positive, got {window_ms} ms")
    return combine(groups, kind, w, max_span_ms, locate_line)
