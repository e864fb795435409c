"""The methodology runners end to end with the fio stand-in (tests/fakefio.py) on a file target:
which jobs run in which order, the figures, the drive states, progress and the safety checks.
Real fio and block devices: tests/e2e/test_e2e_methodology.py."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, MIB, PROFILES, MethodologyPlan
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.errors import FioOutputError, SafetyRefusal
from pytest_ssdqual.fio.series import BandwidthSeries
from pytest_ssdqual.methodology import base as methodology_base
from pytest_ssdqual.methodology import slc_cache
from pytest_ssdqual.methodology import sustained as sustained_method
from pytest_ssdqual.methodology.base import MethodologyResult, judge_result
from pytest_ssdqual.methodology.jobs import (
    MethodJob,
    aligned_span,
    precondition_job,
    random_size_write_job,
    sustained_write_job,
)
from pytest_ssdqual.methodology.progress import RecordingObserver
from pytest_ssdqual.methodology.purge import PurgeRecord
from pytest_ssdqual.methodology.registry import run_methodology
from pytest_ssdqual.qualify.session import DriveContext, QualSession, SessionOptions
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

from ..conftest import FakeFio, cases_dir

TINY = replace(
    PROFILES["smoke"],
    name="tiny",
    span_bytes=16 * MIB,
    file_size_bytes=16 * MIB,
    methodology=MethodologyPlan(
        precondition_multiple=2, round_runtime_s=1, max_rounds=6, sustained_multiple=4,
        sustained_max_s=5, perf_runtime_s=1, degrade_rounds=2, degrade_first_s=3,
        degrade_step_s=2, steady_rounds=5, steady_write_s=2, recovery_rounds=3, idle_s=7,
    ),
)

LIMITS = """\
version: 1
profiles:
  - name: scratch files in these tests
    match: {kind: file}
    source: test limits
    limits:
      sustained_write: {sustained_bw_mbps: {min: 100}, burst_bw_mbps: {min: 100}}
      recovery_after_idle: {recovery_ratio: {min: 0.9}}
