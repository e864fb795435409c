"""IOPS consistency figures from fio's per-second IOPS log (fio/consistency.py,
catalog/consistency.py): exact answers on hand-built seconds and logs (with fio's log quirks),
on a real fio 3.33 log, and why a figure is missing (too few seconds)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.consistency import (
    CONSISTENCY_MIN_S,
    ConsistencyPlan,
    needs_s,
    not_measured,
)
from pytest_ssdqual.catalog.workloads import CATALOG, DIRECTION_METRICS, PROFILES
from pytest_ssdqual.fio.consistency import (
    consistency_figures,
    log_figures,
    slowest_index,
    whole_seconds,
)
from pytest_ssdqual.fio.logs import parse_log, to_series
from pytest_ssdqual.thresholds.verdict import NOT_IN_PROFILE, judge

DATA = Path(__file__).parent.parent / "data" / "fio_iops_log"
PLAN = ConsistencyPlan(cov_last_s=2, below_mean_pct=50)


def test_the_99_9_pct_slowest_second_is_pynvmes_index_for_every_count() -> None:
    # pynvme src/driver_wrap.pyx, _IOWorker.iops_consistency(99.9):
    # sorted(io_per_second, reverse=True)[int(len * 99.9) // 100]
    for n in range(1, 20001):
        assert slowest_index(n) == int(n * 99.9) // 100, n
    assert CONSISTENCY_MIN_S == 1000
    assert slowest_index(1000) == 999  # 1000 s: the slowest second itself
    assert slowest_index(2000) == 1998  # 2000 s: the second slowest


def test_consistency_of_1000_seconds_with_one_stall_is_zero() -> None:
    seconds = [100.0] * 999 + [0.0]
    got = consistency_figures(seconds, PLAN)
    assert got["iops_consistency_pct"] == 0.0  # the 99.9 %-slowest of 1000 s: the stall
    assert got["iops_log_s"] == 1000.0
    assert got["seconds_below_50pct_of_mean"] == 1.0  # mean 99.9: only the stall is < 49.95


def test_consistency_of_2000_rising_seconds() -> None:
    seconds = [float(v) for v in range(1, 2001)]  # mean 1000.5
    got = consistency_figures(seconds, PLAN)
    # fastest first, index 1998 is 2 IOPS
    assert got["iops_consistency_pct"] == pytest.approx(2 / 1000.5 * 100, rel=1e-15)
    assert got["seconds_below_50pct_of_mean"] == 500.0  # 1..500 are below 500.25
    assert got["iops_cov_pct"] == pytest.approx(0.5 / 1999.5 * 100, rel=1e-12)  # 1999, 2000


def test_cov_is_over_the_last_n_seconds_only() -> None:
    seconds = [5.0, 1000.0, 0.0, 90.0, 110.0]
    got = consistency_figures(seconds, ConsistencyPlan(cov_last_s=2))
    assert got["iops_cov_pct"] == pytest.approx(10.0, rel=1e-15)  # pstdev 10 over mean 100
    got = consistency_figures(seconds, ConsistencyPlan(cov_last_s=3))
    mean = 200 / 3
    sd = math.sqrt(((0 - mean) ** 2 + (90 - mean) ** 2 + (110 - mean) ** 2) / 3)
    assert got["iops_cov_pct"] == pytest.approx(sd / mean * 100, rel=1e-12)


def test_below_x_pct_counts_strictly_below() -> None:
    seconds = [100.0, 100.0, 100.0, 40.0, 0.0]  # mean 68
    assert consistency_figures(seconds, PLAN)["seconds_below_50pct_of_mean"] == 1.0  # 0 < 34
    plan = ConsistencyPlan(cov_last_s=2, below_mean_pct=75)  # 51: 40 and 0 are below
    assert consistency_figures(seconds, plan)["seconds_below_75pct_of_mean"] == 2.0


def test_too_few_seconds_give_no_figure_and_say_how_many_are_needed() -> None:
    got = consistency_figures([100.0, 90.0, 80.0], ConsistencyPlan(cov_last_s=4))
    assert got == {"iops_log_s": 3.0, "seconds_below_50pct_of_mean": 0.0}
    metrics = {f"write.{k}": v for k, v in got.items()}
    why = not_measured(metrics, ["write"], ConsistencyPlan(cov_last_s=4))
    assert set(why) == {"write.iops_consistency_pct", "write.iops_cov_pct"}
    assert "needs 1000 whole seconds" in why["write.iops_consistency_pct"]
    assert "logged 3" in why["write.iops_consistency_pct"]
    assert "needs 4 whole seconds" in why["write.iops_cov_pct"]
    assert not_measured({}, ["write"], PLAN) == {}  # no log at all: nothing to say
    assert consistency_figures([], PLAN) == {"iops_log_s": 0.0}
    assert "iops_cov_pct" not in consistency_figures([0.0, 0.0, 0.0], PLAN)  # no I/O: no ratio


def test_log_quirks_stall_repeat_late_stamp_partial_last(tmp_path: Path) -> None:
    (tmp_path / "log_iops.1.log").write_text(
        "1000, 100, 1, 0, 0\n"
        "2001, 200, 1, 0, 0\n"   # 1 ms late
        # no line for second 3: a stall, 0 IOPS
        "4001, 300, 1, 0, 0\n"
        "4001, 100, 1, 0, 0\n"   # fio <= 3.24's repeated stamp: averaged (200)
        "5001, 100, 1, 0, 0\n"
        "5400, 50, 1, 0, 0\n"    # the last, partial second: left out
        "1000, 7, 0, 0, 0\n")    # a read line: another direction
    (tmp_path / "log_iops.2.log").write_text(
        "999, 10, 1, 0, 0\n2000, 10, 1, 0, 0\n3000, 10, 1, 0, 0\n4000, 10, 1, 0, 0\n"
        "5000, 10, 1, 0, 0\n")  # a second job: summed per second
    series = to_series([parse_log((tmp_path / f"log_iops.{j}.log").read_text())
                        for j in (1, 2)], "iops", "write", window_ms=1000)
    assert whole_seconds(series) == [110.0, 210.0, 10.0, 210.0, 110.0]
    got = log_figures(tmp_path, ["write", "read"], PLAN, window_ms=1000)
    assert got["write.iops_log_s"] == 5.0
    assert got["write.iops_cov_pct"] == pytest.approx(50 / 160 * 100, rel=1e-12)
    assert got["write.seconds_below_50pct_of_mean"] == 1.0  # mean 130: 10 < 65
    assert got["read.iops_log_s"] == 1.0 and "read.iops_cov_pct" not in got
    assert log_figures(tmp_path / "none", ["write"], PLAN, window_ms=1000) == {}


def test_a_hand_built_log_of_1200_seconds_with_drift(tmp_path: Path) -> None:
    lines = []
    for k in range(1, 1201):
        if k in (300, 301):  # two stalls
            continue
        iops = 500 if k % 100 == 0 else 1000  # 11 slow seconds
        lines.append(f"{k * 1000 + k // 100}, {iops}, 1, 0, 0")  # drifts 1 ms every 100 s
    (tmp_path / "log_iops.1.log").write_text("\n".join(lines) + "\n")
    got = log_figures(tmp_path, ["write"], ConsistencyPlan(cov_last_s=240), window_ms=1000)
    assert got["write.iops_log_s"] == 1200.0
    # 1200 s: 1187 at 1000, 11 at 500 (k=100..1200 step 100 but 300, a stall), 2 stalls at 0
    slow = [k for k in range(100, 1201, 100) if k != 300]
    mean = (1187 * 1000 + len(slow) * 500) / 1200
    assert len(slow) + 1187 + 2 == 1200
    # fastest first, index floor(1200 * .999) = 1198: the 1199th, a stall
    assert got["write.iops_consistency_pct"] == 0.0
    assert mean == 993.75  # half of it, 496.875, is below the slow seconds' 500
    assert got["write.seconds_below_50pct_of_mean"] == 2.0  # the stalls
    last = [500.0 if k % 100 == 0 else 1000.0 for k in range(961, 1201)]
    m = sum(last) / 240
    sd = math.sqrt(sum((v - m) ** 2 for v in last) / 240)
    assert got["write.iops_cov_pct"] == pytest.approx(sd / m * 100, rel=1e-12)


def test_real_fio_3_33_log_with_stalls_and_catch_up_bursts() -> None:
    # tests/data/fio_iops_log/README.md: rate-paced randrw70 with a 2.5 s think time every
    # 8000 I/Os: seconds 5-6 and 9-10 have no line (stalls), 7 and 11 the rate catch-up
    got = log_figures(DATA, ["read", "write"], ConsistencyPlan(cov_last_s=10), window_ms=1000)
    read = [1402, 1400, 1401, 1401, 0, 0, 4201, 1400, 0, 0, 4204, 1400]
    assert got["read.iops_log_s"] == 12.0 and got["write.iops_log_s"] == 12.0
    assert got["read.seconds_below_50pct_of_mean"] == 4.0
    assert got["write.seconds_below_50pct_of_mean"] == 4.0
    assert sum(read) / 12 == 1400.75
    assert got["read.iops_cov_pct"] == pytest.approx(109.55495251229581, rel=1e-12)
    assert got["write.iops_cov_pct"] == pytest.approx(109.5871248945268, rel=1e-12)
    assert "read.iops_consistency_pct" not in got  # 12 s of the 1000 it needs
    why = not_measured(got, ["read", "write"], ConsistencyPlan(cov_last_s=10))
    assert set(why) == {"read.iops_consistency_pct", "write.iops_consistency_pct"}


def test_names_and_profiles_fit_the_catalog() -> None:
    for profile in PROFILES.values():
        plan = profile.consistency
        assert plan.below_metric in DIRECTION_METRICS, profile.name
        assert plan.cov_last_s <= profile.runtime_s, profile.name  # the runs can give it
        assert needs_s("iops_cov_pct", plan) == plan.cov_last_s
    wl = CATALOG["rand_write_4k_qd32"]
    assert wl.canonical_metric("iops_consistency_pct") == "write.iops_consistency_pct"
    assert wl.canonical_metric("seconds_below_50pct_of_mean") == \
        "write.seconds_below_50pct_of_mean"
    with pytest.raises(ValueError, match="at least 2"):
        ConsistencyPlan(cov_last_s=1)


def test_a_limit_on_a_figure_the_log_was_too_short_for_is_reported_not_judged() -> None:
    from pytest_ssdqual.qualify.consistency import consistency_reasons
    from pytest_ssdqual.report.rejudge import judge_record
    from pytest_ssdqual.results.record import TestRecord
    from pytest_ssdqual.thresholds.profile import ResolvedLimits
    from pytest_ssdqual.thresholds.verdict import Limit, Provenance

    wl = CATALOG["rand_write_4k_qd32"]
    prov = Provenance("t.yaml", "p", "test")
    limits = ResolvedLimits({
        (wl.id, "write.iops_consistency_pct"): Limit(wl.id, "write.iops_consistency_pct", 50,
                                                     None, None, prov),
        (wl.id, "write.iops_cov_pct"): Limit(wl.id, "write.iops_cov_pct", None, 10, None, prov),
        (wl.id, "write.seconds_below_50pct_of_mean"): Limit(
            wl.id, "write.seconds_below_50pct_of_mean", None, 0, None, prov),
    }, ())
    metrics = {"write.iops": 100.0, "write.iops_log_s": 3.0, "write.iops_cov_pct": 12.5,
               "write.seconds_below_50pct_of_mean": 0.0}
    plan = PROFILES["smoke"].consistency
    reasons = consistency_reasons(wl, metrics, plan)
    verdicts = {v.metric: v for v in judge(wl, metrics, limits, not_in_profile=reasons)}
    refused = verdicts["write.iops_consistency_pct"]
    assert refused.status == NOT_IN_PROFILE and not refused.failed
    assert "needs 1000 whole seconds" in (refused.reason or "")
    assert verdicts["write.iops_cov_pct"].status == "fail"  # 12.5 > 10
    assert verdicts["write.seconds_below_50pct_of_mean"].status == "pass"
    # ssdqual rejudge: the same verdicts from the stored record (its profile's plan)
    record = TestRecord("file:x", wl.id, "failed", profile="smoke", metrics=metrics)
    again = {v.metric: v.status for v in judge_record(wl, record, limits)}
    assert again == {m: v.status for m, v in verdicts.items()}
    assert again["write.iops_consistency_pct"] == NOT_IN_PROFILE
