"""Allure results written outside allure-pytest's flow, through allure-python-commons' public
API only: its model objects (``allure_commons.model2``), its file logger
(``allure_commons.logger.AllureFileLogger``) and its hooks (``allure_recorder``). Only
report/'s Allure writers import allure or allure_commons: tests/unit/test_layout.py.

A test whose pytest-xdist worker died, or that SIGINT/SIGTERM stopped, is *broken*, never passed
(``write_crashed_result``, ``mark_current_broken``): the worker keeps a snapshot of the running
test's result in its journal (``snapshot_current_test``: what the test told Allure so far, as
the ``Recorder`` followed it, with the ids allure-pytest gives it, ``allure_ids``) and the
controller writes the result the dead process never wrote. Without ``--alluredir`` these do
nothing.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import allure_commons
import attr
from allure_commons.logger import AllureFileLogger
from allure_commons.model2 import (
    Attachment,
    Label,
    Link,
    Parameter,
    Status,
    StatusDetails,
    TestResult,
    TestStepResult,
)

from pytest_ssdqual.report.allure_ids import AllureParam, allure_ids, represent
from pytest_ssdqual.report.allure_labels import DRIVE_IDENTITY_PARAM, drive_identity, parent_suite
from pytest_ssdqual.report.allure_recorder import Recorder, now_ms
from pytest_ssdqual.results.stored import ATTACH_DRIVE
from pytest_ssdqual.results.stored_json import read_stored_json

__all__ = [
    "begin_test",
    "end_test",
    "mark_current_broken",
    "result_uuids",
    "snapshot_current_test",
    "start_recording",
    "stop_recording",
    "write_crashed_result",
]

#: The recorder of this process (``start_recording``), registered with allure_commons.
_RECORDER: list[Recorder] = []


def start_recording(on_report: Callable[[str], None] | None = None) -> None:
    """Follow the Allure calls of the tests this process runs (``--alluredir`` given): register
    a ``Recorder`` with ``allure_commons.plugin_manager``. ``on_report`` gets the uuid of each
    result allure-pytest is about to write. Undone by ``stop_recording``."""
    stop_recording()
    recorder = Recorder(on_report)
    allure_commons.plugin_manager.register(recorder)
    _RECORDER.append(recorder)


def stop_recording() -> None:
    """Unregister the recorder (at ``pytest_unconfigure``)."""
    while _RECORDER:
        allure_commons.plugin_manager.unregister(_RECORDER.pop())


def begin_test(name: str) -> None:
    """A test starts its set-up (``name``: pytest's ``item.name``)."""
    if _RECORDER:
        _RECORDER[0].begin(name)


def end_test() -> None:
    """The test ended (its own result was written)."""
    if _RECORDER:
        _RECORDER[0].end()


def _json(item: Any) -> dict[str, Any]:
    """A model object as the JSON Allure writes (``AllureFileLogger``: empty fields left out)."""
    return dict(attr.asdict(item, filter=lambda _, v: v or v is False))


def snapshot_current_test(nodeid: str, original_values: Mapping[str, Any]
                          ) -> dict[str, Any] | None:
    """The running test's Allure result as it stands, as the JSON Allure would write (name,
    labels, links, parameters, steps and attachments the test gave Allure so far), with the
    ``fullName``, ``testCaseId`` and ``historyId`` allure-pytest gives it (``allure_ids``;
    allure-pytest sets them at the end of set-up and at teardown, which a dying process never
    reaches). Kept by the worker's journal so the controller can write the test's result if
    the worker dies.

    Args:
        nodeid: the test's node id.
        original_values: the test's pytest parameters (``item.callspec.params``):
            allure-pytest hashes their original values, not their ``repr``.

    Returns:
        The result as a dict, or None without ``--alluredir`` (or outside a test).
    """
    result = _RECORDER[0].result if _RECORDER else None
    if result is None:
        return None
    ids = allure_ids(nodeid, original_values, [
        AllureParam(p.name, p.value, bool(p.excluded)) for p in result.parameters])
    data = _json(result)
    data.update(fullName=ids.full_name, testCaseId=ids.test_case_id, historyId=ids.history_id)
    names = {p.name for p in result.parameters}
    data["parameters"] = [_json(p) for p in result.parameters] + [
        {"name": p.name, "value": p.value} for p in ids.parameters if p.name not in names]
    return data


def mark_current_broken(nodeid: str, message: str) -> None:
    """Make the running test *broken* with ``message`` (a test stopped by SIGINT/SIGTERM:
    allure-pytest would otherwise write it with its set-up status, ``passed``): the recorder
    sets the status on its result as allure-pytest writes it. Does nothing without
    ``--alluredir``."""
    if _RECORDER:
        _RECORDER[0].mark_broken(allure_ids(nodeid).full_name, message)


def result_uuids(alluredir: Path) -> set[str]:
    """The ``uuid`` of every ``*-result.json`` in ``alluredir`` (unreadable or damaged files,
    ``stored_json.read_stored_json``, skipped)."""
    out = set()
    for path in alluredir.glob("*-result.json"):
        try:
            out.add(str(read_stored_json(path).get("uuid", "")))
        except (OSError, ValueError):  # DamagedJson is a ValueError
            continue
    return out


def write_crashed_result(
    alluredir: Path,
    nodeid: str,
    message: str,
    trace: str = "",
    *,
    snapshot: Mapping[str, Any] | None = None,
    drive_facts: Mapping[str, str] | None = None,
    fio_job: tuple[str, str] | None = None,
) -> str:
    """Write a *broken* Allure result for a test whose process never wrote one: its
    pytest-xdist worker crashed, or the run was stopped (SIGTERM) while it ran. Written with
    allure-python-commons' model objects and file logger (``AllureFileLogger.report_result``,
    ``report_attached_data``), as allure-pytest writes its own.

    Called on the controller. With the worker's ``snapshot`` (``snapshot_current_test``, kept
    in its journal from the test's set-up on) the result is the test's own -- same uuid, title,
    parent suite (the drive; from ``drive_facts`` when it died before its labels were set),
    parameters, history id and the attachments written so far -- so it lands on the right
    drive and in the test's history; the steps still open are closed as broken. Without one
    (it died before its drive was opened), name, full name, suites and history id follow
    allure-pytest's scheme for the node id (``allure_ids``; the ``@group`` suffix
    pytest-xdist's loadgroup adds is dropped) with the drive's parameters when
    ``drive_facts`` are known. Allure's default suite labels (suite = module, sub-suite =
    class) and ``framework`` are added as allure-pytest adds them at teardown.

    Args:
        alluredir: the ``--alluredir`` folder.
        nodeid: the test's node id, e.g. ``suites/test_x.py::test_y[loop0]@loop0``.
        message: why the result is broken (``worker 'gw0' crashed while running ...``).
        trace: longer text (the crash report), if any.
        snapshot: the test's Allure result as it stood, or None.
        drive_facts: the drive's facts (``DriveContext.describe()``), or None; their ``drive``
            attachment is added when the snapshot has none.
        fio_job: (path, text) of the last fio job the test started, attached as
            ``fio job (running when the test stopped)``.

    Returns:
        The uuid of the written result (``<uuid>-result.json`` is its file's name pattern).
    """
    logger = AllureFileLogger(alluredir)  # creates the folder, never cleans it
    stamp = now_ms()
    if snapshot:
        result = _result_from_json(json.loads(json.dumps(snapshot, default=str)))
    else:
        dynamic = [] if not drive_facts else [
            AllureParam(DRIVE_IDENTITY_PARAM, represent(drive_identity(drive_facts))),
            AllureParam("ssd_drive", represent(str(drive_facts.get("drive", ""))),
                        excluded=True)]
        ids = allure_ids(nodeid, {}, dynamic)
        result = TestResult(
            uuid=str(uuid.uuid4()), name=ids.name, fullName=ids.full_name,
            historyId=ids.history_id, testCaseId=ids.test_case_id, start=stamp,
            parameters=[Parameter(name=p.name, value=p.value, excluded=p.excluded or None)
                        for p in ids.parameters])
    result.status = Status.BROKEN
    result.statusDetails = StatusDetails(message=message, trace=trace or None)
    result.stop = stamp
    _close_steps(result.steps, stamp)
    ids = allure_ids(nodeid)
    names = {label.name for label in result.labels}
    if "parentSuite" not in names and drive_facts:  # died before its labels were set
        result.labels.append(Label(name="parentSuite", value=parent_suite(drive_facts)))
    for name, value in (("suite", ids.module), ("subSuite", " > ".join(ids.class_names)),
                        ("framework", "pytest")):
        if value and name not in names:
            result.labels.append(Label(name=name, value=value))
    if drive_facts and not any(a.name == ATTACH_DRIVE for a in result.attachments):
        result.attachments.append(_attach(
            logger, ATTACH_DRIVE, json.dumps(dict(drive_facts), indent=2, sort_keys=True),
            "application/json", "json"))
    if fio_job is not None:
        job_path, job_text = fio_job
        result.attachments.append(_attach(
            logger, "fio job (running when the test stopped)", f"# {job_path}\n{job_text}",
            "text/plain", "fio"))
    logger.report_result(result)
    return str(result.uuid)


def _result_from_json(data: Mapping[str, Any]) -> TestResult:
    """A ``snapshot_current_test`` dict back as a ``TestResult`` (the fields it writes)."""
    result = TestResult(
        uuid=data.get("uuid") or str(uuid.uuid4()), name=data.get("name"),
        fullName=data.get("fullName"), historyId=data.get("historyId"),
        testCaseId=data.get("testCaseId"), description=data.get("description"),
        start=data.get("start"),
        labels=[Label(name=x.get("name"), value=x.get("value")) for x in data.get("labels", [])],
        links=[Link(type=x.get("type"), url=x.get("url"), name=x.get("name"))
               for x in data.get("links", [])])
    _fill(result, data)
    return result


def _fill(item: TestResult | TestStepResult, data: Mapping[str, Any]) -> None:
    """Parameters, attachments and (nested) steps of ``data`` into ``item``."""
    item.parameters = [Parameter(name=x.get("name"), value=x.get("value"),
                                 excluded=x.get("excluded"), mode=x.get("mode"))
                       for x in data.get("parameters", [])]
    item.attachments = [Attachment(name=x.get("name"), source=x.get("source"),
                                   type=x.get("type")) for x in data.get("attachments", [])]
    for raw in data.get("steps", []):
        step = TestStepResult(name=raw.get("name"), status=raw.get("status"),
                              start=raw.get("start"), stop=raw.get("stop"))
        _fill(step, raw)
        item.steps.append(step)


def _close_steps(steps: list[TestStepResult], stamp: int) -> None:
    """Steps a dead process left open (no ``stop``) become broken, stopped at ``stamp``."""
    for step in steps:
        if not step.stop:
            step.stop = stamp
            step.status = Status.BROKEN
        _close_steps(step.steps, stamp)


def _attach(logger: AllureFileLogger, name: str, text: str, mime: str, ext: str) -> Attachment:
    """Write ``text`` as an attachment file (``<uuid>-attachment.<ext>``, Allure's pattern)."""
    source = f"{uuid.uuid4()}-attachment.{ext}"
    logger.report_attached_data(body=text, file_name=source)
    return Attachment(name=name, source=source, type=mime)
