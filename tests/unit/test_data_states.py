"""Data-state tests: drive with data and sequential after random, run with
the fio stand-in (tests/fakefio.py) on a file target -- which jobs run where (offsets and
lengths), the figures per state, the ratios to the clean figures, the curves, the limits --
plus the area jobs' region checked with the real fio on a small file. Real fio on a loop
device: tests/e2e/test_e2e_data_states.py."""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_ssdqual.catalog import data_states as ds
from pytest_ssdqual.catalog.workloads import CATALOG, HIGHER_IS_BETTER, MIB
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.methodology import base as methodology_base
from pytest_ssdqual.methodology.area_jobs import AreaJob, sequential_write_once
from pytest_ssdqual.methodology.base import judge_result
from pytest_ssdqual.methodology.curves import curves_from_json
from pytest_ssdqual.methodology.drive_with_data import layout
from pytest_ssdqual.methodology.purge import PurgeRecord
from pytest_ssdqual.qualify.session import QualSession
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import FakeFio
from .test_methodology import _run, jobs_run, session  # noqa: F401  (session: fixture)

PERF = ["seq_read_128k_qd32", "rand_read_4k_qd32", "rand_write_4k_qd32", "seq_write_128k_qd32"]

#: Per state: (seq read MB/s, rand read IOPS, rand write IOPS, seq write MB/s).
FIGURES = {
    "empty": (1000, 100000, 80000, 800),
    "full25": (1000, 100000, 60000, 700),
    "full50": (950, 90000, 40000, 600),
    "full75": (900, 80000, 20000, 400),
    "dirty": (900, 80000, 16000, 400),
}


def _job_lists() -> tuple[list[float], list[float]]:
    """FAKEFIO_BW_MBPS and FAKEFIO_IOPS for the 25 job runs of drive_with_data, in order:
    test file, 4 tests (empty), then per fill level the fill and 4 tests, the dirty test file
    and 4 tests."""
    bw: list[float] = []
    iops: list[float] = []
    for state in ds.FILL_STATES:
        seq_read, rand_read, rand_write, seq_write = FIGURES[state]
        bw += [555, seq_read, 1, 1, seq_write]   # the write before the tests: 555 MB/s
        iops += [1, 1, rand_read, rand_write, 1]
    return bw, iops


def test_drive_with_data_fills_the_span_and_measures_on_the_test_file(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bw, iops = _job_lists()
    monkeypatch.setenv("FAKEFIO_BW_MBPS", ",".join(map(str, bw)))
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(map(str, iops)))
    ctx, result = _run(session, tmp_path, "drive_with_data")
    assert jobs_run(fake_fio) == (
        ["test_file", *PERF, "fill_25", *PERF, "fill_50", *PERF, "fill_75", *PERF,
         "test_file_dirty", *PERF])
    jobs = [c["job"] for c in fake_fio.calls() if c["job"]]
    # TINY span 16 MiB: test file = last 1 MiB (10 %, at least 1 MiB); fills from 0
    region = [(_opt(j, "offset"), _opt(j, "size")) for j in jobs]
    assert region[0] == (15 * MIB, 1 * MIB) and "io_size=1048576" in jobs[0]
    assert region[1:5] == [(15 * MIB, 1 * MIB)] * 4 and "time_based=1" in jobs[1]
    assert [region[i] for i in (5, 10, 15)] == [(0, 4 * MIB), (4 * MIB, 4 * MIB),
                                                (8 * MIB, 4 * MIB)]
    assert "io_size=4194304" in jobs[5] and "rw=write" in jobs[5]
    assert region[20:] == [(0, 1 * MIB)] * 5  # dirty: the test file in the freed space
    assert ["rw=" + _opt_text(j, "rw") for j in jobs[1:5]] == [
        "rw=read", "rw=randread", "rw=randwrite", "rw=write"]

    m = result.metrics
    assert set(m) == set(CATALOG["drive_with_data"].metric_names())
    assert m["empty_seq_read_128k_qd32.read.bw_mbps"] == 1000
    assert m["full75_rand_write_4k_qd32.write.iops"] == 20000
    assert m["full75_rand_write_4k_qd32.write.iops_ratio"] == pytest.approx(0.25)
    assert m["full50_seq_write_128k_qd32.write.bw_mbps_ratio"] == pytest.approx(0.75)
    assert m["dirty_rand_write_4k_qd32.write.iops_ratio"] == pytest.approx(0.2)
    assert m["dirty_rand_read_4k_qd32.read.lat_p99_us_ratio"] == 1.0  # FAKEFIO_P99_US
    assert m["worst_ratio"] == pytest.approx(0.2)
    states = result.states
    assert states["empty_rand_read_4k_qd32.read.iops"] == "FOB"
    assert states["full50_rand_read_4k_qd32.read.iops"] == "50 % full"
    assert states["full50_rand_read_4k_qd32.read.iops_ratio"] == "50 % full"
    assert states["dirty_seq_read_128k_qd32.read.bw_mbps"] == (
        "empty but dirty (75 % written, not trimmed)")
    assert "worst ratio to empty: 0.200 (dirty_rand_write_4k_qd32.write.iops_ratio)" in (
        result.notes)

    curves = {(c.name, c.y_name): c for c in result.curves}
    rw = curves[("rand_write_4k_qd32", "write.iops")]
    assert (rw.x_name, rw.x_unit, rw.y_unit) == ("fill_pct", "%", "IOPS")
    assert rw.points == ((0, 80000), (25, 60000), (50, 40000), (75, 20000))
    assert curves[("rand_write_4k_qd32.dirty", "write.iops")].points == ((0, 16000),)
    assert curves[("seq_read_128k_qd32", "read.bw_mbps")].y_at(50) == 950
    stored = curves_from_json((tmp_path / "work" / "curves.json").read_text())
    assert len(stored) == len(result.curves) == 12

    limits = tmp_path / "limits.yaml"
    limits.write_text(
        "version: 1\nprofiles:\n  - name: data states\n    match: {kind: file}\n"
        "    source: test\n    limits:\n      drive_with_data:\n"
        "        full75_rand_write_4k_qd32.write.iops_ratio: {min: 0.5}\n"
        "        worst_ratio: {min: 0.1}\n")
    resolved = ThresholdSet.load([limits]).resolve(ctx.facts)
    failed = judge_result(result, resolved).failed
    assert [v.metric for v in failed] == ["full75_rand_write_4k_qd32.write.iops_ratio"]
    assert "0.25 < min 0.5" in failed[0].line()


