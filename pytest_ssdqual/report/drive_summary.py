"""The one-page qualification summary per drive: what it shows, built from stored results
(``summary_page`` renders it as self-contained HTML and Markdown and writes the files).

What goes into a qualification email: the drive (model, serial, firmware, capacity), its
controller / NAND and where they came from, the run profile, the overall verdict, and every
judged limit with its measured value, margin and source; then the tests that did not pass with
their reason, and (HTML) the drive's queue-depth scaling and latency percentile charts.

Built only from stored results (``results.stored``: an Allure results folder), so
``ssdqual summary RESULTS`` regenerates it at any time without touching a drive; the plugin
writes it next to the results at the end of a session.

Every limit row names the drive state its figure was taken in (``figure_state``); a read limit
passed on media as found is ``PASS (as found)``.

Overall verdict: ``FAIL`` when a test failed or broke (limit violated, regression, fio or device
error, its pytest-xdist worker crashed) or a limit was violated / not measured; ``INCOMPLETE``
when nothing failed but tests were skipped (e.g. write tests refused for safety; a test that
cannot apply to the drive, ``NOT APPLICABLE``, such as the health test on a loop device or the
NVMe wake-up test on a SATA drive, does not count), interrupted
(SIGINT/SIGTERM: ``INTERRUPTED``), a limit passed only as found, or no limit was judged;
``PASS`` otherwise.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.methodology.figure_state import PASS_AS_FOUND
from pytest_ssdqual.report import chart_data
from pytest_ssdqual.results.comparison import FAILING, format_figure, signed_pct
from pytest_ssdqual.results.gate_summary import WARNING
from pytest_ssdqual.results.record import LimitVerdict
from pytest_ssdqual.results.regression_stats import REGRESSED
from pytest_ssdqual.results.stored import (
    StoredTest,
    drive_identity,
    drive_title,
    group_by_drive,
)

if TYPE_CHECKING:
    from pytest_ssdqual.report.plots import Panel

#: Test record status (``record.STATUSES``) -> the word the summary uses.
STATUS_WORDS = {"passed": "PASS", "failed": "FAIL", "broken": "ERROR", "skipped": "SKIPPED",
                "interrupted": "INTERRUPTED"}
#: The word for a test skipped because it cannot apply to the drive (``StoredTest``
#: ``not_applicable``: no SMART, no power states): it does not make the drive INCOMPLETE.
NOT_APPLICABLE = "NOT APPLICABLE"


@dataclass(frozen=True)
class LimitRow:
    """One judged limit.

    Attributes:
        workload, metric: workload id and canonical metric (``write.bw_mbps``).
        measured: value in the metric's unit, or None (not measured).
        limit: the bound without the metric name (``>= 140``, ``<= 400``, ``10 <= x <= 20``).
        margin_pct: signed headroom in percent (positive = inside the limit), or None.
        verdict: PASS, FAIL or MISSING, ``PASS (as found)`` for a read limit passed on media
            as found (``figure_state``); ``marginal`` when inside the marginal band.
        state: the drive state the figure was taken in, ``""`` when not recorded.
        location: ``file:line`` of the limit (file name only); ``source``: the full
            provenance (file, profile, the profile's source text), listed once per page;
            ``short_source``: profile and file name only (what a customer page lists).
    """

    workload: str
    metric: str
    measured: float | None
    limit: str
    margin_pct: float | None
    verdict: str
    marginal: bool
    location: str
    source: str
    state: str = ""
    short_source: str = ""

    @classmethod
    def from_record(cls, v: LimitVerdict) -> LimitRow:
        source = f'profile "{v.profile}" in {v.file}' + (f": {v.source}" if v.source else "")
        location = f"{Path(v.file).name}:{v.line}" if v.line else Path(v.file).name
        return cls(v.workload, v.metric, v.measured, v.bound, v.margin_pct, v.word, v.marginal,
                   location, source, v.state, f'profile "{v.profile}" in {Path(v.file).name}')


@dataclass(frozen=True)
class RegressionRow:
    """One gated metric the regression gate failed (``GateResult.rows``, stored as the
    ``regression (JSON)`` attachment): figures on both sides, the signed change, the allowed
    change (``−5 %``), the baseline run and firmware, and the gate's line."""

    workload: str
    metric: str
    status: str
    value: float | None
    baseline: float | None
    change_pct: float | None
    allowed: str
    baseline_run: str
    baseline_firmware: str
    line: str

    @classmethod
    def from_gate_row(cls, row: Mapping[str, Any]) -> RegressionRow:
        def num(key: str) -> float | None:
            value = row.get(key)
            return float(value) if isinstance(value, int | float) else None
        return cls(str(row.get("workload", "")), str(row.get("metric", "")),
                   str(row.get("status", "")), num("value"), num("baseline"), num("change_pct"),
                   str(row.get("allowed") or ""), str(row.get("baseline_run") or "?"),
                   str(row.get("baseline_firmware") or "?"), str(row.get("line", "")))

    @property
    def baseline_name(self) -> str:
        """``run RUN (firmware FW)``."""
        return f"run {self.baseline_run} (firmware {self.baseline_firmware})"

    def reason(self) -> str:
        """``REGRESSION seq_write_128k_qd32 write.bw_mbps: 1200 vs baseline 2405 (−50.1 %,
        allowed −5 %); baseline run R (firmware A)``; a metric not compared (no figure on one
        side) or inconclusive gives the gate's line instead."""
        head = "REGRESSION" if self.status == REGRESSED else f"REGRESSION ({self.status})"
        if self.value is None or self.baseline is None or self.change_pct is None:
            return f"{head} {self.workload}: {self.line}; baseline {self.baseline_name}"
        return (f"{head} {self.workload} {self.metric}: {format_figure(self.value)} vs baseline "
                f"{format_figure(self.baseline)} ({signed_pct(self.change_pct)}, allowed "
                f"{self.allowed or '?'}); baseline {self.baseline_name}")


@dataclass(frozen=True)
class TestRow:
    """One test: its title, workload, status word and (when not passed) the first lines of
    its message."""

    name: str
    workload: str
    status: str
    reason: str


@dataclass(frozen=True)
class DriveSummary:
    """Everything on one drive's page.

    Attributes:
        facts: the drive's facts (``drive`` attachment: model, serial, firmware, controller...).
        overall: ``PASS``, ``FAIL`` or ``INCOMPLETE`` (module docstring).
        tests: every test on the drive. limits: every judged limit (not-judged metrics are only
            counted, in ``not_judged``).
        started, finished: UTC times of the first test start and the last test stop.
        charts: chart title -> PNG bytes (HTML only); chart_notes: chart title -> what its
            reference lines are (limits, the regression baseline).
        regressions: the gated metrics the regression gate failed (``RegressionRow``).
        baselines: every baseline the drive was compared with (``run R (firmware A)``).
        stem: the file-name stem when it is not ``slug`` (a customer copy keeps the lab's).
    """

    facts: dict[str, str]
    overall: str
    tests: list[TestRow]
    limits: list[LimitRow]
    not_judged: int
    started: datetime | None
    finished: datetime | None
    charts: dict[str, bytes] = field(default_factory=dict)
    regressions: list[RegressionRow] = field(default_factory=list)
    baselines: list[str] = field(default_factory=list)
    chart_notes: dict[str, str] = field(default_factory=dict)
    stem: str = ""

    @property
    def title(self) -> str:
        """``results.stored.drive_title``: the drive's model, firmware and identity."""
        return drive_title(self.facts)

    @property
    def slug(self) -> str:
        """File-name stem: ``summary-<model>-<identity key>`` (``results.stored.drive_identity``:
        the serial; ``@SPEED`` of an emulated drive and the drive as given where the session
        needed them, so two drives of a session never share a page), safe characters only; a
        long one is cut and ends with a hash of the drive and its identity."""
        if self.stem:
            return self.stem
        ident = drive_identity(self.facts)
        raw = f"{self.facts.get('model', 'drive')}-{ident}"
        safe = re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9._-]+", "-", raw)).strip("-") or "drive"
        if len(safe) > 80:
            key = f"{self.facts.get('drive', '')}|{ident}"
            safe = safe[:70].rstrip("-") + "-" + hashlib.sha1(key.encode()).hexdigest()[:8]
        return "summary-" + safe

    def counts(self) -> dict[str, int]:
        """Tests per status word and limits per verdict word."""
        out: dict[str, int] = {}
        for t in self.tests:
            out[f"tests {t.status}"] = out.get(f"tests {t.status}", 0) + 1
        for r in self.limits:
            out[f"limits {r.verdict}"] = out.get(f"limits {r.verdict}", 0) + 1
        return out


