"""The NVMe idle wake-up test as a ``measure`` step of the flow.

``measure_idle_wake`` reads the drive's power-state table (``nvme id-ctrl``) and APST setting
(``nvme get-feature -f 0x0c``) -- for an emulated NVMe twin, its model's ``power_states`` /
``apst`` / ``temperature`` (the twin reports the real drive's table; a blkio throttle cannot
add a power state's exit latency to the first I/O after idle, so the twin's
``wake_penalty_us`` is the throttle's) --, skips with the reason when the target has no
non-operational power state (loop, zram, scratch file, SATA, an NVMe drive with only active
states), runs the fio jobs of ``power_states`` (read-only, after the session's prefill so the
reads touch written
media) and judges the metrics once against the limits of workload ``idle_wake_read_4k_qd1``;
the flow (``flow.run_test``) then handles drive health, the results store (gated with
``--baseline``, re-judged by ``ssdqual rejudge``) and the verdict, like every suite.

Plain Python (no pytest).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

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
from pytest_ssdqual.qualify.flow import Measured, Skipped
from pytest_ssdqual.qualify.measure import stored_files
from pytest_ssdqual.qualify.session import DriveContext, QualSession

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.flow import Host

#: The catalog workload whose limits judge the idle wake-up test.
IDLE_WAKE = get_workload(IDLE_WAKE_WORKLOAD_ID)


class NoPowerStates(Skipped):
    """The target has no idle power state to wake from; the message is the skip reason.

    Attributes:
        applicable: False when the target cannot have one (not NVMe, or an NVMe drive whose
            table has no non-operational state); True when the table could not be read.
    """

    def __init__(self, message: str, *, applicable: bool = False) -> None:
        super().__init__(message, applicable=applicable)


def read_power_states(ctx: DriveContext) -> tuple[PowerStateTable, bool | None]:
    """The drive's power-state table and APST enable bit (``None``: unreadable).

    Raises:
        NoPowerStates: not an NVMe block device, nvme-cli gave nothing, no non-operational
            state, or ``nvme get-feature`` (APST) did not answer within ``TOOL_TIMEOUT_S``.
    """
    ident = ctx.identity
    drive = ctx.target.spec.raw
    if ident.kind == "emu":
        return _emulated_power_states(ctx)
    if ctx.target.spec.kind == "remote":  # nvme-cli here would ask a local namesake
        raise NoPowerStates(f"{drive} is a fio:// drive: its power states are read with "
                            "nvme-cli on its host, which this test does not do; run it there")
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


def _emulated_power_states(ctx: DriveContext) -> tuple[PowerStateTable, bool | None]:
    """An emulated NVMe twin's table from its model (``power_states`` / ``apst`` /
    ``temperature``), in place of nvme-cli.

    Raises:
        NoPowerStates: the model has no power-state table (a SATA twin), or none of its states
            is non-operational.
    """
    from pytest_ssdqual.emulate.target import EmulatedTarget

    drive = ctx.target.spec.raw
    found = (ctx.target.nvme_power_states() if isinstance(ctx.target, EmulatedTarget)
             else None)
    if found is None:
        raise NoPowerStates(f"{drive} is an emulated drive whose model gives no NVMe power "
                            "states (power_states:): no idle state to wake from")
    table, apst = found
    if not table.idle_states:
        raise NoPowerStates(f"{drive}'s model gives {len(table.states)} power state(s), none "
                            "non-operational: no idle state to wake from")
    return table, apst


def measure_idle_wake(host: Host, session: QualSession, ctx: DriveContext, workdir: Path
                      ) -> Measured:
    """Read the power states, run the idle wake-up jobs and judge their metrics once.

    Raises:
        NoPowerStates: the target has no idle state to wake from (the test is skipped).
        FioError, DeviceError: from a job (the test is broken).
    """
    table, apst = read_power_states(ctx)
    host.attach_text("NVMe power states", "\n".join(
        [f"APST supported: {table.apst_supported}; enabled: "
         f"{'unknown' if apst is None else apst}"]
        + [f"PS{ps.id}: max {ps.max_power_w:g} W, "
           f"{'non-operational' if ps.non_operational else 'operational'}, "
           f"entry {ps.entry_latency_us} us, exit {ps.exit_latency_us} us"
           for ps in table.states]
        + ([f"warning temperature {table.warning_temperature_c:g} °C, critical "
            f"{table.critical_temperature_c:g} °C"]
           if table.warning_temperature_c is not None
           and table.critical_temperature_c is not None else [])
        + (["source: the emulated twin's model (it reports the real drive's table; its "
            "wake-up latency is the blkio throttle's, not a power state's)"]
           if ctx.identity.kind == "emu" else [])))
    state = session.prefill(ctx, workdir / "prefill")
    plan = idle_plan(session.options.profile.name)
    target = ctx.target
    results = {}
    span = aligned_span(target.size_bytes, session.options.profile.span_bytes,
                        128 * 1024)  # the prefill's span (128 KiB transfers)
    for point, gap_ms, ios in points(plan):
        text = render_idle_job(point, gap_ms, ios, filename=target.fio_filename,
                               ioengine=session.ioengine(), span_bytes=span)
        job = session.run_job(ctx, point, text, workdir / point, writes=False,
                              expected_runtime_s=None,
                              timeout_s=ios * (gap_ms / 1000 + 0.1) + TIMEOUT_MARGIN_S)
        results[point] = job.result
    metrics, notes = wake_metrics(results, plan.gaps_ms)
    metrics.update(table.metrics())
    if apst is not None:
        metrics["apst_enabled"] = float(apst)
    states = dict.fromkeys(metrics, state)
    outcome = judge_result(MethodologyResult(IDLE_WAKE, metrics, states, notes, []),
                           ctx.limits, strict=session.options.strict)
    return Measured(
        outcome, states=states, report="verdicts", details=[f"  note: {n}" for n in notes],
        files=[{f"{point}__{name}": path for point in results
                for name, path in stored_files(workdir / point).items()}],
    )
