"""``ChangeWatch.settle`` with real fio on a loop device this test attaches (root): a session
run settles the watch only when the disk's sysfs counters moved by exactly what fio reported
writing and trimming. Another program's write between a reused check and the end of the next
fio run -- one that leaves no signature, so no check could refuse it -- makes the check before
the run after a full one; so does a job with ``ramp_time`` (fio counts no ramp I/O)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.fio.written import device_bytes
from pytest_ssdqual.methodology.protocol import DriveUnderTest
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import TINY
from .test_change_watch import MIB, assert_reused, need
from .test_drive_blockdev import attached_loop, make_image

JOB = "[w]\nfilename={device}\nrw=write\nbs=128k\nsize=4m\ndirect=1\nioengine=psync\n"


@pytest.fixture
def session(tmp_path: Path) -> Iterator[tuple[QualSession, DriveUnderTest, str]]:
    need("fio")
    image = make_image(tmp_path / "disk.img", 32 * MIB)
    limits = tmp_path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    (tmp_path / "scratch").mkdir()
    with attached_loop(image) as device:
        qual = QualSession.create(SessionOptions(
            specs=(), confirmed_serials=(str(image),), profile=TINY,
            thresholds=ThresholdSet.load([limits])), tmp_path / "scratch")
        try:
            yield qual, qual.drive(parse_drive_option(device)), device
        finally:
            qual.close()


def _foreign_write(device: str, offset: int) -> None:
    """4 KiB of data (no signature) written to the device by "another program", flushed."""
    fd = os.open(device, os.O_WRONLY)
    try:
        os.pwrite(fd, b"\x42" * 4096, offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def test_a_write_during_a_run_makes_the_next_check_full(session, tmp_path: Path,
                                                         monkeypatch) -> None:
    qual, ctx, device = session
    watch = ctx.target.watch
    assert watch is not None
    runs = iter(range(100))

    def run(job: str = JOB) -> None:
        qual.run_job(ctx, f"run{next(runs)}", job.format(device=device), tmp_path / "work",
                     writes=True, expected_runtime_s=None, timeout_s=60)

    run()
    assert_reused(run, watch)  # fio's own 4 MiB, to the byte: settled, reused
    fio_run = qual.runner.run

    def run_with_a_foreign_write(*args, **kwargs):
        result = fio_run(*args, **kwargs)
        _foreign_write(device, 16 * MIB)  # before the session settles the watch
        return result

    monkeypatch.setattr(qual.runner, "run", run_with_a_foreign_write)
    assert_reused(run, watch)  # this run's own check was reused...
    monkeypatch.undo()
    checks = watch.full_checks
    run()  # ...the one before the next run is full (the device is blank: not refused)
    assert watch.full_checks == checks + 1
    assert_reused(run, watch)  # and clean runs settle again


def test_fio_reports_the_bytes_the_kernel_counts_and_no_ramp_io(session,
                                                                tmp_path: Path) -> None:
    """fio 3.33's write and trim ``io_bytes`` against the disk's ``stat`` sectors: equal for
    a time-based QD16 write and for trims; a ``ramp_time`` run's ramp I/O is in neither."""
    qual, ctx, device = session
    watch = ctx.target.watch
    assert watch is not None
    timed = ("[w]\nfilename={device}\nrw=randwrite\nbs=4k\niodepth=16\ndirect=1\n"
             "ioengine=libaio\ntime_based=1\nruntime=1\n")
    trims = "[t]\nfilename={device}\nrw=randtrim\nbs=64k\nsize=8m\n"
    # the timed write's bytes are whatever the CPUs allowed in its second (CI, beside the
    # end-to-end tests at nice 19: 3.2 MB); at least 64 writes, four times the queue depth
    for name, job, runtime, least in (("timed", timed, 1.0, 64 * 4096),
                                      ("trims", trims, None, 8 * MIB)):
        result = qual.run_job(ctx, name, job.format(device=device), tmp_path / "work",
                              writes=True, expected_runtime_s=runtime, timeout_s=60)
        fio_bytes = device_bytes(result.run.raw_output)
        assert fio_bytes and fio_bytes >= least, (name, fio_bytes)
        assert_reused(ctx.target.assert_write_allowed, watch)  # settled: to the byte
    qual.run_job(ctx, "ramped", (timed + "ramp_time=1\n").format(device=device),
                 tmp_path / "work", writes=True, expected_runtime_s=1.0, timeout_s=60)
    checks = watch.full_checks
    ctx.target.assert_write_allowed()
    assert watch.full_checks == checks + 1  # the ramp's writes are not fio's bytes: full
