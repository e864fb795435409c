"""A fio whose main process dies (SIGKILL: an OOM kill, ``kill -9``) while its job processes
still run: the runner kills them within 2 s (fio's job processes run in sessions of their own,
so they are found by the run's command line, not by fio's process group), the run fails with a
message naming the killed job processes, and the session counts its bytes as unknown."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.errors import FioError
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.runner import FioRunner
from pytest_ssdqual.fio.written import WriteTally

from ..conftest import FakeFio, tiny_session


def run_processes(marker: Path) -> list[tuple[int, int]]:
    """``(pid, ppid)`` of running (not zombie) processes whose command line names ``marker``
    (the run's own folder: other engineers' fio runs are never counted or touched)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and str(marker).encode() in cmdline:
            found.append((int(entry), int(fields[1])))
    return found


def _wait(predicate, timeout_s: float) -> bool:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True


@pytest.mark.skipif(shutil.which("fio") is None, reason="needs fio")
def test_real_fio_killed_by_sigkill_leaves_no_job_process_and_unknown_bytes(
    tmp_path: Path,
) -> None:
    qs = tiny_session(tmp_path, "fio")
    image = tmp_path / "drive.img"
    ctx = qs.drive(parse_drive_option(f"file:{image}"))
    job = (f"[global]\nioengine=psync\nfilename={ctx.target.fio_filename}\nsize=8m\n"
           "bs=64k\n[w]\nrw=write\ntime_based=1\nruntime=40s\n")
    errors: list[BaseException] = []
    ended: list[float] = []

    def run() -> None:
        try:
            qs.run_job(ctx, "w", job, tmp_path / "w", writes=True, expected_runtime_s=40,
                       timeout_s=80)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            errors.append(exc)
        ended.append(time.monotonic())

    thread = threading.Thread(target=run)
    thread.start()
    marker = tmp_path / "w"
    try:
        # fio's main process (a child of this one) and its job process for [w] (a fork of fio,
        # in a session of its own), writing
        assert _wait(lambda: len(run_processes(marker)) >= 2, 20), run_processes(marker)
        assert _wait(lambda: image.stat().st_blocks > 0, 10)
        procs = run_processes(marker)
        leader = [pid for pid, ppid in procs if ppid == os.getpid()]
        assert len(leader) == 1, procs
        os.kill(leader[0], signal.SIGKILL)
        killed = time.monotonic()
        _wait(lambda: not run_processes(marker), 2.0)  # gone within 2 s, or the assert says
        left = [pid for pid, _ in run_processes(marker)]
        thread.join(timeout=3.0)
        took = f"{ended[0] - killed:.2f} s" if ended else "not"
        print(f"fio main SIGKILLed ({procs}): run returned {took} later, 2 s later left {left}")
        assert left == [], f"fio's job processes {left} survived fio's main process by 2 s"
        assert not thread.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], FioError), errors
        message = str(errors[0])
        assert "fio was killed by signal 9 (SIGKILL) before it finished" in message
        assert "; 1 of its job processes (pid " in message
        assert ") was still running and was killed (SIGKILL) by pytest-ssdqual: what the run " \
            "wrote is unknown and not counted" in message
        tally = qs.written[f"file:{image}"]
        assert tally == WriteTally(bytes=0, writing_runs=0, runs=1, unread=1)
        assert "1 fio run(s) left no readable output (timed out, killed, interrupted or " \
            "unparsable): their writes are not counted" in tally.line(f"file:{image}")
    finally:
        for pid, _ in run_processes(marker):
            os.kill(pid, signal.SIGKILL)
        thread.join(timeout=60)
        qs.close()


def test_a_job_process_left_by_a_dead_fio_is_killed_and_its_json_not_trusted(
    tmp_path: Path, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the stand-in writes a full JSON document (8 MiB written), forks a "job process" that
    # sleeps holding fio's stderr, then SIGKILLs itself: the JSON is not the whole story.
    monkeypatch.setenv("FAKEFIO_MODE", "orphan")
    wrapper = tmp_path / "fio"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {fake_fio.path} \"$@\"\n")
    wrapper.chmod(0o755)
    qs = tiny_session(tmp_path, str(wrapper))
    try:
        image = tmp_path / "drive.img"
        ctx = qs.drive(parse_drive_option(f"file:{image}"))
        job = (f"[global]\nfilename={ctx.target.fio_filename}\nsize=8m\n[w]\nrw=write\n")
        started = time.monotonic()
        with pytest.raises(FioError) as info:
            qs.run_job(ctx, "w", job, tmp_path / "w", writes=True, expected_runtime_s=None,
                       timeout_s=60)
        took_s = time.monotonic() - started
        assert took_s < 5, took_s  # not the stand-in job's 60 s sleep, nor the timeout
        assert "killed by signal 9 (SIGKILL)" in str(info.value)
        assert "; 1 of its job processes (pid " in str(info.value)
        assert qs.written[f"file:{image}"] == WriteTally(runs=1, unread=1)
        assert run_processes(tmp_path / "w") == []
    finally:
        for pid, _ in run_processes(tmp_path / "w"):
            os.kill(pid, signal.SIGKILL)
        qs.close()


def test_the_runner_reports_the_killed_job_processes(
    tmp_path: Path, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_MODE", "orphan")
    job = f"[w]\nfilename={tmp_path / 't.bin'}\nsize=1m\nrw=write\n"
    run = FioRunner(fake_fio.path).run(job, workdir=tmp_path, name="j", timeout_s=60,
                                       readonly=False)
    assert run.returncode == -signal.SIGKILL and len(run.orphans_killed) == 1
    assert "fakefio: job process" in run.stderr
    with pytest.raises(FioError, match=r"\(pid \d+\) was still running and was killed"):
        check_run(run)


def test_a_job_process_that_outlived_sigkill_is_named_as_such(tmp_path: Path) -> None:
    """Review: the message said every job process "was killed", also one stuck in device I/O
    (D state) that outlived SIGKILL; it now names those, with what to do."""
    from dataclasses import replace

    from pytest_ssdqual.fio.runner import FioRun

    run = FioRun(argv=("fio",), job_path=tmp_path / "j.fio", output_path=tmp_path / "j.json",
                 returncode=-signal.SIGKILL, duration_s=1.0, raw_output="", stderr="",
                 orphans_killed=(11, 12))
    with pytest.raises(FioError) as plain:
        check_run(run)
    assert "still ran after SIGKILL" not in str(plain.value)
    with pytest.raises(FioError) as stuck:
        check_run(replace(run, orphans_stuck=(12,)))
    assert ("2 of its job processes (pid 11, 12) were still running and were killed (SIGKILL) "
            "by pytest-ssdqual; pid 12 still ran after SIGKILL (stuck device I/O, or not ours "
            "to kill): stop it before testing on: what the run wrote is unknown") \
        in str(stuck.value)
