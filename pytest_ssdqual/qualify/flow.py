"""The one per-test flow of every judged drive test: start -> (refused?) -> measure -> judge
once -> report -> drive health -> store and gate -> verdict.

Plain Python (no pytest, no Allure): whatever the test measures (a catalog workload with
``--repeat``, a methodology test, the idle wake-up test, a workload built from parameters), it
hands the flow a ``measure`` callable returning a ``Measured`` -- the judged figures, judged
once on the figures the verdict uses (the medians with ``--repeat``). The flow builds the
test's ``TestRecord`` once from them (``results.record``: every verdict with the drive state
of its figure, after OpenHTF's test record) and hands that one object to every output: the
host's verdict attachments and verdict-table rows, and the results gate, which completes it
with the drive's facts and the baseline comparison and stores it. The flow tells its host what
happens through ``Host``, a small observer the plugin implements with Allure attachments,
``user_properties`` and the drive-health tracker (``plugin.host``), and returns a ``Concluded``
whose ``failure`` the host turns into a failed test. A test that cannot run here raises
``Skipped`` (the host skips it with the reason).

Order matters: the drive-health lines are worked out *before* the record is stored, so a test
that fails on drive health (DISK FAILING at session start, a media error during a destructive
workload) is stored as ``failed`` with the health lines (``ResultsGate.check``'s ``health``),
and ``ssdqual rejudge``, compare and trend count it as the run did.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from pytest_ssdqual.catalog.workloads import Workload
from pytest_ssdqual.fio.job import JobPlan
from pytest_ssdqual.fio.runner import FioRun
from pytest_ssdqual.methodology.progress import ProgressEvent
from pytest_ssdqual.qualify.session import DriveContext, QualSession
from pytest_ssdqual.results.gate import ResultsGate
from pytest_ssdqual.results.protocol import Judged
from pytest_ssdqual.results.record import TestRecord


class Skipped(Exception):
    """The test cannot run on this target; the message is the skip reason.

    Attributes:
        applicable: False when the test can never apply to this target (no power states on a
            scratch file): such a skip does not make the run incomplete.
    """

    def __init__(self, message: str, *, applicable: bool = True) -> None:
        super().__init__(message)
        self.applicable = applicable


@dataclass
class Measured:
    """What a test measured, judged once.

    Attributes:
        outcome: the judged figures (``results.protocol.Judged``: a ``WorkloadOutcome`` or a
            ``MethodologyOutcome``): metrics by canonical name (``read.bw_mbps`` in MB/s,
            ``*_us`` in µs), their verdicts and the drive state of each figure.
        repetitions: every run (``--repeat``), unjudged; ``[outcome]`` for a single run.
        spread_pct: run-to-run spread per metric in percent; empty for one run.
        states: metric -> drive state (FOB, steady state, ...) appended to a violated limit
            in the failure message (a methodology test's; empty for a fio workload).
        files: per repetition, store name -> file or text (the fio job, output and logs).
        details: lines after the violated limits in a failure (the test's notes), indented.
        report: how the host reports it: ``workload`` (verdicts, charts, fio files),
            ``methodology`` (the methodology record) or ``verdicts`` (the verdicts only).
    """

    outcome: Judged
    repetitions: Sequence[Judged] = ()
    spread_pct: Mapping[str, float] = field(default_factory=dict)
    states: Mapping[str, str] = field(default_factory=dict)
    files: Sequence[Mapping[str, Path | str]] = ()
    details: Sequence[str] = ()
    report: str = "workload"


@dataclass(frozen=True)
class Concluded:
    """The end of a test: its judged figures and, when it fails, the failure message (one line
    per violated limit, the test's notes, the regression and the drive-health lines); when it
    does not fail but the gate could not decide a metric (too few runs for its noise), the
    ``UNDECIDED: ...`` text (``GateResult.undecided_message``): neither a pass nor a failure."""

    outcome: Judged
    failure: str | None
    undecided: str | None = None


class Host(Protocol):
    """What the flow tells the test's host (the plugin: Allure, ``user_properties``, drive
    health). Every method is called in the order of the flow."""

    def started(self, ctx: DriveContext, workload: Workload) -> None:
        """Before any I/O: the drive's facts and the test's labels."""

    def refused(self, drive: str, workload_id: str, reasons: Sequence[str]) -> None:
        """The test writes and the drive refuses writes: the refusal's verdict-table row."""

    def health_before(self) -> object:
        """The drive's health read before the test writes; passed back to ``health_after``."""

    def phase(self, name: str) -> AbstractContextManager[Any]:
        """A named step of the test (an Allure step)."""

    def progress(self, event: ProgressEvent) -> None:
        """A methodology test's progress (phase, round, figure, ETA)."""

    def note(self, line: str) -> None:
        """A line for the terminal, outside output capture."""

    def attach_text(self, name: str, text: str) -> None:
        """A text attachment (e.g. the drive's power-state table)."""

    def fio_run(self, plan: JobPlan, run: FioRun | None) -> None:
        """One fio run's files (``run`` None: fio did not finish), attached after the verdicts."""

    def fio_failed(self, exc: BaseException) -> None:
        """fio (or the device) failed: attach what there is, then the error propagates."""

    def judged(self, measured: Measured, record: TestRecord) -> None:
        """The judged figures and the test's record (built once): attach verdicts, charts and
        the fio files."""

    def recorded(self, record: TestRecord) -> None:
        """The test's record: its verdict rows for the terminal summary."""

    def health_after(self, before: object, workload_id: str, *, destructive: bool
                     ) -> list[str]:
        """Failure lines for the drive's health (start findings; after a destructive test, its
        change), ``[]`` when healthy."""

    def gated(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """The regression gate's rows for this test."""


def run_test(
    host: Host,
    session: QualSession,
    gate: ResultsGate,
    ctx: DriveContext,
    workload: Workload,
    measure: Callable[[], Measured],
    *,
    writes: bool,
    test: str = "",
) -> Concluded:
    """Run one judged drive test: the whole flow (see the module docstring).

    Args:
        measure: runs the test's fio jobs and judges their figures once.
        writes: the test writes: refused drives skip it, and health is read again afterwards.
        test: the test's id (pytest node id), kept in its stored record.

    Raises:
        Skipped: the test writes and the drive refuses writes (the exact reasons); or (not
            applicable) a plain workload's transfer size is no multiple of the drive's logical
            sector (a 512-byte pattern on a 4Kn drive or a file over one).
        FioError, DeviceError: from ``measure`` (the test is broken, not failed).
        BaselineError, StoreError: from ``ResultsGate.check`` (the test is broken).
    """
    host.started(ctx, workload)
    if ctx.target.watch is not None:  # the test's first write check is a full one
        ctx.target.watch.new_test()
    unit = ctx.identity.logical_sector_bytes
    if not workload.is_methodology and unit > 0 and workload.bs_bytes % unit:
        raise Skipped(
            f"{workload.id}: {workload.bs_bytes}-byte transfers are no whole number of "
            f"{ctx.target.spec.raw}'s {unit}-byte logical sectors (direct I/O moves whole "
            f"sectors; fio would fail with EINVAL): use a transfer size that is a multiple "
            f"of {unit}", applicable=False)
    refusal = session.refusal(ctx) if writes else None
    if refusal is not None:
        host.refused(ctx.target.spec.raw, workload.id, refusal.reasons)
        raise Skipped(str(refusal))
    before = host.health_before()
    measured = measure()
    outcome = measured.outcome
    record = build_record(ctx, outcome, strict=session.options.strict, test=test)
    host.judged(measured, record)
    host.recorded(record)
    unhealthy = host.health_after(before, workload.id, destructive=writes)
    checked = gate.check(
        ctx, record, outcome, list(measured.repetitions) or [outcome], measured.spread_pct,
        files=measured.files, health=unhealthy,
    )
    host.gated(checked.rows())
    failure = failure_message(ctx, measured, checked.failure_message(), unhealthy)
    if failure is None:
        return Concluded(outcome, None, checked.undecided_message())
    undecided = checked.undecided_message(also_failed=True)  # None once a metric regressed
    return Concluded(outcome, failure + ("\n" + undecided if undecided else ""))


def build_record(ctx: DriveContext, outcome: Judged, *, strict: bool, test: str) -> TestRecord:
    """The test's one record (``TestRecord.judged``: each verdict with the drive state of its
    figure, ``outcome.states``), built once; the results gate adds the drive's facts, the runs
    and the regression block when it stores it."""
    workload = outcome.workload
    return TestRecord.judged(ctx.target.spec.raw, workload.id, outcome.verdicts, outcome.states,
                             metrics=outcome.metrics, title=workload.title,
                             family=workload.family, strict=strict, test=test)


def failure_message(ctx: DriveContext, measured: Measured, regression: str | None,
                    unhealthy: Sequence[str]) -> str | None:
    """The test's failure message, or None when it passes: a violated limit (one line each,
    with the figure's drive state), then the notes, the regression and the health lines; else
    the drive's health; else the regression (``REGRESSION: ...``, its own category)."""
    outcome = measured.outcome
    tail = f"\n{regression}" if regression else ""
    if outcome.failed:
        states = measured.states
        return (
            f"{ctx.target.spec.raw} {outcome.workload.id}: {len(outcome.failed)} limit(s) "
            "violated\n"
            + "\n".join("  " + v.line() + (f" [{states[v.metric]}]" if v.metric in states
                                           else "")
                        for v in outcome.failed)
            + "".join("\n" + line for line in measured.details)
            + tail
            + "".join("\n" + line for line in unhealthy)
        )
    if unhealthy:
        return "\n".join(unhealthy) + tail
    return regression
