"""The ``measure`` step of the flow (``flow.run_test``) for a fio workload and for a methodology
test: run it on the drive, judge its figures once, and give the flow a ``Measured``.

Plain Python (no pytest). A fio workload (a catalog id or one built from parameters,
``params.FioParams``) runs ``--repeat`` times (plus reruns while the comparison with the baseline
is inconclusive, up to ``--repeat-max``) and is judged once, on the medians; a methodology test
runs its steps (``methodology.registry``) and is judged with its implicit requirements.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ssdqual.catalog.workloads import Workload
from pytest_ssdqual.errors import FioError, NotApplicable, SsdQualError
from pytest_ssdqual.methodology.base import judge_result
from pytest_ssdqual.methodology.registry import run_methodology
from pytest_ssdqual.qualify.flow import Measured, Skipped
from pytest_ssdqual.qualify.session import DriveContext, QualSession, WorkloadOutcome
from pytest_ssdqual.report.summary import rows_from_outcome, rows_from_verdicts
from pytest_ssdqual.results.gate import ResultsGate
from pytest_ssdqual.results.regression import aggregate_repeats
from pytest_ssdqual.thresholds.verdict import judge

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.flow import Host


def check_marked(workload: Workload, *, methodology: bool, destructive: bool, test: str) -> None:
    """The test uses the right runner for ``workload`` and a writing test is marked
    ``destructive`` (so it can be deselected).

    Raises:
        SsdQualError: naming the test, the workload and the fix.
    """
    if workload.is_methodology and not methodology:
        raise SsdQualError(f"{workload.id} is a methodology test: run it with "
                           "run_methodology()")
    if methodology and not workload.is_methodology:
        raise SsdQualError(f"{workload.id} is a plain fio workload: run it with qualify()")
    if (workload.writes or methodology) and not destructive:
        kind = "methodology test" if methodology else "write workload"
        also = ", which writes," if methodology else ""
        raise SsdQualError(
            f"{test} runs the {kind} {workload.id}{also} but is not marked "
            "@pytest.mark.destructive: mark it so it can be deselected"
        )


def measure_workload(host: Host, session: QualSession, gate: ResultsGate, ctx: DriveContext,
                     workload: Workload, workdir: Path) -> Measured:
    """Run ``workload`` ``--repeat`` times (and while the baseline comparison is inconclusive,
    up to ``--repeat-max``), then judge it once on the medians (a single run: on its figures).

    Raises:
        FioError: fio failed (``exc.drive`` names the drive and workload; the host has been
            told through ``fio_failed``). SafetyRefusal, DeviceError: as ``run_workload``.
    """
    repetitions: list[WorkloadOutcome] = []

    def once(folder: Path) -> None:
        try:
            with host.phase(f"measure: fio {workload.id}"):
                repetitions.append(session.run_workload(ctx, workload, folder,
                                                        on_run=host.fio_run))
        except BaseException as exc:
            if isinstance(exc, FioError):
                exc.drive = f"{ctx.target.spec.raw} {workload.id}"
            host.fio_failed(exc)
            raise

    for folder in gate.workdirs(workdir):  # --repeat N: judged on the median
        once(folder)
    while gate.wants_more_runs(ctx, workload.id, [o.metrics for o in repetitions]):
        once(gate.workdir(workdir, len(repetitions) + 1))
    with host.phase("judge against the limits"):
        metrics, spread = (aggregate_repeats([o.metrics for o in repetitions])
                           if len(repetitions) > 1 else (repetitions[0].metrics, {}))
        outcome = dataclasses.replace(repetitions[-1], metrics=metrics, verdicts=judge(
            workload, metrics, ctx.limits, strict=session.options.strict))
    return Measured(outcome, rows_from_outcome(ctx, outcome), repetitions, spread)


def measure_methodology(host: Host, session: QualSession, ctx: DriveContext,
                        workload: Workload, workdir: Path) -> Measured:
    """Run the methodology test ``workload`` (its steps in ``workdir/<id>``, progress through
    the host) and judge it once, with its implicit requirements; its notes go to the terminal
    and after the violated limits.

    Raises:
        FioError: fio failed (the host has been told). SafetyRefusal, DeviceError: from a step.
        Skipped: the test cannot apply to this drive (``NotApplicable``, before any I/O; the
            skip does not make the run incomplete).
    """
    folder = workdir / workload.id
    drive = ctx.target.spec.raw
    try:
        result = run_methodology(workload.id, session, ctx, folder, observer=host)
    except FioError as exc:
        host.fio_failed(exc)
        raise
    except NotApplicable as exc:
        raise Skipped(str(exc), applicable=False) from None
    outcome = judge_result(result, ctx.limits, strict=session.options.strict)
    for note in result.notes:
        host.note(f"[ssdqual {drive}] {workload.id}: {note}")
    return Measured(outcome, rows_from_verdicts(drive, workload.id, outcome.verdicts,
                                                result.states),
                    states=result.states, files=[stored_files(folder)],
                    details=["  " + note for note in result.notes], report="methodology")


def stored_files(folder: Path) -> dict[str, Path | str]:
    """Every file a methodology wrote under ``folder`` (job files, fio outputs, per-second and
    per-round CSV), flattened to store names like ``01-precondition__job.fio``."""
    if not folder.is_dir():
        return {}
    return {
        "__".join(p.relative_to(folder).parts): p
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
