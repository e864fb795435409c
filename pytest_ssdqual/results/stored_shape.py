"""The shape a stored ``run.json`` / ``record.json`` must have before any reader uses it.

``stored_json`` refuses what cannot be read back at all (bad JSON, deep nesting, 401-digit
numbers); this module refuses what reads as JSON but has the wrong types where a reader relies on
them -- a figure that is a string (``"write.bw_mbps": "fast"``), ``metrics`` that is a list, a
record without ``workload``, ``facts`` that is not an object -- which would otherwise raise
``ValueError`` / ``TypeError`` / ``KeyError`` deep inside ``ssdqual rejudge``, ``compare`` or
``trend``. The shape is the JSON Schema ``stored_shape.json`` (draft 2020-12, checked with
``jsonschema``): only the keys a reader uses are typed, so keys an older or newer writer adds
still read.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

import jsonschema

from pytest_ssdqual.yamlutil import json_path

__all__ = ["shape_problem"]


@cache
def _validators() -> dict[str, jsonschema.protocols.Validator]:
    text = resources.files("pytest_ssdqual.results").joinpath("stored_shape.json").read_text(
        encoding="utf-8")
    schema = json.loads(text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    defs = schema["$defs"]
    # the $refs written in place (the schema has no recursion): a record with 200 metrics
    # then validates in well under a millisecond instead of ~7 ms through ref resolution
    return {kind: cls(_inline(defs[kind], defs)) for kind in ("run", "record")}


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/NAME"}`` replaced by that definition."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {**_inline(defs[ref.removeprefix("#/$defs/")], defs), **_inline(rest, defs)}
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "a boolean", int: "an integer", float: "a number", str: "a string",
            list: "a list", dict: "an object"}.get(type(value), type(value).__name__)


def shape_problem(data: dict[str, Any], kind: str) -> tuple[str, str] | None:
    """The first place where ``data`` has the wrong shape for a stored ``kind``, or None.

    Args:
        data: the file's JSON object (already read by ``stored_json.read_stored_json``).
        kind: ``'run'`` (``run.json``) or ``'record'`` (a workload's ``record.json``).

    Returns:
        ``(reason, key)``: e.g. ``("expected a number or null, found a string 'fast'",
        'metrics["write.bw_mbps"]')``; ``key`` is ``""`` for the whole document.
    """
    error = jsonschema.exceptions.best_match(_validators()[kind].iter_errors(data))
    if error is None:
        return None
    key = json_path(list(error.absolute_path)) if error.absolute_path else ""
    if error.validator == "required":
        return error.message.replace("is a required property", "is missing"), key
    if error.validator == "type":
        wanted = error.validator_value
        wanted = " or ".join(wanted) if isinstance(wanted, list) else wanted
        found = error.instance
        shown = f" {found!r}" if isinstance(found, (str, int, float)) and not isinstance(
            found, bool) else ""
        return f"expected {wanted}, found {_type_name(found)}{shown}"[:200], key
    return error.message[:200], key
