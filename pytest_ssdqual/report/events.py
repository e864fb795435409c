"""The event stream (``--events=FILE``): one JSON object per line, appended the moment it happens,
so a dashboard can follow a rack of drives and a killed run keeps every line it wrote.

Each line is written with one ``write(2)`` on a file opened ``O_APPEND`` (no buffering in
Python): lines of several processes (pytest-xdist workers and their controller) never
interleave inside a line, and a process killed with SIGKILL loses none it wrote (the kernel
holds them; ``fsync`` is left to the file system, as for any log). Every line has::

    {"schema": 1, "event": "<kind>", "time_utc": "2026-12-05T17:01:02.345Z",
     "run_id": "...", "host": "lab-07", "pid": 4242, ...fields of the kind}

Kinds and their fields (``drive`` is the ``--drive`` text, ``test`` the pytest node id):

* ``session_start``: ``drives``, ``profile``, ``argv``;
* ``test_start``: ``test``, ``drive``, ``workload``, ``title``;
* ``progress``: ``test``, ``drive``, ``phase``, ``round``, ``rounds``, ``eta_s``,
  ``elapsed_s``, ``figure`` (a methodology test's step: purge, preconditioning round n of N...),
  ``written_bytes`` (bytes the process's fio runs have written to the drive so far);
* ``figure``: ``test``, ``drive``, ``workload``, ``metric``, ``value`` (units in the metric
  name: ``write.bw_mbps`` in MB/s, ``*_us`` in microseconds);
* ``verdict``: ``test``, ``drive``, ``workload``, ``metric``, ``measured``, ``status``
  (``pass``, ``fail``, ``warn``, ``missing``, ``not_judged``), ``min``, ``max``, ``severity``,
  ``limit_file``, ``limit_line``, ``source``;
* ``health``: ``test``, ``drive``, ``label`` (``session start``, ``after rand_write_4k_qd32``
  ...), ``metrics``, ``failed`` (the violated limits' lines);
* ``test_end``: ``test``, ``outcome`` (``passed``, ``failed``, ``skipped``, ``error``),
  ``duration_s``, ``message`` (the first 500 characters of the failure or skip reason);
* ``session_end``: ``exitstatus``, ``tests`` (outcome -> count).

The idea follows the OCP Test & Validation output spec (one JSON artifact per line, in the order
things happen), without its schema: the kinds above are this package's own.
Figures fio did not give (NaN, infinity) are written as ``null``: every line is valid JSON.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import socket
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_ssdqual.errors import ConfigError

__all__ = ["SCHEMA", "EventStream", "figure_events", "read_events", "verdict_fields"]

#: Version of the line format.
SCHEMA = 1
#: Longest ``message`` kept in a ``test_end`` line.
MESSAGE_CHARS = 500


def _plain(value: Any) -> Any:
    """``value`` with every non-finite float as None, tuples as lists, paths as text."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, bool)) or value is None:
        return value
    return str(value)


class EventStream:
    """Appends event lines to one file.

    Args:
        path: the events file (created with its folder when missing, appended to otherwise).
        run_id: this run's results-store id, in every line.

    Raises:
        ConfigError: the file cannot be opened for appending (names the option and the fix).
    """

    def __init__(self, path: Path, *, run_id: str) -> None:
        self.path = path
        self.run_id = run_id
        self.host = socket.gethostname()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC,
                               0o644)
        except OSError as exc:
            raise ConfigError(f"cannot append to the events file {path}: {exc.strerror}",
                              key="--events",
                              fix="give a file in a folder you can write to") from None

    def emit(self, event: str, **fields: Any) -> None:
        """Append one line of kind ``event`` with ``fields`` (see the module docstring).
        A write that fails (disk full) is dropped: the events file is a window on the run,
        never a reason to break it."""
        now = dt.datetime.now(dt.UTC)
        line = {"schema": SCHEMA, "event": event,
                "time_utc": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
                "run_id": self.run_id, "host": self.host, "pid": os.getpid(),
                **_plain(fields)}
        data = (json.dumps(line, allow_nan=False, separators=(",", ":")) + "\n").encode()
        try:
            os.write(self._fd, data)
        except OSError:
            pass

    def close(self) -> None:
        """Close the file (idempotent)."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def verdict_fields(verdict: Any) -> dict[str, Any]:
    """The ``verdict`` line's fields of a ``thresholds.verdict.Verdict``."""
    limit = verdict.limit
    provenance = getattr(limit, "provenance", None)
    return {
        "workload": verdict.workload, "metric": verdict.metric, "measured": verdict.measured,
        "status": verdict.status,
        "min": getattr(limit, "min", None), "max": getattr(limit, "max", None),
        "severity": getattr(limit, "severity", None),
        "limit_file": getattr(provenance, "file", None),
        "limit_line": getattr(provenance, "line", None),
        "source": getattr(provenance, "source", None),
    }


def figure_events(stream: EventStream, metrics: Mapping[str, float],
                  verdicts: Iterable[Any], **context: Any) -> None:
    """One ``figure`` line per metric (sorted by name), then one ``verdict`` line per verdict;
    ``context`` (``test``, ``drive``, ``workload``) goes into each."""
    for metric in sorted(metrics):
        stream.emit("figure", metric=metric, value=metrics[metric], **context)
    for verdict in verdicts:
        stream.emit("verdict", **{**context, **verdict_fields(verdict)})


def read_events(path: Path) -> list[dict[str, Any]]:
    """Every complete line of an events file, in order (a last line cut short by a crash is
    left out).

    Raises:
        ConfigError: a complete line that is not a JSON object (names the file and line).
    """
    out = []
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    for number, line in enumerate(lines[:-1], 1):  # the part after the last newline is cut
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise ConfigError(f"not a JSON line: {exc}", file=str(path), line=number,
                              fix="each line of an events file is one JSON object") from None
        if not isinstance(data, dict):
            raise ConfigError("not a JSON object", file=str(path), line=number,
                              fix="each line of an events file is one JSON object")
        out.append(data)
    return out
