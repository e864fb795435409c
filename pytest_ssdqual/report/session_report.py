"""The session's report files, written once by the controller process at the end of a run.

Into the Allure results folder (``--alluredir``), after every test (and every pytest-xdist
worker) has finished -- so ``--clean-alluredir``, which each worker runs at start-up, cannot wipe
them:

* ``environment.properties`` -- identity, controller, NAND, firmware of each drive, fio version,
  kernel, host, profile;
* ``categories.json`` -- limit violated, regression, device or fio error, refused for safety;
* ``executor.json`` -- host / CI build that ran the session;
* ``summary/summary-<model>-<serial>.html`` and ``.md`` -- the one-page summary per drive
  (``drive_summary``), also attached, with its charts, as Allure 3 global attachments.

Plain Python (no pytest): the plugin calls ``finish_session`` from ``pytest_sessionfinish``.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path

from pytest_ssdqual.errors import SsdQualError
from pytest_ssdqual.report import allure_session
from pytest_ssdqual.report.audience import DEFAULT_AUDIENCE
from pytest_ssdqual.report.summary_page import summary_lines, write_summaries
from pytest_ssdqual.results.stored import load_results


def finish_session(
    alluredir: Path,
    *,
    drives: dict[str, dict[str, str]],
    profile: str,
    fio_version: str,
    host: Mapping[str, str],
    audience: str = DEFAULT_AUDIENCE,
) -> list[str]:
    """Write the session files and the per-drive summaries into ``alluredir``.

    Args:
        drives: drive -> facts (``DriveContext.describe()``) of every drive a test used.
        profile: run profile name. fio_version: ``fio --version``. host: ``host_facts()``.
        audience: who the summary pages are for (``audience.AUDIENCES``: ``--report-audience``).

    Returns:
        Lines for the terminal: one per drive summary (overall verdict and path), or why no
        summary was written (no results, unreadable results).
    """
    allure_session.write_environment(alluredir, drives=drives, profile=profile,
                                     fio_version=fio_version, host=dict(host))
    allure_session.write_categories(alluredir)
    try:
        tests = load_results(alluredir)
    except SsdQualError as exc:
        allure_session.write_executor(alluredir, host=host.get("host", ""),
                                      started_s=time.time(), profile=profile)
        return [f"no qualification summary: {exc}"]
    started = min((t.start_ms for t in tests if t.start_ms), default=0) / 1000 or time.time()
    allure_session.write_executor(alluredir, host=host.get("host", ""), started_s=started,
                                  profile=profile)
    written = write_summaries(alluredir, tests=tests, audience=audience)
    attachments: list[tuple[str, bytes, str, str]] = []
    for summary, html_path, md_path in written:
        attachments.append((f"summary: {summary.title}", html_path.read_bytes(), "text/html",
                            "html"))
        attachments.append((f"summary (Markdown): {summary.title}", md_path.read_bytes(),
                            "text/markdown", "md"))
        for title, png in summary.charts.items():
            attachments.append((f"{title}: {summary.title}", png, "image/png", "png"))
    if attachments:
        allure_session.write_global_attachments(alluredir, attachments)
    return summary_lines(written)
