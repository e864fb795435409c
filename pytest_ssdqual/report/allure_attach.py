"""Allure steps and attachments of a running test (only report/'s Allure writers import
allure: tests/unit/test_layout.py).

Steps: ``phase(name)`` around each phase (purge, precondition, rounds, idle, measure, judge).
Attachments: the verdict table (HTML and JSON), the metrics, PNG charts (``plots`` via
``chart_data``), the fio job, fio's output and per-second logs (CSV), a methodology test's
record, the regression gate's lines. The names of what summaries read back are in
``results.stored``. Without ``--alluredir`` allure-pytest registers no listener: these calls do
nothing and no chart is drawn.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import allure

from pytest_ssdqual.methodology.curves import curves_to_json
from pytest_ssdqual.methodology.figure_state import AS_FOUND_NOTE, read_as_found
from pytest_ssdqual.results.stored import (
    ATTACH_REGRESSION_JSON,
    ATTACH_VERDICTS_JSON,
    LOG_CSV_HEADER,
)

if TYPE_CHECKING:
    from pytest_ssdqual.errors import FioError
    from pytest_ssdqual.fio.job import JobPlan
    from pytest_ssdqual.fio.runner import FioRun
    from pytest_ssdqual.methodology.base import MethodologyOutcome
    from pytest_ssdqual.qualify.session import WorkloadOutcome
    from pytest_ssdqual.results.record import TestRecord

__all__ = [
    "attach_failure_output",
    "attach_methodology",
    "attach_methodology_charts",
    "attach_png",
    "attach_regression",
    "attach_run",
    "attach_text",
    "attach_verdicts",
    "attach_workload_charts",
    "phase",
    "recording",
]


def attach_run(plan: JobPlan, run: FioRun | None) -> None:
    """Attach the fio job file, fio's raw output and the per-second logs as CSV."""
    allure.attach(plan.text, name="fio job", attachment_type=allure.attachment_type.TEXT,
                  extension="fio")
    if run is None:
        return
    if run.raw_output:
        allure.attach(run.raw_output, name="fio output (JSON)",
                      attachment_type=allure.attachment_type.JSON)
    if run.stderr.strip():
        allure.attach(run.stderr, name="fio stderr", attachment_type=allure.attachment_type.TEXT)
    for log in sorted(run.job_path.parent.glob("log_*.log")):
        allure.attach(
            LOG_CSV_HEADER + "\n" + log.read_text(),
            name=f"per-second log {log.name}",
            attachment_type=allure.attachment_type.CSV,
        )


def attach_text(text: str, name: str) -> None:
    """Attach plain text under ``name`` (a host note, the drive health reading)."""
    allure.attach(text, name=name, attachment_type=allure.attachment_type.TEXT)


def attach_failure_output(exc: FioError) -> None:
    """Attach what fio printed when it failed (the test is broken with the error); when it
    printed nothing (killed, not installed) the attachment says so, with the reason."""
    text = exc.raw_output if exc.raw_output and exc.raw_output.strip() else (
        f"(fio printed nothing: {exc})"
    )
    allure.attach(text, name="fio raw output (failed run)",
                  attachment_type=allure.attachment_type.TEXT)


def attach_verdicts(record: TestRecord) -> None:
    """Attach the test record's verdict table (HTML, with the drive state of each figure; a
    read limit passed on media as found reads ``PASS (as found)``), its metrics (JSON) and its
    verdicts (JSON: ``record.LimitVerdict.to_json`` each, read back by ``results.stored``)."""
    records, states = record.verdicts, record.states
    rows = [
        "<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in (
            v.metric, "-" if v.measured is None else f"{v.measured:.6g}", v.limit or "-",
            "-" if v.margin_pct is None else f"{v.margin_pct:+.1f} %", v.word, v.state,
            v.provenance)) + "</tr>"
        for v in records
    ]
    table = (
        "<table border='1' cellpadding='4' style='border-collapse:collapse'>"
        "<tr><th>metric</th><th>measured</th><th>limit</th><th>margin</th><th>verdict</th>"
        "<th>drive state</th><th>provenance</th></tr>" + "".join(rows) + "</table>"
        + (f"<p>{html.escape(AS_FOUND_NOTE)}</p>"
           if any(read_as_found(s) for s in states.values()) else "")
    )
    allure.attach(table, name="verdicts", attachment_type=allure.attachment_type.HTML)
    allure.attach(json.dumps(dict(record.metrics), indent=2, sort_keys=True), name="metrics",
                  attachment_type=allure.attachment_type.JSON)
    allure.attach(json.dumps([v.to_json() for v in records], indent=1), name=ATTACH_VERDICTS_JSON,
                  attachment_type=allure.attachment_type.JSON)


