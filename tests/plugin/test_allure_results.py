"""What a run leaves in ``--alluredir``, read back from the ``*-result.json`` files: labels,
title, parameters (drive ones excluded, measured numbers never), steps, attachments (charts are
real PNGs), statuses (failed vs broken vs skipped) and the session files -- also under
pytest-xdist with ``--clean-alluredir``.

fio is the stand-in ``tests/fakefio.py`` (500 MB/s, 50,000 IOPS, p99 200 µs, per-second logs).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.drive import identity as identity_module
from pytest_ssdqual.drive.identity import DriveIdentity

from ..conftest import REPO, FakeFio, allure_categories, limits_yaml, qual_args, write_suite

SUITE = """
import allure
import pytest

@pytest.mark.parametrize("workload_id", ["seq_read_128k_qd32", "rand_read_4k_qd32"])
def test_read(qualify, workload_id):
    qualify(workload_id)

@pytest.mark.destructive
def test_write(qualify):
    qualify("seq_write_128k_qd32")
"""

def _limits(read_min: float) -> str:
    return limits_yaml({
        "seq_read_128k_qd32": {"bw_mbps": {"min": read_min}},
        "rand_read_4k_qd32": {"iops": {"min": 1000}, "lat_p99_us": {"max": 400}},
        "seq_write_128k_qd32": {"bw_mbps": {"min": 100}},
    })


def _run(pytester: pytest.Pytester, fake_fio: FakeFio, alluredir: Path, *extra: str,
         read_min: float = 100, suite: str = SUITE, subprocess: bool = False,
         drives: tuple[str, ...] = ("target.img",)) -> pytest.RunResult:
    th = write_suite(pytester.path, suite, _limits(read_min))
    args = qual_args(pytester.path, th, fake_fio.path, f"--alluredir={alluredir}",
                     f"--results-dir={pytester.path / 'store'}", *extra, drives=drives)
    if subprocess:
        return pytester.runpytest_subprocess(*args)
    return pytester.runpytest(*args)


def _results(alluredir: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(alluredir.glob("*-result.json"))]


def _labels(result: dict[str, Any], name: str) -> list[str]:
    return [lab["value"] for lab in result["labels"] if lab["name"] == name]


def _attachment(alluredir: Path, result: dict[str, Any], name: str) -> Path:
    matches = [a for a in result["attachments"] if a["name"] == name]
    assert len(matches) == 1, (name, [a["name"] for a in result["attachments"]])
    return alluredir / matches[0]["source"]


def test_labels_title_parameters_steps_and_attachments(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    alluredir = pytester.path / "allure"
    _run(pytester, fake_fio, alluredir).assert_outcomes(passed=3)
    results = {_labels(r, "story")[0]: r for r in _results(alluredir)}
    assert set(results) == {"seq_read_128k_qd32", "rand_read_4k_qd32", "seq_write_128k_qd32"}
    rand = results["rand_read_4k_qd32"]
    firmware = _labels(rand, "tag")[2].removeprefix("firmware:")
    assert rand["name"] == f"4 KiB random read, QD32 — host-file / host-fs / {firmware}"
    assert _labels(rand, "parentSuite") == [  # the firmware is in the tag and the title
        f"Scratch file (S/N {pytester.path / 'target.img'})"]
    assert _labels(rand, "feature") == ["random"]
    assert _labels(rand, "story") == ["rand_read_4k_qd32"]
    assert _labels(rand, "severity") == ["normal"]
    assert _labels(rand, "tag")[:3] == ["controller:host-file", "nand:host-fs",
                                         f"firmware:{firmware}"]
    params = {p["name"]: p for p in rand["parameters"]}
    assert set(params) == {"drive identity", "ssd_drive", "workload_id", "drive serial",
                           "firmware"}
    assert "excluded" not in params["drive identity"]  # the drive is in the history id
    assert params["drive identity"]["value"] == repr(str(pytester.path / "target.img"))
    assert params["ssd_drive"]["excluded"] is True
    assert str(pytester.path / "target.img") in params["ssd_drive"]["value"]
    assert params["drive serial"]["excluded"] is True and params["firmware"]["excluded"] is True
    assert "excluded" not in params["workload_id"]
    metrics = json.loads(_attachment(alluredir, rand, "metrics").read_text())
    assert metrics["read.iops"] == 50000.0
    measured = {f"{v:g}" for v in metrics.values()}
    assert not any(p["value"].strip("'") in measured for p in rand["parameters"])

    steps = [(s["name"], s["status"], s["stop"] >= s["start"]) for s in rand["steps"]]
    assert steps == [("measure: fio rand_read_4k_qd32", "passed", True),
                     ("judge against the limits", "passed", True)]

    names = [a["name"] for a in rand["attachments"]]
    assert names[:6] == ["drive", "verdicts", "metrics", "verdicts (JSON)",
                         "chart: bandwidth and IOPS over time", "chart: latency percentiles"]
    assert {"fio job", "fio output (JSON)", "per-second log log_bw.1.log"} <= set(names)
    for chart in ("chart: bandwidth and IOPS over time", "chart: latency percentiles"):
        png = _attachment(alluredir, rand, chart)
        assert png.suffix == ".png" and png.read_bytes()[:4] == b"\x89PNG"
        assert png.stat().st_size > 15_000
    drive = json.loads(_attachment(alluredir, rand, "drive").read_text())
    assert (drive["model"], drive["controller"], drive["profile"]) == (
        "Scratch file", "host-file", "smoke")
    verdicts = json.loads(_attachment(alluredir, rand, "verdicts (JSON)").read_text())
    p99 = next(v for v in verdicts if v["metric"] == "read.lat_p99_us")
    assert (p99["measured"], p99["max"], p99["status"], p99["margin_pct"]) == (
        200.0, 400.0, "pass", 50.0)
    assert p99["file"].endswith("limits.yaml") and p99["profile"] == "scratch floors"
    log = _attachment(alluredir, rand, "per-second log log_bw.1.log").read_text()
    assert log.splitlines()[:2] == ["time_ms,value,direction,bs,offset", "1000, 488281, 0, 0, 0"]


def test_each_drive_has_its_own_history_across_firmware(pytester: pytest.Pytester,
                                                         fake_fio: FakeFio) -> None:
    """B20: two drives, same test -> two history ids (before: one, so Allure showed one drive's
    result as a retry of the other's); one drive under two firmware labels -> one history."""
    alluredir = pytester.path / "allure"
    suite = "def test_read(qualify):\n    qualify('seq_read_128k_qd32')\n"
    _run(pytester, fake_fio, alluredir, suite=suite, drives=("a.img", "b.img")
         ).assert_outcomes(passed=2)
    a, b = _results(alluredir)
    assert a["historyId"] != b["historyId"]
    relabelled = pytester.path / "allure-fw"
    _run(pytester, fake_fio, relabelled, "--firmware=DEVBUILD2", suite=suite,
         drives=("a.img", "b.img")).assert_outcomes(passed=2)
    before = {r["parameters"][0]["value"]: r["historyId"] for r in (a, b)}
    after = {r["parameters"][0]["value"]: r["historyId"] for r in _results(relabelled)}
    assert after == before  # firmware (and the /dev path) stay out of the history id


def test_two_drives_sharing_a_serial_have_their_own_history_suite_and_page(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two drives of a session that report one serial (two NVMe namespaces,
    two USB bridges; here two scratch files identified so) used to get one history id (one
    shown as a "retry" of the other), one parent suite and one summary page (the second
    overwrote the first). The drive as given now tells them apart."""

    def twin(path: str, **_kw: object) -> DriveIdentity:
        return DriveIdentity("Twin SSD", "SHARED-SN-1", "F1", 16 << 20, 512, 4096, "virtual",
                             False, kind="file")

    monkeypatch.setattr(identity_module, "identify", twin)
    alluredir = pytester.path / "allure"
    suite = "def test_read(qualify):\n    qualify('seq_read_128k_qd32')\n"
    _run(pytester, fake_fio, alluredir, "--scratch-size=16M", suite=suite,
         drives=("a.img", "b.img")).assert_outcomes(passed=2)
    results = _results(alluredir)
    specs = [f"file:{pytester.path / d}" for d in ("a.img", "b.img")]
    assert len({r["historyId"] for r in results}) == 2
    assert sorted(_labels(r, "parentSuite")[0] for r in results) == [
        f"Twin SSD (S/N SHARED-SN-1 ({spec}))" for spec in specs]
    assert sorted(p["value"] for r in results for p in r["parameters"]
                  if p["name"] == "drive identity") == [repr(f"SHARED-SN-1 ({s})") for s in specs]
    pages = sorted(p.name for p in (alluredir / "summary").glob("*.md"))
    assert len(pages) == 2, pages
    assert all(p.startswith("summary-Twin-SSD-SHARED-SN-1-file-") for p in pages)


def test_failed_broken_and_categories(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed_dir = pytester.path / "failed"
    _run(pytester, fake_fio, failed_dir, read_min=1000).assert_outcomes(passed=2, failed=1)
    [failed] = [r for r in _results(failed_dir) if r["status"] == "failed"]
    assert _labels(failed, "story") == ["seq_read_128k_qd32"]
    assert "1 limit(s) violated" in failed["statusDetails"]["message"]

    monkeypatch.setenv("FAKEFIO_MODE", "error5")
    broken_dir = pytester.path / "broken"
    _run(pytester, fake_fio, broken_dir).assert_outcomes(failed=3)
    broken = _results(broken_dir)
    assert [r["status"] for r in broken] == ["broken"] * 3
    assert all(any(a["name"] == "fio raw output (failed run)" for a in r["attachments"])
               for r in broken)

    categories = json.loads((failed_dir / "categories.json").read_text())
    assert [c["name"] for c in categories] == [
        "Regression vs baseline", "Drive health failing", "Limit violated",
        "Interrupted (SIGINT/SIGTERM)", "Worker crashed", "Device or fio error",
        "Refused for safety", "Undecided vs baseline (too few runs for the noise)"]

    def category(status: str, message: str) -> str | None:
        """The first matching category, as Allure 2 (Java ``matches``: whole message) does."""
        for c in categories:
            regex = c.get("messageRegex")
            if status in c["matchedStatuses"] and (regex is None or re.fullmatch(regex, message)):
                return str(c["name"])
        return None

    assert category("failed", failed["statusDetails"]["message"]) == "Limit violated"
    assert category("broken", broken[0]["statusDetails"]["message"]) == "Device or fio error"
    assert category("failed", "REGRESSION: write.bw_mbps 270 vs 315 on SVN417w") == (
        "Regression vs baseline")
    assert category("skipped", "Skipped: write to /dev/loop0 refused: not confirmed") == (
        "Refused for safety")
    assert category("failed", "something else") is None
    assert category("broken", "INTERRUPTED: received signal 15 (SIGTERM) ...") == (
        "Interrupted (SIGINT/SIGTERM)")
    assert category("broken", "worker 'gw1' crashed while running 't.py::x': ...") == (
        "Worker crashed")


def test_a_refused_write_is_skipped_with_the_reason(
    pytester: pytest.Pytester, fake_fio: FakeFio, loop_device: str
) -> None:
    alluredir = pytester.path / "allure"
    pytester.makepyfile(test_suite=SUITE)
    th = pytester.path / "limits.yaml"
    th.write_text("version: 1\nprofiles: []\n")
    result = pytester.runpytest(
        f"--drive={loop_device}", f"--thresholds={th}", f"--fio-bin={fake_fio.path}",
        "--ssd-profile=smoke", "-p", "no:cacheprovider", f"--alluredir={alluredir}",
        f"--results-dir={pytester.path / 'store'}")
    result.assert_outcomes(passed=2, skipped=1)
    [skipped] = [r for r in _results(alluredir) if r["status"] == "skipped"]
    message = skipped["statusDetails"]["message"]
    assert "refused" in message and "--confirm-destroy=" in message
    categories = json.loads((alluredir / "categories.json").read_text())
    assert allure_categories(categories, "skipped", message) == ["Refused for safety"]
    assert _labels(skipped, "story") == ["seq_write_128k_qd32"]
    summary = next((alluredir / "summary").glob("*.md")).read_text()
    assert "**Overall: INCOMPLETE**" in summary and "| seq_write_128k_qd32 | SKIPPED |" in summary


FAMILY_SUITE = """
import allure
import pytest

@pytest.mark.ssdqual_family("integrity")
def test_integrity(qualify):
    qualify("seq_read_128k_qd32")

@allure.feature("customer feature")
@allure.severity(allure.severity_level.MINOR)
def test_decorated(qualify):
    qualify("rand_read_4k_qd32")
"""


def test_family_marker_sets_feature_and_critical_severity_and_decorators_win(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    alluredir = pytester.path / "allure"
    _run(pytester, fake_fio, alluredir, suite=FAMILY_SUITE).assert_outcomes(passed=2)
    results = {_labels(r, "story")[0]: r for r in _results(alluredir)}
    integrity = results["seq_read_128k_qd32"]
    assert _labels(integrity, "feature") == ["integrity"]
    assert _labels(integrity, "severity") == ["critical"]
    decorated = results["rand_read_4k_qd32"]
    assert _labels(decorated, "feature") == ["customer feature"]  # once: not also "random"
    assert _labels(decorated, "severity") == ["minor"]


def test_session_files_survive_xdist_and_clean_alluredir(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    alluredir = pytester.path / "allure"
    alluredir.mkdir()
    (alluredir / "stale-result.json").write_text("{}")  # a previous run's: must be wiped
    result = _run(pytester, fake_fio, alluredir, "-n", "2", "--clean-alluredir",
                  subprocess=True, drives=("a.img", "b.img"))
    result.assert_outcomes(passed=6)
    assert not (alluredir / "stale-result.json").exists()
    assert len(_results(alluredir)) == 6
    env = (alluredir / "environment.properties").read_text()
    assert "drive1.model=Scratch file" in env and "drive2.model=Scratch file" in env
    assert "profile=smoke" in env and "fio=fio-3.33" in env
    assert len(json.loads((alluredir / "categories.json").read_text())) == 8  # CATEGORIES
    executor = json.loads((alluredir / "executor.json").read_text())
    assert executor["type"] == "pytest" and "(smoke)" in executor["buildName"]
    pages = sorted((alluredir / "summary").glob("*.html"))
    assert len(pages) == 2 and len(list((alluredir / "summary").glob("*.md"))) == 2
    assert all("Overall: PASS" in p.read_text() for p in pages)
    [globals_file] = alluredir.glob("*-globals.json")
    attachments = json.loads(globals_file.read_text())["attachments"]
    assert sorted(a["type"] for a in attachments) == sorted(  # page, Markdown, latency chart
        ["text/html", "text/markdown", "image/png"] * 2)
    for att in attachments:
        assert (alluredir / att["source"]).stat().st_size > 1000
    out = result.stdout.str()
    assert "ssdqual qualification summary" in out
    assert out.count("PASS       Scratch file (fw ") == 2


def test_methodology_tests_get_their_phase_steps_and_charts(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "400,400,400,150,150,150")  # an SLC-cache cliff
    alluredir = pytester.path / "allure"
    result = pytester.runpytest(
        str(REPO / "suites" / "test_sustained_write.py"),
        str(REPO / "suites" / "test_steady_state.py"),
        f"--drive=file:{pytester.path / 'target.img'}", f"--thresholds={REPO / 'thresholds'}",
        f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke", "-p", "no:cacheprovider",
        f"--alluredir={alluredir}", f"--results-dir={pytester.path / 'store'}")
    result.assert_outcomes(passed=2)
    results = {_labels(r, "story")[0]: r for r in _results(alluredir)}
    expected = {
        "sustained_write": ["chart: bandwidth and IOPS over time",
                            "chart: bandwidth by fill state"],
        "steady_state_rand_write_4k": ["chart: bandwidth and IOPS over time",
                                       "chart: steady state"],
    }
    for story, charts in expected.items():
        r = results[story]
        assert [a["name"] for a in r["attachments"] if a["name"].startswith("chart:")] == charts
        for chart in charts:
            assert _attachment(alluredir, r, chart).read_bytes()[:4] == b"\x89PNG"
        assert r["steps"], story  # the phases (purge, precondition, rounds...) as steps
        assert all(s["stop"] >= s["start"] for s in r["steps"])


def _messages(alluredir: Path) -> list[tuple[str, str]]:
    """(status, statusDetails.message) of every result in ``alluredir`` that is not passed."""
    return [(r["status"], r["statusDetails"]["message"]) for r in _results(alluredir)
            if r["status"] != "passed"]


def test_each_category_holds_the_message_the_plugin_writes(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The messages come from real runs (fake fio), read from the ``*-result.json`` files the
    way Allure reads them, and are put in categories as Allure 2 does (``allure_categories``:
    whole-message match). Before: a failed gate (``Failed: REGRESSION: ...``) fell into
    *Product defects*, as ``^REGRESSION:`` never matched. The other categories are checked
    where their messages are made: drive health (test_health_plugin), interrupted and crashed
    workers (test_worker_outcomes), refused writes (below)."""
    suite = "import pytest\n\n@pytest.mark.destructive\ndef test_write(qualify):\n" \
            "    qualify('seq_write_128k_qd32')\n"
    limits = limits_yaml({"seq_write_128k_qd32": {"bw_mbps": {"min": 100}}}, max_drop_pct=5)
    th = write_suite(pytester.path, suite, limits)
    store = pytester.path / "store"

    def run(name: str, *extra: str) -> list[tuple[str, str]]:
        alluredir = pytester.path / name
        pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path, f"--alluredir={alluredir}",
                                      f"--results-dir={store}", *extra))
        return _messages(alluredir)

    monkeypatch.setenv("FAKEFIO_BW_MBPS", "500")
    assert run("baseline", "--firmware=A") == []
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "400")  # 20 % slower than A: the gate fails it
    regression = run("regression", "--firmware=B", "--baseline=firmware:A")
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "50")  # below the 100 MB/s floor, no baseline
    limit = run("limit", "--firmware=C")
    # too few runs for the noise: skipped as UNDECIDED (review: it fell into no category)
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "500")
    assert run("baseline3", "--firmware=U0", "--repeat=3") == []
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "500,350,650")
    undecided = run("undecided", "--firmware=U1", "--baseline=firmware:U0", "--repeat=3")
    monkeypatch.delenv("FAKEFIO_BW_MBPS")
    monkeypatch.setenv("FAKEFIO_MODE", "error5")
    broken = run("broken", "--firmware=D")

    categories = json.loads((pytester.path / "regression" / "categories.json").read_text())
    placed = {name: [allure_categories(categories, status, message) for status, message in got]
              for name, got in [("regression", regression), ("limit", limit),
                                ("broken", broken), ("undecided", undecided)]}
    # (the message wraps at 120 columns: a long drive path goes to the next line)
    assert regression and re.match(r"Failed: REGRESSION:\s", regression[0][1]), regression
    assert undecided and undecided[0][0] == "skipped" and "UNDECIDED:" in undecided[0][1]
    assert placed == {"regression": [["Regression vs baseline"]],
                      "limit": [["Limit violated"]],
                      "broken": [["Device or fio error"]],
                      "undecided": [["Undecided vs baseline (too few runs for the noise)"]]}, (
        regression, limit, broken, undecided)
