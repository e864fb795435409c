"""Values as drive tools print them: integers in any spelling, stripped strings, Kelvin.

smartctl and nvme-cli print the same field as a JSON integer, a float, a quoted or a
comma-grouped string depending on their version; every reader of their output in ``drive/``
goes through :func:`coerce_int` so that one spelling is never read differently in two places.
"""

from __future__ import annotations

import math
import re

from pytest_ssdqual.bounds import OutOfRange, check_number

__all__ = ["KELVIN_OFFSET", "coerce_int", "positive_int", "text_or_none"]

#: NVMe Base Spec and nvme-cli/smartctl convert Kelvin with 273, not 273.15.
KELVIN_OFFSET = 273

#: The largest magnitude a tool's integer may have: NVMe's 128-bit counters (data units
#: written, ``tnvmcap``).
MAX_TOOL_INT = 2**128

_GROUPED_INT = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+")
_PLAIN_INT = re.compile(r"[+-]?\d+")
_PLAIN_FLOAT = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")


def coerce_int(value: object, *, field: str) -> int:
    """Read an integer that a tool may print as a number, a float or a string.

    nvme-cli has printed 128-bit fields such as ``tnvmcap`` as a JSON integer, as a long double
    (``900185481216.0``), as a quoted string, and in 2.3 as a comma-grouped string
    ``"3,200,631,791,616"`` (linux-nvme/nvme-cli issue #1827).

    Args:
        value: ``int``, integral ``float``, or a string of digits, optionally thousands-grouped
            with commas (groups of exactly three digits) or written as an integral decimal.
        field: the field name, for the error message.

    Returns:
        The integer, at most 2**128 in magnitude (NVMe's widest fields are 128-bit).

    Raises:
        ValueError: ``bool``, ``None``, a fractional or non-finite number, a magnitude beyond
            2**128 (it would overflow a later ``float()``), or any other text, such
            as ``"0,000000"`` (a locale decimal comma: nvme-cli issue #354; run tools with
            ``LC_ALL=C``). The message names ``field`` and the value.
    """
    number = _coerce(value, field)
    try:
        return int(check_number(number, minimum=None, maximum=MAX_TOOL_INT))
    except OutOfRange as exc:
        raise ValueError(f"{field}: expected an integer of at most 128 bits, got {exc}") from None


def _coerce(value: object, field: str) -> int:
    if isinstance(value, bool):
        raise ValueError(f"{field}: expected an integer, got boolean {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise ValueError(f"{field}: expected an integer, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if _PLAIN_INT.fullmatch(text):
            return int(text)
        if _GROUPED_INT.fullmatch(text):
            return int(text.replace(",", ""))
        if _PLAIN_FLOAT.fullmatch(text):
            number = float(text)
            if number.is_integer():
                return int(number)
        hint = " (a locale decimal comma? run the tool with LC_ALL=C)" if "," in text else ""
        raise ValueError(f"{field}: expected an integer, got {value!r}{hint}")
    raise ValueError(f"{field}: expected an integer, got {type(value).__name__} {value!r}")


def text_or_none(value: object) -> str | None:
    """A stripped non-empty string, or None."""
    if isinstance(value, str):
        text = value.strip()
        return text or None
    return None


def positive_int(value: object, field: str) -> int | None:
    """:func:`coerce_int` of ``value`` when it reads as an integer above 0, else None."""
    try:
        number = coerce_int(value, field=field)
    except ValueError:
        return None
    return number if number > 0 else None
