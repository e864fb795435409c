"""Compare one run's metrics with a baseline run's: the firmware regression gate.

Plain math on plain data (no pytest, no I/O). For every *gated* metric of a workload the figure
of this run is compared with the baseline's; the change is judged direction-aware
(``workloads.HIGHER_IS_BETTER``: a drop is a worsening for IOPS and bandwidth, a rise for
latencies) against the allowed worsening in percent from the threshold files'
``regression`` blocks (``ResolvedLimits.regression_limit_pct``), or ``DEFAULT_REGRESSION_LIMIT_PCT``
when no matching profile gives one.

Which metrics are gated: every workload's primary figures (``primary_metrics``: the
primary-direction ``iops`` and ``bw_mbps`` of a plain workload; a suite's few summary figures
``Workload.primary_figures`` where its catalog defines them -- sweeps, presets, data states, burst
and compressibility, whose ~40-90 per-point figures are each judged on a single run, so gating
them all would fail every identical build; else the higher-is-better metrics of a methodology
workload), every metric the drive's threshold profiles give an absolute limit for,
plus every metric named in a ``regression.per_metric`` key (``workload.metric``, or ``workload``
for all of its metrics) -- except the latency tails (``TAIL_METRICS``: p50, p99.9, p99.99 and
maximum), which are gated only where a matching profile names that very metric in
``regression.per_metric`` (``rand_read_4k_qd1.read.lat_p99_99_us: 50``): an absolute ceiling
(generic.yaml's p99.99 <= 1 s) or a workload-wide ``per_metric`` key does not gate them. A
3-second run's p99.99 or maximum latency is one or two I/Os: gating it would fail identical
builds on noise. Ungated metrics are still compared by ``ssdqual compare``.

Metrics without a direction (``workloads.NO_DIRECTION``: burst / continuous and zero / random
ratios) are never gated by default, by an absolute limit or by a workload-wide ``per_metric``
key. A ``per_metric`` key naming one gates it only when a matching profile also gives it a
one-sided absolute limit, which sets the direction (``min``: higher is better, ``max``: lower);
named without one, the comparison raises ``BaselineError`` saying so.

A gated metric the baseline has no figure for (``no baseline value``: the baseline did not run
the workload) or this run did not measure (``not measured``) fails like a regression: the gate
never passes what it could not compare.

Noise (``--repeat N``): each workload runs N times and the baseline record keeps every
repetition's figures. The change is judged first, on all repetitions of both sides, by a
confidence interval on new/old (``regression_stats.judge_samples``: Welch's t on log values, RSD
as the noise figure): ``regressed``, ``improved``, ``within limit`` or ``inconclusive``. An
inconclusive metric fails the gate (the plugin first reruns the workload up to
``--repeat-max``); it never passes.

Line format (one comparison)::

    write.bw_mbps 402 vs 470 on SVN417w (−14.5 %, limit −5 %) [single runs: no noise ...]
    write.bw_mbps 500 vs 1000 on A (−50.0 %, 90 % CI −52.5 … −47.4 %, limit −5 %)
        [3 vs 3 runs, RSD 3.0 % vs 0.0 %]

figure of this run, the baseline's (geometric means of the repetitions), the baseline's firmware,
the signed change (U+2212 minus) and its 90 % interval, the limit written in the worsening
direction (``−`` for higher-is-better metrics, ``+`` for latencies), and the repetitions and RSD
of each side.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.catalog.workloads import CATALOG, HIGHER_IS_BETTER, NO_DIRECTION
from pytest_ssdqual.errors import SsdQualError
from pytest_ssdqual.results.regression_stats import (
    CONFIDENCE,
    FIGURES,
    IMPROVED,
    INCONCLUSIVE,
    POOLED,
    REGRESSED,
    SINGLE,
    WITHIN,
    judge_samples,
)
from pytest_ssdqual.thresholds.verdict import format_number

if TYPE_CHECKING:
    from pytest_ssdqual.thresholds.profile import ResolvedLimits

__all__ = [
    "DEFAULT_REGRESSION_LIMIT_PCT",
    "PREFIX",
    "TAIL_METRICS",
    "BaselineError",
    "Comparison",
    "aggregate_repeats",
    "compare_workload",
    "gated_metrics",
    "has_direction",
    "is_higher_better",
    "is_tail",
    "primary_metrics",
    "regression_limit",
]

#: Allowed worsening vs the baseline, in percent, when no matching threshold profile has a
#: ``regression`` block (DESIGN.md's example ``regression: {max_drop_pct: 5}``).
DEFAULT_REGRESSION_LIMIT_PCT = 5.0

#: Every regression failure message starts with this (Allure category "regression" matches it).
PREFIX = "REGRESSION:"

MINUS = "\u2212"

NO_BASELINE = "no baseline value"
NOT_MEASURED = "not measured"
STATUSES: tuple[str, ...] = (REGRESSED, INCONCLUSIVE, IMPROVED, WITHIN, NO_BASELINE,
                             NOT_MEASURED)
#: Statuses that fail the test: a worsening past the limit, a change the repetitions cannot
#: decide, or a gated metric that could not be compared because one side has no figure.
FAILING: frozenset[str] = frozenset({REGRESSED, INCONCLUSIVE, NO_BASELINE, NOT_MEASURED})

#: Bare latency-tail metric names: gated only where a profile's ``regression.per_metric`` names
#: the metric itself (``workload.direction.metric``).
TAIL_METRICS: frozenset[str] = frozenset(
    {"lat_p50_us", "lat_p99_9_us", "lat_p99_99_us", "lat_max_us"})

#: What to do about an inconclusive comparison (the end of its line).
INCONCLUSIVE_FIX = ("rerun with more repetitions (--repeat-max, or --repeat on this build and "
                    "the baseline) or on a quieter bench")


class BaselineError(SsdQualError):
    """The baseline cannot be used for this drive (other model/controller/NAND or profile, no
    passing run of the firmware asked for, unreadable run folder). Raised inside a test, the test
    is broken with this reason; at session start it is a usage error."""


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
    burst / continuous or zero / random ratio), True for every other."""
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


