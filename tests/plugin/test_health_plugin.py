"""Health and idle wake-up through the plugin: pytester
runs of the real suites.

* B11 (``../shared/cases/found/bugtrial-inputs/B11``): a smartctl shim reporting DISK FAILING
  on the system disk, read-only workloads with the fio stand-in (the disk is never opened for
  I/O): the run used to pass; now the test fails, the verdict table, Allure and the per-drive
  summary say why.
* Deltas around a destructive workload, with readings supplied in place of a drive's SMART
  (a scratch file has none).
* The idle wake-up test with real fio (``thinktime``) on a scratch file, power states supplied.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_ssdqual.cli import rejudge as rejudge_command
from pytest_ssdqual.drive.health import DriveHealth
from pytest_ssdqual.drive.power_states import PowerState, PowerStateTable
from pytest_ssdqual.plugin import health as plugin_health
from pytest_ssdqual.qualify import idle_wake as idle_wake_module
from pytest_ssdqual.report.events import read_events
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import READ_WRITE_SUITE, REPO, FakeFio, allure_categories, cases_dir, flat_verdicts

B11 = cases_dir() / "found" / "bugtrial-inputs" / "B11"
SUITES = REPO / "suites"


def _b11_shim_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: str) -> str:
    """Put B11's smartctl shim first on PATH; return ``root``, the system disk (read only here:
    the workloads go to the fio stand-in). Skips when the case is missing."""
    if not B11.is_dir():
        pytest.skip(f"B11 case folder {B11} not found: set SSDQUAL_CASES_DIR")
    shim = tmp_path / "bin"
    shutil.copytree(B11, shim)
    (shim / "smartctl").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return root


def test_b11_disk_failing_drive_never_passes(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path, system_disk: str,
) -> None:
    root = _b11_shim_on_path(tmp_path, monkeypatch, system_disk)
    alluredir = tmp_path / "allure"
    result = pytester.runpytest(
        str(SUITES / "test_sequential.py"), "-k", "seq_read_128k_qd32", f"--drive={root}",
        f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke", f"--alluredir={alluredir}",
        "-p", "no:cacheprovider",
    )
    outcomes = result.parseoutcomes()  # the one read test ran, measured and failed
    assert outcomes.get("failed") == 1 and "passed" not in outcomes
    assert result.ret == 1
    out = flat_verdicts(result.stdout.str())
    assert "SMART status check returned DISK FAILING" in out
    assert "smartctl 7.3, exit status 8" in out
    row = [line for line in out.splitlines() if "smart_disk_failing @ session start" in line]
    assert len(row) == 1 and row[0].split()[-1] == "FAIL" and row[0].split()[0] == "health"
    # Allure: the test failed, with the health reading attached
    results = [json.loads(p.read_text()) for p in alluredir.glob("*-result.json")]
    assert [r["status"] for r in results] == ["failed"]
    names = [a["name"] for a in results[0].get("attachments", [])]
    assert "drive health (session start)" in names
    categories = json.loads((alluredir / "categories.json").read_text())
    assert allure_categories(categories, "failed", results[0]["statusDetails"]["message"]) == [
        "Drive health failing"]
    # the per-drive summary: FAIL, with the health line as the reason
    summaries = list((alluredir / "summary").glob("*.md"))
    assert len(summaries) == 1
    text = summaries[0].read_text()
    assert "FAIL" in text and "smart_disk_failing" in text


def _reading(media_errors: int) -> DriveHealth:
    return DriveHealth(source="smartctl 7.4", exit_status=0, critical_warning=0,
                       temperature_c=40, warning_temperature_c=70, media_errors=media_errors,
                       error_log_entries=0, percentage_used=3)


def test_media_error_during_a_destructive_workload_fails_it(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a scratch file has no SMART: readings are supplied, one media error appears after the
    # write workload; the built-in media_errors_delta <= 0 fails the write test, not the read
    readings = iter([_reading(0), _reading(1), _reading(1)])
    monkeypatch.setattr(plugin_health, "query_health", lambda *a, **k: next(readings))
    pytester.makepyfile(test_suite=READ_WRITE_SUITE)
    result = pytester.runpytest(
        f"--drive=file:{pytester.path / 'target.img'}", f"--fio-bin={fake_fio.path}",
        "--ssd-profile=smoke", "-p", "no:cacheprovider", "--events=events.jsonl",
    )
    result.assert_outcomes(passed=1, failed=1)
    out = flat_verdicts(result.stdout.str())
    assert ("HEALTH (session start -> after seq_write_128k_qd32): media_errors_delta 1 > max 0"
            in out)
    failed = [line for line in out.splitlines() if line.startswith("FAILED")]
    assert len(failed) == 1 and "::test_write" in failed[0]
    # the event stream has each reading as it was judged
    health = {e["label"]: e for e in read_events(pytester.path / "events.jsonl")
              if e["event"] == "health"}
    change = health["session start -> after seq_write_128k_qd32"]
    assert change["metrics"]["media_errors_delta"] == 1 and "::test_write" in change["test"]
    assert [line.split(" — ")[0] for line in change["failed"]] == [
        "media_errors_delta 1 > max 0"]
    assert set(health) == {"session start", "after seq_write_128k_qd32",
                           "session start -> after seq_write_128k_qd32"}
    assert health["after seq_write_128k_qd32"]["metrics"]["media_errors"] == 1


COUNT_LINE = re.compile(r"^\d+ limits passed.*measured metrics had no limit \(not judged\)",
                        re.M)


def _rejudge(results: Path, limits: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    capsys.readouterr()
    code = rejudge_command.run_command(argparse.Namespace(
        run=run.run_id, results_dir=str(results), thresholds=[str(limits)]))
    return code, capsys.readouterr().out


def test_a_test_failed_on_drive_health_is_stored_failed_and_rejudged_so(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: the record was written before the health was judged, so a DISK FAILING drive's
    read test was stored ``passed`` and ``ssdqual rejudge`` called the run incomplete ("failed
    ... without a stored record"); compare and trend showed it passed. The health suite's tests
    (run after the read test, as in ``suites/``) failed without any record either."""
    failing = replace(_reading(0), exit_status=8,
                      findings=("SMART status check returned DISK FAILING",))
    monkeypatch.setattr(plugin_health, "query_health", lambda *a, **k: failing)
    pytester.makepyfile(test_read="def test_read(qualify):\n    qualify('seq_read_128k_qd32')\n")
    limits = pytester.path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    results = pytester.path / "results"
    result = pytester.runpytest(
        "test_read.py", str(SUITES / "test_health.py"),
        f"--drive=file:{pytester.path / 'target.img'}", f"--thresholds={limits}",
        f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke", f"--results-dir={results}",
        "-p", "no:cacheprovider",
    )
    result.assert_outcomes(failed=3)
    [run_counts] = COUNT_LINE.findall(flat_verdicts(result.stdout.str()))
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    [record] = [r for r in run.records if r["workload"] == "seq_read_128k_qd32"]
    assert record["status"] == "failed"
    assert record["test"].endswith("::test_read[file-target.img]")
    health = record["health_failures"]
    assert health[0].endswith("drive health fails (health read by smartctl 7.4, exit status "
                              "8; smartctl: SMART status check returned DISK FAILING)"), health
    assert "HEALTH (session start): smart_disk_failing 1 > max 0" in health[1]
    # every judgement is one record: the start reading (stored by the read test, which failed
    # on it and listed it; the health suite's start test, after it, took the record over), the
    # end reading and the change
    judged = sorted((r["states"]["smart_disk_failing"] if "smart_disk_failing" in r["states"]
                     else next(iter(r["states"].values())), r["listed"], r["test"].split("::")[1])
                    for r in run.records if r["workload"] == "health")
    assert judged == [
        ("session end", "always", "test_health_at_session_end[file-target.img]"),
        ("session start", "always", "test_health_at_start[file-target.img]"),
        ("session start -> session end", "always", "test_health_at_session_end[file-target.img]"),
    ]
    # rejudge counts it as the run did: failed for drive health, not incomplete
    code, out = _rejudge(results, limits, capsys)
    assert code == 1, out
    assert "seq_read_128k_qd32: stored FAILED, now FAILED" in out
    assert "    HEALTH (session start): smart_disk_failing 1 > max 0" in out
    assert "health @ session start: stored FAILED, now FAILED" in out
    assert "  smart_disk_failing 1 > max 0" in out  # DISK FAILING: no profile relaxes it
    assert "INCOMPLETE" not in out and "without a stored record" not in out
    assert out.rstrip().endswith(f"{run_counts}; 0 regression(s); run FAILS under the new "
                                 "thresholds"), out


