"""The sweep and preset tests without a drive: parametric fio jobs, the
figures they derive (saturation QD, QD1-4 average, delay ratio, size ratio), the sizes they
skip, their catalog metrics in threshold files, and whole runs with the fio stand-in
(tests/fakefio.py) on a file target. Real fio on loop devices: tests/e2e/test_e2e_sweeps.py."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, KIB, MIB, PROFILES
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.errors import ConfigErrors, FioOutputError
from pytest_ssdqual.methodology.base import judge_result
from pytest_ssdqual.methodology.curves import curves_from_json
from pytest_ssdqual.methodology.mixed import copy_job, copy_timing
from pytest_ssdqual.methodology.params import FioParams
from pytest_ssdqual.methodology.progress import RecordingObserver
from pytest_ssdqual.methodology.registry import run_methodology
from pytest_ssdqual.methodology.sweep import saturation_x
from pytest_ssdqual.methodology.transfer_size import sizes_for
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.results.gated_metrics import has_direction, is_higher_better
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import FakeFio

# -- parametric jobs ---------------------------------------------------------------------------


@pytest.mark.parametrize("params, job_id, title", [
    (FioParams("randread", 4 * KIB, 32), "rand_read_4k_qd32", "4 KiB random read, QD32"),
    (FioParams("randrw", 4 * KIB, 4, write_pct=30), "rand_w30_4k_qd4",
     "4 KiB random mixed 70/30 read/write, QD4"),
    (FioParams("write", MIB, 8, 16), "seq_write_1m_qd8_t16",
     "1 MiB sequential write, QD8, 16 threads"),
    (FioParams("read", 512, 4), "seq_read_512_qd4", "512 B sequential read, QD4"),
])
def test_parametric_ids_follow_the_workload_naming(params: FioParams, job_id: str,
                                                   title: str) -> None:
    assert params.id == job_id
    assert params.title == title


def test_parametric_job_renders_threads_mix_and_ramp() -> None:
    text = FioParams("randrw", 4 * KIB, 4, 16, write_pct=30).job(
        64 * MIB, runtime_s=10, ramp_time_s=2).render(filename="/dev/x", ioengine="libaio")
    assert "\n[rand_w30_4k_qd4_t16]\nrw=randrw\nbs=4096\niodepth=4\nnumjobs=16\n" in text
    assert "rwmixread=70" in text  # fio's read share = 100 - the write share
    assert "time_based=1" in text and "runtime=10s" in text and "ramp_time=2s" in text
    assert f"size={64 * MIB}" in text
    job = FioParams("read", MIB, 8).job(64 * MIB, runtime_s=10, ramp_time_s=2)
    assert job.expected_runtime_s == 10 and job.timeout_s(30) == 42  # ramp counted
    sized = FioParams("read", MIB, 8).job(64 * MIB, io_bytes=64 * MIB, runtime_s=1,
                                          ramp_time_s=2)
    text = sized.render(filename="/f", ioengine="psync")
    assert f"io_size={64 * MIB}" in text and "ramp_time" not in text  # no ramp when sized
    assert "rwmixread" not in text and "numjobs=1" in text


@pytest.mark.parametrize("kwargs, message", [
    ({"rw": "randomread", "bs_bytes": 4096}, "rw='randomread' is not a fio pattern"),
    ({"rw": "read", "bs_bytes": 1000}, "bs_bytes=1000: use a multiple of 512"),
    ({"rw": "read", "bs_bytes": 4096, "iodepth": 0}, "iodepth=0: use 1 or more"),
    ({"rw": "randrw", "bs_bytes": 4096}, "give write_pct"),
    ({"rw": "read", "bs_bytes": 4096, "write_pct": 30}, "only applies to a mixed rw"),
    ({"rw": "rw", "bs_bytes": 4096, "write_pct": 130}, "write_pct=130: use 0-100"),
])
def test_parametric_bad_parameters_name_the_parameter(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        FioParams(**kwargs)


# -- derived figures ---------------------------------------------------------------------------


def test_saturation_is_the_smallest_qd_reaching_90_pct_of_the_maximum() -> None:
    points = [(1, 10_000), (2, 19_000), (4, 30_000), (8, 31_000), (16, 32_000), (32, 31_500)]
    assert saturation_x(points, 0.9) == 4  # 30,000 >= 0.9 x 32,000 = 28,800
    assert saturation_x(points, 0.99) == 16
    # no positive figure: NaN (not measured), never a made-up QD; NaN and 0 points are ignored
    assert math.isnan(saturation_x([(1, float("nan")), (2, 0.0)], 0.9))
    assert math.isnan(saturation_x([], 0.9))
    assert saturation_x([(1, float("nan")), (2, 0.0), (4, 900.0), (8, 1000.0)], 0.9) == 4


def test_delay_ratio_of_a_copy() -> None:
    # alone 500 MB/s each (0.2 s for 100 MB); together 250 MB/s each (0.4 s): ratio 1
    timing = copy_timing(100_000_000, read_alone_mbps=500, write_alone_mbps=500,
                         copy_read_mbps=250, copy_write_mbps=250)
    assert (timing.copy_s, timing.read_s, timing.write_s) == pytest.approx((0.4, 0.2, 0.2))
    assert timing.delay_ratio == pytest.approx(1.0)
    # the slower stream sets the copy time: 100 MB at 160 MB/s = 0.625 s over 0.4 s
    slow = copy_timing(100_000_000, read_alone_mbps=500, write_alone_mbps=500,
                       copy_read_mbps=400, copy_write_mbps=160)
    assert slow.delay_ratio == pytest.approx(1.5625)
    with pytest.raises(ValueError, match="copy read: bandwidth 0"):
        copy_timing(1, read_alone_mbps=1, write_alone_mbps=1, copy_read_mbps=0,
                    copy_write_mbps=1)


def test_copy_job_runs_both_streams_in_one_fio_run() -> None:
    text = copy_job("copy", ("read", "write"), 64 * MIB, 10).render(filename="/dev/x",
                                                                  ioengine="io_uring")
    read = text[text.index("[copy_read]"):text.index("[copy_write]")]
    write = text[text.index("[copy_write]"):]
    assert "rw=read" in read and "offset=0\n" in read and f"size={64 * MIB}" in read
    assert "rw=write" in write and f"offset={64 * MIB}" in write and f"size={64 * MIB}" in write
    assert f"size={128 * MIB}" in text[:text.index("[copy_read]")]  # global span: both areas
    assert "runtime=10s" in text and "time_based" not in text  # size based, capped
    alone = copy_job("copy_read_only", ("read",), 64 * MIB, 10)
    assert not alone.writes and "[copy_write]" not in alone.render(filename="/f",
                                                                   ioengine="psync")


@pytest.mark.parametrize("sector, first, skipped", [
    (512, 512, []), (4096, 4096, [512, 1024, 2048]),
])
def test_transfer_sizes_below_the_logical_sector_are_skipped(
    sector: int, first: int, skipped: list[int]
) -> None:
    measured, left_out = sizes_for(sector)
    assert measured[0] == first and measured[-1] == 8 * MIB and left_out == skipped
    assert len(measured) + len(left_out) == 15


# -- catalog and threshold files ---------------------------------------------------------------


def test_threshold_files_accept_sweep_metrics_and_name_a_misspelt_one(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("""\
version: 1
profiles:
  - name: sweeps
    match: {kind: file}
    source: test
    limits:
      qd_scaling:
        rand_read_4k_qd1_4_avg.read.iops: {min: 100}
        rand_read_4k.saturation_qd: {max: 32}
      mixed_sweep: {delay_ratio: {max: 2}, rand_4k_qd4_w30.total.iops: {min: 100}}
      transfer_size_sweep: {seq_write_1m.write.bw_mbps: {min: 10}}
      client_presets: {seq1m_q8t1_100mib.write.bw_mbps: {min: 10}}
