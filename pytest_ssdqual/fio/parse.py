"""fio's JSON document -> ``WorkloadResult``: the one module that knows fio's result schema.

Every quirk of fio's JSON (fio HOWTO, sections "Interpreting the output" and "JSON output";
the same text is fio(1)) is handled here and nowhere else:

* fio 2.x reports completion latency as ``clat`` in microseconds and ``io_bytes`` in **KiB**
  (fio issue #378); fio >= 2.99 reports ``clat_ns`` in nanoseconds, ``io_bytes`` in bytes and adds
  ``io_kbytes``; ``bw_bytes`` (bytes/s) exists from fio 3.2, ``bw`` is always KiB/s.
* A direction that did no I/O has no ``percentile`` map (fio >= 3.x with ``N``) or an all-zero
  one (fio 2.x to 3.14): it is left out of the result, never reported as a 0 us p99.
* fio 2.x to 3.1 percentile maps hold duplicate ``"0.00" : 0`` keys (unused slots).
  ``json.loads`` keeps the last one, which is harmless: they match no percentile we read.
* fio may print text around the document, or several documents: ``fio.extract`` finds the one
  to read.
* ``--client`` (client/server) output lists jobs under ``client_stats`` and adds an aggregate
  entry named ``"All clients"``, which is skipped here (it has no percentiles).
* Several job entries (``numjobs`` without ``group_reporting``) are merged: rates and counts
  summed, mean latency weighted by I/O count, maximum and percentiles taken from the worst job.
  Percentiles are never averaged: an average of p99s is not a p99 of anything. With json+
  (``clat_ns.bins``, fio's latency histogram) the percentiles come from the bins instead, checked
  against fio's map, and several entries' bins are summed: percentiles of all I/Os
  (``fio.tails``), with the deep tails p99.999 / p99.9999 and the I/O count they rest on.
  Summed rates are the sum of each job's own rate: when the entries ran for different times (a
  steady-state exit, stonewalled groups) that is not fio's group figure (all I/Os over the
  longest runtime).
* ``iops_mean``/``iops_min``/``iops_max`` are per-sample log statistics that are bogus when
  ``write_iops_log`` is set without ``log_avg_msec``; the parser reads ``iops`` (total I/Os over
  runtime) only. ``job_runtime`` is summed over the threads of a group; the parser reads the
  per-direction ``runtime`` (the measured wall time) instead.

Units (docs/qualifying.md, "Workloads"): decimal MB/s (10**6 bytes/s), microseconds, bytes.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_ssdqual.bounds import OutOfRange, check_number
from pytest_ssdqual.errors import FioJobError, FioOutputError
from pytest_ssdqual.fio.extract import extract_json_document, first_lines, json_kind, output_label
from pytest_ssdqual.fio.histogram import LatencyHistogram
from pytest_ssdqual.fio.result import (
    IO_DIRECTIONS,
    PERCENTILE_FIELDS,
    TAIL_FIELDS,
    DirectionResult,
    WorkloadResult,
)
from pytest_ssdqual.fio.tails import bins_figures, histogram_of

__all__ = ["AGGREGATE_JOB_NAMES", "parse_fio_file", "parse_fio_output", "written_bytes"]

#: Job names fio gives to aggregate entries (client/server mode), which are not jobs.
AGGREGATE_JOB_NAMES: frozenset[str] = frozenset({"All clients"})

_PERCENTILE_TOLERANCE = 1e-6
_SIGNAL_MARK = "terminating on signal"


class _Malformed(Exception):
    """A value in the document has the wrong shape; turned into ``FioOutputError``."""


def parse_fio_output(text: str, *, source: str = "fio output") -> WorkloadResult:
    """Parse everything fio wrote (``--output-format=json``, ``json+`` or ``normal,json``).

    Reads fio 2.x (``clat`` in us, ``io_bytes`` in KiB) and 3.x (``clat_ns``) documents, as
    described in the fio HOWTO, sections "Interpreting the output" and "JSON output".

    Args:
        text: fio's output; see ``extract_json_document``.
        source: what ``text`` is (a path or a phrase), named in every error message.

    Returns:
        A ``WorkloadResult`` with only the directions that did I/O. Several job entries are
        merged (``jobs_merged`` > 1, ``percentiles_worst_of_jobs`` True).

    Raises:
        FioOutputError: see ``extract_json_document``; also a document whose values have the
            wrong type, with no job entries, or in which no job did any I/O.
        FioJobError: a job reports ``error != 0`` (an errno): the message names the job, the
            errno and its meaning, e.g. ``job 'seq' failed with error 5 (Input/output error)``,
            and quotes what fio printed before the document.
    """
    label = output_label(source)
    before, doc, after = _document(text, source)
    try:
        return _build_result(doc, before, after, label, text)
    except _Malformed as exc:
        raise FioOutputError(f"{label}: {exc}", raw_output=text) from None


def parse_fio_file(path: str | os.PathLike[str]) -> WorkloadResult:
    """Parse the fio output file ``path`` (bytes decoded as UTF-8, bad bytes replaced).

    Raises:
        FioOutputError: the file is missing or unreadable, or as ``parse_fio_output``.
        FioJobError: as ``parse_fio_output``.
    """
    source = str(path)
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        raise FioOutputError(
            f"{output_label(source)} does not exist: fio wrote no result — see its stderr"
        ) from None
    except OSError as exc:
        raise FioOutputError(
            f"{output_label(source)} cannot be read: {exc.strerror or exc}"
        ) from None
    return parse_fio_output(data.decode("utf-8", errors="replace"), source=source)


def written_bytes(text: str, *, source: str = "fio output",
                  directions: tuple[str, ...] = ("write",)) -> int:
    """Bytes one fio run wrote: ``write.io_bytes`` summed over its job entries (client/server
    aggregates skipped; fio 2.x KiB converted), counting jobs that failed too -- what reached
    the drive, not whether the run succeeded. ``directions=("write", "trim")`` adds the bytes
    it trimmed. I/O during a job's ``ramp_time`` is in no ``io_bytes`` (fio 3.33).

    Raises:
        FioOutputError: no JSON document in ``text`` (see ``extract_json_document``), or job
            entries of the wrong shape; the message names ``source``.
    """
    label = output_label(source)
    _before, doc, _after = _document(text, source)
    jobs = doc.get("jobs", doc.get("client_stats"))
    try:
        if not isinstance(jobs, list):
            raise _Malformed(f"'jobs' is a {json_kind(jobs)}, not a list")
        total = 0
        for index, job in enumerate(jobs):
            if not isinstance(job, dict):
                raise _Malformed(f"jobs[{index}] is a {json_kind(job)}, not an object")
            if str(job.get("jobname", "")) in AGGREGATE_JOB_NAMES:
                continue
            for direction in directions:
                raw = job.get(direction)
                if isinstance(raw, dict):
                    total += _io_bytes(raw, f"jobs[{index}].{direction}")
        return total
    except _Malformed as exc:
        raise FioOutputError(f"{label}: {exc}", raw_output=text) from None


#: The last document read (``_document``): a run's output is read by ``written_bytes`` (the
#: session's write tally) and then by ``parse_fio_output`` (its check): decoded once.
_last: list[tuple[str, str, tuple[str, dict, str]]] = []


def _document(text: str, source: str) -> tuple[str, dict, str]:
    """``extract_json_document(text, source=source)``, kept for the next call with the same
    text and source (one entry; neither reader here changes the document). The entry is read
    once into a local: another thread (the background engine probe parses its own output) may
    replace or empty ``_last`` between a check and a use."""
    entry = _last[0] if _last else None
    if entry is not None and entry[1] == source and entry[0] == text:
        return entry[2]
    found = extract_json_document(text, source=source)
    _last[:] = [(text, source, found)]
    return found


def _build_result(doc: dict, before: str, after: str, label: str, text: str) -> WorkloadResult:
    raw_jobs = doc.get("jobs", doc.get("client_stats"))
    if not isinstance(raw_jobs, list):
        raise _Malformed(f"'jobs' is a {json_kind(raw_jobs)}, not a list")
    for index, job in enumerate(raw_jobs):
        if not isinstance(job, dict):
            raise _Malformed(f"jobs[{index}] is a {json_kind(job)}, not an object")
    _raise_job_errors(raw_jobs, before, label, text)

    jobs = [j for j in raw_jobs if str(j.get("jobname", "")) not in AGGREGATE_JOB_NAMES]
    if not jobs:
        raise _Malformed("the JSON document lists no jobs")

    per_direction: dict[str, list[DirectionResult]] = {}
    runtime_ms = 0
    for index, job in enumerate(jobs):
        for name in IO_DIRECTIONS:
            raw = job.get(name)
            if raw is None:
                continue
            where = f"jobs[{index}].{name}"
            if not isinstance(raw, dict):
                raise _Malformed(f"{where} is a {json_kind(raw)}, not an object")
            runtime_ms = max(runtime_ms, int(_number(raw, "runtime", where)))
            result = _direction(name, raw, where)
            if result is not None:
                per_direction.setdefault(name, []).append(result)
    if runtime_ms == 0:
        for index, job in enumerate(jobs):
            runtime_ms = max(runtime_ms, int(_number(job, "job_runtime", f"jobs[{index}]")))

    if not per_direction:
        raise _Malformed(
            f"no job did any I/O (every direction of {len(jobs)} job entr"
            f"{'y' if len(jobs) == 1 else 'ies'} has io_bytes = total_ios = 0)"
        )
    merged = len(jobs) > 1
    binned = all(p.histogram is not None for parts in per_direction.values() for p in parts)
    directions = {
        name: (_merge(name, per_direction[name]) if merged else per_direction[name][0])
        for name in IO_DIRECTIONS
        if name in per_direction
    }
    version = doc.get("fio version", "")
    around = before + "\n" + after
    return WorkloadResult(
        fio_version=version if isinstance(version, str) else "",
        job_names=tuple(str(j.get("jobname", "")) for j in jobs),
        runtime_ms=runtime_ms,
        directions=directions,
        jobs_merged=len(jobs),
        percentiles_worst_of_jobs=merged and not binned,
        prefix_text=before,
        terminated_by_signal=_SIGNAL_MARK in around.lower(),
        end_ms=int(doc["timestamp_ms"]) if isinstance(doc.get("timestamp_ms"), int) else None,
    )


def _raise_job_errors(jobs: list[dict], before: str, label: str, text: str) -> None:
    failed: list[tuple[str, int]] = []
    for index, job in enumerate(jobs):
        errno = int(_number(job, "error", f"jobs[{index}]"))
        if errno != 0:
            failed.append((str(job.get("jobname", f"#{index}")), errno))
    if not failed:
        return
    name, errno = failed[0]
    message = f"{label}: job {name!r} failed with error {errno} ({_strerror(errno)})"
    others = {n for n, _ in failed[1:] if n != name}
    if others:
        message += f"; also failed: {', '.join(repr(n) for n in sorted(others))}"
    if before.strip():
        message += f"; fio printed before the JSON: {first_lines(before, limit=3)}"
    raise FioJobError(message, job=name, errno=errno, raw_output=text)


def _strerror(errno: int) -> str:
    """``os.strerror`` of fio's ``error``, or ``unknown error`` beyond a C int."""
    try:
        return os.strerror(errno)
    except (OverflowError, ValueError):
        return "unknown error"


