"""The SNIA PTS IOPS, throughput and latency tests: their job lists, metric names and schedules,
the window tables and the latency figures from merged json+ bins (exact answers on synthetic
inputs), and the three run end to end with the fio stand-in (tests/fakefio.py) on a file target:
jobs, order, active range (fio offset=/size=), mixes, figures, steady state and tables. Real fio
on loop devices and an emulated drive: tests/e2e/test_pts_e2e.py."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_ssdqual.catalog import pts
from pytest_ssdqual.catalog.sweeps import not_in_profile
from pytest_ssdqual.catalog.workloads import CATALOG, MIB, PROFILES
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.fio.histogram import LatencyHistogram, plat_idx_to_val
from pytest_ssdqual.fio.result import DirectionResult, WorkloadResult
from pytest_ssdqual.methodology import pts_iops, pts_latency, pts_tables, pts_throughput
from pytest_ssdqual.methodology.base import Step
from pytest_ssdqual.methodology.pts_common import Point, Rounds
from pytest_ssdqual.methodology.registry import run_methodology
from pytest_ssdqual.methodology.steady_state import evaluate
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.report.pts_charts import pts_charts
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import FakeFio

SMOKE16 = replace(PROFILES["smoke"], span_bytes=16 * MIB, file_size_bytes=16 * MIB)


# -- job lists and names -----------------------------------------------------------------------

def test_the_full_iops_round_is_the_pts_matrix_in_pts_order() -> None:
    points = pts_iops.job_list(pts.schedule("pts_iops", "full"))
    assert len(points) == 56
    assert [p.name for p in points[:8]] == [
        "rand_read_1m", "rand_read_128k", "rand_read_64k", "rand_read_32k", "rand_read_16k",
        "rand_read_8k", "rand_read_4k", "rand_read_512"]
    assert [p.write_pct for p in points[::8]] == [0, 5, 35, 50, 65, 95, 100]
    assert points[-1].name == "rand_write_512"
    assert {p.qd for p in points} == {32}
    assert {p.rw for p in points} == {"randread", "randrw", "randwrite"}
    job = Point(35, 8192, 32).job(4 * MIB, 8 * MIB, 60).render(filename="/dev/x",
                                                               ioengine="libaio")
    assert "rw=randrw" in job and "rwmixread=65" in job and "bs=8192" in job
    assert "offset=4194304" in job and "size=8388608" in job and "iodepth=32" in job


def test_the_smoke_schedules_and_what_they_leave_out() -> None:
    assert [p.name for p in pts_iops.job_list(pts.schedule("pts_iops", "smoke"))] == [
        "rand_read_4k", "rand_w35_4k", "rand_write_4k"]
    assert [p.name for p in pts_latency.job_list(pts.schedule("pts_latency", "smoke"))] == [
        "rand_read_4k", "rand_write_4k"]
    assert [(p.name, p.rw, p.qd) for p in pts_throughput.job_list(1 * MIB)] == [
        ("seq_read_1m", "read", 32), ("seq_write_1m", "write", 32)]
    assert [p.name for p in pts_latency.job_list(pts.schedule("pts_latency", "full"))] == [
        f"rand_{m}_{b}" for m in ("read", "w35", "write") for b in ("8k", "4k", "512")]
    left = not_in_profile("pts_iops", "smoke")
    assert len(left) == 56 - 3 and "rand_w5_512.iops" in left and "rand_w35_4k.iops" not in left
    assert "R/W mixes 100/0, 65/35, 0/100; block sizes 4k" in left["rand_w5_512.iops"]
    assert not_in_profile("pts_iops", "full") == {}
    assert "seq_read_128k.bw_mbps" in not_in_profile("pts_throughput", "smoke")
    with pytest.raises(ValueError, match="RND 4 KiB 0/100"):
        pts_iops.job_list(pts.PtsSchedule((0, 100), (8192,), 1, 5))


def test_the_catalog_lists_every_pts_metric_with_its_units() -> None:
    iops = CATALOG["pts_iops"].metric_names()
    assert len(iops) == 56 + 5 and "rand_w35_4k.iops" in iops and "rand_read_512.iops" in iops
    lat = CATALOG["pts_latency"].metric_names()
    assert {"rand_read_4k.lat_p99_999_us", "rand_w35_8k.lat_mean_us", "rand_write_512.lat_max_us",
            "rand_read_4k.lat_tail_ios", "steady_state_reached"} <= set(lat)
    tp = CATALOG["pts_throughput"].metric_names()
    assert {"seq_write_128k.bw_mbps", "seq_read_1m.steady_state_reached", "seq_1m.rounds",
            "seq_write_1m.slope_excursion_pct", "steady_state_reached"} <= set(tp)
    assert CATALOG["pts_iops"].canonical_metric("rand_w35_4k.iops") == "rand_w35_4k.iops"


# -- tables and latency figures on synthetic rounds ------------------------------------------

def _rounds(values: list[float]) -> Rounds:
    return Rounds(steps=[{} for _ in values], values={"rand_write_4k.iops": values},
                  verdicts={"rand_write_4k.iops": evaluate(values)})


def test_the_rounds_and_steady_state_tables() -> None:
    # rounds 1-2 fall; 2-6 hold within the rule: window 2-6, average 1000
    rounds = _rounds([2000, 1000, 1050, 950, 1000, 1000])
    assert pts_tables.rounds_csv(rounds).splitlines() == [
        "round,rand_write_4k.iops,in_window_rand_write_4k.iops",
        "1,2000,0", "2,1000,1", "3,1050,1", "4,950,1", "5,1000,1", "6,1000,1"]
    [row] = pts_tables.steady_csv(rounds, {"rand_write_4k.iops": "IOPS"}).splitlines()[1:]
    # data excursion (1050 - 950) / 1000 = 10 %; slope -5/round x 4 / 1000 = 2 %
    assert row == "rand_write_4k.iops,IOPS,6,1,6,2,6,1000,10,20,2,10,-5"


def _direction(name: str, mean_us: float, max_us: float, bins: dict[int, int]) -> DirectionResult:
    hist = LatencyHistogram.from_bins({str(plat_idx_to_val(i)): n for i, n in bins.items()})
    total = hist.total
    return DirectionResult(name, total * 4096, total, 1000.0, 4.0, mean_us, None, None, None,
                           None, max_us, lat_tail_ios=total, histogram=hist)


def _step(*directions: DirectionResult) -> Step:
    result = WorkloadResult("fio-3.33", ("x",), 1000, {d.direction: d for d in directions}, 1,
                            False, "", False)
    job = Point(35, 4096, 1).job(0, MIB, 1)
    return Step("PTS round", 1, "preconditioned", job, SimpleNamespace(result=result), 0.0, {})


def test_latency_of_a_mix_over_the_window_from_merged_bins() -> None:
    # 2 rounds x (read, write): 600,000 I/Os in bucket 600, 399,980 in 700, 20 in 900:
    # p99.999 of 1,000,000 I/Os is the 999,990th: in bucket 900 (bucket 700 ends at 999,980)
    steps = [_step(_direction("read", 10.0, 50.0, {600: 200_000, 700: 100_000}),
                   _direction("write", 20.0, 80.0, {600: 100_000, 700: 99_990, 900: 10})),
             _step(_direction("read", 10.0, 60.0, {600: 200_000, 700: 100_000}),
                   _direction("write", 30.0, 70.0, {600: 100_000, 700: 99_990, 900: 10}))]
    figures, why = pts_latency.window_latency(steps)
    # mean over all I/Os: (300000 x 10 x 2 + 200000 x 20 + 200000 x 30) / 1,000,000
    assert figures["lat_mean_us"] == pytest.approx(16.0)
    assert figures["lat_max_us"] == 80.0
    assert figures["lat_tail_ios"] == 1_000_000
    assert figures["lat_p99_999_us"] == plat_idx_to_val(900) / 1000
    assert why == {}
    # one round alone: 500,000 I/Os, too few for five nines (needs 1,000,000)
    figures, why = pts_latency.window_latency(steps[:1])
    assert "lat_p99_999_us" not in figures and figures["lat_tail_ios"] == 500_000
    assert why == {"lat_p99_999_us": "not measured: p99.999 needs >= 1,000,000 I/Os, the 1 "
                                     "window rounds had 500,000"}


# -- the three tests with the fio stand-in -------------------------------------------------------

@pytest.fixture
def session(tmp_path: Path, fake_fio: FakeFio) -> Iterator[QualSession]:
    wrapper = tmp_path / "fio"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {fake_fio.path} \"$@\"\n")
    wrapper.chmod(0o755)
    limits = tmp_path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    options = SessionOptions(specs=(), confirmed_serials=(), profile=SMOKE16,
                             thresholds=ThresholdSet.load([limits]), fio_bin=str(wrapper),
                             pts_active_range_pct=(25.0, 75.0))
    qs = QualSession.create(options, tmp_path / "scratch")
    (tmp_path / "scratch").mkdir()
    yield qs
    qs.close()


def _jobs(fake_fio: FakeFio) -> list[str]:
    return [c["job"] for c in fake_fio.calls() if c["job"]]


def _section(job: str) -> str:
    return next(line[1:-1] for line in job.splitlines()
                if line.startswith("[") and line != "[global]")


def test_pts_iops_runs_its_rounds_inside_the_active_range(
        session: QualSession, fake_fio: FakeFio, tmp_path: Path) -> None:
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    result = run_methodology("pts_iops", session, ctx, tmp_path / "work")
    jobs = _jobs(fake_fio)
    names = [_section(j) for j in jobs]
    # precondition, then 5 rounds of the 3 smoke points (constant figures: steady at round 5)
    assert names == ["precondition"] + ["rand_read_4k", "rand_w35_4k", "rand_write_4k"] * 5
    for job in jobs:  # 25:75 of the 16 MiB span: 8 MiB at 4 MiB
        assert "offset=4194304" in job and "size=8388608" in job, job
    assert "io_size=16777216" in jobs[0]  # 2x the active range
    assert "rwmixread=65" in jobs[2] and "iodepth=32" in jobs[2]
    m = result.metrics
    # the stand-in's 50,000 IOPS per direction: the mix does both
    assert (m["rand_read_4k.iops"], m["rand_w35_4k.iops"], m["rand_write_4k.iops"]) == (
        50000, 100000, 50000)
    assert (m["steady_state_reached"], m["steady_state_round"], m["rounds"]) == (1, 5, 5)
    assert m["data_excursion_pct"] == 0
    assert set(result.tables) == {"pts-setup.txt", "pts-rounds.csv", "pts-steady-state.csv",
                                  "pts-window.csv", "pts-iops-matrix.csv"}
    assert result.tables["pts-iops-matrix.csv"].splitlines() == [
        "rw_mix,4k", "100/0,50000", "65/35,100000", "0/100,50000"]
    assert "active range: 25:75 % of the span = 8,388,608 bytes at offset 4,194,304" in \
        result.tables["pts-setup.txt"]
    assert (tmp_path / "work" / "pts-window.csv").read_text() == result.tables["pts-window.csv"]
    assert "rand_w5_512.iops" in result.not_in_profile
    charts = pts_charts(result.tables, title="t")
    assert set(charts) == {"chart: PTS steady state rand_write_4k.iops",
                           "chart: PTS IOPS by block size"}
    assert all(png.startswith(b"\x89PNG") for png in charts.values())


def test_pts_throughput_tracks_read_and_write(session: QualSession, fake_fio: FakeFio,
                                              tmp_path: Path) -> None:
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    result = run_methodology("pts_throughput", session, ctx, tmp_path / "work")
    names = [_section(j) for j in _jobs(fake_fio)]
    assert names == ["precondition"] + ["seq_read_1m", "seq_write_1m"] * 5
    m = result.metrics
    assert m["seq_read_1m.bw_mbps"] == m["seq_write_1m.bw_mbps"] == 500  # the stand-in's
    assert m["seq_read_1m.steady_state_round"] == m["seq_write_1m.steady_state_round"] == 5
    assert m["steady_state_reached"] == 1 and m["seq_1m.rounds"] == 5
    assert result.tables["pts-window.csv"].splitlines()[1:] == [
        "seq_read_1m,1048576,read,500,1-5", "seq_write_1m,1048576,write,500,1-5"]
    assert set(pts_charts(result.tables, title="t")) == {
        "chart: PTS steady state seq_read_1m.bw_mbps",
        "chart: PTS steady state seq_write_1m.bw_mbps", "chart: PTS throughput"}


def test_pts_latency_merges_the_window_bins(session: QualSession, fake_fio: FakeFio,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    monkeypatch.setenv("FAKEFIO_BINS", "1")
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    result = run_methodology("pts_latency", session, ctx, tmp_path / "work")
    jobs = _jobs(fake_fio)
    assert [_section(j) for j in jobs] == ["precondition"] + ["rand_read_4k",
                                                              "rand_write_4k"] * 5
    assert all("iodepth=1" in j for j in jobs[1:])
    m = result.metrics
    # the stand-in's 50,000 IOPS for 0.5 s: 25,000 I/Os a round, 125,000 in the window
    assert m["rand_read_4k.lat_tail_ios"] == 125_000
    assert "rand_read_4k.lat_p99_999_us" not in m
    assert result.unreached["rand_read_4k.lat_p99_999_us"] == (
        "not measured: p99.999 needs >= 1,000,000 I/Os, the 5 window rounds had 125,000")
    assert m["rand_write_4k.lat_max_us"] == pytest.approx(800, rel=0.02)  # 4x the p99
    assert m["steady_state_reached"] == 1


def test_an_active_range_without_a_whole_mib_is_a_config_error(
        session: QualSession, fake_fio: FakeFio, tmp_path: Path) -> None:
    narrow = replace(session.options, pts_active_range_pct=(50.0, 53.0))  # 0.48 MiB of 16
    session.options = narrow
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    with pytest.raises(ConfigError, match="holds no whole 1048576-byte block") as err:
        run_methodology("pts_latency", session, ctx, tmp_path / "work")
    assert err.value.key == "--pts-active-range"
    assert _jobs(fake_fio) == []  # refused before any I/O


def test_the_matrix_tests_open_with_one_start(session: QualSession, fake_fio: FakeFio,
                                              tmp_path: Path) -> None:
    """``pts_common.start``: schedule, points, active area, the ETA's plan, purge and the
    workload-independent preconditioning -- what the IOPS and latency tests both open with."""
    from pytest_ssdqual.methodology.base import MethodRun
    from pytest_ssdqual.methodology.pts_common import start

    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    mr = MethodRun(session, ctx, tmp_path / "work", "pts_latency")
    st = start(mr, "pts_latency", pts_latency.job_list)
    assert [p.name for p in st.points] == ["rand_read_4k", "rand_write_4k"]
    assert (st.offset_bytes, st.length_bytes, st.active.text) == (4 * MIB, 8 * MIB, "25:75")
    assert [_section(j) for j in _jobs(fake_fio)] == ["precondition"]  # nothing else yet
    assert st.wipc.job.io_bytes == 16 * MIB  # 2x the active range
    assert st.record.describe().startswith("purge: ")
    # the ETA still plans the 2 points x 5 rounds of 0.5 s (the purge and preconditioning done)
    assert mr.clock.eta_s() == pytest.approx(2 * 5 * (0.5 + 0.5))  # + FIO_OVERHEAD_S each
    assert st.schedule_text(1) == ("2 points per round (R/W mixes 100/0, 0/100 x block sizes "
                                   "4k), random, TC1 x QD1, 0.5 s each, at most 5 rounds")
    assert st.area_note == "active range 25:75: 8,388,608 bytes at offset 4,194,304"
