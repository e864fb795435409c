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
  be excluded (``hi > 3 L``). The gate reruns (``--repeat-max``) or fails: it never passes it;
* ``undecided`` instead of all of these when the runs are too few for the noise (below): the
  test is neither passed nor failed.

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
  else ``inconclusive`` (the change could be noise: the gate reruns, then judges 2 vs 1 runs).
  With one rerun 2.1 % of identical builds failed and 9.9 % were undecided, 10.5 % of 10 %
  drops passed (one seed; before the undecided rule 9-12 % failed, 87-91 % were caught);
* one run on one side, two or more on the other: Student's pooled t interval
  (``equal_var=True``): the single run is assumed as noisy as the repeated side (method
  ``pooled``, said in the gate line). A single-run baseline against ``--repeat 3``, with the
  reruns, failed 2.7 % of identical builds (11 % undecided) and passed 4.6 % of 10 % drops (one
  seed; before the undecided rule 2.9-4.8 % failed, 91.0-94.1 % were caught);
* identical repetitions on both sides (zero spread): the change is exact, ``lo = hi = w``.

Too few runs for the noise -- ``undecided``. The gate compares its estimate with the limit
``L``: to fail no more than ``ALPHA`` of unchanged builds and miss no more than ``BETA`` of
worsenings by ``CATCH_FACTOR`` times the limit (2 L: the 10 % drops against a 5 % limit above),
the estimate must land on the right side of ``L`` in both cases, i.e. its standard error must
satisfy ``t(1-ALPHA) se <= c`` and ``t(1-BETA) se <= d - c``, with ``c`` and ``d`` the log
ratios of a worsening by ``L`` and by 2 L. With ``n`` runs per side of noise ``sigma`` (``se =
sigma sqrt(2 / n)``) this is the sample-size formula of NIST/SEMATECH e-Handbook of
Statistical Methods, section 7.2.2.2, "Sample sizes required", ``n >= (z(1-a) + z(1-b))^2
sigma^2 / delta^2``, doubled for a difference of two means, with ``delta = d`` split at the
limit; with t-quantiles instead of z ones, iterated on the degrees of freedom as that section
says to. ``sigma`` is the pooled standard deviation of the log values of both sides (``n + m -
2`` degrees of freedom; about the RSD), shown as the noise: a plug-in estimate from the runs at
hand, so the 5 %/5 % rates are aimed at, not guaranteed (measured below). The check uses the
pooled standard error while the decision uses Welch's interval: with very unequal noise on the
two sides the check can pass where the interval is still too wide (then ``inconclusive``).

When ``n`` (this build) and ``m`` (the baseline) runs do not reach that (``ChangeJudgement
.underpowered``), a verdict is given only where these runs alone settle it at 95 %:
``regressed`` as above (significantly worse, past the limit), ``improved`` as above, ``within
limit`` only when a worsening of 2 L is excluded (``hi <= 2 L``); anything else is
``undecided``, with the runs per side that would decide it (``runs_needed``, for ``--repeat`` on
both builds). A comparison on too few runs for its noise is rerun up to ``--repeat-max``
whatever it shows, so a lucky first look does not end the reruns; one with enough runs stops
once it is within the limit or improved. More runs of this build cannot make up for too few
baseline runs (the standard error stays at or above ``sigma / sqrt(m)``): such a test reruns to
``--repeat-max`` and stays undecided until the baseline is stored with more runs. Simulated at 3
+ 3 runs (reruns up to 6) against a 5 % limit, 1,000 identical builds and 1,000 builds 10 %
slower per seed (8 seeds after, 6 before): at 3 % RSD identical builds failed 0.0-0.9 % (before
0.3-0.8 %) and 0.6-1.4 % were undecided, 10 % drops were caught 96.7-98.1 % (before 97.8-99.0
%), undecided 0.6-1.5 % and passed 1.0-1.8 % (before 1.0-2.2 %); at 6 % RSD identical builds
failed 3.6-5.6 % (before 11.8-12.6 %) and 30-34 % were undecided, 10 % drops were caught 60-68 %
(before 84.5-87.3 %), undecided 28-35 %, and passed 3.5-6.3 % (before 12.7-15.5 %). The price:
at 3 % RSD identical builds take 3.9 runs on average (before 3.0), at 6 % RSD 5.7 (before 3.6).

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
    "UNDECIDED",
    "ALPHA",
    "BETA",
    "CATCH_FACTOR",
    "ChangeJudgement",
    "judge_samples",
    "power_reached",
    "runs_needed",
    "rsd_pct",
]

#: Two-sided confidence of the interval on new/old (each bound is one-sided 95 %).
CONFIDENCE = 0.90
#: Confidence of each one-sided bound (0.95).
ONE_SIDED = 1 - (1 - CONFIDENCE) / 2
#: A pass needs the upper bound of the worsening within this many times the limit.
PASS_BOUND_FACTOR = 3.0

#: Error rates the runs must reach (``power_reached``): unchanged builds failed, worsenings by
#: ``CATCH_FACTOR`` times the limit missed.
ALPHA = 0.05
BETA = 0.05
#: The worsening the gate must catch, in multiples of the limit (10 % against a 5 % limit).
CATCH_FACTOR = 2.0
#: ``runs_needed`` looks no further than this many runs per side.
MAX_RUNS = 1000

