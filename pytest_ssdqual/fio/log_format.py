"""fio's per-interval log lines (``write_bw_log``, ``write_iops_log``, ``write_lat_log``): their
format, parsed line by line, and the arithmetic of the windows they close (``fio.logs`` has the
rule and the series; ``fio.log_arrays`` reads long logs with numpy).

Columns (fio HOWTO, "Log File Formats"): time in milliseconds since the job started (after
``ramp_time``), value, data direction (0 read, 1 write, 2 trim), block size in bytes, offset in
bytes, and the command priority. fio 3.13-3.17 write only the first 4 columns; fio 3.33 writes
5 (6 with ``log_prio=1``): 4, 5 and 6 columns are read. The value is KiB/s (1024 bytes/s) for
bandwidth logs, I/Os per second for IOPS logs and nanoseconds for latency logs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ssdqual.bounds import OutOfRange, check_number
from pytest_ssdqual.errors import FioOutputError

#: fio's data-direction column.
DIRECTIONS: dict[str, int] = {"read": 0, "write": 1, "trim": 2}

#: Log kinds and the file-name part fio gives them.
LOG_KINDS: tuple[str, ...] = ("bw", "iops", "lat", "clat", "slat")

#: The window assumed when a log has too few lines to infer one (the project's jobs set
#: ``log_avg_msec=1000``, ``fio.job.LOG_AVG_MSEC``, and are read with it).
DEFAULT_WINDOW_MS = 1000.0

#: The most windows one log may span when the job's runtime is not given (about 11.6 days of
#: 1 s windows): a corrupt stamp far in the future must not make a series of 10**8 windows.
MAX_LOG_WINDOWS = 1_000_000

#: A stamp this share of a window past a boundary (after the previous line's drift is taken
#: off) still closes that window (fio's ``3001``).
LATE_SHARE = 0.1

@dataclass(frozen=True)
class LogSample:
    """One line of a fio log.

    Attributes:
        t_ms: end of the interval, milliseconds since the job started.
        value: KiB/s (bw), IOPS (iops) or nanoseconds (lat/clat/slat).
        direction: 0 read, 1 write, 2 trim.
        bs_bytes: 0 in averaged logs.
        offset_bytes: 0 in averaged logs; ``None`` in a 4-column log (fio 3.13-3.17).
        prio: the command priority column when present, else ``None``.
        line: the 1-based line of the log it was read from (``None`` when built by hand), for
            messages; not compared.
    """

    t_ms: int
    value: int
    direction: int
    bs_bytes: int
    offset_bytes: int | None
    prio: int | None = None
    line: int | None = field(default=None, compare=False)


#: The columns of a log line, as messages name them.
_COLUMNS = ("time stamp", "value", "direction", "block size", "offset", "priority")


def parse_log(text: str, *, source: str = "fio log", first_line: int = 1) -> list[LogSample]:
    """Parse the text of one fio log file (4, 5 or 6 columns, see the module docstring);
    ``first_line``: the number of the text's first line in its file (a piece of a file).

    Raises:
        FioOutputError: a line that is not 4 to 6 comma-separated integers, or one holding a
            negative number or one beyond 2**64 (fio writes unsigned stamps, values, sizes and
            offsets); the message names the source, the line number and the column.
    """
    samples: list[LogSample] = []
    for number, line in enumerate(text.splitlines(), start=first_line):
        if not line.strip():
            continue
        fields = [f.strip() for f in line.split(",")]
        if len(fields) not in (4, 5, 6):
            raise FioOutputError(
                f"{source}:{number}: expected 4 to 6 comma-separated fields "
                f"(time, value, direction, bs[, offset[, prio]]), got {line.strip()!r}",
                raw_output=text,
            )
        try:
            numbers = [int(f) for f in fields]
        except ValueError:
            raise FioOutputError(
                f"{source}:{number}: not a number in {line.strip()!r}", raw_output=text
            ) from None
        for column, value in zip(_COLUMNS, numbers, strict=False):
            try:
                check_number(value)
            except OutOfRange as exc:
                raise FioOutputError(
                    f"{source}:{number}: the {column} is out of range ({exc}) in "
                    f"{line.strip()[:80]!r}: fio writes no such line (a corrupt or edited log)",
                    raw_output=text,
                ) from None
        samples.append(
            LogSample(numbers[0], numbers[1], numbers[2], numbers[3],
                      numbers[4] if len(numbers) >= 5 else None,
                      numbers[5] if len(numbers) == 6 else None, number)
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


def window_index(t_ms: float, window_ms: float, drift_ms: float = 0.0) -> int:
    """The 1-based window a stamp closes: window ``k`` ends at ``k * window_ms + drift_ms``
    (``drift_ms``: how late the previous line of the same job and direction was stamped, see
    the module docstring); a stamp up to ``LATE_SHARE`` of a window late still closes it
    (``3001`` -> 3 with 1000 ms windows), a stamp early in a window ends a partial one
    (``4500`` -> 5)."""
    return max(1, math.ceil((t_ms - drift_ms) / window_ms - LATE_SHARE))


def beyond_bound(at: str, t_ms: int, k: int, w: float, limit_k: int, why: str
                 ) -> FioOutputError:
    """The error for a line at ``at`` (``log:LINE``) stamped ``t_ms`` that closes window ``k``
    of ``w`` ms, beyond window ``limit_k`` (``why``: what that bound is, ``''``: the most a log
    may span)."""
    return FioOutputError(
        f"{at}: the stamp {t_ms} ms closes logging window {k} of {w:g} ms, beyond "
        f"{why or f'the most a log may span ({limit_k} windows)'}: a corrupt stamp")


def window_bound(w: float, max_span_ms: float | None) -> tuple[int, str]:
    """(the last window a line may close, what that bound is) for windows of ``w`` ms in a job
    that ran ``max_span_ms`` (with slack; ``None``: unknown, at most ``MAX_LOG_WINDOWS``)."""
    if max_span_ms is not None and max_span_ms / w < MAX_LOG_WINDOWS:
        return (max(1, math.ceil(max_span_ms / w)),
                f"the job's runtime with slack ({max_span_ms / 1000:g} s)")
    return MAX_LOG_WINDOWS, ""


def series_unit(kind: str) -> tuple[str, float, bool]:
    """(unit, factor from fio's unit, averaged across jobs) of a log kind: ``bw`` KiB/s ->
    decimal MB/s, summed; ``iops``, summed; ``lat``/``clat``/``slat`` ns -> µs, averaged."""
    return {"bw": ("MB/s", 1024 / 1e6, False), "iops": ("IOPS", 1.0, False)
            }.get(kind, ("us", 1 / 1000, True))
