"""pytest glue for how a run ends: broken tests in short, and skipped writes in the exit code.

* **Broken tests in short.** A test that raised one of the project's own errors -- fio failed
  (``FioError``), the drive is gone or unusable (``DeviceError``, ``DriveUnusable``), a misused
  fixture (``SsdQualError``) -- is reported with a one-line message (``FioJobError: /dev/sdb
  seq_read_128k_qd32: ...``) instead of a traceback through the plugin's internals: the
  message already names the drive, the workload, the cause and the fix, and fio's raw output is
  attached to the Allure result. The test stays *failed* in pytest and *broken* in Allure (the
  exception is unchanged), and it gets a ``BROKEN`` row in the verdict table. Any other exception
  (a bug) keeps its traceback.
* **Skipped writes are not a pass.** A write test skipped because the drive refuses writes (not
  confirmed with ``--confirm-destroy``, mounted, the system disk...) leaves the drive
  unqualified; unless ``--allow-skipped-writes`` is given, such a run exits 1 (pytest's "tests
  failed") instead of 0, with an ``INCOMPLETE:`` line saying why. A run that failed anyway keeps
  its own status.
* **An undecided gate is not a pass.** A test whose gated metrics the regression gate could
  not decide (``UNDECIDED``: too few runs for the measured noise and the limit, even at
  ``--repeat-max``) and nothing else failed is skipped with the ``UNDECIDED:`` reason (not a
  product failure); the run exits 1 with an ``INCOMPLETE:`` line naming the runs per side
  that would decide it. ``--allow-skipped-writes`` does not change that.
* **Unread health is not a pass.** A block device whose SMART / NVMe health could not be read
  (a ``NOT READ`` row, ``plugin.health.note_unread``) was never checked: the run exits 1 with
  an ``INCOMPLETE:`` line naming the drive and the reason, whatever ``--allow-skipped-writes``
  says (it accepts skipped writes only).
* **Skips where the test is.** A skip raised by the plugin (writes refused, no SMART) is
  reported at the test's own line, as pytest reports a skip mark, not inside the plugin.

Source: pytest's hook reference (``pytest_runtest_makereport`` as a hook wrapper, ``longrepr``
as a string, ``pytest_sessionfinish`` setting ``session.exitstatus``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from pytest_ssdqual.errors import FioError, SsdQualError
from pytest_ssdqual.plugin.common import PROP_GATE, PROP_ROWS

# Registered in every run: report/ and results/ are imported in the hooks, once the plugin is
# used (a test broke on one of its errors, or carries its verdict rows).

#: The option that lets a run whose write tests were skipped exit 0.
ALLOW_SKIPPED_WRITES = "--allow-skipped-writes"

#: ``SummaryRow.verdict`` of a test that broke (fio or device error) before it was judged.
BROKEN = "BROKEN"


def add_options(group: Any) -> None:
    """Add ``--allow-skipped-writes`` to the plugin's option group."""
    group.addoption(
        ALLOW_SKIPPED_WRITES, action="store_true", default=False,
        help="exit 0 even when write tests were skipped because the drive refuses writes "
        "(not confirmed, mounted, system disk). Default: such a run exits 1 (INCOMPLETE).",
    )


def short_message(exc: BaseException) -> str | None:
    """The one-line report of a broken test, ``"<ErrorClass>: <message>"``, or ``None`` when
    ``exc`` is not one of the project's own errors (then pytest's traceback is kept)."""
    if not isinstance(exc, SsdQualError):
        return None
    text = str(exc).strip() or "(no message)"
    notes = getattr(exc, "__notes__", None) or []
    return "\n".join([f"{type(exc).__name__}: {text}", *map(str, notes)])


def _drive_and_workload(item: pytest.Item, exc: BaseException) -> tuple[str, str]:
    """The drive (``--drive`` value) and workload of a broken test: the workload the fio error
    names (``FioError.drive`` is ``"<drive> <workload id>"``), else the test's ``workload_id``
    parameter, else the test function's name."""
    callspec = getattr(item, "callspec", None)
    params = callspec.params if callspec is not None else {}
    spec = params.get("ssd_drive")
    drive = str(getattr(spec, "raw", spec) or "-")
    named = getattr(exc, "drive", None) if isinstance(exc, FioError) else None
    if named and named.startswith(drive + " "):
        return drive, named[len(drive) + 1:]
    workload = params.get("workload_id") or getattr(item, "originalname", item.name)
    return drive, str(workload)


_PACKAGE = Path(__file__).resolve().parent.parent


def _skip_at_the_test(item: pytest.Item, report: pytest.TestReport) -> None:
    """A skip raised inside this package (``pytest.skip`` in a fixture or the flow's host:
    writes refused, no SMART) is reported at the test (``-rs``: ``suites/test_health.py:12``),
    not at the plugin line that raised it, as pytest does for a skip mark."""
    if not (report.skipped and isinstance(report.longrepr, tuple)):
        return
    path, _line, reason = report.longrepr
    if not Path(path).resolve().is_relative_to(_PACKAGE):
        return
    test_path, test_line, _name = item.reportinfo()
    report.longrepr = (str(test_path), (test_line or 0) + 1, reason)


