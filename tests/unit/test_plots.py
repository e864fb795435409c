"""Charts (``plots``) and their inputs from stored data (``chart_data``): real PNGs, the limit
drawn where there is one, series read from fio's per-second logs in the project's units."""

from __future__ import annotations

import io
import itertools
import struct

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.image import imread

from pytest_ssdqual.fio.histogram import LatencyHistogram
from pytest_ssdqual.report import chart_data, chart_figure, exceedance, plots
from pytest_ssdqual.results.record import LimitVerdict
from pytest_ssdqual.results.stored import LOG_CSV_HEADER

#: The colour limits are drawn in (matplotlib's "crimson").
CRIMSON = (220 / 255, 20 / 255, 60 / 255)


def _size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def _crimson_pixels(png: bytes) -> int:
    pixels = imread(io.BytesIO(png))[:, :, :3]
    return int(np.sum(np.all(np.abs(pixels - np.array(CRIMSON)) < 0.08, axis=2)))


def test_over_time_chart_is_a_png_with_the_limit_drawn() -> None:
    panel = plots.Panel("bandwidth (MB/s)", {"read": ((1, 2, 3), (510.0, 498.0, 505.0))})
    without = plots.over_time_chart([panel], title="seq read")
    with_limit = plots.over_time_chart(
        [plots.Panel(panel.ylabel, panel.lines, {"read.bw_mbps >= 400": 400.0})],
        title="seq read")
    assert _size(without) == (900, 420)
    assert len(with_limit) > 15_000
    assert _crimson_pixels(without) == 0
    assert _crimson_pixels(with_limit) > 500  # a dashed line across the plot


def test_over_time_chart_has_one_panel_per_figure() -> None:
    lines = {"write": ((1.0, 2.0), (100.0, 90.0))}
    two = plots.over_time_chart(
        [plots.Panel("bandwidth (MB/s)", lines), plots.Panel("IOPS", lines)], title="t")
    assert _size(two) == (900, 580)
    with pytest.raises(ValueError, match="at least one panel"):
        plots.over_time_chart([], title="t")


def test_qd_scaling_chart_and_latency_percentile_chart() -> None:
    qd = plots.qd_scaling_chart({"4 KiB random read": [(32, 250_000.0), (1, 12_000.0)]},
                                ylabel="IOPS", title="QD scaling")
    lat = plots.latency_percentile_chart(
        {"rand_read_4k_qd1 read": {50: 80.0, 99: 160.0, 99.9: 400.0, 99.99: 900.0}},
        title="latency", limits={"read.lat_p99_us <= 400": (99.0, 400.0)})
    lat_no_limit = plots.latency_percentile_chart(
        {"rand_read_4k_qd1 read": {50: 80.0, 99: 160.0}}, title="latency")
    for png in (qd, lat, lat_no_limit):
        assert _size(png) == (900, 420) and len(png) > 15_000
    assert _crimson_pixels(lat) > 20 and _crimson_pixels(lat_no_limit) == 0


def test_nines_axis_spaces_p99_p999_p9999_evenly() -> None:
    assert plots.nines(99) == pytest.approx(2)
    assert plots.nines(99.9) == pytest.approx(3)
    assert plots.nines(99.99) == pytest.approx(4)
    with pytest.raises(ValueError, match="outside"):
        plots.nines(100)


def test_steady_state_chart_draws_the_window_fit_and_checks_the_window() -> None:
    values = [100.0, 80.0, 60.0, 52.0, 50.0, 51.0, 49.0, 50.0]
    png = plots.steady_state_chart(values, window_first_round=4, window_last_round=8,
                                   ylabel="IOPS", title="4 KiB random write", reached_round=8)
    assert _size(png) == (900, 420)
    assert _crimson_pixels(png) > 100  # the least-squares fit line
    with pytest.raises(ValueError, match="outside rounds 1..8"):
        plots.steady_state_chart(values, window_first_round=5, window_last_round=9,
                                 ylabel="IOPS", title="t")