REGRESSED = "regressed"
IMPROVED = "improved"
WITHIN = "within limit"
INCONCLUSIVE = "inconclusive"
UNDECIDED = "undecided"

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
        reason: why the judgement is ``inconclusive`` or ``undecided`` (empty otherwise).
        noise_pct: the pooled noise of both sides (standard deviation of the log values, in
            percent; about the RSD), None without two runs on a side.
        underpowered: ``n`` + ``baseline_n`` runs are too few for this noise and limit
            (``power_reached``): a verdict is given only where the runs alone settle it.
        runs_needed: runs per side that would reach the error rates at ``noise_pct``
            (``runs_needed``); None without a noise estimate or when no number of runs can
            (a 0 % limit).
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
    noise_pct: float | None = None
    underpowered: bool = False
    runs_needed: int | None = None


def _log_margins(limit_pct: float, higher_is_better: bool) -> tuple[float, float]:
    """``(c, d - c)``: the log ratio of a worsening by the limit (``c``) and the distance from
    it to a worsening by ``CATCH_FACTOR`` times the limit (``d - c``; ``inf`` for a drop of 100
    % or more, which no positive figure can show)."""
    if higher_is_better:
        cut = -math.log1p(-limit_pct / 100) if limit_pct < 100 else math.inf
        far = CATCH_FACTOR * limit_pct / 100
        catch = -math.log1p(-far) if far < 1 else math.inf
    else:
        cut = math.log1p(limit_pct / 100)
        catch = math.log1p(CATCH_FACTOR * limit_pct / 100)
    return cut, catch - cut


def power_reached(sigma_log: float, n: int, m: int, df: float, *, limit_pct: float,
                  higher_is_better: bool) -> bool:
    """Whether ``n`` runs of this build and ``m`` of the baseline, of noise ``sigma_log`` (the
    standard deviation of the natural logs, estimated with ``df`` degrees of freedom), let the
    gate's estimate fall on the right side of the limit for an unchanged build (at most
    ``ALPHA`` failed) and for a worsening by ``CATCH_FACTOR`` times the limit (at most ``BETA``
    missed): ``t(1-ALPHA, df) se <= c`` and ``t(1-BETA, df) se <= d - c``, ``se = sigma_log
    sqrt(1/n + 1/m)`` (module docstring: NIST/SEMATECH e-Handbook 7.2.2.2, with
    t-quantiles). A noise of 0 always reaches it; a 0 % limit never does otherwise."""
    from scipy.special import stdtrit

    if sigma_log == 0:
        return True
    cut, rest = _log_margins(limit_pct, higher_is_better)
    se = sigma_log * math.sqrt(1 / n + 1 / m)
    return (float(stdtrit(df, 1 - ALPHA)) * se <= cut
            and float(stdtrit(df, 1 - BETA)) * se <= rest)


def runs_needed(sigma_log: float, *, limit_pct: float, higher_is_better: bool) -> int | None:
    """The fewest runs per side (both builds, ``--repeat``) with which noise ``sigma_log``
    reaches the gate's error rates (``power_reached`` with ``n = m``, ``df = 2 n - 2``); 2 or
    more. None when no number up to ``MAX_RUNS`` does (a 0 % limit)."""
    for runs in range(2, MAX_RUNS + 1):
        if power_reached(sigma_log, runs, runs, 2 * runs - 2, limit_pct=limit_pct,
                         higher_is_better=higher_is_better):
            return runs
    return None


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
    df = n + m - 2
    sigma = math.sqrt(((n - 1) * var_new + (m - 1) * var_old) / df)
    weak = not power_reached(sigma, n, m, df, limit_pct=limit_pct,
                             higher_is_better=higher_is_better)
    needed = (runs_needed(sigma, limit_pct=limit_pct, higher_is_better=higher_is_better)
              if sigma > 0 else None)
    ci_low, ci_high = math.expm1(low) * 100, math.expm1(high) * 100
    worst_lo, worst_hi = sorted((_worsening(ci_low, higher_is_better),
                                 _worsening(ci_high, higher_is_better)))
    pass_bound = (CATCH_FACTOR if weak else PASS_BOUND_FACTOR) * limit_pct
    reason = ""
    if worsening > limit_pct and worst_lo > 0:
        status = REGRESSED
    elif worsening <= limit_pct and worst_hi < 0:
        status = IMPROVED
    elif worsening <= limit_pct and worst_hi <= pass_bound:
        status = WITHIN
    elif weak:
        status = UNDECIDED
        how = (f"needs {needed} runs per side (--repeat {needed} on this build and the "
               "baseline)" if needed is not None else "no number of runs can decide it")
        reason = (f"noise {sigma * 100:.1f} % too high for a {limit_pct:g} % limit with {n} vs "
                  f"{m} runs; {how}")
    elif worsening > limit_pct:
        status = INCONCLUSIVE
        reason = (f"the estimate is past the limit, but at {ONE_SIDED * 100:.0f} % "
                  "confidence the change could be none")
    else:
        status = INCONCLUSIVE
        reason = (f"the estimate is within the limit, but a worsening of up to "
                  f"{worst_hi:.1f} % (more than {PASS_BOUND_FACTOR:g}x the limit) cannot be "
                  f"excluded at {ONE_SIDED * 100:.0f} % confidence")
    return ChangeJudgement(status, value, base, change, ci_low, ci_high, n, m, rsd_new, rsd_old,
                           method, reason, sigma * 100, weak, needed)
