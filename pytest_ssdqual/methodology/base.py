"""What every methodology test shares: the run (drive, folders, clock, observer), its steps
and its result. A methodology test is a sequence of steps -- purge, fio jobs, idle periods --
on one drive. ``MethodRun`` runs each step through the session's ``run_job``
(``protocol.JobSession``: every write passes the drive's safety checks), keeps each fio job in
its own folder with its per-second logs, tells the observer the phase, round and ETA, and
records the state each figure was taken in (FOB, preconditioned, steady state, ...)."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_ssdqual.catalog.workloads import CATALOG, MethodologyPlan, Workload
from pytest_ssdqual.fio.job import LOG_AVG_MSEC
from pytest_ssdqual.fio.logs import find_logs, read_series
from pytest_ssdqual.fio.runner import TIMEOUT_MARGIN_S
from pytest_ssdqual.fio.series import Series
from pytest_ssdqual.methodology.curves import Curve
from pytest_ssdqual.methodology.jobs import MethodJob, aligned_span
from pytest_ssdqual.methodology.progress import EtaClock, NullObserver, Observer, ProgressEvent
from pytest_ssdqual.methodology.purge import PurgeRecord, purge
from pytest_ssdqual.methodology.step_tables import per_second_csv, rounds_csv
from pytest_ssdqual.thresholds.verdict import Limit, Provenance, Verdict, judge

if TYPE_CHECKING:
    from pytest_ssdqual.methodology.protocol import DriveUnderTest, JobRun, JobSession
    from pytest_ssdqual.methodology.steady_state import SteadyState
    from pytest_ssdqual.thresholds.profile import ResolvedLimits

#: Drive states a figure can be taken in (SNIA PTS: FOB = fresh out of box, after a purge).
STATE_FOB = "FOB"
STATE_AS_FOUND = "as found (not purged)"
STATE_PRECONDITIONED = "preconditioned"
STATE_DEGRADED = "degraded"
STATE_STEADY = "steady state"
STATE_NOT_STEADY = "not steady (steady state not reached)"


def state_after_idle(idle_s: float) -> str:
    """``after 300 s idle``: the state of a figure taken after ``idle_s`` seconds of idle."""
    return f"after {idle_s:g} s idle"


#: Write bandwidth assumed for the ETA of a size-based step before one was measured, MB/s.
NOMINAL_WRITE_BW_MBPS = 500.0
#: fio's own start-up and the job's tail, added to every planned fio step, seconds.
FIO_OVERHEAD_S = 0.5


@dataclass(frozen=True)
class Step:
    """One fio job of a methodology test and its figures.

    Attributes:
        phase: ``precondition``, ``degradation``, ``steady state``, ``recovery``...
        round: 1-based round within the phase, ``None`` for a single step.
        state: the drive state the figures were taken in (``STATE_*``).
        job: the job run. job_run: its fio run and parsed result.
        start_s: when it started, seconds since the test started.
        metrics: fio's figures (``write.iops``, ``write.lat_p99_us``...).
        bw, iops, lat: per-second series (decimal MB/s, IOPS, µs of total latency) of the job's
            direction, ``None`` when fio wrote no such log. idle_before_s: cumulative idle
            seconds before this step (recovery rounds), else ``None``.
        label: what the progress line calls the step when the phase alone does not tell the
            steps apart (a sweep point: ``rand_read_4k QD8``), else ``None``.
    """

    phase: str
    round: int | None
    state: str
    job: MethodJob
    job_run: JobRun
    start_s: float
    metrics: dict[str, float] = field(hash=False)
    bw: Series | None = None
    iops: Series | None = None
    lat: Series | None = None
    idle_before_s: float | None = None
    label: str | None = None

    @property
    def direction(self) -> str:
        return "write" if self.job.writes else "read"

    def figure(self, name: str) -> float:
        """``iops``, ``bw_mbps``, ``lat_p99_us``... of the job's direction (NaN when absent)."""
        return self.metrics.get(f"{self.direction}.{name}", float("nan"))


