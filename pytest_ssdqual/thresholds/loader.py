"""Threshold files: load, validate and resolve the limits that apply to one drive.

DESIGN.md, "Thresholds": one YAML file per controller family; each profile matches drives on
controller, NAND, firmware (glob), model (glob), serial, transport, kind and a capacity range, and
gives limits per workload and metric, each with its ``source``::

    version: 1
    profiles:
      - name: JMF667H + IMFT L85C 128GB
        match: {controller: JMF667H, nand: L85C, capacity_gb: [120, 130]}
        source: "AnandTech: ATTO sequential write 155 MB/s; limit 10 % below"
        limits:
          seq_write_128k_qd32: {bw_mbps: {min: 139.5}}
          rand_rw70_4k_qd32:   {read.lat_p99_us: {max: 2000}, total.iops: {min: 20000}}
        regression: {max_drop_pct: 5, per_metric: {seq_write_128k_qd32.write.bw_mbps: 3}}

Validation happens before any I/O and reports every problem of every file at once
(``ConfigErrors``), each with the file, the YAML line, the key and a fix: YAML syntax, the JSON
schema (``schema.json``, draft 2020-12, ``additionalProperties: false`` everywhere, with a "did you
mean" for near-miss keys), then sense checks the schema cannot express: workload ids from
``workloads.CATALOG``, metrics via ``Workload.canonical_metric``, ``min <= max``, ``version: 1``,
``capacity_gb`` low <= high, profile names unique across files, and two profiles with the same
``match`` that give different limits.

Resolution (``ThresholdSet.resolve``): among the profiles whose ``match`` holds for the drive, the
most specific one (most ``match`` keys) wins per (workload, metric); two equally specific profiles
that give different limits for the same metric are a ``ConfigError``.
"""

from __future__ import annotations

import difflib
import fnmatch
import functools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from pytest_ssdqual.catalog.workloads import CATALOG, DIRECTION_METRICS, TOTAL_METRICS, Workload
from pytest_ssdqual.errors import ConfigError, ConfigErrors
from pytest_ssdqual.thresholds.verdict import FAIL, Limit, Provenance, format_number
from pytest_ssdqual.yamlutil import json_path, line_of, load_yaml_with_lines

__all__ = [
    "DriveFacts",
    "MATCH_KEYS",
    "ResolvedLimits",
    "ThresholdProfile",
    "ThresholdSet",
    "schema",
]

#: Keys a profile's ``match`` may use.
MATCH_KEYS: tuple[str, ...] = (
    "controller",
    "nand",
    "firmware",
    "model",
    "serial",
    "transport",
    "kind",
    "capacity_gb",
)
_GLOB_KEYS = frozenset({"firmware", "model"})
_CASE_SENSITIVE_KEYS = frozenset({"serial"})

_Path = list[str | int]