"""


@pytest.fixture
def session(tmp_path: Path, fake_fio: FakeFio) -> Iterator[QualSession]:
    wrapper = tmp_path / "fio"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} {fake_fio.path} \"$@\"\n")
    wrapper.chmod(0o755)
    limits = tmp_path / "limits.yaml"
    limits.write_text(LIMITS)
    options = SessionOptions(
        specs=(), confirmed_serials=(), profile=TINY,
        thresholds=ThresholdSet.load([limits]), fio_bin=str(wrapper),
    )
    qs = QualSession.create(options, tmp_path / "scratch")
    (tmp_path / "scratch").mkdir()
    yield qs
    qs.close()


def _run(
    session: QualSession,
    tmp_path: Path,
    workload_id: str,
    observer: RecordingObserver | None = None,
    sleep: Callable[[float], None] = lambda _s: None,
) -> tuple[DriveContext, MethodologyResult]:
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    return ctx, run_methodology(workload_id, session, ctx, tmp_path / "work", observer=observer,
                                sleep=sleep)


def jobs_run(fake_fio: FakeFio) -> list[str]:
    """fio job section names in the order run (the engine probe excluded)."""
    names = []
    for call in fake_fio.calls():
        sections = [line[1:-1] for line in call["job"].splitlines()
                    if line.startswith("[") and line != "[global]"]
        names += sections
    return names


def test_sustained_write_finds_the_cliff_in_the_bandwidth_log(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,80,80,80")
    observer = RecordingObserver()
    ctx, result = _run(session, tmp_path, "sustained_write", observer)
    assert jobs_run(fake_fio) == ["sustained_write"]
    job = fake_fio.calls()[-1]["job"]
    assert "io_size=67108864" in job and "runtime=5s" in job and "time_based" not in job
    assert result.purge is not None and result.purge.method in ("file-punch-hole",
                                                                 "file-truncate")
    m = result.metrics
    assert m["burst_bw_mbps"] == pytest.approx(300, rel=1e-4)  # fio logs whole KiB/s
    assert m["sustained_bw_mbps"] == pytest.approx(80, rel=0.01)
    # 3 s at 300 MB/s, then half of a second: 900 MB + 0.5 x 300 MB
    assert m["slc_cache_bytes"] == pytest.approx(1050e6, rel=0.01)
    assert m["write.bw_mbps"] == 500  # fio's figure for the whole write (FAKEFIO_BW_MBPS)
    assert set(result.states.values()) == {"FOB"}
    assert observer.phases[0] == "purge"
    assert [e.phase for e in observer.events] == ["purge", "sustained write"]
    assert observer.events[-1].eta_s == 0
    outcome = judge_result(result, ctx.limits)
    failed = {v.metric: v for v in outcome.failed}
    assert set(failed) == {"sustained_bw_mbps"}
    assert "sustained_bw_mbps 80 < min 100" in failed["sustained_bw_mbps"].line()
    assert "t_s,phase,round,job,bw_mbps,iops,lat_mean_us" in result.per_second_csv()
    assert result.per_second_csv().count("sustained write") == 7


def test_sustained_write_that_fell_and_came_back_fails_its_limits_saying_why(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10 s at 2,000 MB/s, 12 s at 500, 6 s back at 2,000 on a drive with a cache (the file
    target is virtual, so it is judged as a real drive here): the cache size is undetermined,
    so the limits on burst_bw_mbps and sustained_bw_mbps fail with the reason, and the note
    says where the write fell (it was burst 2,000 MB/s and "not exhausted after 38 GB")."""
    monkeypatch.setenv("FAKEFIO_BW_SERIES", ",".join(["2000"] * 10 + ["500"] * 12
                                                     + ["2000"] * 6))
    monkeypatch.setattr(sustained_method, "detect_slc_cliff",
                        lambda s, virtual: slc_cache.detect_slc_cliff(s))
    ctx, result = _run(session, tmp_path, "sustained_write")
    assert not {"burst_bw_mbps", "sustained_bw_mbps", "slc_cache_bytes",
                "cache_not_exhausted_after_bytes"} & set(result.metrics)
    assert set(result.unreached) == {"burst_bw_mbps", "sustained_bw_mbps", "slc_cache_bytes",
                                     "cache_not_exhausted_after_bytes"}
    assert any(n.startswith("SLC cache undetermined: the write fell from 2,000.0 MB/s to "
                            "500.0 MB/s after 20,000 MB (10.0 s) and came back to the burst "
                            "level for 6.0 s") for n in result.notes), result.notes
    failed = {v.metric: v.line() for v in judge_result(result, ctx.limits).failed}
    assert set(failed) == {"burst_bw_mbps", "sustained_bw_mbps"}
    assert failed["sustained_bw_mbps"].startswith(
        "sustained_bw_mbps not measured (SLC cache undetermined: the write fell to 500.0 MB/s "
        "after 20,000 MB and came back to the burst level for 6.0 s, so the cache size cannot "
        "be told from this write): fails the limit sustained_bw_mbps >= 100")


