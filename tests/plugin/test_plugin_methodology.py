"""The methodology suites through ``pytester`` with the fio stand-in: verdicts with the drive state
of each figure, progress lines, Allure attachments, refusals and marker checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ssdqual.methodology.client_presets import INTERVAL_S

from ..conftest import REPO, FakeFio, flat_verdicts, unwrapped

SUSTAINED_SUITE = str(REPO / "suites" / "test_sustained_write.py")

LIMITS = """
version: 1
profiles:
  - name: scratch sustained floor
    match: {kind: file}
    source: "test limits"
    limits:
      sustained_write: {sustained_bw_mbps: {min: %(sustained_min)s}, burst_bw_mbps: {min: 100}}
"""


def _args(pytester: pytest.Pytester, fake_fio: FakeFio, sustained_min: float, *extra: str
          ) -> list[str]:
    limits = pytester.path / "limits.yaml"
    limits.write_text(LIMITS % {"sustained_min": sustained_min})
    return [f"--drive=file:{pytester.path / 'target.img'}", f"--thresholds={limits}",
            f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke", "-p", "no:cacheprovider",
            *extra]


def test_methodology_figures_are_stored_and_gated_against_a_baseline(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = pytester.path / "results"
    args = [SUSTAINED_SUITE, *_args(pytester, fake_fio, 50), f"--results-dir={results}"]
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,80,80,80,80")
    pytester.runpytest(*args, "--firmware=A").assert_outcomes(passed=1)
    (run_a,) = [p for p in results.iterdir() if (p / "run.json").exists()]
    stored = list(run_a.rglob("record.json"))
    assert len(stored) == 1
    record = json.loads(stored[0].read_text())
    assert record["workload"] == "sustained_write"
    assert record["metrics"]["sustained_bw_mbps"] == pytest.approx(80, rel=0.01)
    assert any(p.suffix == ".fio" for p in stored[0].parent.rglob("*"))

    # build "B" sustains 60 MB/s: still above the absolute floor of 50, but 25 % slower
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,60,60,60,60")
    slower = pytester.runpytest(*args, "--firmware=B", f"--baseline={run_a}")
    slower.assert_outcomes(failed=1)
    out = unwrapped(slower.stdout.str())  # the failure message wraps at 120 columns
    assert "REGRESSION:" in out
    # one run each: past the limit with no noise estimate is inconclusive, so it was run once
    # more (--repeat-max defaults to twice --repeat) and judged on 2 vs 1 runs
    assert ("sustained_bw_mbps 60 vs 80 on A (\u221225.0 %, 90 % CI \u221225.0 \u2026 "
            "\u221225.0 %, limit \u22125 %) [2 vs 1 runs, RSD 0.0 % vs -; a single-run "
            "baseline cannot give the 95 %/5 % guarantee (store the baseline with --repeat "
            "3)]") in out
    assert "WARNING: 3 metric(s) judged against a baseline with one run per figure" in out
    assert fake_fio.job_rws() == ["write"] * 3


def _record(results: Path, run: int = -1) -> dict:
    """The sustained_write record of the ``run``-th complete run (in run id order)."""
    runs = sorted(p for p in results.iterdir() if (p / "run.json").exists())
    [path] = list(runs[run].rglob("record.json"))
    return json.loads(path.read_text())


def test_a_methodology_test_runs_repeat_times_and_is_judged_on_the_median(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--repeat N`` runs the whole methodology N times, each in its own
    folder, and judges the medians (before: one run, whatever ``--repeat`` said)."""
    results = pytester.path / "results"
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,80,80,80,80")
    monkeypatch.setenv("FAKEFIO_BW_SCALE", "1,0.5,1.1")  # sustained 80, 40, 88 MB/s
    result = pytester.runpytest(SUSTAINED_SUITE, *_args(pytester, fake_fio, 70),
                                f"--results-dir={results}", "--repeat=3")
    result.assert_outcomes(passed=1)  # the median, 80, meets min 70 (the 40 MB/s run alone not)
    assert fake_fio.job_rws() == ["write"] * 3
    record = _record(results)
    assert record["repeat"] == 3
    assert [r["metrics"]["sustained_bw_mbps"] for r in record["repetitions"]] == pytest.approx(
        [80, 40, 88], rel=0.01)
    assert record["metrics"]["sustained_bw_mbps"] == pytest.approx(80, rel=0.01)  # not 88, 69
    assert record["spread_pct"]["sustained_bw_mbps"] == pytest.approx(60, rel=0.02)
    [run] = [p for p in results.iterdir() if (p / "run.json").exists()]
    workload_dir = next(run.rglob("record.json")).parent  # each run's files in its repN/
    for rep in ("rep1", "rep2", "rep3"):
        assert [p.name for p in (workload_dir / rep).iterdir() if p.suffix == ".fio"], rep
    assert not list((workload_dir / "rep1").glob("rep2*"))  # each run's files once
    assert record["states"]["sustained_bw_mbps"] == "FOB"


