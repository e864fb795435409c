"""Recovery-after-idle metrics on constructed figures."""

from __future__ import annotations

import pytest

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.recovery import recovery_metrics


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


def test_recovery_then_relapse_still_reports_the_first_recovery() -> None:
    report = recovery_metrics(100, [(1, 95), (2, 40)])
    assert report.time_to_recover_s == 1 and report.recovery_ratio == pytest.approx(0.4)


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
