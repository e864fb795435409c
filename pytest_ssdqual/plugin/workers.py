"""pytest glue for tests that do not end normally: a crashed pytest-xdist worker, a run stopped
by SIGINT/SIGTERM, and ``--clean-alluredir`` under pytest-xdist (thin, like ``plugin.py``).

* **--clean-alluredir**: allure-pytest cleans the folder in every process's ``pytest_configure``;
  xdist starts a replacement worker after a crash, whose clean-up would delete every result
  written so far. The controller cleans once, before any worker starts; workers (replacements
  included) never clean (``pytest_cmdline_main`` below, which runs before ``pytest_configure``
  in a worker).
* **A crashed worker** (OOM kill, hung NVMe reset, ``os._exit``): every worker keeps a journal
  (``worker_journal``) of the test it runs -- drive, Allure result so far, its fio job folder --
  and of the file targets it created. When xdist reports the crash, the controller writes one
  *broken* result for the test on the right drive (same uuid, parent suite, parameters and
  history id as its own result would have had, with the drive's facts and the fio job that was
  running), removes the scratch file the dead worker created, and keeps the test from running
  again: it is taken out of the work xdist re-queues for the replacement worker, and any worker
  handed it anyway skips it (``NOT RERUN: ...``).
* **SIGINT/SIGTERM** (``interrupt``: SIGTERM raises like Ctrl-C): the test running in a process
  that gets the signal is marked *broken* (``INTERRUPTED: ...``) before allure-pytest writes it
  -- allure-pytest would write it with its set-up status, ``passed``. A worker stopped without
  unwinding (the controller got SIGTERM and xdist tore the workers down) leaves its journal:
  the controller writes that test's ``INTERRUPTED`` result at session end.
"""

from __future__ import annotations

import shutil
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ssdqual.plugin.interrupt import Terminated

# ``TestHooks`` is registered in every run: report/ and results/ are imported where a test is
# interrupted, a drive test starts, or a journal (pytest-xdist) is kept.
if TYPE_CHECKING:
    from pytest_ssdqual.results.journal import WorkerJournal

#: xdist ``workerinput`` key: the controller's journal folder.
JOURNAL_INPUT = "ssdqual_journal"
JOURNAL_KEY = pytest.StashKey["WorkerJournal | None"]()



@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """In an xdist worker, before allure-pytest's ``pytest_configure``: never clean the Allure
    folder (the controller did, once, before starting the workers)."""
    if hasattr(config, "workerinput") and getattr(config.option, "clean_alluredir", False):
        config.option.clean_alluredir = False


def register(config: pytest.Config) -> None:
    """Register the hooks of this process (from ``plugin.pytest_configure``): the worker side
    in every process that runs tests, the controller side when pytest-xdist is active."""
    workerinput = getattr(config, "workerinput", None)
    journal = None
    if workerinput and workerinput.get(JOURNAL_INPUT):
        from pytest_ssdqual.results.journal import WorkerJournal

        journal = WorkerJournal(Path(workerinput[JOURNAL_INPUT]), str(workerinput["workerid"]))
    config.stash[JOURNAL_KEY] = journal
    recording = bool(getattr(config.option, "allure_report_dir", None))
    config.pluginmanager.register(TestHooks(journal, recording=recording),
                                  "ssdqual-test-outcomes")
    if config.pluginmanager.hasplugin("xdist") and workerinput is None:
        config.pluginmanager.register(ControllerHooks(config), "ssdqual-worker-crashes")


def start_drive_test(request: pytest.FixtureRequest, ctx: Any) -> None:
    """At a drive test's set-up: the drive's Allure parameters, and (xdist worker) the journal
    entry of the test -- with its Allure snapshot as it will stand after set-up, so a worker
    that dies in set-up leaves the test's own history id -- and of the file target this worker
    created."""
    from pytest_ssdqual.report import allure_results
    from pytest_ssdqual.report.allure_labels import drive_parameters

    drive_parameters(ctx)
    journal = request.config.stash.get(JOURNAL_KEY, None)
    if journal is None:
        return
    if ctx.target.spec.kind == "file" and ctx.target.created_file:
        journal.created_file(ctx.target.spec.path)
    journal.start(request.node.nodeid, drive=ctx.target.spec.raw, facts=ctx.describe(),
                  tmp_path=str(request.getfixturevalue("tmp_path")),
                  snapshot=allure_results.snapshot_current_test(request.node.nodeid,
                                                                _params(request.node)))


def note_labels(request: pytest.FixtureRequest) -> None:
    """After a test set its Allure title and labels: keep them in the journal."""
    journal = request.config.stash.get(JOURNAL_KEY, None)
    if journal is not None:
        from pytest_ssdqual.report import allure_results

        journal.update(allure_results.snapshot_current_test(request.node.nodeid,
                                                            _params(request.node)))