def test_bar_charts_colour_bars_under_the_limit() -> None:
    phases = {"fresh": 90_000.0, "degraded": 21_000.0, "steady": 20_000.0, "recovered": 70_000.0}
    rec = plots.recovery_chart(phases, ylabel="IOPS", title="recovery",
                               limit=("recovered >= 63000", 63_000.0))
    fill = plots.fill_state_chart({"FOB": 500.0, "full": 300.0}, ylabel="MB/s", title="fill")
    empty = plots.bar_chart({}, ylabel="IOPS", title="none")
    for png in (rec, fill, empty):
        assert _size(png) == (900, 420)
    assert _crimson_pixels(rec) > 500 and _crimson_pixels(fill) == 0
    indianred = imread(io.BytesIO(rec))[:, :, :3]
    red_bars = np.sum(np.all(np.abs(indianred - np.array((205, 92, 92)) / 255) < 0.02, axis=2))
    assert red_bars > 1000  # degraded and steady are below the limit


# --- chart_data: stored data -> chart inputs -------------------------------------------------

#: fio 3.33 bandwidth log with log_avg_msec=1000 of a 70/30 mix (KiB/s), as attached (CSV).
BW_LOG = LOG_CSV_HEADER + "\n" + "\n".join([
    "1000, 97656, 0, 0, 0", "1000, 41851, 1, 0, 0",
    "2000, 97656, 0, 0, 0", "2000, 41851, 1, 0, 0",
    "3001, 48828, 0, 0, 0", "3001, 20925, 1, 0, 0",
])
IOPS_LOG = "1000, 24414, 0, 0, 0\n2000, 24414, 0, 0, 0\n3001, 12207, 0, 0, 0\n"


def _record(metric: str, limit: str, lo: float | None = None, hi: float | None = None
            ) -> LimitVerdict:
    return LimitVerdict("rand_rw70_4k_qd32", metric, 1.0, "pass", 10.0, limit=limit,
                         min=lo, max=hi, file="thresholds/x.yaml", line=3, profile="P")


def test_log_series_reads_both_directions_in_decimal_mbps() -> None:
    series = chart_data.log_series({"log_bw.1.log": BW_LOG, "log_iops.1.log": IOPS_LOG}, "bw")
    assert set(series) == {"read", "write"}
    t_s, read = series["read"]
    assert t_s == (1.0, 2.0, 3.001)
    assert read[0] == pytest.approx(97656 * 1024 / 1e6)  # 100.0 MB/s
    assert chart_data.log_series({"log_iops.1.log": IOPS_LOG}, "iops")["read"][1] == (
        24414, 24414, 12207)


def test_log_series_use_the_jobs_window_so_alternate_stalls_are_drawn_as_zero() -> None:
    """Lines at even seconds only (a drive completing no write every other second): read with
    the jobs' 1 s window, 30 points with a 0 in every odd second; inferred, the window was 2 s
    and the chart showed 15 points at full speed."""
    text = "".join(f"{t}, 390625, 1, 0, 0\n" for t in range(2000, 30001, 2000))
    t_s, write = chart_data.log_series({"log_bw.1.log": text}, "bw")["write"]
    assert t_s == tuple(float(t) for t in range(1, 31))
    assert write == pytest.approx((0.0, 400.0) * 15)
    assert len(chart_data.log_series({"log_bw.1.log": text}, "bw", window_ms=None)["write"][0]) \
        == 15


def test_throughput_panels_carry_the_limits_of_their_metric() -> None:
    verdicts = [_record("read.bw_mbps", "read.bw_mbps >= 90", lo=90),
                _record("total.iops", "total.iops >= 20000", lo=20000),
                _record("read.lat_p99_us", "read.lat_p99_us <= 2000", hi=2000)]
    panels = chart_data.throughput_panels(
        {"log_bw.1.log": BW_LOG, "log_iops.1.log": IOPS_LOG}, verdicts)
    assert [p.ylabel for p in panels] == ["bandwidth (MB/s)", "IOPS"]
    assert panels[0].limits == {"read.bw_mbps >= 90": 90.0}
    assert panels[1].limits == {"total.iops >= 20000": 20000.0}
    assert chart_data.throughput_panels({}, verdicts) == []
    assert chart_data.latency_limits(verdicts) == {"read.lat_p99_us <= 2000": (99.0, 2000.0)}


