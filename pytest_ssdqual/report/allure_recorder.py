"""What the running test told Allure so far, followed through allure-python-commons' public
hooks (only report/'s Allure writers import allure or allure_commons: tests/unit/test_layout.py).

A pytest-xdist worker that dies inside a test never writes the test's result; the controller
writes it from the worker's journal (``allure_results``). To know the test's title, labels,
parameters, steps and attachments so far without reading allure-pytest's internals, the
``Recorder`` is registered with ``allure_commons.plugin_manager`` beside allure-pytest's
listener and gets the same calls: every ``allure.dynamic.*``, ``allure.step`` and
``allure.attach`` of the test reaches both (the hook specifications are
``allure_commons._hooks.AllureUserHooks`` / ``AllureDeveloperHooks``, the extension point other
Allure integrations implement).

It also makes a test stopped by SIGINT/SIGTERM *broken* (``mark_broken``): allure-pytest would
write it with its set-up status, ``passed``; the recorder's ``report_result`` runs before the
file logger's (``tryfirst``) and sets the status on the result about to be written.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from enum import Enum
from typing import Any

import allure_commons
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

from pytest_ssdqual.report.allure_ids import represent

__all__ = ["Recorder", "now_ms"]


def now_ms() -> int:
    """Allure's time stamps: milliseconds since the epoch."""
    return int(round(1000 * time.time()))


def _plain(value: Any) -> Any:
    """An Allure enum value (``severity_level.MINOR``) as its string."""
    return value.value if isinstance(value, Enum) else value


def _step_status(exc_val: BaseException | None) -> str:
    """allure-pytest's step status: passed, failed (an assertion or ``pytest.fail``), broken."""
    if exc_val is None:
        return Status.PASSED
    if isinstance(exc_val, AssertionError) or type(exc_val).__name__ == "Failed":
        return Status.FAILED
    return Status.BROKEN


class Recorder:
    """The Allure state of the test running in this process, as a ``TestResult`` (``result``;
    None between tests). ``begin`` at the test's set-up, ``end`` once it is written.

    Args:
        on_report: called with the uuid of each result allure-pytest is about to write (before
            the file exists): the worker keeps it in its journal, so the controller can tell
            whether the test's own result was written.
    """

    def __init__(self, on_report: Callable[[str], None] | None = None) -> None:
        self.result: TestResult | None = None
        self.on_report = on_report
        self._steps: list[tuple[str, TestStepResult]] = []  # open steps, innermost last
        self._attaching: list[tuple[str, str | None]] = []
        self._broken: tuple[str, str] | None = None  # (full name, message)

    def begin(self, name: str) -> None:
        """A test starts (its set-up): a fresh result named ``name`` (pytest's ``item.name``)."""
        self.result = TestResult(uuid=str(uuid.uuid4()), name=name, start=now_ms())
        self._steps = []
        self._attaching = []

    def end(self) -> None:
        self.result = None
        self._steps = []

    def mark_broken(self, full_name: str, message: str) -> None:
        """The next result written for ``full_name`` is *broken* with ``message``."""
        self._broken = (full_name, message)

    def _holder(self) -> TestResult | TestStepResult | None:
        return self._steps[-1][1] if self._steps else self.result

    # --- allure_commons.hookspec AllureUserHooks ---------------------------------------

    @allure_commons.hookimpl
    def add_title(self, test_title: str) -> None:
        if self.result is not None:
            self.result.name = test_title

    @allure_commons.hookimpl
    def add_label(self, label_type: str, labels: Any) -> None:
        if self.result is not None:
            self.result.labels.extend(Label(name=_plain(label_type), value=_plain(v))
                                      for v in labels)

    @allure_commons.hookimpl
    def add_link(self, url: str, link_type: str, name: str | None) -> None:
        if self.result is not None:
            self.result.links.append(Link(type=_plain(link_type), url=url, name=name or url))

    @allure_commons.hookimpl
    def add_parameter(self, name: str, value: Any, excluded: bool | None, mode: Any) -> None:
        if self.result is None:
            return
        for param in self.result.parameters:
            if param.name == name:
                param.value = represent(value)
                return
        self.result.parameters.append(Parameter(
            name=name, value=represent(value), excluded=excluded or None,
            mode=_plain(mode) if mode else None))

    @allure_commons.hookimpl
    def start_step(self, uuid: str, title: str, params: dict[str, Any]) -> None:
        holder = self._holder()
        if holder is None:
            return
        step = TestStepResult(name=title, start=now_ms(), parameters=[
            Parameter(name=k, value=v) for k, v in (params or {}).items()])
        holder.steps.append(step)
        self._steps.append((uuid, step))

    @allure_commons.hookimpl
    def stop_step(self, uuid: str, exc_type: Any, exc_val: BaseException | None,
                  exc_tb: Any) -> None:
        if self._steps and self._steps[-1][0] == uuid:
            _, step = self._steps.pop()
            step.stop = now_ms()
            step.status = _step_status(exc_val)

    @allure_commons.hookimpl(hookwrapper=True)
    def attach_data(self, body: Any, name: str, attachment_type: Any, extension: Any) -> Any:
        self._attaching.append((name, getattr(attachment_type, "mime_type", attachment_type)))
        try:
            yield
        finally:
            self._attaching.pop()

    @allure_commons.hookimpl(hookwrapper=True)
    def attach_file(self, source: Any, name: str, attachment_type: Any, extension: Any) -> Any:
        self._attaching.append((name, getattr(attachment_type, "mime_type", attachment_type)))
        try:
            yield
        finally:
            self._attaching.pop()

    # --- allure_commons.hookspec AllureDeveloperHooks ----------------------------------

    def _attached(self, file_name: str) -> None:
        holder = self._holder()
        if holder is not None and self._attaching:
            name, mime = self._attaching[-1]
            holder.attachments.append(Attachment(name=name, source=file_name, type=mime))

    @allure_commons.hookimpl
    def report_attached_data(self, body: Any, file_name: str) -> None:
        self._attached(file_name)

    @allure_commons.hookimpl
    def report_attached_file(self, source: Any, file_name: str) -> None:
        self._attached(file_name)

    @allure_commons.hookimpl(tryfirst=True)
    def report_result(self, result: Any) -> None:
        """Before the file logger writes ``result``: a test marked broken becomes broken, and
        ``on_report`` learns the uuid of the file about to be written."""
        if self._broken is not None and getattr(result, "fullName", None) in (
                None, self._broken[0]):
            result.status = Status.BROKEN
            result.statusDetails = StatusDetails(message=self._broken[1])
            self._broken = None
        if self.result is not None and self.on_report is not None:
            self.on_report(str(result.uuid))