def format_figure(value: float) -> str:
    """A figure in a regression line: whole numbers from 100 up (``402``), else 3 significant
    digits (``20.9``, ``0.512``)."""
    if math.isnan(value) or math.isinf(value):
        return str(value)
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def signed_pct(value: float) -> str:
    """``-14.46`` -> ``'−14.5 %'`` (U+2212), ``4`` -> ``'+4.0 %'``."""
    text = f"{abs(value):.1f}"
    sign = MINUS if value < 0 and text.strip("0.") else "+"
    return f"{sign}{text} %"


@dataclass(frozen=True)
class Comparison:
    """One metric of one workload, this run vs the baseline.

    Attributes:
        workload: workload id. metric: canonical metric (``write.bw_mbps``).
        value: this run's figure in the metric's unit: the geometric mean of its repetitions
            (the figure itself for one run); None when not measured.
        baseline: the baseline run's figure, likewise; None when the baseline has none.
        baseline_firmware: firmware of the baseline drive (``SVN417w``).
        limit_pct: allowed worsening in percent (positive number).
        limit_source: where ``limit_pct`` comes from: ``profile "P" (file:line)`` or ``default``.
        higher_is_better: direction of the metric.
        status: one of ``STATUSES``.
        baseline_run: the baseline run id, for the message of a missing baseline figure.
        n, baseline_n: repetitions on each side (0 when that side has no figure).
        rsd_pct, baseline_rsd_pct: RSD of each side's repetitions in percent, None for one run.
        ci_low_pct, ci_high_pct: the 90 % interval of the signed change in percent, None
            without one (single runs).
        method: how the change was judged (``regression_stats``: ``welch``, ``pooled``,
            ``exact``, ``single runs``, ``figures alone``); empty when not compared.
        reason: why the comparison is inconclusive.
    """

    workload: str
    metric: str
    value: float | None
    baseline: float | None
    baseline_firmware: str
    limit_pct: float
    limit_source: str
    higher_is_better: bool
    status: str
    baseline_run: str = ""
    n: int = 0
    baseline_n: int = 0
    rsd_pct: float | None = None
    baseline_rsd_pct: float | None = None
    ci_low_pct: float | None = None
    ci_high_pct: float | None = None
    method: str = ""
    reason: str = ""

    @property
    def change_pct(self) -> float | None:
        """Signed change vs the baseline in percent (``(value - baseline) / baseline * 100``)."""
        if self.value is None or self.baseline is None or self.baseline == 0:
            return None
        return (self.value - self.baseline) / abs(self.baseline) * 100

    @property
    def worsening_pct(self) -> float | None:
        """Change in the bad direction, percent: positive = worse, negative = better."""
        change = self.change_pct
        if change is None:
            return None
        return -change if self.higher_is_better else change

    @property
    def failed(self) -> bool:
        """Regressed, inconclusive, or not comparable (no figure on one side): all fail."""
        return self.status in FAILING

    def limit_text(self) -> str:
        """``'−5 %'`` for a higher-is-better metric, ``'+5 %'`` for a latency."""
        sign = MINUS if self.higher_is_better else "+"
        return f"{sign}{format_number(self.limit_pct)} %"

    def line(self) -> str:
        """``write.bw_mbps 402 vs 470 on SVN417w (−14.5 %, limit −5 %)`` plus the interval, the
        repetitions and RSD, the reason of an inconclusive comparison and what to do, or the
        reason a metric could not be judged."""
        if self.value is None:
            return f"{self.metric} not measured in this run (baseline {self._fig(self.baseline)})"
        if self.baseline is None:
            return (f"no baseline figure for {self.metric} in run {self.baseline_run or '?'} "
                    f"(the baseline did not measure it; this run {self._fig(self.value)})")
        change = self.change_pct
        change_text = signed_pct(change) if change is not None else "n/a"
        if self.ci_low_pct is not None and self.ci_high_pct is not None:
            change_text += (f", {CONFIDENCE * 100:.0f} % CI {_pct(self.ci_low_pct)} \u2026 "
                            f"{_pct(self.ci_high_pct)} %")
        text = (
            f"{self.metric} {self._fig(self.value)} vs {self._fig(self.baseline)} on {self._fw()} "
            f"({change_text}, limit {self.limit_text()})"
        )
        text += f" [{self.noise_text()}]" if self.noise_text() else ""
        if self.status == INCONCLUSIVE:
            text += f": INCONCLUSIVE: {self.reason}; {INCONCLUSIVE_FIX}"
        return text

    def noise_text(self) -> str:
        """``3 vs 3 runs, RSD 3.0 % vs 0.0 %``; for single runs on both sides ``single runs: no
        noise estimate``; for one single side it says its noise was assumed."""
        if self.method == SINGLE:
            return "single runs: no noise estimate, judged on the figures alone"
        if not self.method:
            return ""
        text = (f"{self.n} vs {self.baseline_n} runs, RSD {_rsd(self.rsd_pct)} vs "
                f"{_rsd(self.baseline_rsd_pct)}")
        if self.method == POOLED:
            side = "the baseline's" if self.baseline_n == 1 else "this run's"
            text += f"; {side} single run assumed as noisy as the other side"
        elif self.method == FIGURES:
            text += "; a figure <= 0 has no logarithm: medians judged alone"
        return text

    def _fw(self) -> str:
        return self.baseline_firmware or "?"

    @staticmethod
    def _fig(value: float | None) -> str:
        return "-" if value is None else format_figure(value)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Comparison:
        """A stored comparison (keys of older versions, such as ``spread_pct``, are ignored)."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def _pct(value: float) -> str:
    text = f"{abs(value):.1f}"
    return (MINUS if value < 0 and text.strip("0.") else "+") + text


def _rsd(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} %"


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
    name is in ``HIGHER_IS_BETTER``; empty for a workload unknown to the catalog."""
    workload = CATALOG.get(workload_id)
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
    an absolute limit that are no latency tail (``is_tail``) and have a direction
    (``has_direction``), plus those named in a matching profile's ``regression.per_metric``
    (tails and directionless metrics included; a bare ``workload`` key gates every metric of it
    but the tails and the directionless: returned as ``'*'``)."""
    names = set(primary_metrics(workload_id))
    names |= {lim.metric for lim in limits.for_workload(workload_id)
              if not is_tail(lim.metric) and has_direction(lim.metric)}
    for profile in limits.profiles:
        for key in profile.regression_per_metric:
            wid, _, metric = key.partition(".")
            if wid == workload_id:
                names.add(metric or "*")
    return frozenset(names)


def aggregate_repeats(
    samples: Sequence[Mapping[str, float]],
) -> tuple[dict[str, float], dict[str, float]]:
    """Median and spread of N repetitions of one workload.

    Args:
        samples: one ``{metric: value}`` per repetition.

    Returns:
        ``(median, spread_pct)``: per metric measured in every repetition, the median
        (``statistics.median``: the mean of the middle two for even N) and the spread
        ``(max - min) / |median| * 100`` (shown in the store's index; the gate's noise figure
        is the RSD, ``regression_stats.rsd_pct``); ``spread_pct`` is empty for a single
        repetition. A metric missing from some repetition is left out of both (never
        half-measured).
    """
    if not samples:
        raise ValueError("no repetitions to aggregate")
    common = set(samples[0]).intersection(*samples[1:])
    median: dict[str, float] = {}
    spread: dict[str, float] = {}
    for name in sorted(common, key=list(samples[0]).index):
        values = [float(s[name]) for s in samples]
        mid = statistics.median(values)
        median[name] = mid
        if len(values) > 1:
            width = max(values) - min(values)
            spread[name] = 0.0 if width == 0 else (width / abs(mid) * 100 if mid else math.inf)
    return median, spread


def repetition_samples(repetitions: Sequence[Mapping[str, float]]) -> dict[str, list[float]]:
    """``{metric: [value of each repetition]}`` for the metrics measured in every repetition
    (``record.json``'s ``repetitions[].metrics``, or the outcomes of ``--repeat``)."""
    if not repetitions:
        return {}
    common = set(repetitions[0]).intersection(*repetitions[1:])
    return {name: [float(r[name]) for r in repetitions] for name in sorted(common)}


def compare_workload(
    workload_id: str,
    metrics: Mapping[str, float],
    baseline_metrics: Mapping[str, float],
    *,
    baseline_firmware: str,
    limits: ResolvedLimits,
    samples: Mapping[str, Sequence[float]] | None = None,
    baseline_samples: Mapping[str, Sequence[float]] | None = None,
    gated: Collection[str] | None = None,
    baseline_run: str = "",
) -> list[Comparison]:
    """Compare one workload's figures with the baseline's.

    Args:
        metrics: this run's figures (medians) by canonical metric.
        baseline_metrics: the baseline's figures for the same workload.
        baseline_firmware: firmware of the baseline drive, for the message.
        limits: this drive's resolved limits (regression percentages and which metrics are gated).
        samples, baseline_samples: every repetition's figure per metric (``repetition_samples``);
            a metric without samples is judged on its single figure from ``metrics``.
        gated: metrics to judge; default ``gated_metrics(limits, workload_id)`` (``'*'`` = all
            but the latency tails and directionless metrics not named on their own).
        baseline_run: the baseline run id, named in the line of a missing baseline figure.

    Returns:
        one ``Comparison`` per gated metric measured on either side, sorted by metric; one
        measured on one side only (a NaN figure counts as not measured) is ``no baseline
        value`` / ``not measured``, and fails; the others are judged by
        ``regression_stats.judge_samples`` (on the finite samples). A directionless metric
        (``has_direction``) is judged in the direction of its one-sided absolute limit
        (``limit_direction``).

    Raises:
        BaselineError: a directionless metric is named to be gated but no matching profile
            gives it a one-sided absolute limit (no direction to judge it in).
    """
    chosen = gated_metrics(limits, workload_id) if gated is None else frozenset(gated)
    names: Iterable[str] = set(metrics) | set(baseline_metrics)
    names = [n for n in names if n in chosen
             or ("*" in chosen and not is_tail(n) and has_direction(n))]
    directions = {n: _direction(limits, workload_id, n) for n in names}
    samples = samples or {}
    baseline_samples = baseline_samples or {}
    out: list[Comparison] = []
    for name in sorted(names):
        limit_pct, source = regression_limit(limits, workload_id, name)
        higher = directions[name]
        value, base = _figure(metrics.get(name)), _figure(baseline_metrics.get(name))
        head = (workload_id, name)
        if value is None or base is None:
            status = NOT_MEASURED if value is None else NO_BASELINE
            out.append(Comparison(*head, value, base, baseline_firmware, limit_pct, source,
                                  higher, status, baseline_run))
            continue
        j = judge_samples(_finite(samples.get(name)) or [value],
                          _finite(baseline_samples.get(name)) or [base],
                          limit_pct=limit_pct, higher_is_better=higher)
        out.append(Comparison(*head, j.value, j.baseline, baseline_firmware, limit_pct, source,
                              higher, j.status, baseline_run, j.n, j.baseline_n, j.rsd_pct,
                              j.baseline_rsd_pct, j.ci_low_pct, j.ci_high_pct, j.method,
                              j.reason))
    return out


def _direction(limits: ResolvedLimits, workload_id: str, metric: str) -> bool:
    """Whether ``metric`` is judged higher-is-better; for a directionless one, its profile's."""
    if has_direction(metric):
        return is_higher_better(metric)
    higher = limit_direction(limits, workload_id, metric)
    if higher is None:
        raise BaselineError(
            f"threshold files: regression.per_metric names {workload_id}.{metric}, which has no "
            "better direction (a burst/continuous or zero/random ratio: a better drive can "
            "raise or lower it); fix: give it a one-sided absolute limit in the same profile "
            f"(limits: {{{workload_id}: {{{metric}: {{min: ...}}}}}} if higher is better, max "
            "if lower), or remove the per_metric key")
    return higher


def _figure(value: float | None) -> float | None:
    """A stored figure, None when absent or NaN (not measured: never compared as a number)."""
    return None if value is None or math.isnan(value) else float(value)


def _finite(values: Sequence[float] | None) -> list[float]:
    return [float(v) for v in values or () if math.isfinite(v)]


def failure_message(drive: str, workload_id: str, comparisons: Sequence[Comparison],
                    baseline_run: str) -> str:
    """The test's failure text for regressed, inconclusive or not comparable metrics, starting
    with ``PREFIX``::

        REGRESSION: /dev/sdb seq_write_128k_qd32: 1 metric(s) regressed vs baseline run RUN
          write.bw_mbps 402 vs 470 on SVN417w (−14.5 %, limit −5 %) [single runs: ...]
          no baseline figure for write.iops in run RUN (the baseline did not measure it; ...)

    With inconclusive metrics the first line reads ``N metric(s) regressed, M INCONCLUSIVE vs
    baseline run RUN`` and their lines say why and what to do.
    """
    bad = [c for c in comparisons if c.failed]
    unsure = sum(1 for c in bad if c.status == INCONCLUSIVE)
    count = f"{len(bad) - unsure} metric(s) regressed"
    if unsure:
        count += f", {unsure} INCONCLUSIVE"
    return (
        f"{PREFIX} {drive} {workload_id}: {count} vs baseline run {baseline_run}\n"
        + "\n".join("  " + c.line() for c in bad)
    )
