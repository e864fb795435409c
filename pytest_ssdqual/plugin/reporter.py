"""The plugin's session-wide outputs, written once on the controller: the terminal verdict
table, one line per drive with the bytes fio wrote to it, the regression-gate summary, the
results store's ``run.json`` and the Allure session files (``SsdQualReporter``); and the
hand-over of the scratch path and run id to xdist workers (``XdistHooks``).

The bytes written reach the controller like the verdict rows, in ``user_properties``: each
process adds to the report of every test phase what its fio runs wrote since its previous report
(``QualSession.written``), so the controller's sum covers every worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from pytest_ssdqual.plugin.common import (
    IN_PLAY_KEY,
    PROP_DRIVE,
    PROP_GATE,
    PROP_NOT_APPLICABLE,
    PROP_ROWS,
    PROP_WRITTEN,
    RUN_ID_INPUT,
    SCRATCH_INPUT,
    SESSION_KEY,
)
from pytest_ssdqual.plugin.options import options_built, plugin_gate, plugin_options

# Registered in every run: the domain is imported in the hooks, once the plugin is used.
if TYPE_CHECKING:
    from pytest_ssdqual.fio.written import WriteTally
    from pytest_ssdqual.qualify.session import SessionOptions
    from pytest_ssdqual.report.summary import SummaryRow


class XdistHooks:
    """Registered only when pytest-xdist is active: hands the scratch path and the run id of
    the results store to every worker.

    ``scratch``: the scratch file's path, or a callable that picks one on first need (a run
    not in play at start has built no options, yet its workers must all name the same file
    should a drive test ask for one; ``None`` when ``--drive`` is given)."""

    def __init__(self, scratch: str | Callable[[], str] | None, run_id: str = "") -> None:
        self.scratch = scratch
        self.run_id = run_id

    def pytest_configure_node(self, node: Any) -> None:
        if callable(self.scratch):
            self.scratch = self.scratch()  # once, for every worker
        if self.scratch:
            node.workerinput[SCRATCH_INPUT] = self.scratch
        node.workerinput[RUN_ID_INPUT] = self.run_id


def _fio_version(fio_bin: str) -> str:
    from pytest_ssdqual.errors import FioError
    from pytest_ssdqual.fio.runner import FioRunner

    try:
        return FioRunner(fio_bin).version()
    except FioError as exc:
        return f"unavailable ({exc})"


class SsdQualReporter:
    """Collects verdict rows and drive facts from every test report (xdist workers' too, since
    ``user_properties`` travel with the report) and writes the session-wide outputs once, on the
    controller: the terminal verdict table and the Allure ``environment.properties``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.rows: list[SummaryRow] = []
        self.drives: dict[str, dict[str, str]] = {}
        self.gate_rows: list[dict[str, Any]] = []
        self.run_dir: Path | None = None
        self.report_lines: list[str] = []  # session_report: per-drive summaries written
        self.skipped = 0  # tests skipped / deselected: such a run is never a firmware baseline
        self.deselected = 0
        self.failed_tests: set[str] = set()  # failed or broken in any phase (rejudge checks)
        self.written: dict[str, WriteTally] = {}  # controller: every process's fio writes
        self._reported: dict[str, WriteTally] = {}  # this process: written, as last reported
        self.skip_reasons: dict[str, list[str]] = {}  # reason -> node ids (refusals excluded)
        self.exitstatus: int | None = None  # the session's, as it ends (the last line)

    @property
    def options(self) -> SessionOptions:
        """The session's options (built on first use: ``options.plugin_options``)."""
        return plugin_options(self.config)

    def used(self) -> bool:
        """The plugin was in play in this run: its options were built here, or a worker
        reported a drive, a verdict or fio writes."""
        return options_built(self.config) or bool(self.rows or self.drives or self.written)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Any:
        """Add to each report what this process's fio runs wrote since its previous one."""
        report = yield
        session = self.config.stash.get(SESSION_KEY, None)
        since: dict[str, dict[str, int]] = {}
        for drive, tally in (session.written if session else {}).items():
            from pytest_ssdqual.fio.written import WriteTally

            new = tally.minus(self._reported.get(drive, WriteTally()))
            if new:
                since[drive] = new.to_json()
                self._reported[drive] = replace(tally)  # a copy
        if since:
            report.user_properties.append((PROP_WRITTEN, since))
        return report

    def pytest_deselected(self, items: Sequence[pytest.Item]) -> None:
        self.deselected += len(items)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and not hasattr(report, "wasxfail") and not any(
            key == PROP_NOT_APPLICABLE for key, _ in report.user_properties
        ):  # a test that cannot apply to this target (no SMART, no power states) is not missed
            self.skipped += 1
        if report.failed:
            self.failed_tests.add(report.nodeid)
        self._note_skip(report)
        for key, value in report.user_properties:  # every phase: set-ups and teardowns write
            if key == PROP_WRITTEN:
                from pytest_ssdqual.fio.written import WriteTally

                for drive, data in cast(dict, value).items():
                    self.written.setdefault(drive, WriteTally()).add(WriteTally.from_json(data))
        if report.when != "call" and not (report.when == "setup" and report.failed):
            return  # a broken set-up (drive unusable) brings its BROKEN row (plugin_outcomes)
        for key, value in report.user_properties:
            value = cast(Any, value)
            if key == PROP_ROWS:
                from pytest_ssdqual.report.summary import SummaryRow

                self.rows.extend(SummaryRow.from_dict(r) for r in value)
            elif key == PROP_DRIVE:
                self.drives[value["drive"]] = value
            elif key == PROP_GATE:
                self.gate_rows.extend(value)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.used():
            return
        from pytest_ssdqual.report.summary import fit_lines, format_drives, format_summary
        from pytest_ssdqual.results.gate_summary import format_gate_summary

        if not self.rows and not self.drives:
            for line in self.skip_lines() + self.written_lines():
                terminalreporter.write_line(line)
            self._write_report_lines(terminalreporter)
            return
        terminalreporter.write_sep("=", "ssdqual verdicts")
        measured: dict[str, set[str]] = {}
        for row in self.rows:
            measured.setdefault(row.drive, set()).add(row.workload)
        for line in format_drives(self.drives, measured):
            terminalreporter.write_line(line)
        for line in format_summary(self.rows) + self.skip_lines():
            terminalreporter.write_line(line)
        for line in self.written_lines():
            terminalreporter.write_line(line)
        gate = plugin_gate(self.config)
        if self.gate_rows or gate.options.baseline:
            terminalreporter.write_sep("=", "ssdqual regression gate")
        for line in format_gate_summary(self.gate_rows, self.run_dir):
            for part in fit_lines(line):
                terminalreporter.write_line(part)
        self._write_report_lines(terminalreporter)

    def _note_skip(self, report: pytest.TestReport) -> None:
        """Keep a skipped test's reason for the grouped skip lines (``skip_lines``); the write
        tests a refusal skipped are left out: their ``SKIPPED`` rows say it, once per drive."""
        if not (report.skipped and isinstance(report.longrepr, tuple)) or hasattr(
                report, "wasxfail"):
            return
        if any(key == PROP_ROWS and any(r.get("verdict") == "SKIPPED" for r in cast(Any, value))
               for key, value in report.user_properties):
            return
        reason = str(report.longrepr[2]).removeprefix("Skipped: ")
        self.skip_reasons.setdefault(reason, []).append(report.nodeid)

    def skip_lines(self) -> list[str]:
        """The skipped tests, one line per reason (``report.summary.format_skips``)."""
        from pytest_ssdqual.report.summary import format_skips

        return format_skips(self.skip_reasons)

    def written_lines(self) -> list[str]:
        """``ssdqual: wrote 1.42 GB (1,420,000,000 bytes) to DRIVE in 31 of 60 fio runs``, one
        line per drive fio ran on, in the order of ``--drive`` (the write budget named on the
        plugin's scratch file), wrapped at 120 columns."""
        from pytest_ssdqual.report.summary import fit_lines

        order = [s.raw for s in self.options.specs]
        drives = sorted(self.written, key=lambda d: order.index(d) if d in order else len(order))
        return [part for d in drives for part in fit_lines(
            self.written[d].line(d, budget_bytes=self.options.write_budget_for(d)))]

    def written_json(self) -> dict[str, dict[str, Any]]:
        """``run.json`` ``written``: per drive the tally and its write budget (``None``)."""
        return {d: {**t.to_json(), "write_budget_bytes": self.options.write_budget_for(d)}
                for d, t in self.written.items()}

    def _write_report_lines(self, terminalreporter: Any) -> None:
        from pytest_ssdqual.report.summary import fit_lines

        if self.report_lines:
            terminalreporter.write_sep("=", "ssdqual qualification summary")
        for line in self.report_lines:
            for part in fit_lines(line):
                terminalreporter.write_line(part)

    @pytest.hookimpl(trylast=True)  # after pytest-xdist stopped its workers
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        self.exitstatus = int(session.exitstatus)
        if hasattr(self.config, "workerinput") or not self.used():
            return  # inert: nothing of the project read, nothing stored
        from pytest_ssdqual.errors import SsdQualError
        from pytest_ssdqual.qualify.host_facts import host_facts
        from pytest_ssdqual.report.audience import DEFAULT_AUDIENCE
        from pytest_ssdqual.report.session_report import finish_session

        crashes = self.config.pluginmanager.get_plugin("ssdqual-worker-crashes")
        if crashes is not None:  # tests a SIGTERM-ed run's workers were stopped in
            crashes.finish_workers(int(session.exitstatus))
        try:  # run.json + index: completes the stored run (a failure fails the session)
            self.run_dir = plugin_gate(self.config).finish(
                exitstatus=int(session.exitstatus),
                session_options=self.options,
                argv=[str(a) for a in self.config.invocation_params.args],
                fio_version=lambda: _fio_version(self.options.fio_bin),
                host=host_facts(),
                skipped=self.skipped,
                deselected=self.deselected,
                failed=len(self.failed_tests),
                written=self.written_json(),
            )
        except SsdQualError as exc:
            self.gate_rows.append({"drive": "-", "workload": "-", "metric": "-", "status": "error",
                                   "line": f"results NOT stored: {exc}", "baseline_run": None})
            session.exitstatus = max(int(session.exitstatus), int(pytest.ExitCode.TESTS_FAILED))
            self.exitstatus = int(session.exitstatus)
        alluredir = getattr(self.config.option, "allure_report_dir", None)
        in_play: bool = self.config.stash.get(IN_PLAY_KEY, False)
        if not alluredir or not (self.drives or in_play):
            return
        self.report_lines = finish_session(  # environment, categories, executor, summaries
            Path(alluredir),
            drives=self.drives,
            profile=self.options.profile.name,
            fio_version=_fio_version(self.options.fio_bin),
            host=host_facts(),
            audience=self.config.getoption("report_audience") or DEFAULT_AUDIENCE,
        )



    def pytest_unconfigure(self, config: pytest.Config) -> None:
        """The run's verdict as its very last line, after pytest's own count line (which says
        ``4 passed, 19 skipped`` on a run that exits 1 INCOMPLETE): ``final_line``."""
        if hasattr(config, "workerinput") or self.exitstatus is None or not self.used():
            return
        terminal = config.pluginmanager.get_plugin("terminalreporter")
        if terminal is None:
            return
        from pytest_ssdqual.report.summary import final_line

        outcomes = config.pluginmanager.get_plugin("ssdqual-outcomes")
        reasons = outcomes.incomplete_reasons() if outcomes is not None else []
        line = final_line(self.exitstatus, failed=len(self.failed_tests), incomplete=reasons)
        terminal.write_line(line, bold=True, red=self.exitstatus != 0, green=self.exitstatus == 0)

