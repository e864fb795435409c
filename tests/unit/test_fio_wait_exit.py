"""``fio.process.wait_exit``: wakes the moment fio exits (a pidfd), never reaps it, times out."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from pytest_ssdqual.fio import process


def test_it_wakes_on_the_exit_without_polling_and_leaves_the_process_unreaped(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    # it polled waitid with sleeps of up to 50 ms: each fio run ended up to 50 ms late
    def no_sleep(_s: float) -> None:
        raise AssertionError("polled with time.sleep although a pidfd was there")

    monkeypatch.setattr(process.time, "sleep", no_sleep)
    proc = subprocess.Popen(["sleep", "0.2"])
    start = time.monotonic()
    process.wait_exit(proc, 5)
    assert 0.19 < time.monotonic() - start < 2
    # not reaped: the pid (fio's process group id) is still held by the zombie
    assert os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    assert proc.wait(timeout=1) == 0


def test_it_times_out_on_a_process_that_keeps_running() -> None:
    proc = subprocess.Popen(["sleep", "5"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait_exit(proc, 0.2)
    finally:
        proc.kill()
        proc.wait()


def test_without_a_pidfd_it_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(process, "_pidfd", lambda pid: None)
    proc = subprocess.Popen(["sleep", "0.1"])
    process.wait_exit(proc, 5)
    assert proc.wait(timeout=1) == 0
