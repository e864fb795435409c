"""The temperature figures of a test (``qualify.temperature``), as catalog data.

Drive-wide metrics (no direction), units in the names: ``temperature.max_c`` (the highest
sample, °C), ``temperature.above_wctemp_s`` (seconds at or above WCTEMP),
``temperature.throttle_events`` and ``temperature.throttled_s`` (the rule:
``drive.temperature_trace``). They exist only on a drive with a temperature source, so they
are not in ``Workload.metric_names()``; ``Workload.canonical_metric`` accepts them on every
workload measured through ``qualify.measure`` (:func:`temperature_of`). Facts of the drive in
its surroundings (ambient, airflow) as much as of the drive: judged by limits, never gated
against a baseline (``NO_DIRECTION_TEMP``).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["NO_DIRECTION_TEMP", "NO_TEMPERATURE", "TEMPERATURE_METRICS",
           "TEMPERATURE_ZERO_OK", "not_sampled", "temperature_of"]

TEMPERATURE_METRICS: tuple[str, ...] = (
    "temperature.max_c", "temperature.above_wctemp_s", "temperature.throttle_events",
    "temperature.throttled_s")
#: No regression direction (``catalog.workloads.NO_DIRECTION``).
NO_DIRECTION_TEMP: frozenset[str] = frozenset(TEMPERATURE_METRICS)
#: The counts a ``max: 0`` may be put on (no second above WCTEMP, no throttling).
TEMPERATURE_ZERO_OK: frozenset[str] = frozenset(TEMPERATURE_METRICS[1:])
#: Tests measured outside ``qualify.measure`` (no fio workload, or their own flow): no
#: temperature figures.
NO_TEMPERATURE: frozenset[str] = frozenset({
    "health", "idle_wake_read_4k_qd1", "idle_power", "power_loss_integrity", "firmware_update"})


def temperature_of(workload_id: str, metric: str) -> bool:
    """True when ``metric`` is a temperature figure ``workload_id`` can have."""
    return metric in TEMPERATURE_METRICS and workload_id not in NO_TEMPERATURE


def not_sampled(metrics: Mapping[str, float]) -> dict[str, str]:
    """Metric -> why a stored record has no temperature figure (for a rejudge: the run reported
    such a limit as not applicable -- no sensor, no WCTEMP, no per-second log, not sampled)."""
    return {m: "not measured: no temperature figure in this record (no sensor, or not sampled)"
            for m in TEMPERATURE_METRICS if m not in metrics}
