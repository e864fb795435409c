"""The methodology tests by workload id: purge, preconditioning, SNIA steady state, sustained
write past the SLC cache, consistency and recovery after idle, the sweeps and data tests.

Each test is a named workload of ``workloads.CATALOG`` (``sustained_write``,
``steady_state_rand_write_4k``, ``recovery_after_idle``) run by a plain module here on one drive
through ``QualSession.run_job``; ``run_methodology`` picks the module by workload id.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ssdqual.methodology import (
    burst,
    client_presets,
    compressibility,
    consistency,
    drive_with_data,
    integrity,
    mixed,
    pts_hir,
    pts_iops,
    pts_latency,
    pts_throughput,
    pts_wsat,
    qd_scaling,
    seq_after_random,
    steady,
    sustained,
    transfer_size,
)
from pytest_ssdqual.methodology.base import (
    MethodologyOutcome,
    MethodologyResult,
    MethodRun,
    judge_result,
)
from pytest_ssdqual.methodology.curves import write_curves
from pytest_ssdqual.methodology.pts_common import session_active_range

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.progress import Observer
    from pytest_ssdqual.methodology.protocol import DriveUnderTest, JobSession

__all__ = [
    "METHODOLOGIES",
    "MethodologyOutcome",
    "MethodologyResult",
    "MethodRun",
    "judge_result",
    "run_methodology",
]

#: Workload id -> the module function that runs it.
METHODOLOGIES: dict[str, Callable[[MethodRun], MethodologyResult]] = {
    sustained.WORKLOAD_ID: sustained.run,
    steady.WORKLOAD_ID: steady.run,
    consistency.WORKLOAD_ID: consistency.run,
    qd_scaling.WORKLOAD_ID: qd_scaling.run,
    mixed.WORKLOAD_ID: mixed.run,
    transfer_size.WORKLOAD_ID: transfer_size.run,
    client_presets.WORKLOAD_ID: client_presets.run,
    drive_with_data.WORKLOAD_ID: drive_with_data.run,
    seq_after_random.WORKLOAD_ID: seq_after_random.run,
    burst.WORKLOAD_ID: burst.run,
    compressibility.WORKLOAD_ID: compressibility.run,
    integrity.WORKLOAD_ID: integrity.run,
    pts_iops.WORKLOAD_ID: pts_iops.run,
    pts_throughput.WORKLOAD_ID: pts_throughput.run,
    pts_latency.WORKLOAD_ID: pts_latency.run,
    pts_wsat.WORKLOAD_ID: lambda mr: pts_wsat.run(mr, session_active_range(mr.session)),
    pts_hir.WORKLOAD_ID: lambda mr: pts_hir.run(mr, session_active_range(mr.session)),
}


def run_methodology(
    workload_id: str,
    session: JobSession,
    ctx: DriveUnderTest,
    workdir: Path,
    *,
    observer: Observer | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> MethodologyResult:
    """Run the methodology test ``workload_id`` on the drive ``ctx``.

    ``sleep`` waits out the idle periods (``time.sleep``; replaced in tests).

    Raises:
        KeyError: not a methodology workload (the message names the known ones).
        SafetyRefusal: the drive refuses writes. DeviceError, FioError: as ``run_job``.
    """
    try:
        runner = METHODOLOGIES[workload_id]
    except KeyError:
        raise KeyError(
            f"{workload_id!r} is not a methodology test; known: {', '.join(sorted(METHODOLOGIES))}"
        ) from None
    result = runner(MethodRun(session, ctx, workdir, workload_id, observer=observer, sleep=sleep))
    write_curves(workdir, result.curves)  # stored with the test's files, attached to Allure
    return result