HEALTH_LIMITS = """version: 1
profiles:
  - name: lab
    match: {}
    source: lab
    limits:
      seq_read_128k_qd32: {bw_mbps: {min: 100}}
      health:
        temperature_c: {max: 80}
        percentage_used: {max: 90, severity: warn}
"""


def test_rejudge_judges_and_counts_the_health_readings_as_the_run(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The run's count line holds the health rows, which were never stored, so
    ``ssdqual rejudge`` with the same thresholds printed other counts (30 limits passed in the
    run, 1 in the rejudgement). The readings (start, after the destructive write, end) and the
    changes between them are now stored, judged again -- a ``max_delta`` limit added later fails
    the change around the write, which the run did not list since it passed -- and counted."""
    readings = iter([_reading(0), replace(_reading(0), error_log_entries=2),
                     replace(_reading(0), error_log_entries=2)])
    monkeypatch.setattr(plugin_health, "query_health", lambda *a, **k: next(readings))
    pytester.makepyfile(test_rw=READ_WRITE_SUITE)
    limits = pytester.path / "limits.yaml"
    limits.write_text(HEALTH_LIMITS)
    results = pytester.path / "results"
    result = pytester.runpytest(
        str(SUITES / "test_health.py"), "test_rw.py", f"--drive=file:{pytester.path / 't.img'}",
        f"--fio-bin={fake_fio.path}", f"--thresholds={limits}", "--ssd-profile=smoke",
        f"--results-dir={results}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    [run_counts] = COUNT_LINE.findall(flat_verdicts(result.stdout.str()))
    assert run_counts.startswith("32 limits passed, 0 failed, 0 missing; "), run_counts
    code, out = _rejudge(results, limits, capsys)
    assert code == 0, out
    assert out.rstrip().endswith(f"{run_counts}; 0 regression(s); run PASSES under the new "
                                 "thresholds"), out
    # the run listed the start and end readings and the session's change, not the (passing)
    # reading and change after the write
    shown = [line.split(" ", 1)[1] for line in out.splitlines() if " health @ " in line]
    assert shown == ["health @ session start: stored PASSED, now PASSED",
                     "health @ session end: stored PASSED, now PASSED",
                     "health @ session start -> session end: stored PASSED, now PASSED"]
    stricter = pytester.path / "stricter.yaml"
    stricter.write_text(HEALTH_LIMITS + "        error_log_entries: {max_delta: 0}\n")
    code, out = _rejudge(results, stricter, capsys)
    assert code == 1, out
    for interval in ("session start -> after seq_write_128k_qd32",
                     "session start -> session end"):
        assert (f" health @ {interval}: stored PASSED, now FAILED  (changed)\n"
                "  error_log_entries_delta 2 > max 0") in out
    assert " health @ after seq_write_128k_qd32:" not in out  # a reading that still passes
    assert out.rstrip().endswith("run FAILS under the new thresholds")


def test_rejudge_judges_the_start_reading_without_the_health_suite(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A passing start reading was stored only by the health suite: in a session without it, a
    stricter limit in ``ssdqual rejudge`` never judged the reading (a silent pass; review)."""
    _, _, out = _run_and_rejudge_stricter(pytester, fake_fio, monkeypatch, capsys,
                                          ["test_read.py"], passed=1)
    assert " health @ session start: stored PASSED, now FAILED  (changed)\n" in out, out
    assert out.rstrip().endswith("run FAILS under the new thresholds")


def _run_and_rejudge_stricter(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], files: list[str], *, passed: int,
) -> tuple[StoredRun, str, str]:
    """Run ``files`` (``test_read.py``: one read workload; and the health suite) with a
    passing health reading of 40 °C; rejudge the run with its own limits (passes with the run's
    count line) and with a 10 °C ceiling (fails). Returns the run, the run's count line and the
    stricter rejudgement's output."""
    monkeypatch.setattr(plugin_health, "query_health", lambda *a, **k: _reading(0))
    pytester.makepyfile(test_read="def test_read(qualify):\n    qualify('seq_read_128k_qd32')\n")
    limits = pytester.path / "limits.yaml"
    limits.write_text(HEALTH_LIMITS)
    results = pytester.path / "results"
    result = pytester.runpytest(
        *files, f"--drive=file:{pytester.path / 't.img'}", f"--fio-bin={fake_fio.path}",
        f"--thresholds={limits}", "--ssd-profile=smoke", f"--results-dir={results}",
        "-p", "no:cacheprovider")
    result.assert_outcomes(passed=passed)
    [run_counts] = COUNT_LINE.findall(flat_verdicts(result.stdout.str()))
    code, out = _rejudge(results, limits, capsys)
    assert code == 0 and out.rstrip().endswith(
        f"{run_counts}; 0 regression(s); run PASSES under the new thresholds"), out
    stricter = pytester.path / "stricter.yaml"
    stricter.write_text(HEALTH_LIMITS.replace("temperature_c: {max: 80}",
                                              "temperature_c: {max: 10}"))
    code, stricter_out = _rejudge(results, stricter, capsys)
    assert code == 1, stricter_out
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    return run, run_counts, stricter_out