def _direction(name: str, raw: Mapping[str, Any], where: str) -> DirectionResult | None:
    """One direction of one job entry, or ``None`` when it did no I/O."""
    ns_schema = "clat_ns" in raw or "lat_ns" in raw
    io_bytes = _io_bytes(raw, where)
    iops = _number(raw, "iops", where)
    runtime_ms = _number(raw, "runtime", where)
    if "total_ios" in raw:
        total_ios = int(_number(raw, "total_ios", where))
    else:  # fio 2.1 has no total_ios
        total_ios = round(iops * runtime_ms / 1000)
    if total_ios <= 0 and io_bytes <= 0:
        return None
    if "bw_bytes" in raw:
        bw_mbps = _number(raw, "bw_bytes", where) / 1e6
    else:
        bw_mbps = _number(raw, "bw", where) * 1024 / 1e6

    key, scale = ("clat_ns", 1e-3) if ns_schema else ("clat", 1.0)
    clat = raw.get(key)
    lat: dict[str, float | None] = dict.fromkeys([*PERCENTILE_FIELDS, *TAIL_FIELDS], None)
    mean_us = max_us = None
    hist: LatencyHistogram | None = None
    if isinstance(clat, dict):
        mean_us = _number(clat, "mean", f"{where}.{key}") * scale
        max_us = _number(clat, "max", f"{where}.{key}") * scale
        table = clat.get("percentile")
        if isinstance(table, dict):
            lat.update(_percentiles(table, scale, f"{where}.{key}.percentile"))
        if ns_schema:  # fio 2.x's us histogram has other buckets: not read
            try:
                hist = histogram_of(clat)
                lat.update(bins_figures(hist, lat) if hist is not None else {})
            except ValueError as exc:
                raise _Malformed(f"{where}.{key}.bins: {exc}") from None
    elif clat is not None:
        raise _Malformed(f"{where}.{key} is a {json_kind(clat)}, not an object")
    return DirectionResult(
        direction=name,
        io_bytes=io_bytes,
        total_ios=total_ios,
        iops=iops,
        bw_mbps=bw_mbps,
        lat_mean_us=mean_us,
        lat_p50_us=lat["lat_p50_us"],
        lat_p99_us=lat["lat_p99_us"],
        lat_p99_9_us=lat["lat_p99_9_us"],
        lat_p99_99_us=lat["lat_p99_99_us"],
        lat_max_us=max_us,
        lat_p99_999_us=lat["lat_p99_999_us"],
        lat_p99_9999_us=lat["lat_p99_9999_us"],
        lat_tail_ios=hist.total if hist is not None else None,
        histogram=hist,
    )