def test_sustained_write_without_a_bandwidth_log_is_an_error(
    session: QualSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_render = MethodJob.render

    def no_logs(self: MethodJob, **kwargs: str) -> str:
        return "\n".join(line for line in real_render(self, **kwargs).splitlines()
                         if not line.startswith("write_"))

    monkeypatch.setattr(MethodJob, "render", no_logs)
    with pytest.raises(FioOutputError, match="no write-bandwidth log"):
        _run(session, tmp_path, "sustained_write")


def test_steady_state_rounds_stop_when_the_rule_holds(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    observer = RecordingObserver()
    _ctx, result = _run(session, tmp_path, "steady_state_rand_write_4k", observer)
    # constant figures from the stand-in: steady at round 5, after purge and preconditioning
    assert jobs_run(fake_fio) == ["precondition"] + ["rand_write_4k"] * 5
    assert result.steady_state is not None and result.steady_state.round == 5
    m = result.metrics
    assert m["steady_state_reached"] == 1 and m["steady_state_round"] == 5 and m["rounds"] == 5
    assert m["data_excursion_pct"] == 0 and m["write.iops"] == 50000
    assert result.states["write.iops"] == "steady state"
    rounds = [e for e in observer.events if e.phase == "steady state"]
    assert [(e.round, e.rounds) for e in rounds] == [(i, 6) for i in range(1, 6)]
    assert rounds[0].eta_s is not None and rounds[0].eta_s > rounds[-1].eta_s == 0
    assert "steady state reached at round 5" in result.notes[1]
    assert result.rounds_csv().count("\nsteady state,") == 5


def test_steady_state_not_reached_on_a_drifting_drive(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # precondition, then IOPS falling 20 % per round (the n-th job run gets the n-th figure)
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(str(50000 * 0.8**i) for i in range(8)))
    _ctx, result = _run(session, tmp_path, "steady_state_rand_write_4k")
    assert jobs_run(fake_fio) == ["precondition"] + ["rand_write_4k"] * 6
    m = result.metrics
    assert m["steady_state_reached"] == 0 and m["rounds"] == 6
    assert "steady_state_round" not in m
    assert result.states["write.iops"].startswith("not steady")
    assert "not reached in 6 rounds" in result.notes[1]


def test_consistency_phases_states_and_recovery(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    # job runs: 1 fresh, 2 precondition, 3-6 degradation (writes, perf) x2,
    # 7-16 steady (writes, perf) x5, 17-19 recovery perf tests (IOPS of each run)
    figures = [4000, 500] + [500, 1000] * 2 + [500, 1000] * 5 + [2500, 3800, 4000]
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(map(str, figures)))
    ctx, result = _run(session, tmp_path, "recovery_after_idle", sleep=slept.append)
    assert jobs_run(fake_fio) == (
        ["perf_test", "precondition"] + ["random_writes", "perf_test"] * 7 + ["perf_test"] * 3)
    assert slept == [7, 7, 7]
    random_job = fake_fio.calls()[4]["job"]
    assert "bsrange=4096-1048576" in random_job and "runtime=3s" in random_job
    assert "runtime=5s" in fake_fio.calls()[6]["job"]  # second degradation round: 3 + 2 s
    states = result.states
    assert states["fresh_iops"] == "FOB" and states["degraded_iops"] == "degraded"
    assert states["steady_iops"] == "steady state"
    assert states["recovered_iops"] == states["recovery_ratio"] == "after 21 s idle"
    rows = result.rounds_csv().splitlines()
    assert rows[-3].startswith("recovery,1,after 7 s idle,7,")
    m = result.metrics
    assert (m["fresh_iops"], m["degraded_iops"], m["steady_iops"], m["recovered_iops"]) == (
        4000, 1000, 1000, 4000)
    assert m["recovery_ratio"] == 1.0
    assert m["time_to_recover_s"] == 14  # 3,800 >= 90 % of 4,000 after the second idle
    outcome = judge_result(result, ctx.limits)
    assert not outcome.failed
    assert "back to 90% of fresh after 14 s idle" in result.notes[-1]


def test_consistency_metrics_from_iops(session: QualSession, tmp_path: Path) -> None:
    _ctx, result = _run(session, tmp_path, "recovery_after_idle")
    m = result.metrics
    # the stand-in's constant figures: nothing degrades, so everything is "recovered" at once
    assert m["fresh_iops"] == m["degraded_iops"] == m["steady_iops"] == m["recovered_iops"]
    assert m["recovery_ratio"] == 1 and m["time_to_recover_s"] == 0
    assert m["steady_state_reached"] == 1
    assert m["fresh_lat_p99_us"] == 200 and m["recovered_lat_mean_us"] == pytest.approx(80)
    assert set(m) == set(CATALOG["recovery_after_idle"].metric_names())


def test_a_drive_that_refuses_writes_runs_no_step(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    ctx = session.drive(parse_drive_option(f"file:{tmp_path / 'drive.img'}"))
    ctx.target._sticky = ("refused for this test",)  # noqa: SLF001
    ctx.target.write_refusals = ctx.target._sticky  # noqa: SLF001
    with pytest.raises(SafetyRefusal, match="refused for this test"):
        run_methodology("sustained_write", session, ctx, tmp_path / "work")
    assert jobs_run(fake_fio) == []


def test_unknown_methodology() -> None:
    with pytest.raises(KeyError, match="not a methodology test; known: .*recovery_after_idle"):
        run_methodology("seq_read_128k_qd32", None, None, Path("."))  # type: ignore[arg-type]


def test_job_files() -> None:
    span = aligned_span(1000 * MIB + 123, 512 * MIB, MIB)
    assert span == 512 * MIB
    assert aligned_span(100 * MIB + 5, None, MIB) == 100 * MIB
    with pytest.raises(ValueError, match="smaller than one"):
        aligned_span(1000, None, MIB)
    pre = precondition_job(span, 2).render(filename="/dev/a:b", ioengine="libaio")
    assert "filename=/dev/a\\:b" in pre and "ioengine=libaio" in pre
    assert f"io_size={2 * span}" in pre and "runtime" not in pre and "bs=131072" in pre
    assert "write_bw_log=log" in pre and "log_avg_msec=1000" in pre and "direct=1" in pre
    sustained = sustained_write_job(span, 1.5, None)
    assert sustained.expected_runtime_s is None and sustained.io_bytes == 768 * MIB
    assert sustained.planned_s(100) == pytest.approx(768 * MIB / 100e6)
    rnd = random_size_write_job("r", span, 2.5)
    assert rnd.expected_runtime_s == 2.5 and "runtime=2500ms" in rnd.render(
        filename="/f", ioengine="io_uring") and rnd.timeout_s(30) == 32.5
    with pytest.raises(ValueError, match="give runtime_s, io_bytes or both"):
        MethodJob("x", "x", "write", 4096, 1, span)


FAILED_PURGE = PurgeRecord(None, ("file-punch-hole: Operation not supported",
                                  "file-truncate: Permission denied"), 0.0)
FAILED_STATE = ("as found (purge failed: file-punch-hole: Operation not supported; "
                "file-truncate: Permission denied)")


@pytest.mark.parametrize("workload_id, metric", [("sustained_write", "write.bw_mbps"),
                                                 ("recovery_after_idle", "fresh_iops")])
def test_a_failed_purge_fails_the_test_and_its_figures_are_as_found(
    session: QualSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    workload_id: str, metric: str,
) -> None:
    monkeypatch.setattr(methodology_base, "purge", lambda _target: FAILED_PURGE)
    ctx, result = _run(session, tmp_path, workload_id)
    assert result.states[metric] == FAILED_STATE
    assert result.metrics["purged"] == 0
    outcome = judge_result(result, ctx.limits)
    failed = {v.metric: v for v in outcome.failed}
    assert "purged" in failed
    line = failed["purged"].line()
    assert line.startswith("purged 0 < min 1 (margin -100.0 %)")
    assert 'profile "implicit requirement"' in line


def test_a_successful_purge_adds_no_purged_metric(
    session: QualSession, tmp_path: Path
) -> None:
    ctx, result = _run(session, tmp_path, "sustained_write")
    assert "purged" not in result.metrics and result.requirements == []
    assert "purged" not in {v.metric for v in judge_result(result, ctx.limits).verdicts}


def _waiver() -> ResolvedLimits:
    """A profile's ``steady_state_reached: {max: 1}``: the implicit ``min 1`` is waived."""
    wid = "steady_state_rand_write_4k"
    limit = Limit(wid, "steady_state_reached", None, 1.0, None,
                  Provenance("waiver.yaml", "loop devices", "steady state not reachable"))
    return ResolvedLimits({(wid, "steady_state_reached"): limit}, ())


def test_steady_state_not_reached_fails_unless_a_profile_waives_it(
    session: QualSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(str(50000 * 0.8**i) for i in range(8)))
    ctx, result = _run(session, tmp_path, "steady_state_rand_write_4k")
    assert result.metrics["steady_state_reached"] == 0
    failed = [v for v in judge_result(result, ctx.limits).failed]
    assert [v.metric for v in failed] == ["steady_state_reached"]
    assert failed[0].line().startswith("steady_state_reached 0 < min 1")
    assert 'profile "implicit requirement"' in failed[0].line()
    waived = judge_result(result, _waiver())
    assert not waived.failed
    assert [v.limit.provenance.profile for v in waived.verdicts if v.limit] == ["loop devices"]


def test_steady_state_reached_passes_the_implicit_requirement(
    session: QualSession, tmp_path: Path
) -> None:
    ctx, result = _run(session, tmp_path, "steady_state_rand_write_4k")
    outcome = judge_result(result, ctx.limits)
    assert not outcome.failed
    verdict = next(v for v in outcome.verdicts if v.metric == "steady_state_reached")
    assert verdict.status == "pass" and verdict.measured == 1


def test_a_drive_steady_at_target_that_falls_back_after_idle_never_recovered(
    session: QualSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A former bug: steady rounds at 95 % of fresh, recovery rounds 62 % -> 38 %: the
    figure before idle was at the target, so time_to_recover_s was 0. It never recovered,
    and a limit on time_to_recover_s fails saying so."""
    figures = [4000, 500] + [500, 1000] * 2 + [500, 3800] * 5 + [2500, 2000, 1500]
    monkeypatch.setenv("FAKEFIO_IOPS", ",".join(map(str, figures)))
    _ctx, result = _run(session, tmp_path, "recovery_after_idle")
    assert result.metrics["steady_iops"] == 3800 and result.metrics["recovered_iops"] == 1500
    assert "time_to_recover_s" not in result.metrics
    assert "time_to_recover_s: never" in result.notes[-1]
    path = tmp_path / "recovery.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: lab\n    match: {kind: file}\n"
                    "    source: lab rule\n    limits:\n"
                    "      recovery_after_idle: {time_to_recover_s: {max: 60}}\n")
    limits = ThresholdSet.load([path]).resolve(DriveFacts(None, None, kind="file"))
    [failed] = judge_result(result, limits).failed
    assert failed.metric == "time_to_recover_s" and failed.status == "fail"
    assert failed.line().startswith(
        "time_to_recover_s never recovered: no idle time up to 21 s kept it at >= 90% of fresh "
        "(3,600); after idle 2,500 / 2,000 / 1,500: fails the limit time_to_recover_s <= 60")


def _bw_log_from_found_case(tmp_path: Path, fake_fio: FakeFio, case: str) -> None:
    """Make the session's fio stand-in replace every bandwidth log it writes with found case
    ``case`` (as the cases' casefio.py does), or skip when the case is absent."""
    found = cases_dir() / "found" / "newbugs-inputs" / case
    if not found.is_file():
        pytest.skip(f"found case {found} not present: set SSDQUAL_CASES_DIR")
    _bw_log_from(tmp_path, fake_fio, found)


def _bw_log_from(tmp_path: Path, fake_fio: FakeFio, log: Path) -> None:
    """Make the session's fio stand-in replace every bandwidth log it writes with ``log``."""
    (tmp_path / "fio").write_text(
        f"#!/bin/sh\n{sys.executable} {fake_fio.path} \"$@\"\nrc=$?\n"
        f"if [ -f log_bw.1.log ]; then cp {log} log_bw.1.log; fi\nexit $rc\n")


def test_a_drive_stalling_every_other_second_is_read_with_the_jobs_window(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    """The job logs every 1 s (log_avg_msec=1000); a drive that completes no write in every odd
    second leaves lines at even seconds only (400 MB/s each, 30 s). Read with the job's window
    that is 15 s of 400 MB/s and 15 stalls: 6,000 MB. Inferred from the stamps the window was
    2 s: 12,000 MB and no stall."""
    log = tmp_path / "even_seconds_bw.1.log"
    log.write_text("".join(f"{t}, 390625, 1, 0, 0\n" for t in range(2000, 30001, 2000)))
    _bw_log_from(tmp_path, fake_fio, log)
    _ctx, result = _run(session, tmp_path, "sustained_write")
    [step] = [s for s in result.steps if s.phase == "sustained write"]
    assert step.bw is not None and step.bw.gaps is not None
    assert len(step.bw) == 30 and step.bw.gaps.window_s == 1.0
    assert step.bw.gaps.stall_count == 15 and step.bw.gaps.stalled_s == 15.0
    written = sum(BandwidthSeries.from_series(step.bw).bytes_per_interval())
    assert written == pytest.approx(6000e6, rel=1e-6)
    # 400 MB/s whenever it writes: no cliff, 6,000 MB written without one
    assert result.metrics["cache_not_exhausted_after_bytes"] == pytest.approx(6000e6, rel=1e-6)
    assert any(n.startswith("write-bandwidth log: 15 stalls") for n in result.notes), result.notes


@pytest.mark.parametrize(
    ("case", "cache_bytes", "note"),
    [
        ("B23_fio-3.16_4col_bw.1.log", 800e6, "no stalls"),
        ("B24_duplicate_timestamp_bw.1.log", 3.6e9,
         "no stalls; 1 repeated log line(s) of one window averaged"),
        ("B25_stall_no_lines_bw.1.log", 2.4e9,
         "1 stall (no I/O completed for a whole 1 s window or more), 2 s in all, longest 2 s "
         "from 3 s"),
    ],
)
def test_sustained_write_on_the_found_bandwidth_logs(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path, case: str, cache_bytes: float,
    note: str,
) -> None:
    """The found cases end to end, as casefio.py tried them: fio's bandwidth log replaced by
    the case file (4 columns, a repeated stamp, missing lines)."""
    _bw_log_from_found_case(tmp_path, fake_fio, case)
    _ctx, result = _run(session, tmp_path, "sustained_write")
    m = result.metrics
    assert m["slc_cache_bytes"] == pytest.approx(cache_bytes, rel=1e-5)
    assert m["burst_bw_mbps"] == pytest.approx(400, rel=1e-5)
    assert m["sustained_bw_mbps"] == pytest.approx(100, rel=1e-4)
    assert any(n.startswith(f"write-bandwidth log: {note}") for n in result.notes), result.notes


def test_stalls_in_the_performance_tests_are_notes(
    session: QualSession, fake_fio: FakeFio, tmp_path: Path
) -> None:
    """Every write job's bandwidth log replaced by found case B25 (no line for 4 s and 5 s)."""
    _bw_log_from_found_case(tmp_path, fake_fio, "B25_stall_no_lines_bw.1.log")
    _ctx, result = _run(session, tmp_path, "recovery_after_idle")
    stalls = [n for n in result.notes if "performance test, write-bandwidth log" in n]
    assert len(stalls) == 1 + 2 + 5 + 3  # fresh, degradation, steady state, recovery rounds
    assert stalls[0] == ("fresh performance test, write-bandwidth log: 1 stall (no I/O "
                         "completed for a whole 1 s window or more), 2 s in all, longest 2 s "
                         "from 3 s")
    assert stalls[-1].startswith("recovery round 3 performance test, write-bandwidth log: 1 stall")


def test_a_purge_forgets_the_sessions_read_prefill(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    """After a purge, the span the session prefilled for reads is deallocated: the next plain
    read workload must prefill again, not claim "read after a prefill" on purged media."""
    from types import SimpleNamespace

    base = methodology_base
    ctx = SimpleNamespace(target=object(), prefilled_bytes=268435456)
    run = base.MethodRun(SimpleNamespace(), ctx, tmp_path, "sustained_write")  # type: ignore[arg-type]
    monkeypatch.setattr(base, "purge", lambda target: PurgeRecord(None, ("none: no",), 0.0))
    run.purge()
    assert ctx.prefilled_bytes == 268435456  # nothing was purged: the prefill still stands
    monkeypatch.setattr(base, "purge",
                        lambda target: PurgeRecord("blkdiscard", ("blkdiscard: ok",), 0.1))
    run.purge()
    assert ctx.prefilled_bytes is None