def attach_png(name: str, png: bytes) -> None:
    """Attach one PNG chart (``plots`` functions return PNG bytes), e.g. a steady-state chart
    a methodology test draws with ``plots.steady_state_chart``."""
    allure.attach(png, name=name, attachment_type=allure.attachment_type.PNG)


def recording() -> bool:
    """True when Allure results are being written (``--alluredir``: allure-pytest registered
    allure-python-commons' file logger). Charts are drawn only then."""
    import allure_commons
    from allure_commons.logger import AllureFileLogger

    return any(isinstance(p, AllureFileLogger)
               for p in allure_commons.plugin_manager.get_plugins())


def attach_workload_charts(outcome: WorkloadOutcome, record: TestRecord, *, title: str,
                           baseline: tuple[str, Mapping[str, float]] | None = None,
                           runs: Sequence[WorkloadOutcome] = ()) -> list[str]:
    """Draw and attach the charts of one fio workload run: bandwidth/IOPS per second with the
    limits (from fio's logs next to the job file) and the regression gate's ``baseline``
    figures (``BaselineFinder.figures``), latency percentiles with the latency limits (those
    of the test's ``record``), IOPS
    per phase, and the latency exceedance of the histograms of all ``runs`` summed (default:
    ``outcome``'s run; ``report.exceedance``). Returns the attachment names, in order (none
    without ``--alluredir``)."""
    if not recording():
        return []
    # matplotlib: imported when a chart is drawn
    from pytest_ssdqual.report.chart_data import charts_for_test

    logs = {p.name: p.read_text() for p in sorted(outcome.run.job_path.parent.glob("log_*.log"))}
    charts = charts_for_test(
        title=title, logs=logs, metrics=outcome.metrics,
        verdicts=list(record.verdicts), baseline=baseline,
    )
    from pytest_ssdqual.report.chart_data import CHART_OVER_TIME, throughput_panels
    from pytest_ssdqual.report.temperature_chart import with_temperature_chart

    with_temperature_chart(charts, CHART_OVER_TIME, throughput_panels(  # the drive's temperature
        logs, list(record.verdicts), baseline),
        outcome.run.job_path.parent / "temperature.csv", title=title)
    from pytest_ssdqual.report.chart_data import latency_limits
    from pytest_ssdqual.report.exceedance import (
        CHART_EXCEEDANCE,
        exceedance_chart,
        merged_histograms,
    )

    histograms = merged_histograms([o.result for o in runs] or [outcome.result])
    if histograms:
        charts[CHART_EXCEEDANCE] = exceedance_chart(
            histograms, title=title, limits=latency_limits(record.verdicts))
    for name, png in charts.items():
        attach_png(name, png)
    return list(charts)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """An Allure step around one phase of a test: purge, precondition, a round, idle, measure,
    judge. Allure shows each step with its start and duration, and marks it failed or broken
    when the block raises. Without ``--alluredir`` it does nothing.

    Example::

        with allure_attach.phase("precondition: 2x span, sequential 128 KiB writes"):
            ...
    """
    with allure.step(name):
        yield


