"""The one record of a verdict: what a test found on a drive, and every output's source.

Two frozen dataclasses, after OpenHTF's ``TestRecord`` (one record, output callbacks convert
it) and allure-python's ``model2`` (one model, file and memory loggers):

* ``LimitVerdict`` -- one metric of one workload judged (or only measured): the figure, the
  limit with its bounds, severity and provenance, the status, the margin, the drive state the
  figure was taken in (``figure_state``). ``str()`` reads like the limit:
  ``write.bw_mbps 412 >= 300 PASS``.
* ``TestRecord`` -- one test on one drive: drive and its facts, workload, metrics, the drive
  state per figure, the verdicts, drive-health findings, the status (``passed``, ``failed``,
  ``broken``, ``interrupted``, ``skipped``) and its reason, plus what the results store keeps
  for baselines and ``ssdqual rejudge`` (repetitions, spread, requirements, regression block).
  A drive-health judgement (one reading or the change between two, workload ``health``) is a
  record of its own: its metrics, each in the state of its label (``session start``, ``after
  <workload>``, ``session start -> session end``), and when the run lists it (``listed``).

Every output converts these: the results store's ``record.json`` (``TestRecord.to_json``), the
Allure ``verdicts (JSON)`` attachment (read back by ``results.stored``), the terminal verdict
table (``report.summary``), the per-drive summary (``report.drive_summary``), ``ssdqual
rejudge`` and ``ssdqual compare``.

JSON schema ``SCHEMA`` (2). ``from_json`` also reads what older versions wrote: a schema-1
``record.json`` (verdicts with one ``provenance`` text and ``limit: null`` when unlimited) and
the Allure verdict list of before (no ``severity``). Plain Python (no pytest).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from pytest_ssdqual.catalog.health import HEALTH_WORKLOAD_ID
from pytest_ssdqual.methodology.figure_state import verdict_word
from pytest_ssdqual.thresholds.verdict import FAIL, Verdict, bound_text, format_number

__all__ = ["LISTED_ALWAYS", "LISTED_IF_FAILED", "LISTED_IF_FLAGGED", "LISTED_NEVER", "SCHEMA",
           "STATUSES", "LimitVerdict", "TestRecord", "listed_in_table", "record_name",
           "verdict_words"]

#: Version of the JSON written by ``TestRecord.to_json`` (1: before the typed record).
SCHEMA = 2

#: Statuses of a test record (Allure's, plus ``interrupted``: SIGINT/SIGTERM stopped it).
STATUSES: tuple[str, ...] = ("passed", "failed", "broken", "interrupted", "skipped")

#: ``TestRecord.listed``: when the run's verdict table (and its count line) lists a record's
#: verdicts. A workload's always; a drive-health judgement (``plugin.health``) as the run lists
#: it -- always when the health suite judged it, only when it failed (the session-start reading
#: judged for a workload test) or failed or warned (the readings around a destructive workload)
#: otherwise; never (``LISTED_NEVER``: written by versions that stored a second copy of the
#: start reading, which another test of the drive had listed already; still read).
LISTED_ALWAYS = "always"
LISTED_IF_FAILED = "if failed"
LISTED_IF_FLAGGED = "if failed or warned"
LISTED_NEVER = "never (listed by another test)"


def listed_in_table(rule: str, statuses: Iterable[str]) -> bool:
    """Whether verdicts of ``statuses`` (``pass``, ``fail``, ``warn``, ...) go into the verdict
    table under the listing ``rule`` (``LISTED_*``; ``""``: always).

    Raises:
        ValueError: an unknown rule.
    """
    found = set(statuses)
    if rule in ("", LISTED_ALWAYS):
        return True
    if rule == LISTED_IF_FAILED:
        return bool(found & {"fail", "missing"})
    if rule == LISTED_IF_FLAGGED:
        return bool(found & {"fail", "missing", "warn"})
    if rule == LISTED_NEVER:
        return False
    raise ValueError(f"unknown listing rule {rule!r}")


def record_name(workload: str, states: Mapping[str, str]) -> str:
    """``workload``; for a drive-health judgement (workload ``health``: several a drive and
    run) with its reading, the state of its figures: ``health @ session end``, ``health @
    session start -> after seq_write_128k_qd32``. How ``ssdqual rejudge`` names a record and
    the results index files it (one series per reading, for ``ssdqual trend``)."""
    if workload != HEALTH_WORKLOAD_ID or not states:
        return workload
    return f"{workload} @ {next(iter(states.values()))}"


#: Verdict status (``thresholds.verdict``) -> the word every report prints.
VERDICT_WORDS = {"pass": "PASS", "fail": "FAIL", "missing": "MISSING",
                 "not_judged": "not judged", "warn": "WARN",
                 "not_in_profile": "not in this run profile"}

#: ``str(Provenance)`` as schema 1 stored it: ``file[:line] profile "P" (source: S)``.
_PROVENANCE = re.compile(r'^(?P<file>.*?)(?::(?P<line>\d+))? profile "(?P<profile>[^"]*)" '
                         r'\(source: (?P<source>.*)\)$', re.S)


def verdict_words(status: str) -> str:
    """The report word of a verdict status (``pass`` -> ``PASS``); unknown ones unchanged."""
    return VERDICT_WORDS.get(status, status)


def _num(value: float | None) -> str:
    return "-" if value is None else format_number(value)


@dataclass(frozen=True)
class LimitVerdict:
    """One verdict as recorded.

    Attributes:
        workload, metric: workload id and canonical metric (``write.bw_mbps``).
        measured: value in the metric's unit, or None (not measured).
        status: ``pass``, ``fail``, ``missing``, ``not_judged``, ``warn`` or
            ``not_in_profile`` (``thresholds.verdict``).
        margin_pct: signed headroom in percent of the bound (positive = inside), or None.
        marginal: passed inside the limit's marginal band.
        limit: the limit as text (``write.bw_mbps >= 140``), ``""`` when none.
        min, max: the limit's bounds (None when absent).
        file, line, profile, source: the limit's provenance (``""``/None when no limit).
        state: the drive state the figure was taken in (``figure_state``: ``prefilled``,
            ``as found ...``, ``FOB``, ``steady state``...), ``""`` when not recorded.
        severity: the limit's severity, ``fail`` or ``warn``.
        reason: why a limited metric has no value when that is a finding (never recovered) or
            by design (``not_in_profile``), ``""`` otherwise.
    """

    workload: str
    metric: str
    measured: float | None
    status: str
    margin_pct: float | None
    marginal: bool = False
    limit: str = ""
    min: float | None = None
    max: float | None = None
    file: str = ""
    line: int | None = None
    profile: str = ""
    source: str = ""
    state: str = ""
    severity: str = FAIL
    reason: str = ""

    @classmethod
    def from_verdict(cls, v: Verdict, state: str = "") -> LimitVerdict:
        """The record of verdict ``v``; ``state``: the drive state of its figure."""
        lim = v.limit
        if lim is None:
            return cls(v.workload, v.metric, v.measured, v.status, v.margin_pct, v.marginal,
                       state=state, reason=v.reason or "")
        p = lim.provenance
        return cls(v.workload, v.metric, v.measured, v.status, v.margin_pct, v.marginal,
                   str(lim), lim.min, lim.max, p.file, p.line, p.profile, p.source, state,
                   lim.severity, v.reason or "")

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data (every field by name)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any], workload: str = "") -> LimitVerdict:
        """Read ``to_json`` data, or a verdict of an older version: schema-1 ``record.json``
        (no ``workload``: ``workload`` gives it; ``limit`` None; one ``provenance`` text) or
        the former Allure verdict list. Unknown keys are ignored."""
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values.setdefault("workload", workload)
        values["limit"] = values.get("limit") or ""
        m = _PROVENANCE.match(str(data.get("provenance") or ""))
        if m is not None and "file" not in data:
            values.update(file=m["file"], profile=m["profile"], source=m["source"],
                          line=int(m["line"]) if m["line"] else None)
        for key in ("file", "profile", "source", "state", "reason"):
            values[key] = values.get(key) or ""
        values["severity"] = values.get("severity") or FAIL
        return cls(**values)

    @property
    def judged(self) -> bool:
        """True when a limit applied (pass, fail, warn or missing)."""
        return bool(self.limit)

    @property
    def failed(self) -> bool:
        """True for ``fail`` and ``missing``: the test failed on it."""
        return self.status in ("fail", "missing")

    @property
    def location(self) -> str:
        """``file:line`` of the limit."""
        return f"{self.file}:{self.line}" if self.line else self.file

    @property
    def provenance(self) -> str:
        """Where the limit comes from, as ``thresholds.verdict.Provenance`` prints it; ``""``
        without a limit."""
        if not self.judged:
            return ""
        return f'{self.location} profile "{self.profile}" (source: {self.source})'

    @property
    def bound(self) -> str:
        """The limit without its metric, from its bounds (``verdict.bound_text``): ``>= 140``,
        ``<= 400``, ``10 <= x <= 20``; ``-`` without a limit."""
        if not self.judged:
            return "-"
        if self.min is None and self.max is None:  # not written by this package: as stored
            return self.limit
        return bound_text(self.metric, self.min, self.max)

    @property
    def word(self) -> str:
        """The report word: ``PASS``, ``FAIL``, ``MISSING``, ``WARN``, ``not judged``, and
        ``PASS (as found)`` for a read passed on media as found (``figure_state``)."""
        return verdict_word(verdict_words(self.status), self.state)

    def __str__(self) -> str:
        """Reads like the limit: ``write.bw_mbps 412 >= 300 PASS``."""
        return f"{self.metric} {_num(self.measured)} {self.bound} {self.word}"


@dataclass(frozen=True)
class TestRecord:
    """One test (one workload) on one drive, as every output records it.

    Attributes:
        drive: the drive as given (``/dev/sdb``, ``file:/tmp/x.img``).
        workload: workload id. status: ``STATUSES``. reason: why it is not ``passed`` (the
            failure, error or skip message), ``""`` otherwise.
        verdicts: every judged or measured metric. metrics: figures by canonical metric name.
        states: metric -> the drive state it was taken in (``figure_state``).
        health: drive-health failure lines (the test failed on them whatever the limits).
        run_id, title, family, profile: the run, the workload's title and family, the run
            profile. facts: the drive's facts for threshold resolution (``DriveFacts``);
            identity: ``DriveIdentity`` fields; firmware_reported: the firmware the drive
            reports; assignment: controller/NAND and their source; threshold_profiles:
            ``name (file)`` of each profile that judged it; strict: ``--strict-thresholds``.
        repeat: runs of the workload; repetitions: each run's figures and facts; spread_pct:
            run-to-run spread per metric; aggregation: metric -> how its figure came from the
            runs (``repeats.aggregation_labels``: ``max of 3 runs``), empty for one run.
            requirements: a methodology test's implicit limits
            (None: not recorded, a record of an older version);
            unreached: metric -> why the drive never got there; regression: the baseline
            comparison block (None when not gated). written_utc: when it was recorded.
        drive_slug: the drive's folder in the results store (``store.drive_slug``).
        test: the pytest node id of the test that recorded it (``""``: not recorded, a record
            of an older version); a workload test and the drive-health judgements it made share
            one. listed: when the run's verdict table lists its verdicts (``LISTED_*``;
            ``""``: always).
    """

    __test__: ClassVar[bool] = False  # not a pytest test class

    drive: str
    workload: str
    status: str
    reason: str = ""
    verdicts: tuple[LimitVerdict, ...] = ()
    metrics: Mapping[str, float] = field(default_factory=dict)
    states: Mapping[str, str] = field(default_factory=dict)
    health: tuple[str, ...] = ()
    run_id: str = ""
    title: str = ""
    family: str = ""
    profile: str = ""
    facts: Mapping[str, Any] = field(default_factory=dict)
    identity: Mapping[str, Any] = field(default_factory=dict)
    firmware_reported: str = ""
    assignment: Mapping[str, Any] = field(default_factory=dict)
    threshold_profiles: tuple[str, ...] = ()
    strict: bool = False
    repeat: int = 1
    repetitions: tuple[Mapping[str, Any], ...] = ()
    spread_pct: Mapping[str, float] = field(default_factory=dict)
    aggregation: Mapping[str, str] = field(default_factory=dict)
    requirements: tuple[Mapping[str, Any], ...] | None = None
    unreached: Mapping[str, str] = field(default_factory=dict)
    regression: Mapping[str, Any] | None = None
    written_utc: str = ""
    drive_slug: str = ""
    test: str = ""
    listed: str = ""

    @classmethod
    def judged(cls, drive: str, workload: str, verdicts: Iterable[Verdict],
               states: Mapping[str, str] | None = None, **more: Any) -> TestRecord:
        """A record of ``verdicts`` (``thresholds.verdict``), each with the drive state of its
        figure from ``states``; status ``failed`` when a verdict or ``health`` failed, unless
        ``status`` is given. ``more``: the other fields."""
        states = dict(states or {})
        records = tuple(LimitVerdict.from_verdict(v, states.get(v.metric, "")) for v in verdicts)
        failed = any(v.failed for v in records) or bool(more.get("health"))
        more.setdefault("status", "failed" if failed else "passed")
        return cls(drive=drive, workload=workload, verdicts=records, states=states, **more)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data: ``record.json`` of the results store (schema ``SCHEMA``;
        ``health_failures`` holds ``health``)."""
        out: dict[str, Any] = {"schema": SCHEMA}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "verdicts":
                value = [v.to_json() for v in value]
            elif f.name == "health":
                out["health_failures"] = list(value)
                continue
            elif isinstance(value, tuple):
                value = [dict(v) if isinstance(v, Mapping) else v for v in value]
            elif isinstance(value, Mapping):
                value = dict(value)
            out[f.name] = value
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TestRecord:
        """Read ``to_json`` data of this or an older schema (a schema-1 ``record.json``: its
        verdicts carry no workload and one provenance text). Unknown keys are ignored."""
        workload = str(data.get("workload", ""))
        values: dict[str, Any] = {}
        for f in fields(cls):
            if f.name in data and data[f.name] is not None:
                values[f.name] = data[f.name]
        values["drive"] = str(data.get("drive", ""))
        values["workload"] = workload
        values["status"] = str(data.get("status", "broken"))
        values["verdicts"] = tuple(LimitVerdict.from_json(v, workload)
                                   for v in data.get("verdicts") or [])
        values["health"] = tuple(str(h) for h in data.get("health_failures") or ())
        for name in ("threshold_profiles", "repetitions"):
            values[name] = tuple(values.get(name) or ())
        if "requirements" in values:
            values["requirements"] = tuple(values["requirements"])
        if data.get("regression") is not None:
            values["regression"] = data["regression"]
        return cls(**values)

    @property
    def failed(self) -> list[LimitVerdict]:
        """The verdicts that fail the test (``fail``, ``missing``)."""
        return [v for v in self.verdicts if v.failed]
