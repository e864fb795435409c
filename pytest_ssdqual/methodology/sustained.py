"""Sustained write past the SLC cache: purge, then sequential 128 KiB writes (QD32) across the
span from FOB with a 1-second bandwidth log; the SLC-cache cliff gives ``slc_cache_bytes``,
``burst_bw_mbps`` and ``sustained_bw_mbps`` (``slc_cache.detect_slc_cliff``), and fio gives the
whole write's ``write.*`` figures.

The write covers ``sustained_multiple`` x the span (wrapping over it) or stops after
``sustained_max_s`` seconds, whichever comes first (``full``: the whole drive once, no time cap,
as reviewers' whole-drive fills).
"""

from __future__ import annotations

from ..errors import FioOutputError
from ..fio.logs import BandwidthSeries
from ..slc_cache import detect_slc_cliff
from ..workloads import CATALOG, KIB
from .base import FIO_OVERHEAD_S, STATE_AS_FOUND, STATE_FOB, MethodologyResult, MethodRun
from .jobs import sustained_write_job

WORKLOAD_ID = "sustained_write"


def run(mr: MethodRun) -> MethodologyResult:
    """Run the sustained-write test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio; FioOutputError when fio
            wrote no bandwidth log.
    """
    plan = mr.plan
    span = mr.span(128 * KIB)
    job = sustained_write_job(span, plan.sustained_multiple, plan.sustained_max_s)
    mr.plan_steps([1.0, job.planned_s(mr.write_bw_mbps) + FIO_OVERHEAD_S])
    record = mr.purge()
    state = STATE_FOB if record.ran else STATE_AS_FOUND
    step = mr.fio(job, phase="sustained write", state=state)
    if step.bw is None:
        raise FioOutputError(f"fio wrote no write-bandwidth log in {step.job_run.workdir}: "
                             "cannot find the SLC-cache cliff")
    report = detect_slc_cliff(BandwidthSeries.from_series(step.bw))
    metrics = {k: v for k, v in step.metrics.items() if k.startswith("write.")}
    metrics.update(report.metrics())
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID],
        metrics=metrics,
        states={name: state for name in metrics},
        notes=[
            record.describe(),
            report.describe(),
            f"wrote {report.written_bytes / 1e6:,.0f} MB over a {span / 2**20:,.0f} MiB span "
            f"in {sum(step.bw.durations_s):.0f} s",
        ],
        steps=list(mr.steps),
        purge=record,
    )
