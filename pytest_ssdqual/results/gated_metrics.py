"""Which metrics the regression gate judges, in which direction, and within which limit.

Every workload's primary figures (``primary_metrics``: the primary-direction ``iops`` and
``bw_mbps`` of a plain workload; a suite's few summary figures ``Workload.primary_figures``
where its catalog defines them -- sweeps, presets, data states, burst and compressibility, whose
~40-90 per-point figures are each judged on a single run, so gating them all would fail every
identical build; else the higher-is-better metrics of a methodology workload), every metric the
drive's threshold profiles give an absolute limit of severity ``fail`` for (a ``warn`` limit is
indicative and never fails a test), plus every metric named in a ``regression.per_metric`` key
(``workload.metric``, or ``workload`` for all of its metrics) -- except the latency tails
(``TAIL_METRICS``), which are gated only where a matching profile names that very metric in
``regression.per_metric`` (``rand_read_4k_qd1.read.lat_p99_99_us: 50``): an absolute ceiling
(generic.yaml's p99.99 <= 1 s) or a workload-wide ``per_metric`` key does not gate them. The
direction is ``workloads.HIGHER_IS_BETTER``'s (a drop is a worsening for IOPS and bandwidth, a
rise for latencies); the allowed worsening is the threshold files' ``regression`` block
(``regression_limit``), else ``DEFAULT_REGRESSION_LIMIT_PCT``. Plain functions of plain data (no
pytest, no I/O).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ssdqual.catalog.parametric import find_workload
from pytest_ssdqual.catalog.workloads import HIGHER_IS_BETTER, NO_DIRECTION
from pytest_ssdqual.thresholds.verdict import WARN

if TYPE_CHECKING:
    from pytest_ssdqual.thresholds.profile import ResolvedLimits

__all__ = [
    "DEFAULT_REGRESSION_LIMIT_PCT",
    "TAIL_METRICS",
    "gated_metrics",
    "has_direction",
    "is_higher_better",
    "is_tail",
    "limit_direction",
    "primary_metrics",
    "regression_limit",
]

#: Allowed worsening vs the baseline, in percent, when no matching threshold profile has a
#: ``regression`` block (docs/regression-gate.md, "Firmware regression gate":
#: ``regression: {max_drop_pct: 5}``).
DEFAULT_REGRESSION_LIMIT_PCT = 5.0

#: Bare latency-tail metric names: gated only where a profile's ``regression.per_metric`` names
#: the metric itself (``workload.direction.metric``).
TAIL_METRICS: frozenset[str] = frozenset(
    {"lat_p50_us", "lat_p99_9_us", "lat_p99_99_us", "lat_max_us"})


def is_higher_better(metric: str) -> bool:
    """True when a higher value of ``metric`` is better.

    ``metric`` is canonical (``write.bw_mbps``) or bare (``bw_mbps``); the bare name is looked up
    in ``workloads.HIGHER_IS_BETTER`` (iops, bw_mbps, and whatever methodology metrics it lists);
    everything else (latencies) is lower-is-better. A metric without a direction
    (``has_direction`` False) is False here; the gate never judges one by this.
    """
    if not has_direction(metric):
        return False
    return metric in HIGHER_IS_BETTER or metric.rpartition(".")[2] in HIGHER_IS_BETTER


def has_direction(metric: str) -> bool:
    """False for a canonical metric with no better direction (``workloads.NO_DIRECTION``: a
    burst / continuous or zero / random ratio, a QD curve's ``saturation_qd`` or
    ``scaling_ratio``, a fact of the drive such as its power states), True for every other."""
    return metric not in NO_DIRECTION


def limit_direction(limits: ResolvedLimits, workload_id: str, metric: str) -> bool | None:
    """The direction a threshold profile gives a directionless metric: True (higher is better)
    for an absolute limit with a ``min`` only, False for a ``max`` only, None for none or both."""
    for lim in limits.for_workload(workload_id):
        if lim.metric == metric and (lim.min is None) != (lim.max is None):
            return lim.min is not None
    return None


def is_tail(metric: str) -> bool:
    """True for a latency tail (``read.lat_p99_99_us``, ``write.lat_max_us``: ``TAIL_METRICS``,
    canonical or bare name)."""
    return metric.rpartition(".")[2] in TAIL_METRICS


def regression_limit(limits: ResolvedLimits, workload_id: str, metric: str) -> tuple[float, str]:
    """Allowed worsening for one metric, percent, and where it comes from.

    The value is ``limits.regression_limit_pct(workload_id, metric)`` (most specific matching
    profile's ``per_metric`` entry, then its ``max_drop_pct``), else
    ``DEFAULT_REGRESSION_LIMIT_PCT`` with source ``default``.
    """
    value = limits.regression_limit_pct(workload_id, metric)
    if value is None:
        return DEFAULT_REGRESSION_LIMIT_PCT, "default"
    for profile in limits.profiles:
        if profile.regression_for(workload_id, metric) is not None:
            return value, f'profile "{profile.name}" ({profile.location})'
    return value, "threshold files"


def primary_metrics(workload_id: str) -> frozenset[str]:
    """The figures of ``workload_id`` that are always gated: for a plain workload its
    primary-direction ``iops`` and ``bw_mbps`` (``write.bw_mbps``; ``total.*`` for a mixed
    one); for a methodology workload its catalog's ``primary_figures`` where given (a sweep's,
    data state's or data test's few summary figures), else every metric it produces whose bare
    name is in ``HIGHER_IS_BETTER``; an fio pattern's id (``rand_read_4k_qd4``,
    ``catalog.parametric``) as a plain workload; empty for an id neither names."""
    workload = find_workload(workload_id)
    if workload is None:
        return frozenset()
    if workload.primary_figures:
        return frozenset(workload.primary_figures)
    if workload.methodology_metrics:
        return frozenset(m for m in workload.methodology_metrics if is_higher_better(m))
    names = {f"{workload.primary_direction}.{m}" for m in ("iops", "bw_mbps")}
    return frozenset(names & set(workload.metric_names()))


def gated_metrics(limits: ResolvedLimits, workload_id: str) -> frozenset[str]:
    """Canonical metrics of ``workload_id`` the gate judges: its ``primary_metrics``, those with
    an absolute limit of severity ``fail`` that are no latency tail (``is_tail``) and have a
    direction (``has_direction``; a ``warn`` limit is indicative: it never fails a test, so it
    does not make its figure gated either), plus those named in a matching profile's
    ``regression.per_metric`` (tails and directionless metrics included; a bare ``workload``
    key gates every metric of it but the tails and the directionless: returned as ``'*'``)."""
    names = set(primary_metrics(workload_id))
    names |= {lim.metric for lim in limits.for_workload(workload_id)
              if not is_tail(lim.metric) and has_direction(lim.metric)
              and lim.severity != WARN}
    for profile in limits.profiles:
        for key in profile.regression_per_metric:
            wid, _, metric = key.partition(".")
            if wid == workload_id:
                names.add(metric or "*")
    return frozenset(names)
