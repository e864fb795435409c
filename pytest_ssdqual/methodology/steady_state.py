"""SNIA PTS steady-state detection over per-round figures.

A test stimulus runs in rounds; after each round one *tracking figure* (e.g. 4 KiB random-write
IOPS) is recorded. The drive is in steady state when, over a *measurement window* of the last
5 rounds:

* the data excursion -- ``max(y) - min(y)`` -- is at most 20 % of the window average, and
* the slope excursion -- the rise of the least-squares line across the window,
  ``|slope| * (rounds - 1)`` -- is at most 10 % of the window average.

At most 25 rounds are run; if no window qualifies by then, steady state is *not reached* and the
last window is reported as it is.

Source: SNIA Solid State Storage Performance Test Specification (PTS), Enterprise v1.1 and
Client v2.0, section 2.1 "Steady State" definitions (measurement window, data excursion, slope
excursion, "Steady State Convergence" at most 25 rounds) and section 3 (Test Flow: purge,
workload-independent preconditioning, workload-dependent preconditioning until steady state).

Plain Python: no fio, no pytest.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_ssdqual.errors import FioOutputError

#: Rounds in the measurement window (SNIA PTS: 5).
WINDOW_ROUNDS = 5
#: Largest allowed ``max - min`` within the window, percent of the window average (SNIA: 20).
MAX_DATA_EXCURSION_PCT = 20.0
#: Largest allowed rise of the least-squares line across the window, percent of the average
#: (SNIA: 10).
MAX_SLOPE_EXCURSION_PCT = 10.0
#: Rounds run at most before steady state is declared not reached (SNIA: 25).
MAX_ROUNDS = 25


@dataclass(frozen=True)
class WindowFit:
    """The SNIA figures of one measurement window.

    Attributes:
        first_round, last_round: 1-based rounds the window covers (inclusive).
        average: mean of the tracking figure over the window (its unit, e.g. IOPS).
        data_excursion_pct: ``(max - min) / average * 100``.
        slope_per_round: least-squares slope, tracking-figure units per round.
        slope_excursion_pct: ``|slope| * (rounds - 1) / average * 100``.
        steady: both excursions within their limits.
    """

    first_round: int
    last_round: int
    average: float
    data_excursion_pct: float
    slope_per_round: float
    slope_excursion_pct: float
    steady: bool


@dataclass(frozen=True)
class SteadyState:
    """The verdict of the steady-state rule over a series of rounds.

    Attributes:
        reached: True when some window qualified.
        round: 1-based round at which steady state was first reached (the window's last round),
            ``None`` when not reached.
        rounds: rounds evaluated.
        window_first_round, window_last_round: the reported window (the first qualifying one,
            else the last one); 0 when there are fewer rounds than the window.
        window_avg: average of the reported window (``None`` with too few rounds).
        data_excursion_pct, slope_excursion_pct, slope_per_round: of the reported window.
        max_data_excursion_pct, max_slope_excursion_pct, window_rounds: the rule applied.
    """

    reached: bool
    round: int | None
    rounds: int
    window_first_round: int
    window_last_round: int
    window_avg: float | None
    data_excursion_pct: float | None
    slope_excursion_pct: float | None
    slope_per_round: float | None
    max_data_excursion_pct: float = MAX_DATA_EXCURSION_PCT
    max_slope_excursion_pct: float = MAX_SLOPE_EXCURSION_PCT
    window_rounds: int = WINDOW_ROUNDS

    def describe(self) -> str:
        """One line, e.g. ``steady state reached at round 5: window rounds 1-5, average 1.2e+04,
        data excursion 3.1 % (<= 20 %), slope excursion 1.0 % (<= 10 %)``."""
        if self.window_avg is None:
            return (
                f"steady state not reached: {self.rounds} round(s), fewer than the "
                f"{self.window_rounds}-round window"
            )
        head = (
            f"steady state reached at round {self.round}"
            if self.reached
            else f"steady state not reached in {self.rounds} rounds"
        )
        return (
            f"{head}: window rounds {self.window_first_round}-{self.window_last_round}, "
            f"average {self.window_avg:.4g}, data excursion {self.data_excursion_pct:.1f} % "
            f"(<= {self.max_data_excursion_pct:g} %), slope excursion "
            f"{self.slope_excursion_pct:.1f} % (<= {self.max_slope_excursion_pct:g} %)"
        )


def fit_window(
    values: Sequence[float],
    *,
    first_round: int = 1,
    max_data_excursion_pct: float = MAX_DATA_EXCURSION_PCT,
    max_slope_excursion_pct: float = MAX_SLOPE_EXCURSION_PCT,
) -> WindowFit:
    """SNIA excursions of one measurement window.

    Args:
        values: the tracking figure of each round in the window (at least 2), in order.
        first_round: 1-based round number of ``values[0]`` (for reporting).

    Returns:
        The window's ``WindowFit``. A window whose average is not positive (a drive that did no
        I/O) is never steady; its excursions are ``inf``.

    Raises:
        ValueError: fewer than 2 values.
        FioOutputError: a value that is NaN or infinite (a round fio measured no I/O in).
    """
    n = len(values)
    if n < 2:
        raise ValueError(f"a measurement window needs at least 2 rounds, got {n}")
    check_rounds(values, first_round=first_round)
    avg = sum(values) / n
    x_mean = (n - 1) / 2
    sxx = sum((i - x_mean) ** 2 for i in range(n))
    slope = sum((i - x_mean) * (v - avg) for i, v in enumerate(values)) / sxx
    last_round = first_round + n - 1
    if avg <= 0:
        return WindowFit(first_round, last_round, avg, math.inf, slope, math.inf, False)
    data_pct = (max(values) - min(values)) / avg * 100
    slope_pct = abs(slope) * (n - 1) / avg * 100
    steady = data_pct <= max_data_excursion_pct and slope_pct <= max_slope_excursion_pct
    return WindowFit(first_round, last_round, avg, data_pct, slope, slope_pct, steady)


def evaluate(
    values: Sequence[float],
    *,
    window_rounds: int = WINDOW_ROUNDS,
    max_data_excursion_pct: float = MAX_DATA_EXCURSION_PCT,
    max_slope_excursion_pct: float = MAX_SLOPE_EXCURSION_PCT,
) -> SteadyState:
    """Apply the SNIA PTS steady-state rule to the rounds run so far.

    Every window of ``window_rounds`` consecutive rounds is checked in order; the first that
    qualifies gives the round steady state was reached at (its last round). When none does, the
    last window is reported with ``reached=False``.

    Args:
        values: the tracking figure of each round, round 1 first.
        window_rounds: rounds per measurement window (>= 2).

    Raises:
        ValueError: ``window_rounds < 2``.
        FioOutputError: a value that is NaN or infinite (a round fio measured no I/O in).
    """
    if window_rounds < 2:
        raise ValueError(f"window_rounds must be at least 2, got {window_rounds}")
    check_rounds(values)
    limits = {
        "max_data_excursion_pct": max_data_excursion_pct,
        "max_slope_excursion_pct": max_slope_excursion_pct,
    }
    n = len(values)
    if n < window_rounds:
        return SteadyState(False, None, n, 0, 0, None, None, None, None,
                           window_rounds=window_rounds, **limits)
    fit: WindowFit | None = None
    for end in range(window_rounds, n + 1):
        start = end - window_rounds
        fit = fit_window(values[start:end], first_round=start + 1, **limits)
        if fit.steady:
            break
    assert fit is not None
    return SteadyState(
        reached=fit.steady,
        round=fit.last_round if fit.steady else None,
        rounds=n,
        window_first_round=fit.first_round,
        window_last_round=fit.last_round,
        window_avg=fit.average,
        data_excursion_pct=fit.data_excursion_pct,
        slope_excursion_pct=fit.slope_excursion_pct,
        slope_per_round=fit.slope_per_round,
        window_rounds=window_rounds,
        **limits,
    )


def check_rounds(values: Sequence[float], *, first_round: int = 1) -> None:
    """Raise ``FioOutputError`` naming the first round whose figure is NaN or infinite: fio
    reported no I/O for it (a missing direction, a job that did nothing)."""
    for i, v in enumerate(values):
        if not math.isfinite(v):
            raise FioOutputError(
                f"round {first_round + i} measured no I/O: its tracking figure is {v} "
                "(fio reported no IOPS for the round); steady state cannot be judged"
            )


class SteadyStateTracker:
    """Round-by-round use of :func:`evaluate`: add each round's figure, stop when ``done``.

    Args:
        max_rounds: rounds at most (SNIA PTS: 25; a run profile may lower it).
        window_rounds: rounds per measurement window.
    """

    def __init__(self, max_rounds: int = MAX_ROUNDS, window_rounds: int = WINDOW_ROUNDS) -> None:
        if max_rounds < window_rounds:
            raise ValueError(
                f"max_rounds {max_rounds} is below the {window_rounds}-round window: steady "
                "state could never be reached"
            )
        self.max_rounds = max_rounds
        self.window_rounds = window_rounds
        self.values: list[float] = []
        self.state = evaluate([], window_rounds=window_rounds)

    def add(self, value: float) -> SteadyState:
        """Record one round's tracking figure and return the verdict so far."""
        self.values.append(value)
        self.state = evaluate(self.values, window_rounds=self.window_rounds)
        return self.state

    @property
    def done(self) -> bool:
        """True once steady state is reached or ``max_rounds`` rounds were run."""
        return self.state.reached or len(self.values) >= self.max_rounds
