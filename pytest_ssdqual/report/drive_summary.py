"""The one-page qualification summary per drive: self-contained HTML and Markdown.

What goes into a qualification email: the drive (model, serial, firmware, capacity), its
controller / NAND and where they came from, the run profile, the overall verdict, and every
judged limit with its measured value, margin and source; then the tests that did not pass with
their reason, and (HTML) the drive's queue-depth scaling and latency percentile charts.

Built only from stored results (``stored_results``: an Allure results folder), so
``ssdqual summary RESULTS`` regenerates it at any time without touching a drive; the plugin
writes it next to the results at the end of a session.

Every limit row names the drive state its figure was taken in (``figure_state``); a read limit
passed on media as found is ``PASS (as found)``.

Overall verdict: ``FAIL`` when a test failed or broke (limit violated, regression, fio or device
error, its pytest-xdist worker crashed) or a limit was violated / not measured; ``INCOMPLETE``
when nothing failed but tests were skipped (e.g. write tests refused for safety), interrupted
(SIGINT/SIGTERM: ``INTERRUPTED``), a limit passed only as found, or no limit was judged;
``PASS`` otherwise.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pytest_ssdqual.report import chart_data
from pytest_ssdqual.methodology.figure_state import AS_FOUND_NOTE, PASS_AS_FOUND
from pytest_ssdqual.results.record import LimitVerdict
from pytest_ssdqual.results.stored import StoredTest, group_by_drive, load_results
from pytest_ssdqual.thresholds.verdict import format_number
from pytest_ssdqual.results.journal import INTERRUPTED_PREFIX

#: Allure status -> the word the summary uses.
STATUS_WORDS = {"passed": "PASS", "failed": "FAIL", "broken": "ERROR", "skipped": "SKIPPED"}

SUMMARY_DIR = "summary"


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
            provenance (file, profile, the profile's source text), listed once per page.
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

    @classmethod
    def from_record(cls, v: LimitVerdict) -> LimitRow:
        source = f'profile "{v.profile}" in {v.file}' + (f": {v.source}" if v.source else "")
        location = f"{Path(v.file).name}:{v.line}" if v.line else Path(v.file).name
        return cls(v.workload, v.metric, v.measured, v.bound, v.margin_pct, v.word, v.marginal,
                   location, source, v.state)


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
        charts: chart title -> PNG bytes (HTML only).
    """

    facts: dict[str, str]
    overall: str
    tests: list[TestRow]
    limits: list[LimitRow]
    not_judged: int
    started: datetime | None
    finished: datetime | None
    charts: dict[str, bytes] = field(default_factory=dict)

    @property
    def title(self) -> str:
        f = self.facts
        return (f"{f.get('model', 'unknown drive')} (fw {f.get('firmware', '?')}, "
                f"S/N {f.get('serial', '?')})")

    @property
    def slug(self) -> str:
        """File-name stem: ``summary-<model>-<serial>``, safe characters only; a long one is cut
        and ends with a hash of the drive and serial, so two drives never share a name."""
        raw = f"{self.facts.get('model', 'drive')}-{self.facts.get('serial', '')}"
        safe = re.sub(r"-{2,}", "-", re.sub(r"[^A-Za-z0-9._-]+", "-", raw)).strip("-") or "drive"
        if len(safe) > 80:
            key = f"{self.facts.get('drive', '')}|{self.facts.get('serial', '')}"
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


def status_word(status: str, message: str = "") -> str:
    """The summary's word for an Allure status: ``INTERRUPTED`` for a test SIGINT/SIGTERM
    stopped (broken, message ``INTERRUPTED: ...``), else ``STATUS_WORDS``."""
    if status == "broken" and message.startswith(INTERRUPTED_PREFIX):
        return "INTERRUPTED"
    return STATUS_WORDS.get(status, status.upper())


def _first_lines(text: str, n: int = 4) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines()[:n])


