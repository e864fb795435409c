"""Compare one run's metrics with a baseline run's: the firmware regression gate.

Plain math on plain data (no pytest, no I/O). For every *gated* metric of a workload
(``gated_metrics``: primary figures, limited metrics and ``regression.per_metric`` keys, but
latency tails only where named on their own) the figure of this run is compared with the
baseline's; the change is judged direction-aware (``gated_metrics.is_higher_better``) against
the allowed worsening in percent from the threshold files' ``regression`` blocks
(``gated_metrics.regression_limit``). Each result is a ``comparison.Comparison``. A 3-second
run's p99.99 or maximum latency is one or two I/Os: gating it would fail identical builds on
noise. Ungated metrics are still compared by ``ssdqual compare``.

Metrics without a direction (``workloads.NO_DIRECTION``: burst / continuous and zero / random
ratios, the QD curves' saturation QD and scaling ratio, facts of the drive) are never gated
by default, by an absolute limit or by a workload-wide ``per_metric`` key. A ``per_metric`` key
naming one gates it only when a matching profile also gives it a one-sided absolute limit,
which sets the direction (``min``: higher is better, ``max``: lower); named without one, the
comparison raises ``BaselineError`` saying so.

A gated metric the baseline has no figure for (``no baseline value``: the baseline did not run
the workload) or this run did not measure (``not measured``; also a NaN or infinite figure in
any one repetition, named in the line) fails like a regression: the gate never passes what it
could not compare. A metric the baseline never reached (its record's ``unreached``: it never
recovered) and this run did is no regression (``improved``, "baseline never reached it").

Noise (``--repeat N``): each test (a fio workload, a whole methodology test) runs N times and
the baseline record keeps every repetition's figures. The change is judged first, on all
repetitions of both sides, by a confidence interval on new/old (``regression_stats.judge_samples``:
Welch's t on log values, RSD as the noise figure): ``regressed``, ``improved``, ``within limit``
or ``inconclusive``. An inconclusive metric fails the gate (the plugin first reruns the test up
to ``--repeat-max``); it never passes. A regression is confirmed the same way: the test is rerun
up to ``--repeat-max`` and fails when the comparison on every run still says regressed
(``comparison.RERUN_MAY_CHANGE``). When the runs are too few for the measured noise and the
limit (``regression_stats.power_reached``) the test is rerun up to ``--repeat-max`` whatever
the comparison says, and what those runs cannot settle is ``undecided`` (neither a pass nor a
regression: the run is incomplete), with the runs per side that would decide it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from pytest_ssdqual.errors import SsdQualError
from pytest_ssdqual.results.comparison import (
    BASELINE_NEVER_REACHED,
    NO_BASELINE,
    NOT_MEASURED,
    Comparison,
)
from pytest_ssdqual.results.gated_metrics import (
    gated_metrics,
    has_direction,
    is_higher_better,
    is_tail,
    limit_direction,
    regression_limit,
)
from pytest_ssdqual.results.regression_stats import IMPROVED, judge_samples
from pytest_ssdqual.results.repeats import aggregate_repeats

if TYPE_CHECKING:
    from pytest_ssdqual.thresholds.profile import ResolvedLimits

__all__ = [
    "BaselineError",
    "aggregate_repeats",
    "compare_workload",
    "nonfinite_repetitions",
    "repetition_samples",
]


class BaselineError(SsdQualError):
    """The baseline cannot be used for this drive (other model/controller/NAND or profile, no
    passing run of the firmware asked for, unreadable run folder). Raised inside a test, the test
    is broken with this reason; at session start it is a usage error."""


def nonfinite_repetitions(samples: Mapping[str, Sequence[float]], side: str = "this run"
                          ) -> dict[str, str]:
    """``{metric: "repetition 2 of 3 of this run gave nan"}`` for every metric with a NaN or
    infinite figure in some repetition (the first such repetition, 1-based), from
    ``repetition_samples``' shape; ``side`` names whose runs they are."""
    out: dict[str, str] = {}
    for name, values in samples.items():
        bad = [(i, v) for i, v in enumerate(values, start=1) if not math.isfinite(v)]
        if bad:
            i, v = bad[0]
            out[name] = f"repetition {i} of {len(values)} of {side} gave {v}"
    return out


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
    baseline_unreached: Mapping[str, str] | None = None,
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
        baseline_unreached: metric -> why the baseline never got there (its record's
            ``unreached``: ``time_to_recover_s`` when it never recovered).

    Returns:
        one ``Comparison`` per gated metric measured on either side, sorted by metric; one
        measured on one side only is ``no baseline value`` / ``not measured``, and fails --
        a NaN or infinite figure, or one in any repetition of that side, counts as not
        measured and the line names the repetition -- except a metric the baseline never
        reached (``baseline_unreached``) and this run did: ``improved``, "baseline never
        reached it". The others are judged by ``regression_stats.judge_samples`` on every
        repetition of both sides. A directionless metric (``has_direction``) is judged in the
        direction of its one-sided absolute limit (``limit_direction``).

    Raises:
        BaselineError: a directionless metric is named to be gated but no matching profile
            gives it a one-sided absolute limit (no direction to judge it in).
    """
    chosen = gated_metrics(limits, workload_id) if gated is None else frozenset(gated)
    names: Iterable[str] = set(metrics) | set(baseline_metrics)
    names = [n for n in names if n in chosen
             or ("*" in chosen and not is_tail(n) and has_direction(n))]
    directions = {n: _direction(limits, workload_id, n) for n in names}
    samples = {k: [float(v) for v in vs] for k, vs in (samples or {}).items() if vs}
    baseline_samples = {k: [float(v) for v in vs]
                        for k, vs in (baseline_samples or {}).items() if vs}
    bad_new = nonfinite_repetitions(samples)
    bad_old = nonfinite_repetitions(baseline_samples, "the baseline")
    never = baseline_unreached or {}
    out: list[Comparison] = []
    for name in sorted(names):
        limit_pct, source = regression_limit(limits, workload_id, name)
        higher = directions[name]
        value, base = _figure(metrics.get(name)), _figure(baseline_metrics.get(name))
        head = (workload_id, name)
        if value is None or name in bad_new:
            out.append(Comparison(*head, None, base, baseline_firmware, limit_pct, source,
                                  higher, NOT_MEASURED, baseline_run,
                                  reason=bad_new.get(name, "")))
            continue
        if base is None and name in never and name not in bad_old:
            out.append(Comparison(*head, value, None, baseline_firmware, limit_pct, source,
                                  higher, IMPROVED, baseline_run,
                                  reason=f"{BASELINE_NEVER_REACHED} ({never[name]})"))
            continue
        if base is None or name in bad_old:
            out.append(Comparison(*head, value, None, baseline_firmware, limit_pct, source,
                                  higher, NO_BASELINE, baseline_run,
                                  reason=bad_old.get(name, "")))
            continue
        j = judge_samples(samples.get(name) or [value], baseline_samples.get(name) or [base],
                          limit_pct=limit_pct, higher_is_better=higher)
        out.append(Comparison(*head, j.value, j.baseline, baseline_firmware, limit_pct, source,
                              higher, j.status, baseline_run, j.n, j.baseline_n, j.rsd_pct,
                              j.baseline_rsd_pct, j.ci_low_pct, j.ci_high_pct, j.method,
                              j.reason, j.noise_pct, j.underpowered, j.runs_needed))
    return out


def _direction(limits: ResolvedLimits, workload_id: str, metric: str) -> bool:
    """Whether ``metric`` is judged higher-is-better; for a directionless one, its profile's."""
    if has_direction(metric):
        return is_higher_better(metric)
    higher = limit_direction(limits, workload_id, metric)
    if higher is None:
        raise BaselineError(
            f"threshold files: regression.per_metric names {workload_id}.{metric}, which has no "
            "better direction (a better drive can raise or lower it: a burst/continuous or "
            "zero/random ratio, a saturation QD or scaling ratio, a fact of the drive); fix: "
            "give it a one-sided absolute limit in the same profile "
            f"(limits: {{{workload_id}: {{{metric}: {{min: ...}}}}}} if higher is better, max "
            "if lower), or remove the per_metric key")
    return higher


def _figure(value: float | None) -> float | None:
    """A stored figure, None when absent, NaN or infinite (not measured: never compared as a
    number)."""
    return None if value is None or not math.isfinite(value) else float(value)