class OutcomeHooks:
    """Registered once per pytest process by the plugin (see the module docstring).

    Args:
        allow_skipped_writes: ``--allow-skipped-writes``.
    """

    def __init__(self, *, allow_skipped_writes: bool) -> None:
        self.allow_skipped_writes = allow_skipped_writes
        self.refused: dict[str, str] = {}  # nodeid -> drive, write tests skipped by a refusal
        self.undecided: dict[str, int] = {}  # nodeid -> runs per side needed (0: unknown)
        self.unread: dict[str, str] = {}  # drive -> why its health could not be read

    @pytest.hookimpl(hookwrapper=True, trylast=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Iterator[None]:
        """Innermost wrapper: shorten the report of a broken test before other plugins
        (Allure) read it, and give it a ``BROKEN`` verdict-table row."""
        outcome = yield
        report = cast(pytest.TestReport, cast(Any, outcome).get_result())
        _skip_at_the_test(item, report)
        if call.excinfo is None or not report.failed or call.when == "teardown":
            return
        message = short_message(call.excinfo.value)
        if message is None:
            return
        report.longrepr = message
        from pytest_ssdqual.report.summary import SummaryRow

        drive, workload = _drive_and_workload(item, call.excinfo.value)
        row = SummaryRow(drive, workload, "-", None, "-", BROKEN, None,
                         message.splitlines()[0])
        report.user_properties.append((PROP_ROWS, [row.as_dict()]))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        """Count write tests skipped because the drive refused writes (their ``SKIPPED`` rows;
        on the xdist controller too, where the workers' reports arrive), tests skipped as
        UNDECIDED by the gate (a failed test that also has undecided metrics is a failure, not
        an undecided test), and drives whose health could not be read (their ``NOT READ`` rows,
        on a test of any outcome)."""
        for key, value in report.user_properties:
            if key == PROP_GATE and report.skipped:
                from pytest_ssdqual.results.regression_stats import UNDECIDED

                needed = [int(row.get("runs_needed") or 0) for row in cast(Any, value)
                          if row.get("status") == UNDECIDED]
                if needed:
                    self.undecided[report.nodeid] = max(needed)
            if key != PROP_ROWS:
                continue
            from pytest_ssdqual.report.summary import HEALTH_NOT_READ

            for row in cast(Any, value):
                if row.get("verdict") == HEALTH_NOT_READ:
                    self.unread[str(row.get("drive", "-"))] = str(row.get("source", ""))
                elif (row.get("verdict") == "SKIPPED" and report.skipped
                      and not hasattr(report, "wasxfail")):
                    self.refused[report.nodeid] = str(row.get("drive", "-"))

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Exit 1 instead of 0 when write tests were skipped (unless allowed), the gate left a
        test undecided, or a drive's health could not be read (before the results store records
        the exit status)."""
        if hasattr(session.config, "workerinput"):
            return
        incomplete = (self.refused and not self.allow_skipped_writes) or self.undecided \
            or self.unread
        if incomplete and int(session.exitstatus) == int(pytest.ExitCode.OK):
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def incomplete_line(self) -> str | None:
        """The ``INCOMPLETE:`` line for the terminal, or ``None`` when no write was skipped."""
        if not self.refused:
            return None
        drives = ", ".join(sorted(set(self.refused.values())))
        if self.allow_skipped_writes:
            return (f"INCOMPLETE: {len(self.refused)} write test(s) skipped on {drives} "
                    f"(writes refused); exit status not changed ({ALLOW_SKIPPED_WRITES})")
        return (f"INCOMPLETE: {len(self.refused)} write test(s) skipped on {drives} (writes "
                "refused, reasons in the verdict table): the drive is not qualified, so the run "
                "exits 1; add "
                f"{ALLOW_SKIPPED_WRITES} to accept a read-only run")

    def undecided_line(self) -> str | None:
        """The ``INCOMPLETE:`` line for tests the gate left undecided, or ``None``."""
        if not self.undecided:
            return None
        most = max(self.undecided.values())
        fix = (f"store the baseline and gate this build with --repeat {most} (runs per side "
               "the noise needs)" if most else "lower the noise of the bench or widen the limit")
        return (f"INCOMPLETE: {len(self.undecided)} test(s) UNDECIDED by the regression gate "
                "(too few runs for the measured noise and the limit, even at --repeat-max; "
                f"reasons in the gate summary): neither passed nor failed, so the run exits 1; "
                f"{fix}")

    def unread_lines(self) -> list[str]:
        """One ``INCOMPLETE:`` line per drive whose health could not be read."""
        return [f"INCOMPLETE: {drive}: its SMART / health could not be read, so the drive is not "
                f"qualified and the run exits 1 ({reason})"
                for drive, reason in sorted(self.unread.items())]

    def incomplete_reasons(self) -> list[str]:
        """Short reasons the run is INCOMPLETE, for the run's last line (``reporter``):
        ``16 write tests skipped on /dev/sdb (writes refused)``, ``1 test UNDECIDED by the
        regression gate``, ``health of /dev/sdb not read``; ``[]`` when complete (writes
        skipped under ``--allow-skipped-writes`` do not make it incomplete)."""
        out = []
        if self.refused and not self.allow_skipped_writes:
            n = len(self.refused)
            drives = ", ".join(sorted(set(self.refused.values())))
            out.append(f"{n} write test{'s' if n > 1 else ''} skipped on {drives} "
                       "(writes refused)")
        if self.undecided:
            n = len(self.undecided)
            out.append(f"{n} test{'s' if n > 1 else ''} UNDECIDED by the regression gate")
        out += [f"health of {drive} not read" for drive in sorted(self.unread)]
        return out

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if hasattr(terminalreporter.config, "workerinput"):
            return
        lines = [line for line in [self.incomplete_line(), self.undecided_line(),
                                   *self.unread_lines()] if line]
        if not lines:
            return
        from pytest_ssdqual.report.summary import fit_lines

        for line in lines:
            for part in fit_lines(line):
                terminalreporter.write_line(part, yellow=True, bold=True)
