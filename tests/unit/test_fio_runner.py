"""Running fio: success criteria, failures, timeouts and the process-group kill."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, MIB, RunProfile
from pytest_ssdqual.errors import FioError, FioJobError, FioNotFound, FioOutputError, FioTimeout
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.job import render_job
from pytest_ssdqual.fio.runner import FioRunner, parse_fio_version

from ..conftest import FakeFio

TINY = RunProfile("tiny", 0, 1, 16 * MIB, 16 * MIB)


def _job(tmp_path: Path, workload: str = "rand_rw70_4k_qd32") -> str:
    target = tmp_path / "target.bin"
    with open(target, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, 16 * MIB)
    return render_job(CATALOG[workload], TINY, filename=str(target), capacity_bytes=16 * MIB,
                      ioengine="psync").text


@pytest.mark.parametrize(
    ("text", "expected"),
    [("fio-3.33", (3, 33)), ("fio-3.14-6-g97134", (3, 14)), ("fio-2.1.4\n", (2, 1))],
)
def test_version_strings(text: str, expected: tuple[int, int]) -> None:
    assert parse_fio_version(text) == expected


def test_unreadable_version_is_an_error() -> None:
    with pytest.raises(FioError, match="cannot read a fio version"):
        parse_fio_version("fio version unknown")


def test_missing_fio_says_how_to_install_it() -> None:
    with pytest.raises(FioNotFound, match="apt-get install fio"):
        FioRunner("/nonexistent/fio").version()


def test_too_old_fio_is_refused(fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEFIO_VERSION", "fio-2.18")
    with pytest.raises(FioError, match="too old"):
        FioRunner(fake_fio.path).version()


def test_real_fio_mixed_run_on_a_file(tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    runner = FioRunner()
    run = runner.run(_job(tmp_path), workdir=tmp_path / "w", name="mixed", timeout_s=60,
                     readonly=False)
    assert run.returncode == 0
    assert run.argv[1:3] == ("--output-format=json+", f"--output={run.output_path}")
    result = check_run(run, expected_runtime_s=1)
    m = result.metrics()
    # json+: the percentiles rest on fio's histogram, every I/O of the direction in it
    for name in ("read", "write"):
        assert m[f"{name}.lat_tail_ios"] == result.directions[name].total_ios
        assert result.directions[name].histogram is not None
    assert m["total.iops"] == pytest.approx(m["read.iops"] + m["write.iops"])
    assert 0.6 < m["read.iops"] / m["total.iops"] < 0.8
    assert (tmp_path / "w" / "log_bw.1.log").exists()  # per-second logs next to the job
    assert runner.ioengine(tmp_path / "probe.bin") in ("io_uring", "libaio", "psync")


def test_readonly_flag_makes_fio_refuse_a_write(tmp_path: Path) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    run = FioRunner().run(_job(tmp_path, "rand_write_4k_qd1"), workdir=tmp_path, name="w",
                          timeout_s=60, readonly=True)
    with pytest.raises(FioError):
        check_run(run)


@pytest.mark.parametrize(
    ("mode", "error", "message"),
    [
        ("exit1", FioError, "fio exited with status 1: fio: something went wrong"),
        ("garbage", FioOutputError, "engine io_uring not loadable"),
        ("error5", FioJobError, "error 5"),
    ],
)
def test_failures_raise_with_the_raw_output(
    tmp_path: Path, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    mode: str, error: type[Exception], message: str,
) -> None:
    monkeypatch.setenv("FAKEFIO_MODE", mode)
    run = FioRunner(fake_fio.path).run(_job(tmp_path), workdir=tmp_path, name="j", timeout_s=30,
                                       readonly=False)
    with pytest.raises(error, match=message) as info:
        check_run(run)
    assert isinstance(info.value, FioError)
    assert info.value.raw_output is not None


def test_a_run_shorter_than_asked_is_an_error(tmp_path: Path, fake_fio: FakeFio) -> None:
    run = FioRunner(fake_fio.path).run(_job(tmp_path), workdir=tmp_path, name="j", timeout_s=30,
                                       readonly=False)
    assert check_run(run, expected_runtime_s=1).runtime_ms == 1000
    with pytest.raises(FioError, match="stopped early: measured 1.0 s of the 60 s asked"):
        check_run(run, expected_runtime_s=60)


def test_a_hung_fio_is_killed_with_its_process_group(
    tmp_path: Path, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_MODE", "hang")
    with pytest.raises(FioTimeout, match="killed"):
        FioRunner(fake_fio.path).run(_job(tmp_path), workdir=tmp_path, name="j", timeout_s=1.5,
                                     readonly=False)
    pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    for pid in pids:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"fakefio.py" in cmdline and str(tmp_path).encode() in cmdline:
            os.kill(pid, signal.SIGKILL)
            pytest.fail(f"fio stand-in {pid} survived the timeout")
