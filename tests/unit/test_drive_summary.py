"""The one-page summary per drive, built from a stored Allure results folder (no drive, no fio),
and the reader of that folder (``stored_results``)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.report import drive_summary, summary_page
from pytest_ssdqual.results.stored import LABEL_NOT_APPLICABLE, load_results, read_result

E12 = {"drive": "/dev/nvme0n1", "model": "Phison E12 NVMe 1TB", "serial": "S3Z9NB0K123456",
       "firmware": "ECFM11.0", "capacity_bytes": "1000204886016", "transport": "nvme",
       "controller": "PS5012-E12", "nand": "BiCS3", "assignment_source": "inventory.yaml",
       "threshold_profiles": "Phison E12 + BiCS3 (phison-e12.yaml)", "profile": "quick"}


def _verdict(workload: str, metric: str, measured: float | None, status: str,
             margin: float | None, limit: str = "", lo: float | None = None,
             hi: float | None = None) -> dict[str, Any]:
    return {"workload": workload, "metric": metric, "measured": measured, "status": status,
            "margin_pct": margin, "marginal": False, "limit": limit, "min": lo, "max": hi,
            "file": "thresholds/phison-e12.yaml" if limit else "", "line": 12 if limit else None,
            "profile": "Phison E12 + BiCS3" if limit else "",
            "source": "review: 3,400 MB/s read; limit 10 % below" if limit else ""}


def write_result(folder: Path, *, name: str, workload: str, status: str, message: str = "",
                 facts: dict[str, str] | None = E12, metrics: dict[str, float] | None = None,
                 verdicts: list[dict[str, Any]] | None = None, start: int = 1_000,
                 history: str | None = None, labels: dict[str, str] | None = None,
                 texts: dict[str, str] | None = None) -> Path:
    """One test result as allure-pytest writes it, with the attachments ssdqual adds (``texts``:
    more attachments by name, e.g. ``regression (JSON)`` or a ``per-second log``)."""
    folder.mkdir(parents=True, exist_ok=True)
    attachments = []
    for att_name, text in (texts or {}).items():
        source = f"{uuid.uuid4()}-attachment.txt"
        (folder / source).write_text(text)
        attachments.append({"name": att_name, "source": source, "type": "text/plain"})
    for att_name, data in (("drive", facts), ("metrics", metrics),
                           ("verdicts (JSON)", verdicts)):
        if data is None:
            continue
        source = f"{uuid.uuid4()}-attachment.json"
        (folder / source).write_text(json.dumps(data))
        attachments.append({"name": att_name, "source": source, "type": "application/json"})
    result = {
        "uuid": str(uuid.uuid4()), "name": name, "fullName": f"suites.x#{workload}",
        "historyId": history or workload, "status": status, "start": start, "stop": start + 500,
        "statusDetails": {"message": message} if message else {},
        "labels": [{"name": "story", "value": workload}, {"name": "feature", "value": "random"},
                   *({"name": k, "value": v} for k, v in (labels or {}).items())],
        "parameters": [{"name": "ssd_drive", "value": "'/dev/nvme0n1'", "excluded": True}],
        "attachments": attachments,
        "steps": [{"name": f"measure: fio {workload}", "start": start, "stop": start + 400}],
    }
    path = folder / f"{result['uuid']}-result.json"
    path.write_text(json.dumps(result))
    return path


def _e12_run(folder: Path, *, read_iops: float = 250_000.0) -> None:
    ok = read_iops >= 200_000
    write_result(
        folder, name="4 KiB random read, QD32 — PS5012-E12 / BiCS3 / ECFM11.0",
        workload="rand_read_4k_qd32", status="passed" if ok else "failed",
        message="" if ok else "/dev/nvme0n1 rand_read_4k_qd32: 1 limit(s) violated\n  read.iops",
        metrics={"read.iops": read_iops, "read.lat_p50_us": 90.0, "read.lat_p99_us": 310.0,
                 "read.lat_p99_9_us": 700.0, "read.lat_p99_99_us": 1500.0},
        verdicts=[
            _verdict("rand_read_4k_qd32", "read.iops", read_iops, "pass" if ok else "fail",
                     (read_iops - 200_000) / 2000, "read.iops >= 200000", lo=200_000),
            _verdict("rand_read_4k_qd32", "read.lat_p99_us", 310.0, "pass", 22.5,
                     "read.lat_p99_us <= 400", hi=400),
            _verdict("rand_read_4k_qd32", "read.lat_mean_us", 120.0, "not_judged", None),
        ], start=2_000)
    write_result(
        folder, name="4 KiB random read, QD1 — PS5012-E12 / BiCS3 / ECFM11.0",
        workload="rand_read_4k_qd1", status="passed",
        metrics={"read.iops": 14_000.0, "read.lat_p50_us": 60.0, "read.lat_p99_us": 95.0},
        verdicts=[_verdict("rand_read_4k_qd1", "read.iops", 14_000.0, "pass", 40.0,
                           "read.iops >= 10000", lo=10_000)], start=1_000)


def test_summary_lists_drive_every_judged_limit_and_passes(tmp_path: Path) -> None:
    _e12_run(tmp_path / "results")
    [(summary, html_path, md_path)] = summary_page.write_summaries(tmp_path / "results")
    assert summary.overall == "PASS"
    assert html_path.parent == tmp_path / "results" / "summary"
    assert html_path.name == "summary-Phison-E12-NVMe-1TB-S3Z9NB0K123456.html"
    md = md_path.read_text()
    assert md.startswith("# Qualification summary: Phison E12 NVMe 1TB (fw ECFM11.0, "
                         "S/N S3Z9NB0K123456)")
    assert "**Overall: PASS**" in md
    assert "| Controller | PS5012-E12 |" in md and "| NAND | BiCS3 |" in md
    assert "| Run profile | quick |" in md and "1000.2 GB" in md
    assert ("| rand_read_4k_qd32 | read.iops | - | 250000 | >= 200000 | +25.0 % | PASS | "
            "phison-e12.yaml:12 [1] |") in md
    assert "| rand_read_4k_qd32 | read.lat_p99_us | - | 310 | <= 400 | +22.5 % | PASS |" in md
    # the customer page (the default) names the file, not the profile's own note
    assert '1. profile "Phison E12 + BiCS3" in phison-e12.yaml\n' in md
    assert "review: 3,400 MB/s" not in md
    lab = summary_page.render_markdown(drive_summary.build_summary(
        load_results(tmp_path / "results"), charts=False))
    assert ('1. profile "Phison E12 + BiCS3" in thresholds/phison-e12.yaml: review: 3,400 MB/s '
            "read; limit 10 % below") in lab
    assert "1 measured metrics had no limit (not judged)" in md
    assert "read.lat_mean_us" not in md  # not judged: counted, not listed
    page = html_path.read_text()
    assert "<div class='overall PASS'>Overall: PASS</div>" in page
    assert page.count("data:image/png;base64,") == 2  # QD scaling + latency percentiles
    assert "<h2>Queue-depth scaling</h2>" in page and "<h2>Latency percentiles</h2>" in page
    assert "http" not in page.replace("http://www.w3.org", "")  # self-contained: no links out


def test_a_violated_limit_or_a_broken_test_makes_the_drive_fail(tmp_path: Path) -> None:
    _e12_run(tmp_path / "r1", read_iops=150_000.0)
    [s] = drive_summary.build_summaries(load_results(tmp_path / "r1"), charts=False)
    assert s.overall == "FAIL"
    failed = [r for r in s.limits if r.verdict == "FAIL"]
    assert [(r.metric, r.measured, r.margin_pct) for r in failed] == [
        ("read.iops", 150_000.0, -25.0)]
    assert "1 limit(s) violated" in next(t.reason for t in s.tests if t.status == "FAIL")

    write_result(tmp_path / "r2", name="seq read", workload="seq_read_128k_qd32",
                 status="broken", message="fio exited with status 1: fio: engine not loadable")
    [broken] = drive_summary.build_summaries(load_results(tmp_path / "r2"), charts=False)
    assert broken.overall == "FAIL" and broken.tests[0].status == "ERROR"
    assert "engine not loadable" in summary_page.render_markdown(broken)


def test_refused_write_tests_make_the_qualification_incomplete(tmp_path: Path) -> None:
    _e12_run(tmp_path / "results")
    write_result(tmp_path / "results", name="128 KiB sequential write, QD32",
                 workload="seq_write_128k_qd32", status="skipped",
                 message="Skipped: write to /dev/nvme0n1 refused: not confirmed", start=3_000)
    [s] = drive_summary.build_summaries(load_results(tmp_path / "results"), charts=False)
    assert s.overall == "INCOMPLETE"
    md = summary_page.render_markdown(s)
    assert "| seq_write_128k_qd32 | SKIPPED | Skipped: write to /dev/nvme0n1 refused" in md
    # the page says why it is not a PASS (newcomer trial: "INCOMPLETE" with no reason)
    assert "**Overall: INCOMPLETE** (1 test(s) SKIPPED)" in md
    assert "<p class='why'>1 test(s) SKIPPED</p>" in summary_page.render_html(s)


def test_a_test_that_cannot_apply_to_the_drive_leaves_it_a_pass(tmp_path: Path) -> None:
    # a SATA drive has no NVMe power states: the idle wake-up test skips as not applicable
    # (Allure label ssdqual_not_applicable, the reason); every SATA drive was INCOMPLETE
    _e12_run(tmp_path / "results")
    reason = "/dev/sdb is a block target (SATA): NVMe power states and APST exist only on an NVMe"
    write_result(tmp_path / "results", name="4 KiB random read QD1 after idle gaps",
                 workload="idle_wake_read_4k_qd1", status="skipped",
                 message=f"Skipped: {reason}", start=3_000,
                 labels={LABEL_NOT_APPLICABLE: reason})
    [s] = drive_summary.build_summaries(load_results(tmp_path / "results"), charts=False)
    assert s.overall == "PASS", drive_summary.overall_reasons(s.tests, s.limits)
    md = summary_page.render_markdown(s)
    assert "**Overall: PASS**" in md
    assert f"| idle_wake_read_4k_qd1 | NOT APPLICABLE | Skipped: {reason} |" in md
    # only not-applicable tests: nothing was qualified
    only = tmp_path / "only"
    write_result(only, name="health", workload="health", status="skipped",
                 message="Skipped: no drive health", labels={LABEL_NOT_APPLICABLE: "no SMART"})
    [empty] = drive_summary.build_summaries(load_results(only), charts=False)
    assert empty.overall == "INCOMPLETE"


def test_two_drives_get_two_pages(tmp_path: Path) -> None:
    _e12_run(tmp_path / "results")
    other = dict(E12, drive="/dev/sdb", model="JMF667H 128GB", serial="AA00001",
                 firmware="SVN417w", controller="JMF667H", nand="L85C")
    write_result(tmp_path / "results", name="seq read", workload="seq_read_128k_qd32",
                 status="passed", facts=other, metrics={"read.bw_mbps": 450.0},
                 verdicts=[_verdict("seq_read_128k_qd32", "read.bw_mbps", 450.0, "pass", 12.5,
                                    "read.bw_mbps >= 400", lo=400)])
    written = summary_page.write_summaries(tmp_path / "results", tmp_path / "out")
    assert sorted(p.name for _, p, _ in written) == [
        "summary-JMF667H-128GB-AA00001.html", "summary-Phison-E12-NVMe-1TB-S3Z9NB0K123456.html"]
    lines = summary_page.summary_lines(written)
    assert any(line.startswith("PASS") and "JMF667H 128GB (fw SVN417w" in line for line in lines)


def test_the_latest_result_of_a_test_wins_and_steps_are_read(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    write_result(folder, name="old", workload="rand_read_4k_qd1", status="failed", start=1_000)
    write_result(folder, name="new", workload="rand_read_4k_qd1", status="passed", start=5_000)
    [test] = load_results(folder)
    assert (test.name, test.status) == ("new", "passed")
    assert test.steps == [("measure: fio rand_read_4k_qd1", 0.4)]
    assert test.drive["serial"] == "S3Z9NB0K123456"


def test_bad_results_folders_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_results(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match=r"no Allure results .*--alluredir"):
        load_results(tmp_path / "empty")
    bad = tmp_path / "bad" / "x-result.json"
    bad.parent.mkdir()
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="x-result.json: unreadable Allure result"):
        read_result(bad)


AS_FOUND = "as found (writes not allowed: reads of a drive as it was found)"


def test_a_read_limit_passed_on_media_as_found_is_never_a_plain_pass(tmp_path: Path) -> None:
    """The drive state of every figure is on the page; a read limit passed on
    media as found (writes refused, no prefill: maybe never-written blocks) says so and the
    drive is INCOMPLETE, not PASS (before: "PASS", "Overall: PASS")."""
    def run(folder: Path, state: str) -> str:
        verdict = dict(_verdict("rand_read_4k_qd32", "read.iops", 250_000.0, "pass", 25.0,
                                "read.iops >= 200000", lo=200_000), state=state)
        write_result(folder, name="4 KiB random read, QD32", workload="rand_read_4k_qd32",
                     status="passed", metrics={"read.iops": 250_000.0}, verdicts=[verdict])
        ((summary, _html, md),) = summary_page.write_summaries(folder)
        assert summary.limits[0].state == state
        return md.read_text()

    md = run(tmp_path / "as-found", AS_FOUND)
    assert "**Overall: INCOMPLETE** (1 limit(s) passed only on media as found)" in md
    assert (f"| rand_read_4k_qd32 | read.iops | {AS_FOUND} | 250000 | >= 200000 | +25.0 % | "
            "PASS (as found) |") in md
    assert "PASS (as found): read on the drive as found" in md
    prefilled = "read after a prefill of 268435456 bytes"
    md = run(tmp_path / "prefilled", prefilled)
    assert "**Overall: PASS**" in md and f"| {prefilled} | 250000 |" in md
    assert "PASS (as found)" not in md


def test_a_drive_updated_mid_session_is_named_with_both_firmwares(tmp_path: Path) -> None:
    _e12_run(tmp_path / "results")  # two tests on ECFM11.0 (started at 1 s and 2 s)
    write_result(tmp_path / "results", name="128 KiB sequential read, QD32 — ECFM12.1",
                 workload="seq_read_128k_qd32", status="passed", start=9_000,
                 facts={**E12, "firmware": "ECFM12.1"}, metrics={"read.bw_mbps": 3000.0})
    [(summary, _html, md_path)] = summary_page.write_summaries(tmp_path / "results")
    assert summary.facts["firmware"] == "ECFM11.0, then ECFM12.1"
    md = md_path.read_text()
    assert md.startswith("# Qualification summary: Phison E12 NVMe 1TB (fw ECFM11.0, then "
                         "ECFM12.1, S/N S3Z9NB0K123456)")
    assert "| Firmware | ECFM11.0, then ECFM12.1 |" in md
