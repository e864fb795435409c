"""Tests that do not end normally, read back from the Allure ``*-result.json`` files (found
cases B19, B20, B21):

* two drives running the same test have distinct Allure history ids (B20);
* ``--clean-alluredir`` under ``-n 2`` loses nothing when xdist replaces a crashed worker (B19);
* a crashed worker's test gets one *broken* result on the right drive (same history id as its
  normal result, the drive's facts and the fio job attached), that drive's summary is FAIL, the
  test is not run again, and the scratch file the dead worker created is removed (B21);
* a test stopped by SIGINT/SIGTERM is *broken* (``INTERRUPTED: ...``) in Allure and
  ``INTERRUPTED`` in the per-drive summary, never passed -- with and without ``-n 2``.

fio is the stand-in ``tests/fakefio.py``; its ``kill-parent`` mode SIGKILLs the xdist worker in
the ``[seq_read_128k_qd32]`` job on ``a.img``, as the found cases B19/B21 did first with
``cases/found/bugtrial-inputs/B19/fio_kill_parent.sh`` (a shell wrapper around the stand-in).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from ..conftest import (
    FAKE_FIO,
    FakeFio,
    allure_categories,
    limits_yaml,
    popen_interruptible,
    qual_args,
    sigint_ignored,
    write_suite,
)

SUITE = """
import pytest

@pytest.mark.parametrize("workload_id", ["rand_read_4k_qd1", "seq_read_128k_qd32"])
def test_read(qualify, workload_id):
    qualify(workload_id)
"""

THRESHOLDS = limits_yaml({"seq_read_128k_qd32": {"bw_mbps": {"min": 100}},
                             "rand_read_4k_qd1": {"iops": {"min": 1000}}})


def _results(alluredir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(alluredir.glob("*-result.json"))]


def _label(result: dict[str, Any], name: str) -> str:
    return next((lab["value"] for lab in result["labels"] if lab["name"] == name), "")


def _param(result: dict[str, Any], name: str) -> str:
    return next((p["value"] for p in result["parameters"] if p["name"] == name), "")


def _attachment(alluredir: Path, result: dict[str, Any], name: str) -> str:
    (source,) = [a["source"] for a in result.get("attachments", []) if a["name"] == name]
    return (alluredir / source).read_text()


def _key(result: dict[str, Any]) -> tuple[str, str]:
    """(drive file name, workload) of a result."""
    return Path(_param(result, "ssd_drive").strip("'")).name, _label(result, "story")


def _summary_page(alluredir: Path, drive: Path) -> str:
    """The one per-drive summary (Markdown) of the drive at path ``drive``: the customer page
    (the default audience) names a file target by its file name, not the lab's path."""
    (page,) = [t for p in (alluredir / "summary").glob("*.md")
               if f"S/N {drive.name})" in (t := p.read_text())]
    return page


def _args(path: Path, alluredir: Path, fio: str, *extra: str) -> list[str]:
    th = path / "limits.yaml"
    th.write_text(THRESHOLDS)
    return qual_args(path, th, fio, "--scratch-size=16M", f"--alluredir={alluredir}",
                     f"--results-dir={path / 'store'}", "-n", "2", *extra,
                     drives=("a.img", "b.img"))


