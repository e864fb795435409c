"""``ssdqual report`` / ``ssdqual summary``: the static HTML report built offline with Allure 3,
its safety around the output folder, its history across runs, and clear errors when Node.js or
Allure is missing. The builds use the real Allure 3 tool that ``scripts/setup.sh`` installs in
``tools/`` (skipped with the reason when it is not installed; CI installs it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ssdqual.cli.main import main
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.report import html as htmlreport

from .test_drive_summary import _e12_run, write_result

ALLURE = htmlreport.TOOLS_DIR / "node_modules" / ".bin" / "allure"


def need_allure() -> None:
    """Skip (fail under CI, which installs it) when Node.js or the Allure tool is missing."""
    try:
        htmlreport.find_allure()
    except htmlreport.ReportToolMissing as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must have the report tool: {exc}")
        pytest.skip(str(exc))


def test_strip_analytics_removes_the_external_and_inline_tracking_scripts() -> None:
    page = (
        '<head><script>window.allureReportOptions = {"name": "x"}</script>'
        '<script async src="https://www.googletagmanager.com/gtag/js?id=G-1"></script>'
        "<script>\n window.dataLayer = window.dataLayer || [];\n function gtag(){}\n"
        " gtag('js', new Date());\n</script>"
        '<script src="data:text/javascript;base64,QUJD"></script></head>'
    )
    out = htmlreport.strip_analytics(page)
    assert "googletagmanager" not in out and "gtag" not in out
    assert "window.allureReportOptions" in out and "base64,QUJD" in out


def test_missing_node_or_allure_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(htmlreport.ReportToolMissing, match=r"Node.js \(node\) is not installed: "
                       r"run scripts/setup.sh"):
        htmlreport.find_allure(env={"PATH": str(tmp_path)})
    node_dir = tmp_path / "bin"
    node_dir.mkdir()
    (node_dir / "node").write_text("#!/bin/sh\n")
    (node_dir / "node").chmod(0o755)
    with pytest.raises(htmlreport.ReportToolMissing, match="nowhere/allure not found.*setup.sh"):
        htmlreport.find_allure("/nowhere/allure", env={"PATH": str(node_dir)})


def test_report_refuses_unsafe_output_folders_and_bad_history(tmp_path: Path) -> None:
    results = tmp_path / "results"
    _e12_run(results)
    other = tmp_path / "precious"
    other.mkdir()
    (other / "thesis.txt").write_text("keep me")
    with pytest.raises(ConfigError, match="not a report built by ssdqual"):
        htmlreport._prepare_output(other, results)
    assert (other / "thesis.txt").exists()
    with pytest.raises(ConfigError, match="would contain the results"):
        htmlreport._prepare_output(tmp_path, results)
    bad = tmp_path / "history.jsonl"
    bad.write_text('{"ok": 1}\nnot json\n')
    with pytest.raises(ConfigError, match=r"history.jsonl:2: --history: not an Allure history"):
        htmlreport._read_history(bad)
    assert htmlreport._read_history(tmp_path / "new.jsonl") == b""


def test_cli_errors_exit_4_for_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                         ) -> None:
    assert main(["report", str(tmp_path / "none"), "-o", str(tmp_path / "out")]) == 4
    assert "does not exist" in capsys.readouterr().err
    assert main(["summary", str(tmp_path)]) == 4
    assert "holds no Allure results" in capsys.readouterr().err


def test_summary_command_regenerates_the_pages(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    results = tmp_path / "results"
    _e12_run(results)
    assert main(["summary", str(results), "-o", str(tmp_path / "pages")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"summaries in {tmp_path / 'pages'}:\nPASS       Phison E12 NVMe 1TB "
                          "(fw ECFM11.0, S/N S3Z9NB0K123456): summary-Phison-E12-NVMe-1TB-")
    assert (tmp_path / "pages" / "summary-Phison-E12-NVMe-1TB-S3Z9NB0K123456.md").exists()


def _embedded_results(index: Path) -> list[dict]:
    """The test results embedded in a single-file Allure 3 report."""
    import base64

    page = index.read_text()
    return [json.loads(base64.b64decode(m.group(1)))
            for m in re.finditer(r'd\("data/test-results/[0-9a-f]+\.json","([A-Za-z0-9+/=]+)"\)',
                                 page)]


def test_report_builds_offline_and_continues_its_history(tmp_path: Path) -> None:
    need_allure()
    results = tmp_path / "results"
    _e12_run(results, read_iops=150_000.0)
    write_result(results, name="seq write", workload="seq_write_128k_qd32", status="skipped",
                 message="Skipped: write to /dev/nvme0n1 refused: not confirmed", start=9_000)
    out = tmp_path / "report"
    first = htmlreport.build_report(results, out)
    assert first.index == out / "index.html" and first.tests == 3
    page = first.index.read_text()
    assert "googletagmanager" not in page and "gtag(" not in page
    assert re.search(
        r"<title>\s*SSD qualification: Phison E12 NVMe 1TB \(fw ECFM11.0\)\s*</title>", page)
    embedded = {r["name"]: r for r in _embedded_results(first.index)}
    assert embedded["4 KiB random read, QD32 — PS5012-E12 / BiCS3 / ECFM11.0"]["status"] == (
        "failed")
    assert len(first.history.read_text().splitlines()) == 1

    second = htmlreport.build_report(results, out, history=out, name="ECFM11.0 vs ECFM10.3")
    assert len(second.history.read_text().splitlines()) == 2  # the previous run + this one
    assert re.search(r"<title>\s*ECFM11.0 vs ECFM10.3\s*</title>", second.index.read_text())

    shared = tmp_path / "lab-history.jsonl"
    htmlreport.build_report(results, tmp_path / "r3", history=shared)
    htmlreport.build_report(results, tmp_path / "r4", history=shared)
    assert len(shared.read_text().splitlines()) == 2


def test_report_command_line(tmp_path: Path) -> None:
    need_allure()
    results = tmp_path / "results"
    _e12_run(results)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ssdqual.cli", "report", str(results), "-o",
         str(tmp_path / "report")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"report: {tmp_path / 'report' / 'index.html'} (2 tests, built")