def test_percentile_curves_qd_curves_and_phase_bars_from_metrics() -> None:
    metrics = {"read.lat_p50_us": 80.0, "read.lat_p99_us": 160.0, "read.lat_p99_9_us": 400.0,
               "write.lat_p99_us": 300.0, "read.iops": 12000.0}
    assert chart_data.percentile_curves(metrics, "rand_read_4k_qd1") == {
        "rand_read_4k_qd1 read": {50.0: 80.0, 99.0: 160.0, 99.9: 400.0}}  # one write point: out
    curves = chart_data.qd_curves([
        ("rand_read_4k_qd1", {"read.iops": 12000.0}),
        ("rand_read_4k_qd32", {"read.iops": 250000.0}),
        ("rand_rw70_4k_qd32", {"read.iops": 1.0, "write.iops": 1.0, "total.iops": 2.0}),
        ("seq_read_128k_qd32", {"read.iops": 9000.0}),
    ])
    assert curves == {"4 KiB random read": [(1, 12000.0), (32, 250000.0)]}
    bars = chart_data.phase_bars({"recovered_iops": 70.0, "fresh_iops": 90.0,
                                  "degraded_iops": 21.0, "read.iops": 5.0, "recovery_ratio": 0.8})
    assert list(bars.items()) == [("fresh", 90.0), ("degraded", 21.0), ("recovered", 70.0)]


def test_charts_for_test_gives_every_chart_the_data_supports() -> None:
    verdicts = [_record("read.bw_mbps", "read.bw_mbps >= 90", lo=90)]
    metrics = {"read.lat_p50_us": 80.0, "read.lat_p99_us": 160.0, "fresh_iops": 9.0,
               "degraded_iops": 3.0}
    charts = chart_data.charts_for_test(title="t", logs={"log_bw.1.log": BW_LOG},
                                        metrics=metrics, verdicts=verdicts)
    assert list(charts) == [chart_data.CHART_OVER_TIME, chart_data.CHART_LATENCY,
                            chart_data.CHART_PHASES]
    assert all(png.startswith(b"\x89PNG") and len(png) > 10_000 for png in charts.values())
    assert chart_data.charts_for_test(title="t", logs={}, metrics={}, verdicts=[]) == {}


# --- methodology tests: charts from their stored tables --------------------------------------

ROUNDS_CSV = (
    "phase,round,state,idle_before_s,start_s,job,iops,bw_mbps,lat_mean_us,lat_p99_us,lat_max_us\n"
    "precondition,,FOB,,0.0,seq_fill,,500,,,\n"
    + "".join(f"steady state,{n},preconditioned,,{n * 10}.0,rand_write,{iops},{iops * 4096e-6:.1f},"
              "100,300,900\n"
              for n, iops in enumerate([90000, 60000, 45000, 41000, 40000, 40500, 39800], 1))
)
PER_SECOND_CSV = "t_s,phase,round,job,bw_mbps,iops,lat_mean_us\n" + "".join(
    [f"{t},sustained write,,seq,{bw},{bw * 8},\n"
     for t, bw in enumerate([1000] * 6 + [250] * 24, start=1)]
    + ["31,steady state,1,rand,160,40000,\n", "32,steady state,1,rand,150,37000,\n",
       "33,steady state,2,rand,155,38000,\n"]
)


def test_steady_state_inputs_take_the_window_from_the_verdict() -> None:
    reached = chart_data.steady_state_inputs(
        ROUNDS_CSV, {"steady_state_reached": 1.0, "steady_state_round": 7.0, "rounds": 7.0})
    assert reached is not None
    assert reached.values == [90000, 60000, 45000, 41000, 40000, 40500, 39800]
    assert (reached.window_first_round, reached.window_last_round, reached.reached_round) == (
        3, 7, 7)
    not_reached = chart_data.steady_state_inputs(
        ROUNDS_CSV, {"steady_state_reached": 0.0, "rounds": 7.0})
    assert not_reached is not None and not_reached.reached_round is None
    assert (not_reached.window_first_round, not_reached.window_last_round) == (3, 7)
    assert chart_data.steady_state_inputs(ROUNDS_CSV, {"rounds": 7.0}) is None


