"""Find fio's JSON document in everything fio wrote, and say clearly what is wrong when none is.

fio may print text before the document (warnings, ``fio: terminating on signal 2``) and, with
``--output-format=normal,json``, normal text around it; ``--status-interval`` writes one full
document per interval (the last one is the final result). Error lines and the document go to the
``--output`` file through different buffers: after hundreds of ``io_u error`` lines the document
was seen starting in the middle of a cut error line (fio 3.33, a full file system). fio HOWTO,
sections "Interpreting the output" and "JSON output".

The small text helpers here (``output_label``, ``json_kind``, ``first_lines``) also word the
messages of ``fio.parse``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_ssdqual.bounds import decode_json, load_json
from pytest_ssdqual.errors import FioOutputError

__all__ = ["QUOTE_MAX", "extract_json_document", "first_lines", "json_kind", "output_label"]

#: Where a JSON document may start: a ``{`` at a line start, or one right before fio's first key
#: anywhere -- fio writes error lines and its JSON to the ``--output`` file through different
#: buffers, and the JSON was seen starting in the middle of a cut ``io_u error`` line.
_DOC_START = re.compile(r'^\{|\{(?=\s*"fio version")', re.MULTILINE)
#: Longest quote of one line of fio's output in a message, in characters.
QUOTE_MAX = 200


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
    label = output_label(source)
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
        whole = load_json(text)
    except json.JSONDecodeError:
        pass
    else:
        check_document(whole, label, text)
        return "", whole, ""

    docs: list[tuple[int, int, dict]] = []
    failures: list[tuple[int, json.JSONDecodeError]] = []
    other: Any = None
    pos = 0
    for match in _DOC_START.finditer(text):
        start = match.start()
        if start < pos:
            continue
        try:
            obj, end = decode_json(text, start)
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
                f"{error.colno} ({error.msg}; the line reads {bad_line.strip()[:QUOTE_MAX]!r})"
                " — fio was killed while writing, the file was cut, or text was printed inside "
                "the document",
                raw_output=text,
            )
        if other is not None:
            check_document(other, label, text)
        raise FioOutputError(
            f"{label} holds no JSON document: fio printed {first_lines(text)}",
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


def output_label(source: str) -> str:
    """How messages name ``source``: ``'fio output'`` phrases as they are, a path as
    ``'fio output PATH'``."""
    return source if source.startswith("fio output") else f"fio output {source}"


def _is_fio_document(obj: Any) -> bool:
    return isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj)


def check_document(obj: Any, label: str, text: str) -> None:
    """Raise ``FioOutputError`` unless ``obj`` is a fio result document (a ``jobs`` or
    ``client_stats`` object)."""
    if not isinstance(obj, dict):
        raise FioOutputError(
            f"{label} holds a JSON {json_kind(obj)}, not the object fio writes", raw_output=text
        )
    if not _is_fio_document(obj):
        keys = ", ".join(sorted(map(str, obj))[:8]) or "none"
        raise FioOutputError(
            f"{label} holds a JSON object without a 'jobs' list (keys: {keys}): "
            "not a fio result",
            raw_output=text,
        )


def json_kind(value: Any) -> str:
    """What a JSON value is, in words: ``object``, ``list``, ``string``, ``number``, ..."""
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number" if isinstance(value, int | float) else "value")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def first_lines(text: str, *, limit: int = 1) -> str:
    """The first ``limit`` non-blank lines of ``text`` quoted (each cut at ``QUOTE_MAX``), and
    how many more there are."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    quoted = " | ".join(repr(line[:QUOTE_MAX]) for line in lines[:limit])
    if len(lines) > limit:
        quoted += f" (+{len(lines) - limit} more line{'s' if len(lines) - limit > 1 else ''})"
    return quoted