def status_word(status: str) -> str:
    """The summary's word for a ``TestRecord`` status (``STATUS_WORDS``)."""
    return STATUS_WORDS.get(status, status.upper())


def _first_lines(text: str, n: int = 4) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines()[:n])


def _applicable(tests: Sequence[TestRow]) -> list[TestRow]:
    return [t for t in tests if t.status != NOT_APPLICABLE]


def overall_verdict(tests: Sequence[TestRow], limits: Sequence[LimitRow]) -> str:
    """``FAIL``, ``INCOMPLETE`` or ``PASS`` (see the module docstring)."""
    if any(t.status in ("FAIL", "ERROR") for t in tests) or any(
        r.verdict in ("FAIL", "MISSING") for r in limits
    ):
        return "FAIL"
    if not limits or not _applicable(tests) or any(
            t.status not in ("PASS", NOT_APPLICABLE) for t in tests):
        return "INCOMPLETE"
    if any(r.verdict == PASS_AS_FOUND for r in limits):  # may be never-written media
        return "INCOMPLETE"
    return "PASS"


def overall_reasons(tests: Sequence[TestRow], limits: Sequence[LimitRow]) -> list[str]:
    """Why the overall verdict is not ``PASS``: one short phrase per cause, in the order
    :func:`overall_verdict` weighs them (``[]`` for a ``PASS``)."""
    reasons = []
    counts: dict[str, int] = {}
    for t in tests:
        if t.status not in ("PASS", NOT_APPLICABLE):
            counts[t.status] = counts.get(t.status, 0) + 1
    reasons += [f"{n} test(s) {status}" for status, n in sorted(counts.items())]
    bad = sum(1 for r in limits if r.verdict in ("FAIL", "MISSING"))
    if bad:
        reasons.append(f"{bad} limit(s) violated or not measured")
    as_found = sum(1 for r in limits if r.verdict == PASS_AS_FOUND)
    if as_found:
        reasons.append(f"{as_found} limit(s) passed only on media as found")
    if not _applicable(tests):
        reasons.append("no test ran")
    elif not limits:
        reasons.append("no limit was judged")
    return reasons


