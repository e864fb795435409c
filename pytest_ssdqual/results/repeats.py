"""One figure per metric from N runs of a test (``--repeat N``): the rule of each metric kind.

Each metric's figure over its runs follows the first rule of ``AGGREGATION_RULES`` whose pattern
matches the metric's bare name (after the last dot: ``write.lat_max_us`` -> ``lat_max_us``):

=================  ==========================================  ==================================
rule               metrics (bare name)                         figure over the runs
=================  ==========================================  ==================================
``max``            a maximum: ``lat_max_us``, ``max_*``,        the largest run's
                   ``power_peak_w``
``max``            the drive's thermal counts:                  the largest run's (one run
                   ``above_wctemp_s``, ``throttle_events``,     that throttled is never
                   ``throttled_s``                              outvoted by cool ones)
``min``            a minimum: ``lat_min_us``, ``min_*``         the smallest run's
``worst``          a latency percentile: ``lat_p99_us``,         the worst run's (the highest:
                   ``lat_p99_9_us``, ``fresh_lat_p99_us`` ...    lower is better)
``sum``            a counter's increase during a run:           the sum (the increase during
                   ``media_errors_delta``, ``*_delta``           all the runs)
``median``         everything else: IOPS, bandwidth, means,    the median run's; for an even N
                   ratios, times, bytes and counts a run        the worse of the two middle runs
                   measured (``slc_cache_bytes``, ``rounds``)   (``gated_metrics``' direction;
                                                                the higher without one)
=================  ==========================================  ==================================

Why: a maximum is the maximum (runs of 1,000, 50,000 and 2,000 µs saw a 50,000 µs I/O: the
median, 2,000, hid it); a minimum likewise. A percentile of N runs is not the median of their
percentiles: the exact figure is read from the runs' summed latency histograms (fio ``json+``
``bins``), which ``qualify.measure.merged_tails`` puts in place of these figures for a fio
workload whose runs all have bins (``fio.tails.merged_run_figures``). Without bins (a
methodology test's figures, an older output) the worst run's percentile stands for it: a
percentile of the merged runs lies between the runs' lowest and highest, so the worst run's is
an upper bound that errs on the drive's side of caution. Throughput and means are noisy
around one level: the median run, never the mean of the middle two for an even N (a value no
run measured): of the two, the one that flatters the drive less. Bytes and counts a run
measured (its cache size, its rounds) are one measurement repeated, so they take the median
too; only a counter's increase over the run (``*_delta``, the health counters) adds up.

A metric matching no pattern takes ``median``, the safe default: every figure is a per-run
measurement of the same quantity, and the median run's value is one a run really gave. The
regression gate never judges on these figures alone: it takes every run's value
(``regression.repetition_samples``). A methodology test's implicit requirements (purge done,
steady state reached) are the worst run's whatever their rule (``qualify.measure``).

Plain Python (no pytest, no I/O).
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_ssdqual.fio.result import WorkloadResult
from pytest_ssdqual.fio.tails import merged_run_figures
from pytest_ssdqual.results.gated_metrics import has_direction, is_higher_better

__all__ = [
    "AGGREGATION_RULES",
    "AggregationRule",
    "MAX",
    "MEDIAN",
    "MIN",
    "SUM",
    "WORST",
    "aggregate_repeats",
    "aggregation_labels",
    "aggregation_rule",
    "combine",
    "describe_aggregation",
]

MAX, MIN, WORST, SUM, MEDIAN = "max", "min", "worst", "sum", "median"


@dataclass(frozen=True)
class AggregationRule:
    """One row of ``AGGREGATION_RULES``.

    Attributes:
        pattern: regular expression searched in the metric's bare name.
        rule: ``MAX``, ``MIN``, ``WORST``, ``SUM`` or ``MEDIAN``.
        kind: what the metrics it matches are, for the module's table.
    """

    pattern: str
    rule: str
    kind: str


#: The rules, first match wins (module docstring); a metric matching none takes ``MEDIAN``.
AGGREGATION_RULES: tuple[AggregationRule, ...] = (
    AggregationRule(r"(^|_)lat_p\d+(_\d+)?_us$", WORST, "latency percentile"),
    AggregationRule(r"(^|_)(max|peak)(_|$)", MAX, "maximum"),
    AggregationRule(r"^(above_wctemp_s|throttle_events|throttled_s)$", MAX,
                    "thermal count (one run that throttled is not outvoted)"),
    AggregationRule(r"(^|_)min(_|$)", MIN, "minimum"),
    AggregationRule(r"_delta$", SUM, "a counter's increase during the run"),
    AggregationRule(r"(^|_)(iops|bw_mbps|lat_mean_us)$", MEDIAN, "throughput or mean"),
)
_COMPILED = tuple((re.compile(r.pattern), r.rule) for r in AGGREGATION_RULES)


def aggregation_rule(metric: str) -> str:
    """The rule of ``metric`` (canonical ``write.lat_max_us`` or bare): the first matching
    ``AGGREGATION_RULES`` row's, else ``MEDIAN``."""
    bare = metric.rpartition(".")[2]
    for pattern, rule in _COMPILED:
        if pattern.search(bare):
            return rule
    return MEDIAN


