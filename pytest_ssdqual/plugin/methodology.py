"""pytest glue for the dirty-state methodology tests (thin, like ``plugin.py``, which exposes
the fixture defined here).

``run_methodology(workload_id)`` runs one methodology module (``methodology/``) on the drive
under test, judges its metrics against the drive's limits, attaches the record to Allure,
records the verdict rows (with the drive state of each figure) for the terminal summary, and
fails the test when a limit is violated. While it runs, ``TerminalProgress`` prints each step
(phase, round, figure, ETA) through the terminal reporter and opens an Allure step per phase.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.catalog.workloads import get_workload
from pytest_ssdqual.errors import FioError, SsdQualError
from pytest_ssdqual.methodology.base import MethodologyOutcome, judge_result
from pytest_ssdqual.methodology.registry import run_methodology as _run
from pytest_ssdqual.plugin import workers as plugin_workers
from pytest_ssdqual.plugin.common import PROP_DRIVE, PROP_ROWS, allure_labels
from pytest_ssdqual.plugin.health import tracker as health_tracker
from pytest_ssdqual.plugin.verdict import gate_and_fail
from pytest_ssdqual.qualify.progress import ProgressEvent
from pytest_ssdqual.qualify.session import DriveContext, QualSession
from pytest_ssdqual.report import allure_attach
from pytest_ssdqual.report.allure_labels import label_test
from pytest_ssdqual.report.summary import SummaryRow, rows_from_verdicts


class TerminalProgress:
    """Observer that prints progress lines in the terminal (outside output capture) and opens
    an Allure step per phase; every line is also kept in ``lines`` for the report."""

    def __init__(self, config: pytest.Config, drive: str) -> None:
        self.reporter: Any = config.pluginmanager.get_plugin("terminalreporter")
        self.capture: Any = config.pluginmanager.get_plugin("capturemanager")
        self.drive = drive
        self.lines: list[str] = []

    def phase(self, name: str) -> contextlib.AbstractContextManager[None]:
        return allure_attach.phase(name)

    def progress(self, event: ProgressEvent) -> None:
        line = f"[ssdqual {self.drive}] {event.line()}"
        self.lines.append(line)
        self.write(line)

    def write(self, line: str) -> None:
        if self.reporter is None:
            return
        with self._uncaptured():
            self.reporter.ensure_newline()
            writer: Any = getattr(self.reporter, "_tw", None)  # -q: after a row of dots
            if writer is not None and writer.width_of_current_line:
                self.reporter.write("\n")
            self.reporter.write_line(line)

    @contextlib.contextmanager
    def _uncaptured(self) -> Iterator[None]:
        if self.capture is None:
            yield
            return
        with self.capture.global_and_fixture_disabled():
            yield


@pytest.fixture
def run_methodology(
    request: pytest.FixtureRequest,
    ssd_session: QualSession,
    ssd_drive: DriveContext,
    tmp_path: Path,
) -> Callable[[str], MethodologyOutcome]:
    """``run_methodology(workload_id)``: run a methodology test (``sustained_write``,
    ``steady_state_rand_write_4k``, ``recovery_after_idle``) on the drive, attach its record,
    judge it.

    The test must be marked ``destructive``; it is skipped with the exact reason when the drive
    refuses writes, fails (one line per violated limit, plus the test's notes) when a limit is
    violated, and is broken when fio or the device fails.
    """
    node = request.node

    def run(workload_id: str) -> MethodologyOutcome:
        workload = get_workload(workload_id)
        if not workload.is_methodology:
            raise SsdQualError(f"{workload_id} is a plain fio workload: run it with qualify()")
        if node.get_closest_marker("destructive") is None:
            raise SsdQualError(
                f"{node.nodeid} runs the methodology test {workload_id}, which writes, but is "
                "not marked @pytest.mark.destructive: mark it so it can be deselected"
            )
        drive = ssd_drive.target.spec.raw
        node.user_properties.append((PROP_DRIVE, ssd_drive.describe()))
        label_test(ssd_drive, workload, **allure_labels(node, ssd_session))
        plugin_workers.note_labels(request)  # a worker that dies now: result on this drive
        refusal = ssd_session.refusal(ssd_drive)
        if refusal is not None:
            row = SummaryRow.refused(drive, workload_id, refusal.reasons)
            node.user_properties.append((PROP_ROWS, [row.as_dict()]))
            pytest.skip(str(refusal))
        health = health_tracker(request.config, ssd_session, ssd_drive)  # before it writes
        progress = TerminalProgress(request.config, drive)
        try:
            result = _run(workload_id, ssd_session, ssd_drive, tmp_path / workload_id,
                          observer=progress)
        except FioError as exc:
            allure_attach.attach_failure_output(exc)
            raise
        outcome = judge_result(result, ssd_drive.limits, strict=ssd_session.options.strict)
        for note in result.notes:
            progress.write(f"[ssdqual {drive}] {workload_id}: {note}")
        allure_attach.attach_methodology(outcome)
        rows = rows_from_verdicts(drive, workload_id, outcome.verdicts, result.states)
        node.user_properties.append((PROP_ROWS, [r.as_dict() for r in rows]))
        # Stored and compared with --baseline like any workload (health first: a test failed
        # on drive health is stored as failed); the files are the methodology's job files, fio
        # outputs and CSV logs.
        gate_and_fail(request, ssd_drive, outcome, health, destructive=True,
                      strict=ssd_session.options.strict,
                      files=[_stored_files(tmp_path / workload_id)], states=result.states,
                      details=["  " + note for note in result.notes])
        return outcome

    return run


def _stored_files(folder: Path) -> dict[str, Path | str]:
    """Every file a methodology wrote under ``folder`` (job files, fio outputs, per-second and
    per-round CSV), flattened to store names like ``01-precondition__job.fio``."""
    if not folder.is_dir():
        return {}
    return {
        "__".join(p.relative_to(folder).parts): p
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }
