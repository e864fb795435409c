"""Read fio's per-interval logs (``write_bw_log``, ``write_iops_log``, ``write_lat_log``).

With ``log_avg_msec=1000`` fio writes one line per second and direction to
``<prefix>_bw.<job>.log``, ``<prefix>_iops.<job>.log`` and ``<prefix>_{lat,clat,slat}.<job>.log``::

    1000, 894208, 1, 0, 0
    2000, 962498, 1, 0, 0

Columns (fio HOWTO, "Log File Formats"): time in milliseconds since the job started, value,
data direction (0 read, 1 write, 2 trim), block size in bytes, offset in bytes, and the command
priority. The HOWTO lists the priority column, but fio 3.33 writes it only with ``log_prio=1``:
both 5 and 6 columns are read. With ``log_avg_msec`` ("windowed logging") each line is the
average over the window and the block size and offset are 0. The value is KiB/s (1024 bytes/s)
for bandwidth logs, I/Os per second for IOPS logs and nanoseconds for latency logs. Checked
against what fio 3.33 writes here: 5 columns, boundaries stamped ``1000``, ``2000``, ``3001``;
the last, partial interval may be missing.

The series returned are in the project's units: seconds, decimal MB/s (10^6 bytes/s), IOPS,
microseconds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import FioOutputError

#: fio's data-direction column.
DIRECTIONS: dict[str, int] = {"read": 0, "write": 1, "trim": 2}

#: Log kinds and the file-name part fio gives them.
LOG_KINDS: tuple[str, ...] = ("bw", "iops", "lat", "clat", "slat")

_LOG_NAME = re.compile(r"^(?P<prefix>.+)_(?P<kind>bw|iops|lat|clat|slat)\.(?P<job>\d+)\.log$")


@dataclass(frozen=True)
class LogSample:
    """One line of a fio log.

    Attributes:
        t_ms: end of the interval, milliseconds since the job started.
        value: KiB/s (bw), IOPS (iops) or nanoseconds (lat/clat/slat).
        direction: 0 read, 1 write, 2 trim.
        bs_bytes, offset_bytes: 0 in averaged logs.
        prio: the command priority column when present, else ``None``.
    """

    t_ms: int
    value: int
    direction: int
    bs_bytes: int
    offset_bytes: int
    prio: int | None = None


@dataclass(frozen=True)
class Series:
    """A per-interval series of one figure.

    Attributes:
        t_s: end of each interval, seconds since the job started (increasing).
        values: the figure in each interval, in ``unit``.
        unit: ``MB/s`` (decimal), ``IOPS`` or ``us``.
    """

    t_s: tuple[float, ...]
    values: tuple[float, ...]
    unit: str

    def __len__(self) -> int:
        return len(self.values)

    @property
    def durations_s(self) -> tuple[float, ...]:
        """Length of each interval in seconds (the first starts at 0)."""
        starts = (0.0, *self.t_s[:-1])
        return tuple(end - start for start, end in zip(starts, self.t_s, strict=True))

    def shifted(self, offset_s: float) -> Series:
        """The same series with ``offset_s`` added to every time (to lay phases end to end)."""
        return Series(tuple(t + offset_s for t in self.t_s), self.values, self.unit)


@dataclass(frozen=True)
class BandwidthSeries:
    """Per-second bandwidth of one direction.

    Attributes:
        t_s: end of each interval, seconds since the job started.
        bw_mbps: decimal MB/s in each interval.
    """

    t_s: tuple[float, ...]
    bw_mbps: tuple[float, ...]

    @classmethod
    def from_series(cls, series: Series) -> BandwidthSeries:
        if series.unit != "MB/s":
            raise ValueError(f"not a bandwidth series: unit {series.unit!r}")
        return cls(series.t_s, series.values)

    def __len__(self) -> int:
        return len(self.bw_mbps)

    @property
    def durations_s(self) -> tuple[float, ...]:
        """Length of each interval in seconds (the first starts at 0)."""
        return Series(self.t_s, self.bw_mbps, "MB/s").durations_s

    def bytes_per_interval(self) -> tuple[float, ...]:
        """Bytes moved in each interval: ``bw_mbps * 1e6 * duration``."""
        return tuple(bw * 1e6 * d for bw, d in zip(self.bw_mbps, self.durations_s, strict=True))


def parse_log(text: str, *, source: str = "fio log") -> list[LogSample]:
    """Parse the text of one fio log file.

    Raises:
        FioOutputError: a line that is not 5 or 6 comma-separated integers (naming the source
            and line number).
    """
    samples: list[LogSample] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) not in (5, 6):
            raise FioOutputError(
                f"{source}:{number}: expected 5 or 6 comma-separated fields "
                f"(time, value, direction, bs, offset[, prio]), got {line.strip()!r}",
                raw_output=text,
            )
        try:
            numbers = [int(f) for f in fields]
        except ValueError:
            raise FioOutputError(
                f"{source}:{number}: not a number in {line.strip()!r}", raw_output=text
            ) from None
        samples.append(
            LogSample(numbers[0], numbers[1], numbers[2], numbers[3], numbers[4],
                      numbers[5] if len(numbers) == 6 else None)
        )
    return samples


def read_log(path: Path) -> list[LogSample]:
    """Read and parse one fio log file.

    Raises:
        FioOutputError: the file is missing or unreadable, or a line is malformed.
    """
    try:
        text = path.read_text()
    except OSError as exc:
        raise FioOutputError(f"cannot read fio log {path}: {exc.strerror}") from None
    return parse_log(text, source=str(path))


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


def to_series(
    per_job: Iterable[Sequence[LogSample]], kind: str, direction: str = "write"
) -> Series:
    """Combine the samples of one or more jobs into a series in the project's units.

    Bandwidth and IOPS of several jobs are summed per interval; latency is averaged. An
    interval is keyed by its end time rounded to the nearest second (fio stamps ``3001`` for
    the 3 s boundary); a job missing an interval counts as 0 (bw, iops) or is left out (latency).

    Args:
        per_job: the samples of each job (from :func:`read_log`).
        kind: ``bw`` (-> decimal MB/s), ``iops`` (-> IOPS), ``lat``/``clat``/``slat``
            (-> microseconds).
        direction: ``read``, ``write`` or ``trim``.

    Raises:
        ValueError: an unknown kind or direction.
    """
    if kind not in LOG_KINDS:
        raise ValueError(f"unknown log kind {kind!r}: one of {', '.join(LOG_KINDS)}")
    if direction not in DIRECTIONS:
        raise ValueError(f"unknown direction {direction!r}: one of {', '.join(DIRECTIONS)}")
    code = DIRECTIONS[direction]
    sums: dict[int, float] = {}
    counts: dict[int, int] = {}
    last_ms: dict[int, int] = {}
    for samples in per_job:
        for s in samples:
            if s.direction != code:
                continue
            key = round(s.t_ms / 1000)
            sums[key] = sums.get(key, 0.0) + s.value
            counts[key] = counts.get(key, 0) + 1
            last_ms[key] = max(last_ms.get(key, 0), s.t_ms)
    keys = sorted(sums)
    if kind == "bw":
        values = [sums[k] * 1024 / 1e6 for k in keys]
        unit = "MB/s"
    elif kind == "iops":
        values = [sums[k] for k in keys]
        unit = "IOPS"
    else:
        values = [sums[k] / counts[k] / 1000 for k in keys]
        unit = "us"
    return Series(tuple(last_ms[k] / 1000 for k in keys), tuple(values), unit)


def read_series(workdir: Path, kind: str, direction: str = "write", prefix: str = "log"
                ) -> Series:
    """The ``kind`` series of ``direction`` from every job's log in ``workdir``.

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
    return to_series([read_log(p) for p in paths], kind, direction)


def bandwidth_series(workdir: Path, direction: str = "write", prefix: str = "log"
                     ) -> BandwidthSeries:
    """Per-second bandwidth (decimal MB/s) of ``direction`` from the logs in ``workdir``."""
    return BandwidthSeries.from_series(read_series(workdir, "bw", direction, prefix))
