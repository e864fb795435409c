"""``fio.process.wait_exit``: wakes the moment fio exits (a pidfd), never reaps it, times out."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

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


@pytest.mark.parametrize(("argv", "clean"), [
    (["true"], True), (["false"], False), (["sh", "-c", "kill -KILL $$"], False)])
def test_it_says_whether_the_process_exited_by_itself_with_status_0(argv: list[str],
                                                                     clean: bool) -> None:
    # status 0: fio reaped its jobs, and the runner skips the /proc scan for leftovers
    proc = subprocess.Popen(argv)
    assert process.wait_exit(proc, 5) is clean
    proc.wait(timeout=1)


def test_fio_is_started_through_setpriv_with_the_parent_death_signal() -> None:
    prefix = process.death_signal_prefix()
    if not prefix:
        pytest.skip("no setpriv with --pdeathsig here (util-linux < 2.33)")
    assert prefix[1:] == ("--pdeathsig", "TERM", "--")
    # the signal is really set: a child whose parent dies gets SIGTERM (prctl(2))
    script = ("import subprocess,sys,os,time;"
              f"p=subprocess.Popen({list(prefix)!r}+['sleep','30'],start_new_session=True);"
              "print(p.pid,flush=True);time.sleep(0.3);os._exit(0)")
    pid = int(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                             check=True).stdout)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            break
        if state == "Z":
            break
        time.sleep(0.02)
    else:
        os.kill(pid, 9)
        raise AssertionError("the fio stand-in outlived its parent by 5 s")
