"""Threshold-file schema check: jsonschema errors turned into messages with a fix.

Validation happens before any I/O and reports every problem of a file at once, each a
``ConfigError`` with the file, the YAML line, the key and a fix. This module holds the first
stage, the JSON schema (``schema.json``, draft 2020-12, ``additionalProperties: false``
everywhere, with a "did you mean" for near-miss keys); ``thresholds.sense_check`` adds the checks
the schema cannot express.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.yamlutil import json_path, line_of

__all__ = ["FileChecker", "did_you_mean", "schema"]

#: A key path in a threshold file: ``["profiles", 0, "limits", "seq_read_128k_qd32"]``.
KeyPath = list[str | int]


@functools.cache
def schema() -> dict[str, Any]:
    """The threshold-file JSON schema (``schema.json``, draft 2020-12) as a dict."""
    text = resources.files(__package__).joinpath("schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``word`` (difflib ratio >= 0.6), or ``None``."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


#: JSON type -> (what it is called in a message, how to write one)
_TYPE_WORDS = {
    "number": ("a number", "write a number, e.g. 140 (no unit, no quotes)"),
    "integer": ("a whole number", "write a whole number, e.g. 1"),
    "string": ("a text", "write a text (quote it if it holds ':' or starts with a digit)"),
    "object": ("a mapping", "write a mapping (key: value, or {key: value})"),
    "array": ("a list", "write a list ([a, b] or '- item' lines)"),
}

_REQUIRED_FIXES = {
    "version": "add `version: 1` at the top",
    "profiles": "add a `profiles:` list",
    "name": "add `name: <a unique profile name>`",
    "match": "add `match: {}` (every drive) or e.g. `match: {controller: JMF667H, nand: L85C}`",
    "source": 'add `source: "<published figure, where from, and the tolerance applied>"`',
}


class FileChecker:
    """Collects the problems of one parsed threshold file (``errors``), each with its YAML line."""

    def __init__(self, file: str, lines: Mapping[str, int]) -> None:
        self.file = file
        self.lines = lines
        self.errors: list[ConfigError] = []

    def error(self, parts: KeyPath, message: str, fix: str | None) -> None:
        """Record one problem at key path ``parts`` (its YAML line looked up) with its fix,
        once: jsonschema reports e.g. each missing required key in an error of its own, each
        naming the whole list."""
        error = ConfigError(message, file=self.file, line=line_of(self.lines, parts),
                            key=json_path(parts) or None, fix=fix)
        if str(error) not in {str(e) for e in self.errors}:
            self.errors.append(error)

    # -- schema --------------------------------------------------------------------------------

    def check_schema(self, data: object) -> None:
        """Record every JSON-schema error of ``data`` (the parsed file), each with a fix."""
        validator = Draft202012Validator(schema())
        for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
            self._schema_error(err)

    def _schema_error(self, err: ValidationError) -> None:
        parts: KeyPath = list(err.absolute_path)
        kind = err.validator
        last = parts[-1] if parts else None
        if kind == "additionalProperties" and isinstance(err.instance, dict):
            here = err.schema if isinstance(err.schema, Mapping) else {}
            allowed = sorted(here.get("properties", {}))
            for key in err.instance:
                if key in allowed:
                    continue
                close = did_you_mean(str(key), allowed)
                fix = f"did you mean `{close}`?" if close else "remove it"
                fix += f" (allowed here: {', '.join(allowed)})"
                self.error([*parts, key], f"unknown key {key!r}", fix)
        elif kind == "required" and isinstance(err.instance, dict):
            required = err.validator_value if isinstance(err.validator_value, list) else []
            for key in required:
                if key not in err.instance:
                    fix = _REQUIRED_FIXES.get(key, f"add `{key}`")
                    self.error(parts, f"missing required key {key!r}", fix)
        elif kind == "type":
            wanted = str(err.validator_value)
            noun, fix = _TYPE_WORDS.get(wanted, (wanted, f"write a {wanted}"))
            self.error(parts, f"{err.instance!r} is not {noun}", fix)
        elif kind in ("exclusiveMinimum", "minimum"):
            parent = parts[-2] if len(parts) > 1 else None
            if last in ("min", "max"):
                fix = "limits are positive numbers: a floor goes in `min`, a ceiling in `max`"
            elif parent == "capacity_gb":
                fix = "capacities are positive numbers of decimal GB"
            else:
                fix = "percentages are positive numbers"
            relation = ">" if kind == "exclusiveMinimum" else ">="
            self.error(parts, f"{err.instance!r} must be {relation} {err.validator_value}", fix)
        elif kind == "exclusiveMaximum":
            self.error(
                parts,
                f"{err.instance!r} must be < {err.validator_value}",
                "a marginal band is a percentage of the limit below 100, e.g. 5",
            )
        elif kind == "anyOf":
            self.error(
                parts,
                "a limit needs `min`, `max` or both (or `max_delta` on a health counter)",
                "e.g. {min: 140} for a floor, {max: 2000} for a ceiling",
            )
        elif kind == "enum":
            allowed = err.validator_value if isinstance(err.validator_value, list) else []
            self.error(parts, f"{err.instance!r} is not one of " + ", ".join(map(str, allowed)),
                       "write severity: fail (the default) or severity: warn")
        elif kind in ("minItems", "maxItems"):
            self.error(
                parts,
                f"capacity_gb needs exactly two numbers, got {err.instance!r}",
                "write [low, high] in decimal GB, e.g. capacity_gb: [120, 130]",
            )
        elif kind == "minProperties":
            fix = (
                "give max_drop_pct and/or per_metric, or remove the block"
                if last == "regression"
                else "give at least one metric, e.g. bw_mbps: {min: 140}, or remove the workload"
            )
            self.error(parts, "empty mapping", fix)
        elif kind == "minLength":
            self.error(parts, "empty text", "write a value or remove the key")
        else:
            self.error(parts, err.message, "see pytest_ssdqual/thresholds/schema.json")