def _params(item: Any) -> dict[str, Any]:
    callspec = getattr(item, "callspec", None)
    return dict(callspec.params) if callspec is not None else {}


def interrupted_message(exc: BaseException, *, worker: bool = False) -> str:
    """``INTERRUPTED: ...`` for a test stopped by ``exc`` (``Terminated``: SIGTERM, else
    Ctrl-C / SIGINT; in an xdist worker also the controller stopping its workers)."""
    from pytest_ssdqual.results.journal import INTERRUPTED_PREFIX

    if isinstance(exc, Terminated) and str(exc):
        why = str(exc)
    elif worker:
        why = "SIGINT (Ctrl-C, or the pytest-xdist controller stopping its workers)"
    else:
        why = "SIGINT (Ctrl-C)"
    return (f"{INTERRUPTED_PREFIX} {why} while the test ran: it did not finish, its figures "
            "were not judged")


class TestHooks:
    """Every process that runs tests: interrupted tests are broken, crashed ones not rerun,
    the journal follows the running test."""

    def __init__(self, journal: WorkerJournal | None, *, recording: bool = False) -> None:
        self.journal = journal
        self.recording = recording
        if recording:  # --alluredir: follow each test's Allure calls (report.allure_recorder)
            from pytest_ssdqual.report import allure_results

            allure_results.start_recording(self._written if journal is not None else None)

    def _written(self, result_uuid: str) -> None:
        """allure-pytest is about to write the running test's result under ``result_uuid``:
        the journal keeps it, so the controller sees that result and writes none."""
        test = self.journal.entry.test if self.journal is not None else None
        if test is not None and test.get("snapshot"):
            self.journal.update({**test["snapshot"], "uuid": result_uuid})  # type: ignore[union-attr]

    def pytest_unconfigure(self) -> None:
        if self.recording:
            from pytest_ssdqual.report import allure_results

            allure_results.stop_recording()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        if self.recording:
            from pytest_ssdqual.report import allure_results

            allure_results.begin_test(item.name)
        if self.journal is None:
            return
        from pytest_ssdqual.results.journal import NOT_RERUN_PREFIX, clean_node_id, crashed_tests

        crashed = crashed_tests(self.journal.path.parent).get(clean_node_id(item.nodeid))
        if crashed is not None:
            pytest.skip(f"{NOT_RERUN_PREFIX} a worker crashed in this test earlier in the "
                        f"session ({crashed})")

    def pytest_runtest_call(self, item: pytest.Item) -> None:
        if self.journal is not None and self.journal.entry.test is not None:
            from pytest_ssdqual.report import allure_results

            self.journal.update(allure_results.snapshot_current_test(item.nodeid, _params(item)))

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: Any
                                ) -> Generator[None, Any, Any]:
        try:
            return (yield)
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (``interrupt.Terminated``)
            from pytest_ssdqual.report import allure_results

            allure_results.mark_current_broken(
                item.nodeid, interrupted_message(exc, worker=self.journal is not None))
            raise

    @pytest.hookimpl(hookwrapper=True, tryfirst=True)
    def pytest_runtest_logfinish(self, nodeid: str, location: Any) -> Generator[None, Any, None]:
        yield  # allure-pytest writes the test's result inside
        if self.journal is not None:
            self.journal.finish()
        if self.recording:
            from pytest_ssdqual.report import allure_results

            allure_results.end_test()


