"""Burst, compressibility and integrity tests without a drive: fio's verify
output read from real runs (tests/data/fio_verify/, recorded with this package's own read-back
job on a loop device: a clean pass, the same pass after 8 bytes were overwritten at two
offsets, and the pass with ``verify`` removed), the implicit integrity requirements, the job
files, the burst cycle plan and the metric names.

tests/data/fio_burst/ holds a real burst run (3 bursts of 100 ms, 128 KiB writes, loop device).
Real fio on real block devices: tests/e2e/test_e2e_data_tests.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.data_states import ratios
from pytest_ssdqual.catalog.data_tests import (
    BURST_TESTS,
    COMPRESS_TESTS,
    VERIFIED_SHARE,
    VERIFY_MISMATCHES,
)
from pytest_ssdqual.catalog.workloads import CATALOG, HIGHER_IS_BETTER, MIB
from pytest_ssdqual.errors import ConfigError, FioOutputError
from pytest_ssdqual.fio.verify import parse_verify_failures, read_verify_report
from pytest_ssdqual.methodology import burst, compressibility, integrity
from pytest_ssdqual.methodology.base import MethodologyResult, judge_result
from pytest_ssdqual.methodology.registry import METHODOLOGIES
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import ResolvedLimits

DATA = Path(__file__).resolve().parents[1] / "data" / "fio_verify"
JOB = "verify_rand_write_4k_qd32"


def _report(name: str):  # noqa: ANN202 - VerifyReport
    return read_verify_report((DATA / f"{name}.json").read_text(),
                              (DATA / f"{name}.stderr").read_text(), job=JOB,
                              source=str(DATA / f"{name}.json"))


# -- fio's verify output ---------------------------------------------------------------------


def test_a_clean_read_back_verified_every_byte() -> None:
    report = _report("clean")
    assert report.enabled and report.verify == "crc32c"
    assert report.read_bytes == report.verified_bytes == 4 * MIB
    assert report.mismatches == 0 and report.first_failure is None


def test_a_corrupted_read_back_names_every_bad_block_and_the_first_offset() -> None:
    # 8 bytes overwritten at 20580 (block 20480) and at 3 MiB + 7 (block 3145728)
    report = _report("corrupt")
    assert report.mismatches == 2
    assert [f.offset_bytes for f in report.failures] == [20480, 3 * MIB]
    assert report.first_failure.offset_bytes == 20480
    assert report.first_failure.length_bytes == 4096
    assert report.first_failure.what == "crc32c: verify failed"
    assert report.failures[1].what.startswith("verify: bad header length")
    assert report.read_bytes == 4 * MIB  # continue_on_error=verify: fio checked every block


def test_a_read_without_verify_verified_nothing() -> None:
    report = _report("noverify")
    assert report.read_bytes == 4 * MIB
    assert not report.enabled and report.verified_bytes == 0


def test_verify_failure_lines_of_both_shapes() -> None:
    text = (
        "verify: bad magic header 0, wanted acca at file /dev/loop7 offset 131072, length "
        "131072 (requested block: offset=131072, length=131072)\n"
        "fio: io_u error on file /dev/loop7: Input/output error: read offset=0, buflen=4096\n"
        "crc32c: verify failed at file /dev/sdb offset 4096, length 4096 (requested ...)\n"
    )
    failures = parse_verify_failures(text)
    assert [(f.file, f.offset_bytes, f.length_bytes) for f in failures] == [
        ("/dev/loop7", 131072, 131072), ("/dev/sdb", 4096, 4096)]
    assert failures[0].what == "verify: bad magic header 0, wanted acca"


def test_a_client_server_document_is_read_too() -> None:
    doc = json.loads((DATA / "corrupt.json").read_text())
    doc["client_stats"] = doc.pop("jobs")  # fio --client lists jobs under client_stats
    report = read_verify_report(json.dumps(doc), (DATA / "corrupt.stderr").read_text(),
                                job=JOB, source="x.json")
    assert report.mismatches == 2 and report.first_failure.offset_bytes == 20480


def test_a_missing_job_or_document_is_an_output_error() -> None:
    text = (DATA / "clean.json").read_text()
    with pytest.raises(FioOutputError, match="no job named 'verify_other'"):
        read_verify_report(text, "", job="verify_other", source="x.json")
    with pytest.raises(FioOutputError):
        read_verify_report("", "", job=JOB, source="x.json")


# -- the integrity test's verdict ------------------------------------------------------------


def _judge(metrics: dict[str, float], limits: ResolvedLimits | None = None) -> list[str]:
    result = MethodologyResult(CATALOG["data_integrity"], metrics, {}, [], [],
                               requirements=integrity.requirements())
    outcome = judge_result(result, limits or ResolvedLimits({}, ()))
    return sorted(v.metric for v in outcome.failed)


def test_integrity_passes_only_with_no_mismatch_and_every_byte_verified() -> None:
    ok = {"written_bytes": 2e8, "verified_bytes": 2e8, VERIFY_MISMATCHES: 0, VERIFIED_SHARE: 1}
    assert _judge(ok) == []
    assert _judge({**ok, VERIFY_MISMATCHES: 1, "first_bad_offset_bytes": 20480}) == [
        VERIFY_MISMATCHES]
    # verification off, or fewer bytes read back than written: never a pass
    assert _judge({**ok, "verified_bytes": 0, VERIFIED_SHARE: 0.0}) == [VERIFIED_SHARE]
    assert _judge({**ok, VERIFIED_SHARE: 0.5}) == [VERIFIED_SHARE]
    # the figures missing altogether: fail, not "not judged"
    assert _judge({"written_bytes": 2e8}) == [VERIFIED_SHARE, VERIFY_MISMATCHES]


def test_no_threshold_file_can_waive_the_integrity_requirements(tmp_path: Path) -> None:
    path = tmp_path / "waive.yaml"
    path.write_text(
        "version: 1\nprofiles:\n  - name: waiver\n    match: {controller: X}\n"
        "    source: test\n    limits:\n      data_integrity: {verify_mismatches: {max: 5}}\n")
    with pytest.raises(ConfigError, match="verify_mismatches"):
        ThresholdSet.load([path])


# -- jobs, cycle plan, names -----------------------------------------------------------------


def test_integrity_jobs_write_checksums_then_check_them_read_only() -> None:
    write = integrity.write_job("rand_write_4k_qd32", 16 * MIB).render(
        filename="/dev/x", ioengine="io_uring")
    section = write.split("[write_rand_write_4k_qd32]")[1]
    # the job section overrides [global]'s norandommap: every block written exactly once
    assert "norandommap=1" in write.split("[write_")[0]
    for line in ("rw=randwrite", "verify=crc32c", "do_verify=0", "norandommap=0"):
        assert line in section.splitlines(), line
    assert "io_size=16777216" in write and "time_based" not in write
    check = integrity.verify_job("rand_write_4k_qd32", 16 * MIB)
    assert not check.writes  # fio --readonly
    text = check.render(filename="/dev/x", ioengine="io_uring")
    for line in ("rw=read", "bs=4096", "verify=crc32c", "continue_on_error=verify"):
        assert line in text.split("[verify_rand_write_4k_qd32]")[1].splitlines(), line


def test_buffer_kinds_override_the_global_random_refill() -> None:
    assert compressibility.BUFFER_OPTIONS["zero"] == (
        "refill_buffers=0", "scramble_buffers=0", "zero_buffers=1")
    # random data, but not regenerated per submit (fio's CPU would cap the random figure)
    assert compressibility.BUFFER_OPTIONS["random"] == ("refill_buffers=0", "scramble_buffers=1")


class _Step:
    def __init__(self, bw_mbps: float) -> None:
        self.bw_mbps = bw_mbps

    def figure(self, name: str) -> float:
        assert name == "bw_mbps"
        return self.bw_mbps


def test_the_compressibility_ratio_is_the_median_of_back_to_back_rounds() -> None:
    random = [_Step(100.0), _Step(20.0), _Step(100.0)]  # round 2: the machine was busy
    zero = [_Step(110.0), _Step(400.0), _Step(120.0)]
    # pooled sums would give 630 / 220 = 2.9 ("compresses"); the rounds say 1.1, 20, 1.2
    assert compressibility.median_ratio(random, zero, "bw_mbps") == pytest.approx(1.2)
    assert compressibility.median_ratio([_Step(0.0)], [_Step(5.0)], "bw_mbps") is None


@pytest.mark.parametrize(("runtime_s", "expected"), [
    (3, (1.0, 0.2, 3.0)),     # smoke: three 200 ms bursts, 800 ms idle
    (30, (5.0, 1.0, 30.0)),   # quick: six 1 s bursts
    (300, (10.0, 2.0, 300.0)),  # full: thirty 2 s bursts
    (7, (1.167, 0.233, 7.002)),  # whole milliseconds
    (0.2, (1.0, 0.2, 1.0)),   # at least one whole cycle
])
def test_burst_cycle_plan(runtime_s: float, expected: tuple[float, float, float]) -> None:
    assert burst.cycle_plan(runtime_s) == pytest.approx(expected)


def _burst_job(bursts: int = 3) -> burst.BurstJob:
    return burst.BurstJob("burst_seq_write_128k_qd32", "t", "write", 131072, 32, 64 * MIB,
                          runtime_s=0.1, cycle_s=0.5, bursts=bursts)


def test_a_burst_job_is_one_section_per_burst_started_a_cycle_apart() -> None:
    job = _burst_job()
    text = job.render(filename="/dev/x", ioengine="io_uring")
    sections = text.split("\n[")[2:]  # after [global]
    assert [s.split("]")[0] for s in sections] == [
        "burst_seq_write_128k_qd32_1", "burst_seq_write_128k_qd32_2", "burst_seq_write_128k_qd32_3"]
    for k, section in enumerate(sections):
        lines = section.splitlines()
        assert f"startdelay={['0s', '500ms', '1s'][k]}" in lines and "new_group=1" in lines
        assert "rw=write" in lines and "iodepth=32" in lines
    assert "runtime=100ms" in text and "time_based=1" in text
    assert job.planned_s(1.0) == pytest.approx(1.1)  # last start + one burst
    assert job.expected_runtime_s == 0.1


def test_burst_figures_divide_by_each_bursts_own_runtime() -> None:
    # recorded: 3 bursts of 100 ms on a loop device; fio's runtimes 103, 125 and 104 ms (the
    # in-flight I/Os complete after the 100 ms of issuing)
    path = DATA.parent / "fio_burst" / "burst_seq_write_128k_qd32.json"
    figures = burst.burst_figures(_burst_job(), path.read_text(), direction="write",
                                  source=str(path))
    ms = 103 + 125 + 104
    assert figures["iops"] == pytest.approx((258 + 265 + 220) / (ms / 1000))
    assert figures["bw_mbps"] == pytest.approx(
        (33816576 + 34734080 + 28835840) / (ms / 1000) / 1e6)
    with pytest.raises(FioOutputError, match="no job 'burst_seq_write_128k_qd32_4'"):
        burst.burst_figures(_burst_job(4), path.read_text(), direction="write", source="x")


def test_ratios_and_catalog_names() -> None:
    metrics = {"burst_rand_write_4k_qd32.write.iops": 30000.0,
               "continuous_rand_write_4k_qd32.write.iops": 20000.0,
               "burst_rand_write_4k_qd32.write.lat_p99_us": 500.0,
               "continuous_rand_write_4k_qd32.write.lat_p99_us": 0.0}  # no ratio: reference 0
    assert ratios(metrics, ("continuous", "burst"), BURST_TESTS) == {
        "burst_rand_write_4k_qd32.write.iops_ratio": 1.5}
    names = CATALOG["burst_vs_sustained"].metric_names()
    assert "burst_seq_write_128k_qd32.write.bw_mbps_ratio" in names
    assert "zero_seq_write_128k_qd32.write.bw_mbps_ratio" in (
        CATALOG["compressibility"].metric_names())
    assert len(COMPRESS_TESTS) == 2 and "iops_ratio" in HIGHER_IS_BETTER
    assert {VERIFY_MISMATCHES, VERIFIED_SHARE}.isdisjoint(CATALOG["data_integrity"].metric_names())
    for wid in ("burst_vs_sustained", "compressibility", "data_integrity"):
        assert CATALOG[wid].writes and wid in METHODOLOGIES