""")
    assert ThresholdSet.load([good])
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("seq_write_1m.write", "seq_write_1mb.write"))
    with pytest.raises(ConfigErrors) as info:
        ThresholdSet.load([bad])
    assert "unknown metric 'seq_write_1mb.write.bw_mbps' for transfer_size_sweep" in str(
        info.value)
    assert "seq_write_1m.write.bw_mbps" in str(info.value)  # the fix names the right one


def test_regression_direction_of_sweep_metrics() -> None:
    # every catalog metric's direction: tests/unit/test_metric_directions.py
    assert is_higher_better("rand_read_4k_qd8.read.iops")
    assert is_higher_better("seq1m_q8t1.write.size_ratio")
    assert not has_direction("rand_read_4k.saturation_qd")
    assert not has_direction("rand_read_4k.scaling_ratio")
    assert not is_higher_better("delay_ratio") and not is_higher_better(
        "seq1m_q8t1_100mib.read.lat_p99_us")


# -- whole runs with the fio stand-in ----------------------------------------------------------

#: The fio stand-in's IOPS by run: the prefill is run 1, so the six QDs of every pattern get
#: 1000, 2000, 4000, 9000, 9700, 9800 (QD1 ... QD32).
QD_IOPS = "9800,1000,2000,4000,9000,9700"


@pytest.fixture
def session(tmp_path: Path, fake_fio: FakeFio) -> Iterator[QualSession]:
    wrapper = tmp_path / "fio"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {fake_fio.path} \"$@\"\n")
    wrapper.chmod(0o755)
    limits = tmp_path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    options = SessionOptions(specs=(), confirmed_serials=(), profile=PROFILES["smoke"],
                             thresholds=ThresholdSet.load([limits]), fio_bin=str(wrapper))
    qs = QualSession.create(options, tmp_path / "scratch")
    (tmp_path / "scratch").mkdir()
    yield qs
    qs.close()


def _sections(fake_fio: FakeFio) -> list[str]:
    return [line[1:-1] for call in fake_fio.calls() for line in call["job"].splitlines()
            if line.startswith("[") and line != "[global]"]


def _run(session: QualSession, tmp_path: Path, workload_id: str, observer=None,
         sleep=lambda seconds: None):
    """Run ``workload_id`` on the file target ``drive.img`` with the fio stand-in; its idle
    periods are passed to ``sleep`` (by default not waited: the stand-in's figures do not
    depend on time)."""
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    return run_methodology(workload_id, session, ctx, tmp_path / "work", observer=observer,
                           sleep=sleep)


def test_qd_scaling_runs_every_pattern_at_every_qd_and_derives_the_curve_figures(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_IOPS", QD_IOPS)
    observer = RecordingObserver()
    result = _run(session, tmp_path, "qd_scaling", observer)
    # each progress line names its point, not only the curve
    assert [e.phase for e in observer.events][1:4] == [
        "rand_read_4k QD1", "rand_read_4k QD2", "rand_read_4k QD4"]
    names = [f"{p}_qd{q}" for p in ("rand_read_4k", "seq_read_128k", "rand_write_4k",
                                    "seq_write_128k") for q in (1, 2, 4, 8, 16, 32)]
    assert _sections(fake_fio) == ["prefill", *names]
    job = fake_fio.calls()[-1]["job"]
    assert "rw=write" in job and "bs=131072" in job and "iodepth=32" in job
    assert "runtime=1s" in job and "ramp_time" not in job  # smoke: 1 s, no ramp
    m = result.metrics
    assert m["rand_read_4k_qd1.read.iops"] == 1000 and m["rand_read_4k_qd32.read.iops"] == 9800
    assert m["rand_write_4k_qd8.write.iops"] == 9000
    assert m["rand_read_4k_qd1_4_avg.read.iops"] == pytest.approx(7000 / 3)
    assert m["seq_write_128k.saturation_qd"] == 8  # 9000 >= 0.9 x 9800
    assert m["rand_read_4k.scaling_ratio"] == pytest.approx(9.8)
    assert set(m) <= set(CATALOG["qd_scaling"].metric_names())
    assert set(result.states.values()) == {"as found, span prefilled (not purged)"}
    curves = curves_from_json((tmp_path / "work" / "curves.json").read_text())
    iops = next(c for c in curves if c.name == "rand_read_4k" and c.y_name == "read.iops")
    assert iops.points == ((1, 1000), (2, 2000), (4, 4000), (8, 9000), (16, 9700), (32, 9800))
    assert iops.x_name == "qd" and iops.y_unit == "IOPS"


def test_transfer_size_sweep_on_a_4kn_drive_skips_sizes_below_a_sector(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    monkeypatch.setattr(ctx.target, "identity",  # as a 4Kn drive reports itself
                        replace(ctx.identity, logical_sector_bytes=4096))
    result = run_methodology("transfer_size_sweep", session, ctx, tmp_path / "work")
    sections = _sections(fake_fio)
    assert sections[0] == "prefill" and len(sections) == 1 + 2 * 12
    assert sections[1:4] == ["seq_read_4k", "seq_read_8k", "seq_read_16k"]
    assert sections[-1] == "seq_write_8m"
    first = next(c["job"] for c in fake_fio.calls() if "[seq_read_4k]" in c["job"])
    assert "bs=4096" in first and "iodepth=4" in first and f"io_size={32 * MIB}" in first
    assert "seq_read_512.read.bw_mbps" not in result.metrics
    assert result.metrics["seq_write_8m.write.bw_mbps"] == 500
    assert any("skipped 512, 1k, 2k B transfers" in n for n in result.notes)


def test_transfer_size_sweep_peak_is_the_highest_bandwidth_and_its_transfer_size(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_ssdqual.methodology.transfer_size import peak

    assert peak([(4096, 80.0), (131072, 556.0), (1048576, 550.0)]) == (131072, 556.0)
    assert peak([(4096, 500.0), (8192, 500.0)]) == (4096, 500.0)  # tie: the smaller size
    assert peak([(4096, math.nan), (8192, 90.0)]) == (8192, 90.0)
    assert peak([(4096, math.nan)]) is None and peak([]) is None
    # a 4Kn drive: 12 read sizes (4k ... 8m) then 12 write sizes, after the prefill; reads rise
    # to 556 MB/s at 128k (6th size) then settle at 540, writes top out at 155 at 64k (5th)
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    monkeypatch.setattr(ctx.target, "identity", replace(ctx.identity, logical_sector_bytes=4096))
    reads = ["60", "110", "200", "400", "500", "556"] + ["540"] * 6
    writes = ["30", "60", "120", "150", "155"] + ["150"] * 7
    monkeypatch.setenv("FAKEFIO_BW_MBPS", ",".join(["500", *reads, *writes]))
    result = run_methodology("transfer_size_sweep", session, ctx, tmp_path / "work")
    m = result.metrics
    assert m["seq_read_peak.read.bw_mbps"] == 556 and m["seq_read_peak.read.bs_bytes"] == 131072
    assert m["seq_write_peak.write.bw_mbps"] == 155 and m["seq_write_peak.write.bs_bytes"] == 65536
    assert set(m) <= set(CATALOG["transfer_size_sweep"].metric_names())
    assert "sequential read peak 556.0 MB/s at 128k transfers (QD4; ATTO reviews quote this " \
        "figure)" in result.notes
    assert "sequential write peak 155.0 MB/s at 64k transfers (QD4; ATTO reviews quote this " \
        "figure)" in result.notes
    # a limit on the peak is judged like any figure (the ATTO-style limits of jmicron-*.yaml)
    limits = tmp_path / "peak.yaml"
    limits.write_text("version: 1\nprofiles:\n  - name: p\n    match: {kind: file}\n"
                      "    source: test\n    limits:\n      transfer_size_sweep:\n"
                      "        seq_write_peak.write.bw_mbps: {min: 139.5}\n")
    outcome = judge_result(result, ThresholdSet.load([limits]).resolve(ctx.facts))
    [verdict] = [v for v in outcome.verdicts if v.limit is not None]
    assert verdict.status == "pass" and verdict.measured == 155


def test_client_presets_run_both_test_sizes_and_give_size_ratios(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the fio stand-in's bandwidth: prefill, then 8 runs at 16 MiB at 400 MB/s, then 8 runs at
    # 100 MiB at 100 MB/s (e.g. past an SLC cache)
    monkeypatch.setenv("FAKEFIO_BW_MBPS", ",".join(["100"] + ["400"] * 8 + ["100"] * 8))
    slept: list[float] = []
    result = _run(session, tmp_path, "client_presets", sleep=slept.append)
    assert slept == [1.0] * 8  # smoke: 1 s idle before each write test (2 sizes x 4 presets)
    sections = _sections(fake_fio)
    presets = ("seq1m_q8t1", "seq1m_q1t1", "rnd4k_q32t16", "rnd4k_q1t1")
    assert sections == ["prefill"] + [f"{p}_{s}mib_{d}" for s in (16, 100)
                                      for d in ("read", "write") for p in presets]
    q32t16 = next(c["job"] for c in fake_fio.calls() if "[rnd4k_q32t16_16mib_read]" in c["job"])
    assert "rw=randread" in q32t16 and "iodepth=32" in q32t16 and "numjobs=16" in q32t16
    assert f"size={16 * MIB}" in q32t16
    m = result.metrics
    assert m["seq1m_q8t1_16mib.write.bw_mbps"] == 400
    assert m["seq1m_q8t1_100mib.write.bw_mbps"] == 100
    assert m["seq1m_q8t1.write.size_ratio"] == pytest.approx(0.25)
    assert set(m) <= set(CATALOG["client_presets"].metric_names())
    doc = json.loads((tmp_path / "work" / "curves.json").read_text())
    assert {c["x_name"] for c in doc["curves"]} == {"test_size_bytes"}


def _sized_drive(session: QualSession, size_bytes: int) -> None:
    """The file target ``drive.img`` is created at ``size_bytes`` (``--scratch-size``)."""
    session.options = replace(session.options, file_size_bytes=size_bytes)


def test_client_presets_skip_a_test_size_the_drive_cannot_hold(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    # smoke: 16 and 100 MiB; on a 64 MiB drive the 100 MiB test is skipped, not shrunk (a
    # figure named seq1m_q8t1_100mib measured on 64 MiB would mislead; a 64mib one has no
    # catalog name, so no threshold could judge it)
    _sized_drive(session, 64 * MIB)
    slept: list[float] = []
    result = _run(session, tmp_path, "client_presets", sleep=slept.append)
    assert slept == [1.0] * 4  # the idle before each write test of the one size run
    presets = ("seq1m_q8t1", "seq1m_q1t1", "rnd4k_q32t16", "rnd4k_q1t1")
    assert _sections(fake_fio) == ["prefill"] + [f"{p}_16mib_{d}" for d in ("read", "write")
                                                 for p in presets]
    prefill = next(c["job"] for c in fake_fio.calls() if "[prefill]" in c["job"])
    assert f"size={16 * MIB}" in prefill  # only the region tested is written
    m = result.metrics
    assert set(m) <= set(CATALOG["client_presets"].metric_names())
    assert m["seq1m_q8t1_16mib.write.bw_mbps"] == 500
    assert not [k for k in m if "_100mib." in k or "_64mib." in k or k.endswith("size_ratio")]
    assert ("test size 100 MiB skipped: larger than the drive (64 MiB); no size_ratio"
            in result.notes)
    # a limit on a skipped size's figure fails saying why, never passes unchecked
    limits = tmp_path / "presets.yaml"
    limits.write_text("version: 1\nprofiles:\n  - name: p\n    match: {kind: file}\n"
                      "    source: test\n    limits:\n      client_presets:\n"
                      "        seq1m_q8t1_100mib.write.bw_mbps: {min: 20}\n"
                      "        seq1m_q8t1.write.size_ratio: {min: 0.2}\n"
                      "        seq1m_q8t1_16mib.write.bw_mbps: {min: 20}\n")
    facts = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}")).facts
    outcome = judge_result(result, ThresholdSet.load([limits]).resolve(facts))
    assert [v.line().split(" — ")[0] for v in outcome.failed] == [
        "seq1m_q8t1.write.size_ratio not measured (test size 100 MiB skipped: larger than the "
        "drive (64 MiB)): fails the limit seq1m_q8t1.write.size_ratio >= 0.2",
        "seq1m_q8t1_100mib.write.bw_mbps not measured (test size 100 MiB skipped: larger than "
        "the drive (64 MiB)): fails the limit seq1m_q8t1_100mib.write.bw_mbps >= 20"]


def test_preset_figures_of_another_profile_are_not_in_this_profile_and_rejudged_so() -> None:
    from pytest_ssdqual.catalog.sweeps import not_in_profile
    from pytest_ssdqual.report.rejudge import judge_record
    from pytest_ssdqual.results.record import TestRecord
    from pytest_ssdqual.thresholds.profile import ResolvedLimits
    from pytest_ssdqual.thresholds.verdict import Limit, Provenance

    smoke = not_in_profile("client_presets", "smoke")
    assert len(smoke) == 4 * 2 * 4  # 1000 MiB: 4 presets x 2 directions x 4 figures
    assert smoke["seq1m_q1t1_1000mib.read.bw_mbps"] == (
        "not measured in this run profile: smoke runs the client presets at 16 MiB and 100 MiB, "
        "not 1000 MiB (quick, full)")
    assert set(not_in_profile("client_presets", "quick")) == {
        k.replace("_1000mib.", "_16mib.") for k in smoke}
    assert not_in_profile("qd_scaling", "smoke") == {}
    # ssdqual rejudge: the record's run profile decides, as the run did
    prov = Provenance("t.yaml", "p", "test")
    limits = ResolvedLimits({("client_presets", m): Limit("client_presets", m, 10, None, None,
                                                          prov)
                             for m in ("seq1m_q1t1_1000mib.write.bw_mbps",
                                       "seq1m_q1t1_100mib.write.bw_mbps")}, ())
    for profile, statuses in (("smoke", ["not_in_profile", "pass"]),
                              ("quick", ["missing", "pass"])):
        record = TestRecord("file:x", "client_presets", "passed", profile=profile,
                            metrics={"seq1m_q1t1_100mib.write.bw_mbps": 50.0})
        verdicts = judge_record(CATALOG["client_presets"], record, limits)
        assert [v.status for v in verdicts[:2]] == statuses
        assert [v.failed for v in verdicts[:2]] == [profile == "quick", False]


def test_client_presets_on_a_drive_smaller_than_every_test_size_are_not_applicable(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    from pytest_ssdqual.errors import NotApplicable

    _sized_drive(session, 8 * MIB)
    with pytest.raises(NotApplicable, match=r"client presets need a test region of 16 MiB or "
                       r"100 MiB \(profile smoke\); .* has only 8 MiB"):
        _run(session, tmp_path, "client_presets")
    assert fake_fio.job_rws() == []  # refused before any I/O


def test_mixed_sweep_asks_fio_for_each_write_share_then_times_the_copy(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    # The fio stand-in reports the copy's two streams (one reporting group) at 500 MB/s each,
    # as alone: the copy takes as long as either stream alone, half of reading then writing.
    # The real two-stream run: tests/e2e/test_e2e_sweeps.py.
    m = _run(session, tmp_path, "mixed_sweep").metrics
    assert m["copy.read.bw_mbps"] == m["copy.write.bw_mbps"] == 500
    assert m["copy_time_s"] == pytest.approx(64 * MIB / 500e6)
    assert m["delay_ratio"] == pytest.approx(0.5)
    sections = _sections(fake_fio)
    shares = range(0, 101, 10)
    assert sections == (["prefill"] + [f"rand_w{p}_4k_qd4" for p in shares]
                        + [f"seq_w{p}_128k_qd1" for p in shares]
                        + ["copy_read", "copy_write", "copy_read", "copy_write"])
    jobs = [c["job"] for c in fake_fio.calls() if c["job"]]
    assert "rw=randrw" in jobs[1] and "rwmixread=100" in jobs[1]  # 0 % writes
    assert "rwmixread=70" in jobs[4] and "iodepth=4" in jobs[4]  # 30 % writes
    assert "rw=rw" in jobs[12] and "rwmixread=100" in jobs[12] and "iodepth=1" in jobs[12]
    assert "rwmixread=0" in jobs[22]  # 100 % writes, sequential
    copy = jobs[-1]
    assert f"offset={64 * MIB}" in copy and f"size={64 * MIB}" in copy  # smoke: 64 MiB copied


def test_copy_run_whose_stream_moved_nothing_stops_the_mixed_sweep_with_the_reason(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # runs: the prefill, 22 sweep points, read alone, write alone, then the copy at 0 MB/s
    monkeypatch.setenv("FAKEFIO_BW_MBPS", ",".join(["500"] * 25 + ["0"]))
    with pytest.raises(FioOutputError, match=r"copy test in .*: copy read: bandwidth 0\.0 MB/s: "
                       "the stream moved nothing; cannot time the copy"):
        _run(session, tmp_path, "mixed_sweep")
    assert _sections(fake_fio)[-2:] == ["copy_read", "copy_write"]


def test_curve_charts_one_per_axis_and_figure() -> None:
    from pytest_ssdqual.methodology.curves import Curve
    from pytest_ssdqual.report.chart_data import curve_charts

    curves = [
        Curve("rand_read_4k", "qd", "", "read.iops", "IOPS", ((1, 9000), (2, 17000), (4, 30000))),
        Curve("seq_read_128k", "qd", "", "read.iops", "IOPS", ((1, 2000), (2, 3900), (4, 4000))),
        Curve("seq_read_128k", "qd", "", "read.bw_mbps", "MB/s", ((1, 262), (2, 511))),
        Curve("seq", "bs_bytes", "B", "write.bw_mbps", "MB/s", ((512, 9.5), (1 << 20, 510))),
        Curve("rand_4k_qd4", "write_pct", "%", "total.iops", "IOPS", ((0, 9000), (100, 3000))),
        Curve("x", "temperature_c", "C", "write.iops", "IOPS", ((25, 1.0),)),  # no such axis
    ]
    charts = curve_charts(curves, title="QD scaling")
    assert sorted(charts) == [
        "chart: IOPS by queue depth", "chart: IOPS by write share",
        "chart: bandwidth by queue depth", "chart: bandwidth by transfer size"]
    assert all(png.startswith(b"\x89PNG") and len(png) > 5000 for png in charts.values())


def test_fill_state_curves_are_charted_by_fill_level() -> None:
    # drive_with_data's curves: each figure over fill_pct 0/25/50/75 and a one-point dirty curve
    from pytest_ssdqual.catalog import data_states as ds
    from pytest_ssdqual.methodology.drive_with_data import fill_curves
    from pytest_ssdqual.report.chart_data import curve_charts

    metrics = {ds.metric_name(state, test, figure): 1000.0 * (i + 1)
               for i, state in enumerate(ds.FILL_STATES) for test in ds.FILL_TESTS
               for figure in test.figures}
    charts = curve_charts(fill_curves(metrics), title="Performance with the drive full")
    # distinct from the sustained-write test's "chart: bandwidth by fill state" (its own bars)
    assert sorted(charts) == ["chart: IOPS by fill level", "chart: bandwidth by fill level",
                              "chart: p99 latency by fill level"]
    assert all(png.startswith(b"\x89PNG") and len(png) > 5000 for png in charts.values())


def _curve_axes_written(package: Path) -> dict[str, str]:
    """Every ``x_name`` a methodology module passes to ``Curve(...)`` or ``curve(...)`` (its
    second argument or ``x_name=``), read from the source: axis -> ``module:line``. Left out:
    ``curves.py`` (the format: it reads curves back) and the body of ``sweep.curve`` (the
    helper forwarding its caller's axis)."""
    import ast

    found: dict[str, str] = {}
    for path in sorted(package.glob("*.py")):
        if path.name == "curves.py":
            continue
        tree = ast.parse(path.read_text())
        helper = {id(n) for f in ast.walk(tree)
                  if isinstance(f, ast.FunctionDef) and f.name == "curve" for n in ast.walk(f)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or id(node) in helper:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in ("Curve", "curve"):
                continue
            keyword = next((k.value for k in node.keywords if k.arg == "x_name"), None)
            arg = keyword if keyword is not None else (node.args[1] if len(node.args) > 1
                                                       else None)
            where = f"{path.name}:{node.lineno}"
            assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), (
                f"{where}: give the curve's axis as a literal so this test can check it")
            found.setdefault(arg.value, where)
    return found


def test_every_curve_axis_a_methodology_writes_has_a_chart_axis() -> None:
    from pytest_ssdqual.report.chart_data import _CURVE_AXES
    from pytest_ssdqual.report.pts_wsat_hir_charts import PTS_AXES  # WSAT / HIR: their own

    from ..conftest import REPO

    written = _curve_axes_written(REPO / "pytest_ssdqual" / "methodology")
    assert len(written) >= 5, written  # qd, write_pct, bs_bytes, test_size_bytes, fill_pct ...
    assert {axis: where for axis, where in written.items()
            if axis not in _CURVE_AXES and axis not in PTS_AXES} == {}
