"""The SNIA PTS WSAT and HIR analyses on built series with known answers, their schedules and
their charts (no fio)."""

from __future__ import annotations

import pytest

from pytest_ssdqual.catalog.pts_wsat_hir import (
    HIR_METRICS,
    PTS_WAITS_S,
    WsatPlan,
    hir_plan,
    wsat_plan,
)
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.series import Series
from pytest_ssdqual.methodology.pts_hir_analysis import (
    PRECONDITION,
    HirPoint,
    baseline_segment,
    hir_report,
    segment_means,
    stretches,
)
from pytest_ssdqual.methodology.pts_wsat_analysis import wsat_intervals, wsat_report

SECONDS = tuple(float(t) for t in range(1, 13))


def _iops(values: list[float], t_s: tuple[float, ...] | None = None) -> Series:
    return Series(t_s or tuple(float(t) for t in range(1, len(values) + 1)), tuple(values),
                  "IOPS")


# --- WSAT ---------------------------------------------------------------------------------------

def test_wsat_seconds_are_summed_into_intervals_with_their_ios_and_tgbw() -> None:
    # 12 s: 1,000 IOPS for 4 s, 2,000 for 4 s, 500 for 4 s -> three 4 s intervals
    series = _iops([1000] * 4 + [2000] * 4 + [500] * 4)
    out = wsat_intervals(series, 4.0, bs_bytes=4096)
    assert [i.iops for i in out] == [1000, 2000, 500]
    assert [i.end_s for i in out] == [4, 8, 12]
    assert [i.written_bytes for i in out] == [4000 * 4096, 8000 * 4096, 2000 * 4096]
    assert out[-1].tgbw_gb == pytest.approx(14000 * 4096 / 1e9)


def test_an_interval_iops_is_its_ios_over_its_seconds_and_a_short_last_one_is_left_out() -> None:
    # windows of 1 s and one stall (0): interval 1 = (3000 + 0 + 1000) / 3 s; the last
    # interval has 1 s of 3 (under half): left out
    series = _iops([3000, 0, 1000, 600, 600, 600, 900])
    out = wsat_intervals(series, 3.0, bs_bytes=4096)
    assert [i.iops for i in out] == pytest.approx([4000 / 3, 600])
    assert len(out) == 2


def test_the_bandwidth_log_gives_the_bytes_when_there_is_one() -> None:
    iops = _iops([1000, 1000])
    bw = Series((1.0, 2.0), (8.192, 4.096), "MB/s")  # 8,192,000 and 4,096,000 bytes
    out = wsat_intervals(iops, 1.0, bs_bytes=4096, bw=bw)
    assert [i.written_bytes for i in out] == pytest.approx([8_192_000, 4_096_000])
    with pytest.raises(ValueError, match="bandwidth log of 1 windows for 2"):
        wsat_intervals(iops, 1.0, bs_bytes=4096, bw=Series((1.0,), (1.0,), "MB/s"))


def test_wsat_figures_fob_steady_cliff_and_multiple() -> None:
    # 10 intervals of 1 s: FOB 10,000, then a cliff to 3,000 at interval 4, saturated 2,000
    values = [10000, 9000, 8000, 3000, 2500, 2000, 2000, 2000, 2000, 2000]
    plan = WsatPlan(multiple=4, max_s=10, interval_s=1, fob_intervals=1, steady_intervals=5,
                    cliff_pct=50)
    intervals = wsat_intervals(_iops(values), 1.0, bs_bytes=4096)
    area = 100 * 4096
    report = wsat_report(intervals, plan, area)
    m = report.metrics()
    assert m["iops_fob"] == 10000
    assert m["iops_steady"] == 2000
    assert m["steady_fob_ratio"] == 0.2
    # fell below 5,000 in interval 4: the GB written before it (27,000 I/Os)
    assert m["cliff_tgbw_gb"] == pytest.approx(27000 * 4096 / 1e9)
    assert m["tgbw_gb"] == pytest.approx(sum(values) * 4096 / 1e9)
    assert m["written_multiple"] == pytest.approx(sum(values) / 100)
    assert report.unreached() == {}
    time_curve, tgbw_curve = report.curves()
    assert (time_curve.x_name, tgbw_curve.x_name) == ("time_s", "tgbw_gb")
    assert time_curve.points[3] == (4.0, 3000)
    assert tgbw_curve.points[0] == pytest.approx((10000 * 4096 / 1e9, 10000))
    assert "FOB 10,000 IOPS, saturated 2,000 IOPS" in report.describe()


