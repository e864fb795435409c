"""Power samples as text: rows ``time_s,power_w`` read from a file or a command's output.

The format every text meter form shares (``csv:PATH`` and ``cmd:``, docs/plugs.md)::

    time_s,power_w            <- an optional header (any first row whose fields are not numbers)
    1796488459.125,3.92       <- seconds since the UNIX epoch (``date +%s.%N``), watts
    1796488459.225,4.10

Quirks tolerated: a header row (the first non-blank row only), blank lines, rows out of time
order (sorted), extra columns after the second (ignored), an unfinished last row of a file
another program is still appending to (no newline yet: left for the next read). Anything
else -- a row that is not two numbers, a negative or non-finite power -- is a
:class:`ConfigError` naming the file (or command) and the line.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from pytest_ssdqual.errors import ConfigError

__all__ = ["PowerSamples", "parse_power_rows"]


@dataclass(frozen=True)
class PowerSamples:
    """Power samples of one meter between ``start()`` and ``stop()``.

    Attributes:
        times_s: sample times, seconds since the UNIX epoch (the clock fio's ``timestamp_ms``
            uses), increasing.
        power_w: power in watts, one per time.
        source: what took them (``csv:/var/log/meter.csv``, ``emulated: phison-e12-960g``).
        rate_hz: the meter's nominal sample rate (samples per second), ``None`` when unknown.
    """

    times_s: tuple[float, ...]
    power_w: tuple[float, ...]
    source: str
    rate_hz: float | None = None


def parse_power_rows(lines: Iterable[str], *, where: str, first_line: int = 1,
                     header_allowed: bool = True) -> list[tuple[float, float]]:
    """``(time_s, power_w)`` of every sample row in ``lines``, sorted by time.

    Args:
        lines: rows as read (with or without their newline).
        where: the file path or command, for errors.
        first_line: the line number of ``lines[0]`` in the file (1-based).
        header_allowed: the first non-blank row may be a header (False when reading on from
            the middle of a file).

    Raises:
        ConfigError: a row that is neither a header nor ``time_s,power_w`` numbers, or a power
            below zero or not finite (names ``where``, the line and the row).
    """
    rows: list[tuple[float, float]] = []
    seen_row = not header_allowed
    for number, line in enumerate(lines, start=first_line):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        fields = [f.strip() for f in text.split(",")]
        values = _numbers(fields[:2]) if len(fields) >= 2 else None
        if values is None and not seen_row and not any(_is_number(f) for f in fields):
            seen_row = True  # the header
            continue
        seen_row = True
        if values is None:
            raise ConfigError(f"power sample row {text!r} is not two numbers time_s,power_w",
                              file=where, line=number,
                              fix="write one sample per row: seconds since the epoch, watts "
                                  "(e.g. 1796488459.125,3.92); a header may be the first row")
        time_s, power_w = values
        if not math.isfinite(time_s) or not math.isfinite(power_w) or power_w < 0:
            raise ConfigError(f"power sample row {text!r}: the power must be a finite number "
                              ">= 0 W and the time finite", file=where, line=number,
                              fix="fix the meter's output (watts, not mW or a blank)")
        rows.append((time_s, power_w))
    rows.sort()
    return rows


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _numbers(fields: list[str]) -> tuple[float, float] | None:
    try:
        return float(fields[0]), float(fields[1])
    except ValueError:
        return None
