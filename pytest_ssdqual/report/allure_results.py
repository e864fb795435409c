"""Allure results written outside allure-pytest's own flow (only report/'s Allure
writers and plugin/ import allure: tests/unit/test_layout.py).

A test whose pytest-xdist worker died, or that SIGINT/SIGTERM stopped, is *broken*, never passed
(``write_crashed_result``, ``mark_current_broken``): the worker keeps a snapshot of the running
test's result in its journal (``snapshot_current_test``) and the controller writes the result
the dead process never wrote. Without ``--alluredir`` these do nothing.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_ssdqual.report.allure_labels import DRIVE_IDENTITY_PARAM, drive_identity, parent_suite
from pytest_ssdqual.results.stored import ATTACH_DRIVE
from pytest_ssdqual.results.stored_json import read_stored_json

__all__ = [
    "mark_current_broken",
    "result_uuids",
    "snapshot_current_test",
    "write_crashed_result",
]


def _running_result() -> Any | None:
    """allure-pytest's ``TestResult`` of the test running in this process (None without
    ``--alluredir`` or between tests)."""
    import allure_commons
    from allure_pytest.listener import AllureListener

    for plugin in allure_commons.plugin_manager.get_plugins():
        if isinstance(plugin, AllureListener):
            try:
                return plugin.allure_logger.get_test(None)
            except (KeyError, IndexError, AttributeError):
                return None
    return None


def snapshot_current_test(original_values: Mapping[str, Any], item: Any = None
                          ) -> dict[str, Any] | None:
    """The running test's Allure result as it stands, as the JSON Allure would write (uuid,
    name, fullName, labels, parameters, attachments and steps so far), with the ``historyId``
    allure-pytest will give it (``md5(fullName, non-excluded parameter values)``, computed at
    teardown, which a dying process never reaches). Kept by the worker's journal so the
    controller can write the test's result if the worker dies.

    Args:
        original_values: the test's pytest parameters (``item.callspec.params``): allure-pytest
            hashes their original values, not their ``repr``.
        item: the test, during its set-up (allure-pytest sets ``fullName`` and adds the pytest
            parameters only once set-up is over): both are filled in as it will, so a worker
            that dies in set-up still leaves the test's own history id and drive parameters.

    Returns:
        The result as a dict, or None without ``--alluredir`` (or outside a test).
    """
    from allure_commons.model2 import Parameter
    from allure_commons.utils import represent
    from allure_pytest.utils import allure_full_name, get_history_id
    from attr import asdict

    result = _running_result()
    if result is None:
        return None
    full_name = getattr(result, "fullName", None)
    parameters = list(result.parameters)
    if not full_name and item is not None:  # in set-up: as allure-pytest's set-up will
        full_name = allure_full_name(item)
        names = {p.name for p in parameters}
        parameters += [Parameter(name=name, value=represent(value))
                       for name, value in original_values.items() if name not in names]
    if not full_name:
        return None
    data = asdict(result, filter=lambda _, v: v or v is False)
    data["fullName"] = full_name
    data["parameters"] = [asdict(p, filter=lambda _, v: v or v is False) for p in parameters]
    data["historyId"] = get_history_id(full_name, parameters,
                                       original_values=dict(original_values))
    return data


def mark_current_broken(message: str) -> None:
    """Make the running test *broken* with ``message`` (a test stopped by SIGINT/SIGTERM:
    allure-pytest would otherwise write it with its set-up status, ``passed``). Does nothing
    without ``--alluredir``."""
    from allure_commons.model2 import Status, StatusDetails

    result = _running_result()
    if result is not None:
        result.status = Status.BROKEN
        result.statusDetails = StatusDetails(message=message)


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
) -> Path:
    """Write a *broken* Allure result for a test whose process never wrote one: its
    pytest-xdist worker crashed, or the run was stopped (SIGTERM) while it ran.

    Called on the controller. With the worker's ``snapshot`` (``snapshot_current_test``, kept
    in its journal from the test's set-up on) the result is the test's own -- same uuid, title,
    parent suite (the drive; from ``drive_facts`` when it died before its labels were set),
    parameters, history id and the attachments written so far (the ``drive`` facts) -- so it
    lands on the right drive and in the test's history; the steps still open are closed as
    broken. Without one (it died before its drive was opened), name, full name, suite and
    history id follow allure-pytest's scheme for the node id (the ``@group`` suffix
    pytest-xdist's loadgroup adds is dropped: ``md5(node id)``) and ``drive_facts``, when
    known, give the parent suite and the ``drive`` attachment.

    Args:
        alluredir: the ``--alluredir`` folder.
        nodeid: the test's node id, e.g. ``suites/test_x.py::test_y[loop0]@loop0``.
        message: why the result is broken (``worker 'gw0' crashed while running ...``).
        trace: longer text (the crash report), if any.
        snapshot: the test's Allure result as it stood, or None.
        drive_facts: the drive's facts (``DriveContext.describe()``), or None.
        fio_job: (path, text) of the last fio job the test started, attached as
            ``fio job (running when the test stopped)``.

    Returns:
        The written ``*-result.json`` file.
    """
    from allure_commons.model2 import Label, Status, StatusDetails, TestResult
    from allure_commons.utils import md5, now, uuid4
    from allure_pytest.utils import ParsedPytestNodeId
    from attr import asdict

    alluredir.mkdir(parents=True, exist_ok=True)
    stamp = now()
    if snapshot:
        data: dict[str, Any] = json.loads(json.dumps(snapshot, default=str))
        data["status"] = Status.BROKEN
        data["statusDetails"] = {"message": message, **({"trace": trace} if trace else {})}
        data["stop"] = stamp
        _close_steps(data.get("steps") or [], stamp)
        labels = data.setdefault("labels", [])
        names = {lab.get("name") for lab in labels}
        if "parentSuite" not in names and drive_facts:  # died before its labels were set
            labels.append({"name": "parentSuite", "value": parent_suite(drive_facts)})
        if "suite" not in names:
            labels.append({"name": "suite",
                           "value": ParsedPytestNodeId(nodeid.split("@", 1)[0]).module})
        if "framework" not in names:
            labels.append({"name": "framework", "value": "pytest"})
    else:
        clean = nodeid.split("@", 1)[0]
        parsed = ParsedPytestNodeId(clean)
        class_part = ("." + ".".join(parsed.class_names)) if parsed.class_names else ""
        full_name = f"{parsed.package}{class_part}#{parsed.test_function}"
        result = TestResult(
            uuid=uuid4(),
            name=clean.rsplit("::", 1)[-1],
            fullName=full_name,
            historyId=md5(clean),
            testCaseId=md5(full_name),
            status=Status.BROKEN,
            statusDetails=StatusDetails(message=message, trace=trace or None),
            start=stamp,
            stop=stamp,
            labels=[
                Label(name="suite", value=parsed.module),
                Label(name="framework", value="pytest"),
            ],
        )
        data = asdict(result, filter=lambda _, v: v or v is False)  # as AllureFileLogger does
        if drive_facts:
            data["labels"].append({"name": "parentSuite", "value": parent_suite(drive_facts)})
            data["parameters"] = [
                {"name": DRIVE_IDENTITY_PARAM, "value": drive_identity(drive_facts)},
                {"name": "ssd_drive", "value": str(drive_facts.get("drive", "")),
                 "excluded": True},
            ]
    attachments = data.setdefault("attachments", [])
    if drive_facts and not any(a.get("name") == ATTACH_DRIVE for a in attachments):
        attachments.append(_write_attachment(
            alluredir, ATTACH_DRIVE, json.dumps(dict(drive_facts), indent=2, sort_keys=True),
            "application/json", "json"))
    if fio_job is not None:
        job_path, job_text = fio_job
        attachments.append(_write_attachment(
            alluredir, "fio job (running when the test stopped)",
            f"# {job_path}\n{job_text}", "text/plain", "fio"))
    path = alluredir / f"{uuid.uuid4()}-result.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _close_steps(steps: list[dict[str, Any]], stamp: int) -> None:
    """Steps a dead process left open (no ``stop``) become broken, stopped at ``stamp``."""
    for step in steps:
        if not step.get("stop"):
            step["stop"] = stamp
            step["status"] = "broken"
        _close_steps(step.get("steps") or [], stamp)


def _write_attachment(alluredir: Path, name: str, text: str, mime: str, ext: str
                      ) -> dict[str, str]:
    source = f"{uuid.uuid4()}-attachment.{ext}"
    (alluredir / source).write_text(text, encoding="utf-8")
    return {"name": name, "source": source, "type": mime}