@pytest.mark.parametrize("order", ["workload first", "health suite first"])
def test_the_start_reading_is_one_record_whichever_test_judged_it_first(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str], order: str,
) -> None:
    """The start reading was stored by the drive's first workload test (unlisted) and again by
    the health suite's start test: a stricter limit in ``ssdqual rejudge`` failed it twice (one
    limit too many in the count line). Now the suite's test takes the workload's record over
    (or the workload finds it stored): one record, judged and counted once."""
    health_suite = str(SUITES / "test_health.py")
    files = ["test_read.py", health_suite] if order == "workload first" else [
        health_suite, "test_read.py"]
    run, run_counts, out = _run_and_rejudge_stricter(pytester, fake_fio, monkeypatch, capsys,
                                                     files, passed=3)
    starts = [(r["listed"], r["test"].split("::")[1]) for r in run.records
              if r["workload"] == "health" and set(r["states"].values()) == {"session start"}]
    assert starts == [("always", "test_health_at_start[file-t.img]")], starts
    assert out.count(" health @ session start: stored PASSED, now FAILED  (changed)\n") == 1
    assert out.count("  temperature_c 40 > max 10") == 2, out  # the start and the end reading
    passed = int(run_counts.split(" ", 1)[0])  # "N limits passed, 0 failed, ..."
    assert re.search(rf"^{passed - 2} limits passed.*?, 2 failed", out, re.M), out


