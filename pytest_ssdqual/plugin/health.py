"""pytest glue for drive health: thin, like ``plugin.py``.

* Every drive's health is read once before its first test (``HealthTracker.begin``) and judged
  (``health_checks``). A failing finding (DISK FAILING, a failing critical warning...) fails
  every workload test on that drive (``health_failures``, called by ``qualify``) with a
  ``HEALTH:`` line, and its rows go into the verdict table once, so a drive smartctl reports
  failing never qualifies PASS, whichever tests were selected.
* Around a destructive workload the health is read again and the change judged
  (``media_errors: {max_delta: 0}``).
* Every judgement is stored in the results store as a ``health`` record (``store``) with when
  the verdict table lists it, so ``ssdqual rejudge`` judges the readings and changes against
  new limits and counts them as the run did. The start reading is one record per drive,
  stored by the first test that judged it (passing: unlisted, so a stricter limit in rejudge
  still fails it) and taken over by the health suite's start test.
* ``suites/test_health.py`` judges the start reading and, as the drive's last test
  (``@pytest.mark.ssdqual_last``, moved to the end of the run), the session end and the change
  over the session, through the ``drive_health`` fixture. On targets without SMART (loop, zram,
  file) these tests skip with the reason.
* A block device whose health could not be read (smartctl failing, a USB bridge it cannot
  read) has never been checked: the first test on it (``note_unread``) puts a ``NOT READ`` row
  with the reason in the verdict table and stores a ``skipped`` health record (the drive is
  not passed in the results store), and the run ends INCOMPLETE (``plugin.outcomes``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.health import HEALTH_WORKLOAD_ID
from pytest_ssdqual.catalog.workloads import get_workload
from pytest_ssdqual.drive.health import DriveHealth
from pytest_ssdqual.drive.health_checks import (
    HealthJudgement,
    describe,
    health_deltas,
    health_limits,
    health_metrics,
    judge_health,
)
from pytest_ssdqual.drive.health_query import HealthUnavailable, query_health
from pytest_ssdqual.plugin.common import (
    GATE_KEY,
    PROP_DRIVE,
    PROP_NOT_APPLICABLE,
    PROP_ROWS,
    allure_labels,
)
from pytest_ssdqual.plugin.events import event_stream
from pytest_ssdqual.qualify.session import DriveContext, QualSession
from pytest_ssdqual.report import allure_attach
from pytest_ssdqual.report.allure_labels import label_not_applicable, label_test
from pytest_ssdqual.report.summary import (
    HEALTH_NOT_READ,
    SummaryRow,
    fit_text,
    rows_from_verdicts,
)
from pytest_ssdqual.results.journal import clean_node_id
from pytest_ssdqual.results.record import (
    LISTED_ALWAYS,
    LISTED_IF_FAILED,
    LISTED_IF_FLAGGED,
    TestRecord,
)

_TRACKERS = pytest.StashKey[dict[str, "HealthTracker"]]()

#: user_properties key of a test skipped because it cannot apply to the target (no SMART on a
#: loop device, no power states on a SATA drive): such a skip does not make a run incomplete
#: for the results store (it can still be a firmware baseline).

def mark_not_applicable(node: pytest.Item, reason: str) -> None:
    """The test is about to be skipped because it cannot apply to its drive: not counted as a
    skip by the results store (``PROP_NOT_APPLICABLE``), ``NOT APPLICABLE`` in the per-drive
    summary (Allure label, ``allure_labels.label_not_applicable``)."""
    node.user_properties.append((PROP_NOT_APPLICABLE, reason))
    label_not_applicable(reason)


START = "session start"
END = "session end"


@dataclass
class HealthTracker:
    """One drive's health readings in this process: the start, the latest, and judgements."""

    ctx: DriveContext
    strict: bool = False
    start: DriveHealth | None = None
    start_judgement: HealthJudgement | None = None
    unavailable: str | None = None
    applicable: bool = True
    last: tuple[str, DriveHealth] | None = None
    reported: set[str] = field(default_factory=set)
    #: the folder of the start reading's one record in the results store: stored by the first
    #: test of this process that judged it; the health suite's start test takes it over
    start_record: Path | None = None

    def read(self) -> DriveHealth:
        """Read the health now (raises ``HealthUnavailable``)."""
        target = self.ctx.target
        ident = self.ctx.identity
        run = getattr(target, "run_tool", None)  # a remote drive's: on its host, over SSH
        return query_health(target.fio_filename if run else target.device, kind=ident.kind,
                            transport=ident.transport, run=run,
                            smartctl_device_type=ident.smartctl_device_type or None,
                            ocp=self.ctx.probes.ocp)  # a non-OCP drive: asked once a session

    def begin(self) -> None:
        """Read and judge the start reading, once; a target without health is remembered."""
        if self.start is not None or self.unavailable is not None:
            return
        try:
            self.start = self.read()
        except HealthUnavailable as exc:
            self.unavailable, self.applicable = str(exc), exc.applicable
            return
        self.last = (START, self.start)
        self.start_judgement = self.judge(START, health_metrics(self.start))

    def judge(self, label: str, metrics: dict[str, float]) -> HealthJudgement:
        return judge_health(label, metrics, health_limits(self.ctx.limits.limits.values()),
                            strict=self.strict)

    def after(self, label: str) -> tuple[HealthJudgement, HealthJudgement]:
        """Read again: the reading's own judgement and the change since the previous reading
        (``<previous> -> <label>``). Requires a successful :meth:`begin`."""
        assert self.last is not None
        previous_label, previous = self.last
        now = self.read()
        self.last = (label, now)
        reading = self.judge(label, health_metrics(now))
        change = self.judge(f"{previous_label} -> {label}", health_deltas(previous, now))
        return reading, change

    def since_start(self, label: str) -> tuple[HealthJudgement, HealthJudgement]:
        """Read again: its judgement and the change since the session start."""
        assert self.start is not None
        now = self.read()
        self.last = (label, now)
        return (self.judge(label, health_metrics(now)),
                self.judge(f"{START} -> {label}", health_deltas(self.start, now)))