def test_seq_after_random_ratios_to_clean(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # clean write, clean read, fragmenting, fragmented read, fragmented write
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "500,1000,60,400,250")
    monkeypatch.setenv("FAKEFIO_IOPS", "1,1,15000,1,1")
    _ctx, result = _run(session, tmp_path, "seq_after_random")
    assert jobs_run(fake_fio) == ["seq_write_128k_qd32", "seq_read_128k_qd32", "fragmenting",
                                  "seq_read_128k_qd32", "seq_write_128k_qd32"]
    jobs = [c["job"] for c in fake_fio.calls() if c["job"]]
    assert "io_size=16777216" in jobs[0] and "time_based" not in jobs[0]  # once over the span
    assert "rw=randwrite" in jobs[2] and "bs=4096" in jobs[2] and "iodepth=32" in jobs[2]
    assert "io_size=16777216" in jobs[2] and "runtime=5s" in jobs[2]  # TINY sustained_max_s
    assert "time_based=1" in jobs[3] and "runtime=1s" in jobs[3]
    m = result.metrics
    assert set(m) == set(CATALOG["seq_after_random"].metric_names())
    assert m["clean_seq_write_128k_qd32.write.bw_mbps"] == 500
    assert m["fragmented_seq_read_128k_qd32.read.bw_mbps"] == 400
    assert m["fragmented_seq_read_128k_qd32.read.bw_mbps_ratio"] == pytest.approx(0.4)
    assert m["fragmented_seq_write_128k_qd32.write.bw_mbps_ratio"] == pytest.approx(0.5)
    assert m["worst_ratio"] == pytest.approx(0.4)
    assert m["fragmenting_rand_write_4k_qd32.write.iops"] == 15000
    assert result.states["clean_seq_read_128k_qd32.read.bw_mbps"] == "FOB"
    assert result.states["fragmented_seq_read_128k_qd32.read.bw_mbps_ratio"] == (
        "after random writes (fragmented)")
    assert "fragmented / clean: seq_write_128k_qd32 0.500, seq_read_128k_qd32 0.400" in (
        result.notes)


@pytest.mark.parametrize("workload_id", ["drive_with_data", "seq_after_random"])
def test_a_failed_purge_fails_the_data_state_tests(
    session: QualSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
    workload_id: str,
) -> None:
    monkeypatch.setattr(methodology_base, "purge", lambda _target: PurgeRecord(
        None, ("file-punch-hole: Operation not supported",), 0.0))
    ctx, result = _run(session, tmp_path, workload_id)
    assert result.metrics["purged"] == 0
    first = "empty_seq_read_128k_qd32.read.bw_mbps" if workload_id == "drive_with_data" \
        else "clean_seq_read_128k_qd32.read.bw_mbps"
    assert result.states[first].startswith("as found (purge failed: file-punch-hole")
    assert "purged" in {v.metric for v in judge_result(result, ctx.limits).failed}


