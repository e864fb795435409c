"""The IOPS consistency figures of a fio workload's run (``fio.consistency``), added to its
metrics, and why a figure is missing (too few seconds of log: reported, not judged).

Plain Python (no pytest).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

from pytest_ssdqual.catalog.consistency import ConsistencyPlan, not_measured
from pytest_ssdqual.catalog.workloads import Workload
from pytest_ssdqual.fio.consistency import log_figures
from pytest_ssdqual.fio.job import LOG_AVG_MSEC
from pytest_ssdqual.qualify.session import WorkloadOutcome

__all__ = ["consistency_reasons", "with_log_figures"]


def with_log_figures(outcome: WorkloadOutcome, folder: Path,
                     plan: ConsistencyPlan) -> WorkloadOutcome:
    """``outcome`` with the consistency figures of the IOPS logs its run wrote in ``folder``
    (read with the window the job set, ``LOG_AVG_MSEC``) added to its metrics.

    Raises:
        FioOutputError: a malformed log.
    """
    figures = log_figures(folder, outcome.workload.directions, plan,
                          window_ms=LOG_AVG_MSEC, runtime_ms=outcome.result.runtime_ms)
    return dataclasses.replace(outcome, metrics={**outcome.metrics, **figures})


def consistency_reasons(workload: Workload, metrics: Mapping[str, float],
                        plan: ConsistencyPlan) -> dict[str, str]:
    """Metric -> why a consistency figure is missing (``catalog.consistency.not_measured``),
    for ``judge``'s ``not_in_profile``: a limit on it is reported with the reason, not
    judged. ``{}`` for a workload with no per-direction figures."""
    if not workload.per_direction:
        return {}
    return not_measured(metrics, workload.directions, plan)
