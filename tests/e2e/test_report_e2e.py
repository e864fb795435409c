"""End to end: a real qualification run on a loop device (real fio: the run ``conftest.py``'s
``loop_smoke_run`` shares with ``test_e2e.py``), its Allure results turned into the static HTML
report by ``ssdqual report`` (Allure 3, offline), and the report opened in
headless Chromium (Debian's ``chromium``): the rendered page must show the tests, their verdicts
and at least one chart. The screenshots are kept in the test's temp folder and copied into
``$ARTIFACTS_DIR`` when it is set.

Needs root (loop device), fio, Node.js with the Allure tool in ``tools/`` and chromium: the test
skips with the reason when one is missing -- except under CI (``CI`` set), which installs them
all (``scripts/setup.sh``), so a missing one fails there.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ssdqual.report import html as htmlreport

from ..conftest import need_root
from .conftest import SmokeRun

pytestmark = pytest.mark.e2e

#: Injected into a copy of the report before the screenshot (the report itself is untouched):
#: opens every closed tree group and chart attachment (an open one's arrow icon has the
#: ``--opened`` class), as a person clicking through would.
EXPAND_JS = """<script>(function(){
function closed(b){var s=b.querySelector('svg');
 return s!==null&&(s.getAttribute('class')||'').indexOf('--opened')<0;}
var n=0,t=setInterval(function(){
document.querySelectorAll('[data-testid="tree-arrow"]').forEach(function(b){
 if(closed(b))b.click();});
document.querySelectorAll('[data-testid="test-result-attachment-header"] button').forEach(
 function(b){if(b.textContent.indexOf('chart:')>=0&&closed(b))b.click();});
if(++n>30)clearInterval(t);},200);})();</script>"""


def _need(tool_ok: bool, reason: str) -> None:
    if tool_ok:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must have it (scripts/setup.sh installs it): {reason}")
    pytest.skip(reason)


#: What the Allure 3 page shows when its embedded data did not load in time: under
#: ``--virtual-time-budget`` a host busy with three other tests' fio let the page's fetch fail
#: ("Report Failed to fetch", CI 2026-12-06); a real browser waits. Such a load is tried again.
NOT_LOADED = "Failed to fetch"


def _chromium(url: str, *, out: Path, dump: bool = False, height: int = 1400,
              tries: int = 3) -> str:
    """Load ``url`` in headless Chromium; a screenshot to ``out`` or the rendered DOM (loaded
    again, up to ``tries`` times, while the page says ``NOT_LOADED``)."""
    profile = out.parent / f"chromium-profile-{out.stem}"
    argv = [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", f"--user-data-dir={profile}", f"--window-size=1400,{height}",
        "--virtual-time-budget=10000", "--dump-dom" if dump else f"--screenshot={out}", url,
    ]
    for _ in range(tries):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        shutil.rmtree(profile, ignore_errors=True)
        if not (dump and NOT_LOADED in proc.stdout):
            break
    assert proc.returncode == 0, proc.stderr[-2000:]
    if dump:
        out.write_text(proc.stdout)
        return proc.stdout
    assert out.stat().st_size > 10_000, proc.stderr[-2000:]
    return ""


def _keep(paths: list[Path]) -> None:
    artifacts = os.environ.get("ARTIFACTS_DIR")
    if artifacts:
        Path(artifacts).mkdir(parents=True, exist_ok=True)
        for path in paths:
            shutil.copy(path, Path(artifacts) / path.name)


def _visible_text(dom: str) -> str:
    """The text of the rendered app (scripts and the embedded data left out)."""
    app = dom[dom.find('id="app"'):]
    app = re.sub(r"<script\b.*?</script>", "", app, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", app))


def test_report_of_a_loop_device_run_renders_tests_and_charts(
    loop_smoke_run: SmokeRun, tmp_path: Path
) -> None:
    need_root("losetup")
    _need(shutil.which("fio") is not None, "fio not installed (scripts/setup.sh installs it)")
    try:
        htmlreport.find_allure()
        allure_ok, allure_why = True, ""
    except htmlreport.ReportToolMissing as exc:
        allure_ok, allure_why = False, str(exc)
    _need(allure_ok, allure_why)
    _need(shutil.which("chromium") is not None,
          "chromium not installed (scripts/setup.sh installs Debian's chromium)")

    # the eight plain workloads, one failing a limit no loop device meets (conftest.py)
    run = loop_smoke_run
    assert run.outcomes() == {"failed": 1, "passed": 7}, run.stdout[-3000:]
    assert "FAIL       Linux loop device (fw " in run.stdout  # the summary line
    alluredir = tmp_path / "allure-results"  # a copy: the run is shared
    shutil.copytree(run.alluredir, alluredir)

    report = tmp_path / "report"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ssdqual.cli", "report", str(alluredir), "-o", str(report)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    index = report / "index.html"
    page = index.read_text()
    assert "googletagmanager" not in page

    # The overview, every group opened: the tests, their drive and their statuses.
    shot_page = report / "shot.html"
    shot_page.write_text(page.replace("</body>", EXPAND_JS + "</body>"))
    overview = _visible_text(_chromium(shot_page.as_uri(), out=tmp_path / "overview.dom",
                                       dump=True))
    assert "Linux loop device (fw " in overview
    for title in ("128 KiB sequential read, QD32 — linux-loop / ",
                  "128 KiB sequential write, QD32", "4 KiB random read, QD1",
                  "4 KiB random read, QD32", "128 KiB sequential read, QD1"):
        assert title in overview, title
    overview_png = tmp_path / "report-overview.png"
    _chromium(shot_page.as_uri(), out=overview_png, height=1100)

    # One test's page (deep link #/<id>): its charts opened and rendered as images.
    results = {json.loads(p.read_text())["name"]: p for p in alluredir.glob("*-result.json")}
    name = next(n for n in results if n.startswith("4 KiB random read, QD32"))
    test_id = _report_id(index, name)
    dom = _chromium(f"{shot_page.as_uri()}#/{test_id}/attachments",
                    out=tmp_path / "test.dom", dump=True, height=2400)
    text = _visible_text(dom)
    assert "chart: bandwidth and IOPS over time" in text
    assert "chart: latency percentiles" in text
    images = re.findall(r'<img[^>]*alt="([^"]+-attachment\.png)"', dom)
    assert len(images) >= 2, images  # both charts rendered as images
    test_png = tmp_path / "report-test-charts.png"
    _chromium(f"{shot_page.as_uri()}#/{test_id}/attachments", out=test_png, height=2400)
    _keep([overview_png, test_png])


def _report_id(index: Path, name: str) -> str:
    """The id a single-file Allure 3 report gives the test called ``name`` (its deep link)."""
    import base64

    for m in re.finditer(r'd\("data/test-results/([0-9a-f]+)\.json","([A-Za-z0-9+/=]+)"\)',
                         index.read_text()):
        if json.loads(base64.b64decode(m.group(2))).get("name") == name:
            return m.group(1)
    raise AssertionError(f"{name!r} is not in the report")

