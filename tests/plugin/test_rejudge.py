"""``ssdqual rejudge`` on constructed stored runs and on a run the plugin stored: an incomplete
run never PASSES, and a rejudgement applies the run's implicit rules and counts its limits."""

from __future__ import annotations

import argparse
import functools
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.cli import rejudge as rejudge_command
from pytest_ssdqual.methodology.registry import run_methodology
from pytest_ssdqual.qualify import measure as qualify_measure
from pytest_ssdqual.report import rejudge
from pytest_ssdqual.results.record import TestRecord
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import REPO, FakeFio, unwrapped

LIMITS = """
version: 1
profiles:
  - name: all
    match: {}
    source: "test"
    limits:
      seq_write_128k_qd32: {bw_mbps: {min: 100}}
"""


def _record(workload: str, status: str = "passed") -> dict[str, Any]:
    return {
        "drive": "/dev/sdb", "workload": workload, "status": status, "strict": False,
        "facts": {"controller": "C", "nand": "N", "firmware": "A", "model": "M",
                  "serial": "S", "capacity_bytes": 10**9, "kind": "block"},
        "metrics": {"write.bw_mbps": 500.0, "write.iops": 4000.0}, "spread_pct": {},
    }


def _rejudge(tmp_path: Path, records: list[dict[str, Any]], info: dict[str, Any],
             capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    store = ResultsStore(tmp_path / "results")
    run_id = "20261130T101500.000001Z-abcdef"
    for record in records:
        store.write_workload(run_id, record)
    store.finish_run(run_id, {"run_id": run_id, "started_utc": "x", "profile": "smoke",
                              "status": "complete", **info})
    limits = tmp_path / "limits.yaml"
    limits.write_text(LIMITS)
    code = rejudge_command.run_command(argparse.Namespace(
        run=run_id, results_dir=str(store.root), thresholds=[str(limits)]))
    return code, capsys.readouterr().out


def test_a_complete_passing_run_passes(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _rejudge(tmp_path, [_record("seq_write_128k_qd32")],
                         {"exitstatus": 0, "passed": True,
                          "tests": {"skipped": 0, "deselected": 0, "failed": 0}}, capsys)
    assert code == 0 and "run PASSES under the new thresholds" in out


@pytest.mark.parametrize("tests, reason", [
    ({"skipped": 0, "deselected": 0, "failed": 2},
     "INCOMPLETE: 2 test(s) failed or broke without a stored record (2 failed in the session, 0 "
     "with a failed record)"),
    # writes refused: the run exited 1 (INCOMPLETE); rejudge said it PASSES (review)
    ({"skipped": 3, "deselected": 0, "failed": 0},
     "INCOMPLETE: 3 test(s) were skipped in the session (writes refused"),
], ids=["broken without a record", "skipped tests"])
def test_what_the_records_cannot_show_makes_the_run_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tests: dict[str, int], reason: str
) -> None:
    code, out = _rejudge(tmp_path, [_record("seq_write_128k_qd32")],
                         {"exitstatus": 1, "passed": False, "tests": tests}, capsys)
    assert code == 1
    assert reason in out
    assert "run is INCOMPLETE" in out and "PASSES" not in out


def test_an_old_run_json_with_a_failed_exit_and_no_failed_record_is_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _rejudge(tmp_path, [_record("seq_write_128k_qd32")],
                         {"exitstatus": 1, "passed": False}, capsys)
    assert code == 1
    assert "INCOMPLETE: pytest exited 1 but no stored record failed" in out


def test_an_unknown_workload_is_not_a_pass(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _rejudge(tmp_path, [_record("seq_write_128k_qd32"), _record("gone_workload")],
                         {"exitstatus": 0, "passed": True}, capsys)
    assert code == 1
    assert ("INCOMPLETE: /dev/sdb gone_workload: workload 'gone_workload' is not in this "
            "version's catalog: not judged") in out


# -- the same implicit rules and counts as the run -------------------------------

STEADY = "steady_state_rand_write_4k"
STEADY_REQUIREMENT = {
    "workload": STEADY, "metric": "steady_state_reached", "min": 1.0, "max": None,
    "marginal_pct": None, "file": "pytest_ssdqual/methodology/steady.py",
    "profile": "implicit requirement", "source": "SNIA PTS: figures are reported at steady state",
    "line": None,
}
WAIVER = LIMITS + """      steady_state_rand_write_4k: {steady_state_reached: {max: 1}}
"""


def _methodology_record(workload: str, metrics: dict[str, float],
                        **extra: Any) -> dict[str, Any]:
    return {**_record(workload, "failed"), "metrics": metrics, **extra}


def _rejudge_with(tmp_path: Path, record: dict[str, Any], limits_text: str,
                  capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    store = ResultsStore(tmp_path / "results")
    run_id = "20261130T101500.000002Z-abcdef"
    store.write_workload(run_id, record)
    store.finish_run(run_id, {"run_id": run_id, "started_utc": "x", "profile": "smoke",
                              "status": "complete", "exitstatus": 1, "passed": False,
                              "tests": {"skipped": 0, "deselected": 0, "failed": 1}})
    limits = tmp_path / "limits.yaml"
    limits.write_text(limits_text)
    code = rejudge_command.run_command(argparse.Namespace(
        run=run_id, results_dir=str(store.root), thresholds=[str(limits)]))
    return code, capsys.readouterr().out


def test_steady_state_not_reached_still_fails_a_rejudgement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: rejudge judged only the threshold files' limits, and this run PASSED."""
    record = _methodology_record(STEADY, {"steady_state_reached": 0.0, "write.iops": 4000.0},
                                 requirements=[STEADY_REQUIREMENT])
    code, out = _rejudge_with(tmp_path, record, LIMITS, capsys)
    assert code == 1, out
    assert f"/dev/sdb {STEADY}: stored FAILED, now FAILED" in out
    assert "  steady_state_reached 0 < min 1 (margin -100.0 %)" in out
    assert 'profile "implicit requirement"' in out
    assert "0 limits passed, 1 failed, 0 missing; 1 measured metrics had no limit" in out
    # a profile's own limit on the metric waives it, as in the run
    code, out = _rejudge_with(tmp_path / "waived", record, WAIVER, capsys)
    assert code == 0, out
    assert "1 limits passed, 0 failed, 0 missing" in out


def test_a_failed_purge_still_fails_a_rejudgement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    purge = {**STEADY_REQUIREMENT, "workload": "sustained_write", "metric": "purged",
             "file": "pytest_ssdqual/methodology/sustained.py",
             "source": "SNIA PTS 3.3: a dirty-state test starts from a purged (FOB) drive"}
    record = _methodology_record("sustained_write", {"purged": 0.0, "sustained_bw_mbps": 80.0},
                                 requirements=[purge])
    code, out = _rejudge_with(tmp_path, record, LIMITS, capsys)
    assert code == 1 and "  purged 0 < min 1 (margin -100.0 %)" in out, out


def test_a_record_of_an_older_version_gets_its_requirement_from_its_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A record without ``requirements``: the stored verdict of the implicit limit."""
    verdict = {
        "metric": "steady_state_reached", "measured": 0.0, "status": "fail", "margin_pct": -100,
        "marginal": False, "limit": "steady_state_reached >= 1", "min": 1.0, "max": None,
        "provenance": 'pytest_ssdqual/methodology/steady.py profile "implicit requirement" '
                      "(source: SNIA PTS: figures are reported at steady state)",
    }
    record = _methodology_record(STEADY, {"steady_state_reached": 0.0}, verdicts=[verdict])
    [limit] = rejudge.stored_requirements(TestRecord.from_json(record))
    assert (limit.metric, limit.min, limit.max) == ("steady_state_reached", 1.0, None)
    assert limit.provenance.file == "pytest_ssdqual/methodology/steady.py"
    code, out = _rejudge_with(tmp_path, record, LIMITS, capsys)
    assert code == 1 and "steady_state_reached 0 < min 1" in out, out


STEADY_LIMITS = """
version: 1
profiles:
  - name: scratch steady floor
    match: {kind: file}
    source: "test limits"
    limits:
      steady_state_rand_write_4k: {iops: {min: 100}}
"""


def test_rejudging_a_stored_run_gives_the_runs_verdicts_and_counts(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The steady-state suite on a drive that keeps slowing down (SNIA steady state not
    reached) fails in the run; ``ssdqual rejudge`` with the same threshold file gives every
    metric the run's verdict and prints the run's count line."""
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(str(50000 * 0.8**i) for i in range(8)))
    limits = pytester.path / "limits.yaml"
    limits.write_text(STEADY_LIMITS)
    results = pytester.path / "results"
    result = pytester.runpytest(
        str(REPO / "suites" / "test_steady_state.py"), f"--drive=file:{pytester.path / 't.img'}",
        f"--thresholds={limits}", f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke",
        "-p", "no:cacheprovider", f"--results-dir={results}")
    result.assert_outcomes(failed=1)
    counts = re.search(r"^\d+ limits passed, \d+ failed, \d+ missing; \d+ measured metrics had "
                       r"no limit \(not judged\)$", result.stdout.str(), re.M)
    assert counts, result.stdout.str()
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    [record] = run.records
    stored = {v["metric"]: v["status"] for v in record["verdicts"]}
    assert stored["steady_state_reached"] == "fail" and stored["write.iops"] == "pass"
    [again] = rejudge.rejudge_run(run, ThresholdSet.load([limits]))
    assert {v.metric: v.status for v in again.verdicts} == stored
    capsys.readouterr()
    code = rejudge_command.run_command(argparse.Namespace(
        run=run.run_id, results_dir=str(results), thresholds=[str(limits)]))
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"{counts.group(0)}; 0 regression(s); run FAILS under the new thresholds" in out


RECOVERY_LIMITS = """
version: 1
profiles:
  - name: lab
    match: {kind: file}
    source: "lab rule"
    limits:
      recovery_after_idle: {time_to_recover_s: {max: 60}}
"""


def test_a_stored_never_recovered_run_rejudges_with_the_runs_reason(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The recovery test on a drive that stays at 500 IOPS after a fresh 4,000 never
    recovers: the run fails the ``time_to_recover_s`` limit saying so. Before, the record did
    not keep ``unreached`` and ``ssdqual rejudge`` failed it as "not measured"."""
    # no real idle: the methodology's idle periods are skipped
    monkeypatch.setattr(qualify_measure, "run_methodology",
                        functools.partial(run_methodology, sleep=lambda _s: None))
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(["4000"] + ["500"] * 100))
    limits = pytester.path / "limits.yaml"
    limits.write_text(RECOVERY_LIMITS)
    results = pytester.path / "results"
    result = pytester.runpytest(
        str(REPO / "suites" / "test_consistency.py"), f"--drive=file:{pytester.path / 't.img'}",
        f"--thresholds={limits}", f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke",
        "-p", "no:cacheprovider", f"--results-dir={results}")
    result.assert_outcomes(failed=1)
    # the failure text may be printed twice (failure section and short summary, by -r flags)
    [run_line] = {line for line in unwrapped(result.stdout.str()).splitlines()
                  if line.startswith("  time_to_recover_s never recovered")}
    assert run_line.startswith(
        "  time_to_recover_s never recovered: no idle time up to 4 s kept it at >= 90% of fresh "
        "(3,600); after idle 500 / 500: fails the limit time_to_recover_s <= 60")
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    [record] = run.records
    assert record["unreached"]["time_to_recover_s"].startswith("never recovered: ")
    capsys.readouterr()
    code = rejudge_command.run_command(argparse.Namespace(
        run=run.run_id, results_dir=str(results), thresholds=[str(limits)]))
    out = capsys.readouterr().out
    assert code == 1, out
    assert run_line in out.splitlines(), out  # the run's line, word for word
    assert "not measured" not in out
    assert "0 limits passed, 1 failed, 0 missing" in out
