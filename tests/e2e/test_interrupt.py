"""Fault injection, interruption, with the real fio.

Ctrl-C (SIGINT) and SIGTERM sent to a pytest run while fio runs a workload: fio's process group
is gone within 2 s, no fio survives, the results of the finished tests are stored (Allure
results and the results store) and a report can be built from them. A pytest-xdist worker that
dies inside a test (``os._exit``) while its fio runs leaves a failed (pytest) / broken (Allure)
result for that test, not a hole, and its fio stops too.

pytest runs as a subprocess here so it can be signalled; fio processes are found by scanning
``/proc`` for command lines that point into the run's own ``--basetemp`` (other engineers' fio
runs on the same machine are never counted or touched).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pytest_ssdqual.report import html as htmlreport
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import (
    limits_yaml,
    popen_interruptible,
    qual_args,
    sigint_ignored,
    write_suite,
)

pytestmark = pytest.mark.e2e

SUITE = """
def test_1_finishes(qualify):
    qualify("seq_read_128k_qd32")

def test_2_interrupted(qualify):
    qualify("rand_read_4k_qd1")

def test_3_never_runs(qualify):
    qualify("rand_read_4k_qd32")
"""

THRESHOLDS = limits_yaml({"seq_read_128k_qd32": {"bw_mbps": {"min": 1}},
                             "rand_read_4k_qd1": {"iops": {"min": 1}},
                             "rand_read_4k_qd32": {"iops": {"min": 1}}})


def _argv(tmp_path: Path, name: str, suite: str, *extra: str) -> tuple[list[str], Path, Path]:
    """A pytest command line running ``suite`` (written as ``tmp_path/name``) with the real
    fio on a scratch file, and its basetemp and Allure folders."""
    th = write_suite(tmp_path, suite, THRESHOLDS, name)
    basetemp, alluredir = tmp_path / "basetemp", tmp_path / "allure"
    argv = [sys.executable, "-m", "pytest", name, *qual_args(
        tmp_path, th, None, f"--basetemp={basetemp}", f"--alluredir={alluredir}",
        f"--results-dir={tmp_path / 'results'}", *extra)]
    return argv, basetemp, alluredir


def _need_fio() -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")


def fio_pids(marker: str) -> list[int]:
    """pids of running fio processes whose command line contains ``marker`` (a folder)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state == "Z":  # exited, not yet reaped: not running
            continue
        if argv and os.path.basename(argv[0]) == b"fio" and any(
            marker.encode() in a for a in argv
        ):
            found.append(int(entry))
    return found


