"""Compare one run's metrics with a baseline run's: the firmware regression gate.

Plain math on plain data (no pytest, no I/O). For every *gated* metric of a workload the figure
of this run is compared with the baseline's; the change is judged direction-aware
(``workloads.HIGHER_IS_BETTER``: a drop is a worsening for IOPS and bandwidth, a rise for
latencies) against the allowed worsening in percent from the threshold files'
``regression`` blocks (``ResolvedLimits.regression_limit_pct``), or ``DEFAULT_REGRESSION_LIMIT_PCT``
when no matching profile gives one.

Which metrics are gated: every workload's primary figures (``primary_metrics``: the
primary-direction ``iops`` and ``bw_mbps`` of a plain workload, the higher-is-better metrics of a
methodology workload), every metric the drive's threshold profiles give an absolute limit for,
plus every metric named in a ``regression.per_metric`` key (``workload.metric``, or ``workload``
for all of its metrics). Other shared metrics (latency tails without a limit) are compared by
``ssdqual compare`` but never fail a test: a 3-second run's p99.99 or maximum latency is one or
two I/Os, and gating it would fail firmware builds on noise.

A gated metric the baseline has no figure for (``no baseline value``: the baseline did not run
the workload) or this run did not measure (``not measured``) fails like a regression: the gate
never passes what it could not compare.

Noise (``--repeat N``): each workload runs N times; the gate judges the median and the run-to-run
spread ``(max - min) / median`` in percent. A metric whose spread (this run's or the baseline's,
whichever is larger) exceeds its regression limit is ``TOO NOISY`` to gate: reported, neither passed
nor failed.

Line format (one comparison)::

    write.bw_mbps 402 vs 470 on SVN417w (−14.5 %, limit −5 %)

figure of this run, the baseline's, the baseline's firmware, the signed change (U+2212 minus), and
the limit written in the worsening direction (``−`` for higher-is-better metrics, ``+`` for
latencies).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from .errors import SsdQualError
from .thresholds.verdict import format_number
from .workloads import CATALOG, HIGHER_IS_BETTER

if TYPE_CHECKING:
    from .thresholds.loader import ResolvedLimits

__all__ = [
    "DEFAULT_REGRESSION_LIMIT_PCT",
    "PREFIX",
    "BaselineError",
    "Comparison",
    "aggregate_repeats",
    "compare_workload",
    "gated_metrics",
    "is_higher_better",
    "primary_metrics",
    "regression_limit",
]

#: Allowed worsening vs the baseline, in percent, when no matching threshold profile has a
#: ``regression`` block (DESIGN.md's example ``regression: {max_drop_pct: 5}``).
DEFAULT_REGRESSION_LIMIT_PCT = 5.0

#: Every regression failure message starts with this (Allure category "regression" matches it).
PREFIX = "REGRESSION:"

MINUS = "\u2212"

REGRESSED = "regressed"
IMPROVED = "improved"
WITHIN = "within limit"
NOISY = "too noisy to gate"
NO_BASELINE = "no baseline value"
NOT_MEASURED = "not measured"
STATUSES: tuple[str, ...] = (REGRESSED, IMPROVED, WITHIN, NOISY, NO_BASELINE, NOT_MEASURED)
#: Statuses that fail the test: a worsening past the limit, or a gated metric that could not be
#: compared because one side has no figure.
FAILING: frozenset[str] = frozenset({REGRESSED, NO_BASELINE, NOT_MEASURED})


class BaselineError(SsdQualError):
    """The baseline cannot be used for this drive (other model/controller/NAND or profile, no
    passing run of the firmware asked for, unreadable run folder). Raised inside a test, the test
    is broken with this reason; at session start it is a usage error."""


def is_higher_better(metric: str) -> bool:
    """True when a higher value of ``metric`` is better.

    ``metric`` is canonical (``write.bw_mbps``) or bare (``bw_mbps``); the bare name is looked up
    in ``workloads.HIGHER_IS_BETTER`` (iops, bw_mbps, and whatever methodology metrics it lists);
    everything else (latencies) is lower-is-better.
    """
    return metric in HIGHER_IS_BETTER or metric.rpartition(".")[2] in HIGHER_IS_BETTER


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
        value: this run's figure (median of the repetitions), in the metric's unit; None when
            not measured.
        baseline: the baseline run's figure; None when the baseline has none.
        baseline_firmware: firmware of the baseline drive (``SVN417w``).
        limit_pct: allowed worsening in percent (positive number).
        limit_source: where ``limit_pct`` comes from: ``profile "P" (file:line)`` or ``default``.
        higher_is_better: direction of the metric.
        spread_pct: run-to-run spread in percent of the median, the larger of this run's and the
            baseline's; None with a single repetition on both sides.
        status: one of ``STATUSES``.
        baseline_run: the baseline run id, for the message of a missing baseline figure.
    """

    workload: str
    metric: str
    value: float | None
    baseline: float | None
    baseline_firmware: str
    limit_pct: float
    limit_source: str
    higher_is_better: bool
    spread_pct: float | None
    status: str
    baseline_run: str = ""

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
        """Regressed, or not comparable (no figure on one side): both fail the gate."""
        return self.status in FAILING

    def limit_text(self) -> str:
        """``'−5 %'`` for a higher-is-better metric, ``'+5 %'`` for a latency."""
        sign = MINUS if self.higher_is_better else "+"
        return f"{sign}{format_number(self.limit_pct)} %"

    def line(self) -> str:
        """``write.bw_mbps 402 vs 470 on SVN417w (−14.5 %, limit −5 %)``, plus the reason for a
        metric that could not be judged."""
        if self.value is None:
            return f"{self.metric} not measured in this run (baseline {self._fig(self.baseline)})"
        if self.baseline is None:
            return (f"no baseline figure for {self.metric} in run {self.baseline_run or '?'} "
                    f"(the baseline did not measure it; this run {self._fig(self.value)})")
        change = self.change_pct
        change_text = signed_pct(change) if change is not None else "n/a"
        text = (
            f"{self.metric} {self._fig(self.value)} vs {self._fig(self.baseline)} on {self._fw()} "
            f"({change_text}, limit {self.limit_text()})"
        )
        if self.status == NOISY and self.spread_pct is not None:
            text += (
                f": {NOISY} (run-to-run spread {self.spread_pct:.1f} % > "
                f"{format_number(self.limit_pct)} %)"
            )
        elif self.spread_pct is not None:
            text += f" [spread {self.spread_pct:.1f} %]"
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
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def judge_change(
    *,
    value: float,
    baseline: float,
    limit_pct: float,
    higher_is_better: bool,
    spread_pct: float | None,
) -> str:
    """Status of one comparison: ``too noisy to gate`` when the spread exceeds the limit, else
    ``regressed`` when the worsening exceeds the limit, ``improved`` for any gain, else
    ``within limit``. A worsening exactly at the limit passes (like an inclusive ``min``)."""
    if spread_pct is not None and spread_pct > limit_pct:
        return NOISY
    if baseline == 0:
        if value == 0:
            return WITHIN
        return IMPROVED if (value > 0) == higher_is_better else REGRESSED
    change = (value - baseline) / abs(baseline) * 100
    worsening = -change if higher_is_better else change
    if worsening > limit_pct:
        return REGRESSED
    if worsening < 0:
        return IMPROVED
    return WITHIN


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
    one), for a methodology workload every metric it produces whose bare name is in
    ``HIGHER_IS_BETTER``; empty for a workload unknown to the catalog."""
    workload = CATALOG.get(workload_id)
    if workload is None:
        return frozenset()
    if workload.methodology_metrics:
        return frozenset(m for m in workload.methodology_metrics if is_higher_better(m))
    names = {f"{workload.primary_direction}.{m}" for m in ("iops", "bw_mbps")}
    return frozenset(names & set(workload.metric_names()))


def gated_metrics(limits: ResolvedLimits, workload_id: str) -> frozenset[str]:
    """Canonical metrics of ``workload_id`` the gate judges: its ``primary_metrics``, those with
    an absolute limit, plus those named in a matching profile's ``regression.per_metric`` (a bare
    ``workload`` key gates every metric of it: returned as ``'*'``)."""
    names = set(primary_metrics(workload_id))
    names |= {lim.metric for lim in limits.for_workload(workload_id)}
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
        ``(max - min) / |median| * 100``; ``spread_pct`` is empty for a single repetition.
        A metric missing from some repetition is left out of both (never half-measured).
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


def compare_workload(
    workload_id: str,
    metrics: Mapping[str, float],
    baseline_metrics: Mapping[str, float],
    *,
    baseline_firmware: str,
    limits: ResolvedLimits,
    spread_pct: Mapping[str, float] | None = None,
    baseline_spread_pct: Mapping[str, float] | None = None,
    gated: Collection[str] | None = None,
    baseline_run: str = "",
) -> list[Comparison]:
    """Compare one workload's figures with the baseline's.

    Args:
        metrics: this run's figures (medians) by canonical metric.
        baseline_metrics: the baseline's figures for the same workload.
        baseline_firmware: firmware of the baseline drive, for the message.
        limits: this drive's resolved limits (regression percentages and which metrics are gated).
        spread_pct, baseline_spread_pct: run-to-run spreads (``aggregate_repeats``).
        gated: metrics to judge; default ``gated_metrics(limits, workload_id)`` (``'*'`` = all).
        baseline_run: the baseline run id, named in the line of a missing baseline figure.

    Returns:
        one ``Comparison`` per gated metric measured on either side, sorted by metric; one
        measured on one side only is ``no baseline value`` / ``not measured``, and fails.
    """
    chosen = gated_metrics(limits, workload_id) if gated is None else frozenset(gated)
    names: Iterable[str] = set(metrics) | set(baseline_metrics)
    if "*" not in chosen:
        names = [n for n in names if n in chosen]
    spreads = spread_pct or {}
    base_spreads = baseline_spread_pct or {}
    out: list[Comparison] = []
    for name in sorted(names):
        limit_pct, source = regression_limit(limits, workload_id, name)
        higher = is_higher_better(name)
        value = metrics.get(name)
        base = baseline_metrics.get(name)
        known = [s for s in (spreads.get(name), base_spreads.get(name)) if s is not None]
        spread = max(known) if known else None
        if value is None:
            status = NOT_MEASURED
        elif base is None:
            status = NO_BASELINE
        else:
            status = judge_change(value=value, baseline=base, limit_pct=limit_pct,
                                  higher_is_better=higher, spread_pct=spread)
        out.append(Comparison(workload_id, name, value, base, baseline_firmware, limit_pct,
                              source, higher, spread, status, baseline_run))
    return out


def failure_message(drive: str, workload_id: str, comparisons: Sequence[Comparison],
                    baseline_run: str) -> str:
    """The test's failure text for regressed (or not comparable) metrics, starting with
    ``PREFIX``::

        REGRESSION: /dev/sdb seq_write_128k_qd32: 1 metric(s) regressed vs baseline run RUN
          write.bw_mbps 402 vs 470 on SVN417w (−14.5 %, limit −5 %)
          no baseline figure for write.iops in run RUN (the baseline did not measure it; ...)
    """
    bad = [c for c in comparisons if c.failed]
    return (
        f"{PREFIX} {drive} {workload_id}: {len(bad)} metric(s) regressed vs baseline run "
        f"{baseline_run}\n" + "\n".join("  " + c.line() for c in bad)
    )
