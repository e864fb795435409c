"""Numbers and JSON documents from input this package did not write, kept in physical range.

Every reader of outside input -- fio's JSON and per-interval logs, smartctl and nvme-cli output,
the user's YAML files (through ``yamlutil``) -- takes its numbers through :func:`check_number`
and its JSON through :func:`load_json` / :func:`decode_json`, so that a bad value is refused the
same way everywhere and the reader wraps the refusal in its own error (``FioOutputError`` naming
the key or line, ``ConfigError`` naming the file, line and key, a note for a drive tool):

* a number is finite (``json`` reads ``NaN``/``Infinity``, YAML ``.nan``/``.inf``; ``1e999``
  reads as infinity), at most ``MAX_MAGNITUDE`` (2**64) in size unless the reader allows more,
  and at least the reader's minimum (0 for latencies, bandwidths, IOPS, sizes and time stamps).
  Python integers have no bound, and one beyond 1.8e308 makes ``float()`` raise
  ``OverflowError``: refusing it here keeps every later ``float()`` safe.
* JSON nested deeper than Python's recursion limit (about 1000 levels) makes ``json`` raise
  ``RecursionError``, and an integer of more than 4300 digits makes it raise a bare
  ``ValueError`` (``sys.get_int_max_str_digits``); both come out of :func:`load_json` /
  :func:`decode_json` as ``json.JSONDecodeError`` like any other unreadable document.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_MAGNITUDE", "OutOfRange", "check_number", "decode_json", "describe", "load_json"]

#: The largest magnitude a number read from outside may have: 2**64 (fio's and the kernel's
#: counters are 64-bit; only NVMe's 128-bit counters are read with a wider bound).
MAX_MAGNITUDE = 2**64

_DECODER = json.JSONDecoder()


class OutOfRange(ValueError):
    """A number outside its physical range; the message says how (``-5000 is negative``)."""


def describe(value: object) -> str:
    """``value`` for a message, a long integer shortened (``a 401-digit integer``)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**24:
        return f"a {len(str(abs(value)))}-digit integer" if abs(value) < 10**4000 else (
            "an integer of more than 4000 digits")
    return repr(value)


def check_number(
    value: int | float, *, minimum: float | None = 0.0, maximum: float = MAX_MAGNITUDE
) -> int | float:
    """``value`` itself when it is finite, at most ``maximum`` in magnitude and not below
    ``minimum`` (``None``: no lower bound beyond ``-maximum``).

    Args:
        value: an ``int`` or ``float`` (the caller has checked the type).
        minimum: the smallest value that means something (0 for amounts, durations, stamps).
        maximum: the largest magnitude accepted (default ``MAX_MAGNITUDE``, 2**64).

    Raises:
        OutOfRange: NaN or infinite (``nan is not a finite number``), beyond ``maximum``
            (``a 401-digit integer is beyond 2^64``), below ``minimum`` (``-5000 is negative``).
    """
    if isinstance(value, float) and not math.isfinite(value):
        raise OutOfRange(f"{value!r} is not a finite number")
    if abs(value) > maximum:
        power = isinstance(maximum, int) and maximum > 0 and not maximum & (maximum - 1)
        bound = f"2^{int(maximum).bit_length() - 1}" if power else f"{maximum:g}"
        raise OutOfRange(f"{describe(value)} is beyond {bound}")
    if minimum is not None and value < minimum:
        raise OutOfRange(f"{describe(value)} is negative" if minimum == 0
                         else f"{describe(value)} is below {minimum:g}")
    return value


def _refused(exc: Exception, text: str, pos: int) -> json.JSONDecodeError:
    if isinstance(exc, RecursionError):
        return json.JSONDecodeError("nested too deeply to read (about 1000 levels)", text, pos)
    reason = str(exc).split(";")[0]  # drop the advice to raise the interpreter's limit
    return json.JSONDecodeError(f"a number too long to read ({reason})", text, pos)


def load_json(text: str) -> Any:
    """``json.loads(text)``, with runaway nesting and over-long integers refused.

    Raises:
        json.JSONDecodeError: invalid JSON, nesting too deep for the decoder, an integer of
            more than 4300 digits.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as exc:
        raise _refused(exc, text, 0) from None


def decode_json(text: str, start: int = 0) -> tuple[Any, int]:
    """``json.JSONDecoder().raw_decode(text, start)``: the value starting at ``start`` and the
    index after it, with runaway nesting and over-long integers refused as in :func:`load_json`.

    Raises:
        json.JSONDecodeError: as :func:`load_json`.
    """
    try:
        return _DECODER.raw_decode(text, start)
    except json.JSONDecodeError:
        raise
    except (RecursionError, ValueError) as exc:
        raise _refused(exc, text, start) from None
