"""Judge one fio run: success is exit status 0, a readable JSON document and every job's
``error == 0``, with no signal and the asked runtime measured -- or, for a
size-based job capped by a runtime, the asked bytes moved (it may finish before its cap).

Anything else raises a ``FioError`` subclass that carries fio's raw output; a job error is
completed with the first I/O error fio printed on stderr (file, direction, offset, length).
"""

from __future__ import annotations

import re
import signal

from pytest_ssdqual.errors import FioError, FioJobError
from pytest_ssdqual.fio.io_errors import parse_io_errors
from pytest_ssdqual.fio.parse import parse_fio_output
from pytest_ssdqual.fio.result import WorkloadResult
from pytest_ssdqual.fio.runner import FioRun, first_line
from pytest_ssdqual.fio.written import format_bytes

__all__ = ["MIN_RUNTIME_SHARE", "check_run"]

#: A run that measured less than this share of the asked runtime (and, size based, moved less
#: than this share of the asked bytes) finished early.
MIN_RUNTIME_SHARE = 0.9

#: What fio prints (to its --output file) when a signal stops it: fio-3.33 exits with 128 then.
_SIGNAL_LINE = re.compile(r"fio: terminating on signal \d+")


def check_run(run: FioRun, *, expected_runtime_s: float | None = None,
              expected_io_bytes: int | None = None) -> WorkloadResult:
    """Judge whether a fio run succeeded and parse it (see ``_check_run``).

    ``expected_io_bytes``: bytes (every direction, every job of the run) a size-based job capped
    at ``expected_runtime_s`` moves when it completes before the cap (fio ``io_size`` x
    writers); such a run is complete when it measured the runtime *or* moved these bytes.

    A job error is completed with the first I/O error fio printed (``fio: io_u error on file
    /dev/loop0: Input/output error: read offset=16777216, buflen=131072`` on stderr, which
    fio's JSON lacks): the message then names the file, direction, byte offset and length,
    and the ``FioJobError`` carries ``file`` and ``offset``.

    Raises:
        FioOutputError, FioJobError, FioError: as ``_check_run``.
    """
    try:
        return _check_run(run, expected_runtime_s=expected_runtime_s,
                          expected_io_bytes=expected_io_bytes)
    except FioJobError as exc:
        errors = parse_io_errors(run.stderr + "\n" + run.raw_output)
        if not errors:
            raise
        first = errors[0]
        more = f" (+{len(errors) - 1} more I/O errors)" if len(errors) > 1 else ""
        raise FioJobError(
            f"{exc}: first I/O error {first}{more}",
            job=exc.job, errno=exc.errno, raw_output=exc.raw_output,
            file=first.file, offset=first.offset_bytes,
        ) from None


def _check_run(run: FioRun, *, expected_runtime_s: float | None = None,
               expected_io_bytes: int | None = None) -> WorkloadResult:
    """Judge whether a fio run succeeded and parse it.

    Success = exit status 0, no job process of fio left running when its main process ended
    (``FioRun.orphans_killed``), a readable JSON document, every job ``error == 0``, no
    "terminating on signal", and at least ``MIN_RUNTIME_SHARE`` of the asked runtime measured
    or (with ``expected_io_bytes``) that share of the asked bytes moved.

    Raises:
        FioOutputError, FioJobError (from the parser); FioError for a non-zero exit, a signal
        or a run that finished early. Each carries the raw output.
    """
    raw = run.raw_output + ("\n" + run.stderr if run.stderr.strip() else "")
    source = str(run.output_path)
    if run.orphans_killed:
        raise FioError(_ended_with_orphans(run), raw_output=raw)
    if run.returncode != 0:
        try:
            parse_fio_output(run.raw_output, source=source)
        except FioJobError as exc:  # a job's errno explains the exit status best
            exc.raw_output = raw
            raise
        except FioError:
            pass
        detail = first_line(run.stderr) or first_line(run.raw_output) or "no output"
        if run.returncode < 0:
            raise FioError(f"{_killed_by(run.returncode)}; it printed: {detail}", raw_output=raw)
        interrupted = _SIGNAL_LINE.search(raw)
        if interrupted:
            raise FioError(
                f"fio was interrupted ({interrupted.group(0).strip()}) and exited with status "
                f"{run.returncode}: its figures cover only part of the asked run",
                raw_output=raw,
            )
        raise FioError(f"fio exited with status {run.returncode}: {detail}", raw_output=raw)
    result = parse_fio_output(run.raw_output, source=source)
    if result.terminated_by_signal:
        raise FioError("fio was interrupted (terminating on signal)", raw_output=raw)
    moved = sum(d.io_bytes for d in result.directions.values())
    if expected_runtime_s and result.runtime_ms < expected_runtime_s * 1000 * MIN_RUNTIME_SHARE \
            and not (expected_io_bytes and moved >= expected_io_bytes * MIN_RUNTIME_SHARE):
        raise FioError(
            f"fio stopped early: measured {result.runtime_ms / 1000:.1f} s of the "
            f"{expected_runtime_s:g} s asked"
            + (f" and moved {format_bytes(moved)} of the {format_bytes(expected_io_bytes)} "
               "asked" if expected_io_bytes else ""),
            raw_output=raw,
        )
    return result


def _killed_by(returncode: int) -> str:
    """``fio was killed by signal 9 (SIGKILL) before it finished`` for a negative exit status
    (``subprocess``: killed by signal ``-returncode``)."""
    number = -returncode
    try:
        name = signal.Signals(number).name
    except ValueError:
        name = "unknown signal"
    return f"fio was killed by signal {number} ({name}) before it finished"


def _ended_with_orphans(run: FioRun) -> str:
    """Why a run whose job processes outlived fio's main process failed, in one sentence."""
    if run.returncode < 0:
        how = _killed_by(run.returncode)
    else:
        how = f"fio's main process exited with status {run.returncode}"
    count = len(run.orphans_killed)
    pids = ", ".join(map(str, run.orphans_killed))
    were = "was" if count == 1 else "were"
    stuck = (f"; pid {', '.join(map(str, run.orphans_stuck))} still ran after SIGKILL (stuck "
             "device I/O, or not ours to kill): stop it before testing on" if run.orphans_stuck
             else "")
    return (f"{how}; {count} of its job processes (pid {pids}) {were} still running and "
            f"{were} killed (SIGKILL) by pytest-ssdqual{stuck}: what the run wrote is unknown "
            "and not counted, and its figures are not used")
