"""Recovery after idle: how much of its fresh performance a dirty drive gets back when left
alone, and how soon.

The consistency test measures one performance figure (e.g. 4 KiB random-write IOPS) fresh
(FOB), degraded, at steady state, and after each of several idle periods. From those:

* ``recovery_ratio`` = figure after the last idle period / fresh figure (1.0 = fully recovered).
* ``time_to_recover_s`` = the first cumulative idle time after which *every* later round stays
  at or above ``RECOVERED_FRACTION`` of the fresh figure; 0 when the figure before idle was
  already there and no round fell below it. A round that reaches the target and a later one
  that falls back do not count as recovered (a drive that relapses has not recovered).
* **never recovered** (``time_to_recover_s`` is ``None``, not 0): the last round is below the
  target. The metric is then absent, the report says "never", and ``unreached()`` gives the
  reason with which a limit on ``time_to_recover_s`` FAILs (``thresholds.verdict.judge``).

Sources: SNIA PTS Enterprise 1.1 "Host Idle Recovery" test (steady state, then idle periods
between stimulus rounds); PCMark 8 storage consistency test, recovery phase (5 x 5 min idle,
each followed by the performance test).

Plain Python: no fio, no pytest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ssdqual.errors import FioOutputError

#: A drive counts as recovered once its figure is back to this share of the fresh figure.
RECOVERED_FRACTION = 0.9


@dataclass(frozen=True)
class RecoveryReport:
    """Recovery figures of one consistency test.

    Attributes:
        fresh: the fresh (FOB) figure. before_idle: the figure just before the first idle
            period (steady state). recovered: the figure after the last idle period.
        recovery_ratio: ``recovered / fresh``.
        time_to_recover_s: the first cumulative idle seconds after which every later round
            stays >= ``fraction * fresh``; 0 if it never fell below; ``None``: never recovered.
        idle_s: total idle seconds given.
        fraction: the recovery target as a share of ``fresh``.
        rounds: ``(cumulative idle seconds, figure)`` of each recovery round.
    """

    fresh: float
    before_idle: float | None
    recovered: float
    recovery_ratio: float
    time_to_recover_s: float | None
    idle_s: float
    fraction: float = RECOVERED_FRACTION
    rounds: tuple[tuple[float, float], ...] = ()

    @property
    def recovered_to_target(self) -> bool:
        """The figure got back to ``fraction`` of fresh and stayed there."""
        return self.time_to_recover_s is not None

    def never_reason(self) -> str | None:
        """Why ``time_to_recover_s`` has no value, ``None`` when it has one, e.g. ``never
        recovered: no idle time up to 15 s kept it at >= 90% of fresh (3,600 IOPS); after idle
        1,000 / 1,010 / 990 IOPS``."""
        if self.recovered_to_target:
            return None
        figures = " / ".join(f"{v:,.0f}" for _, v in self.rounds) or f"{self.recovered:,.0f}"
        return (f"never recovered: no idle time up to {self.idle_s:g} s kept it at >= "
                f"{self.fraction:.0%} of fresh ({self.fraction * self.fresh:,.0f}); after idle "
                f"{figures}")

    def unreached(self) -> dict[str, str]:
        """``{"time_to_recover_s": reason}`` when it never recovered (a limit on it then fails
        with that reason, ``thresholds.verdict.judge``), else ``{}``."""
        why = self.never_reason()
        return {} if why is None else {"time_to_recover_s": why}

    def describe(self, unit: str = "IOPS") -> str:
        """One line for reports."""
        head = (
            f"recovery ratio {self.recovery_ratio:.2f} (fresh {self.fresh:,.0f} {unit}, after "
            f"{self.idle_s:g} s idle {self.recovered:,.0f} {unit})"
        )
        if self.time_to_recover_s is None:
            return head + (
                f"; time_to_recover_s: never -- never back to {self.fraction:.0%} of fresh "
                f"within {self.idle_s:g} s idle (for good: the last round is below it)"
            )
        return head + (
            f"; back to {self.fraction:.0%} of fresh after {self.time_to_recover_s:g} s idle "
            "and stayed there"
        )

    def metrics(self) -> dict[str, float]:
        """``recovery_ratio`` and, when it recovered, ``time_to_recover_s`` (never recovered:
        absent, see :meth:`unreached`)."""
        out = {"recovery_ratio": self.recovery_ratio}
        if self.time_to_recover_s is not None:
            out["time_to_recover_s"] = self.time_to_recover_s
        return out


def recovery_metrics(
    fresh: float,
    after_idle: Sequence[tuple[float, float]],
    *,
    before_idle: float | None = None,
    fraction: float = RECOVERED_FRACTION,
) -> RecoveryReport:
    """Recovery figures from the fresh figure and the figures after each idle period.

    Args:
        fresh: the figure fresh out of the box (higher is better, e.g. IOPS), > 0.
        after_idle: ``(cumulative idle seconds, figure)`` after each idle period, in order.
        before_idle: the figure just before the first idle period, if measured.
        fraction: share of ``fresh`` that counts as recovered (0-1].

    Raises:
        ValueError: ``fresh`` not positive, no idle period, idle times not increasing, or
            ``fraction`` outside (0, 1].
        FioOutputError: ``fresh`` or a figure after idle is NaN or infinite (fio measured no
            I/O in that performance test).
    """
    if not math.isfinite(fresh):
        raise FioOutputError(f"the fresh performance test measured no I/O (figure {fresh}): "
                             "recovery cannot be judged")
    if not fresh > 0:
        raise ValueError(f"the fresh figure must be a positive number, got {fresh}")
    if not after_idle:
        raise ValueError("no idle period: the recovery phase did not run")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    idle_times = [t for t, _ in after_idle]
    if any(b <= a for a, b in zip(idle_times, idle_times[1:], strict=False)) or idle_times[0] < 0:
        raise ValueError(f"cumulative idle times must increase, got {idle_times}")
    figures = [v for _, v in after_idle]
    for i, v in enumerate(figures, start=1):
        if not math.isfinite(v):
            raise FioOutputError(
                f"recovery round {i} measured no I/O: its figure after idle is {v} (fio "
                f"reported no IOPS for the performance test); figures after idle: {figures}"
            )
    target = fraction * fresh
    time_to_recover: float | None = None
    # the earliest round from which on every round is at the target (scan from the last)
    for idle_s, value in reversed(after_idle):
        if value < target:
            break
        time_to_recover = idle_s
    if (time_to_recover == idle_times[0] and before_idle is not None
            and before_idle >= target):
        time_to_recover = 0.0  # never fell below the target
    recovered = figures[-1]
    return RecoveryReport(fresh, before_idle, recovered, recovered / fresh, time_to_recover,
                          idle_times[-1], fraction, tuple(after_idle))
