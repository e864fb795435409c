"""``ssdqual rejudge`` on constructed stored runs: an incomplete run never PASSES."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual import rejudge
from pytest_ssdqual.store import ResultsStore

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
    code = rejudge.run_command(argparse.Namespace(
        run=run_id, results_dir=str(store.root), thresholds=[str(limits)]))
    return code, capsys.readouterr().out


def test_a_complete_passing_run_passes(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _rejudge(tmp_path, [_record("seq_write_128k_qd32")],
                         {"exitstatus": 0, "passed": True,
                          "tests": {"skipped": 0, "deselected": 0, "failed": 0}}, capsys)
    assert code == 0 and "run PASSES under the new thresholds" in out


def test_a_test_broken_without_a_record_makes_the_run_incomplete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _rejudge(tmp_path, [_record("seq_write_128k_qd32")],
                         {"exitstatus": 1, "passed": False,
                          "tests": {"skipped": 0, "deselected": 0, "failed": 2}}, capsys)
    assert code == 1
    assert ("INCOMPLETE: 2 test(s) failed or broke without a stored record (2 failed in the "
            "session, 0 failed record(s))") in out
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