def test_crashed_worker_one_broken_result_on_its_drive_not_rerun_nothing_lost(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_suite=SUITE)
    # The same test on the same drives without a crash: the history ids a crash must keep.
    normal_dir = pytester.path / "allure-normal"
    pytester.runpytest_subprocess(*_args(pytester.path, normal_dir, str(FAKE_FIO))
                                  ).assert_outcomes(passed=4)
    normal = {_key(r): r for r in _results(normal_dir)}
    assert len(normal) == 4
    # B20: two drives, same test -> two history ids (before: one, shown as "retries").
    assert len({r["historyId"] for r in normal.values()}) == 4
    assert _param(normal["a.img", "seq_read_128k_qd32"], "drive identity") == repr(
        str(pytester.path / "a.img"))

    alluredir = pytester.path / "allure"
    alluredir.mkdir()
    (alluredir / "stale-result.json").write_text("{}")  # a previous run's: must be wiped
    # the fio stand-in SIGKILLs the worker running a.img's seq_read_128k_qd32 (B19/B21)
    monkeypatch.setenv("FAKEFIO_MODE", "kill-parent")
    monkeypatch.setenv("FAKEFIO_ONLY", "seq_read_128k_qd32")
    monkeypatch.setenv("FAKEFIO_ONLY_ON", "/a.img")
    result = pytester.runpytest_subprocess(
        *_args(pytester.path, alluredir, str(FAKE_FIO), "--clean-alluredir"))
    out = result.stdout.str()
    # B21: crashed once, not re-run on the replacement workers (before: 9 crashes, 8 restarts).
    assert out.count("replacing crashed worker") == 1, out
    assert "maximum crashed workers reached" not in out
    result.assert_outcomes(passed=3, failed=1)
    # B19: --clean-alluredir wiped the stale file once, in the controller; nothing written by
    # the workers or the controller since was lost (before: 1 result left).
    assert not (alluredir / "stale-result.json").exists()
    results = {_key(r): r for r in _results(alluredir)}
    assert len(_results(alluredir)) == 4 and len(results) == 4
    statuses = {k: r["status"] for k, r in results.items()}
    assert statuses == {("a.img", "rand_read_4k_qd1"): "passed",
                        ("a.img", "seq_read_128k_qd32"): "broken",
                        ("b.img", "rand_read_4k_qd1"): "passed",
                        ("b.img", "seq_read_128k_qd32"): "passed"}
    crash = results["a.img", "seq_read_128k_qd32"]
    assert "crashed while running" in crash["statusDetails"]["message"]
    categories = json.loads((alluredir / "categories.json").read_text())
    assert allure_categories(categories, "broken", crash["statusDetails"]["message"]) == [
        "Worker crashed"]
    # on the right drive, in the test's own history (before: no drive, md5(nodeid))
    assert crash["historyId"] == normal["a.img", "seq_read_128k_qd32"]["historyId"]
    assert _label(crash, "parentSuite") == _label(normal["a.img", "seq_read_128k_qd32"],
                                                  "parentSuite")
    assert crash["name"] == normal["a.img", "seq_read_128k_qd32"]["name"]
    drive = json.loads(_attachment(alluredir, crash, "drive"))
    assert drive["drive"] == f"file:{pytester.path / 'a.img'}"
    job = _attachment(alluredir, crash, "fio job (running when the test stopped)")
    assert "[seq_read_128k_qd32]" in job and f"filename={pytester.path / 'a.img'}" in job
    # per-drive summary: the crashed drive FAILs, the other PASSes (before: a PASS and an
    # "unknown drive" FAIL)
    page_a = _summary_page(alluredir, pytester.path / "a.img")
    page_b = _summary_page(alluredir, pytester.path / "b.img")
    assert len(list((alluredir / "summary").glob("*.md"))) == 2
    assert "**Overall: FAIL**" in page_a and "**Overall: PASS**" in page_b
    assert "| seq_read_128k_qd32 | ERROR | worker 'gw" in page_a
    assert "unknown drive" not in out
    # the scratch file the dead worker created is gone (before: left behind)
    assert not (pytester.path / "a.img").exists() and not (pytester.path / "b.img").exists()


SETUP_CRASH_SUITE = """
import os
import signal

import pytest

@pytest.fixture
def crash_in_setup(ssd_drive):
    if os.environ.get("CRASH_IN_SETUP") and ssd_drive.target.spec.raw.endswith("/a.img"):
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies before the test's labels

@pytest.mark.parametrize("workload_id", ["seq_read_128k_qd32"])
def test_read(crash_in_setup, qualify, workload_id):
    qualify(workload_id)
"""


