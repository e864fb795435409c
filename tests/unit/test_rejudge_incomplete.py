"""``ssdqual rejudge``'s INCOMPLETE reasons count the session's skipped tests right: a test the
gate left UNDECIDED stored its figures and is not "skipped, never measured"; a skipped record of
unread health belongs to a test that may have passed and hides no refused write test."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_ssdqual.report.rejudge import incomplete_reasons
from pytest_ssdqual.results.run_folder import StoredRun


def _run(records: list[dict[str, Any]], skipped: int) -> StoredRun:
    info = {"run_id": "r1", "status": "complete", "exitstatus": 1,
            "tests": {"passed": 1, "failed": 0, "skipped": skipped}}
    return StoredRun(Path("/nonexistent/r1"), info, records)


SKIPPED_REASON = "1 test(s) were skipped in the session"


def test_a_skipped_write_test_is_reported_beside_a_skipped_unread_health_record() -> None:
    """Review: the unread-health record (status skipped, under a passed read test) was taken
    for an undecided test and cancelled the refused write test's skip."""
    records = [{"test": "t::read", "status": "passed", "workload": "seq_read_128k_qd32"},
               {"test": "t::read", "status": "skipped", "workload": "health"}]
    reasons = incomplete_reasons(_run(records, skipped=1), [])
    assert any(r.startswith(SKIPPED_REASON) for r in reasons), reasons


def test_a_test_the_gate_left_undecided_is_not_counted_as_skipped_unmeasured() -> None:
    records = [{"test": "t::write", "status": "skipped", "workload": "seq_write_128k_qd32",
                "regression": {"comparisons": [{"metric": "write.bw_mbps",
                                                "status": "undecided"}]}}]
    reasons = incomplete_reasons(_run(records, skipped=1), [])
    assert not any(r.startswith(SKIPPED_REASON) for r in reasons), reasons
