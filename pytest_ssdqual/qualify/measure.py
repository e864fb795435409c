"""The ``measure`` step of the flow (``flow.run_test``) for a fio workload and for a methodology
test: run it on the drive, judge its figures once, and give the flow a ``Measured``.

Plain Python (no pytest). A fio workload (a catalog id or one built from parameters,
``params.FioParams``) and a methodology test (its steps, ``methodology.registry``, with its
implicit requirements) alike run ``--repeat`` times (plus reruns while the comparison with the
baseline may still change, up to ``--repeat-max``: ``run_repeated``)
and are judged once, on one figure per metric from the runs (``results.repeats``: the maximum
of a maximum, the worst run's latency percentile, the median run's throughput; the failure
message and the record say which). A fio workload's latency percentiles come instead from its
runs' summed json+ histograms when every run has one (``merged_tails``), and a deep tail of too
few I/Os fails a limit on it with the count it needed (``tail_reasons``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ssdqual.catalog.workloads import Workload
from pytest_ssdqual.errors import FioError, NotApplicable, SsdQualError
from pytest_ssdqual.fio.tails import merged_run_figures
from pytest_ssdqual.methodology.base import MethodologyOutcome, MethodologyResult, judge_result
from pytest_ssdqual.methodology.registry import run_methodology
from pytest_ssdqual.qualify.consistency import consistency_reasons, with_log_figures
from pytest_ssdqual.qualify.flow import Measured, Skipped
from pytest_ssdqual.qualify.power import DrivePower, metered, power_note, without_meter
from pytest_ssdqual.qualify.session import DriveContext, QualSession, WorkloadOutcome
from pytest_ssdqual.qualify.temperature import (
    drive_temperature,
    methodology_with_temperature,
    run_start_s,
    sampled,
    workload_with_temperature,
)
from pytest_ssdqual.results.gate import ResultsGate
from pytest_ssdqual.results.protocol import Judged
from pytest_ssdqual.results.regression import (
    aggregate_repeats,
    nonfinite_repetitions,
    repetition_samples,
)
from pytest_ssdqual.results.repeats import describe_aggregation
from pytest_ssdqual.thresholds.verdict import NOT_JUDGED, Verdict, judge

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


def run_repeated(gate: ResultsGate, ctx: DriveContext, workload_id: str, workdir: Path,
                 once: Callable[[Path], Mapping[str, float]]) -> list[Path]:
    """Run one test ``--repeat`` times, then one run at a time while its comparison with the
    baseline may still change (``ResultsGate.wants_more_runs``, up to
    ``--repeat-max`` runs in all): what ``measure_workload`` and ``measure_methodology`` share.

    Args:
        workdir: the test's work folder; run N runs in ``gate.workdirs(workdir)`` /
            ``gate.workdir(workdir, N)`` (``workdir`` itself for a single ``--repeat``).
        once: runs the test once in the folder given and returns that run's metrics by
            canonical name.

    Returns:
        the work folder of each run, in order. Whatever ``once`` raises propagates.
    """
    folders: list[Path] = []
    metrics: list[Mapping[str, float]] = []

    def run(folder: Path) -> None:
        metrics.append(once(folder))
        folders.append(folder)

    for folder in gate.workdirs(workdir):  # --repeat N: judged once on all runs
        run(folder)
    while gate.wants_more_runs(ctx, workload_id, metrics):
        run(gate.workdir(workdir, len(folders) + 1))
    return folders


def measure_workload(host: Host, session: QualSession, gate: ResultsGate, ctx: DriveContext,
                     workload: Workload, workdir: Path, power: DrivePower | None = None
                     ) -> Measured:
    """Run ``workload`` ``--repeat`` times (and while the baseline comparison is inconclusive
    or regressed, up to ``--repeat-max``: ``run_repeated``), then judge it once on the runs'
    figures (``repeats.aggregate_repeats``; a single run: on its figures; a figure NaN in any
    run is not measured, the limit's line names the run); with several runs the failure
    message says how the judged figures were taken (``repeats.describe_aggregation``).
    With ``power`` (the drive's meter, ``qualify.power``) each run is metered and gains the
    power figures; without a meter, a limit on one fails with ``power.reason``.

    Raises:
        FioError: fio failed (``exc.drive`` names the drive and workload; the host has been
            told through ``fio_failed``). SafetyRefusal, DeviceError: as ``run_workload``.
    """
    repetitions: list[WorkloadOutcome] = []
    temp = drive_temperature(ctx, session.options.profile.temperature_interval_s)
    temp_na: dict[str, str] = {}
    temp_notes: list[str] = []

    def once(folder: Path) -> dict[str, float]:
        try:
            with host.phase(f"measure: fio {workload.id}"):
                def run() -> WorkloadOutcome:
                    return with_log_figures(
                        session.run_workload(ctx, workload, folder, on_run=host.fio_run),
                        folder, session.options.profile.consistency)
                def measured() -> None:
                    if power is not None and power.meter is not None:
                        repetitions.append(metered(power.meter, workload, run))
                    else:
                        repetitions.append(without_meter(
                            run(), power.reason if power else "no power meter",
                            {lim.metric for lim in ctx.limits.for_workload(workload.id)}))
                _, trun = sampled(temp, folder, measured,  # qualify.temperature
                                  origin_s=lambda: run_start_s(repetitions[-1]))
                repetitions[-1], na = workload_with_temperature(repetitions[-1], trun)
                temp_na.update(na)
                temp_notes[:] = [trun.note]
        except BaseException as exc:
            if isinstance(exc, FioError):
                exc.drive = f"{ctx.target.spec.raw} {workload.id}"
            host.fio_failed(exc)
            raise
        return repetitions[-1].metrics

    run_repeated(gate, ctx, workload.id, workdir, once)
    with host.phase("judge against the limits"):
        metrics, spread = aggregate_repeats([o.metrics for o in repetitions])
        metrics, tails_note, binned = merged_tails(repetitions, metrics)
        unmeasured = {**tail_reasons(repetitions, metrics), **unmeasured_reasons(repetitions),
                      **{m: why for o in repetitions for m, why in
                         o.result.extra_unmeasured.items() if m not in metrics}}
        plan = session.options.profile.consistency
        outcome = dataclasses.replace(repetitions[-1], metrics=metrics, verdicts=judge(
            workload, metrics, ctx.limits, strict=session.options.strict,
            unreached=unmeasured, not_in_profile={
                **consistency_reasons(workload, metrics, plan), **temp_na}))
    how = describe_aggregation([m for m in judged_metrics(outcome.verdicts) if m not in binned],
                               len(repetitions))
    details = [f"  {line}" for line in (how, tails_note, power_note(outcome), *temp_notes)
               if line]
    return Measured(outcome, repetitions, spread, details=details,
                    files=[fio_files(o) for o in repetitions])


def fio_files(outcome: WorkloadOutcome) -> dict[str, Path | str]:
    """A fio workload run's files for the results store: the job, fio's JSON output (when
    it wrote one), its stderr (text), the per-second logs and the drive's temperature samples
    (``temperature.csv``), by store name."""
    run = outcome.run
    files: dict[str, Path | str] = {"job.fio": run.job_path}
    if run.output_path.exists():
        files["fio-output.json"] = run.output_path
    files["fio-stderr.txt"] = run.stderr
    for log in sorted(run.job_path.parent.glob("log_*.log")):
        files[log.name] = log
    files.update({p.name: p for p in run.job_path.parent.glob("temperature.csv")})
    return files


def merged_tails(repetitions: Sequence[WorkloadOutcome], metrics: Mapping[str, float],
                 ) -> tuple[dict[str, float], str | None, set[str]]:
    """With two or more runs that all have fio's json+ histograms, their latency percentiles
    and ``lat_tail_ios`` from the runs' summed histograms (``fio.tails.merged_run_figures``:
    percentiles of all their I/Os, not the worst run's), replacing the ``results.repeats``
    figures; a deep tail all runs together have too few I/Os for is dropped (``tail_reasons``
    says why). Returns ``(metrics, note for the report or None, metrics so taken)``."""
    out = dict(metrics)
    if len(repetitions) < 2:
        return out, None, set()
    figures, unmeasured, directions = merged_run_figures([o.result for o in repetitions])
    for name in directions:
        for metric in [m for m in out if m.startswith(f"{name}.lat_p")]:
            del out[metric]
    out.update(figures)
    if not directions:
        return out, None, set()
    ios = ", ".join(f"{d} {int(figures[f'{d}.lat_tail_ios']):,} I/Os" for d in directions)
    note = (f"latency percentiles of {len(repetitions)} runs from their merged fio histograms "
            f"({ios})")
    return out, note, set(figures) | set(unmeasured)


def tail_reasons(repetitions: Sequence[WorkloadOutcome],
                 metrics: Mapping[str, float]) -> dict[str, str]:
    """Metric -> why a deep tail has no figure (``WorkloadResult.unmeasured``: too few I/Os;
    for several runs, too few in all of them together: ``fio.tails.merged_run_figures``),
    for the metrics not in ``metrics``: the reason a limit on it fails with."""
    if len(repetitions) > 1:
        _, why, _ = merged_run_figures([o.result for o in repetitions])
    else:
        why = repetitions[-1].result.unmeasured() if repetitions else {}
    return {m: reason for m, reason in why.items() if m not in metrics}


def judged_metrics(verdicts: Sequence[Verdict]) -> list[str]:
    """The metrics of ``verdicts`` that have a limit (not ``not judged``), in order, once."""
    return list(dict.fromkeys(v.metric for v in verdicts if v.status != NOT_JUDGED))


def measure_methodology(host: Host, session: QualSession, gate: ResultsGate, ctx: DriveContext,
                        workload: Workload, workdir: Path) -> Measured:
    """Run the methodology test ``workload`` (its steps in ``workdir/<id>``, ``.../repN`` with
    ``--repeat N``; progress through the host) ``--repeat`` times and while its comparison with
    the baseline may still change, up to ``--repeat-max`` (``run_repeated``, as
    ``measure_workload``), then judge it once, on the runs' figures (``repeated_result``) with its
    implicit requirements; each run's notes go to the terminal, the last run's after the
    violated limits. The record stores every run's figures and files (``rep1/``, ...); the
    drive states, steps, curves and Allure attachments are the last run's.

    Raises:
        FioError: fio failed (the host has been told). SafetyRefusal, DeviceError: from a step.
        Skipped: the test cannot apply to this drive (``NotApplicable``, before any I/O; the
            skip does not make the run incomplete).
    """
    drive = ctx.target.spec.raw
    results: list[MethodologyResult] = []
    temp = drive_temperature(ctx, session.options.profile.temperature_interval_s)

    def once(folder: Path) -> dict[str, float]:
        try:
            result, trun = sampled(temp, folder, lambda: run_methodology(
                workload.id, session, ctx, folder, observer=host))
            result = methodology_with_temperature(result, trun)  # qualify.temperature
        except FioError as exc:
            host.fio_failed(exc)
            raise
        except NotApplicable as exc:
            raise Skipped(str(exc), applicable=False) from None
        results.append(result)
        number = len(results)
        label = f"run {number}: " if number > 1 or gate.options.repeat > 1 else ""
        for note in result.notes:
            host.note(f"[ssdqual {ctx.label or drive}] {workload.id}: {label}{note}")
        return result.metrics

    folders = run_repeated(gate, ctx, workload.id, workdir / workload.id, once)
    repetitions = [MethodologyOutcome(r, []) for r in results]
    _, spread = aggregate_repeats([r.metrics for r in results])
    result = repeated_result(results)
    outcome = judge_result(result, ctx.limits, strict=session.options.strict,
                           unmeasured=unmeasured_reasons(repetitions))
    how = describe_aggregation(judged_metrics(outcome.verdicts), len(results))
    label = (f"notes of run {len(results)} of {len(results)} (the figures judged come from "
             "every run, see above):" if len(results) > 1 else None)
    details = ([f"  {how}"] if how else []) + ([f"  {label}"] if label else []) \
        + ["  " + note for note in result.notes]
    return Measured(outcome, repetitions=repetitions, spread_pct=spread,
                    states=result.states,
                    files=[stored_files(f, skip=folders) for f in folders],
                    details=details, report="methodology")


def repeated_result(results: Sequence[MethodologyResult]) -> MethodologyResult:
    """One methodology result from its runs (``--repeat``): the last run's with every metric
    the runs' figure by its rule (``aggregate_repeats``: the median run's for most; NaN when a
    run has no finite figure, left out when a run lacks it). An implicit requirement (purge
    done, steady state reached) must hold in every run: its metric is the worst run's (the
    lowest for a ``min``, else the highest), and every run's requirements apply. A metric
    left out has the reason of a run that never reached it (``unreached``). One run: that
    run's result unchanged.

    Raises:
        ValueError: no run.
    """
    if not results:
        raise ValueError("no methodology run to combine")
    if len(results) == 1:
        return results[0]
    last = results[-1]
    metrics, _ = aggregate_repeats([r.metrics for r in results])
    requirements = list({(lim.workload, lim.metric): lim
                         for r in results for lim in r.requirements}.values())
    for lim in requirements:
        values = [float(r.metrics[lim.metric]) for r in results if lim.metric in r.metrics]
        if values and all(math.isfinite(v) for v in values):  # else NaN: not measured
            metrics[lim.metric] = min(values) if lim.min is not None else max(values)
    unreached = {m: why for r in results for m, why in r.unreached.items() if m not in metrics}
    return dataclasses.replace(last, metrics=metrics, requirements=requirements,
                               unreached=unreached)


def unmeasured_reasons(repetitions: Sequence[Judged]) -> dict[str, str]:
    """Metric -> ``not measured (repetition 2 of 3 of this run gave nan)`` for every metric
    NaN or infinite in one of two or more ``repetitions`` (``regression.nonfinite_repetitions``):
    the reason a limit on it fails with (``judge``'s ``unreached``); ``{}`` for one run."""
    if len(repetitions) < 2:
        return {}
    samples = repetition_samples([o.metrics for o in repetitions])
    return {m: f"not measured ({why})" for m, why in nonfinite_repetitions(samples).items()}


def stored_files(folder: Path, skip: Sequence[Path] = ()) -> dict[str, Path | str]:
    """Every file a methodology wrote under ``folder`` (job files, fio outputs, per-second and
    per-round CSV), flattened to store names like ``01-precondition__job.fio``; files under
    the other folders of ``skip`` are left out (the reruns of a single ``--repeat`` run in
    ``folder/rep2``, ...)."""
    if not folder.is_dir():
        return {}
    others = [s for s in skip if s != folder]
    return {
        "__".join(p.relative_to(folder).parts): p
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not any(p.is_relative_to(o) for o in others)
    }