def wait_for(predicate, timeout_s: float, step_s: float = 0.05) -> float:  # type: ignore[no-untyped-def]
    """Poll ``predicate`` until true; return the seconds it took, or fail after ``timeout_s``."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout_s:
            pytest.fail(f"condition not met within {timeout_s} s")
        time.sleep(step_s)
    return time.monotonic() - start


def _reap(proc: subprocess.Popen[str], basetemp: Path) -> list[int]:
    """Kill the pytest run if it still runs, then every fio left under ``basetemp``; return
    the pids of those fio (none when the run cleaned up after itself)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:  # not closed when communicate() timed out
        proc.stdout.close()
    left = fio_pids(str(basetemp))
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], Path, Path]:
    argv, basetemp, alluredir = _argv(tmp_path, "test_suite.py", SUITE, "-v", *extra)
    with sigint_ignored():  # as a CI runner's background job starts it
        proc = popen_interruptible(argv, cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
    return proc, basetemp, alluredir


def _statuses(alluredir: Path) -> dict[str, str]:
    out = {}
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        out[result["fullName"].rsplit("#", 1)[-1]] = result["status"]
    return out


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_during_a_workload_stops_fio_and_keeps_the_results_so_far(
    tmp_path: Path, sig: signal.Signals
) -> None:
    _need_fio()
    try:
        htmlreport.find_allure()
    except htmlreport.ReportToolMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have it (scripts/setup.sh installs it): {exc}")
        pytest.skip(str(exc))
    proc, basetemp, alluredir = _start(tmp_path)
    try:
        # wait until test 2's fio runs (test 1 finished): its pid appears
        wait_for(lambda: bool(fio_pids(str(basetemp / "test_2"))), timeout_s=60)
        proc.send_signal(sig)
        gone_s = wait_for(lambda: not fio_pids(str(basetemp)), timeout_s=2.0)
        out, _ = proc.communicate(timeout=60)
    finally:
        left = _reap(proc, basetemp)
    assert left == []
    print(f"{sig.name}: fio gone {gone_s:.2f} s after the signal")  # shown with -rP
    assert gone_s <= 2.0
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out or "Terminated" in out, out
    if sig == signal.SIGTERM:
        assert "received signal 15 (SIGTERM): stopping like Ctrl-C" in out, out
    assert "test_3_never_runs PASSED" not in out and "test_3_never_runs FAILED" not in out
    # Allure: the finished test's result is there and whole.
    statuses = _statuses(alluredir)
    assert statuses.get("test_1_finishes") == "passed", statuses
    assert "test_3_never_runs" not in statuses
    for path in alluredir.glob("*-result.json"):
        for attachment in json.loads(path.read_text()).get("attachments", []):
            assert (alluredir / attachment["source"]).is_file()
    # The HTML report builds from the results of the interrupted run.
    build = htmlreport.build_report(alluredir, tmp_path / "report")
    assert build.tests == len(statuses) >= 1 and build.index.stat().st_size > 0
    # Results store: the run is complete, marked interrupted, and holds test 1's workload.
    (run_folder,) = ResultsStore(tmp_path / "results").complete_runs()
    run = StoredRun.load(run_folder)
    assert run.info["status"] == "interrupted" and run.info["exitstatus"] == 2
    assert set(run.records_of(f"file:{tmp_path / 'target.img'}")) == {"seq_read_128k_qd32"}
    # Fixtures were torn down: the scratch file the plugin created is gone.
    assert not (tmp_path / "target.img").exists()


CRASH_SUITE = """
import os
import threading

def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:  # the process is gone
        return b""

def _crash_once_the_read_runs():
    # the worker dies 1 s after the read's own fio started (not during the session's prefill)
    import time
    while not any(b"seq_read_128k_qd32.json" in _cmdline(p)
                  for p in os.listdir("/proc") if p.isdigit()):
        time.sleep(0.05)
    time.sleep(1.0)
    os._exit(3)

def test_crashes_while_fio_runs(qualify):
    threading.Thread(target=_crash_once_the_read_runs, daemon=True).start()
    qualify("seq_read_128k_qd32")
"""


def test_crashed_xdist_worker_leaves_a_broken_result_and_no_fio(tmp_path: Path) -> None:
    _need_fio()
    argv, basetemp, alluredir = _argv(tmp_path, "test_crash.py", CRASH_SUITE, "-n", "1",
                                      "--max-worker-restart=0")
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        wait_for(lambda: bool(fio_pids("seq_read_128k_qd32.json")), timeout_s=60)
        wait_for(lambda: not fio_pids(str(basetemp)), timeout_s=1.0 + 2.5)
        out, _ = proc.communicate(timeout=60)
    finally:
        left = _reap(proc, basetemp)
    assert left == []
    assert "crashed while running" in out and "test_crashes_while_fio_runs" in out, out
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED, out
    assert "1 failed" in out, out
    results = [json.loads(p.read_text()) for p in alluredir.glob("*-result.json")]
    assert len(results) == 1, results
    (result,) = results
    assert result["status"] == "broken"
    assert result["fullName"] == "test_crash#test_crashes_while_fio_runs"
    assert "worker 'gw0' crashed while running" in result["statusDetails"]["message"]
    # fio's own output file shows it was stopped by the parent-death SIGTERM, not run to its end
    outputs = {p.resolve() for p in basetemp.rglob("seq_read_128k_qd32.json")}
    listing = sorted(str(p.relative_to(basetemp)) for p in basetemp.rglob("*"))
    assert len(outputs) == 1, f"fio's output file under {basetemp}: {listing}"  # CI: once none
    (output,) = outputs
    assert "fio: terminating on signal 15" in output.read_text()