@dataclass
class MethodologyResult:
    """A finished methodology test.

    Attributes:
        workload: the methodology workload (``sustained_write``...).
        metrics: canonical metric name -> value, in the names' units.
        states: metric name -> the drive state it was taken in.
        notes: human lines for the report (purge record, steady-state verdict, SLC cliff...).
        steps: every fio step, in order. purge: what the purge did (``None``: no purge).
        steady_state: the SNIA verdict when the test tracks one.
        requirements: the test's implicit limits (its preconditions: the purge ran, steady
            state was reached); a threshold profile's own limit on the same workload and metric
            replaces one (that is how it is waived), see :func:`judge_result`.
        curves: figures along a swept axis (QD, write share, transfer size, fill state), written
            as ``curves.json`` with the test's files (``curves.Curve``).
        unreached: metric -> why it has no value because the drive never got there
            (``time_to_recover_s``: never recovered); a limit on it fails with that reason;
            not_in_profile: ... because the run profile does not measure it by design
            (``catalog.sweeps.not_in_profile``); a limit on it is reported, not failed.
        tables: report tables by file name (the SNIA PTS tests': ``methodology.pts_tables``).
    """

    workload: Workload
    metrics: dict[str, float]
    states: dict[str, str]
    notes: list[str]
    steps: list[Step]
    purge: PurgeRecord | None = None
    steady_state: SteadyState | None = None
    requirements: list[Limit] = field(default_factory=list)
    curves: list[Curve] = field(default_factory=list)
    unreached: dict[str, str] = field(default_factory=dict)
    not_in_profile: dict[str, str] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)

    def rounds_csv(self) -> str:
        """One row per fio step: phase, round, state, idle, figures (``step_tables``)."""
        return rounds_csv(self.steps)

    def per_second_csv(self) -> str:
        """Every step's per-second log on one time line (``step_tables``)."""
        return per_second_csv(self.steps)


@dataclass
class MethodologyOutcome:
    """A methodology result judged against the drive's limits (see :func:`judge_result`; the
    outcome protocol ``results.protocol.Judged``).

    Attributes:
        result: the test's figures, states, notes and steps.
        verdicts: one per limit of the workload, then one per measured metric without a limit.
    """

    result: MethodologyResult
    verdicts: list[Verdict]

    @property
    def workload(self) -> Workload:
        return self.result.workload

    @property
    def metrics(self) -> dict[str, float]:
        return self.result.metrics

    @property
    def failed(self) -> list[Verdict]:
        """Verdicts that fail the test (violated limits, limited metrics not measured)."""
        return [v for v in self.verdicts if v.failed]

    @property
    def states(self) -> dict[str, str]:  # the drive state of each figure
        return self.result.states

    @property
    def unreached(self) -> dict[str, str]:  # never got there (never recovered)
        return self.result.unreached

    @property
    def requirements(self) -> list[Limit]:  # implicit limits: purge done, steady state
        return self.result.requirements

    @property
    def run_facts(self) -> dict[str, float | str]:  # no single fio run: each step has its own
        return {}


def judge_result(result: MethodologyResult, limits: ResolvedLimits, *, strict: bool = False,
                 unmeasured: Mapping[str, str] | None = None) -> MethodologyOutcome:
    """Judge a methodology result's metrics with ``thresholds.verdict.judge``, with the result's
    implicit ``requirements`` added where no threshold profile sets a limit on that metric.
    ``unmeasured``: metric -> why it has no figure besides ``result.unreached`` (a repetition of
    ``--repeat`` without one, ``regression.nonfinite_repetitions``): a limit on it fails with
    that reason; it is not stored as ``unreached``."""
    if result.requirements:
        merged = {(lim.workload, lim.metric): lim for lim in result.requirements}
        merged.update(limits.limits)
        limits = replace(limits, limits=merged)
    return MethodologyOutcome(result, judge(
        result.workload, result.metrics, limits, strict=strict,
        unreached={**(unmeasured or {}), **result.unreached}, not_in_profile=result.not_in_profile))


def purge_state(record: PurgeRecord) -> str:
    """The state of figures taken right after the purge: ``FOB``, ``as found (not FOB:
    <why>)`` when a method ran but the drive is not fresh out of box (``PurgeRecord.not_fob``:
    an ATA password left set), or ``as found (purge failed: <why>)`` when no method could
    run."""
    if record.fob:
        return STATE_FOB
    if record.ran:
        return f"as found (not FOB: {record.not_fob})"
    return f"as found (purge failed: {'; '.join(record.attempts) or 'no method'})"


