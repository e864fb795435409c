"""The per-drive qualification summary as pages: self-contained HTML and Markdown, written
next to the results (``drive_summary`` builds what they show).

Each page: the overall verdict, then every reason the drive did not pass, one line each
(``drive_summary.reason_lines``: limits, regressions with their figures and the baseline run and
firmware, other tests), the baseline(s) it was compared with, then the drive block
(``fact_rows``), every judged limit with its drive state, measured value, margin, verdict and a
footnoted source (``source_numbers``), the tests, and (HTML) the drive's charts (a regressed
workload's with its baseline figure drawn). Written for an audience (``audience``: ``customer``
by default, without host paths and the profiles' notes; ``lab``: everything).
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterable, Sequence
from datetime import datetime
from pathlib import Path

from pytest_ssdqual.methodology.figure_state import AS_FOUND_NOTE, PASS_AS_FOUND
from pytest_ssdqual.report.audience import DEFAULT_AUDIENCE, for_audience
from pytest_ssdqual.report.drive_summary import (
    DriveSummary,
    LimitRow,
    build_summaries,
    overall_reasons,
    reason_lines,
)
from pytest_ssdqual.report.summary import fit_lines
from pytest_ssdqual.results.stored import StoredTest, load_results
from pytest_ssdqual.thresholds.verdict import format_number

SUMMARY_DIR = "summary"


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
    reasons = reason_lines(s)
    if reasons:
        lines += ["Why it did not pass:", ""] + [f"- {_md_cell(r)}" for r in reasons] + [""]
    if s.baselines:
        lines += [f"Compared with baseline {'; '.join(s.baselines)}.", ""]
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
        ("<p>Why it did not pass:</p><ul class='reasons'>"
         + "".join(f"<li>{e(r)}</li>" for r in reason_lines(s)) + "</ul>"
         if reason_lines(s) else ""),
        (f"<p class='baseline'>Compared with baseline {e('; '.join(s.baselines))}.</p>"
         if s.baselines else ""),
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
        note = s.chart_notes.get(title)
        parts.append(
            f"<h2>{e(title)}</h2><img alt='{e(title)}' src='data:image/png;base64,{data}'>"
            + (f"<p class='chart-note'>Lines: {e(note)}</p>" if note else "")
        )
    parts.append("<p style='color:#888;font-size:11px'>pytest-ssdqual qualification summary</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_summary(s: DriveSummary, out_dir: Path) -> tuple[Path, Path]:
    """Write ``<slug>.html`` and ``<slug>.md`` of ``s`` as it is (``audience.for_audience``
    makes the copy for an audience) into ``out_dir``; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    html_path = out_dir / f"{s.slug}.html"
    md_path = out_dir / f"{s.slug}.md"
    html_path.write_text(render_html(s))
    md_path.write_text(render_markdown(s))
    return html_path, md_path


def write_summaries(results_dir: Path, out_dir: Path | None = None,
                    tests: Sequence[StoredTest] | None = None, *,
                    audience: str = DEFAULT_AUDIENCE) -> list[tuple[DriveSummary, Path, Path]]:
    """Build and write every drive's summary from a results folder.

    Args:
        results_dir: the Allure results folder (``--alluredir``).
        out_dir: where to write; default ``<results_dir>/summary``.
        tests: already loaded results (else read from ``results_dir``).
        audience: ``customer`` or ``lab`` (``audience.AUDIENCES``).

    Returns:
        (summary as written for the audience, HTML path, Markdown path) per drive.

    Raises:
        ConfigError: the folder is missing or holds no results.
        ValueError: an unknown audience.
    """
    loaded = list(tests) if tests is not None else load_results(results_dir)
    target = out_dir if out_dir is not None else results_dir / SUMMARY_DIR
    views = [for_audience(s, audience) for s in build_summaries(loaded)]
    return [(s, *write_summary(s, target)) for s in views]


def summary_lines(written: Iterable[tuple[DriveSummary, Path, Path]]) -> list[str]:
    """Terminal lines: per folder ``summaries in FOLDER:``, then per drive its overall verdict,
    title and file name (``FAIL       Scratch file (fw ..., S/N ...): summary-....html (+ .md)``),
    wrapped at 120 columns (the folder's path on every drive's line made it too long)."""
    lines: list[str] = []
    folder: Path | None = None
    for s, h, _m in written:
        if h.parent != folder:
            folder = h.parent
            lines += fit_lines(f"summaries in {folder}:")
        lines += fit_lines(f"{s.overall:10} {s.title}: {h.name} (+ .md)")
    return lines
