"""IOPS consistency figures of a fio workload's per-second IOPS log: names, the run profile's
settings and how many seconds each figure needs (plain data; ``fio.consistency`` computes them).

Per direction (``write.iops_consistency_pct``, ``read.iops_cov_pct``, ...), from the whole
seconds of fio's ``write_iops_log`` (``log_avg_msec=1000``; a second with no completed I/O
counts as 0 IOPS, the last partial second is left out):

* ``iops_consistency_pct``: the IOPS of the second at the 99.9 % point of the seconds sorted
  fastest first (the 99.9 %-slowest second) over the mean IOPS of all seconds, x 100; higher is
  better. Source: pynvme (the open-source predecessor of PyNVMe3, same author),
  ``src/driver_wrap.pyx`` ``_IOWorker.iops_consistency(slowest_percentage=99.9)``:
  ``sorted(io_per_second, reverse=True)[int(n * 99.9) // 100] / mean`` (a ratio; x 100 here).
  PyNVMe3's own source is not public; its ``ioworker`` returns ``iops_consistency`` under the
  same name. Needs ``CONSISTENCY_MIN_S`` = 1000 seconds: below that the 99.9 % point falls on
  the slowest second itself (at exactly 1000 it still does: index 999 of 0-999; from 1001
  seconds on at least one second lies beyond it), so a shorter log gives no figure.
* ``iops_cov_pct``: the coefficient of variation (population standard deviation / mean x 100)
  of the last ``ConsistencyPlan.cov_last_s`` seconds; lower is better. Source: AnandTech's
  performance consistency test (4 KiB random write QD32 for 1 h, scored on the last 400 s on
  mean IOPS and on mean / standard deviation, whose inverse this is). Needs those N seconds.
* ``seconds_below_<X>pct_of_mean``: the seconds whose IOPS is below ``X`` % of the mean of all
  seconds (``ConsistencyPlan.below_mean_pct``; X is in the name so a limit always means one
  X); lower is better. Needs ``BELOW_MIN_S`` = 2 seconds (one second is its own mean).
* ``iops_log_s``: the whole seconds of the log the figures rest on: a fact of the run (as
  ``lat_tail_ios``), and how ``not_measured`` tells, from a stored record too, why a figure is
  missing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "BELOW_MIN_S",
    "CONSISTENCY_MIN_S",
    "CONSISTENCY_SLOWEST_PCT",
    "LOG_SECONDS",
    "ConsistencyPlan",
    "below_mean_metric",
    "consistency_metric_names",
    "needs_s",
    "not_measured",
]

#: The percentage of seconds at or faster than the judged one (pynvme's ``slowest_percentage``).
CONSISTENCY_SLOWEST_PCT = Fraction(999, 10)
#: Seconds ``iops_consistency_pct`` needs: one second beyond the 99.9 % point, ``1 / 0.001``.
CONSISTENCY_MIN_S = math.ceil(1 / (1 - CONSISTENCY_SLOWEST_PCT / 100))
#: Seconds ``seconds_below_<X>pct_of_mean`` needs (a single second is its own mean).
BELOW_MIN_S = 2
#: The bare name of the whole seconds the figures rest on.
LOG_SECONDS = "iops_log_s"


@dataclass(frozen=True)
class ConsistencyPlan:
    """A run profile's consistency settings.

    Attributes:
        cov_last_s: ``iops_cov_pct`` is over the last this many whole seconds (AnandTech: the
            last 400 s of a 1 h run; the profiles take the last 80 % of their runtime, past the
            ramp in which a drive leaves its fresh state).
        below_mean_pct: X of ``seconds_below_<X>pct_of_mean``, a whole percentage.

    Raises:
        ValueError: ``cov_last_s`` below 2 (a deviation needs two seconds) or ``below_mean_pct``
            not a whole number in 1..100.
    """

    cov_last_s: int = 240
    below_mean_pct: int = 50

    def __post_init__(self) -> None:
        if self.cov_last_s < 2:
            raise ValueError(f"cov_last_s must be at least 2 seconds, got {self.cov_last_s}")
        if not 1 <= self.below_mean_pct <= 100:
            raise ValueError(f"below_mean_pct must be 1..100, got {self.below_mean_pct}")

    @property
    def below_metric(self) -> str:
        return below_mean_metric(self.below_mean_pct)


def below_mean_metric(pct: int) -> str:
    """``seconds_below_50pct_of_mean`` for 50."""
    return f"seconds_below_{pct}pct_of_mean"


def consistency_metric_names(plan: ConsistencyPlan) -> tuple[str, ...]:
    """The bare names of the figures under ``plan``, ``iops_log_s`` last."""
    return ("iops_consistency_pct", "iops_cov_pct", plan.below_metric, LOG_SECONDS)


def needs_s(metric: str, plan: ConsistencyPlan) -> int:
    """Whole seconds of log the bare ``metric`` needs (``KeyError`` for another name)."""
    return {"iops_consistency_pct": CONSISTENCY_MIN_S, "iops_cov_pct": plan.cov_last_s,
            plan.below_metric: BELOW_MIN_S}[metric]


def not_measured(metrics: Mapping[str, float], directions: Iterable[str],
                 plan: ConsistencyPlan) -> dict[str, str]:
    """Canonical metric -> why it has no figure, for each consistency figure of ``directions``
    that ``metrics`` lacks although ``<direction>.iops_log_s`` is there: the log had fewer
    seconds than it needs (``needs_s``). A direction without ``iops_log_s`` (no log) gets
    nothing. The reason a limit on it is reported with, not judged
    (``thresholds.verdict.judge``'s ``not_in_profile``)."""
    out: dict[str, str] = {}
    for d in directions:
        have = metrics.get(f"{d}.{LOG_SECONDS}")
        if have is None or have != have:
            continue
        for name in consistency_metric_names(plan)[:-1]:
            need = needs_s(name, plan)
            if f"{d}.{name}" not in metrics and have < need:
                out[f"{d}.{name}"] = (
                    f"too few seconds: needs {need} whole seconds of the {d} IOPS log, the run "
                    f"logged {int(have)} (a longer runtime measures it)")
    return out
