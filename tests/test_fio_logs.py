"""fio per-second logs: what fio 3.33 writes (5 columns, KiB/s, ns) -> series in MB/s, IOPS, µs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.logs import (
    BandwidthSeries,
    bandwidth_series,
    find_logs,
    parse_log,
    read_series,
    to_series,
)

# Verbatim from fio-3.33 here (write_bw_log / write_lat_log, log_avg_msec=1000, 128 KiB
# sequential writes): the 3 s line of the bw log is missing (the job ended just after it).
FIO_333_BW = "1000, 894208, 1, 0, 0\n2000, 962498, 1, 0, 0\n"
FIO_333_LAT = "1000, 142497, 1, 0, 0\n2000, 131983, 1, 0, 0\n3000, 132934, 1, 0, 0\n"


def test_fio_333_bandwidth_log_in_decimal_mb_per_s() -> None:
    samples = parse_log(FIO_333_BW)
    assert [(s.t_ms, s.value, s.direction, s.bs_bytes, s.offset_bytes, s.prio)
            for s in samples] == [(1000, 894208, 1, 0, 0, None), (2000, 962498, 1, 0, 0, None)]
    series = to_series([samples], "bw", "write")
    assert series.unit == "MB/s" and series.t_s == (1.0, 2.0)
    assert series.values == pytest.approx((894208 * 1024 / 1e6, 962498 * 1024 / 1e6))
    assert series.values[0] == pytest.approx(915.669, abs=1e-3)


def test_latency_log_in_microseconds_and_six_column_lines() -> None:
    series = to_series([parse_log(FIO_333_LAT)], "lat", "write")
    assert series.unit == "us" and series.values == pytest.approx((142.497, 131.983, 132.934))
    six = parse_log("1000, 5000, 0, 0, 0, 1\n")
    assert six[0].prio == 1 and six[0].direction == 0


def test_directions_are_kept_apart_and_boundary_stamps_round_to_the_second() -> None:
    text = "1000, 100, 0, 0, 0\n1000, 200, 1, 0, 0\n2000, 110, 0, 0, 0\n3001, 120, 0, 0, 0\n"
    reads = to_series([parse_log(text)], "iops", "read")
    writes = to_series([parse_log(text)], "iops", "write")
    assert reads.values == (100, 110, 120) and reads.t_s == (1.0, 2.0, 3.001)
    assert reads.durations_s == pytest.approx((1.0, 1.0, 1.001))
    assert writes.values == (200,) and writes.unit == "IOPS"
    assert to_series([parse_log(text)], "bw", "trim").values == ()


def test_several_jobs_sum_bandwidth_and_average_latency() -> None:
    job1 = parse_log("1000, 1000, 1, 0, 0\n2000, 1000, 1, 0, 0\n")
    job2 = parse_log("1000, 3000, 1, 0, 0\n2002, 1000, 1, 0, 0\n")
    bw = to_series([job1, job2], "bw", "write")
    assert bw.values == pytest.approx((4000 * 1024 / 1e6, 2000 * 1024 / 1e6))
    assert bw.t_s == (1.0, 2.002)
    lat = to_series([job1, job2], "clat", "write")
    assert lat.values == pytest.approx((2.0, 1.0))


@pytest.mark.parametrize("line", ["1000, 5, 1, 0", "1000, x, 1, 0, 0", "1,2,3,4,5,6,7"])
def test_malformed_lines_name_the_source_and_line(line: str) -> None:
    with pytest.raises(FioOutputError, match=r"job_bw\.1\.log:2: "):
        parse_log("1000, 5, 1, 0, 0\n" + line + "\n", source="job_bw.1.log")


def test_bandwidth_series_bytes_per_interval() -> None:
    bw = BandwidthSeries((1.0, 2.0, 2.5), (100.0, 50.0, 20.0))
    assert bw.durations_s == (1.0, 1.0, 0.5)
    assert bw.bytes_per_interval() == pytest.approx((100e6, 50e6, 10e6))


def test_find_and_read_logs_in_a_folder(tmp_path: Path) -> None:
    (tmp_path / "log_bw.2.log").write_text("1000, 1000, 1, 0, 0\n")
    (tmp_path / "log_bw.1.log").write_text("1000, 2000, 1, 0, 0\n")
    (tmp_path / "log_bw.x.log").write_text("garbage\n")
    (tmp_path / "other_bw.1.log").write_text("1000, 9, 1, 0, 0\n")
    assert [p.name for p in find_logs(tmp_path, "bw")] == ["log_bw.1.log", "log_bw.2.log"]
    assert bandwidth_series(tmp_path).bw_mbps == pytest.approx((3000 * 1024 / 1e6,))
    with pytest.raises(FioOutputError, match="no fio iops log"):
        read_series(tmp_path, "iops")
    with pytest.raises(ValueError, match="unknown log kind"):
        find_logs(tmp_path, "temperature")


def test_real_fio_writes_what_the_reader_expects(tmp_path: Path) -> None:
    """The format assumption checked against the fio installed here (a 2 s job on a file)."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    target = tmp_path / "target.img"
    subprocess.run(
        ["fio", "--name=w", f"--filename={target}", "--size=16m", "--rw=write", "--bs=128k",
         "--time_based=1", "--runtime=2", "--write_bw_log=log", "--write_iops_log=log",
         "--write_lat_log=log", "--log_avg_msec=1000", "--output-format=json",
         "--output=out.json"],
        cwd=tmp_path, check=True, capture_output=True, timeout=60,
    )
    bw = read_series(tmp_path, "bw")
    iops = read_series(tmp_path, "iops")
    lat = read_series(tmp_path, "lat")
    assert len(bw) in (1, 2, 3) and all(v > 0 for v in bw.values)
    # 128 KiB transfers: bandwidth = IOPS x 131072 bytes, second by second (fio rounds each)
    for t, mbps in zip(bw.t_s, bw.values, strict=True):
        match = [v for ti, v in zip(iops.t_s, iops.values, strict=True) if abs(ti - t) < 0.5]
        assert match and mbps == pytest.approx(match[0] * 131072 / 1e6, rel=0.05)
    assert all(0 < v < 1e6 for v in lat.values)  # microseconds, not nanoseconds
