"""pytest glue for the NVMe idle wake-up test (issue 10 item 10), thin like ``plugin.py``.

``idle_wake()`` (fixture) reads the drive's power-state table (``nvme id-ctrl``) and APST
setting (``nvme get-feature -f 0x0c``), skips with the reason when the target has no
non-operational power state (loop, zram, scratch file, SATA, an NVMe drive with only active
states), runs the fio jobs of ``power_states`` (read-only, after the session's prefill so the
reads touch written media), judges the metrics against the limits of workload
``idle_wake_read_4k_qd1`` and ends like every other suite (``plugin_verdict.gate_and_fail``):
drive health, stored in the results store (gated with ``--baseline``, re-judged by
``ssdqual rejudge``), failed on a violated limit, the drive's health or a regression.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import allure
import pytest

from pytest_ssdqual.catalog.health import IDLE_WAKE_WORKLOAD_ID
from pytest_ssdqual.catalog.workloads import get_workload
from pytest_ssdqual.drive.power_states import (
    PowerStateTable,
    apst_enabled,
    idle_plan,
    points,
    power_state_table,
    render_idle_job,
    wake_metrics,
)
from pytest_ssdqual.drive.tool_runner import TOOL_TIMEOUT_S, default_run, run_tool
from pytest_ssdqual.fio.job import aligned_span
from pytest_ssdqual.fio.runner import TIMEOUT_MARGIN_S
from pytest_ssdqual.methodology.base import MethodologyResult, judge_result
from pytest_ssdqual.plugin.common import PROP_DRIVE, PROP_ROWS, allure_labels
from pytest_ssdqual.plugin.health import PROP_NOT_APPLICABLE
from pytest_ssdqual.plugin.health import tracker as health_tracker
from pytest_ssdqual.plugin.methodology import _stored_files
from pytest_ssdqual.plugin.verdict import gate_and_fail
from pytest_ssdqual.qualify.session import DriveContext, QualSession
from pytest_ssdqual.report import allure_attach
from pytest_ssdqual.report.allure_labels import label_test
from pytest_ssdqual.report.summary import rows_from_verdicts


class NoPowerStates(Exception):
    """The target has no idle power state to wake from; the message is the skip reason.

    Attributes:
        applicable: False when the target cannot have one (not NVMe, or an NVMe drive whose
            table has no non-operational state); True when the table could not be read.
    """

    def __init__(self, message: str, *, applicable: bool = False) -> None:
        super().__init__(message)
        self.applicable = applicable


def read_power_states(ctx: DriveContext) -> tuple[PowerStateTable, bool | None]:
    """The drive's power-state table and APST enable bit (``None``: unreadable).

    Raises:
        NoPowerStates: not an NVMe block device, nvme-cli gave nothing, no non-operational
            state, or ``nvme get-feature`` (APST) did not answer within ``TOOL_TIMEOUT_S``.
    """
    ident = ctx.identity
    drive = ctx.target.spec.raw
    if ident.kind != "block" or ident.transport != "NVMe":
        raise NoPowerStates(
            f"{drive} is a {ident.kind} target ({ident.transport}): NVMe power states and APST "
            "exist only on an NVMe drive"
        )
    notes: list[str] = []
    doc = run_tool(default_run, ["nvme", "id-ctrl", "-o", "json", ctx.target.device],
                    "nvme-cli", notes)
    if doc is None:
        raise NoPowerStates(f"{drive}: no power-state table: {'; '.join(notes)}",
                            applicable=True)
    try:
        table = power_state_table(doc)
    except ValueError as exc:
        raise NoPowerStates(f"{drive}: unreadable power-state table: {exc}",
                            applicable=True) from None
    if not table.idle_states:
        raise NoPowerStates(
            f"{drive} reports {len(table.states)} power state(s), none non-operational: "
            "no idle state to wake from"
        )
    argv = ["nvme", "get-feature", "-f", "0x0c", ctx.target.device]
    try:
        _, text = default_run(argv)
    except subprocess.TimeoutExpired:
        raise NoPowerStates(
            f"{drive}: `{' '.join(argv)}` (APST setting) gave no answer within "
            f"{TOOL_TIMEOUT_S} s: nvme-cli or the drive's admin queue hangs; check the drive "
            "(dmesg, `nvme list`) before measuring its wake-up latency", applicable=True,
        ) from None
    except (OSError, ValueError):
        text = ""
    return table, apst_enabled(text)


@pytest.fixture
def idle_wake(request: pytest.FixtureRequest, ssd_session: QualSession,
              ssd_drive: DriveContext, tmp_path: Path) -> Callable[[], dict[str, float]]:
    """``idle_wake()``: run the idle wake-up test on the drive; returns its metrics."""
    node = request.node

    def run() -> dict[str, float]:
        workload = get_workload(IDLE_WAKE_WORKLOAD_ID)
        drive = ssd_drive.target.spec.raw
        node.user_properties.append((PROP_DRIVE, ssd_drive.describe()))
        label_test(ssd_drive, workload, **allure_labels(node, ssd_session))
        try:
            table, apst = read_power_states(ssd_drive)
        except NoPowerStates as exc:
            if not exc.applicable:
                node.user_properties.append((PROP_NOT_APPLICABLE, str(exc)))
            pytest.skip(str(exc))
        allure.attach(
            "\n".join([f"APST supported: {table.apst_supported}; enabled: "
                       f"{'unknown' if apst is None else apst}"]
                      + [f"PS{ps.id}: max {ps.max_power_w:g} W, "
                         f"{'non-operational' if ps.non_operational else 'operational'}, "
                         f"entry {ps.entry_latency_us} us, exit {ps.exit_latency_us} us"
                         for ps in table.states]),
            name="NVMe power states", attachment_type=allure.attachment_type.TEXT)
        health = health_tracker(request.config, ssd_session, ssd_drive)
        state = ssd_session.prefill(ssd_drive, tmp_path / "prefill")
        plan = idle_plan(ssd_session.options.profile.name)
        target = ssd_drive.target
        results = {}
        span = aligned_span(target.size_bytes, ssd_session.options.profile.span_bytes,
                            128 * 1024)  # the prefill's span (128 KiB transfers)
        for point, gap_ms, ios in points(plan):
            text = render_idle_job(point, gap_ms, ios, filename=target.fio_filename,
                                   ioengine=ssd_session.ioengine(), span_bytes=span)
            job = ssd_session.run_job(ssd_drive, point, text, tmp_path / point, writes=False,
                                      expected_runtime_s=None,
                                      timeout_s=ios * (gap_ms / 1000 + 0.1) + TIMEOUT_MARGIN_S)
            results[point] = job.result
        metrics, notes = wake_metrics(results, plan.gaps_ms)
        metrics.update(table.metrics())
        if apst is not None:
            metrics["apst_enabled"] = float(apst)
        states = dict.fromkeys(metrics, state)
        outcome = judge_result(MethodologyResult(workload, metrics, states, notes, []),
                               ssd_drive.limits, strict=ssd_session.options.strict)
        allure_attach.attach_verdicts(outcome)
        rows = rows_from_verdicts(drive, workload.id, outcome.verdicts, states)
        node.user_properties.append((PROP_ROWS, [r.as_dict() for r in rows]))
        # stored, gated and re-judgeable like every suite; reads only: start health findings
        gate_and_fail(request, ssd_drive, outcome, health, destructive=False,
                      strict=ssd_session.options.strict,
                      files=[{f"{point}__{name}": path for point in results
                              for name, path in _stored_files(tmp_path / point).items()}],
                      details=[f"  note: {n}" for n in notes])
        return metrics

    return run
