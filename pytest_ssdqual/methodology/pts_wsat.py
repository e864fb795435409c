"""SNIA PTS Write Saturation (WSAT): purge, then RND 4 KiB writes at T4Q32 over the active range
from FOB, continuously, until ``multiple`` x the active range was written or ``max_s`` seconds
passed (PTS: 4x or 24 h, whichever first), with fio's per-second IOPS and bandwidth logs
(``write_iops_log``, ``log_avg_msec=1000``) summed into intervals (PTS: 1 minute) by
``pts_wsat_analysis``: IOPS against time and against TGBW, the FOB and saturated IOPS, the GB
written when the drive fell below half its FOB figure.

One fio job (4 threads, ``numjobs=4``, group-reported, each ``io_size`` = its quarter of the
bytes, ``runtime`` the cap; ``offset``/``size`` the active range: ``pts_range.ActiveRange``).
Schedules per run profile: ``catalog.pts_wsat_hir.WSAT_PLANS``. When no purge method could run,
the figures are "as found (purge failed: ...)" and ``purged`` = 0 fails the test.

Source: SNIA PTS Enterprise 1.1, section 10 "Write Saturation Test"; fio HOWTO, "I/O size"
(``io_size``), "Target file/device" (``offset``, ``size``), "Measurements and reporting"
(``write_iops_log``, ``log_avg_msec``).
"""

from __future__ import annotations

from pytest_ssdqual.catalog.pts_wsat_hir import BS_BYTES, QUEUE_DEPTH, THREADS, WSAT_ID, wsat_plan
from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.series import Series
from pytest_ssdqual.methodology.area_jobs import AreaJob
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    MethodologyResult,
    MethodRun,
    Step,
    purge_state,
    purged_result,
)
from pytest_ssdqual.methodology.pts_range import ActiveRange
from pytest_ssdqual.methodology.pts_wsat_analysis import wsat_intervals, wsat_report

WORKLOAD_ID = WSAT_ID
_SOURCE_FILE = "pytest_ssdqual/methodology/pts_wsat.py"
#: The state of the figures after the first interval.
STATE_SATURATION = "write saturation (continuous RND 4 KiB writes from FOB)"


def stimulus_job(name: str, title: str, offset_bytes: int, length_bytes: int, *,
                 runtime_s: float | None, total_bytes: int | None = None) -> AreaJob:
    """RND 4 KiB writes, T4Q32 (``numjobs=4`` x ``iodepth=32``), on ``[offset, offset +
    length)``: time based (``runtime_s``) without ``total_bytes``; else size based, each thread
    writing its quarter of ``total_bytes`` (whole blocks, at least one), ``runtime_s`` the cap.
    The WSAT and HIR stimulus.

    Raises:
        ValueError: as ``AreaJob`` (an offset off the block, a range under one block).
    """
    per_thread = None
    if total_bytes is not None:
        per_thread = max(BS_BYTES, total_bytes // THREADS // BS_BYTES * BS_BYTES)
    return AreaJob(name, f"{title}: RND 4 KiB write, T{THREADS}Q{QUEUE_DEPTH}", "randwrite",
                   BS_BYTES, QUEUE_DEPTH, length_bytes, runtime_s=runtime_s, io_bytes=per_thread,
                   numjobs=THREADS, offset_bytes=offset_bytes)


def setup_line(mr: MethodRun, active_range: ActiveRange, offset: int, length: int) -> str:
    """The PTS report's test set-up line: the test span, the active range and its bytes, the
    OIO and the run profile."""
    return (f"active range {active_range.text} % of the {mr.span(BS_BYTES) / 2**20:,.0f} MiB "
            f"test span: {length / 2**20:,.1f} MiB at offset {offset / 2**20:,.1f} MiB "
            f"(fio offset={offset} size={length}); OIO T{THREADS}Q{QUEUE_DEPTH}; run profile "
            f"{mr.session.options.profile.name}")


def run(mr: MethodRun, active_range: ActiveRange | None = None) -> MethodologyResult:
    """Run the WSAT on ``mr``'s drive within ``active_range`` (default: ``0:100``).

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio; FioOutputError when fio
            wrote no IOPS log and the write outlasted one log window.
    """
    active_range = active_range or ActiveRange()
    plan = wsat_plan(mr.session.options.profile.name)
    offset, length = active_range.area(mr.span(BS_BYTES), BS_BYTES)
    job = stimulus_job("wsat", f"write saturation: {plan.multiple:g}x the active range or "
                       f"{plan.max_s:g} s", offset, length, runtime_s=plan.max_s,
                       total_bytes=int(length * plan.multiple))
    mr.plan_steps([1.0, job.planned_s(mr.write_bw_mbps) + FIO_OVERHEAD_S])
    record = mr.purge()
    state = purge_state(record)
    step = mr.fio(job, phase="write saturation", state=state)
    series = _iops_series(mr, step)
    moved = step.job_run.result.directions.get("write")
    bw = step.bw if step.bw is not None and len(step.bw) == len(series) else None
    report = wsat_report(wsat_intervals(series, plan.interval_s, bs_bytes=BS_BYTES, bw=bw),
                         plan, length, written_bytes=moved.io_bytes if moved else None)
    metrics = report.metrics()
    states = {name: STATE_SATURATION for name in metrics}
    states["iops_fob"] = state
    notes = [
        "PTS test set-up: " + record.describe(),
        "PTS test set-up: no preconditioning (WSAT starts from FOB); " + setup_line(
            mr, active_range, offset, length),
        f"PTS schedule: until {plan.multiple:g}x the active range "
        f"({plan.multiple * length / 1e9:,.3g} GB) or {plan.max_s:g} s, IOPS per "
        f"{plan.interval_s:g} s interval; FOB = the first {plan.fob_intervals}, saturated = the "
        f"last {plan.steady_intervals}",
        report.describe(),
        "WSAT measurement (IOPS per interval, TGBW at its end):", *report.table(),
        *([f"write IOPS log: {series.gaps.describe()}"] if series.gaps else []),
    ]
    return purged_result(WORKLOAD_ID, _SOURCE_FILE, record, mr.steps, metrics, states, notes,
                         purge_figure_state=state, curves=report.curves(),
                         unreached=report.unreached())


def _iops_series(mr: MethodRun, step: Step) -> Series:
    """The step's per-second write IOPS; a write done within fio's first log window (which fio
    then never logs: a write budget, a tiny range) is one window of fio's own figure."""
    if step.iops is not None:
        return step.iops
    runtime_s = step.job_run.result.runtime_ms / 1000
    if 0 < runtime_s <= 1.5:
        return Series((runtime_s,), (step.figure("iops"),), "IOPS")
    raise FioOutputError(f"fio wrote no write-IOPS log in {step.job_run.workdir}: the "
                         "write-saturation curve cannot be drawn")
