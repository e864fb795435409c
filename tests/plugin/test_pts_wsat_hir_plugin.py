"""The SNIA PTS WSAT and HIR tests with the fio stand-in (tests/fakefio.py): the fio arguments
they run (the active range's offset and size, T4Q32, the bytes and time caps), the HIR's
burst / idle schedule, figures computed from the stand-in's figures, and the suite through
``pytester`` with its verdicts and charts."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import MIB, PROFILES
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.methodology import pts_hir, pts_wsat
from pytest_ssdqual.methodology.base import MethodRun, judge_result
from pytest_ssdqual.methodology.pts_range import ActiveRange
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import REPO, FakeFio, flat_verdicts

#: The smoke schedules (the profile's name picks them) on a 16 MiB span.
SMOKE16 = replace(PROFILES["smoke"], span_bytes=16 * MIB, file_size_bytes=16 * MIB)
LIMITS = """\
version: 1
profiles:
  - name: scratch PTS floors
    match: {kind: file}
    source: test limits
    limits:
      pts_wsat: {iops_steady: {min: 20000}, cliff_tgbw_gb: {min: 0.5}}
      pts_hir: {w50s_recovery_ratio: {min: 3}, w5s_recovery_ratio: {min: 1.5}}
"""


@pytest.fixture
def session(tmp_path: Path, fake_fio: FakeFio) -> Iterator[QualSession]:
    wrapper = tmp_path / "fio"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {fake_fio.path} \"$@\"\n")
    wrapper.chmod(0o755)
    limits = tmp_path / "limits.yaml"
    limits.write_text(LIMITS)
    options = SessionOptions(specs=(), confirmed_serials=(), profile=SMOKE16,
                             thresholds=ThresholdSet.load([limits]), fio_bin=str(wrapper))
    (tmp_path / "scratch").mkdir()
    qs = QualSession.create(options, tmp_path / "scratch")
    yield qs
    qs.close()


def _method_run(session: QualSession, tmp_path: Path, workload_id: str,
                slept: list[float] | None = None) -> MethodRun:
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    return MethodRun(session, ctx, tmp_path / "work", workload_id,
                     sleep=(slept.append if slept is not None else lambda _s: None))


def _job_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line
                and not line.startswith(";"))


def test_wsat_writes_twice_the_active_range_at_t4q32_from_its_offset(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 8 seconds logged: 400 MB/s (100,000 IOPS) for 2 s, then 100 MB/s (25,000 IOPS)
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "400")
    monkeypatch.setenv("FAKEFIO_IOPS", "100000")
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "400,400,100,100,100,100,100,100")
    mr = _method_run(session, tmp_path, "pts_wsat")
    result = pts_wsat.run(mr, ActiveRange(25, 75))
    (call,) = [c for c in fake_fio.calls() if c["job"]]
    opts = _job_lines(call["job"])
    # 25:75 of the 16 MiB span: 8 MiB at 4 MiB; each of the 4 threads writes a quarter of 2x
    assert (opts["offset"], opts["size"]) == (str(4 * MIB), str(8 * MIB))
    assert (opts["rw"], opts["bs"], opts["iodepth"], opts["numjobs"]) == (
        "randwrite", "4096", "32", "4")
    assert opts["io_size"] == str(2 * 8 * MIB // 4) and opts["runtime"] == "8s"
    assert opts["write_iops_log"] and opts["log_avg_msec"] == "1000"
    m = result.metrics
    assert m["iops_fob"] == 100000 and m["iops_steady"] == 25000
    assert m["steady_fob_ratio"] == 0.25
    # fell below half of FOB in the third second, after 2 x 400 MB
    assert m["cliff_tgbw_gb"] == pytest.approx(0.8, rel=1e-3)
    assert m["tgbw_gb"] == pytest.approx(2 * 8 * MIB / 1e9)  # fio's own bytes (size based)
    assert m["written_multiple"] == pytest.approx(2.0)
    assert result.states["iops_fob"] == "FOB"
    assert any("active range 25:75 % of the 16 MiB test span: 8.0 MiB at offset 4.0 MiB" in n
               for n in result.notes)
    assert [c.x_name for c in result.curves] == ["time_s", "tgbw_gb"]
    outcome = judge_result(result, mr.ctx.limits)
    assert [v.metric for v in outcome.failed] == []  # 25,000 >= 20,000; 0.8 GB >= 0.5


def test_hir_schedule_waits_bursts_and_baselines_and_its_figures(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    # per fio run: 5 preconditioning rounds (steady at once), then per wait state two bursts
    # and the return to baseline
    bursts = [(1100, 900), (2000, 2000), (2500, 2500), (3000, 3000), (4000, 4200)]
    figures = [1000] * 5 + [x for a, b in bursts for x in (a, b, 1000)]
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(map(str, figures)))
    mr = _method_run(session, tmp_path, "pts_hir", slept)
    result = pts_hir.run(mr, ActiveRange(0, 50))
    jobs = [c["job"] for c in fake_fio.calls() if c["job"]]
    names = [line[1:-1] for j in jobs for line in j.splitlines()
             if line.startswith("[") and line != "[global]"]
    assert names == ["hir_precondition"] * 5 + ["hir_burst", "hir_burst", "hir_baseline"] * 5
    # smoke: every PTS wait x 0.1, two cycles each, the wait before each burst
    assert slept == [0.5, 0.5, 1.0, 1.0, 1.5, 1.5, 2.5, 2.5, 5.0, 5.0]
    runtimes = [_job_lines(j)["runtime"] for j in jobs]
    assert runtimes[:6] == ["1s"] * 5 + ["500ms"] and runtimes[7] == "1s"  # baseline: 2 x 0.5
    for j in jobs:
        opts = _job_lines(j)
        assert (opts["offset"], opts["size"], opts["numjobs"]) == ("0", str(8 * MIB), "4")
        assert "io_size" not in opts and opts["time_based"] == "1"
    m = result.metrics
    assert m["baseline_iops"] == 1000 and m["steady_state_reached"] == 1
    assert m["w5s_iops"] == 1000 and m["w5s_recovery_ratio"] == 1.0
    assert m["w10s_iops"] == 2000 and m["w50s_iops"] == 4100
    assert m["w50s_recovery_ratio"] == pytest.approx(4.1)
    assert all(m[f"w{w}s_rebaseline_iops"] == 1000 for w in (5, 10, 15, 25, 50))
    assert result.states["w50s_iops"] == "HIR wait state 50 s (run 5 s)"
    outcome = judge_result(result, mr.ctx.limits)
    assert [v.metric for v in outcome.failed] == ["w5s_recovery_ratio"]  # 1.0 < 1.5
    assert "  50 s  (5 s)       2       4,100          1,000   4.10            1,000" in "\n".join(
        result.notes)


def test_the_suite_runs_wsat_with_its_verdicts_and_charts(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    limits = pytester.path / "limits.yaml"
    limits.write_text(LIMITS)
    monkeypatch.setenv("FAKEFIO_BW_MBPS", "400")
    monkeypatch.setenv("FAKEFIO_IOPS", "100000")
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "400,400,100,100,100,100,100,50")
    alluredir = pytester.path / "allure"
    result = pytester.runpytest(
        str(REPO / "suites" / "test_pts_wsat_hir.py") + "::test_pts_wsat",
        f"--drive=file:{pytester.path / 'target.img'}", f"--thresholds={limits}",
        f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke", "-p", "no:cacheprovider",
        f"--alluredir={alluredir}")
    result.assert_outcomes(passed=1)
    out = flat_verdicts(result.stdout.str())
    row = next(line for line in out.splitlines() if line.startswith("pts_wsat  iops_steady @ "))
    assert "@ write saturation" in row and row.endswith("22,500  >= 20,000  +12.5 %  PASS")
    (res,) = [json.loads(p.read_text()) for p in alluredir.glob("*-result.json")]
    names = [a["name"] for a in res["attachments"]]
    assert {"chart: WSAT IOPS vs time", "chart: WSAT IOPS vs TGBW", "curves"} <= set(names)
    metrics = json.loads(next((alluredir / a["source"]).read_text()
                              for a in res["attachments"] if a["name"] == "metrics"))
    # the last 5 seconds: 100, 100, 100, 100, 50 MB/s -> 22,500 IOPS
    assert metrics["iops_steady"] == pytest.approx(22500)
    assert metrics["iops_fob"] == pytest.approx(100000)