def overall_verdict(tests: Sequence[TestRow], limits: Sequence[LimitRow]) -> str:
    """``FAIL``, ``INCOMPLETE`` or ``PASS`` (see the module docstring)."""
    if any(t.status in ("FAIL", "ERROR") for t in tests) or any(
        r.verdict in ("FAIL", "MISSING") for r in limits
    ):
        return "FAIL"
    if not tests or not limits or any(t.status not in ("PASS",) for t in tests):
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
        if t.status != "PASS":
            counts[t.status] = counts.get(t.status, 0) + 1
    reasons += [f"{n} test(s) {status}" for status, n in sorted(counts.items())]
    bad = sum(1 for r in limits if r.verdict in ("FAIL", "MISSING"))
    if bad:
        reasons.append(f"{bad} limit(s) violated or not measured")
    as_found = sum(1 for r in limits if r.verdict == PASS_AS_FOUND)
    if as_found:
        reasons.append(f"{as_found} limit(s) passed only on media as found")
    if not tests:
        reasons.append("no test ran")
    elif not limits:
        reasons.append("no limit was judged")
    return reasons


def build_summary(tests: Sequence[StoredTest], *, charts: bool = True) -> DriveSummary:
    """The summary of one drive's tests (all of ``tests`` belong to one drive).

    Args:
        charts: render the QD-scaling and latency charts (needs matplotlib; a few 100 ms).
    """
    facts = dict(tests[0].drive) if tests else {}
    if not facts.get("profile"):  # a test labelled without the profile: take another's
        facts["profile"] = next((t.drive["profile"] for t in tests if t.drive.get("profile")), "")
    rows = [
        TestRow(t.name, t.workload, status_word(t.status, t.message),
                "" if t.status == "passed" else _first_lines(t.message))
        for t in tests
    ]
    limits: list[LimitRow] = []
    not_judged = 0
    for t in tests:
        for v in t.verdicts:
            if v.judged:
                limits.append(LimitRow.from_record(v))
            else:
                not_judged += 1
    starts = [t.start_ms for t in tests if t.start_ms]
    stops = [t.stop_ms for t in tests if t.stop_ms]
    return DriveSummary(
        facts=facts,
        overall=overall_verdict(rows, limits),
        tests=rows,
        limits=limits,
        not_judged=not_judged,
        started=datetime.fromtimestamp(min(starts) / 1000, UTC) if starts else None,
        finished=datetime.fromtimestamp(max(stops) / 1000, UTC) if stops else None,
        charts=drive_charts(tests) if charts else {},
    )


def drive_charts(tests: Sequence[StoredTest]) -> dict[str, bytes]:
    """Queue-depth scaling (IOPS) and latency percentile curves of one drive's workloads.

    Returns:
        chart title -> PNG bytes; a chart with no data (a single queue depth, no latency
        percentiles) is left out.
    """
    from pytest_ssdqual.report import plots  # matplotlib is imported only when a chart is drawn

    name = tests[0].drive.get("model", "drive") if tests else "drive"
    out: dict[str, bytes] = {}
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
    return out


def build_summaries(tests: Iterable[StoredTest], *, charts: bool = True) -> list[DriveSummary]:
    """One summary per drive found in ``tests``."""
    return [build_summary(group, charts=charts) for group in group_by_drive(tests).values()]


def source_numbers(limits: Sequence[LimitRow]) -> dict[str, int]:
    """Each distinct limit source -> its footnote number (1-based, in order of appearance)."""
    numbers: dict[str, int] = {}
    for r in limits:
        numbers.setdefault(r.source, len(numbers) + 1)
    return numbers


def _num(value: float | None) -> str:
    return "-" if value is None else format_number(value)


def _margin(row: LimitRow) -> str:
    if row.margin_pct is None:
        return "-"
    return f"{row.margin_pct:+.1f} %" + (" (marginal)" if row.marginal else "")