def test_fill_state_bars_split_the_written_data_in_equal_shares() -> None:
    bars = chart_data.fill_state_bars(PER_SECOND_CSV)
    # 6 s at 1000 MB/s (6 GB) then 24 s at 250 MB/s (6 GB): the first half of the data was
    # written at cache speed.
    assert list(bars) == ["0-20 %", "20-40 %", "40-60 %", "60-80 %", "80-100 %"]
    assert bars["0-20 %"] == 1000 and bars["20-40 %"] == 1000
    assert bars["60-80 %"] == 250 and bars["80-100 %"] == 250
    assert chart_data.fill_state_bars(PER_SECOND_CSV, phase="nothing") == {}


def test_methodology_panels_break_lines_between_rounds_and_draw_the_limits() -> None:
    verdicts = [_record("sustained_bw_mbps", "sustained_bw_mbps >= 200", lo=200)]
    bw, iops = chart_data.methodology_panels(PER_SECOND_CSV, verdicts)
    assert bw.limits == {"sustained_bw_mbps >= 200": 200.0} and iops.limits == {}
    t_s, values = bw.lines["steady state"]
    assert t_s[:2] == (31.0, 32.0) and values[:2] == (160.0, 150.0)
    assert np.isnan(values[2]) and values[3] == 155.0  # round 1 and round 2 are not joined
    charts = chart_data.methodology_charts(
        title="sustained", rounds_csv=ROUNDS_CSV, per_second_csv=PER_SECOND_CSV,
        metrics={"steady_state_reached": 1.0, "steady_state_round": 7.0, "fresh_iops": 9.0},
        verdicts=verdicts)
    assert list(charts) == [chart_data.CHART_OVER_TIME, chart_data.CHART_STEADY_STATE,
                            chart_data.CHART_FILL_STATE, chart_data.CHART_PHASES]
    assert all(_size(png) in ((900, 420), (900, 580)) for png in charts.values())


LONG_TITLE = ("128 KiB sequential write, QD32 -- /dev/disk/by-id/nvme-Samsung_SSD_980_PRO_2TB_"
              "S6B0NL0W123456 (emu-jmf667h-l85c-128g) firmware DEMO2 after 3 repeats of the "
              "whole suite on the lab's second host")
#: Capitals and digits are the widest text; a by-id path is one long unbroken word.
WIDE_TITLE = ("SAMSUNG MZQL23T8HCLS-00A07 (FW GDC5A02Q, S/N S64HNE0T901234) QD32 RANDOM WRITE "
              "/dev/disk/by-id/wwn-0x5002538e0000000000000000000000000000000000000000000000001")