def tracker(config: pytest.Config, session: QualSession, ctx: DriveContext) -> HealthTracker:
    """The drive's tracker (one per drive and process), its start reading taken."""
    trackers = config.stash.setdefault(_TRACKERS, {})
    found = trackers.get(ctx.target.spec.raw)
    if found is None:
        found = trackers[ctx.target.spec.raw] = HealthTracker(ctx, session.options.strict)
    found.begin()
    return found


def store(node: pytest.Item, tracker_: HealthTracker, judgement: HealthJudgement, *,
          listed: str, replace: Path | None = None) -> Path:
    """Store ``judgement`` in the results store as a ``health`` record of the drive
    (``ResultsGate.store_health``; in place of the record in folder ``replace`` when given),
    with the test's node id and when the run's verdict table lists it (``listed``:
    ``record.LISTED_*``), so ``ssdqual rejudge`` judges and counts it as the run did. Returns
    the record's folder. Raises ``StoreError`` (the test is broken) when it cannot be stored.
    The reading is an event line too (``--events``)."""
    stream = event_stream(node.config)
    if stream is not None:
        stream.emit("health", test=node.nodeid, drive=tracker_.ctx.target.spec.raw,
                    label=judgement.label, metrics=judgement.metrics,
                    failed=[v.line() for v in judgement.failed])
    return node.config.stash[GATE_KEY].store_health(
        tracker_.ctx, judgement, listed=listed, test=clean_node_id(node.nodeid),
        strict=tracker_.strict, replace=replace)


def record(node: pytest.Item, tracker_: HealthTracker, judgement: HealthJudgement,
           health: DriveHealth, *, listed: str, once: bool = False,
           replace: Path | None = None) -> Path | None:
    """Verdict rows (workload ``health``, the reading as the state), an Allure text attachment
    and the stored record (``store``, listed by ``listed``; returns its folder, ``None`` when
    not stored). With ``once``, the rows of a judgement go into the table only once per drive,
    and a later test stores nothing of it -- but with ``replace`` (the folder of the record an
    earlier test stored: the health suite's start test) it takes that record over, listed by
    ``listed``: one record, counted once, as the table did."""
    drive = tracker_.ctx.target.spec.raw
    shown = not once or judgement.label not in tracker_.reported
    if shown:
        rows = rows_from_verdicts(drive, HEALTH_WORKLOAD_ID, judgement.verdicts,
                                  dict.fromkeys(judgement.metrics, judgement.label))
        node.user_properties.append((PROP_ROWS, [r.as_dict() for r in rows]))
        if once:
            tracker_.reported.add(judgement.label)
    folder = None
    if shown or replace is not None:
        folder = store(node, tracker_, judgement, listed=listed, replace=replace)
    text = "\n".join([*describe(health), f"judged: {judgement.label}",
                      *("  " + v.line() for v in judgement.verdicts if v.limit is not None),
                      *(f"  not reported: {m}" for m in judgement.not_reported)])
    allure_attach.attach_text(text, f"drive health ({judgement.label})")
    return folder


_UNREAD = "health not read"


def note_unread(node: pytest.Item, tracker_: HealthTracker) -> None:
    """Once per drive and process, for a block device whose health could not be read: a
    ``NOT READ`` verdict-table row with the reason, and a ``skipped`` health record in the
    results store (so the drive is not passed there). Nothing for a target without health."""
    if tracker_.unavailable is None or not tracker_.applicable or _UNREAD in tracker_.reported:
        return
    tracker_.reported.add(_UNREAD)
    drive = tracker_.ctx.target.spec.raw
    reason = f"SMART / health never checked: {tracker_.unavailable}"
    row = SummaryRow(drive, HEALTH_WORKLOAD_ID, "-", None, "-", HEALTH_NOT_READ, None, reason)
    node.user_properties.append((PROP_ROWS, [row.as_dict()]))
    node.config.stash[GATE_KEY].store_health(
        tracker_.ctx, HealthJudgement(_UNREAD, {}, [], ()), listed=LISTED_ALWAYS,
        test=clean_node_id(node.nodeid), strict=tracker_.strict, unread=reason)


