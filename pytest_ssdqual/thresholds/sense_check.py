"""Threshold-file sense checks: what the JSON schema cannot express.

Workload ids from ``catalog.workloads.CATALOG`` or ``fio:`` + an fio pattern's
(``catalog.parametric``), metrics via ``Workload.canonical_metric`` (with
"did you mean" and the direction a mixed workload needs), ``min <= max``, ``version: 1``,
``capacity_gb`` low <= high, finite numbers, profile names unique within the file, ``max: 0`` and
``max_delta`` only where they mean something (health counters). Run after
``FileChecker.check_schema`` on the same checker, so one file's problems come out together.
"""

from __future__ import annotations

import math
from typing import Any

from pytest_ssdqual.catalog.health import RENAMED_METRICS
from pytest_ssdqual.catalog.parametric import (
    PATTERN_PREFIX,
    parametric_workload,
    threshold_workload,
)
from pytest_ssdqual.catalog.temperature import TEMPERATURE_ZERO_OK
from pytest_ssdqual.catalog.workloads import CATALOG, DIRECTION_METRICS, TOTAL_METRICS, Workload
from pytest_ssdqual.thresholds.schema_check import FileChecker, KeyPath, did_you_mean
from pytest_ssdqual.thresholds.verdict import format_number
from pytest_ssdqual.yamlutil import line_of

__all__ = ["SenseChecker"]


def _number(value: object) -> float | None:
    """``value`` as a float when it is a YAML number (not a bool), else ``None``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return None


def _is_number(value: object) -> bool:
    return _number(value) is not None


class SenseChecker(FileChecker):
    """A ``FileChecker`` that also runs the sense checks (``check_sense``)."""

    def check_sense(self, data: object) -> None:
        """Record every sense problem of ``data`` (the parsed file; parts the schema already
        rejected are skipped, not reported twice)."""
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
            base: KeyPath = ["profiles", index]
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
                        kparts: KeyPath = [*base, "regression", "per_metric", key]
                        self._regression_key(kparts, str(key))
                        self._finite(kparts, value)

    def _finite(self, parts: KeyPath, value: object) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            self.error(parts, f"{value!r} is not a finite number", "write a plain number")

    def _check_match(self, base: KeyPath, match: object) -> None:
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

    def _workload(self, parts: KeyPath, workload_id: str) -> Workload | None:
        workload = threshold_workload(workload_id)  # a catalog id, or fio: + a pattern's
        if workload is None and workload_id.startswith(PATTERN_PREFIX):
            self.error(
                parts,
                f"unknown fio pattern {workload_id!r}",
                f"write {PATTERN_PREFIX}{{seq|rand}}_{{read|write|wNN}}_{{bs}}_qd{{N}}[_t{{T}}] "
                f"as the fio_workload fixture names it (e.g. {PATTERN_PREFIX}rand_w30_4k_qd4: "
                "4 KiB random, 30 % writes, QD4; bs a whole number of 512-byte sectors, NN <= "
                "100, T >= 2), or a catalog id without the prefix",
            )
            return None
        if workload is None:
            close = did_you_mean(workload_id, CATALOG)
            hint = f"did you mean `{close}`? " if close else ""
            if parametric_workload(workload_id) is not None:
                hint = (f"an fio pattern's limits go under `{PATTERN_PREFIX}{workload_id}`; "
                        + hint)
            self.error(
                parts,
                f"unknown workload {workload_id!r}",
                f"{hint}known workloads: {', '.join(sorted(CATALOG))}",
            )
        return workload

    def _check_limits(self, base: KeyPath, limits: dict[Any, Any]) -> None:
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
        self, parts: KeyPath, workload: Workload, canonical: str, limit: dict[Any, Any]
    ) -> None:
        """``max: 0`` only on the health workload (counts and flags) and the temperature counts
        (``catalog.temperature.TEMPERATURE_ZERO_OK``: no second above WCTEMP, no throttling);
        ``max_delta`` only on a metric that has a ``<metric>_delta`` (health counters)."""
        if (limit.get("max") == 0 and workload.family != "health"
                and canonical not in TEMPERATURE_ZERO_OK):
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

    def _metric(self, parts: KeyPath, workload: Workload, name: str) -> str | None:
        """Canonical metric for ``name`` on ``workload``, or ``None`` after recording the error."""
        canonical = workload.canonical_metric(name)
        if canonical is not None:
            return canonical
        names = workload.metric_names()
        direction, _, bare = name.rpartition(".")
        renamed = RENAMED_METRICS.get(workload.id, {}).get(bare)
        if renamed is not None:
            why, _, fix = renamed.partition("|")
            self.error(parts, f"metric {bare!r} of {workload.id} was renamed: it {why}", fix)
            return None
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
            close = did_you_mean(name, [*names, *bare_ok])
            hint = f"did you mean `{close}`? " if close else ""
            message = f"unknown metric {name!r} for {workload.id}"
            fix = f"{hint}metrics: {', '.join(names)}"
            if bare_ok:
                fix += f" (or a bare name for the {workload.primary_direction} direction)"
        self.error(parts, message, fix)
        return None

    def _regression_key(self, parts: KeyPath, key: str) -> str | None:
        workload_id, _, metric = key.partition(".")
        workload = self._workload(parts, workload_id)
        if workload is None:
            return None
        if not metric:
            return workload_id
        canonical = self._metric(parts, workload, metric)
        return f"{workload_id}.{canonical}" if canonical else None
