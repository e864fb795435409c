"""The plugin's side of the per-test flow (``qualify.flow``): ``PytestHost`` implements the flow's
``Host`` observer with Allure attachments and steps, ``user_properties`` (verdict rows, drive
facts and gate rows that travel from xdist workers to the controller's reporter), the drive-health
tracker and terminal lines outside output capture; ``PytestHost.run`` runs the flow and turns
its end into pytest's outcome (``Skipped`` -> skip, a failure -> ``pytest.fail``).
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from pytest_ssdqual.catalog.workloads import Workload
from pytest_ssdqual.errors import FioError
from pytest_ssdqual.fio.job import JobPlan
from pytest_ssdqual.fio.runner import FioRun
from pytest_ssdqual.methodology.progress import ProgressEvent
from pytest_ssdqual.plugin import workers as plugin_workers
from pytest_ssdqual.plugin.common import GATE_KEY, PROP_DRIVE, PROP_GATE, PROP_ROWS, allure_labels
from pytest_ssdqual.plugin.events import event_stream
from pytest_ssdqual.plugin.health import HealthTracker, health_failures, mark_not_applicable
from pytest_ssdqual.plugin.health import tracker as health_tracker
from pytest_ssdqual.qualify.flow import Measured, Skipped, run_test
from pytest_ssdqual.qualify.session import DriveContext, QualSession, WorkloadOutcome
from pytest_ssdqual.report import allure_attach
from pytest_ssdqual.report.allure_labels import label_test
from pytest_ssdqual.report.events import figure_events
from pytest_ssdqual.report.summary import SummaryRow, fit_lines, fit_text, rows_from_records
from pytest_ssdqual.results.gate import ResultsGate
from pytest_ssdqual.results.journal import clean_node_id
from pytest_ssdqual.results.record import TestRecord


class PytestHost:
    """One drive test's host: reports what the flow does through Allure, ``user_properties``
    and the terminal. Also the progress observer of a methodology test (``phase``,
    ``progress``)."""

    def __init__(self, request: pytest.FixtureRequest, session: QualSession,
                 ctx: DriveContext) -> None:
        self.request = request
        self.node: Any = request.node
        self.session = session
        self.ctx = ctx
        self.reporter: Any = request.config.pluginmanager.get_plugin("terminalreporter")
        self.capture: Any = request.config.pluginmanager.get_plugin("capturemanager")
        self.lines: list[str] = []  # progress lines, kept for the report
        self._runs: list[tuple[JobPlan, FioRun | None]] = []

    @property
    def gate(self) -> ResultsGate:
        return self.request.config.stash[GATE_KEY]

    @property
    def destructive(self) -> bool:
        """The test is marked ``destructive``."""
        return self.node.get_closest_marker("destructive") is not None

    def run(self, workload: Workload, measure: Callable[[], Measured], *, writes: bool) -> Any:
        """Run the flow (``qualify.flow.run_test``) and end the test as it says: skipped with
        the reason, failed with the message (no traceback), skipped with the ``UNDECIDED:``
        text when the gate could not decide (``plugin.outcomes`` makes the run exit 1), else
        return the judged figures."""
        try:
            concluded = run_test(self, self.session, self.gate, self.ctx, workload, measure,
                                 writes=writes, test=clean_node_id(self.node.nodeid))
        except Skipped as exc:
            if not exc.applicable:
                mark_not_applicable(self.node, str(exc))
            pytest.skip(str(exc))
        if concluded.failure:
            pytest.fail(fit_text(concluded.failure), pytrace=False)  # 120 columns
        if concluded.undecided:  # neither pass nor fail: the run is incomplete (exit 1)
            pytest.skip(concluded.undecided)
        return concluded.outcome

    # -- the flow's Host -------------------------------------------------------------------

    def started(self, ctx: DriveContext, workload: Workload) -> None:
        self.node.user_properties.append((PROP_DRIVE, ctx.describe()))
        label_test(ctx, workload, **allure_labels(self.node, self.session))
        plugin_workers.note_labels(self.request)  # a worker that dies now: result on this drive
        self._emit("test_start", workload=workload.id, title=workload.title)

    def refused(self, drive: str, workload_id: str, reasons: Sequence[str]) -> None:
        row = SummaryRow.refused(drive, workload_id, reasons)
        self.node.user_properties.append((PROP_ROWS, [row.as_dict()]))

    def recorded(self, record: TestRecord) -> None:
        rows = rows_from_records([record])
        self.node.user_properties.append((PROP_ROWS, [r.as_dict() for r in rows]))

    def health_before(self) -> HealthTracker:
        return health_tracker(self.request.config, self.session, self.ctx)

    def phase(self, name: str) -> contextlib.AbstractContextManager[None]:
        return allure_attach.phase(name)

    def progress(self, event: ProgressEvent) -> None:
        tally = self.session.written.get(self.ctx.target.spec.raw)  # bytes written so far
        event = dataclasses.replace(event, written_bytes=tally.bytes if tally else 0)
        line = f"[ssdqual {self.ctx.label or self.ctx.target.spec.raw}] {event.line()}"
        self.lines.append(line)
        self.note(line)
        self._emit("progress", phase=event.phase, round=event.round, rounds=event.rounds,
                   eta_s=event.eta_s, elapsed_s=event.elapsed_s, figure=event.figure,
                   written_bytes=event.written_bytes)

    def note(self, line: str) -> None:
        """Print ``line`` outside output capture, wrapped at 120 columns (``fit_lines``);
        ``lines`` keeps a progress line whole."""
        if self.reporter is None:
            return
        with self._uncaptured():
            self.reporter.ensure_newline()
            writer: Any = getattr(self.reporter, "_tw", None)  # -q: after a row of dots
            if writer is not None and writer.width_of_current_line:
                self.reporter.write("\n")
            for part in fit_lines(line):
                self.reporter.write_line(part)

    def attach_text(self, name: str, text: str) -> None:
        allure_attach.attach_text(text, name)

    def fio_run(self, plan: JobPlan, run: FioRun | None) -> None:
        self._runs.append((plan, run))

    def fio_failed(self, exc: BaseException) -> None:
        self._attach_runs()
        if isinstance(exc, FioError):
            allure_attach.attach_failure_output(exc)

    def judged(self, measured: Measured, record: TestRecord) -> None:
        outcome: Any = measured.outcome
        stream = event_stream(self.request.config)
        if stream is not None:
            figure_events(stream, outcome.metrics, outcome.verdicts, test=self.node.nodeid,
                          drive=self.ctx.target.spec.raw, workload=outcome.workload.id)
        if measured.report == "methodology":
            allure_attach.attach_methodology(outcome, record)
        else:
            allure_attach.attach_verdicts(record)
        if measured.report == "workload":  # with --baseline, its figures drawn too
            allure_attach.attach_workload_charts(
                outcome, record, title=f"{outcome.workload.title} — {self.ctx.target.spec.raw}",
                baseline=self.gate.baselines.figures(self.ctx, outcome.workload.id),
                runs=[r for r in measured.repetitions if isinstance(r, WorkloadOutcome)])
        self._attach_runs()

    def health_after(self, before: object, workload_id: str, *, destructive: bool
                     ) -> list[str]:
        assert isinstance(before, HealthTracker)
        return health_failures(self.node, before, workload_id=workload_id,
                               destructive=destructive)

    def gated(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.node.user_properties.append((PROP_GATE, list(rows)))
        allure_attach.attach_regression([dict(r) for r in rows])

    # ---------------------------------------------------------------------------------------

    def _emit(self, event: str, **fields: Any) -> None:
        stream = event_stream(self.request.config)
        if stream is not None:
            stream.emit(event, test=self.node.nodeid, drive=self.ctx.target.spec.raw, **fields)

    def _attach_runs(self) -> None:
        for plan, run in self._runs:
            allure_attach.attach_run(plan, run)
        self._runs.clear()

    @contextlib.contextmanager
    def _uncaptured(self) -> Iterator[None]:
        if self.capture is None:
            yield
            return
        with self.capture.global_and_fixture_disabled():
            yield