def purge_requirement(workload_id: str, record: PurgeRecord, file: str) -> list[Limit]:
    """``purged >= 1`` when the purge failed or left the drive not FOB (the metric ``purged``
    = 0 is then in the result): the test fails -- its figures are not FOB figures. No
    threshold profile can waive it (``purged`` is no catalog metric)."""
    if record.fob:
        return []
    return [Limit(workload_id, "purged", 1.0, None, None, Provenance(
        file, "implicit requirement",
        "SNIA PTS 3.3: a dirty-state test starts from a purged (FOB) drive; "
        + record.describe()))]


def purged_result(
    workload_id: str,
    source_file: str,
    record: PurgeRecord,
    steps: list[Step],
    metrics: dict[str, float],
    states: dict[str, str],
    notes: list[str],
    *,
    purge_figure_state: str,
    curves: list[Curve] | None = None,
    unreached: dict[str, str] | None = None,
) -> MethodologyResult:
    """The result of a test that started with a purge: its figures with, when the purge failed
    or left the drive not FOB, the metric ``purged`` = 0 (in ``purge_figure_state``) and its
    :func:`purge_requirement` (``purged >= 1``, from ``source_file``) so that the test fails.
    ``metrics`` and ``states`` are updated in place; ``steps`` is copied."""
    if not record.fob:
        metrics["purged"] = 0.0
        states["purged"] = purge_figure_state
    return MethodologyResult(
        workload=CATALOG[workload_id], metrics=metrics, states=states, notes=notes,
        steps=list(steps), purge=record,
        requirements=purge_requirement(workload_id, record, source_file),
        curves=curves or [], unreached=unreached or {},
    )