def test_a_drive_that_never_falls_has_no_cliff_and_says_why() -> None:
    plan = WsatPlan(interval_s=1, fob_intervals=2, steady_intervals=3)
    report = wsat_report(wsat_intervals(_iops([100, 300, 150, 200, 250]), 1.0, bs_bytes=4096),
                         plan, 4096, written_bytes=2e9)
    m = report.metrics()
    assert m["iops_fob"] == 200 and m["iops_steady"] == 200  # (100+300)/2, (150+200+250)/3
    assert "cliff_tgbw_gb" not in m
    assert m["tgbw_gb"] == 2.0  # fio's own bytes, not the intervals'
    assert report.unreached() == {
        "cliff_tgbw_gb": "no 1 s interval fell below 50 % of FOB (100 IOPS) in 2 GB written"}


def test_wsat_refuses_what_it_cannot_judge() -> None:
    with pytest.raises(FioOutputError, match="no line"):
        wsat_intervals(_iops([]), 1.0, bs_bytes=4096)
    with pytest.raises(ValueError, match="interval_s"):
        wsat_intervals(_iops([1.0]), 0, bs_bytes=4096)
    with pytest.raises(ValueError, match="no WSAT interval"):
        wsat_report((), WsatPlan(), 4096)


# --- HIR ----------------------------------------------------------------------------------------

def test_a_baseline_run_is_cut_into_stretches_on_the_test_time_line() -> None:
    # 10 one-second windows from t=100 s: 5 s stretches of 1,000 and 3,000 IOPS
    series = _iops([1000] * 5 + [2000, 4000, 3000, 3000, 3000])
    points = stretches(series, 5.0, start_s=100.0, segment="w5s baseline")
    assert points == [HirPoint(105.0, "w5s baseline", 1000), HirPoint(110.0, "w5s baseline", 3000)]
    # shorter stretches than the log's windows: one per window; a short last one left out
    assert [p.iops for p in stretches(_iops([7, 9]), 0.25, start_s=0, segment="x")] == [7, 9]
    assert len(stretches(_iops([5, 5, 5, 5, 5, 5]), 5.0, start_s=0, segment="x")) == 1
    with pytest.raises(ValueError, match="chunk_s"):
        stretches(series, 0, start_s=0, segment="x")


def _hir_points() -> list[HirPoint]:
    """A built HIR time line: precondition steady at 1,000 (last 5 rounds), then per wait state
    two bursts and two baseline stretches."""
    pts = [HirPoint(float(t), PRECONDITION, v)
           for t, v in enumerate([5000, 3000, 1000, 1000, 1000, 1000, 1000], start=1)]
    bursts = {5.0: (1000, 1200), 10.0: (1800, 2200), 15.0: (2400, 2600), 25.0: (3000, 3000),
              50.0: (4000, 4400)}
    t = 10.0
    for wait, (a, b) in bursts.items():
        pts += [HirPoint(t + 1, f"w{wait:g}s", a), HirPoint(t + 2, f"w{wait:g}s", b)]
        pts += [HirPoint(t + 3, baseline_segment(wait), 1200),
                HirPoint(t + 4, baseline_segment(wait), 800)]
        t += 10
    return pts