def test_ratios_leave_out_what_was_not_measured() -> None:
    seq_read, rand_read = ds.FILL_TESTS[0], ds.FILL_TESTS[1]
    metrics = {
        ds.metric_name("empty", seq_read, "bw_mbps"): 500.0,
        ds.metric_name("full25", seq_read, "bw_mbps"): 250.0,
        ds.metric_name("full50", seq_read, "bw_mbps"): math.nan,
        ds.metric_name("empty", rand_read, "iops"): 0.0,  # no reference: no ratio
        ds.metric_name("full25", rand_read, "iops"): 100.0,
        ds.metric_name("empty", rand_read, "lat_p99_us"): 100.0,
        ds.metric_name("full25", rand_read, "lat_p99_us"): 50.0,
    }
    ratios = ds.ratios(metrics, ds.FILL_STATES, ds.FILL_TESTS)
    assert ratios == {"full25_seq_read_128k_qd32.read.bw_mbps_ratio": 0.5,
                      "full25_rand_read_4k_qd32.read.lat_p99_us_ratio": 0.5}
    # latency ratios are no performance ratios: the worst is the bandwidth one
    assert ds.worst_ratio(ratios) == 0.5
    assert ds.worst_ratio({"x.read.lat_p99_us_ratio": 0.1}) is None


def test_ratio_names_gate_in_the_right_direction() -> None:
    from pytest_ssdqual.results.gated_metrics import is_higher_better as higher_is_better

    assert higher_is_better("full75_rand_write_4k_qd32.write.iops_ratio")
    assert higher_is_better("fragmented_seq_read_128k_qd32.read.bw_mbps_ratio")
    assert higher_is_better("worst_ratio") and "worst_ratio" in HIGHER_IS_BETTER
    assert not higher_is_better("full75_rand_read_4k_qd32.read.lat_p99_us_ratio")
    assert not higher_is_better("dirty_rand_read_4k_qd32.read.lat_p99_us")


def test_layout_of_the_span() -> None:
    assert layout(256 * MIB) == (25 * MIB, {25: 64 * MIB, 50: 128 * MIB, 75: 192 * MIB})
    area, fills = layout(8 * MIB)
    assert area == 1 * MIB and fills[75] == 6 * MIB and fills[75] + area <= 8 * MIB
    with pytest.raises(ConfigError) as info:
        layout(7 * MIB)
    assert str(info.value) == (
        "--drive / --scratch-size: drive_with_data needs a span of at least 8 MiB; this drive "
        "and run profile give 7340032 bytes (fix: use a drive (or --scratch-size) of at least "
        "8 MiB)")


def test_a_misspelt_data_state_metric_names_the_file_and_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "version: 1\nprofiles:\n  - name: p\n    match: {}\n    source: s\n    limits:\n"
        "      drive_with_data:\n        full75_rand_write_4k_qd32.write.iops_ration: "
        "{min: 0.5}\n")
    from pytest_ssdqual.errors import ConfigErrors

    with pytest.raises(ConfigErrors) as info:
        ThresholdSet.load([path])
    text = str(info.value.errors[0])
    assert "t.yaml:8" in text and "unknown metric" in text
    assert "did you mean `full75_rand_write_4k_qd32.write.iops_ratio`?" in text


def test_area_job_touches_only_its_region_with_the_real_fio(tmp_path: Path) -> None:
    """fio ``offset`` in the job section + ``size`` = exactly ``[offset, offset + size)``."""
    fio = shutil.which("fio")
    if fio is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    image = tmp_path / "area.img"
    image.write_bytes(b"\0" * (8 * MIB))
    job = sequential_write_once("fill", "test", 3 * MIB, 2 * MIB)
    assert isinstance(job, AreaJob)
    text = job.render(filename=str(image), ioengine="psync").replace("direct=1", "direct=0")
    (tmp_path / "area.fio").write_text(text)
    subprocess.run([fio, "--output-format=json", "--output=out.json", "area.fio"],
                   cwd=tmp_path, check=True, capture_output=True, timeout=60)
    data = image.read_bytes()
    written = [i for i in range(0, len(data), MIB) if any(data[i:i + MIB])]
    assert written == [3 * MIB, 4 * MIB]
    with pytest.raises(ValueError, match="offset 1000 bytes is not a non-negative multiple"):
        AreaJob("x", "x", "write", 4096, 1, MIB, io_bytes=MIB, offset_bytes=1000)


def _opt_text(job: str, key: str) -> str:
    values = [line.split("=", 1)[1] for line in job.splitlines() if line.startswith(key + "=")]
    return values[-1]


def _opt(job: str, key: str) -> int:
    """An integer option of a job file (the job section's, which fio lets override
    ``[global]``: the last one)."""
    return int(_opt_text(job, key))