def test_health_suite_skips_on_a_scratch_file_with_the_reason(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    pytester.makepyfile(test_read="def test_read(qualify):\n    qualify('seq_read_128k_qd32')\n")
    alluredir = pytester.path / "allure"
    result = pytester.runpytest(
        str(SUITES / "test_health.py"), str(SUITES / "test_idle_power.py"), "test_read.py",
        f"--drive=file:{pytester.path / 'target.img'}", f"--fio-bin={fake_fio.path}",
        "--ssd-profile=smoke", "-rs", "-p", "no:cacheprovider", f"--alluredir={alluredir}",
    )
    result.assert_outcomes(skipped=3, passed=1)
    out = flat_verdicts(result.stdout.str())
    # each skip at its own test (it used to be one line at plugin/health.py: not the test)
    health_skips = [line for line in out.splitlines() if line.startswith("SKIPPED ")
                    and line.endswith("a scratch file has no SMART / NVMe health log")]
    assert [line.split(" ")[2].rsplit("/", 1)[1] for line in health_skips] == [
        "test_health.py:11:", "test_health.py:17:"], health_skips  # the tests' own lines
    assert "pytest_ssdqual" not in "".join(health_skips)
    assert "NVMe power states and APST exist only on an NVMe drive" in out
    assert fake_fio.job_rws() == ["write", "read"]  # the prefill and test_read only
    # skips of tests that cannot apply to a scratch file do not make the run incomplete: it
    # is stored as passing (eligible as a firmware baseline)
    [header] = [line for line in out.splitlines() if line.startswith("ssdqual: results: ")]
    run_dir = Path(header.removeprefix("ssdqual: results: ").split(";")[0])
    run = json.loads((run_dir / "run.json").read_text())
    assert run["passed"] is True and run["tests"]["skipped"] == 0
    # nor the drive's qualification summary: NOT APPLICABLE, not SKIPPED (INCOMPLETE)
    [md] = (alluredir / "summary").glob("*.md")
    text = md.read_text()
    assert text.count("| NOT APPLICABLE | Skipped: ") == 3, text
    assert "SKIPPED" not in text, text


def test_session_end_reading_runs_last_and_judges_the_change(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    # test_health.py is collected before test_sequential.py; its session-end test still runs
    # last. The readings: start, end (3 more error-log entries: a lab limit makes that a
    # warning)
    readings = iter([_reading(0), replace(_reading(0), error_log_entries=3)])
    monkeypatch.setattr(plugin_health, "query_health", lambda *a, **k: next(readings))
    th = pytester.path / "limits.yaml"
    th.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {}\n    source: lab\n"
                  "    limits:\n      health:\n"
                  "        error_log_entries: {max_delta: 0, severity: warn}\n")
    result = pytester.runpytest(
        str(SUITES / "test_health.py"), str(SUITES / "test_sequential.py"), "-k",
        "health or seq_read_128k_qd32", f"--drive=file:{pytester.path / 'target.img'}",
        f"--fio-bin={fake_fio.path}", f"--thresholds={th}", "--ssd-profile=smoke", "-v",
        "-p", "no:cacheprovider",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed") == 3 and "failed" not in outcomes
    out = flat_verdicts(result.stdout.str())
    order = [line.split("::")[1].split()[0] for line in out.splitlines()
             if "::" in line and "PASSED" in line]
    assert order[-1].startswith("test_health_at_session_end")
    warn = [line for line in out.splitlines() if "error_log_entries_delta" in line]
    assert len(warn) == 1 and warn[0].split()[-1] == "WARN" and " 3 " in warn[0]


def test_idle_wake_runs_fio_with_thinktime(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed")
    table = PowerStateTable((PowerState(0, 8.0, False, 0, 0), PowerState(1, 0.005, True, 2000,
                                                                         8000)), True)
    monkeypatch.setattr(idle_wake_module, "read_power_states", lambda ctx: (table, True))
    th = pytester.path / "limits.yaml"
    th.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {}\n    source: lab\n"
                  "    limits:\n      idle_wake_read_4k_qd1:\n"
                  "        wake_penalty_us: {max: 10000000}\n"
                  "        idle_100ms.lat_p50_us: {max: 10000000}\n"
                  "        max_transition_latency_us: {max: 100000}\n"
                  "        max_idle_exit_latency_us: {max: 8000}\n")
    alluredir = pytester.path / "allure"
    results = pytester.path / "results"
    result = pytester.runpytest(
        str(SUITES / "test_idle_power.py"), f"--drive=file:{pytester.path / 'target.img'}",
        f"--thresholds={th}", "--ssd-profile=smoke", f"--alluredir={alluredir}",
        f"--results-dir={results}", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(passed=1)
    # stored like every suite (before: never stored, gated or re-judged)
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    [record] = run.records
    assert record["workload"] == "idle_wake_read_4k_qd1" and record["status"] == "passed"
    assert record["metrics"]["max_transition_latency_us"] == 10_000
    assert record["metrics"]["max_idle_exit_latency_us"] == 8_000
    assert record["states"]["wake_penalty_us"] == "prefilled"
    [rep] = run.path.glob("*/idle_wake_read_4k_qd1/rep1")
    stored = {p.name for p in rep.iterdir()}
    assert {"idle_100ms__idle_100ms.fio", "busy__busy.json"} <= stored, stored
    [allure_result] = [json.loads(p.read_text()) for p in alluredir.glob("*-result.json")]
    [table_file] = [a["source"] for a in allure_result["attachments"]
                    if a["name"] == "NVMe power states"]
    assert "PS1: max 0.005 W, non-operational, entry 2000 us, exit 8000 us" in (
        alluredir / table_file).read_text()
    rows = {}
    for line in flat_verdicts(result.stdout.str()).splitlines():
        parts = line.split()
        if len(parts) > 4 and parts[0] == "idle_wake_read_4k_qd1":
            assert parts[2:4] == ["@", "prefilled"]  # reads after the session's prefill
            rows[parts[1]] = (float(parts[4].replace(",", "")), parts[-1])
    assert rows["max_transition_latency_us"] == (10_000, "PASS")  # 2000 + 8000 µs, the table
    assert rows["max_idle_exit_latency_us"] == (8_000, "PASS")  # the exit latency alone
    assert rows["wake_penalty_us"][1] == "PASS"
    assert rows["idle_100ms.lat_p50_us"][0] > 0
    # fio did the idle: the 100 ms job file has thinktime=100000 (µs), one I/O per gap
    jobs = list(pytester.path.parent.rglob("idle_100ms.fio"))
    assert jobs, "job file of the 100 ms gap not found"
    text = jobs[0].read_text()
    assert "thinktime=100000" in text and "thinktime_blocks=1" in text
    assert "number_ios=20" in text and "rw=randread" in text


def test_failing_drive_fails_the_idle_wake_test_and_is_stored_failed(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: the idle wake-up test never consulted the drive's health nor stored its record:
    on a DISK FAILING drive it passed and left nothing to gate or re-judge."""
    if shutil.which("fio") is None:
        pytest.skip("fio not installed")
    table = PowerStateTable((PowerState(0, 8.0, False, 0, 0), PowerState(1, 0.005, True, 2000,
                                                                         8000)), True)
    monkeypatch.setattr(idle_wake_module, "read_power_states", lambda ctx: (table, True))
    failing = replace(_reading(0), exit_status=8,
                      findings=("SMART status check returned DISK FAILING",))
    monkeypatch.setattr(plugin_health, "query_health", lambda *a, **k: failing)
    results = pytester.path / "results"
    result = pytester.runpytest(
        str(SUITES / "test_idle_power.py"), f"--drive=file:{pytester.path / 'target.img'}",
        "--ssd-profile=smoke", f"--results-dir={results}", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(failed=1)
    assert "HEALTH (session start): smart_disk_failing 1 > max 0" in result.stdout.str()
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    [record, start] = sorted(run.records, key=lambda r: r["workload"] != "idle_wake_read_4k_qd1")
    assert record["workload"] == "idle_wake_read_4k_qd1" and record["status"] == "failed"
    assert (start["workload"], start["status"], start["listed"]) == ("health", "failed",
                                                                    "if failed")
    assert any("smart_disk_failing 1 > max 0" in h for h in record["health_failures"])


def test_failing_drive_fails_a_methodology_test_too(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a reading with exit status 8 (DISK FAILING), supplied for a scratch file: the sustained
    # write test ran and met its limits, yet fails on the drive's health
    failing = replace(_reading(0), exit_status=8,
                      findings=("SMART status check returned DISK FAILING",))
    monkeypatch.setattr(plugin_health, "query_health", lambda *a, **k: failing)
    result = pytester.runpytest(
        str(SUITES / "test_sustained_write.py"), f"--drive=file:{pytester.path / 'target.img'}",
        "--ssd-profile=smoke", "-p", "no:cacheprovider",
    )
    result.assert_outcomes(failed=1)
    out = flat_verdicts(result.stdout.str())
    assert "SMART status check returned DISK FAILING" in out
    assert "HEALTH (session start): smart_disk_failing 1 > max 0" in out


def test_b11_identify_says_disk_failing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    system_disk: str,
) -> None:
    # B11: `ssdqual identify` took model and serial from the shim and said nothing of its
    # DISK FAILING status
    root = _b11_shim_on_path(tmp_path, monkeypatch, system_disk)
    from pytest_ssdqual.cli.main import main

    assert main(["identify", root]) == 0
    out = capsys.readouterr().out
    assert "health          health read by smartctl 7.3, exit status 8" in out
    assert "smartctl: SMART status check returned DISK FAILING" in out
    assert "FAIL smart_disk_failing 1 > max 0" in out