def test_a_methodology_test_is_gated_on_every_run_and_rerun_until_decided(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    results = pytester.path / "results"
    args = [SUSTAINED_SUITE, *_args(pytester, fake_fio, 50), f"--results-dir={results}",
            "--repeat=3"]
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,80,80,80,80")
    monkeypatch.setenv("FAKEFIO_BW_SCALE", "1,1.01,0.99")
    pytester.runpytest(*args, "--firmware=A").assert_outcomes(passed=1)
    # B: 80, 56, 104 MB/s -- the same median, but noise that never settles: rerun up to
    # --repeat-max (6), then UNDECIDED (too few runs for that noise): skipped, the run exits 1
    monkeypatch.setenv("FAKEFIO_BW_SCALE", "1,0.7,1.3")
    wild = pytester.runpytest(*args, "--firmware=B", "--baseline=firmware:A")
    wild.assert_outcomes(skipped=1)
    assert wild.ret == 1
    out = wild.stdout.str()
    assert ("UNDECIDED" in out and "sustained_bw_mbps" in out
            and "[6 vs 3 runs, RSD 26.8 % vs 1.0 %]: UNDECIDED: noise" in out)
    assert "INCOMPLETE: 1 test(s) UNDECIDED by the regression gate" in out
    record = _record(results)
    assert record["repeat"] == 6 and fake_fio.job_rws() == ["write"] * 9
    assert record["status"] == "skipped" and "UNDECIDED" in record["reason"]
    # C: 25 % slower in every run: regressed on 3 vs 3 runs, confirmed on every run up to
    # --repeat-max (6) before it fails
    monkeypatch.setenv("FAKEFIO_BW_SCALE", "0.75,0.76,0.74")
    slow = pytester.runpytest(*args, "--firmware=C", "--baseline=firmware:A")
    slow.assert_outcomes(failed=1)
    assert "sustained_bw_mbps 60 vs 80 on A (\u221225.0 %, 90 % CI" in slow.stdout.str()
    assert "[6 vs 3 runs, RSD 1.2 % vs 1.0 %]" in slow.stdout.str()
    assert _record(results)["repeat"] == 6 and len(fake_fio.job_rws()) == 15


def test_sustained_write_below_its_limit_fails_with_state_notes_and_progress(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,80,80,80,80")
    alluredir = pytester.path / "allure"
    result = pytester.runpytest(SUSTAINED_SUITE, *_args(pytester, fake_fio, 100),
                                f"--alluredir={alluredir}")
    result.assert_outcomes(failed=1)
    out = flat_verdicts(result.stdout.str())
    # failure message: the violated limit with its state, then the test's notes
    assert "sustained_write: 1 limit(s) violated" in out
    assert "sustained_bw_mbps 80 < min 100" in out and "[FOB]" in out
    assert "SLC cache 1,050 MB" in out and "purge: file-" in out
    # progress while running: phase and ETA
    assert "sustained_write: purge: file-" in out and "ETA" in out
    assert "sustained_write: sustained write: write " in out
    # the verdict table names the state of each figure
    assert "sustained_bw_mbps @ FOB" in out and "burst_bw_mbps @ FOB" in out
    (res,) = [json.loads(p.read_text()) for p in alluredir.glob("*-result.json")]
    assert res["status"] == "failed"
    names = {a["name"] for a in res["attachments"]}
    assert {"methodology notes", "rounds", "per-second log", "drive state of each metric",
            "fio job sustained_write", "verdicts", "metrics"} <= names
    csv = next(a for a in res["attachments"] if a["name"] == "per-second log")
    lines = (alluredir / csv["source"]).read_text().splitlines()
    assert lines[0] == "t_s,phase,round,job,bw_mbps,iops,lat_mean_us" and len(lines) == 9
    steps = [s["name"] for s in res.get("steps", [])]
    assert steps[0] == "purge" and steps[1].startswith("sustained write:")


def test_sustained_write_within_its_limit_passes(
    pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKEFIO_BW_SERIES", "300,300,300,190,80,80,80,80")
    result = pytester.runpytest(SUSTAINED_SUITE, *_args(pytester, fake_fio, 50))
    result.assert_outcomes(passed=1)
    assert "2 limits passed, 0 failed" in flat_verdicts(result.stdout.str())
    assert [c["rw"] for c in fake_fio.calls() if c["job"]] == ["write"]


def test_methodology_test_must_be_marked_destructive(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    pytester.makepyfile(test_x="""
def test_unmarked(run_methodology):
    run_methodology("sustained_write")

import pytest

@pytest.mark.destructive
def test_plain_workload(run_methodology):
    run_methodology("seq_write_128k_qd32")

@pytest.mark.destructive
def test_methodology_through_qualify(qualify):
    qualify("recovery_after_idle")
""")
    result = pytester.runpytest(*_args(pytester, fake_fio, 50))
    result.assert_outcomes(failed=3)
    out = flat_verdicts(result.stdout.str())
    assert "recovery_after_idle is a methodology test: run it with run_methodology()" in out
    assert "not marked @pytest.mark.destructive" in out
    assert "seq_write_128k_qd32 is a plain fio workload: run it with qualify()" in out
    assert not [c for c in fake_fio.calls() if c["job"]]


def test_unconfirmed_block_device_skips_every_methodology_suite(
    pytester: pytest.Pytester, fake_fio: FakeFio, loop_device: str
) -> None:
    suites = [str(REPO / "suites" / f) for f in (
        "test_sustained_write.py", "test_steady_state.py", "test_consistency.py")]
    result = pytester.runpytest(*suites, f"--drive={loop_device}", f"--fio-bin={fake_fio.path}",
                                "--ssd-profile=smoke", "-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=3)
    out = flat_verdicts(result.stdout.str())
    assert out.count("is not confirmed for destruction") >= 3
    assert "SKIPPED" in out
    assert not [c for c in fake_fio.calls() if c["job"]]  # fio never ran


def test_methodology_workloads_validate_in_threshold_files(tmp_path: Path) -> None:
    from pytest_ssdqual.catalog.workloads import HIGHER_IS_BETTER
    from pytest_ssdqual.errors import ConfigError
    from pytest_ssdqual.thresholds.loader import ThresholdSet

    good = tmp_path / "good.yaml"
    good.write_text("""
version: 1
profiles:
  - name: p
    match: {controller: X}
    source: s
    limits:
      sustained_write: {sustained_bw_mbps: {min: 1000}, bw_mbps: {min: 500}}
      recovery_after_idle: {recovery_ratio: {min: 0.8}, time_to_recover_s: {max: 600}}
      steady_state_rand_write_4k: {iops: {min: 20000}, steady_state_reached: {min: 1}}
""")
    (profile,) = ThresholdSet.load([good]).profiles
    assert {(lim.workload, lim.metric) for lim in profile.limits} == {
        ("sustained_write", "sustained_bw_mbps"), ("sustained_write", "write.bw_mbps"),
        ("recovery_after_idle", "recovery_ratio"), ("recovery_after_idle", "time_to_recover_s"),
        ("steady_state_rand_write_4k", "write.iops"),
        ("steady_state_rand_write_4k", "steady_state_reached"),
    }
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("recovery_ratio", "recovery_rate"))
    with pytest.raises(ConfigError, match="unknown metric 'recovery_rate' for recovery_after_idle"):
        ThresholdSet.load([bad])
    assert {"sustained_bw_mbps", "slc_cache_bytes", "recovery_ratio", "recovered_iops"} <= \
        HIGHER_IS_BETTER
    assert "time_to_recover_s" not in HIGHER_IS_BETTER


def test_client_presets_on_a_drive_smaller_than_every_test_size_skip_as_not_applicable(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    # smoke's test sizes are 16 and 100 MiB; an 8 MiB scratch file holds neither: skipped with
    # the reason before any I/O, and the skip does not make the run incomplete (stored passing)
    pytester.makepyfile(test_read="def test_read(qualify):\n    qualify('seq_read_128k_qd32')\n")
    result = pytester.runpytest(
        str(REPO / "suites" / "test_client_presets.py"), "test_read.py", "--scratch-size=8M",
        *_args(pytester, fake_fio, 100), "-rs")
    result.assert_outcomes(skipped=1, passed=1)
    assert result.ret == pytest.ExitCode.OK
    out = flat_verdicts(result.stdout.str())
    assert "client presets need a test region of 16 MiB or 100 MiB (profile smoke); " in out
    assert "has only 8 MiB" in out and "INCOMPLETE" not in out
    assert fake_fio.job_rws() == ["write", "read"]  # test_read's prefill and read only
    [header] = [line for line in out.splitlines() if line.startswith("ssdqual: results: ")]
    run_dir = Path(header.removeprefix("ssdqual: results: ").split(";")[0])
    run = json.loads((run_dir / "run.json").read_text())
    assert run["passed"] is True and run["tests"]["skipped"] == 0


PRESET_LIMITS = """
version: 1
profiles:
  - name: presets at both review sizes
    match: {kind: file}
    source: "test limits: one at each CrystalDiskMark review size"
    limits:
      client_presets:
        seq1m_q1t1_100mib.write.bw_mbps: {min: 1}
        seq1m_q1t1_1000mib.write.bw_mbps: {min: 1}
        %(extra)s
"""


def test_client_presets_limit_at_a_size_smoke_does_not_run_is_reported_not_failed(
    pytester: pytest.Pytester, fake_fio: FakeFio, idle_waits: list[tuple[str, float]]
) -> None:
    # smoke runs the presets at 16 and 100 MiB: a limit on a 1000 MiB figure (quick/full) is
    # "not measured in this run profile", shown with the sizes smoke runs, and does not fail
    # (before: MISSING, a failure); the 100 MiB limit is judged as usual
    limits = pytester.path / "presets.yaml"
    limits.write_text(PRESET_LIMITS % {"extra": ""})
    args = [str(REPO / "suites" / "test_client_presets.py"),
            f"--drive=file:{pytester.path / 'target.img'}", "--scratch-size=128M",
            f"--thresholds={limits}", f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke",
            "-p", "no:cacheprovider", f"--results-dir={pytester.path / 'results'}"]
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=1)
    # smoke's interval before each write pass, recorded (not waited out: 9 s a run)
    assert idle_waits and set(idle_waits) == {("client_presets", INTERVAL_S["smoke"])}
    out = flat_verdicts(result.stdout.str())
    assert ("  not checked (client_presets seq1m_q1t1_1000mib.write.bw_mbps): "
            "not measured in this run profile: smoke runs the client presets at 16 MiB and "
            "100 MiB, not 1000 MiB (quick, full)") in out
    assert "not in this run profile" in out
    assert "1 limits passed, 0 failed, 0 missing, 1 not measured in this run profile" in out
    [record] = [json.loads(p.read_text()) for p in (pytester.path / "results").rglob(
        "record.json") if json.loads(p.read_text())["workload"] == "client_presets"]
    by_metric = {v["metric"]: v for v in record["verdicts"]}
    assert by_metric["seq1m_q1t1_1000mib.write.bw_mbps"]["status"] == "not_in_profile"
    assert by_metric["seq1m_q1t1_100mib.write.bw_mbps"]["status"] == "pass"

    # a limit whose metric is missing for another reason still fails: a 100 MiB figure on a
    # 64 MiB drive (the size is smoke's own, skipped because it does not fit)
    small = pytester.runpytest(*args, "--scratch-size=64M")
    small.assert_outcomes(failed=1)
    assert ("seq1m_q1t1_100mib.write.bw_mbps not measured (test size 100 MiB skipped: larger "
            "than the drive (64 MiB)): fails the limit") in unwrapped(small.stdout.str())
