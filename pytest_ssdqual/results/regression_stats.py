"""Is a build's figure worse than the baseline's by more than the allowed limit? A confidence
interval on the ratio new/old, from the repetitions (``--repeat``) of both runs.

Plain math on plain data (no pytest, no I/O); ``regression.compare_workload`` calls
``judge_samples`` once per gated metric.

Method: Welch's t interval on the natural logarithms of the figures (B. L. Welch, "The
generalization of Student's problem when several different population variances are involved",
Biometrika 34, 1947; NIST/SEMATECH e-Handbook of Statistical Methods, section 7.3.1, "Do two
processes have the same mean?"). Run-to-run noise of throughput and latency is relative (a
percentage), so on log values the ratio new/old is a difference of means and its interval is
symmetric in log space: ``mean difference ± t(0.95, df) * se`` with the Welch-Satterthwaite
degrees of freedom -- the interval of ``scipy.stats.ttest_ind(..., equal_var=False)
.confidence_interval(0.90)``, computed directly (that call takes milliseconds; the gate's
simulation test makes thousands), with the t-quantile from ``scipy.special.stdtrit``.
Two-sided 90 %, i.e. each bound is a one-sided 95 % bound.
The noise figure shown is the RSD (relative standard deviation, ``stdev / mean * 100`` of the
repetitions, ``statistics.stdev``).

Decision, with ``w`` the estimated worsening in percent (a drop for higher-is-better metrics, a
rise for latencies), ``[lo, hi]`` its bounds and ``L`` the allowed worsening (``limit_pct``):

* ``regressed``: ``w > L`` and ``lo > 0`` -- worse than the baseline at 95 % confidence, and the
  estimate is past the limit;
* ``improved``: ``w <= L`` and ``hi < 0`` -- better at 95 % confidence;
* ``within limit``: ``w <= L`` and ``hi <= 3 L`` -- the estimate is within the limit and a
  worsening of three times the limit is excluded at 95 % confidence;
* ``inconclusive`` otherwise: the estimate is past the limit but the change could be none
  (``lo <= 0``), or it is within the limit but a worsening beyond three times the limit cannot
  be excluded (``hi > 3 L``). The gate reruns (``--repeat-max``) or fails: it never passes it.

Why not "pass only when ``hi <= L``": with 3 % RSD and 3 + 3 repetitions the upper bound lies
about 5 % above the estimate, so half of all identical builds would fail a 5 % limit. The rule
above puts the burden of proof on each side: a failure needs a significant worsening, a pass an
estimate within the limit with gross regressions (3 L) excluded. At that noise one decision
fails 1-2 % of identical builds and catches 98-99 % of 10 % drops against a 5 % limit (measured
over 11 seeds: 1.1-2.3 % and 98.1-99.3 %; with the gate's reruns up to ``--repeat-max``,
which confirm a regression as they decide an inconclusive change
(``comparison.rerun_may_change``), 0.2-0.8 % and 97.7-99.0 %; with 2 L instead of 3 L, 5 % of
identical builds were inconclusive: Welch's degrees of freedom are often near 2 with 3 + 3
runs); ``tests/unit/test_regression_stats.py`` simulates 1,000 of each.

Fewer than two values on a side -- no 95 %/5 % guarantee:

* one run on each side: no noise estimate at all -- ``w`` alone is compared with ``L`` (method
  ``single runs``, said in the gate line): ``within limit`` or ``improved`` when ``w <= L``,
  else ``inconclusive`` (the change could be noise: the gate reruns, then fails). With one
  rerun that fails 9-12 % of identical builds and catches 87-91 % of 10 % drops;
* one run on one side, two or more on the other: Student's pooled t interval
  (``equal_var=True``): the single run is assumed as noisy as the repeated side (method
  ``pooled``, said in the gate line). A single-run baseline against ``--repeat 3``, with the
  reruns, failed 2.9-4.8 % of identical builds and caught 91.0-94.1 % of 10 % drops;
* identical repetitions on both sides (zero spread): the change is exact, ``lo = hi = w``.

A NaN or infinite value is no measurement: ``ValueError`` naming the side and the repetition
(``regression.compare_workload`` reports the metric as not measured before calling). A figure
<= 0 on either side (a run that did no I/O; ``time_to_recover_s`` of a drive that recovered at
once) has no logarithm: the worst repetition of each side is compared alone -- the lowest for a
higher-is-better metric, the highest otherwise (method ``worst runs``), never the median, which
would hide a run at 0 among runs at 1000.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "CONFIDENCE",
    "PASS_BOUND_FACTOR",
    "REGRESSED",
    "IMPROVED",
    "WITHIN",
    "INCONCLUSIVE",
    "ChangeJudgement",
    "judge_samples",
    "rsd_pct",
]

#: Two-sided confidence of the interval on new/old (each bound is one-sided 95 %).
CONFIDENCE = 0.90
#: Confidence of each one-sided bound (0.95).
ONE_SIDED = 1 - (1 - CONFIDENCE) / 2
#: A pass needs the upper bound of the worsening within this many times the limit.
PASS_BOUND_FACTOR = 3.0

REGRESSED = "regressed"
IMPROVED = "improved"
WITHIN = "within limit"
INCONCLUSIVE = "inconclusive"

WELCH = "welch"
POOLED = "pooled"
EXACT = "exact"
SINGLE = "single runs"
WORST = "worst runs"

#: Why a change past the limit between two single runs is inconclusive.
SINGLE_REASON = ("one run on each side gives no noise estimate: a change past the limit cannot "
                 "be told from run-to-run noise")


def rsd_pct(values: Sequence[float]) -> float | None:
    """Relative standard deviation of ``values`` in percent: ``stdev / |mean| * 100``
    (``statistics.stdev``, n - 1 in the denominator). None for fewer than two values; ``inf``
    when the mean is 0 and the values differ."""
    if len(values) < 2:
        return None
    sd = statistics.stdev(values)
    mean = statistics.fmean(values)
    if sd == 0:
        return 0.0
    return sd / abs(mean) * 100 if mean else math.inf


@dataclass(frozen=True)
class ChangeJudgement:
    """The gate's judgement of one metric, this build vs the baseline.

    Attributes:
        status: ``regressed``, ``improved``, ``within limit`` or ``inconclusive``.
        value, baseline: the compared figures in the metric's unit: geometric means of the
            repetitions (the figure itself for one run; the worst repetition of each side for
            method ``worst runs``).
        change_pct: signed change ``(value / baseline - 1) * 100``.
        ci_low_pct, ci_high_pct: the 90 % interval of the signed change in percent; None when
            there is no interval (``single runs``, ``worst runs``).
        n, baseline_n: repetitions on each side.
        rsd_pct, baseline_rsd_pct: RSD of each side's repetitions in percent, None for one run.
        method: ``welch``, ``pooled``, ``exact``, ``single runs`` or ``worst runs``.
        reason: why the judgement is ``inconclusive`` (empty otherwise).
    """

    status: str
    value: float
    baseline: float
    change_pct: float
    ci_low_pct: float | None
    ci_high_pct: float | None
    n: int
    baseline_n: int
    rsd_pct: float | None
    baseline_rsd_pct: float | None
    method: str
    reason: str = ""


def _checked(values: Sequence[float], side: str) -> list[float]:
    """``values`` as floats; a non-finite one (NaN, inf: fio gave no figure) is no measurement.

    Raises:
        ValueError: naming the side and the repetition (1-based) of the first non-finite value.
    """
    out = [float(v) for v in values]
    for i, v in enumerate(out, start=1):
        if not math.isfinite(v):
            raise ValueError(f"judge_samples: repetition {i} of {len(out)} of {side} is {v}, "
                             "not a measured figure (compare_workload reports it as not "
                             "measured)")
    return out


def _worsening(change_pct: float, higher_is_better: bool) -> float:
    return -change_pct if higher_is_better else change_pct


def _point_status(worsening: float, limit_pct: float) -> str:
    if worsening > limit_pct:
        return REGRESSED
    return IMPROVED if worsening < 0 else WITHIN


def _half_width(var_new: float, n: int, var_old: float, m: int) -> tuple[float, str]:
    """Half-width of the ``CONFIDENCE`` interval of a difference of two means (log values):
    Welch's with the Welch-Satterthwaite degrees of freedom when both sides have >= 2 values,
    else Student's pooled one (the single value adds no variance, df = n + m - 2). The
    t-quantile is ``scipy.special.stdtrit`` (the inverse of Student's t distribution function,
    what ``scipy.stats.t.ppf`` calls)."""
    from scipy.special import stdtrit  # on first use: scipy takes a second to import

    if n > 1 and m > 1:
        a, b = var_new / n, var_old / m
        se = math.sqrt(a + b)
        df = (a + b) ** 2 / (a * a / (n - 1) + b * b / (m - 1))
        method = WELCH
    else:
        pooled = ((n - 1) * var_new + (m - 1) * var_old) / (n + m - 2)
        se = math.sqrt(pooled * (1 / n + 1 / m))
        df = n + m - 2
        method = POOLED
    return float(stdtrit(df, ONE_SIDED)) * se, method


def judge_samples(
    values: Sequence[float],
    baseline: Sequence[float],
    *,
    limit_pct: float,
    higher_is_better: bool,
) -> ChangeJudgement:
    """Judge this build's repetitions of one metric against the baseline's (module docstring).

    Args:
        values: this build's figure in each repetition (>= 1 finite value), in the metric's
            unit.
        baseline: the baseline's figure in each of its repetitions (>= 1 finite value).
        limit_pct: allowed worsening in percent (>= 0).
        higher_is_better: direction of the metric (IOPS, MB/s: True; latencies: False).

    Returns:
        a ``ChangeJudgement``.

    Raises:
        ValueError: no value on one side, or a non-finite one (NaN, inf), naming the side and
            the repetition: it is no measurement (``compare_workload`` checks before calling
            and reports such a figure as not measured).
    """
    if not values or not baseline:
        raise ValueError("judge_samples needs at least one value on each side")
    new, old = _checked(values, "this build"), _checked(baseline, "the baseline")
    n, m = len(new), len(old)
    rsd_new, rsd_old = rsd_pct(new), rsd_pct(old)
    if min(new + old) <= 0:
        pick = min if higher_is_better else max
        a, b = pick(new), pick(old)
        if b == 0:
            change = 0.0 if a == 0 else math.copysign(math.inf, a)
        else:
            change = (a - b) / abs(b) * 100
        status = _point_status(_worsening(change, higher_is_better), limit_pct)
        if n == 1 and m == 1 and status == REGRESSED:  # one run a side: no noise estimate
            return ChangeJudgement(INCONCLUSIVE, a, b, change, None, None, 1, 1, None, None,
                                   WORST, SINGLE_REASON)
        return ChangeJudgement(status, a, b, change, None, None, n, m, rsd_new, rsd_old, WORST)
    log_new, log_old = [math.log(v) for v in new], [math.log(v) for v in old]
    diff = statistics.fmean(log_new) - statistics.fmean(log_old)
    value, base = math.exp(statistics.fmean(log_new)), math.exp(statistics.fmean(log_old))
    change = math.expm1(diff) * 100
    worsening = _worsening(change, higher_is_better)
    if n == 1 and m == 1:
        if worsening > limit_pct:  # no noise estimate: a change past the limit may be noise
            return ChangeJudgement(INCONCLUSIVE, value, base, change, None, None, 1, 1, None,
                                   None, SINGLE, SINGLE_REASON)
        return ChangeJudgement(_point_status(worsening, limit_pct), value, base, change,
                               None, None, 1, 1, None, None, SINGLE)
    var_new = statistics.variance(log_new) if n > 1 else 0.0
    var_old = statistics.variance(log_old) if m > 1 else 0.0
    if var_new == 0 and var_old == 0:
        low = high = diff
        method = EXACT
    else:
        half, method = _half_width(var_new, n, var_old, m)
        low, high = diff - half, diff + half
    ci_low, ci_high = math.expm1(low) * 100, math.expm1(high) * 100
    worst_lo, worst_hi = sorted((_worsening(ci_low, higher_is_better),
                                 _worsening(ci_high, higher_is_better)))
    reason = ""
    if worsening > limit_pct:
        if worst_lo > 0:
            status = REGRESSED
        else:
            status = INCONCLUSIVE
            reason = (f"the estimate is past the limit, but at {ONE_SIDED * 100:.0f} % "
                      "confidence the change could be none")
    elif worst_hi < 0:
        status = IMPROVED
    elif worst_hi <= PASS_BOUND_FACTOR * limit_pct:
        status = WITHIN
    else:
        status = INCONCLUSIVE
        reason = (f"the estimate is within the limit, but a worsening of up to "
                  f"{worst_hi:.1f} % (more than {PASS_BOUND_FACTOR:g}x the limit) cannot be "
                  f"excluded at {ONE_SIDED * 100:.0f} % confidence")
    return ChangeJudgement(status, value, base, change, ci_low, ci_high, n, m, rsd_new, rsd_old,
                           method, reason)