class ControllerHooks:
    """The xdist controller: hands workers the journal folder, accounts for crashed workers
    and, after an interrupted run, for the tests the workers were stopped in."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.folder: Path | None = None
        self.lines: list[str] = []  # for the terminal summary

    def _alluredir(self) -> Path | None:
        alluredir = getattr(self.config.option, "allure_report_dir", None)
        return Path(alluredir) if alluredir else None

    def pytest_configure_node(self, node: Any) -> None:
        if self.folder is None:
            from pytest_ssdqual.results.journal import make_folder

            self.folder = make_folder()
        node.workerinput[JOURNAL_INPUT] = str(self.folder)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.lines:
            return
        from pytest_ssdqual.report.summary import fit_lines

        for line in self.lines:
            for part in fit_lines(f"ssdqual: {line}"):
                terminalreporter.write_line(part)

    def pytest_unconfigure(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: Any
                               ) -> None:
        """pytest-xdist: a worker crashed inside ``crashitem``. xdist reports the test failed;
        here it gets its broken Allure result, is kept from running again, and the worker's
        scratch files are removed."""
        from pytest_ssdqual.results.journal import (
            clean_node_id,
            mark_crashed,
            read_journal,
            remove_created_files,
        )

        worker = _worker_id(report)
        message = (f"{report.longrepr}: the worker process died inside the test (its fio, if "
                   "any, was stopped by the kernel's parent-death signal); not run again")
        entry = read_journal(self.folder, worker) if self.folder else None
        test = entry.test if entry is not None else None
        if test is not None and test.get("nodeid") != clean_node_id(crashitem):
            test = None
        if self.folder is not None:
            mark_crashed(self.folder, crashitem, f"worker {worker!r} died")
        if not _keep_from_rerun(sched, crashitem):
            self.lines.append(f"{crashitem}: could not take it out of xdist's queue; a worker "
                              "handed it skips it (NOT RERUN)")
        if entry is not None:
            for path in remove_created_files(entry):
                self.lines.append(f"removed {path}: the scratch file worker {worker} created")
            (self.folder / f"{worker}.json").unlink(missing_ok=True)  # type: ignore[operator]
        alluredir = self._alluredir()
        if alluredir is not None:
            self._write(alluredir, crashitem, message, test)

    def _write(self, alluredir: Path, nodeid: str, message: str,
               test: dict[str, Any] | None) -> None:
        from pytest_ssdqual.report import allure_results
        from pytest_ssdqual.results.journal import latest_fio_job

        test = test or {}
        allure_results.write_crashed_result(
            alluredir, nodeid, message,
            snapshot=test.get("snapshot"),
            drive_facts=test.get("facts"),
            fio_job=(lambda j: (str(j[0]), j[1]) if j else None)(
                latest_fio_job(str(test.get("tmp_path", "")))),
        )

    def finish_workers(self, exitstatus: int) -> int:
        """At session end, once pytest-xdist stopped the workers: remove the file targets a
        worker created and could not remove (stopped before its teardown); after an
        interrupted run (exit status 2), write a broken ``INTERRUPTED`` result for every test
        a worker was stopped in without writing its own. Returns how many were written."""
        if self.folder is None:
            return 0
        from pytest_ssdqual.report import allure_results
        from pytest_ssdqual.results.journal import (
            INTERRUPTED_PREFIX,
            journals,
            remove_created_files,
        )

        for entry in journals(self.folder):
            for path in remove_created_files(entry):
                self.lines.append(f"removed {path}: the scratch file worker {entry.worker} "
                                  "created and was stopped before removing")
        alluredir = self._alluredir()
        if exitstatus != int(pytest.ExitCode.INTERRUPTED) or not alluredir:
            return 0
        written = allure_results.result_uuids(alluredir) if alluredir.is_dir() else set()
        count = 0
        for entry in journals(self.folder):
            test = entry.test
            if not test:
                continue
            snapshot = test.get("snapshot") or {}
            if snapshot.get("uuid") in written:
                continue  # the worker wrote its own (broken) result
            self._write(alluredir, str(test.get("nodeid")),
                        f"{INTERRUPTED_PREFIX} the run was stopped while worker {entry.worker} "
                        "ran this test: it did not finish, its figures were not judged", test)
            count += 1
        return count


def _worker_id(report: pytest.TestReport) -> str:
    """The id (``gw1``) of the worker an xdist crash report names."""
    node = getattr(report, "node", None)
    gateway = getattr(node, "gateway", None)
    if gateway is not None:
        return str(gateway.id)
    return str((getattr(node, "workerinput", None) or {}).get("workerid", "?"))


def _keep_from_rerun(sched: Any, crashitem: str) -> bool:
    """Mark ``crashitem`` done in pytest-xdist's scheduler so the work it re-queued after the
    crash (the rest of the drive's group, loadgroup) does not hand it to a worker again.

    pytest-xdist (3.x ``LoadScopeScheduling``, which ``loadgroup`` uses) keeps
    ``workqueue: {scope: {nodeid: completed}}`` and ``assigned_work: {node: {scope: ...}}``;
    its ``mark_test_pending`` hook helper is not implemented for scoped scheduling, hence this.
    A work unit left with nothing to run is dropped. Returns False when the scheduler has
    another shape (the worker-side ``NOT RERUN`` skip still holds).
    """
    try:
        queue = sched.workqueue
        found = False
        for scope, unit in list(queue.items()):
            if crashitem in unit:
                unit[crashitem] = True
                found = True
                if all(unit.values()):
                    del queue[scope]
        for assigned in sched.assigned_work.values():
            for unit in assigned.values():
                if crashitem in unit:
                    found = True  # already sent: the worker skips it (NOT RERUN)
        return found
    except (AttributeError, TypeError, KeyError):
        return False
