"""Workload-independent preconditioning (SNIA PTS "WIPC"): sequential 128 KiB writes, QD32, of
twice the user capacity -- or the run profile's span times its ``precondition_multiple`` -- so
every LBA of the span has been written (twice) before a dirty-state measurement.

Source: SNIA PTS Enterprise 1.1 / Client 2.0, section 3.4 "Preconditioning" ("write 2X the user
capacity with SEQ 128KiB writes").
"""

from __future__ import annotations

from pytest_ssdqual.methodology.base import STATE_PRECONDITIONED, MethodRun, Step
from pytest_ssdqual.methodology.jobs import precondition_job


def precondition(run: MethodRun, span_bytes: int) -> Step:
    """Write ``precondition_multiple`` x ``span_bytes`` sequentially; returns the step (its
    per-second bandwidth log shows the drive's write behaviour on the way).

    Raises:
        SafetyRefusal, DeviceError, FioError: as ``QualSession.run_job``.
    """
    job = precondition_job(span_bytes, run.plan.precondition_multiple)
    return run.fio(job, phase="precondition", state=STATE_PRECONDITIONED)


def planned_s(run: MethodRun, span_bytes: int) -> float:
    """Planned seconds of the preconditioning at the last measured write bandwidth."""
    job = precondition_job(span_bytes, run.plan.precondition_multiple)
    return job.planned_s(run.write_bw_mbps)