def _io_bytes(raw: Mapping[str, Any], where: str) -> int:
    """A direction's ``io_bytes`` in bytes: fio < 2.99 wrote KiB and had neither
    ``io_kbytes`` nor the ``*_ns`` keys."""
    value = _number(raw, "io_bytes", where)
    in_bytes = "io_kbytes" in raw or "clat_ns" in raw or "lat_ns" in raw
    return int(value if in_bytes else value * 1024)


def _percentiles(table: Mapping[str, Any], scale: float, where: str) -> dict[str, float | None]:
    """Read p50/p99/p99.9/p99.99 from fio's ``{"99.000000": value, ...}`` map (keys matched by
    float value). An all-zero map (idle slots in fio <= 3.14) counts as no map."""
    points: list[tuple[float, float]] = []
    for key, value in table.items():
        try:
            percent = float(key)
        except ValueError:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _Malformed(f"{where}[{key!r}] is a {json_kind(value)}, not a number")
        points.append((percent, float(_in_range(value, f"{where}[{key!r}]"))))
    out: dict[str, float | None] = dict.fromkeys(PERCENTILE_FIELDS, None)
    if not any(value for _, value in points):
        return out
    for field, wanted in PERCENTILE_FIELDS.items():
        for percent, value in points:
            if math.isclose(percent, wanted, rel_tol=0.0, abs_tol=_PERCENTILE_TOLERANCE):
                out[field] = value * scale
                break
    return out