class MethodRun:
    """Runs the steps of one methodology test on one drive.

    Args:
        session: the session (``protocol.JobSession``: ``QualSession``): fio runner, profile.
        ctx: the drive (``protocol.DriveUnderTest``: ``DriveContext``). workdir: folder for
            every step's job file, fio output and per-second logs.
        test_id: the methodology workload id (for progress lines). observer: receives phases
            and progress events. sleep: ``time.sleep`` (replaced in tests).
    """

    def __init__(
        self,
        session: JobSession,
        ctx: DriveUnderTest,
        workdir: Path,
        test_id: str,
        *,
        observer: Observer | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.session = session
        self.ctx = ctx
        self.workdir = workdir
        self.test_id = test_id
        self.observer: Observer = observer or NullObserver()
        self.sleep = sleep
        self.steps: list[Step] = []
        self.clock = EtaClock([])
        self.write_bw_mbps = NOMINAL_WRITE_BW_MBPS
        self._t0 = time.monotonic()

    @property
    def plan(self) -> MethodologyPlan:
        """The profile's methodology durations."""
        return self.session.options.profile.methodology

    def span(self, bs_bytes: int) -> int:
        """The profile's span on this drive, a multiple of ``bs_bytes``."""
        return aligned_span(self.ctx.target.size_bytes, self.session.options.profile.span_bytes,
                            bs_bytes)

    def elapsed_s(self) -> float:
        return time.monotonic() - self._t0

    def plan_steps(self, planned_s: list[float]) -> None:
        """Set the planned seconds of the steps to come (for the ETA)."""
        self.clock.revise(planned_s)

    def report(self, phase: str, round: int | None = None, rounds: int | None = None,
               figure: str = "") -> None:
        """One step done: tell the observer the phase, round, figure and ETA."""
        self.clock.step_done()
        self.observer.progress(ProgressEvent(
            self.test_id, phase, round, rounds, self.clock.eta_s(), figure, self.elapsed_s()))

    def purge(self) -> PurgeRecord:
        """Purge the drive (see ``purge.purge``) inside a ``purge`` phase. A purge that ran
        erases the session's read prefill, so plain read workloads after it prefill again
        (their figures are never reads of purged media called "read after a prefill").

        Raises:
            SafetyRefusal, DeviceError: as ``purge.purge``.
        """
        with self.observer.phase("purge"):
            record = purge(self.ctx.target)
        if record.ran:  # the session's prefill is gone: the next read workload prefills again
            self.ctx.prefilled_bytes = None
        self.report("purge", figure=record.method or "no method could run")
        return record

    def fio(
        self,
        job: MethodJob,
        *,
        phase: str,
        state: str,
        round: int | None = None,
        rounds: int | None = None,
        idle_before_s: float | None = None,
        label: str | None = None,
        report: bool = True,
    ) -> Step:
        """Run one fio job on the drive (in its own folder) and read its per-second logs.

        ``report=False``: the caller calls :meth:`report_step` itself (after revising the
        plan, e.g. once steady state is reached). On a drive with a write budget (the plugin's
        scratch file) the job runs as ``job.within_budget(...)``, which the step records.

        Raises:
            SafetyRefusal, DeviceError, FioError: as ``QualSession.run_job``.
        """
        if self.ctx.write_budget_bytes is not None:
            job = job.within_budget(self.ctx.write_budget_bytes)
        folder_name = job.name if round is None else f"{job.name}-r{round:02d}"
        folder = self.workdir / f"{len(self.steps) + 1:02d}-{folder_name}"
        title = label or (phase if round is None else f"{phase} round {round}")
        start = self.elapsed_s()
        with self.observer.phase(f"{title}: {job.title}"):
            job_run = self.session.run_job(
                self.ctx, job.name,
                job.render(filename=self.ctx.target.fio_filename,
                           ioengine=self.session.ioengine()),
                folder,
                writes=job.writes,
                expected_runtime_s=job.expected_runtime_s,
                expected_io_bytes=job.expected_io_bytes,
                timeout_s=job.timeout_s(TIMEOUT_MARGIN_S),
            )
        direction, ran_ms = "write" if job.writes else "read", job_run.result.runtime_ms
        step = Step(
            phase, round, state, job, job_run, start, job_run.result.metrics(),
            bw=_series(folder, "bw", direction, ran_ms),
            iops=_series(folder, "iops", direction, ran_ms),
            lat=_series(folder, "lat", direction, ran_ms), idle_before_s=idle_before_s, label=label,
        )
        self.steps.append(step)
        bw = step.figure("bw_mbps")
        if job.writes and job.bs_bytes >= 128 * 1024 and bw == bw and bw > 0:
            self.write_bw_mbps = bw
        if report:
            self.report_step(step, rounds)
        return step

    def report_step(self, step: Step, rounds: int | None = None) -> None:
        """Report a finished fio step (phase, round, its figures, ETA)."""
        name = step.label if step.round is None and step.label else step.phase  # a sweep point
        self.report(name, step.round, rounds, _figure(step))

    def idle(self, seconds: float, *, phase: str) -> None:
        """Leave the drive idle (no I/O from this test) for ``seconds``, inside a phase named
        ``"<phase>: idle <seconds> s"``."""
        with self.observer.phase(f"{phase}: idle {seconds:g} s"):
            self.sleep(seconds)


def _series(folder: Path, kind: str, direction: str, runtime_ms: int) -> Series | None:
    """The step's per-second ``kind`` series, ``None`` when fio wrote no such log or no line of
    that direction. Read with the window the job set (``LOG_AVG_MSEC``), not one inferred from
    the stamps (a drive stalling every other second logs every 2 s). A malformed log, or a
    line stamped after twice the job's ``runtime_ms`` (fio JSON) plus a minute, raises
    ``FioOutputError``."""
    if not find_logs(folder, kind):
        return None
    span_ms = 2 * runtime_ms + 60 * LOG_AVG_MSEC if runtime_ms > 0 else None
    series = read_series(folder, kind, direction, window_ms=LOG_AVG_MSEC, max_span_ms=span_ms)
    return series if len(series) else None


def _figure(step: Step) -> str:
    iops, bw, p99 = step.figure("iops"), step.figure("bw_mbps"), step.figure("lat_p99_us")
    parts = [f"{step.direction} {iops:,.0f} IOPS", f"{bw:,.1f} MB/s"]
    if p99 == p99:
        parts.append(f"p99 {p99:,.0f} us")
    return ", ".join(parts)