def reason_lines(s: DriveSummary) -> list[str]:
    """Every reason the drive did not pass, one line each, for the top of its page: each
    violated or unmeasured limit, each regression (``RegressionRow.reason``: figures, change,
    allowed change, baseline run and firmware), each other test that did not pass with the
    first line of its message, then ``overall_reasons`` not said by those (``[]`` for a PASS).
    """
    if s.overall == "PASS":
        return []
    lines = [f"{r.verdict} {r.workload} {r.metric}: measured {_figure(r.measured)}, limit "
             f"{r.limit}" + (f" ({r.margin_pct:+.1f} %)" if r.margin_pct is not None else "")
             for r in s.limits if r.verdict in ("FAIL", "MISSING")]
    lines += [r.reason() for r in s.regressions]
    said = {r.workload for r in s.limits if r.verdict in ("FAIL", "MISSING")} | {
        r.workload for r in s.regressions}
    for t in s.tests:
        if t.status in ("PASS", NOT_APPLICABLE) or (t.status == "FAIL" and t.workload in said):
            continue
        first = t.reason.strip().splitlines()[0] if t.reason.strip() else "no reason recorded"
        lines.append(f"{t.status} {t.name}: {first}")
    # what the lines above do not say: limits passed only as found, nothing run or judged
    return lines + [r for r in overall_reasons(s.tests, s.limits)
                    if "test(s)" not in r and "violated" not in r]


def _figure(value: float | None) -> str:
    return "-" if value is None else format_figure(value)


def _started(test: StoredTest) -> int:
    return test.start_ms or 0


