"""fio's JSON output -> ``WorkloadResult``: the one module that knows fio's result schema.

Every quirk of fio's JSON (fio HOWTO, sections "Interpreting the output" and "JSON output";
the same text is fio(1)) is handled here and nowhere else:

* fio 2.x reports completion latency as ``clat`` in microseconds and ``io_bytes`` in **KiB**
  (fio issue #378); fio >= 2.99 reports ``clat_ns`` in nanoseconds, ``io_bytes`` in bytes and adds
  ``io_kbytes``; ``bw_bytes`` (bytes/s) exists from fio 3.2, ``bw`` is always KiB/s.
* A direction that did no I/O has no ``percentile`` map (fio >= 3.x with ``N``) or an all-zero
  one (fio 2.x to 3.14): it is left out of the result, never reported as a 0 us p99.
* fio 2.x to 3.1 percentile maps hold duplicate ``"0.00" : 0`` keys (unused slots).
  ``json.loads`` keeps the last one, which is harmless: they match no percentile we read.
* fio may print text before the document (warnings, ``fio: terminating on signal 2``) and, with
  ``--output-format=normal,json``, normal text around it; ``--status-interval`` writes one full
  document per interval (the last one is the final result). Error lines and the document go to
  the ``--output`` file through different buffers: after hundreds of ``io_u error`` lines the
  document was seen starting in the middle of a cut error line (fio 3.33, a full file system).
* ``--client`` (client/server) output lists jobs under ``client_stats`` and adds an aggregate
  entry named ``"All clients"``, which is skipped here (it has no percentiles).
* Several job entries (``numjobs`` without ``group_reporting``) are merged: rates and counts
  summed, mean latency weighted by I/O count, maximum and percentiles taken from the worst job.
  Percentiles are never averaged: an average of p99s is not a p99 of anything. Summed rates are
  the sum of each job's own rate: when the entries ran for different times (a steady-state exit,
  stonewalled groups) that is not fio's group figure (all I/Os over the longest runtime).
* ``iops_mean``/``iops_min``/``iops_max`` are per-sample log statistics that are bogus when
  ``write_iops_log`` is set without ``log_avg_msec``; the parser reads ``iops`` (total I/Os over
  runtime) only. ``job_runtime`` is summed over the threads of a group; the parser reads the
  per-direction ``runtime`` (the measured wall time) instead.

Units follow DESIGN.md "Units and names": decimal MB/s (10**6 bytes/s), microseconds, bytes.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ssdqual.catalog.workloads import DIRECTION_METRICS, TOTAL_METRICS
from pytest_ssdqual.errors import FioJobError, FioOutputError

#: fio's I/O directions as JSON keys, in report order. ``mixed`` replaces read/write/trim when the
#: job sets ``unified_rw_reporting``; ``sync`` (fsync latencies) is not an I/O direction.
IO_DIRECTIONS: tuple[str, ...] = ("read", "write", "trim", "mixed")

#: Job names fio gives to aggregate entries (client/server mode), which are not jobs.
AGGREGATE_JOB_NAMES: frozenset[str] = frozenset({"All clients"})

#: Field of ``DirectionResult`` -> percentile (percent) read from fio's ``percentile`` map.
PERCENTILE_FIELDS: dict[str, float] = {
    "lat_p50_us": 50.0,
    "lat_p99_us": 99.0,
    "lat_p99_9_us": 99.9,
    "lat_p99_99_us": 99.99,
}

_PERCENTILE_TOLERANCE = 1e-6
_SIGNAL_MARK = "terminating on signal"
#: Where a JSON document may start: a ``{`` at a line start, or one right before fio's first key
#: anywhere -- fio writes error lines and its JSON to the ``--output`` file through different
#: buffers, and the JSON was seen starting in the middle of a cut ``io_u error`` line.
_DOC_START = re.compile(r'^\{|\{(?=\s*"fio version")', re.MULTILINE)
_QUOTE_MAX = 200


class _Malformed(Exception):
    """A value in the document has the wrong shape; turned into ``FioOutputError``."""


@dataclass(frozen=True)
class DirectionResult:
    """What one I/O direction of a fio run measured.

    Attributes:
        direction: ``'read'``, ``'write'`` or ``'trim'`` (``'mixed'`` with unified_rw_reporting).
        io_bytes: bytes moved (fio 2.x's KiB ``io_bytes`` already converted).
        total_ios: I/Os completed (estimated as ``iops * runtime`` for fio 2.1, which lacks it).
        iops: I/Os per second over the measured runtime (fio ``iops``, never ``iops_mean``).
        bw_mbps: decimal MB/s, 10**6 bytes/s (fio ``bw_bytes``, else ``bw`` KiB/s * 1024).
        lat_mean_us, lat_max_us: completion latency mean and maximum in microseconds.
        lat_p50_us, lat_p99_us, lat_p99_9_us, lat_p99_99_us: completion latency percentiles in
            microseconds; ``None`` when fio printed no percentile map for a direction with I/O.
    """

    direction: str
    io_bytes: int
    total_ios: int
    iops: float
    bw_mbps: float
    lat_mean_us: float | None
    lat_p50_us: float | None
    lat_p99_us: float | None
    lat_p99_9_us: float | None
    lat_p99_99_us: float | None
    lat_max_us: float | None

    def metrics(self) -> dict[str, float]:
        """``{'iops': ..., 'bw_mbps': ..., 'lat_p99_us': ...}``: the non-``None`` metrics, in the
        order of ``workloads.DIRECTION_METRICS``."""
        out: dict[str, float] = {}
        for name in DIRECTION_METRICS:
            value = getattr(self, name)
            if value is not None:
                out[name] = float(value)
        return out


@dataclass(frozen=True)
class WorkloadResult:
    """One fio run, read from its JSON document.

    Attributes:
        fio_version: ``"fio version"`` as printed (``'fio-3.33'``, ``'fio-3.14-6-g97134'``);
            ``''`` when absent.
        job_names: name of every merged job entry, in document order (one per entry, so
            ``len(job_names) == jobs_merged``).
        runtime_ms: longest measured runtime of any job and direction, in ms (fio's
            per-direction ``runtime``; ``job_runtime`` only when no direction has one, because
            fio sums ``job_runtime`` over the threads of a reporting group).
        directions: the directions that did I/O, keyed ``'read'``/``'write'``/``'trim'``.
        jobs_merged: number of job entries merged (1 with ``group_reporting``).
        percentiles_worst_of_jobs: True when several entries were merged: each percentile is
            then the worst job's, not a percentile of all I/Os.
        prefix_text: text fio printed before the JSON document (warnings, errors, signals).
        terminated_by_signal: the text around the document says ``terminating on signal``: fio
            was interrupted, figures cover only part of the asked run.
    """

    fio_version: str
    job_names: tuple[str, ...]
    runtime_ms: int
    directions: dict[str, DirectionResult]
    jobs_merged: int
    percentiles_worst_of_jobs: bool
    prefix_text: str
    terminated_by_signal: bool

    def metrics(self) -> dict[str, float]:
        """Canonical metrics: ``{'read.iops': ..., 'write.lat_p99_us': ..., ...}``.

        When both read and write did I/O, also ``total.iops`` and ``total.bw_mbps`` (sums).
        """
        out: dict[str, float] = {}
        for name, result in self.directions.items():
            for metric, value in result.metrics().items():
                out[f"{name}.{metric}"] = value
        if "read" in self.directions and "write" in self.directions:
            read, write = self.directions["read"], self.directions["write"]
            for metric in TOTAL_METRICS:
                out[f"total.{metric}"] = float(getattr(read, metric) + getattr(write, metric))
        return out


def extract_json_document(text: str, *, source: str = "fio output") -> tuple[str, dict, str]:
    """Find fio's JSON document in ``text``: ``(text before, document, text after)``.

    fio may print warnings or errors before the document and, with
    ``--output-format=normal,json``, normal-format text around it (fio HOWTO, sections
    "Interpreting the output" and "JSON output"). With
    ``--status-interval`` the text holds one document per interval: the last is returned and
    the interim ones are dropped from the text before it.

    Args:
        text: everything fio wrote (the ``--output`` file or stdout).
        source: what ``text`` is, for messages: a path, or a phrase like ``"fio output"``.

    Returns:
        The text before the document, the parsed document (a dict with a ``jobs`` or, in
        client/server mode, ``client_stats`` list) and the text after it.

    Raises:
        FioOutputError: (``raw_output=text``) empty text; no JSON object at all (the message
            quotes fio's first line, e.g. ``fio: engine libaio not loadable``); truncated or
            invalid JSON; a JSON value that is not an object or has no ``jobs`` list.
    """
    label = _label(source)
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        if not text:
            raise FioOutputError(
                f"{label} is empty (0 bytes): fio wrote nothing — see its stderr",
                raw_output=text,
            )
        raise FioOutputError(
            f"{label} holds only whitespace ({len(text)} bytes): fio wrote no result — "
            "see its stderr",
            raw_output=text,
        )
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        pass
    else:
        _check_document(whole, label, text)
        return "", whole, ""

    decoder = json.JSONDecoder()
    docs: list[tuple[int, int, dict]] = []
    failures: list[tuple[int, json.JSONDecodeError]] = []
    other: Any = None
    pos = 0
    for match in _DOC_START.finditer(text):
        start = match.start()
        if start < pos:
            continue
        try:
            obj, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            failures.append((start, exc))
            continue
        pos = end
        if _is_fio_document(obj):
            docs.append((start, end, obj))
        elif other is None:
            other = obj

    if not docs:
        if failures:
            bad_start, error = failures[0]
            lines = text.split("\n")  # json counts lines by "\n" only
            bad_line = lines[error.lineno - 1] if 0 < error.lineno <= len(lines) else ""
            raise FioOutputError(
                f"{label} holds truncated or invalid JSON: the document starting on line "
                f"{_line_of(text, bad_start)} breaks at line {error.lineno} column "
                f"{error.colno} ({error.msg}; the line reads {bad_line.strip()[:_QUOTE_MAX]!r})"
                " — fio was killed while writing, the file was cut, or text was printed inside "
                "the document",
                raw_output=text,
            )
        if other is not None:
            _check_document(other, label, text)
        raise FioOutputError(
            f"{label} holds no JSON document: fio printed {_first_lines(text)}",
            raw_output=text,
        )

    start, end, doc = docs[-1]
    late = [f for f in failures if f[0] >= end]
    if late:
        bad_start, error = late[0]
        raise FioOutputError(
            f"{label}: the last JSON document (line {_line_of(text, bad_start)}) is truncated "
            f"or invalid at line {error.lineno} column {error.colno} ({error.msg}); an earlier "
            "interim document is not the final result",
            raw_output=text,
        )
    before_parts: list[str] = []
    cursor = 0
    for doc_start, doc_end, _ in docs[:-1]:
        before_parts.append(text[cursor:doc_start])
        cursor = doc_end
    before_parts.append(text[cursor:start])
    return "".join(before_parts), doc, text[end:]


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
    label = _label(source)
    before, doc, after = extract_json_document(text, source=source)
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
            f"{_label(source)} does not exist: fio wrote no result — see its stderr"
        ) from None
    except OSError as exc:
        raise FioOutputError(f"{_label(source)} cannot be read: {exc.strerror or exc}") from None
    return parse_fio_output(data.decode("utf-8", errors="replace"), source=source)


#: fio's per-I/O error line (fio ``io_u.c``, ``io_u_log_error``), printed on stderr:
#: ``fio: io_u error on file /dev/loop0: Input/output error: read offset=16777216, buflen=131072``
_IO_ERROR_LINE = re.compile(
    r"io_u error on file (?P<file>.+?): (?P<error>[^:\n]+): (?P<direction>read|write|trim|sync"
    r"|datasync|sync_file_range|\w+) offset=(?P<offset>\d+), buflen=(?P<length>\d+)"
)


@dataclass(frozen=True)
class IoError:
    """One failed I/O as fio reports it on stderr (its JSON keeps only the job's errno).

    Attributes:
        file: the file or device fio names (``/dev/loop0``).
        error: strerror text (``Input/output error``).
        direction: ``read``, ``write``, ``trim`` (or another fio ddir name).
        offset_bytes: byte offset of the failed I/O from the start of ``file``.
        length_bytes: its length in bytes (fio ``buflen``).
    """

    file: str
    error: str
    direction: str
    offset_bytes: int
    length_bytes: int

    def __str__(self) -> str:
        return (
            f"{self.direction} at offset {self.offset_bytes} ({self.length_bytes} bytes) on "
            f"{self.file}: {self.error}"
        )


def parse_io_errors(text: str) -> list[IoError]:
    """Every ``io_u error`` line in ``text`` (fio's stderr or output), in order.

    Lines that do not match fio's format are ignored; never raises.
    """
    return [
        IoError(
            file=m.group("file"),
            error=m.group("error").strip(),
            direction=m.group("direction"),
            offset_bytes=int(m.group("offset")),
            length_bytes=int(m.group("length")),
        )
        for m in _IO_ERROR_LINE.finditer(text)
    ]


# --- document -> result ---------------------------------------------------------------------


def _build_result(doc: dict, before: str, after: str, label: str, text: str) -> WorkloadResult:
    raw_jobs = doc.get("jobs", doc.get("client_stats"))
    if not isinstance(raw_jobs, list):
        raise _Malformed(f"'jobs' is a {_kind(raw_jobs)}, not a list")
    for index, job in enumerate(raw_jobs):
        if not isinstance(job, dict):
            raise _Malformed(f"jobs[{index}] is a {_kind(job)}, not an object")
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
                raise _Malformed(f"{where} is a {_kind(raw)}, not an object")
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
        percentiles_worst_of_jobs=merged,
        prefix_text=before,
        terminated_by_signal=_SIGNAL_MARK in around.lower(),
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
    message = f"{label}: job {name!r} failed with error {errno} ({os.strerror(errno)})"
    others = {n for n, _ in failed[1:] if n != name}
    if others:
        message += f"; also failed: {', '.join(repr(n) for n in sorted(others))}"
    if before.strip():
        message += f"; fio printed before the JSON: {_first_lines(before, limit=3)}"
    raise FioJobError(message, job=name, errno=errno, raw_output=text)


def _direction(name: str, raw: Mapping[str, Any], where: str) -> DirectionResult | None:
    """One direction of one job entry, or ``None`` when it did no I/O."""
    ns_schema = "clat_ns" in raw or "lat_ns" in raw
    io_bytes_value = _number(raw, "io_bytes", where)
    # fio < 2.99 wrote io_bytes in KiB and had neither io_kbytes nor the *_ns keys.
    io_bytes = int(io_bytes_value if ("io_kbytes" in raw or ns_schema) else io_bytes_value * 1024)
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
    lat: dict[str, float | None] = dict.fromkeys(PERCENTILE_FIELDS, None)
    mean_us = max_us = None
    if isinstance(clat, dict):
        mean_us = _number(clat, "mean", f"{where}.{key}") * scale
        max_us = _number(clat, "max", f"{where}.{key}") * scale
        table = clat.get("percentile")
        if isinstance(table, dict):
            lat = _percentiles(table, scale, f"{where}.{key}.percentile")
    elif clat is not None:
        raise _Malformed(f"{where}.{key} is a {_kind(clat)}, not an object")
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
    )


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
            raise _Malformed(f"{where}[{key!r}] is a {_kind(value)}, not a number")
        points.append((percent, float(value)))
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
    """Merge one direction over several job entries: sums, I/O-weighted mean, worst tail."""
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

    return DirectionResult(
        direction=name,
        io_bytes=sum(p.io_bytes for p in parts),
        total_ios=total_ios,
        iops=sum(p.iops for p in parts),
        bw_mbps=sum(p.bw_mbps for p in parts),
        lat_mean_us=mean_us,
        lat_p50_us=worst("lat_p50_us"),
        lat_p99_us=worst("lat_p99_us"),
        lat_p99_9_us=worst("lat_p99_9_us"),
        lat_p99_99_us=worst("lat_p99_99_us"),
        lat_max_us=worst("lat_max_us"),
    )


# --- small helpers --------------------------------------------------------------------------


def _label(source: str) -> str:
    return source if source.startswith("fio output") else f"fio output {source}"


def _is_fio_document(obj: Any) -> bool:
    return isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj)


def _check_document(obj: Any, label: str, text: str) -> None:
    if not isinstance(obj, dict):
        raise FioOutputError(
            f"{label} holds a JSON {_kind(obj)}, not the object fio writes", raw_output=text
        )
    if not _is_fio_document(obj):
        keys = ", ".join(sorted(map(str, obj))[:8]) or "none"
        raise FioOutputError(
            f"{label} holds a JSON object without a 'jobs' list (keys: {keys}): "
            "not a fio result",
            raw_output=text,
        )


def _number(obj: Mapping[str, Any], key: str, where: str) -> float:
    """``obj[key]`` as a number; a missing key is 0 (older fio omits fields it does not use)."""
    value = obj.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Malformed(f"{where}.{key} is {value!r}, not a number")
    if not math.isfinite(value):  # json reads NaN / Infinity; fio figures are finite
        raise _Malformed(f"{where}.{key} is {value!r}, not a finite number")
    return value


def _kind(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number" if isinstance(value, int | float) else "value")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _first_lines(text: str, *, limit: int = 1) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    quoted = " | ".join(repr(line[:_QUOTE_MAX]) for line in lines[:limit])
    if len(lines) > limit:
        quoted += f" (+{len(lines) - limit} more line{'s' if len(lines) - limit > 1 else ''})"
    return quoted