def _lines(judgement: HealthJudgement) -> list[str]:
    return [f"  HEALTH ({judgement.label}): {v.line()}" for v in judgement.failed]


def health_failures(node: pytest.Item, tracker_: HealthTracker, *, workload_id: str,
                    destructive: bool) -> list[str]:
    """For a workload test that has run: failure lines for the drive's failing start
    findings (rows recorded once per drive), and, after a destructive workload, for the
    health read now and its change since the previous reading."""
    drive = tracker_.ctx.target.spec.raw
    judgement = tracker_.start_judgement
    note_unread(node, tracker_)
    if judgement is None or tracker_.start is None:
        return []
    lines = _lines(judgement)
    if tracker_.start_record is None:  # the first test to judge it stores it (passing:
        # unlisted, so that a stricter limit in rejudge fails it)
        tracker_.start_record = (
            record(node, tracker_, judgement, tracker_.start, listed=LISTED_IF_FAILED, once=True)
            if lines else store(node, tracker_, judgement, listed=LISTED_IF_FAILED))
    elif lines:  # rows once per drive (already stored: no second record)
        record(node, tracker_, judgement, tracker_.start, listed=LISTED_IF_FAILED, once=True)
    if destructive:
        try:
            reading, change = tracker_.after(f"after {workload_id}")
        except HealthUnavailable as exc:
            return [*lines, f"  HEALTH: could not read health after {workload_id}: {exc}"]
        assert tracker_.last is not None
        for j in (reading, change):
            if j.failed or j.warnings:
                record(node, tracker_, j, tracker_.last[1], listed=LISTED_IF_FLAGGED)
            else:  # not listed, but stored: a stricter limit may fail it in ssdqual rejudge
                store(node, tracker_, j, listed=LISTED_IF_FLAGGED)
            lines += _lines(j)
    if lines:
        said = "; ".join(line.strip() for line in describe(tracker_.start))
        lines.insert(0, f"{drive}: drive health fails ({said})")
    return lines


@dataclass
class DriveHealthTest:
    """What ``suites/test_health.py`` calls: ``check_start()`` and ``check_session_end()``."""

    node: pytest.Item
    session: QualSession
    ctx: DriveContext

    def _prepare(self) -> HealthTracker:
        self.node.user_properties.append((PROP_DRIVE, self.ctx.describe()))
        label_test(self.ctx, get_workload(HEALTH_WORKLOAD_ID),
                   **allure_labels(self.node, self.session))
        found = tracker(self.node.config, self.session, self.ctx)
        if found.unavailable is not None:
            note_unread(self.node, found)
            if not found.applicable:
                mark_not_applicable(self.node, found.unavailable)
            pytest.skip(f"no drive health: {found.unavailable}")
        return found

    def _finish(self, tracker_: HealthTracker,
                judgements: list[tuple[HealthJudgement, DriveHealth]], once: bool = False
                ) -> None:
        drive = self.ctx.target.spec.raw
        lines: list[str] = []
        for judgement, health in judgements:
            start = judgement is tracker_.start_judgement  # one record: taken over, or made
            folder = record(self.node, tracker_, judgement, health, listed=LISTED_ALWAYS,
                            once=once, replace=tracker_.start_record if start else None)
            if start:
                tracker_.start_record = folder
            lines += _lines(judgement)
        merged = HealthJudgement(
            " + ".join(j.label for j, _ in judgements),
            {f"{j.label}: {k}": v for j, _ in judgements for k, v in j.metrics.items()},
            [v for j, _ in judgements for v in j.verdicts], (),
        )
        allure_attach.attach_verdicts(TestRecord.judged(
            drive, HEALTH_WORKLOAD_ID, merged.verdicts, metrics=merged.metrics))
        if lines:
            said = "; ".join(line.strip() for line in describe(judgements[-1][1]))
            pytest.fail(fit_text(f"{drive}: drive health fails ({said})\n" + "\n".join(lines)),
                        pytrace=False)

    def check_start(self) -> HealthJudgement:
        """Judge the reading taken before the drive's first test."""
        found = self._prepare()
        assert found.start_judgement is not None and found.start is not None
        self._finish(found, [(found.start_judgement, found.start)], once=True)
        return found.start_judgement

    def check_session_end(self) -> tuple[HealthJudgement, HealthJudgement]:
        """Read the health at the end of the drive's tests; judge it and the change since the
        start (``max_delta`` limits, ``waf_session``)."""
        found = self._prepare()
        reading, change = found.since_start(END)
        assert found.last is not None
        self._finish(found, [(reading, found.last[1]), (change, found.last[1])])
        return reading, change
