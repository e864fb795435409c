"""A methodology test under ``--repeat``: its runs combined into the one
result that is judged (``qualify.measure.repeated_result``) -- the medians, an implicit
requirement held in every run, a figure some run never reached or had no finite value for.
Results are built by hand (no fio); the runs through the plugin are in
``tests/plugin/test_plugin_methodology.py``."""

from __future__ import annotations

import math

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.methodology.base import MethodologyOutcome, MethodologyResult, judge_result
from pytest_ssdqual.qualify.measure import repeated_result, unmeasured_reasons
from pytest_ssdqual.thresholds.profile import ResolvedLimits
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

STEADY = "steady_state_rand_write_4k"
RECOVERY = "recovery_after_idle"
REQUIRED = Provenance("steady.py", "implicit requirement", "SNIA PTS: steady state")


def _result(wid: str, metrics: dict[str, float], *, note: str = "", state: str = "FOB",
            requirements: tuple[Limit, ...] = (), unreached: dict[str, str] | None = None
            ) -> MethodologyResult:
    return MethodologyResult(CATALOG[wid], dict(metrics), dict.fromkeys(metrics, state),
                             [note] if note else [], [], requirements=list(requirements),
                             unreached=dict(unreached or {}))


def _limits(*limits: Limit) -> ResolvedLimits:
    return ResolvedLimits({(lim.workload, lim.metric): lim for lim in limits}, ())


def test_the_medians_are_judged_with_the_last_runs_states_and_notes() -> None:
    runs = [_result(STEADY, {"write.iops": v, "steady_state_reached": 1.0}, note=f"run at {v}",
                    state=f"steady state {i}") for i, v in enumerate((20e3, 10e3, 22e3), 1)]
    combined = repeated_result(runs)
    assert combined.metrics == {"write.iops": 20e3, "steady_state_reached": 1.0}
    assert combined.notes == ["run at 22000.0"] and combined.states["write.iops"] == (
        "steady state 3")
    assert [r.metrics["write.iops"] for r in runs] == [20e3, 10e3, 22e3]  # runs untouched
    floor = Limit(STEADY, "write.iops", 15e3, None, None, Provenance("t.yaml", "p", "s"))
    assert not judge_result(combined, _limits(floor)).failed  # 20k, not the 10k run
    assert repeated_result(runs[:1]) is runs[0]
    with pytest.raises(ValueError, match="no methodology run"):
        repeated_result([])


def test_an_implicit_requirement_must_hold_in_every_run() -> None:
    """The median of steady_state_reached 1, 0, 1 is 1: it would hide the run whose figures
    are no steady-state figures."""
    need = Limit(STEADY, "steady_state_reached", 1.0, None, None, REQUIRED)
    runs = [_result(STEADY, {"write.iops": 20e3, "steady_state_reached": r},
                    requirements=(need,)) for r in (1.0, 0.0, 1.0)]
    combined = repeated_result(runs)
    assert combined.metrics["steady_state_reached"] == 0.0
    [failed] = judge_result(combined, _limits()).failed
    assert failed.line().startswith("steady_state_reached 0 < min 1")


def test_a_purge_that_failed_in_one_run_fails_the_test() -> None:
    """Only the run whose purge failed has ``purged`` = 0 and the ``purged >= 1``
    requirement: both are kept, so the test fails."""
    need = Limit(RECOVERY, "purged", 1.0, None, None, REQUIRED)
    runs = [_result(RECOVERY, {"fresh_iops": 5000.0}),
            _result(RECOVERY, {"fresh_iops": 5000.0, "purged": 0.0}, requirements=(need,)),
            _result(RECOVERY, {"fresh_iops": 5000.0})]
    combined = repeated_result(runs)
    assert combined.metrics["purged"] == 0.0 and combined.requirements == [need]
    [failed] = judge_result(combined, _limits()).failed
    assert failed.metric == "purged" and failed.line().startswith("purged 0 < min 1")


def test_a_figure_one_run_never_reached_keeps_that_runs_reason() -> None:
    why = "never recovered: no idle time up to 21 s kept it at >= 90% of fresh"
    runs = [_result(RECOVERY, {"recovery_ratio": 0.95, "time_to_recover_s": 7.0}),
            _result(RECOVERY, {"recovery_ratio": 0.6}, unreached={"time_to_recover_s": why}),
            _result(RECOVERY, {"recovery_ratio": 0.97, "time_to_recover_s": 7.0})]
    combined = repeated_result(runs)
    assert "time_to_recover_s" not in combined.metrics
    assert combined.unreached == {"time_to_recover_s": why}
    ceiling = Limit(RECOVERY, "time_to_recover_s", None, 60.0, None,
                    Provenance("t.yaml", "lab", "lab rule"))
    [failed] = judge_result(combined, _limits(ceiling)).failed
    assert failed.line().startswith(f"time_to_recover_s {why}: fails the limit")


def test_a_nan_run_makes_the_figure_not_measured_naming_the_run() -> None:
    runs = [_result(RECOVERY, {"recovery_ratio": v}) for v in (0.95, math.nan, 0.96)]
    combined = repeated_result(runs)
    assert math.isnan(combined.metrics["recovery_ratio"])  # not the median of the others
    reasons = unmeasured_reasons([MethodologyOutcome(r, []) for r in runs])
    assert reasons == {"recovery_ratio": "not measured (repetition 2 of 3 of this run gave nan)"}
    floor = Limit(RECOVERY, "recovery_ratio", 0.9, None, None, Provenance("t.yaml", "p", "s"))
    [failed] = judge_result(combined, _limits(floor), unmeasured=reasons).failed
    assert failed.line().startswith("recovery_ratio not measured (repetition 2 of 3 of this run "
                                    "gave nan): fails the limit recovery_ratio >= 0.9")
    assert unmeasured_reasons([MethodologyOutcome(runs[1], [])]) == {}  # one run: its own NaN
