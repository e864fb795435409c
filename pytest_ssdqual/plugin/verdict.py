"""The end of every judged drive test (``qualify``, ``run_methodology``, ``idle_wake``): drive
health, store and gate, then pass or fail -- one path, so every suite's result is stored,
gated and re-judgeable the same way (thin pytest glue, like ``plugin.py``).

Order matters: the drive-health lines are worked out *before* the record is stored, so a test
that fails on drive health (DISK FAILING at session start, a media error during a destructive
workload) is stored as ``failed`` with the health lines (``ResultsGate.check``'s ``health``),
and ``ssdqual rejudge``, compare and trend count it as the run did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from pytest_ssdqual.plugin.common import GATE_KEY, PROP_GATE
from pytest_ssdqual.plugin.health import HealthTracker, health_failures
from pytest_ssdqual.qualify.session import DriveContext
from pytest_ssdqual.report import allure_attach
from pytest_ssdqual.results.gate import Judged


def gate_and_fail(
    request: pytest.FixtureRequest,
    ctx: DriveContext,
    outcome: Judged,
    health: HealthTracker,
    *,
    destructive: bool,
    strict: bool,
    repetitions: Sequence[Judged] | None = None,
    spread_pct: Mapping[str, float] | None = None,
    files: Sequence[Mapping[str, Path | str]] | None = None,
    states: Mapping[str, str] | None = None,
    details: Sequence[str] = (),
) -> None:
    """Judge drive health, store and gate ``outcome`` (``ResultsGate.check``), then fail the
    test when a limit, the drive's health or the regression gate says so.

    Args:
        outcome: the judged test (``WorkloadOutcome``, ``MethodologyOutcome``).
        health: the drive's health tracker, read before the test ran (``plugin_health.tracker``).
        destructive: the test wrote: health is read again and its change judged.
        repetitions, spread_pct: as ``ResultsGate.check`` (default: ``[outcome]``, none).
        files: per repetition, the files to store (default: the fio run's files).
        states: metric -> drive state, appended to a violated limit's line as ``[state]``.
        details: lines after the violated limits (the test's notes), each already indented.

    Raises:
        pytest.fail.Exception: a limit violated (one line per limit, then ``details``, the
            regression message and the health lines), else the drive's health fails, else a
            regression.
        BaselineError, StoreError: from ``ResultsGate.check`` (the test is broken).
    """
    node = request.node
    workload_id = outcome.workload.id
    unhealthy = health_failures(node, health, workload_id=workload_id, destructive=destructive)
    checked = request.config.stash[GATE_KEY].check(
        ctx, outcome, [outcome] if repetitions is None else repetitions, spread_pct or {},
        strict=strict, files=files, health=unhealthy,
    )
    node.user_properties.append((PROP_GATE, checked.rows()))
    allure_attach.attach_regression([f"{r['status']}: {r['line']}" for r in checked.rows()])
    regression = checked.failure_message()  # "REGRESSION: ..." (its own category)
    tail = (f"\n{regression}" if regression else "")
    if outcome.failed:
        states = states or {}
        pytest.fail(
            f"{ctx.target.spec.raw} {workload_id}: {len(outcome.failed)} limit(s) violated\n"
            + "\n".join("  " + v.line() + (f" [{states[v.metric]}]" if v.metric in states
                                           else "")
                        for v in outcome.failed)
            + "".join("\n" + line for line in details)
            + tail
            + "".join("\n" + line for line in unhealthy),
            pytrace=False,
        )
    if unhealthy:
        pytest.fail("\n".join(unhealthy) + tail, pytrace=False)
    if regression:
        pytest.fail(regression, pytrace=False)
