"""Recovery-after-idle metrics on constructed figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.methodology.recovery import recovery_metrics
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts
from pytest_ssdqual.thresholds.verdict import FAIL, MISSING, PASS, judge


def test_drive_recovering_in_steps() -> None:
    # fresh 4000 IOPS, dirty 1000; half way back after 5 s idle, fully after 10 s
    report = recovery_metrics(4000, [(5, 2500), (10, 4000), (15, 3980)], before_idle=1000)
    assert report.recovery_ratio == pytest.approx(3980 / 4000)
    assert report.time_to_recover_s == 10
    assert report.idle_s == 15 and report.recovered == 3980
    assert report.metrics() == {"recovery_ratio": pytest.approx(0.995), "time_to_recover_s": 10}
    assert "back to 90% of fresh after 10 s idle" in report.describe()


def test_drive_that_never_recovers_has_no_time_to_recover() -> None:
    report = recovery_metrics(4000, [(5, 1000), (10, 1010), (15, 990)], before_idle=1000)
    assert report.recovery_ratio == pytest.approx(990 / 4000)
    assert report.time_to_recover_s is None
    assert "time_to_recover_s" not in report.metrics()
    assert "never back to 90% of fresh within 15 s idle" in report.describe()


def test_drive_that_never_degraded_recovers_in_no_time() -> None:
    report = recovery_metrics(50000, [(2, 48000)], before_idle=47000)
    assert report.time_to_recover_s == 0.0
    assert report.recovery_ratio == pytest.approx(0.96)


def test_recovery_then_relapse_is_never_recovered() -> None:
    # back to 95 % after 1 s, down to 40 % after 2 s: it did not stay recovered
    report = recovery_metrics(100, [(1, 95), (2, 40)])
    assert report.time_to_recover_s is None and report.recovery_ratio == pytest.approx(0.4)


def test_a_stricter_target_fraction() -> None:
    report = recovery_metrics(100, [(1, 91), (2, 99)], fraction=0.98)
    assert report.time_to_recover_s == 2


@pytest.mark.parametrize(
    ("fresh", "after", "match"),
    [
        (0, [(1, 1)], "positive"),
        (10, [], "no idle period"),
        (10, [(2, 1), (1, 1)], "must increase"),
    ],
)
def test_bad_input(fresh: float, after: list[tuple[float, float]], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        recovery_metrics(fresh, after)


def test_a_performance_test_without_io_is_a_fio_output_error() -> None:
    with pytest.raises(FioOutputError, match="recovery round 2 measured no I/O"):
        recovery_metrics(10, [(1, 5.0), (2, float("nan"))])
    with pytest.raises(FioOutputError, match="fresh performance test measured no I/O"):
        recovery_metrics(float("nan"), [(1, 1)])


def test_issue_example_steady_at_target_but_recovery_rounds_below_is_never_not_zero() -> None:
    """A former bug: steady 95k, recovery rounds 60k then 50k (fresh 100k) gave 0 s."""
    report = recovery_metrics(100_000, [(300, 60_000), (600, 50_000)], before_idle=95_000)
    assert report.time_to_recover_s is None and not report.recovered_to_target
    assert "time_to_recover_s" not in report.metrics()
    assert report.metrics() == {"recovery_ratio": pytest.approx(0.5)}
    assert report.unreached() == {"time_to_recover_s": (
        "never recovered: no idle time up to 600 s kept it at >= 90% of fresh (90,000); "
        "after idle 60,000 / 50,000")}
    assert "time_to_recover_s: never -- never back to 90% of fresh within 600 s idle" in (
        report.describe())


@pytest.mark.parametrize(
    ("before_idle", "rounds", "expected_s"),
    [
        (95, [(5, 60), (10, 92), (15, 95)], 10),  # dipped after idle began, back for good at 10
        (50, [(5, 95), (10, 40), (15, 96), (20, 97)], 15),  # flapped: only from 15 s on
        (95, [(5, 91), (10, 99)], 0.0),  # never below the target
        (None, [(5, 91), (10, 99)], 5),  # nothing known before idle: the first round
        (95, [(5, 91), (10, 89)], None),  # the last round fell below: never
    ],
)
def test_time_to_recover_is_the_first_idle_time_after_which_it_stays_recovered(
        before_idle: float | None, rounds: list[tuple[float, float]],
        expected_s: float | None) -> None:
    report = recovery_metrics(100, rounds, before_idle=before_idle)
    assert report.time_to_recover_s == expected_s
    assert ("time_to_recover_s" in report.metrics()) is (expected_s is not None)


LIMITS = """\
version: 1
profiles:
  - name: recovery within ten minutes
    match: {kind: block}
    source: "lab rule: back to 90 % of fresh within 600 s idle"
    limits:
      recovery_after_idle: {time_to_recover_s: {max: 600}}
"""


def test_a_limit_on_time_to_recover_fails_with_a_clear_line_when_it_never_recovered(
        tmp_path: Path) -> None:
    path = tmp_path / "limits.yaml"
    path.write_text(LIMITS)
    limits = ThresholdSet.load([path]).resolve(DriveFacts(None, None, kind="block"))
    workload = CATALOG["recovery_after_idle"]
    never = recovery_metrics(100_000, [(300, 60_000), (600, 50_000)], before_idle=95_000)
    [verdict] = [v for v in judge(workload, never.metrics(), limits,
                                  unreached=never.unreached())
                 if v.metric == "time_to_recover_s"]
    assert verdict.status == FAIL and verdict.failed and verdict.measured is None
    assert verdict.line() == (
        "time_to_recover_s never recovered: no idle time up to 600 s kept it at >= 90% of "
        "fresh (90,000); after idle 60,000 / 50,000: fails the limit time_to_recover_s <= 600"
        f' — profile "recovery within ten minutes", {path}:7')
    # without the reason the same absence is only MISSING ("not measured"), still a failure
    [bare] = [v for v in judge(workload, never.metrics(), limits)
              if v.metric == "time_to_recover_s"]
    assert bare.status == MISSING and bare.failed
    # a drive that recovered passes the same limit
    fine = recovery_metrics(100_000, [(300, 60_000), (600, 96_000)], before_idle=95_000)
    [ok] = [v for v in judge(workload, fine.metrics(), limits, unreached=fine.unreached())
            if v.metric == "time_to_recover_s"]
    assert ok.status == PASS and ok.measured == 600
