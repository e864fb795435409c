"""Read fio's per-interval logs (``write_bw_log``, ``write_iops_log``, ``write_lat_log``).

With ``log_avg_msec=1000`` fio writes one line per second and direction to
``<prefix>_bw.<job>.log``, ``<prefix>_iops.<job>.log`` and ``<prefix>_{lat,clat,slat}.<job>.log``::

    1000, 894208, 1, 0, 0
    2000, 962498, 1, 0, 0

Columns (fio HOWTO, "Log File Formats"): time in milliseconds since the job started (after
``ramp_time``), value, data direction (0 read, 1 write, 2 trim), block size in bytes, offset in
bytes, and the command priority. fio 3.13-3.17 write only the first 4 columns (no offset unless
``log_offset=1``; the priority column came with 3.18); fio 3.33 writes 5 (6 with
``log_prio=1``): 4, 5 and 6 columns are read. With ``log_avg_msec`` ("windowed logging") each line
is the average over its window and the block size and offset are 0. The value is KiB/s (1024
bytes/s) for bandwidth logs, I/Os per second for IOPS logs and nanoseconds for latency logs.

What a line covers (checked against fio 3.33 here and the real logs in
``../shared/cases/real/fio-logs/``):

* **its own window only**: a line closes one ``log_avg_msec`` window (1000 ms here, 250 ms in
  some published logs). fio stamps the boundary a few ms late or early (``3001``, ``999``,
  ``12999``), and under load the lateness can add up: the real fio-3.33 randrw log here (16
  jobs, QD64) is 38 ms late at 59 s (``59038``), about 1 ms a second; at that rate a
  whole-drive fill of hours ends seconds late (fio 3.33 here, one light job: no drift). Each
  line is therefore placed relative to the one before it, whose drift (its stamp less its
  window's nominal end) is taken off: a line between others closes the window the nearest
  whole number of windows after the previous line's; the first and the last line close the
  window they reach when at most 10 % of a window past its boundary (``window_index``). A drift
  of any size is followed; a gap of whole windows is still a gap, the same stamp is still the
  same window. The last, partial window may be missing, or present with its real length (only
  the last line can end one).
* **no line = no completed I/O**: fio writes nothing for a window in which no I/O completed, so
  a missing window is a *stall*: bandwidth and IOPS 0 for it (never the time since the previous
  line), latency left out. Stalls are reported (``LogGaps``: number, longest, total).
* **repeated stamps are one window**: fio <= 3.24 can write several lines for the same window
  (fio issues 739, 947, 971; PR 982: ``add_log_sample`` advanced its clock by one window only).
  They are averaged, never summed into one second, and counted.

Several jobs' logs are combined window by window: bandwidth and IOPS summed, latency averaged.
The window length is taken from the most common spacing of the stamps (or given).

The series returned (``fio.series``) are in the project's units: seconds, decimal MB/s (10^6
bytes/s), IOPS, microseconds.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.log_format import (
    DEFAULT_WINDOW_MS,
    DIRECTIONS,
    LATE_SHARE,
    LOG_KINDS,
    MAX_LOG_WINDOWS,
    LogSample,
    beyond_bound,
    parse_log,
    read_log,
    series_unit,
    window_bound,
    window_index,
)
from pytest_ssdqual.fio.series import BandwidthSeries, LogGaps, Series, Stall

__all__ = ["DEFAULT_WINDOW_MS", "DIRECTIONS", "LATE_SHARE", "LOG_KINDS", "MAX_LOG_WINDOWS",
           "LogSample", "bandwidth_series", "find_logs", "infer_window_ms", "parse_log",
           "read_log", "read_series", "to_series", "window_index"]

_LOG_NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)\.(?P<job>\d+)\.log$")


def find_logs(workdir: Path, kind: str, prefix: str = "log") -> list[Path]:
    """fio's logs of ``kind`` (``bw``, ``iops``, ``lat``, ...) in ``workdir``, one per job,
    ordered by job number."""
    if kind not in LOG_KINDS:
        raise ValueError(f"unknown log kind {kind!r}: one of {', '.join(LOG_KINDS)}")
    found = []
    for path in workdir.glob(f"{prefix}_{kind}.*.log"):
        m = _LOG_NAME.match(path.name)
        if m and m.group("prefix") == prefix and m.group("kind") == kind:
            found.append((int(m.group("job")), path))
    return [p for _, p in sorted(found)]


def infer_window_ms(per_job: Iterable[Sequence[LogSample]]) -> float:
    """fio's ``log_avg_msec`` as the logs show it: the most common spacing of consecutive
    distinct stamps of one job and direction (the first stamp counts as a spacing from 0),
    rounded to 10 ms (1 ms below 100 ms) so that fio's late stamps (``3001``) do not shift it;
    on a tie the shorter. A gap (stall) or a last partial window is one spacing among many, so
    it does not move the result. ``DEFAULT_WINDOW_MS`` for an empty log."""
    steps: list[float] = []
    for samples in per_job:
        last: dict[int, int] = {}
        for s in samples:
            previous = last.get(s.direction, 0)
            if s.t_ms > previous:
                steps.append(s.t_ms - previous)
                last[s.direction] = s.t_ms
    rounded = [float(round(x, -1)) if x >= 100 else float(round(x)) for x in steps]
    if not rounded:
        return DEFAULT_WINDOW_MS
    counts = Counter(rounded)
    return min(counts, key=lambda x: (-counts[x], x))


@dataclass
class _Window:
    """What one job logged for one window: its lines' values, its latest stamp and its length
    (ms)."""

    values: list[int]
    stamp_ms: int
    span_ms: float


def _place(samples: Iterable[LogSample], code: int, w: float,
           bound: tuple[int, str, str] = (MAX_LOG_WINDOWS, "fio log", "")) -> dict[int, _Window]:
    """One job's lines of direction ``code`` by the window they close, each placed relative to
    the line before it (module docstring): a line between others closes the window the nearest
    whole number of windows after the previous line's (0: a repeat of it); the first line
    and the last (which may end a partial window) go by :func:`window_index` with the drift of
    the line before them. Only the last line can end a partial window: fio writes a line
    between others when a window closes.

    ``bound``: (the last window a line may close, the log's name, what the bound is) -- a line
    beyond it raises ``FioOutputError`` naming the line. A line stamped at the job's start (a
    job shorter than fio's 1 ms stamp resolution) closes a window of 1 ms."""
    limit_k, source, why = bound
    lines = sorted((s for s in samples if s.direction == code), key=lambda s: s.t_ms)
    windows: dict[int, _Window] = {}
    k_prev, t_prev = 0, 0.0  # the job's start: the end of window 0
    for i, s in enumerate(lines):
        drift = t_prev - k_prev * w
        if 0 < i < len(lines) - 1:
            k = k_prev + math.floor((s.t_ms - t_prev) / w + 0.5)
            span = w
        else:
            k = window_index(s.t_ms, w, drift)
            nominal = s.t_ms - drift
            span = w if nominal >= (k - LATE_SHARE) * w else nominal - (k - 1) * w
        if k > limit_k:
            raise beyond_bound(f"{source}:{s.line}" if s.line is not None else source, s.t_ms,
                               k, w, limit_k, why)
        # fio stamps in whole ms: a job done within its first millisecond logs its one line at
        # 0 ms (fio 3.33, a 64 KiB write: "0, 5208, 1, 0, 0"): a window of 1 ms, not of none
        span = max(span, 1.0)
        got = windows.get(k)
        if got is None:
            windows[k] = _Window([s.value], s.t_ms, span)
        else:
            got.values.append(s.value)
            got.stamp_ms, got.span_ms = max(got.stamp_ms, s.t_ms), max(got.span_ms, span)
        k_prev, t_prev = k, s.t_ms
    return windows


def to_series(
    per_job: Iterable[Sequence[LogSample]],
    kind: str,
    direction: str = "write",
    *,
    window_ms: float | None = None,
    max_span_ms: float | None = None,
    sources: Sequence[str] | None = None,
) -> Series:
    """Combine the samples of one or more jobs into a series in the project's units, one value
    per logging window (see the module docstring for what a line covers).

    Each job's lines are put in the window they close, each relative to the one before it
    (:func:`window_index`, following fio's drift); a job's repeated lines of one window are
    averaged. Across jobs bandwidth and IOPS are summed per window and latency averaged. Every
    window from the job's start (the first ends at ``window_ms``) to the last logged one is in
    the series: a window no job logged is a stall (0 for bandwidth and IOPS, left out for
    latency) and is listed in ``Series.gaps``. A window's length is ``window_ms``, or less for a
    last window stamped early (fio's final partial interval). Times are fio's stamps (seconds);
    a stall window's end and a ``Stall``'s bounds are the nominal boundaries plus the drift of
    the line before it.

    Args:
        per_job: the samples of each job (from :func:`read_log`).
        kind: ``bw`` (-> decimal MB/s), ``iops`` (-> IOPS), ``lat``/``clat``/``slat``
            (-> microseconds).
        direction: ``read``, ``write`` or ``trim``.
        window_ms: fio's ``log_avg_msec``; ``None``: inferred (:func:`infer_window_ms`). Pass
            it when it is known (the plugin's own jobs: ``fio.job.LOG_AVG_MSEC``): a drive
            that stalls every other window makes the inferred window twice as long.
        max_span_ms: how long the job ran, plus slack (ms): a line stamped beyond it is an
            error; ``None``: at most ``MAX_LOG_WINDOWS`` windows.
        sources: each job's log name, for messages (default ``fio log``).

    Raises:
        ValueError: an unknown kind or direction, or a window that is not positive.
        FioOutputError: a line stamped beyond ``max_span_ms`` (or ``MAX_LOG_WINDOWS``
            windows), or at 0 ms (a window of no length); the message names the log and line.
    """
    if kind not in LOG_KINDS:
        raise ValueError(f"unknown log kind {kind!r}: one of {', '.join(LOG_KINDS)}")
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}: one of {', '.join(DIRECTIONS)}")
    jobs = [list(samples) for samples in per_job]
    w = infer_window_ms(jobs) if window_ms is None else float(window_ms)
    if not w > 0:
        raise ValueError(f"the logging window must be positive, got {window_ms} ms")
    code = DIRECTIONS[direction]
    limit_k, why = window_bound(w, max_span_ms)
    names = list(sources or ())
    combined: dict[int, list[float]] = {}  # window -> each job's value in it
    stamp: dict[int, int] = {}  # window -> its latest stamp
    span: dict[int, float] = {}  # window -> its length (ms): the longest any job logged
    repeated = 0
    for index, samples in enumerate(jobs):
        source = names[index] if index < len(names) else "fio log"
        for k, window in _place(samples, code, w, (limit_k, source, why)).items():
            repeated += len(window.values) - 1
            combined.setdefault(k, []).append(statistics.fmean(window.values))
            stamp[k] = max(stamp.get(k, window.stamp_ms), window.stamp_ms)
            span[k] = max(span.get(k, window.span_ms), window.span_ms)
    unit, scale, average = series_unit(kind)
    t_s: list[float] = []
    values: list[float] = []
    spans: list[float] = []
    stalls: list[Stall] = []
    drift = 0.0  # of the last logged window, for the times of a stall after it
    for k in range(1, max(combined, default=0) + 1):
        if k not in combined:
            start, end = ((k - 1) * w + drift) / 1000, (k * w + drift) / 1000
            if stalls and math.isclose(stalls[-1].end_s, start):
                stalls[-1] = Stall(stalls[-1].start_s, end)
            else:
                stalls.append(Stall(start, end))
            if not average:
                t_s.append(end)
                values.append(0.0)
                spans.append(w / 1000)
            continue
        got = combined[k]
        values.append((statistics.fmean(got) if average else math.fsum(got)) * scale)
        t_s.append(stamp[k] / 1000)
        spans.append(span[k] / 1000)
        if span[k] == w:
            drift = stamp[k] - k * w
    return Series(tuple(t_s), tuple(values), unit, tuple(spans),
                  LogGaps(w / 1000, tuple(stalls), repeated))


