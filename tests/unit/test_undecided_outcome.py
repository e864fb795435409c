"""A test the regression gate left UNDECIDED (too few runs for the measured noise and the limit)
is neither a pass nor a product failure: skipped with its reason, and the run exits 1 with an
``INCOMPLETE:`` line naming the runs per side that would decide it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_ssdqual.plugin.common import PROP_GATE
from pytest_ssdqual.plugin.outcomes import OutcomeHooks


def _report(status: str, runs_needed: int | None, *, skipped: bool = True) -> SimpleNamespace:
    row = {"drive": "/dev/sdb", "workload": "w", "metric": "write.bw_mbps", "status": status,
           "runs_needed": runs_needed}
    return SimpleNamespace(skipped=skipped, nodeid=f"t::{status}", user_properties=[
        (PROP_GATE, [row])])


@pytest.mark.parametrize("allow", [False, True])
def test_an_undecided_gate_makes_the_run_exit_1_whatever_allows_skipped_writes(
        allow: bool) -> None:
    hooks = OutcomeHooks(allow_skipped_writes=allow)
    hooks.pytest_runtest_logreport(_report("undecided", 9))  # type: ignore[arg-type]
    session = SimpleNamespace(config=SimpleNamespace(), exitstatus=pytest.ExitCode.OK)
    hooks.pytest_sessionfinish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.TESTS_FAILED
    assert hooks.undecided_line() == (
        "INCOMPLETE: 1 test(s) UNDECIDED by the regression gate (too few runs for the measured "
        "noise and the limit, even at --repeat-max; reasons in the gate summary): neither "
        "passed nor failed, so the run exits 1; store the baseline and gate this build with "
        "--repeat 9 (runs per side the noise needs)")


def test_a_skip_without_an_undecided_gate_row_leaves_the_exit_status() -> None:
    hooks = OutcomeHooks(allow_skipped_writes=False)
    hooks.pytest_runtest_logreport(_report("within limit", None))  # type: ignore[arg-type]
    session = SimpleNamespace(config=SimpleNamespace(), exitstatus=pytest.ExitCode.OK)
    hooks.pytest_sessionfinish(session)  # type: ignore[arg-type]
    assert session.exitstatus == pytest.ExitCode.OK and hooks.undecided_line() is None


def test_a_failed_test_with_undecided_metrics_is_a_failure_not_an_undecided_test() -> None:
    """Review: a test that regressed on one metric and was undecided on another failed, yet
    the run also said "1 test(s) UNDECIDED ... neither passed nor failed"."""
    hooks = OutcomeHooks(allow_skipped_writes=False)
    hooks.pytest_runtest_logreport(_report("undecided", 9, skipped=False))  # type: ignore[arg-type]
    assert hooks.undecided == {} and hooks.undecided_line() is None