def attach_methodology(outcome: MethodologyOutcome, record: TestRecord) -> None:
    """Attach a methodology test's record: notes (purge method, steady-state verdict, SLC cliff,
    recovery), the per-round table and the per-second log (CSV), the drive state of every
    metric (JSON), each distinct fio job file, then the verdicts and metrics (of the test's
    ``record``)."""
    result = outcome.result
    allure.attach("\n".join(result.notes) + "\n", name="methodology notes",
                  attachment_type=allure.attachment_type.TEXT)
    allure.attach(result.rounds_csv(), name="rounds", attachment_type=allure.attachment_type.CSV)
    allure.attach(result.per_second_csv(), name="per-second log",
                  attachment_type=allure.attachment_type.CSV)
    allure.attach(json.dumps(result.states, indent=2, sort_keys=True),
                  name="drive state of each metric", attachment_type=allure.attachment_type.JSON)
    if result.curves:
        allure.attach(curves_to_json(result.curves), name="curves",
                      attachment_type=allure.attachment_type.JSON)
    for name, text in result.tables.items():  # the SNIA PTS tests' report tables
        allure.attach(text, name=name, attachment_type=allure.attachment_type.CSV
                      if name.endswith(".csv") else allure.attachment_type.TEXT)
    seen: set[str] = set()
    for step in result.steps:
        if step.job.name in seen:
            continue
        seen.add(step.job.name)
        allure.attach(step.job_run.job_text, name=f"fio job {step.job.name}",
                      attachment_type=allure.attachment_type.TEXT, extension="fio")
    attach_verdicts(record)
    attach_methodology_charts(outcome, record)


def attach_methodology_charts(outcome: MethodologyOutcome, record: TestRecord) -> list[str]:
    """Draw and attach a methodology test's charts from its stored tables (the ``rounds`` and
    ``per-second log`` CSV): bandwidth/IOPS over the test per phase with the limits, the
    steady-state window with its fit line, bandwidth by fill state, IOPS per phase. Returns
    the attachment names (none without ``--alluredir``)."""
    if not recording():
        return []
    # matplotlib: imported here
    from pytest_ssdqual.report.chart_data import curve_charts, methodology_charts
    from pytest_ssdqual.report.pts_charts import pts_charts as pts_table_charts

    result = outcome.result
    charts = methodology_charts(
        title=result.workload.title, rounds_csv=result.rounds_csv(),
        per_second_csv=result.per_second_csv(), metrics=result.metrics,
        verdicts=list(record.verdicts),
    )
    charts.update(curve_charts(result.curves, title=result.workload.title))  # swept axes
    if result.steps:  # the drive's temperature on the bandwidth chart's second y-axis
        from pytest_ssdqual.report.chart_data import CHART_OVER_TIME, methodology_panels
        from pytest_ssdqual.report.temperature_chart import with_temperature_chart

        with_temperature_chart(charts, CHART_OVER_TIME, methodology_panels(
            result.per_second_csv(), list(record.verdicts)),
            result.steps[0].job_run.workdir.parent / "temperature.csv",
            title=result.workload.title)
    from pytest_ssdqual.report.pts_wsat_hir_charts import pts_charts  # WSAT, HIR: over time

    charts.update(pts_charts(result.curves, title=result.workload.title))
    charts.update(pts_table_charts(result.tables, title=result.workload.title))  # PTS tables
    for name, png in charts.items():
        attach_png(name, png)
    return list(charts)


def attach_regression(rows: list[dict[str, Any]]) -> None:
    """Attach the regression gate's comparisons (``GateResult.rows``): one line per gated
    metric with its status (regressed, inconclusive, improved, within limit, ...) as text, and
    the rows as JSON (``regression (JSON)``, read back by ``results.stored``: the summary page
    names the baseline and draws its figure)."""
    if rows:
        allure.attach("\n".join(f"{r['status']}: {r['line']}" for r in rows) + "\n",
                      name="regression vs baseline", attachment_type=allure.attachment_type.TEXT)
        allure.attach(json.dumps(rows, indent=1), name=ATTACH_REGRESSION_JSON,
                      attachment_type=allure.attachment_type.JSON)