@functools.cache
def schema() -> dict[str, Any]:
    """The threshold-file JSON schema (``schema.json``, draft 2020-12) as a dict."""
    text = resources.files(__package__).joinpath("schema.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


@dataclass(frozen=True)
class DriveFacts:
    """What a threshold profile can match on, for one drive.

    Attributes:
        controller: controller name from the lab inventory (``JMF667H``), ``None`` when unknown.
        nand: NAND name from the inventory (``L85C``), ``None`` when unknown.
        firmware: firmware revision as the drive reports it (``SVN417w``), ``''`` when unknown.
        model: model string (``CSSD-SM64NJ2``).
        serial: serial number.
        capacity_bytes: user capacity in bytes (0 when unknown).
        transport: ``sata``, ``nvme``, ``loop``, ... (lower case by convention).
        kind: target kind (``block``, ``file``, ``emu``, ``remote``).

    An empty or ``None`` value never matches a profile that names that key.
    """

    controller: str | None
    nand: str | None
    firmware: str = ""
    model: str = ""
    serial: str = ""
    capacity_bytes: int = 0
    transport: str = ""
    kind: str = ""

    @property
    def capacity_gb(self) -> float:
        """Capacity in decimal GB (10^9 bytes), as ``capacity_gb`` ranges are written."""
        return self.capacity_bytes / 1e9

    def summary(self) -> str:
        """One line for messages: ``controller=JMF667H nand=L85C firmware=SVN417w 128.0 GB``."""
        parts = [
            f"controller={self.controller or '?'}",
            f"nand={self.nand or '?'}",
            f"firmware={self.firmware or '?'}",
            f"model={self.model or '?'}",
            f"{self.capacity_gb:.1f} GB",
        ]
        return " ".join(parts)


@dataclass(frozen=True)
class ThresholdProfile:
    """One profile of a threshold file, validated.

    Attributes:
        name: unique profile name.
        file: the file it was read from; line: 1-based line where the profile starts.
        source: the profile's ``source`` text.
        match: the ``match`` mapping as written (``capacity_gb`` as ``[low, high]``).
        limits: its limits, canonical metrics, sorted by (workload, metric).
        regression_max_drop_pct: default allowed worsening vs a baseline, percent.
        regression_per_metric: overrides by ``'workload.direction.metric'`` (canonical) or by
            ``'workload'`` (every metric of it), percent.
    """

    name: str
    file: str
    line: int | None
    source: str
    match: dict[str, Any] = field(hash=False)
    limits: tuple[Limit, ...]
    regression_max_drop_pct: float | None = None
    regression_per_metric: dict[str, float] = field(default_factory=dict, hash=False)

    @property
    def specificity(self) -> int:
        """Number of ``match`` keys; ``match: {}`` (generic) is 0."""
        return len(self.match)

    @property
    def location(self) -> str:
        """``file:line`` of the profile."""
        return f"{self.file}:{self.line}" if self.line else self.file

    def matches(self, facts: DriveFacts) -> bool:
        """True when every ``match`` key holds for ``facts``.

        controller, nand, transport, kind: equal, case-insensitive. firmware, model: fnmatch glob,
        case-insensitive. serial: equal, case-sensitive. capacity_gb ``[lo, hi]``: inclusive on
        ``capacity_bytes / 1e9``. A key whose drive value is unknown (``None``, ``''``, 0) never
        holds.
        """
        for key, wanted in self.match.items():
            if key == "capacity_gb":
                low, high = wanted
                if facts.capacity_bytes <= 0 or not low <= facts.capacity_gb <= high:
                    return False
                continue
            have = getattr(facts, key)
            if not have:
                return False
            have, want = str(have).strip(), str(wanted).strip()
            if key in _GLOB_KEYS:
                if not fnmatch.fnmatchcase(have.casefold(), want.casefold()):
                    return False
            elif key in _CASE_SENSITIVE_KEYS:
                if have != want:
                    return False
            elif have.casefold() != want.casefold():
                return False
        return True

    def regression_for(self, workload_id: str, metric: str) -> float | None:
        """This profile's allowed worsening for one canonical metric, percent, or ``None``."""
        for key in (f"{workload_id}.{metric}", workload_id):
            if key in self.regression_per_metric:
                return self.regression_per_metric[key]
        return self.regression_max_drop_pct

    def match_text(self) -> str:
        """``{controller: JMF667H, nand: L85C}`` as written (``{}`` for a generic profile)."""
        inner = ", ".join(f"{k}: {v}" for k, v in self.match.items())
        return "{" + inner + "}"


@dataclass(frozen=True)
class ResolvedLimits:
    """The limits that apply to one drive.

    Attributes:
        limits: ``(workload id, canonical metric) -> Limit``, the winner for each pair.
        profiles: the profiles that matched the drive, most specific first (load order within
            one specificity).
    """

    limits: dict[tuple[str, str], Limit]
    profiles: tuple[ThresholdProfile, ...]

    def for_workload(self, workload_id: str) -> list[Limit]:
        """The limits of one workload, sorted by metric name (empty when there are none)."""
        found = [lim for (wid, _), lim in self.limits.items() if wid == workload_id]
        return sorted(found, key=lambda lim: lim.metric)

    def regression_limit_pct(self, workload_id: str, metric: str) -> float | None:
        """Allowed worsening vs a baseline for one canonical metric, percent, or ``None``.

        The most specific matching profile that says anything about the metric wins (its
        ``per_metric`` entry for ``workload.metric``, then for ``workload``, then its
        ``max_drop_pct``). "Worsening" is a drop for iops/bw and a rise for latencies.
        """
        for profile in self.profiles:
            value = profile.regression_for(workload_id, metric)
            if value is not None:
                return value
        return None

    def describe(self) -> str:
        """Human lines: which profiles matched, from where, and how many limits each gives."""
        if not self.profiles:
            return (
                "no threshold profile matches this drive: every figure is 'not judged' "
                "(add a profile, or a generic one with match: {})"
            )
        lines = [f"{len(self.profiles)} threshold profile(s) match, most specific first:"]
        for profile in self.profiles:
            count = sum(
                1
                for lim in self.limits.values()
                if lim.provenance.profile == profile.name and lim.provenance.file == profile.file
            )
            extra = ""
            if profile.regression_max_drop_pct is not None:
                extra = f", regression max drop {format_number(profile.regression_max_drop_pct)} %"
            lines.append(
                f'  {profile.location} profile "{profile.name}" match {profile.match_text()} '
                f"(specificity {profile.specificity}): {count} limit(s) in effect{extra}"
            )
            lines.append(f"      source: {profile.source}")
        return "\n".join(lines)


@dataclass(frozen=True)
class ThresholdSet:
    """Every profile of a set of threshold files, validated.

    Attributes:
        profiles: in load order (files sorted within a directory, profiles in file order).
        files: the files read.
    """

    profiles: tuple[ThresholdProfile, ...] = ()
    files: tuple[str, ...] = ()

    @classmethod
    def load(cls, paths: Iterable[str | Path]) -> ThresholdSet:
        """Read and validate threshold files.

        Args:
            paths: files, or directories whose ``*.yaml`` / ``*.yml`` files are read (sorted).

        Returns:
            the validated set.

        Raises:
            ConfigErrors: every problem in every file (a missing path, a directory without
                threshold files, YAML syntax, schema, sense checks, duplicate profile names, two
                profiles with the same ``match`` and different limits), each a ``ConfigError``
                with ``file``, ``line``, ``key`` and ``fix``.
        """
        errors: list[ConfigError] = []
        files = _expand(paths, errors)
        profiles: list[ThresholdProfile] = []
        names: dict[str, ThresholdProfile] = {}
        for file in files:
            for profile in _load_file(file, errors):
                first = names.get(profile.name)
                if first is not None:
                    errors.append(
                        ConfigError(
                            f'duplicate profile name "{profile.name}" (first at {first.location})',
                            file=profile.file,
                            line=profile.line,
                            key="name",
                            fix="give every profile a unique name: verdicts cite profiles by name",
                        )
                    )
                    continue
                names[profile.name] = profile
                profiles.append(profile)
        errors.extend(_same_match_conflicts(profiles))
        if errors:
            raise ConfigErrors(errors)
        return cls(tuple(profiles), tuple(files))

    def resolve(self, facts: DriveFacts) -> ResolvedLimits:
        """The limits for one drive.

        Returns:
            ``ResolvedLimits``: per (workload, metric) the limit of the most specific matching
            profile; the matching profiles, most specific first.

        Raises:
            ConfigErrors: two equally specific matching profiles give different limits (or
                regression percentages) for the same workload and metric; each error names both
                profiles, their files and lines, and the fix.
        """
        matching = sorted(
            (p for p in self.profiles if p.matches(facts)), key=lambda p: -p.specificity
        )
        errors = _conflicts(matching, f"all match this drive ({facts.summary()})")
        if errors:
            raise ConfigErrors(errors)
        chosen: dict[tuple[str, str], Limit] = {}
        for profile in matching:
            for limit in profile.limits:
                chosen.setdefault((limit.workload, limit.metric), limit)
        return ResolvedLimits(dict(sorted(chosen.items())), tuple(matching))


# --------------------------------------------------------------------------------------------
# Conflicts between profiles


def _conflicts(matching: Sequence[ThresholdProfile], why: str) -> list[ConfigError]:
    """Errors for pairs where the winning (most specific) profiles disagree.

    ``matching`` must be sorted most specific first.
    """
    errors: list[ConfigError] = []
    by_pair: dict[tuple[str, str], list[tuple[int, Limit]]] = {}
    for profile in matching:
        for limit in profile.limits:
            by_pair.setdefault((limit.workload, limit.metric), []).append(
                (profile.specificity, limit)
            )
    for (workload_id, metric), entries in sorted(by_pair.items()):
        top = [lim for spec, lim in entries if spec == entries[0][0]]
        if len({lim.bounds for lim in top}) > 1:
            first = top[0].provenance
            others = "; ".join(
                f'"{lim.provenance.profile}" ({lim.provenance.location}) gives {lim}' for lim in top
            )
            errors.append(
                ConfigError(
                    f"equally specific profiles (specificity {entries[0][0]}) {why} and give "
                    f"different limits for {workload_id} {metric}: {others}",
                    file=first.file,
                    line=first.line,
                    key=f"{workload_id}.{metric}",
                    fix="make one profile's match more specific (add firmware, nand or "
                    "capacity_gb) so it wins, or give both the same limit",
                )
            )
    errors.extend(_regression_conflicts(matching, why))
    return errors


def _regression_conflicts(matching: Sequence[ThresholdProfile], why: str) -> list[ConfigError]:
    pairs = [("*", "*")] + [(w.id, m) for w in CATALOG.values() for m in w.metric_names()]
    errors: list[ConfigError] = []
    seen: set[tuple[str, ...]] = set()
    for workload_id, metric in pairs:
        entries = [
            (p, v) for p in matching if (v := p.regression_for(workload_id, metric)) is not None
        ]
        if not entries:
            continue
        spec = entries[0][0].specificity
        top = [(p, v) for p, v in entries if p.specificity == spec]
        if len({v for _, v in top}) < 2:
            continue
        names = tuple(sorted(p.name for p, _ in top))
        if names in seen:  # one message per pair of profiles is enough
            continue
        seen.add(names)
        first = top[0][0]
        what = "by default" if workload_id == "*" else f"for {workload_id} {metric}"
        listing = "; ".join(
            f'"{p.name}" ({p.location}) allows {format_number(v)} %' for p, v in top
        )
        errors.append(
            ConfigError(
                f"equally specific profiles (specificity {spec}) {why} and give different "
                f"regression limits {what}: {listing}",
                file=first.file,
                line=first.line,
                key="regression",
                fix="make one profile's match more specific, or give both the same regression "
                "percentages",
            )
        )
    return errors


def _match_key(profile: ThresholdProfile) -> tuple[tuple[str, str], ...]:
    """A normal form of ``match`` for spotting profiles that always match the same drives."""
    items = []
    for key, value in profile.match.items():
        if key == "capacity_gb":
            text = repr([float(v) for v in value])
        elif key in _CASE_SENSITIVE_KEYS:
            text = str(value).strip()
        else:
            text = str(value).strip().casefold()
        items.append((key, text))
    return tuple(sorted(items))


def _same_match_conflicts(profiles: Sequence[ThresholdProfile]) -> list[ConfigError]:
    """Profiles with identical ``match`` always tie: report their disagreements at load time."""
    groups: dict[tuple[tuple[str, str], ...], list[ThresholdProfile]] = {}
    for profile in profiles:
        groups.setdefault(_match_key(profile), []).append(profile)
    errors: list[ConfigError] = []
    for group in groups.values():
        if len(group) > 1:
            errors.extend(_conflicts(group, f"have the same match {group[0].match_text()}"))
    return errors


# --------------------------------------------------------------------------------------------
# Reading and checking one file


def _expand(paths: Iterable[str | Path], errors: list[ConfigError]) -> list[str]:
    """The files to read, in order; a file named twice (directly or via its folder) once."""
    files: list[str] = []
    seen: set[Path] = set()

    def add(path: Path) -> None:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            files.append(str(path))

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(
                p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()
            )
            if not found:
                errors.append(
                    ConfigError(
                        "no threshold files (*.yaml, *.yml) in this directory",
                        file=str(path),
                        fix="add threshold files there or point to another directory",
                    )
                )
            for file in found:
                add(file)
        elif path.is_file():
            add(path)
        else:
            errors.append(
                ConfigError(
                    "threshold file or directory not found",
                    file=str(path),
                    fix="check the path (relative paths are taken from the current directory)",
                )
            )
    return files


def _load_file(file: str, errors: list[ConfigError]) -> list[ThresholdProfile]:
    """Validate one file; append its problems to ``errors``; return its profiles if it is clean."""
    try:
        data, lines = load_yaml_with_lines(file)
    except ConfigError as exc:
        errors.append(exc)
        return []
    if data is None:
        errors.append(
            ConfigError(
                "empty threshold file",
                file=file,
                line=1,
                fix="start it with `version: 1` and a `profiles:` list",
            )
        )
        return []
    checker = _FileChecker(file, lines)
    checker.check_schema(data)
    checker.check_sense(data)
    errors.extend(sorted(checker.errors, key=lambda e: e.line or 0))
    if checker.errors:
        return []
    assert isinstance(data, dict)
    return [checker.build(index, raw) for index, raw in enumerate(data["profiles"])]


def _did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return close[0] if close else None


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: object) -> float | None:
    """``value`` as a float when it is a YAML number (not a bool), else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


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


class _FileChecker:
    """Collects the problems of one parsed threshold file, then builds its profiles."""

    def __init__(self, file: str, lines: Mapping[str, int]) -> None:
        self.file = file
        self.lines = lines
        self.errors: list[ConfigError] = []

    def error(self, parts: _Path, message: str, fix: str | None) -> None:
        self.errors.append(
            ConfigError(
                message,
                file=self.file,
                line=line_of(self.lines, parts),
                key=json_path(parts) or None,
                fix=fix,
            )
        )

    # -- schema --------------------------------------------------------------------------------

    def check_schema(self, data: object) -> None:
        validator = Draft202012Validator(schema())
        for err in sorted(validator.iter_errors(data), key=lambda e: list(map(str, e.path))):
            self._schema_error(err)

    def _schema_error(self, err: ValidationError) -> None:
        parts: _Path = list(err.absolute_path)
        kind = err.validator
        last = parts[-1] if parts else None
        if kind == "additionalProperties" and isinstance(err.instance, dict):
            here = err.schema if isinstance(err.schema, Mapping) else {}
            allowed = sorted(here.get("properties", {}))
            for key in err.instance:
                if key in allowed:
                    continue
                close = _did_you_mean(str(key), allowed)
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

    # -- sense checks --------------------------------------------------------------------------

    def check_sense(self, data: object) -> None:
        if not isinstance(data, dict):
            return
        version = data.get("version")
        if _is_number(version) and version != 1:
            self.error(
                ["version"],
                f"unsupported version {version!r}",
                "this plugin reads threshold files of `version: 1`",
            )
        profiles = data.get("profiles")
        if not isinstance(profiles, list):
            return
        names: dict[str, int | None] = {}
        for index, profile in enumerate(profiles):
            if not isinstance(profile, dict):
                continue
            base: _Path = ["profiles", index]
            name = profile.get("name")
            if isinstance(name, str):
                if name in names:
                    self.error(
                        [*base, "name"],
                        f'duplicate profile name "{name}" (first at line {names[name]})',
                        "give every profile a unique name: verdicts cite profiles by name",
                    )
                names.setdefault(name, line_of(self.lines, [*base, "name"]))
            self._check_match(base, profile.get("match"))
            limits = profile.get("limits")
            if isinstance(limits, dict):
                self._check_limits([*base, "limits"], limits)
            regression = profile.get("regression")
            if isinstance(regression, dict):
                self._finite([*base, "regression", "max_drop_pct"], regression.get("max_drop_pct"))
                per_metric = regression.get("per_metric")
                if isinstance(per_metric, dict):
                    for key, value in per_metric.items():
                        kparts: _Path = [*base, "regression", "per_metric", key]
                        self._regression_key(kparts, str(key))
                        self._finite(kparts, value)

    def _finite(self, parts: _Path, value: object) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            self.error(parts, f"{value!r} is not a finite number", "write a plain number")

    def _check_match(self, base: _Path, match: object) -> None:
        if not isinstance(match, dict):
            return
        capacity = match.get("capacity_gb")
        if (
            isinstance(capacity, list)
            and len(capacity) == 2
            and all(_is_number(v) for v in capacity)
            and capacity[0] > capacity[1]
        ):
            self.error(
                [*base, "match", "capacity_gb"],
                f"capacity_gb range is inverted: {capacity[0]} > {capacity[1]}",
                f"write [low, high]: [{capacity[1]}, {capacity[0]}]",
            )

    def _workload(self, parts: _Path, workload_id: str) -> Workload | None:
        workload = CATALOG.get(workload_id)
        if workload is None:
            close = _did_you_mean(workload_id, CATALOG)
            hint = f"did you mean `{close}`? " if close else ""
            self.error(
                parts,
                f"unknown workload {workload_id!r}",
                f"{hint}known workloads: {', '.join(sorted(CATALOG))}",
            )
        return workload

    def _check_limits(self, base: _Path, limits: dict[Any, Any]) -> None:
        for workload_id, metrics in limits.items():
            wparts = [*base, workload_id]
            workload = self._workload(wparts, str(workload_id))
            if workload is None or not isinstance(metrics, dict):
                continue
            seen: dict[str, str] = {}
            for name, limit in metrics.items():
                mparts = [*wparts, name]
                canonical = self._metric(mparts, workload, str(name))
                if canonical is None:
                    continue
                if canonical in seen:
                    self.error(
                        mparts,
                        f"{name!r} is the same metric ({canonical}) as {seen[canonical]!r}",
                        "keep one of the two",
                    )
                seen.setdefault(canonical, str(name))
                if isinstance(limit, dict):
                    for key in ("min", "max", "marginal_pct", "max_delta"):
                        self._finite([*mparts, key], limit.get(key))
                    self._check_zero_and_delta(mparts, workload, canonical, limit)
                    low, high = _number(limit.get("min")), _number(limit.get("max"))
                    if low is not None and high is not None and low > high:
                        self.error(
                            mparts,
                            f"min {format_number(low)} > max {format_number(high)}: "
                            "no value can pass",
                            "swap them, or drop one bound",
                        )

    def _check_zero_and_delta(
        self, parts: _Path, workload: Workload, canonical: str, limit: dict[Any, Any]
    ) -> None:
        """``max: 0`` only on the health workload (counts and flags); ``max_delta`` only on a
        metric that has a ``<metric>_delta`` (health counters)."""
        if limit.get("max") == 0 and workload.family != "health":
            self.error([*parts, "max"], "0 must be > 0",
                       "limits are positive numbers: a floor goes in `min`, a ceiling in `max`")
        if "max_delta" in limit and f"{canonical}_delta" not in workload.metric_names():
            deltas = [m.removesuffix("_delta") for m in workload.metric_names()
                      if m.endswith("_delta")]
            self.error(
                [*parts, "max_delta"],
                f"{canonical} of {workload.id} has no before/after change to limit",
                ("max_delta applies to " + ", ".join(deltas)) if deltas
                else "use min/max here; max_delta is for health counters (workload health)",
            )

    def _metric(self, parts: _Path, workload: Workload, name: str) -> str | None:
        """Canonical metric for ``name`` on ``workload``, or ``None`` after recording the error."""
        canonical = workload.canonical_metric(name)
        if canonical is not None:
            return canonical
        names = workload.metric_names()
        direction, _, bare = name.rpartition(".")
        measured_dirs = [d for d in ("read", "write", "total") if f"{d}.{bare}" in names]
        if not direction and f"read.{bare}" in names and f"write.{bare}" in names:
            message = f"{name!r} is ambiguous on the mixed workload {workload.id}"
            fix = f"write read.{bare} or write.{bare}"
        elif direction and measured_dirs and direction not in measured_dirs:
            message = f"{workload.id} has no {direction!r} direction for {bare} (it measures "
            message += " and ".join(measured_dirs) + ")"
            options = [bare] if workload.canonical_metric(bare) else []
            options += [f"{d}.{bare}" for d in measured_dirs]
            fix = "use " + " or ".join(options)
        else:
            bare_ok = [
                m for m in (*DIRECTION_METRICS, *TOTAL_METRICS) if workload.canonical_metric(m)
            ]
            close = _did_you_mean(name, [*names, *bare_ok])
            hint = f"did you mean `{close}`? " if close else ""
            message = f"unknown metric {name!r} for {workload.id}"
            fix = f"{hint}metrics: {', '.join(names)}"
            if bare_ok:
                fix += f" (or a bare name for the {workload.primary_direction} direction)"
        self.error(parts, message, fix)
        return None

    def _regression_key(self, parts: _Path, key: str) -> str | None:
        workload_id, _, metric = key.partition(".")
        workload = self._workload(parts, workload_id)
        if workload is None:
            return None
        if not metric:
            return workload_id
        canonical = self._metric(parts, workload, metric)
        return f"{workload_id}.{canonical}" if canonical else None

    # -- building (only for a clean file) --------------------------------------------------------

    def build(self, index: int, raw: dict[str, Any]) -> ThresholdProfile:
        base: _Path = ["profiles", index]
        name, source = str(raw["name"]), str(raw["source"])
        limits: list[Limit] = []
        for workload_id, metrics in (raw.get("limits") or {}).items():
            workload = CATALOG[workload_id]
            for metric, spec in metrics.items():
                canonical = workload.canonical_metric(metric)
                assert canonical is not None
                provenance = Provenance(
                    self.file, name, source, line_of(self.lines, [*base, "limits", workload_id,
                                                                  metric])
                )
                severity = str(spec.get("severity", FAIL))
                if "min" in spec or "max" in spec:
                    limits.append(
                        Limit(
                            workload_id,
                            canonical,
                            _float(spec.get("min")),
                            _float(spec.get("max")),
                            _float(spec.get("marginal_pct")),
                            provenance,
                            severity,
                        )
                    )
                if "max_delta" in spec:  # a limit on the change: its own metric, <name>_delta
                    limits.append(Limit(workload_id, f"{canonical}_delta", None,
                                        _float(spec["max_delta"]), None, provenance, severity))
        regression = raw.get("regression") or {}
        per_metric: dict[str, float] = {}
        for key, value in (regression.get("per_metric") or {}).items():
            canonical_key = self._regression_key([], str(key))
            assert canonical_key is not None
            per_metric[canonical_key] = float(value)
        match = dict(raw["match"])
        return ThresholdProfile(
            name=name,
            file=self.file,
            line=line_of(self.lines, base),
            source=source,
            match=match,
            limits=tuple(sorted(limits, key=lambda lim: (lim.workload, lim.metric))),
            regression_max_drop_pct=_float(regression.get("max_drop_pct")),
            regression_per_metric=per_metric,
        )


def _float(value: object) -> float | None:
    if value is None:
        return None
    if not isinstance(value, int | float):  # the schema let only numbers through
        raise TypeError(f"not a number: {value!r}")
    return float(value)
