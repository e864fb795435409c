"""The per-drive summary of a build that failed the regression gate, as a customer gets it:
the reasons (and the baseline) before any table, the regressed workload's chart with the
baseline figure, and no host paths or internal profile notes unless the page is for the lab."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_ssdqual.cli.main import main
from pytest_ssdqual.report import chart_data, drive_summary, summary_page
from pytest_ssdqual.results.stored import LOG_CSV_HEADER, load_results

from .test_drive_summary import write_result

LAB = "/srv/lab-host-07/qual"
FACTS = {"drive": f"file:{LAB}/target.img", "model": "Scratch file",
         "serial": f"{LAB}/target.img", "identity": f"{LAB}/target.img", "firmware": "B",
         "capacity_bytes": "134217728", "transport": "file", "controller": "host-file",
         "nand": "host-fs", "assignment_source": f"built-in ({LAB}/inventory.yaml)",
         "threshold_profiles": "Scratch file (virtual.yaml)", "profile": "smoke"}
NOTE = "internal: floors measured on the dev VM by the lab, not for customers"
#: What the gate stores for the regressed write (``GateResult.rows``).
GATE_ROW = {"drive": FACTS["drive"], "workload": "seq_write_128k_qd32",
            "metric": "write.bw_mbps", "status": "regressed", "failed": True,
            "line": "write.bw_mbps 1200 vs 2405 on A (\u221250.1 %, limit \u22125 %) "
                    "[single runs: no noise estimate, judged on the figures alone]",
            "baseline_run": "20261205-101500-aaaa", "method": "single runs",
            "baseline_n": 1, "runs_needed": None, "value": 1200.0, "baseline": 2405.0,
            "change_pct": (1200 - 2405) / 2405 * 100, "allowed": "\u22125 %",
            "baseline_firmware": "A"}
#: fio's write bandwidth log (KiB/s): ~1,200 MB/s for three seconds.
BW_LOG = LOG_CSV_HEADER + "".join(f"\n{t}, 1171875, 1, 0, 0" for t in (1000, 2000, 3000))


def _failed_gate(folder: Path) -> None:
    """A write that passes its 50 MB/s floor but fails the gate (2,405 -> 1,200 MB/s)."""
    write_result(
        folder, name="128 KiB sequential write, QD32", workload="seq_write_128k_qd32",
        status="failed", facts=FACTS,
        message=(f"Failed: REGRESSION: {FACTS['drive']} seq_write_128k_qd32: 1 metric(s) "
                 f"regressed vs baseline run {GATE_ROW['baseline_run']}\n  {GATE_ROW['line']}"),
        metrics={"write.bw_mbps": 1200.0},
        verdicts=[{"workload": "seq_write_128k_qd32", "metric": "write.bw_mbps",
                   "measured": 1200.0, "status": "pass", "margin_pct": 2300.0,
                   "marginal": False, "limit": "write.bw_mbps >= 50", "min": 50.0, "max": None,
                   "file": f"{LAB}/thresholds/virtual.yaml", "line": 52,
                   "profile": "Scratch file (virtual)", "source": NOTE}],
        texts={"regression (JSON)": json.dumps([GATE_ROW]),
               "per-second log log_bw.1.log": BW_LOG})
    write_result(folder, name="128 KiB sequential read, QD32", workload="seq_read_128k_qd32",
                 status="skipped", facts=FACTS, start=3_000,
                 message=f"Skipped: write to {FACTS['drive']} refused: not confirmed")


REASON = ("REGRESSION seq_write_128k_qd32 write.bw_mbps: 1200 vs baseline 2405 (\u221250.1 %, "
          "allowed \u22125 %); baseline run 20261205-101500-aaaa (firmware A)")


def _without_images(page: str) -> str:
    return re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "data:...", page)


def test_the_reasons_and_the_baseline_come_before_any_table(tmp_path: Path) -> None:
    _failed_gate(tmp_path / "results")
    [s] = drive_summary.build_summaries(load_results(tmp_path / "results"), charts=False)
    assert s.overall == "FAIL" and [r.verdict for r in s.limits] == ["PASS"]
    assert drive_summary.reason_lines(s) == [
        REASON, "SKIPPED 128 KiB sequential read, QD32: Skipped: write to "
        f"{FACTS['drive']} refused: not confirmed"]
    md = summary_page.render_markdown(s)
    first_table = md.index("\n|")
    assert md.index("**Overall: FAIL**") < md.index(f"- {REASON}") < first_table
    assert md.index("Compared with baseline run 20261205-101500-aaaa (firmware A).") < first_table
    page = summary_page.render_html(s)
    assert page.index(f"<li>{REASON}</li>") < page.index("<table>")
    assert page.index("Compared with baseline run 20261205-101500-aaaa") < page.index("<table>")


def test_a_passing_drive_has_no_reasons(tmp_path: Path) -> None:
    from .test_drive_summary import _e12_run

    _e12_run(tmp_path / "results")
    [s] = drive_summary.build_summaries(load_results(tmp_path / "results"), charts=False)
    assert s.overall == "PASS" and drive_summary.reason_lines(s) == []
    assert "Why it did not pass" not in summary_page.render_markdown(s)


def test_the_regressed_workloads_chart_draws_the_baseline(tmp_path: Path) -> None:
    _failed_gate(tmp_path / "results")
    tests = load_results(tmp_path / "results")
    [(title, [panel])] = drive_summary.regression_panels(tests).items()
    assert title == "Regression: seq_write_128k_qd32 vs baseline run 20261205-101500-aaaa"
    assert panel.ylabel == "bandwidth (MB/s)"
    assert dict(panel.baselines) == {
        "baseline write.bw_mbps 2405 (run 20261205-101500-aaaa, firmware A)": 2405.0}
    assert dict(panel.limits) == {"write.bw_mbps >= 50": 50.0}
    assert panel.lines["write"][1] == pytest.approx((1200.0,) * 3)
    [s] = drive_summary.build_summaries(tests)
    page = summary_page.render_html(s)
    assert f"<h2>{title}</h2>" in page
    assert ("Lines: baseline write.bw_mbps 2405 (run 20261205-101500-aaaa, firmware A) "
            "(dash-dot line); limit write.bw_mbps &gt;= 50 (dashed line)") in page
    # the per-test chart takes the same baseline (the plugin passes BaselineFinder.figures)
    charts = chart_data.charts_for_test(title="t", logs={"log_bw.1.log": BW_LOG}, metrics={},
                                        verdicts=[], baseline=("run R, firmware A",
                                                               {"write.bw_mbps": 2405.0}))
    assert list(charts) == [chart_data.CHART_OVER_TIME]


def test_a_customer_page_has_no_host_paths_or_internal_notes(tmp_path: Path) -> None:
    _failed_gate(tmp_path / "results")
    [(s, html_path, md_path)] = summary_page.write_summaries(tmp_path / "results")
    md, page = md_path.read_text(), _without_images(html_path.read_text())
    for text in (md, page):
        assert LAB not in text and "/srv" not in text and NOTE not in text
        assert not re.search(r"(?<![\w./~-])/[\w.-]+/", text), text
    assert 'profile "Scratch file (virtual)" in virtual.yaml' in md
    assert "| seq_write_128k_qd32 | write.bw_mbps | - | 1200 | >= 50 |" in md
    assert s.title == "Scratch file (fw B, S/N target.img)"
    assert "| Drive | target.img |" in md
    assert "Skipped: write to target.img refused" in md
    # the lab's page keeps everything; both have the same file name
    [(_, lab_html, lab_md)] = summary_page.write_summaries(
        tmp_path / "results", tmp_path / "lab", audience="lab")
    assert lab_md.name == md_path.name and lab_html.name == html_path.name
    lab = lab_md.read_text()
    assert f'profile "Scratch file (virtual)" in {LAB}/thresholds/virtual.yaml: {NOTE}' in lab
    assert f"| Drive | file:{LAB}/target.img |" in lab


def test_a_customer_page_hides_the_lab_hosts_name(tmp_path: Path) -> None:
    from pytest_ssdqual.report import audience

    write_result(tmp_path / "r", name="4 KiB random read, QD32", workload="rand_read_4k_qd32",
                 status="broken", facts=FACTS,
                 message="DeviceError: target.img is in use by another pytest-ssdqual run "
                         "(pid 4242 on lab-host-07.example.net)")
    [s] = drive_summary.build_summaries(load_results(tmp_path / "r"), charts=False)
    shown = summary_page.render_markdown(audience.for_customer(
        s, hosts=("lab-host-07.example.net", "lab-host-07")))
    assert "lab-host-07" not in shown and "(pid 4242 on (lab host))" in shown


def test_scrub_paths_leaves_units_and_ratios() -> None:
    from pytest_ssdqual.report import audience

    assert audience.scrub_paths("write 400 MB/s, 1/2 of /dev/sdb; file:/tmp/a/b.img") == (
        "write 400 MB/s, 1/2 of sdb; file:b.img")
    assert audience.drive_label("/dev/nvme0n1") == "nvme0n1"
    assert audience.drive_label("emu:JMF612@0.8") == "emu:JMF612@0.8"
    with pytest.raises(ValueError, match="unknown report audience 'press'"):
        audience.for_audience(drive_summary.build_summary([]), "press")


def test_ssdqual_summary_takes_the_audience(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    _failed_gate(tmp_path / "results")
    assert main(["summary", str(tmp_path / "results"), "-o", str(tmp_path / "c")]) == 0
    assert main(["summary", str(tmp_path / "results"), "-o", str(tmp_path / "l"),
                 "--audience", "lab"]) == 0
    [customer] = (tmp_path / "c").glob("*.md")
    [lab] = (tmp_path / "l").glob("*.md")
    assert NOTE not in customer.read_text() and NOTE in lab.read_text()
    with pytest.raises(SystemExit):
        main(["summary", str(tmp_path / "results"), "--audience", "press"])
    assert "invalid choice: 'press'" in capsys.readouterr().err