def _time(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S UTC") if value else "-"


def fact_rows(s: DriveSummary) -> list[tuple[str, str]]:
    """(label, value) lines of the drive block."""
    f = s.facts
    capacity = f.get("capacity_bytes", "")
    cap = f"{int(capacity) / 1e9:.1f} GB ({int(capacity):,} bytes)" if capacity.isdigit() else "-"
    return [
        ("Drive", f.get("drive") or "-"),
        ("Model", f.get("model") or "-"),
        ("Serial", f.get("serial") or "-"),
        ("Firmware", f.get("firmware") or "-"),
        ("Capacity", cap),
        ("Transport", f.get("transport") or "-"),
        ("Controller", f.get("controller") or "unknown"),
        ("NAND", f.get("nand") or "unknown"),
        ("Controller/NAND from", f.get("assignment_source") or "-"),
        ("Threshold profiles", f.get("threshold_profiles") or "-"),
        ("Run profile", f.get("profile") or "-"),
        ("Run", f"{_time(s.started)} to {_time(s.finished)}"),
    ]


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def render_markdown(s: DriveSummary) -> str:
    """The summary as Markdown (tables; no images)."""
    why = overall_reasons(s.tests, s.limits) if s.overall != "PASS" else []
    lines = [f"# Qualification summary: {s.title}", "",
             f"**Overall: {s.overall}**" + (f" ({'; '.join(why)})" if why else ""), ""]
    lines += ["| | |", "|---|---|"]
    lines += [f"| {k} | {_md_cell(v)} |" for k, v in fact_rows(s)]
    lines += ["", "## Limits", ""]
    if s.limits:
        refs = source_numbers(s.limits)
        lines += ["| workload | metric | drive state | measured | limit | margin | verdict | "
                  "source |", "|---|---|---|---:|---|---:|---|---|"]
        lines += [
            f"| {r.workload} | {r.metric} | {_md_cell(r.state or '-')} | {_num(r.measured)} | "
            f"{_md_cell(r.limit)} | {_margin(r)} | {r.verdict} | {r.location} "
            f"[{refs[r.source]}] |"
            for r in s.limits
        ]
        if any(r.verdict == PASS_AS_FOUND for r in s.limits):
            lines += ["", AS_FOUND_NOTE]
        lines += ["", "Sources:", ""]
        lines += [f"{n}. {_md_cell(src)}" for src, n in refs.items()]
    else:
        lines.append("No limit was judged.")
    lines += ["", f"{s.not_judged} measured metrics had no limit (not judged).", "",
              "## Tests", "", "| test | workload | status | reason |", "|---|---|---|---|"]
    lines += [f"| {_md_cell(t.name)} | {t.workload} | {t.status} | {_md_cell(t.reason)} |"
              for t in s.tests]
    return "\n".join(lines) + "\n"


_CSS = """
body{font-family:DejaVu Sans,Arial,sans-serif;margin:24px;color:#222;max-width:1100px}
h1{font-size:20px;margin:0 0 8px}h2{font-size:16px;margin:22px 0 8px}
table{border-collapse:collapse;font-size:13px;margin-bottom:8px}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.PASS{color:#17803d;font-weight:bold}.FAIL,.ERROR,.MISSING{color:#c0262d;font-weight:bold}
.SKIPPED,.INCOMPLETE,.INTERRUPTED{color:#a86400;font-weight:bold}
.overall{font-size:22px;padding:6px 14px;border:2px solid;display:inline-block;margin:6px 0}
img{max-width:100%;border:1px solid #ddd;margin:6px 0}pre{margin:0;white-space:pre-wrap}
ol.sources{font-size:12px;color:#444}
"""


def render_html(s: DriveSummary) -> str:
    """The summary as one self-contained HTML page (inline CSS, charts as data: URIs)."""
    e = html.escape
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'>",
        f"<title>Qualification summary: {e(s.title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>Qualification summary: {e(s.title)}</h1>",
        f"<div class='overall {s.overall}'>Overall: {s.overall}</div>",
        "".join(f"<p class='why'>{e(r)}</p>" for r in (
            overall_reasons(s.tests, s.limits) if s.overall != "PASS" else [])),
        "<table>" + "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in fact_rows(s))
        + "</table>",
        "<h2>Limits</h2>",
    ]
    if s.limits:
        refs = source_numbers(s.limits)
        parts.append(
            "<table><tr><th>workload</th><th>metric</th><th>drive state</th><th>measured</th>"
            "<th>limit</th><th>margin</th><th>verdict</th><th>source</th></tr>"
            + "".join(
                f"<tr><td>{e(r.workload)}</td><td>{e(r.metric)}</td><td>{e(r.state or '-')}</td>"
                f"<td class='num'>{_num(r.measured)}</td><td>{e(r.limit)}</td>"
                f"<td class='num'>{e(_margin(r))}</td>"
                f"<td class='{r.verdict.split()[0]}'>{e(r.verdict)}</td>"
                f"<td>{e(r.location)} <sup>[{refs[r.source]}]</sup></td></tr>"
                for r in s.limits
            )
            + "</table>"
            + (f"<p>{e(AS_FOUND_NOTE)}</p>"
               if any(r.verdict == PASS_AS_FOUND for r in s.limits) else "")
            + "<p>Sources:</p><ol class='sources'>"
            + "".join(f"<li>{e(src)}</li>" for src in refs)
            + "</ol>"
        )
    else:
        parts.append("<p>No limit was judged.</p>")
    parts.append(f"<p>{s.not_judged} measured metrics had no limit (not judged).</p>")
    parts.append(
        "<h2>Tests</h2><table><tr><th>test</th><th>workload</th><th>status</th><th>reason</th>"
        "</tr>"
        + "".join(
            f"<tr><td>{e(t.name)}</td><td>{e(t.workload)}</td>"
            f"<td class='{t.status}'>{e(t.status)}</td><td><pre>{e(t.reason)}</pre></td></tr>"
            for t in s.tests
        )
        + "</table>"
    )
    for title, png in s.charts.items():
        data = base64.b64encode(png).decode("ascii")
        parts.append(
            f"<h2>{e(title)}</h2><img alt='{e(title)}' src='data:image/png;base64,{data}'>"
        )
    parts.append("<p style='color:#888;font-size:11px'>pytest-ssdqual qualification summary</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_summary(s: DriveSummary, out_dir: Path) -> tuple[Path, Path]:
    """Write ``<slug>.html`` and ``<slug>.md`` into ``out_dir``; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    html_path = out_dir / f"{s.slug}.html"
    md_path = out_dir / f"{s.slug}.md"
    html_path.write_text(render_html(s))
    md_path.write_text(render_markdown(s))
    return html_path, md_path


def write_summaries(results_dir: Path, out_dir: Path | None = None,
                    tests: Sequence[StoredTest] | None = None
                    ) -> list[tuple[DriveSummary, Path, Path]]:
    """Build and write every drive's summary from a results folder.

    Args:
        results_dir: the Allure results folder (``--alluredir``).
        out_dir: where to write; default ``<results_dir>/summary``.
        tests: already loaded results (else read from ``results_dir``).

    Returns:
        (summary, HTML path, Markdown path) per drive.

    Raises:
        ConfigError: the folder is missing or holds no results.
    """
    loaded = list(tests) if tests is not None else load_results(results_dir)
    target = out_dir if out_dir is not None else results_dir / SUMMARY_DIR
    return [(s, *write_summary(s, target)) for s in build_summaries(loaded)]


def summary_lines(written: Iterable[tuple[DriveSummary, Path, Path]]) -> list[str]:
    """One terminal line per drive: overall verdict and where the files are."""
    return [f"{s.overall:10} {s.title}: {h} (+ .md)" for s, h, _m in written]