def test_hir_segments_their_means_and_the_ratio_to_the_baseline_before_each() -> None:
    points = _hir_points()
    assert list(segment_means(points))[:4] == [PRECONDITION, "w5s", "w5s baseline", "w10s"]
    report = hir_report(points, [w / 20 for w in PTS_WAITS_S])
    m = report.metrics()
    assert m["baseline_iops"] == 1000  # the last 5 preconditioning rounds
    assert m["w5s_iops"] == 1100 and m["w5s_recovery_ratio"] == pytest.approx(1.1)
    assert m["w5s_rebaseline_iops"] == 1000
    # the next wait states are judged against the return to baseline before them (1,000)
    assert m["w10s_iops"] == 2000 and m["w10s_recovery_ratio"] == pytest.approx(2.0)
    assert m["w50s_iops"] == 4200 and m["w50s_recovery_ratio"] == pytest.approx(4.2)
    assert set(m) == set(HIR_METRICS) - {"steady_state_reached"}
    assert [ws.bursts for ws in report.states] == [2] * 5
    assert report.states[0].wait_s == 0.25
    table = "\n".join(report.table())
    assert "  50 s  (2.5 s)       2       4,200          1,000   4.20            1,000" in table


def test_hir_curves_one_per_segment_and_the_chart() -> None:
    from pytest_ssdqual.report.pts_wsat_hir_charts import CHART_HIR, pts_charts

    report = hir_report(_hir_points(), PTS_WAITS_S)
    curves = report.curves()
    assert [c.name for c in curves][:3] == ["hir precondition", "hir w5s", "hir w5s baseline"]
    assert len(curves) == 11 and {c.x_name for c in curves} == {"time_s"}
    charts = pts_charts(curves, title="HIR test")
    assert list(charts) == [CHART_HIR] and charts[CHART_HIR].startswith(b"\x89PNG")


def test_a_hir_without_preconditioning_has_no_baseline() -> None:
    with pytest.raises(ValueError, match="no preconditioning round"):
        hir_report([HirPoint(1, "w5s", 100)], PTS_WAITS_S)


def test_a_hir_cut_short_reports_the_wait_states_it_ran() -> None:
    points = [p for p in _hir_points() if not p.segment.startswith(("w15s", "w25s", "w50s"))]
    m = hir_report(points, PTS_WAITS_S).metrics()
    assert "w10s_iops" in m and "w15s_iops" not in m


# --- schedules, catalog, charts -----------------------------------------------------------------

def test_the_schedules_per_profile() -> None:
    full, smoke = hir_plan("full"), hir_plan("smoke")
    assert (full.burst_s, full.waits_s, full.cycles, full.baseline_cycles) == (
        5.0, (5.0, 10.0, 15.0, 25.0, 50.0), 360, 360)
    # the PTS's bursts and waits: 46,800 s of cycles + 5 x 1,800 s baselines + 25 rounds
    assert full.duration_s() == 46800 + 9000 + 25 * 60
    assert smoke.waits_s == (0.5, 1.0, 1.5, 2.5, 5.0) and smoke.cycles == 2
    assert wsat_plan("full") == WsatPlan(multiple=4, max_s=86400, interval_s=60)
    assert wsat_plan("smoke").max_s == 8 and wsat_plan("a-lab-profile") == wsat_plan("full")
    with pytest.raises(ValueError, match="5 wait states"):
        type(full)(waits_s=(1.0,))


def test_the_catalog_lists_both_tests_with_their_metrics() -> None:
    wsat, hir = CATALOG["pts_wsat"], CATALOG["pts_hir"]
    assert (wsat.rw, wsat.bs_bytes, wsat.iodepth, wsat.numjobs) == ("randwrite", 4096, 32, 4)
    assert "iops_steady" in wsat.metric_names() and "w10s_recovery_ratio" in hir.metric_names()
    assert wsat.canonical_metric("iops_fob") == "iops_fob"


def test_wsat_charts_vs_time_and_tgbw() -> None:
    from pytest_ssdqual.report.pts_wsat_hir_charts import (
        CHART_WSAT_TGBW,
        CHART_WSAT_TIME,
        pts_charts,
    )

    report = wsat_report(wsat_intervals(_iops([900, 800, 400, 300]), 1, bs_bytes=4096),
                         WsatPlan(interval_s=1), 4096)
    charts = pts_charts(report.curves(), title="WSAT")
    assert sorted(charts) == sorted([CHART_WSAT_TIME, CHART_WSAT_TGBW])
    assert all(png.startswith(b"\x89PNG") and len(png) > 5000 for png in charts.values())
    assert pts_charts([], title="x") == {}
