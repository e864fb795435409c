"""Reading back a JSON file this package stored, which a crash, a bad disk, a hand edit or a
copy from elsewhere may have damaged: a run's ``run.json`` and ``record.json``, an Allure
result or attachment read back, a worker's journal.

Every such reader takes the file through :func:`read_stored_json` and wraps its refusal,
``DamagedJson`` (a ``ValueError``: the reason and the key), in its own error -- ``StoreError``
naming the file and the fix (``run_folder.read_json``), ``ConfigError`` for an Allure result
(``stored``), "no journal" for a journal. What it refuses, so that no later ``float()``,
``int()``, SQLite bind or recursive walk raises ``OverflowError``, ``ValueError`` or
``RecursionError`` on a stored figure:

* text that is not UTF-8, invalid JSON, JSON nested deeper than the decoder's stack or an
  integer of more than 4300 digits (``bounds.load_json``);
* a top level that is not an object (``require_object``, the default);
* nesting deeper than ``MAX_DEPTH`` (64) levels: no file this package writes comes near it;
* a number beyond ``MAX_STORED`` (2**128, NVMe's 128-bit counters being the widest figure
  stored) in magnitude -- an integer of 401 digits, say (``bounds.check_number``);
* NaN or +-Infinity where this package never writes one: anywhere in a ``strict`` document
  (``run.json``, an Allure result), and below a key of ``STRICT_KEYS`` (a drive's facts and
  identity, counts, limit bounds, line numbers, time stamps) in any other. Elsewhere --
  ``metrics``, a verdict's ``measured``, ``spread_pct`` -- NaN and Infinity are what the
  writer stores for a figure fio did not give (``repeats``), and still read as such.

Valid files read exactly as ``json.loads`` reads them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from pytest_ssdqual.bounds import OutOfRange, check_number, load_json
from pytest_ssdqual.yamlutil import json_path

__all__ = ["MAX_DEPTH", "MAX_STORED", "STRICT_KEYS", "DamagedJson", "check_stored",
           "read_stored_json"]

#: Largest magnitude of a stored number: 2**128 (NVMe's 128-bit health counters).
MAX_STORED = 2**128
#: Deepest nesting of a stored document (a ``record.json`` is about 5 levels deep; an Allure
#: result's steps inside steps a few more).
MAX_DEPTH = 64
#: Keys below which this package never writes NaN or Infinity: a NaN there is damage.
STRICT_KEYS = frozenset({
    "facts", "identity", "assignment", "capacity_bytes", "repeat", "requirements", "min",
    "max", "marginal_pct", "line", "start", "stop", "exitstatus", "tests", "written", "schema",
})


class DamagedJson(ValueError):
    """A stored JSON file that cannot be read back as stored.

    Attributes:
        reason: what is wrong (``not valid JSON: ...``, ``a 401-digit integer is beyond
            2^128``). key: the JSON path of the offending value (``metrics["write.iops"]``),
            ``""`` when the whole document is at fault.
    """

    def __init__(self, reason: str, key: str = "") -> None:
        self.reason = reason
        self.key = key
        super().__init__(f"{key}: {reason}" if key else reason)


def _kind(value: object) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def check_stored(doc: Any, *, strict: bool = False) -> None:
    """Refuse what no stored document holds (see the module doc): nesting past ``MAX_DEPTH``,
    a number beyond ``MAX_STORED``, NaN/Infinity in a ``strict`` document or below a key of
    ``STRICT_KEYS``. Iterative: a document at the decoder's nesting limit is walked safely.

    Raises:
        DamagedJson: the first such value in document order, with its key.
    """
    stack: list[tuple[Any, tuple[str | int, ...], bool]] = [(doc, (), strict)]
    while stack:
        value, path, exact = stack.pop()
        if isinstance(value, dict | list):
            if len(path) >= MAX_DEPTH:
                raise DamagedJson(f"nested more than {MAX_DEPTH} levels deep",
                                  json_path(path[:MAX_DEPTH]))
            items = value.items() if isinstance(value, dict) else enumerate(value)
            children = [(v, (*path, k), exact or k in STRICT_KEYS) for k, v in items]
            stack.extend(reversed(children))
        elif isinstance(value, int | float) and not isinstance(value, bool):
            if not exact and isinstance(value, float) and not math.isfinite(value):
                continue  # a figure fio gave none of: stored as NaN (or a spread of inf)
            try:
                check_number(value, minimum=None, maximum=MAX_STORED)
            except OutOfRange as exc:
                raise DamagedJson(str(exc), json_path(path)) from None


def read_stored_json(path: Path, *, strict: bool = False, require_object: bool = True) -> Any:
    """The JSON document stored in ``path``, checked by :func:`check_stored`.

    Args:
        path: the file.
        strict: no NaN or Infinity anywhere (a document that never holds a figure fio may
            not have given: ``run.json``, an Allure result).
        require_object: the top level must be an object (default).

    Raises:
        OSError: the file cannot be read (``FileNotFoundError``: it is missing).
        DamagedJson: not UTF-8, not valid JSON, nested too deeply, not an object, a number
            out of range (the message names it and its key).
    """
    try:
        doc = load_json(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise DamagedJson(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise DamagedJson(f"not valid JSON: {exc.msg} (line {exc.lineno}, column "
                          f"{exc.colno})") from None
    if require_object and not isinstance(doc, dict):
        raise DamagedJson(f"not a JSON object but {_kind(doc)}")
    check_stored(doc, strict=strict)
    return doc