def test_a_worker_dead_in_set_up_leaves_the_tests_own_history_and_drive(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A former bug: a worker that died during a test's set-up, after its drive was opened
    but before the journal's first Allure snapshot, got ``md5(node id)`` as history id: the
    crash landed outside the test's history on its drive."""
    pytester.makepyfile(test_suite=SETUP_CRASH_SUITE)
    normal_dir = pytester.path / "allure-normal"
    pytester.runpytest_subprocess(*_args(pytester.path, normal_dir, str(FAKE_FIO))
                                  ).assert_outcomes(passed=2)
    normal = {_key(r): r for r in _results(normal_dir)}
    alluredir = pytester.path / "allure"
    monkeypatch.setenv("CRASH_IN_SETUP", "1")
    result = pytester.runpytest_subprocess(*_args(pytester.path, alluredir, str(FAKE_FIO)))
    result.assert_outcomes(passed=1, failed=1)
    crashed = [r for r in _results(alluredir) if r["status"] == "broken"]
    assert len(crashed) == 1 and "crashed while running" in crashed[0]["statusDetails"]["message"]
    own = normal["a.img", "seq_read_128k_qd32"]
    assert crashed[0]["historyId"] == own["historyId"]
    assert _label(crashed[0], "parentSuite") == _label(own, "parentSuite")
    assert _param(crashed[0], "drive identity") == _param(own, "drive identity")
    assert _param(crashed[0], "workload_id") == "'seq_read_128k_qd32'"


INTERRUPT_SUITE = """
def test_1_finishes(qualify):
    qualify("seq_read_128k_qd32")

def test_2_interrupted(qualify):
    qualify("rand_read_4k_qd1")
"""


def _hanging_jobs(log: Path) -> int:
    if not log.exists():
        return 0
    return sum("[rand_read_4k_qd1]" in json.loads(line)["job"]
               for line in log.read_text().splitlines())


@pytest.mark.parametrize(("sig", "workers"), [
    (signal.SIGTERM, 0), (signal.SIGINT, 0), (signal.SIGTERM, 2),
], ids=["SIGTERM", "SIGINT", "SIGTERM-n2"])
def test_an_interrupted_test_is_broken_never_passed(
    tmp_path: Path, sig: signal.Signals, workers: int
) -> None:
    th = write_suite(tmp_path, INTERRUPT_SUITE, THRESHOLDS)
    log = tmp_path / "fakefio.log"
    alluredir = tmp_path / "allure"
    drives = ["a.img"] + (["b.img"] if workers else [])
    env = dict(os.environ, FAKEFIO_LOG=str(log), FAKEFIO_MODE="hang",
               FAKEFIO_ONLY="rand_read_4k_qd1")  # test 2's fio never ends by itself
    argv = [sys.executable, "-m", "pytest", "test_suite.py", *qual_args(
        tmp_path, th, str(FAKE_FIO), "--scratch-size=16M", f"--alluredir={alluredir}",
        f"--results-dir={tmp_path / 'store'}", *(["-n", str(workers)] if workers else []),
        drives=tuple(drives))]
    with sigint_ignored():  # as a CI runner's background job starts it
        proc = popen_interruptible(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while _hanging_jobs(log) < len(drives):  # every drive's test 2 is in its fio
            assert proc.poll() is None and time.monotonic() < deadline, proc.stdout
            time.sleep(0.1)
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    results = {(Path(_param(r, "ssd_drive").strip("'")).name, r["fullName"].rsplit("#")[-1]): r
               for r in _results(alluredir)}
    for drive in drives:
        assert results[drive, "test_1_finishes"]["status"] == "passed"
        stopped = results[drive, "test_2_interrupted"]  # before: "passed", or no result (-n 2)
        assert stopped["status"] == "broken", stopped
        assert stopped["statusDetails"]["message"].startswith("INTERRUPTED: "), stopped
        assert allure_categories(json.loads((alluredir / "categories.json").read_text()),
                                 "broken", stopped["statusDetails"]["message"]) == [
            "Interrupted (SIGINT/SIGTERM)"]
        assert _label(stopped, "parentSuite").endswith(f"S/N {tmp_path / drive})")
        page = _summary_page(alluredir, tmp_path / drive)
        assert "**Overall: INCOMPLETE**" in page
        assert "| rand_read_4k_qd1 | INTERRUPTED | INTERRUPTED: " in page
        assert not (tmp_path / drive).exists()  # the plugin's scratch files are removed
    names = [c["name"] for c in json.loads((alluredir / "categories.json").read_text())]
    assert names.index("Interrupted (SIGINT/SIGTERM)") < names.index("Device or fio error")


def test_controller_writes_the_result_of_a_worker_stopped_without_unwinding(
    tmp_path: Path
) -> None:
    """A worker killed while the run was being interrupted wrote no result: the controller
    writes it from the worker's journal, broken INTERRUPTED, as the test's own result (uuid,
    title, parent suite, history id); a test whose own result exists is left alone, and the
    scratch file the worker created is removed."""
    from types import SimpleNamespace

    from pytest_ssdqual.plugin.workers import ControllerHooks
    from pytest_ssdqual.results.journal import WorkerJournal
    from pytest_ssdqual.results.stored import load_results

    alluredir, folder = tmp_path / "allure", tmp_path / "journal"
    alluredir.mkdir()
    folder.mkdir()
    scratch = tmp_path / "a.img"
    scratch.write_bytes(b"\0" * 4096)
    facts = {"drive": f"file:{scratch}", "model": "Scratch file", "serial": str(scratch),
             "firmware": "6.1"}
    snapshot = {"uuid": "u-1", "name": "128 KiB sequential read, QD32", "historyId": "h-1",
                "fullName": "suites.test_sequential#test_sequential_read", "start": 1000,
                "labels": [{"name": "parentSuite", "value": "Scratch file (fw 6.1, S/N x)"},
                           {"name": "story", "value": "seq_read_128k_qd32"}],
                "parameters": [{"name": "drive identity", "value": repr(str(scratch))}],
                "steps": [{"name": "measure: fio seq_read_128k_qd32", "start": 1000}]}
    journal = WorkerJournal(folder, "gw0")
    journal.created_file(str(scratch))
    journal.start("suites/test_sequential.py::test_sequential_read[file-a.img]@file-a.img",
                  drive=f"file:{scratch}", facts=facts, tmp_path=str(tmp_path))
    journal.update(snapshot)
    (tmp_path / "seq_read_128k_qd32.fio").write_text("[seq_read_128k_qd32]\nrw=read\n")
    finished = WorkerJournal(folder, "gw1")  # its test wrote its own result: left alone
    finished.start("t.py::test_other", drive="file:b", snapshot={"uuid": "u-2"})
    (alluredir / "x-result.json").write_text(json.dumps({"uuid": "u-2", "status": "passed"}))

    hooks = ControllerHooks(SimpleNamespace(option=SimpleNamespace(
        allure_report_dir=str(alluredir))))  # type: ignore[arg-type]
    hooks.folder = folder
    assert hooks.finish_workers(int(pytest.ExitCode.INTERRUPTED)) == 1
    assert not scratch.exists()
    written = [r for r in _results(alluredir) if r["uuid"] == "u-1"]
    assert len(written) == 1 and len(_results(alluredir)) == 2
    (result,) = written
    assert result["status"] == "broken" and result["historyId"] == "h-1"
    assert result["statusDetails"]["message"].startswith("INTERRUPTED: the run was stopped "
                                                         "while worker gw0 ran this test")
    assert result["steps"][0]["status"] == "broken" and result["steps"][0]["stop"] >= 1000
    assert json.loads(_attachment(alluredir, result, "drive"))["drive"] == f"file:{scratch}"
    assert "[seq_read_128k_qd32]" in _attachment(
        alluredir, result, "fio job (running when the test stopped)")
    (test,) = [t for t in load_results(alluredir) if t.uuid == "u-1"]
    assert test.drive["serial"] == str(scratch)


def test_a_not_rerun_skip_never_replaces_the_crash_result(tmp_path: Path) -> None:
    from pytest_ssdqual.report.drive_summary import build_summaries
    from pytest_ssdqual.results.stored import load_results

    for i, (status, message) in enumerate((
            ("broken", "worker 'gw0' crashed while running 't.py::test_x'"),
            ("skipped", "Skipped: NOT RERUN: a worker crashed in this test earlier")), start=1):
        (tmp_path / f"{i}-result.json").write_text(json.dumps({
            "uuid": f"u{i}", "name": "x", "historyId": "h", "status": status,
            "statusDetails": {"message": message}, "start": i * 1000, "stop": i * 1000 + 1,
            "parameters": [{"name": "ssd_drive", "value": "file:a.img"}]}))
    (test,) = load_results(tmp_path)
    assert test.status == "broken"
    (summary,) = build_summaries([test], charts=False)
    assert summary.overall == "FAIL"
