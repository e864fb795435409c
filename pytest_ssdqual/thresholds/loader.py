"""Threshold files: load and validate a set of them, and resolve the limits for one drive.

docs/thresholds.md: one YAML file per controller family; each profile matches drives on
controller, NAND, firmware (glob), model (glob), serial, transport, kind and a capacity range, and
gives limits per workload and metric, each with its ``source``::

    version: 1
    profiles:
      - name: JMF667H + IMFT L85C 128GB
        match: {controller: JMF667H, nand: L85C, capacity_gb: [120, 130]}
        source: "JMicron JMF667H Firmware Preview Testing with L85A, L85C and A19 Flash:
          ATTO 2.34 (QD4) sequential write peak 155 MB/s; limit 10 % below"
        limits:
          seq_write_128k_qd32: {bw_mbps: {min: 139.5}}
          rand_rw70_4k_qd32:   {read.lat_p99_us: {max: 2000}, total.iops: {min: 20000}}
        regression: {max_drop_pct: 5, per_metric: {seq_write_128k_qd32.write.bw_mbps: 3}}

Validation happens before any I/O and reports every problem of every file at once
(``ConfigErrors``), each with the file, the YAML line, the key and a fix: YAML syntax, the JSON
schema (``thresholds.schema_check``), the sense checks the schema cannot express
(``thresholds.sense_check``), profile names unique across files, and two profiles with the same
``match`` that give different limits (``thresholds.conflicts``). Clean files become
``ThresholdProfile`` objects (``thresholds.build``, ``thresholds.profile``).

Resolution (``ThresholdSet.resolve``): among the profiles whose ``match`` holds for the drive, the
most specific one (most ``match`` keys) wins per (workload, metric); two equally specific profiles
that give different limits for the same metric are a ``ConfigError``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.errors import ConfigError, ConfigErrors
from pytest_ssdqual.thresholds.build import build_profile
from pytest_ssdqual.thresholds.conflicts import conflicts, same_match_conflicts
from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits, ThresholdProfile
from pytest_ssdqual.thresholds.scaling import scale_limit
from pytest_ssdqual.thresholds.sense_check import SenseChecker
from pytest_ssdqual.thresholds.verdict import Limit
from pytest_ssdqual.yamlutil import load_yaml_with_lines

__all__ = ["ThresholdSet"]


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
        errors.extend(same_match_conflicts(profiles))
        if errors:
            raise ConfigErrors(errors)
        return cls(tuple(profiles), tuple(files))

    def resolve(self, facts: DriveFacts) -> ResolvedLimits:
        """The limits for one drive.

        Returns:
            ``ResolvedLimits``: per (workload, metric) the limit of the most specific matching
            profile; the matching profiles, most specific first. For an emulated twin
            (``facts.kind == 'emu'`` with ``figures_scale``) rate and latency limits are scaled
            by its factor, each saying so in its provenance (``thresholds.scaling``).

        Raises:
            ConfigErrors: two equally specific matching profiles give different limits (or
                regression percentages) for the same workload and metric; each error names both
                profiles, their files and lines, and the fix.
        """
        matching = sorted(
            (p for p in self.profiles if p.matches(facts)), key=lambda p: -p.specificity
        )
        errors = conflicts(matching, f"all match this drive ({facts.summary()})")
        if errors:
            raise ConfigErrors(errors)
        chosen: dict[tuple[str, str], Limit] = {}
        for profile in matching:
            for limit in profile.limits:
                chosen.setdefault((limit.workload, limit.metric), limit)
        factor = facts.figures_scale if facts.kind == "emu" else None  # a real drive: never
        if factor is not None and factor != 1:
            chosen = {key: scale_limit(lim, factor) for key, lim in chosen.items()}
            return ResolvedLimits(dict(sorted(chosen.items())), tuple(matching), factor)
        return ResolvedLimits(dict(sorted(chosen.items())), tuple(matching))


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
    checker = SenseChecker(file, lines)
    checker.check_schema(data)
    checker.check_sense(data)
    errors.extend(sorted(checker.errors, key=lambda e: e.line or 0))
    if checker.errors:
        return []
    assert isinstance(data, dict)
    return [build_profile(file, lines, index, raw) for index, raw in enumerate(data["profiles"])]

