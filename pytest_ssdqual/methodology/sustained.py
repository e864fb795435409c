"""Sustained write past the SLC cache: purge, then sequential 128 KiB writes (QD32) across the
span from FOB with a 1-second bandwidth log; the SLC-cache cliff gives ``slc_cache_bytes``,
``burst_bw_mbps`` and ``sustained_bw_mbps`` (``slc_cache.detect_slc_cliff``), and fio gives the
whole write's ``write.*`` figures. A write that fell and came back to its burst level at its end
leaves the cache size undetermined: none of the four SLC figures, and a limit on one fails with
the reason (``SlcCacheReport.unreached``; the note says why). Windows of the log in which no
write completed are stalls (bandwidth 0; ``fio.logs``): their number, total and longest are a
note of the result. When no purge method could run, the figures' state is
``as found (purge failed: ...)`` and the metric ``purged`` = 0 fails the test (it must be >= 1).

The write covers ``sustained_multiple`` x the span (wrapping over it) or stops after
``sustained_max_s`` seconds, whichever comes first (``full``: the whole drive once, no time cap,
as reviewers' whole-drive fills). Under a write budget (the plugin's scratch file: no SLC cache to
find) the write is the budget's bytes, often done within fio's first 1-second log window, which
fio then never logs: the series is then the whole write as one window (fio's own figure).
"""

from __future__ import annotations

from pytest_ssdqual.catalog.workloads import KIB
from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.series import BandwidthSeries, Series
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    MethodologyResult,
    MethodRun,
    purge_state,
    purged_result,
)
from pytest_ssdqual.methodology.jobs import sustained_write_job
from pytest_ssdqual.methodology.slc_cache import detect_slc_cliff

WORKLOAD_ID = "sustained_write"
#: Where the implicit requirements come from (their provenance).
_SOURCE_FILE = "pytest_ssdqual/methodology/sustained.py"


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
    # A failed purge: the figures are "as found (purge failed: ...)", and purged = 0 fails the
    # test (purge_requirement) -- they are never judged as FOB figures.
    state = purge_state(record)
    step = mr.fio(job, phase="sustained write", state=state)
    series = step.bw
    if series is None and mr.ctx.write_budget_bytes is not None:  # done within one window
        series = Series((max(step.job_run.result.runtime_ms, 1) / 1000,),
                        (step.figure("bw_mbps"),), "MB/s")
    if series is None:
        raise FioOutputError(f"fio wrote no write-bandwidth log in {step.job_run.workdir}: "
                             "cannot find the SLC-cache cliff")
    # Loop, zram and file targets have no SLC cache: their sustained figure is the whole write.
    report = detect_slc_cliff(BandwidthSeries.from_series(series),
                              virtual=mr.ctx.identity.kind in ("loop", "zram", "file"))
    metrics = {k: v for k, v in step.metrics.items() if k.startswith("write.")}
    metrics.update(report.metrics())
    notes = [
        record.describe(),
        report.describe(),
        f"wrote {report.written_bytes / 1e6:,.0f} MB over a {span / 2**20:,.0f} MiB span "
        f"in {sum(series.durations_s):.1f} s",
        *([f"write-bandwidth log: {series.gaps.describe()}"] if series.gaps else []),
    ]
    # Undetermined (the write fell and came back): a limit on the figures fails, saying why.
    return purged_result(WORKLOAD_ID, _SOURCE_FILE, record, mr.steps, metrics,
                         {name: state for name in metrics}, notes, purge_figure_state=state,
                         unreached=report.unreached())
