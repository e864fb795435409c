"""SNIA PTS steady-state rule on constructed series: steady, drifting, noisy, step change."""

from __future__ import annotations

import math

import pytest

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.methodology.steady_state import (
    MAX_ROUNDS,
    SteadyStateTracker,
    evaluate,
    fit_window,
)


def test_constant_series_is_steady_at_round_5() -> None:
    state = evaluate([12000.0] * 7)
    assert state.reached and state.round == 5
    assert (state.window_first_round, state.window_last_round) == (1, 5)
    assert state.window_avg == 12000.0
    assert state.data_excursion_pct == 0.0 and state.slope_excursion_pct == 0.0
    assert "reached at round 5" in state.describe()


def test_fewer_rounds_than_the_window_is_not_steady() -> None:
    state = evaluate([100.0, 100.0, 100.0, 100.0])
    assert not state.reached and state.round is None and state.rounds == 4
    assert state.window_avg is None and state.data_excursion_pct is None
    assert "fewer than the 5-round window" in state.describe()


def test_window_figures_match_a_hand_computed_line() -> None:
    # 10..14: average 12, max-min 4 -> 33.3 %; slope 1/round, rise over 4 rounds 4 -> 33.3 %
    fit = fit_window([10.0, 11.0, 12.0, 13.0, 14.0], first_round=3)
    assert (fit.first_round, fit.last_round) == (3, 7)
    assert fit.average == pytest.approx(12.0)
    assert fit.slope_per_round == pytest.approx(1.0)
    assert fit.data_excursion_pct == pytest.approx(100 * 4 / 12)
    assert fit.slope_excursion_pct == pytest.approx(100 * 4 / 12)
    assert not fit.steady


def test_drifting_series_never_reaches_steady_state() -> None:
    # 4 % down per round: each window spans ~15 % of data (within 20 %) but the fitted line
    # falls ~15 % across it (over 10 %), for all 25 rounds.
    values = [50000.0 * 0.96**i for i in range(MAX_ROUNDS)]
    state = evaluate(values)
    assert not state.reached and state.round is None and state.rounds == 25
    assert (state.window_first_round, state.window_last_round) == (21, 25)
    assert state.data_excursion_pct is not None and state.data_excursion_pct <= 20
    assert state.slope_excursion_pct is not None and state.slope_excursion_pct > 10
    assert state.slope_per_round is not None and state.slope_per_round < 0
    assert "not reached in 25 rounds" in state.describe()


def test_slope_alone_can_fail_a_window() -> None:
    fit = fit_window([100.0, 104.0, 108.0, 112.0, 116.0])
    assert fit.data_excursion_pct == pytest.approx(100 * 16 / 108)  # 14.8 % <= 20 %
    assert fit.slope_excursion_pct == pytest.approx(100 * 16 / 108)  # 14.8 % > 10 %
    assert not fit.steady


def test_noisy_series_fails_on_data_excursion_with_a_flat_line() -> None:
    values = [100.0, 130.0, 100.0, 130.0, 100.0, 130.0, 100.0]
    state = evaluate(values)
    assert not state.reached
    first = fit_window(values[:5])
    assert first.slope_per_round == pytest.approx(0.0)
    assert first.data_excursion_pct == pytest.approx(100 * 30 / 112)
    assert not first.steady


def test_mild_noise_is_steady() -> None:
    values = [1000.0, 1060.0, 970.0, 1040.0, 990.0]
    state = evaluate(values)
    assert state.reached and state.round == 5
    assert state.data_excursion_pct == pytest.approx(100 * 90 / 1012)


def test_step_change_is_steady_five_rounds_after_the_step() -> None:
    # FOB burst for 3 rounds, then the drive drops to its dirty level and stays there
    values = [90000.0, 88000.0, 91000.0] + [30000.0] * 7
    state = evaluate(values)
    assert state.reached and state.round == 8
    assert (state.window_first_round, state.window_last_round) == (4, 8)
    assert state.window_avg == pytest.approx(30000.0)


def test_first_qualifying_window_is_reported_even_when_later_rounds_wander() -> None:
    values = [100.0] * 5 + [10.0, 500.0]
    state = evaluate(values)
    assert state.reached and state.round == 5 and state.rounds == 7


def test_zero_average_is_never_steady() -> None:
    fit = fit_window([0.0] * 5)
    assert not fit.steady and math.isinf(fit.data_excursion_pct)
    assert not evaluate([0.0] * 6).reached


def test_bad_windows_raise() -> None:
    with pytest.raises(ValueError, match="at least 2 rounds"):
        fit_window([1.0])


@pytest.mark.parametrize(("bad", "first", "match"), [
    ([1.0, float("nan"), 1.0], 1, "round 2 measured no I/O"),
    ([1.0, float("inf")], 3, "round 4 measured no I/O"),
])
def test_a_round_without_io_is_a_fio_output_error(bad: list[float], first: int,
                                                   match: str) -> None:
    with pytest.raises(FioOutputError, match=match):
        fit_window(bad, first_round=first)


def test_tracker_names_the_round_that_measured_no_io() -> None:
    tracker = SteadyStateTracker(max_rounds=8)
    tracker.add(100.0)
    tracker.add(100.0)
    with pytest.raises(FioOutputError, match="round 3 measured no I/O"):
        tracker.add(float("nan"))  # fio reported no IOPS for round 3 (Step.figure -> NaN)


def test_tracker_stops_at_steady_state_or_max_rounds() -> None:
    tracker = SteadyStateTracker(max_rounds=8)
    for _ in range(5):
        assert not tracker.done
        tracker.add(500.0)
    assert tracker.done and tracker.state.round == 5

    drifting = SteadyStateTracker(max_rounds=8)
    n = 0
    while not drifting.done:
        drifting.add(1000.0 * 0.8**n)
        n += 1
    assert n == 8 and not drifting.state.reached


def test_tracker_rejects_a_max_below_the_window() -> None:
    with pytest.raises(ValueError, match="below the 5-round window"):
        SteadyStateTracker(max_rounds=4)