def _draw_every_chart_kind(title: str) -> None:
    """One chart of each kind, with figures that have broken the layout: seven- and eight-digit
    values, narrow ranges on log axes (matplotlib then labels minor ticks "3.325x10^3"), a
    second y-axis, three panels."""
    from pytest_ssdqual.methodology.curves import Curve
    from pytest_ssdqual.report.pts_wsat_hir_charts import pts_charts

    t = list(range(1, 31))
    plots.over_time_chart([
        plots.Panel("bandwidth (MB/s)", {"write": (t, [2400.0 + i for i in t])},
                    {"write.bw_mbps >= 2000": 2000.0},
                    secondary=("temperature (°C)", (t, [40.0 + i for i in t]), {"WCTEMP": 70.0})),
        plots.Panel("IOPS", {"write": (t, [1_250_000.0 + i for i in t])}),
        plots.Panel("completion latency (µs)", {"write": (t, [12_345_678.0 * i for i in t])})],
        title=title)
    plots.qd_scaling_chart({"4 KiB random read": [(1, 12_000.0), (32, 1_250_000.0)]},
                           ylabel="IOPS", title=title)
    plots.qd_scaling_chart({"128 KiB sequential read": [(1, 3300.0), (8, 3400.0), (32, 3465.0)]},
                           ylabel="bandwidth (MB/s)", title=title)
    plots.latency_percentile_chart({"read": {50: 80.0, 99.99: 2_500_000.0}}, title=title,
                                   limits={"read.lat_p99_us <= 400": (99, 400.0)})
    plots.latency_percentile_chart({"read": {50: 100.0, 99: 110.0, 99.99: 120.0}}, title=title)
    plots.steady_state_chart([1_250_000.0, 1_100_000.0, 1_000_000.0], window_first_round=1,
                             window_last_round=3, ylabel="IOPS", title=title)
    plots.recovery_chart({"fresh": 1_250_000.0, "degraded": 210_000.0}, ylabel="IOPS",
                         title=title, limit=("floor", 630_000.0))
    exceedance.exceedance_chart(
        {"read": LatencyHistogram({100_000: 900, 200_000: 90, 400_000: 9, 800_000: 1})},
        title=title)
    wsat = Curve("wsat", "time_s", "s", "write.iops", "IOPS",
                 tuple((float(x), 400_000.0 - 1000 * x) for x in range(1, 60)))
    hir = [Curve(f"hir {name}", "time_s", "s", "write.iops", "IOPS",
                 tuple((start + float(x), iops) for x in range(10)))
           for name, start, iops in (("precondition", 0, 90_000.0), ("w5s", 10, 120_000.0),
                                     ("w5s baseline", 20, 90_000.0))]
    assert len(pts_charts([wsat, *hir], title=title)) == 2


@pytest.mark.parametrize("title", [LONG_TITLE, WIDE_TITLE])
def test_every_text_of_every_chart_kind_is_inside_the_image_and_panels_do_not_overlap(
    monkeypatch: pytest.MonkeyPatch, title: str,
) -> None:
    """The fixed margins (``chart_figure.fixed_layout``, no constrained layout) leave room for
    the tick labels, a three-line title, a second y-axis and the x label: each axes' tight
    box (ticks, labels, title) lies inside the image, and a panel's box ends above the next."""
    drawn: list[Figure] = []
    real = chart_figure.to_png

    def keep(fig: Figure) -> bytes:
        png = real(fig)
        drawn.append(fig)
        return png

    for module in (plots, exceedance, chart_figure):  # pts charts import it when they draw
        monkeypatch.setattr(module, "to_png", keep)
    _draw_every_chart_kind(title)
    assert len(drawn) == 10
    for fig in drawn:
        renderer = fig.canvas.get_renderer()
        width, height = fig.canvas.get_width_height()
        boxes = [ax.get_tightbbox(renderer) for ax in fig.axes]
        for ax, box in zip(fig.axes, boxes, strict=True):
            where = (ax.get_ylabel(), ax.get_title()[:30])
            assert box.x0 >= 0 and box.y0 >= 0, (where, box)
            assert box.x1 <= width and box.y1 <= height, (where, box, width, height)
        panels = [box for ax, box in zip(fig.axes, boxes, strict=True)
                  if ax.yaxis.get_label_position() == "left"]
        for upper, lower in itertools.pairwise(panels):
            assert upper.y0 > lower.y1, (upper, lower)


def test_value_axes_read_as_plain_or_short_numbers() -> None:
    """No offset or power of ten above an axis, no "3.325x10^3" beside one: plain numbers
    below ten million on linear axes, short ones (``12.3M``, ``3.4k``) beyond and on log axes."""
    fig, (ax,) = chart_figure.new_figure()
    ax.plot([1, 2, 3], [1_250_000, 1_250_010, 1_250_020])
    fig2, (log_ax,) = chart_figure.new_figure()
    log_ax.plot([1, 2], [3300, 3465])
    log_ax.set_yscale("log")
    chart_figure.to_png(fig)
    chart_figure.to_png(fig2)
    linear = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert linear and all(label.replace(".", "").isdigit() for label in linear), linear
    assert ax.yaxis.get_offset_text().get_text() == ""
    labels = [t.get_text() for t in [*log_ax.get_yticklabels(), *log_ax.get_yticklabels(
        minor=True)] if t.get_text()]
    assert labels and all(label.endswith("k") for label in labels), labels
    assert chart_figure.short_number(12_345_678) == "12.3M"