def read_series(workdir: Path, kind: str, direction: str = "write", prefix: str = "log",
                *, window_ms: float | None = None, max_span_ms: float | None = None) -> Series:
    """The ``kind`` series of ``direction`` from every job's log in ``workdir``
    (:func:`to_series`, ``max_span_ms`` as there). The files are read with numpy in pieces
    (``fio.log_arrays``, ``fio.log_windows``: the same series to the last bit, a 10-million-line
    per-I/O log in about 1.5 s and 90 MB); a log holding a number of 2**53 or more is read
    line by line (:func:`read_log`, :func:`to_series`).

    Raises:
        FioOutputError: no such log in ``workdir`` (fio was not asked for it, or failed), or a
            malformed one.
    """
    paths = find_logs(workdir, kind, prefix)
    if not paths:
        raise FioOutputError(
            f"no fio {kind} log ({prefix}_{kind}.N.log) in {workdir}: the job must set "
            f"write_{'lat' if kind in ('lat', 'clat', 'slat') else kind}_log={prefix} and "
            "log_avg_msec"
        )
    if direction in DIRECTIONS:
        # numpy, imported here: not at start-up
        from pytest_ssdqual.fio.log_windows import series_from_files

        series = series_from_files(paths, kind, direction, window_ms=window_ms,
                                   max_span_ms=max_span_ms)
        if series is not None:
            return series
    return to_series([read_log(p) for p in paths], kind, direction, window_ms=window_ms,
                     max_span_ms=max_span_ms, sources=[str(p) for p in paths])


def bandwidth_series(workdir: Path, direction: str = "write", prefix: str = "log",
                     *, window_ms: float | None = None) -> BandwidthSeries:
    """Per-window bandwidth (decimal MB/s) of ``direction`` from the logs in ``workdir``,
    stall windows as 0 (see ``BandwidthSeries.gaps``)."""
    return BandwidthSeries.from_series(read_series(workdir, kind="bw", direction=direction,
                                                   prefix=prefix, window_ms=window_ms))