def build_summary(tests: Sequence[StoredTest], *, charts: bool = True) -> DriveSummary:
    """The summary of one drive's tests (all of ``tests`` belong to one drive). A drive whose
    firmware changed in the session (the firmware update test) is named with each firmware in
    the order its tests ran (``ECFM11.0, then ECFM12.1``).

    Args:
        charts: render the QD-scaling and latency charts (needs matplotlib; a few 100 ms).
    """
    facts = dict(tests[0].drive) if tests else {}
    firmwares = dict.fromkeys(str(t.drive["firmware"]) for t in sorted(tests, key=_started)
                              if t.drive.get("firmware"))
    if len(firmwares) > 1:  # the firmware update test flashed another build mid-session
        facts["firmware"] = ", then ".join(firmwares)
    if not facts.get("profile"):  # a test labelled without the profile: take another's
        facts["profile"] = next((t.drive["profile"] for t in tests if t.drive.get("profile")), "")
    records = [t.record for t in tests]
    rows = [
        TestRow(t.name, r.workload, NOT_APPLICABLE if t.not_applicable else status_word(r.status),
                "" if r.status == "passed" else _first_lines(r.reason))
        for t, r in zip(tests, records, strict=True)
    ]
    verdicts = [v for r in records for v in r.verdicts]
    limits = [LimitRow.from_record(v) for v in verdicts if v.judged]
    not_judged = len(verdicts) - len(limits)
    starts = [t.start_ms for t in tests if t.start_ms]
    stops = [t.stop_ms for t in tests if t.stop_ms]
    gate = [RegressionRow.from_gate_row(r) for t in tests for r in t.gate_rows
            if r.get("status") != WARNING]
    drawn, notes = drive_charts(tests) if charts else ({}, {})
    return DriveSummary(
        facts=facts,
        overall=overall_verdict(rows, limits),
        tests=rows,
        limits=limits,
        not_judged=not_judged,
        started=datetime.fromtimestamp(min(starts) / 1000, UTC) if starts else None,
        finished=datetime.fromtimestamp(max(stops) / 1000, UTC) if stops else None,
        charts=drawn,
        regressions=[r for r in gate if r.status in FAILING],
        baselines=list(dict.fromkeys(r.baseline_name for r in gate)),
        chart_notes=notes,
    )


def regression_panels(tests: Sequence[StoredTest]) -> dict[str, list[Panel]]:
    """The over-time panels of each test whose bandwidth or IOPS the regression gate failed,
    with its limits and the baseline figure of each failed metric as a labelled line
    (``chart_data.baseline_lines``): chart title (``Regression: WORKLOAD vs baseline run R``)
    -> panels; tests without per-second logs are left out."""
    out: dict[str, list[Panel]] = {}
    for t in tests:
        failed = [RegressionRow.from_gate_row(r) for r in t.gate_rows
                  if r.get("status") in FAILING and isinstance(r.get("baseline"), int | float)]
        if not failed or not t.logs():
            continue
        for run in dict.fromkeys(r.baseline_run for r in failed):
            rows = [r for r in failed if r.baseline_run == run]
            figures = {r.metric: float(r.baseline) for r in rows if r.baseline is not None}
            panels = chart_data.throughput_panels(
                t.logs(), t.verdicts,
                (f"run {run}, firmware {rows[0].baseline_firmware}", figures))
            if panels:
                out[f"Regression: {t.workload} vs baseline run {run}"] = panels
    return out


def drive_charts(tests: Sequence[StoredTest]) -> tuple[dict[str, bytes], dict[str, str]]:
    """Queue-depth scaling (IOPS) and latency percentile curves of one drive's workloads, and
    the over time chart of each regressed workload with its baseline (``regression_panels``).

    Returns:
        chart title -> PNG bytes, chart title -> its reference lines (limits, baseline); a
        chart with no data (a single queue depth, no latency percentiles) is left out.
    """
    from pytest_ssdqual.report import plots  # matplotlib is imported only when a chart is drawn

    name = tests[0].drive.get("model", "drive") if tests else "drive"
    out: dict[str, bytes] = {}
    notes: dict[str, str] = {}
    for title, panels in regression_panels(tests).items():
        out[title] = plots.over_time_chart(panels, title=f"{title.split(' run ')[0]} — {name}")
        notes[title] = "; ".join([f"{k} (dash-dot line)" for p in panels for k in p.baselines]
                                 + [f"limit {k} (dashed line)" for p in panels for k in p.limits])
    measured = [(t.workload, t.metrics) for t in tests if t.workload and t.metrics]
    curves = chart_data.qd_curves(measured)
    if curves:
        out["Queue-depth scaling"] = plots.qd_scaling_chart(
            curves, ylabel="IOPS", title=f"Queue-depth scaling — {name}")
    latency: dict[str, dict[float, float]] = {}
    for workload, metrics in measured:
        latency.update(chart_data.percentile_curves(metrics, workload))
    small_blocks = {k: v for k, v in latency.items() if "_4k_" in k}
    if small_blocks or latency:
        out["Latency percentiles"] = plots.latency_percentile_chart(
            small_blocks or latency, title=f"Completion latency percentiles — {name}")
    return out, notes


def build_summaries(tests: Iterable[StoredTest], *, charts: bool = True) -> list[DriveSummary]:
    """One summary per drive found in ``tests``."""
    return [build_summary(group, charts=charts) for group in group_by_drive(tests).values()]