def _merge(name: str, parts: list[DirectionResult]) -> DirectionResult:
    """Merge one direction over several job entries: sums, I/O-weighted mean, worst maximum;
    percentiles from the summed histograms when every entry has one, else the worst job's."""
    total_ios = sum(p.total_ios for p in parts)
    means = [(p.lat_mean_us, p.total_ios) for p in parts if p.lat_mean_us is not None]
    weight = sum(w for _, w in means)
    if not means:
        mean_us = None
    elif weight > 0:
        mean_us = sum(m * w for m, w in means) / weight
    else:
        mean_us = sum(m for m, _ in means) / len(means)

    def worst(field: str) -> float | None:
        values = [getattr(p, field) for p in parts if getattr(p, field) is not None]
        return max(values) if values else None

    hists = [p.histogram for p in parts if p.histogram is not None]
    hist = LatencyHistogram.merge(hists) if len(hists) == len(parts) else None
    tails: dict[str, float | None] = (
        bins_figures(hist) if hist is not None and hist.total else
        {f: worst(f) for f in (*PERCENTILE_FIELDS, *TAIL_FIELDS)})
    return DirectionResult(
        direction=name,
        io_bytes=sum(p.io_bytes for p in parts),
        total_ios=total_ios,
        iops=sum(p.iops for p in parts),
        bw_mbps=sum(p.bw_mbps for p in parts),
        lat_mean_us=mean_us,
        lat_p50_us=tails["lat_p50_us"],
        lat_p99_us=tails["lat_p99_us"],
        lat_p99_9_us=tails["lat_p99_9_us"],
        lat_p99_99_us=tails["lat_p99_99_us"],
        lat_max_us=worst("lat_max_us"),
        lat_p99_999_us=tails["lat_p99_999_us"],
        lat_p99_9999_us=tails["lat_p99_9999_us"],
        lat_tail_ios=hist.total if hist is not None else None,
        histogram=hist,
    )


def _number(obj: Mapping[str, Any], key: str, where: str) -> float:
    """``obj[key]`` as a number; a missing key is 0 (older fio omits fields it does not use)."""
    value = obj.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Malformed(f"{where}.{key} is {value!r}, not a number")
    return _in_range(value, f"{where}.{key}")


def _in_range(value: int | float, where: str) -> float:
    """A figure the parser reads: finite (json reads NaN / Infinity), 0 or more (latencies,
    rates, counts, runtimes and errnos are never negative) and at most 2**64 (fio's counters
    are 64-bit; a bigger integer would overflow ``float()``). Fields the parser does not read
    (``latency_target``, 2**64-1 style sentinels) are never checked."""
    try:
        return check_number(value)
    except OutOfRange as exc:
        raise _Malformed(f"{where} is out of range ({exc}): fio writes no such figure, the "
                         "output is corrupt") from None