def combine(metric: str, values: Sequence[float]) -> float:
    """One figure of ``metric`` from its runs' finite ``values`` by its rule
    (``aggregation_rule``); always a value one run gave, except ``SUM``.

    Raises:
        ValueError: no values.
    """
    if not values:
        raise ValueError(f"no runs to combine for {metric}")
    rule = aggregation_rule(metric)
    higher = is_higher_better(metric)
    if rule == MAX:
        return max(values)
    if rule == MIN:
        return min(values)
    if rule == SUM:
        return math.fsum(values)
    if rule == WORST:
        return min(values) if higher else max(values)
    ordered = sorted(values)
    if len(ordered) % 2:
        return ordered[len(ordered) // 2]
    low, high = ordered[len(ordered) // 2 - 1], ordered[len(ordered) // 2]
    if not has_direction(metric):
        return high
    return low if higher else high


def aggregation_labels(metrics: Sequence[str], runs: int,
                       repetitions: Sequence[object] = ()) -> dict[str, str]:
    """``{metric: how its figure came from the runs}`` for the record and the report, e.g.
    ``"max of 3 runs"``, ``"worst of 3 runs"``, ``"median of 4 runs (the worse middle
    run)"``; ``{}`` for one run. A fio workload's ``repetitions`` (outcomes whose ``result`` is
    a ``WorkloadResult``) with json+ histograms in every run: their latency percentiles and
    ``lat_tail_ios`` are ``"merged histograms of 3 runs"`` (``qualify.measure.merged_tails``)."""
    if runs < 2:
        return {}
    results = [getattr(r, "result", None) for r in repetitions]
    binned: set[str] = set()
    if results and all(isinstance(r, WorkloadResult) for r in results):
        binned = set(merged_run_figures(results)[0])  # type: ignore[arg-type]
    out: dict[str, str] = {}
    for name in metrics:
        if name in binned:
            out[name] = f"merged histograms of {runs} runs"
            continue
        rule = aggregation_rule(name)
        label = f"{rule} of {runs} runs"
        if rule == MEDIAN and runs % 2 == 0:
            label += (" (the worse middle run)" if has_direction(name)
                      else " (the upper middle run)")
        out[name] = label
    return out


def aggregate_repeats(
    samples: Sequence[Mapping[str, float]],
) -> tuple[dict[str, float], dict[str, float]]:
    """The figure and spread of N repetitions of one workload.

    Args:
        samples: one ``{metric: value}`` per repetition.

    Returns:
        ``(figures, spread_pct)``: per metric measured in every repetition, its figure by its
        rule (``combine``: the maximum of a maximum, the worst run's latency percentile, the
        median run's throughput...) and the spread ``(max - min) / |median| * 100``
        (``statistics.median``; shown in the store's index; the gate's noise figure is the
        RSD, ``regression_stats.rsd_pct``); ``spread_pct`` is empty for a single repetition.
        A metric missing from some repetition is left out of both (never half-measured); one
        that is NaN or infinite in any repetition has the figure NaN (not measured: a limit on
        it fails, and so does the gate, naming the repetition --
        ``regression.nonfinite_repetitions``) and no spread. The median of
        ``[nan, 1000, 1000]`` would be 1000: a repetition without a figure is never hidden by
        the others.

    Raises:
        ValueError: no repetitions.
    """
    if not samples:
        raise ValueError("no repetitions to aggregate")
    common = set(samples[0]).intersection(*samples[1:])
    figures: dict[str, float] = {}
    spread: dict[str, float] = {}
    for name in sorted(common, key=list(samples[0]).index):
        values = [float(s[name]) for s in samples]
        if not all(math.isfinite(v) for v in values):
            figures[name] = math.nan
            continue
        figures[name] = combine(name, values)
        if len(values) > 1:
            mid = statistics.median(values)
            width = max(values) - min(values)
            spread[name] = 0.0 if width == 0 else (width / abs(mid) * 100 if mid else math.inf)
    return figures, spread


_RULE_WORDS = {MAX: "the maximum", MIN: "the minimum", WORST: "the worst run",
               SUM: "the sum", MEDIAN: "the median run"}


def describe_aggregation(metrics: Sequence[str], runs: int) -> str | None:
    """One line saying how the judged figures came from ``runs`` runs, e.g. ``figures of 3
    runs: write.lat_max_us the maximum; write.lat_p99_us the worst run; the others the median
    run``; ``None`` for one run. ``metrics``: the figures it is about (the judged ones)."""
    if runs < 2:
        return None
    by_rule: dict[str, list[str]] = {}
    for name in metrics:
        by_rule.setdefault(aggregation_rule(name), []).append(name)
    parts = [f"{', '.join(names)} {_RULE_WORDS[rule]}"
             for rule, names in by_rule.items() if rule != MEDIAN]
    median = ("the median run" + (" (even N: the worse of the two middle runs)"
                                  if runs % 2 == 0 else ""))
    if MEDIAN in by_rule:
        parts.append(f"{'the others' if parts else 'each'} {median}")
    return f"figures of {runs} runs: " + "; ".join(parts) if parts else None
