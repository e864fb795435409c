"""Build ``ThresholdProfile`` objects from a threshold file that passed every check.

Each limit gets its ``Provenance`` (file, profile name, source, YAML line); a ``max_delta`` becomes
a limit on its own metric ``<metric>_delta``; metric names and regression keys are made canonical
(``bw_mbps`` -> ``write.bw_mbps`` on a write workload).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_ssdqual.catalog.parametric import threshold_workload
from pytest_ssdqual.catalog.workloads import Workload
from pytest_ssdqual.thresholds.profile import ThresholdProfile
from pytest_ssdqual.thresholds.verdict import FAIL, Limit, Provenance
from pytest_ssdqual.yamlutil import line_of

__all__ = ["build_profile"]


def _workload(workload_id: str) -> Workload:
    """The checked workload of a limits key (a catalog id, or ``fio:`` + an fio pattern's)."""
    workload = threshold_workload(workload_id)
    assert workload is not None, workload_id
    return workload


def _canonical_key(key: str) -> str:
    """A checked ``regression.per_metric`` key in canonical form (``workload[.metric]``)."""
    workload_id, _, metric = key.partition(".")
    if not metric:
        return workload_id
    workload = _workload(workload_id)
    canonical = workload.canonical_metric(metric)
    assert canonical is not None
    return f"{workload.id}.{canonical}"


def build_profile(
    file: str, lines: Mapping[str, int], index: int, raw: dict[str, Any]
) -> ThresholdProfile:
    """The profile at ``profiles[index]`` of a clean file (``raw`` as parsed, ``lines`` the
    YAML line of each key path from ``yamlutil.load_yaml_with_lines``)."""
    base: list[str | int] = ["profiles", index]
    name, source = str(raw["name"]), str(raw["source"])
    limits: list[Limit] = []
    for workload_id, metrics in (raw.get("limits") or {}).items():
        workload = _workload(workload_id)
        for metric, spec in metrics.items():
            canonical = workload.canonical_metric(metric)
            assert canonical is not None
            provenance = Provenance(
                file, name, source, line_of(lines, [*base, "limits", workload_id, metric])
            )
            severity = str(spec.get("severity", FAIL))
            if "min" in spec or "max" in spec:
                limits.append(
                    Limit(
                        workload.id,
                        canonical,
                        _float(spec.get("min")),
                        _float(spec.get("max")),
                        _float(spec.get("marginal_pct")),
                        provenance,
                        severity,
                    )
                )
            if "max_delta" in spec:  # a limit on the change: its own metric, <name>_delta
                limits.append(Limit(workload.id, f"{canonical}_delta", None,
                                    _float(spec["max_delta"]), None, provenance, severity))
    regression = raw.get("regression") or {}
    per_metric: dict[str, float] = {}
    for key, value in (regression.get("per_metric") or {}).items():
        per_metric[_canonical_key(str(key))] = float(value)
    match = dict(raw["match"])
    return ThresholdProfile(
        name=name,
        file=file,
        line=line_of(lines, base),
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
