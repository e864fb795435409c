"""pytest glue of the event stream (``--events=FILE``, or ``$SSDQUAL_EVENTS``;
``report.events`` has the line format).

The process that runs a test writes its live lines (``test_start``, ``progress``, ``figure``,
``verdict``, ``health``: ``plugin.host`` and ``plugin.health`` call :func:`event_stream`); the
controller (the only process without xdist) writes ``session_start``, one ``test_end`` per test
from the reports it receives -- a crashed xdist worker's test included -- and ``session_end``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.plugin.common import RUN_ID_KEY
from pytest_ssdqual.report.events import MESSAGE_CHARS, EventStream

#: Environment variable naming the events file when ``--events`` is not given.
EVENTS_ENV = "SSDQUAL_EVENTS"
EVENTS_KEY = pytest.StashKey["EventStream | None"]()


def add_options(group: Any) -> None:
    """Add ``--events`` to the plugin's option group."""
    group.addoption(
        "--events", default=None, metavar="FILE",
        help="append one JSON line per test start, methodology progress step, figure, "
        f"verdict, health reading and test end to FILE as it happens (${EVENTS_ENV} too): a "
        "dashboard can follow the run, and a killed run keeps every line written. "
        "Default: none.",
    )


def event_stream(config: pytest.Config) -> EventStream | None:
    """This process's event stream, opened on first use; None without ``--events``.

    Raises:
        pytest.UsageError: the file cannot be opened for appending.
    """
    if EVENTS_KEY not in config.stash:
        path = config.getoption("events", None) or os.environ.get(EVENTS_ENV) or None
        stream = None
        if path:
            from pytest_ssdqual.errors import ConfigError

            try:
                stream = EventStream(Path(config.invocation_params.dir) / path,
                                     run_id=config.stash.get(RUN_ID_KEY, ""))
            except ConfigError as exc:
                raise pytest.UsageError(f"pytest-ssdqual: {exc}") from None
            config.add_cleanup(stream.close)
        config.stash[EVENTS_KEY] = stream
    return config.stash[EVENTS_KEY]


def _message(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])[:MESSAGE_CHARS]
    text = getattr(report, "longreprtext", "") or ""
    return text.strip()[:MESSAGE_CHARS]


class EventHooks:
    """The controller's lines: session start and end, one ``test_end`` per test."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.tests: dict[str, dict[str, Any]] = {}
        self.counts: dict[str, int] = {}

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        stream = event_stream(self.config)
        if stream is not None:
            stream.emit("session_start", drives=list(self.config.getoption("drive") or []),
                        profile=self.config.getoption("ssd_profile"),
                        argv=list(self.config.invocation_params.args))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        stream = event_stream(self.config)
        if stream is None:
            return
        test = self.tests.setdefault(report.nodeid, {"outcome": "passed", "duration_s": 0.0,
                                                     "message": ""})
        test["duration_s"] += float(report.duration or 0.0)
        if report.failed or report.skipped:
            if test["outcome"] == "passed":  # the first phase that did not pass decides
                test["outcome"] = ("skipped" if report.skipped else "failed"
                                   if report.when == "call" else "error")
                test["message"] = _message(report)
        if report.when in ("setup", "call"):
            return
        # teardown ends a test; xdist reports a crashed worker's test with when "???"
        if report.when != "teardown" and test["outcome"] == "passed":
            test["outcome"] = "error"
        del self.tests[report.nodeid]
        self.counts[test["outcome"]] = self.counts.get(test["outcome"], 0) + 1
        stream.emit("test_end", test=report.nodeid, **test)

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        stream = event_stream(self.config)
        if stream is not None:
            stream.emit("session_end", exitstatus=int(exitstatus), tests=dict(self.counts))
