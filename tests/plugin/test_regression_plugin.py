"""The firmware regression gate through ``pytester`` with the fio stand-in: ``--baseline``,
``--repeat``, ``--firmware``, ``--results-dir``, and the ``compare`` / ``rejudge`` / ``trend``
commands on the runs it stored.

``FAKEFIO_BW_MBPS`` sets the bandwidth the stand-in reports (a comma list gives the n-th job
the n-th figure): a baseline at 500 MB/s, then a slower build at 400 and a faster one at 520.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import matplotlib.pyplot  # noqa: F401  (see below)
import pytest

from pytest_ssdqual.cli import main as cli
from pytest_ssdqual.report import rejudge
from pytest_ssdqual.results.comparison import Comparison
from pytest_ssdqual.results.run_folder import RUN_FILE, StoredRun
from pytest_ssdqual.results.store import ResultsStore
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import (
    REPO,
    FakeFio,
    flat_verdicts,
    limits_yaml,
    qual_args,
    unwrapped,
    write_suite,
)

# In-process pytester runs drop the modules first imported inside them, and numpy (under the
# Allure charts' and trend's matplotlib) cannot be imported twice in one process: matplotlib is
# imported above, at collection, before any pytester run.

MINUS = "\u2212"

SUITE = """
import pytest

@pytest.mark.destructive
def test_write(qualify):
    qualify("seq_write_128k_qd32")
"""

def _limits(min_bw_mbps: float, max_drop_pct: float = 5) -> str:
    return limits_yaml(
        {"seq_write_128k_qd32": {"bw_mbps": {"min": min_bw_mbps}, "lat_p99_us": {"max": 100000}}},
        max_drop_pct=max_drop_pct)


@pytest.fixture
def gate(pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch
         ) -> Gate:
    write_suite(pytester.path, SUITE, _limits(100))
    return Gate(pytester, fake_fio, monkeypatch)


class Gate:
    """Runs the small suite on a file target with the stand-in, one 'firmware build' a run."""

    def __init__(self, pytester: pytest.Pytester, fake_fio: FakeFio,
                 monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.fake_fio = fake_fio
        self.monkeypatch = monkeypatch
        self.results = pytester.path / "results"

    def args(self, *extra: str, drive: str = "target.img") -> list[str]:
        return qual_args(self.pytester.path, Path("limits.yaml"), self.fake_fio.path,
                         f"--results-dir={self.results}", *extra, drives=(drive,))

    def run(self, bw: str, *extra: str) -> pytest.RunResult:
        self.monkeypatch.setenv("FAKEFIO_BW_MBPS", bw)
        return self.pytester.runpytest(*self.args(*extra))

    def runs(self) -> list[StoredRun]:
        store = ResultsStore(self.results)
        return [StoredRun.load(p) for p in store.complete_runs()]


def _allure(alluredir: Path) -> dict[str, dict]:
    out = {}
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        out[result["name"]] = result
    return out


def test_help_lists_the_gate_options(pytester: pytest.Pytester) -> None:
    out = pytester.runpytest("--help").stdout.str()
    for option in ("--results-dir=DIR", "--baseline=REF", "--repeat=N", "--firmware=NAME"):
        assert option in out
    assert "ssdqual-results/ in the" in out


def test_a_run_is_stored_with_identity_options_tools_and_fio_files(gate: Gate) -> None:
    result = gate.run("500", "--firmware=A")
    result.assert_outcomes(passed=1)
    [run] = gate.runs()
    assert run.passed and run.info["exitstatus"] == 0 and run.profile == "smoke"
    assert run.info["tools"]["fio"] == "fio-3.33"
    assert run.info["options"]["firmware"] == "A" and run.info["options"]["repeat"] == 1
    assert run.info["started_utc"] <= run.info["ended_utc"]
    [drive] = run.drives
    assert drive["firmware"] == "A" and drive["model"] == "Scratch file"
    assert drive["firmware_reported"] == os.uname().release  # what the target reports
    assert (drive["controller"], drive["nand"]) == ("host-file", "host-fs")
    record = run.records_of(drive["drive"])["seq_write_128k_qd32"]
    assert record["metrics"]["write.bw_mbps"] == 500.0
    assert record["facts"]["firmware"] == "A"
    assert [v["status"] for v in record["verdicts"] if v["limit"]] == ["pass", "pass"]
    rep = run.path / drive["slug"] / "seq_write_128k_qd32" / "rep1"
    assert "rw=write" in (rep / "job.fio").read_text()
    assert json.loads((rep / "fio-output.json").read_text())["jobs"][0]["write"]["bw_bytes"] \
        == 500_000_000
    assert f"results stored in {run.path}" in flat_verdicts(result.stdout.str())


def test_slower_faster_and_out_of_limits_builds_against_one_baseline(gate: Gate) -> None:
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)

    # B, 400 MB/s: fails the gate with the exact message; the absolute limits still pass
    alluredir = gate.pytester.path / "allure"
    slow = gate.run("400", "--firmware=B", "--baseline=firmware:A", f"--alluredir={alluredir}")
    slow.assert_outcomes(failed=1)
    assert slow.ret == pytest.ExitCode.TESTS_FAILED
    out = unwrapped(slow.stdout.str())
    # one run on each side is inconclusive past the limit (no noise estimate): run once more
    # (--repeat-max is twice --repeat), then regressed on 2 vs 1 runs
    assert (f"write.bw_mbps 400 vs 500 on A ({MINUS}20.0 %, 90 % CI {MINUS}20.0 \u2026 "
            f"{MINUS}20.0 %, limit {MINUS}5 %) [2 vs 1 runs, RSD 0.0 % vs -; a single-run "
            "baseline cannot give the 95 %/5 % guarantee (store the baseline with --repeat "
            "3)]") in out
    assert "WARNING: 3 metric(s) judged against a baseline with one run per figure" in out
    assert gate.fake_fio.job_rws() == ["write"] * 3
    assert re.search(r"seq_write_128k_qd32\s+write\.bw_mbps @ as found \(not purged, not "
                     r"preconditioned\)\s+400\s+>= 100\s+\+300\.0 %\s+PASS",
                     flat_verdicts(out)), out
    [allure] = _allure(alluredir).values()
    assert allure["status"] == "failed"  # failed (a verdict), not broken
    # pytest's failure text starts with the stable prefix; Allure shows it after "Failed: "
    message = allure["statusDetails"]["message"]
    assert message.startswith("Failed: REGRESSION:")
    baseline, candidate = gate.runs()
    assert unwrapped(message).splitlines()[0].endswith(f"vs baseline run {baseline.run_id}")
    assert not candidate.passed and candidate.info["exitstatus"] == 1
    record = candidate.records_of(candidate.drives[0]["drive"])["seq_write_128k_qd32"]
    assert record["status"] == "failed" and record["repeat"] == 2
    assert record["regression"]["baseline_run"] == baseline.run_id
    assert record["regression"]["baseline_metrics"]["write.bw_mbps"] == 500.0

    # C, 520 MB/s: passes, and the improvement is reported
    fast = gate.run("520", "--firmware=C", "--baseline=firmware:A")
    fast.assert_outcomes(passed=1)
    assert fast.ret == pytest.ExitCode.OK
    out = unwrapped(fast.stdout.str())
    assert re.search(rf"improved\s+\S+ seq_write_128k_qd32: write\.bw_mbps 520 vs 500 on A "
                     rf"\(\+4\.0 %, limit {MINUS}5 %\)", out), out
    assert ("0 regressed, 0 inconclusive, 1 improved, 2 within limit, 0 without baseline value, "
            "0 not measured") in out  # + write.iops
    assert ("NOTE: 3 metric(s) compared on single runs (no noise estimate, judged on the figures "
            "alone): store the baseline and gate with --repeat 3 for a confidence interval") in out
    assert gate.runs()[-1].passed

    # D, 400 MB/s under a 450 floor: the limit failure comes first, the regression after it
    (gate.pytester.path / "limits.yaml").write_text(_limits(450))
    both = gate.run("400", "--firmware=D", "--baseline=firmware:A")
    both.assert_outcomes(failed=1)
    out = unwrapped(both.stdout.str())
    # (run twice: the regression was confirmed by a rerun, so the message says how the
    # judged figures of the 2 runs were taken)
    assert re.search(r"seq_write_128k_qd32: 1 limit\(s\) violated\n  write\.bw_mbps 400 < min "
                     r"450.*\n  figures of 2 runs: write\.lat_p99_us the worst run; the others "
                     r"the median run \(even N: the worse of the two middle runs\)"
                     r"\nREGRESSION: file:\S+ seq_write_128k_qd32: 1 metric\(s\) regressed",
                     out), out


def test_a_baseline_by_run_id_or_latest_passing_firmware(gate: Gate) -> None:
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)
    [first] = gate.runs()
    gate.run("400", "--firmware=A").assert_outcomes(passed=1)  # later, slower, same firmware
    by_id = gate.run("480", f"--baseline={first.run_id}")
    by_id.assert_outcomes(passed=1)  # -4 % vs 500 is within 5 %
    assert f"vs 500 on A ({MINUS}4.0 %" in unwrapped(by_id.stdout.str())
    latest = gate.run("480", "--baseline=firmware:A")  # latest passing run of A: the 400 one
    latest.assert_outcomes(passed=1)
    assert "vs 400 on A (+20.0 %" in unwrapped(latest.stdout.str())


@pytest.mark.parametrize(
    ("baseline", "message"),
    [
        ("nope", "no run 'nope'"),
        ("firmware:Z", "no passing run of firmware 'Z'"),
        ("firmware:", "firmware: needs a name"),
    ],
)
def test_an_unknown_baseline_is_a_usage_error_before_any_io(
    gate: Gate, baseline: str, message: str
) -> None:
    result = gate.run("500", f"--baseline={baseline}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert message in result.stderr.str()
    assert gate.fake_fio.job_rws() == []


def test_a_baseline_of_another_profile_is_refused_at_session_start(gate: Gate) -> None:
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)
    [run] = gate.runs()
    jobs = len(gate.fake_fio.job_rws())
    for ref in (run.run_id, "firmware:A"):
        result = gate.pytester.runpytest(*gate.args(f"--baseline={ref}"), "--ssd-profile=quick")
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        err = result.stderr.str()
        assert "profile" in err and "smoke" in err and "quick" in err and "refusing" in err
    assert len(gate.fake_fio.job_rws()) == jobs


def test_a_baseline_of_another_model_breaks_the_test_with_the_reason(gate: Gate) -> None:
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)
    [run] = gate.runs()
    other = gate.pytester.path / "other-lab" / run.run_id
    shutil.copytree(run.path, other)
    info = json.loads((other / RUN_FILE).read_text())
    info["drives"][0]["model"] = "Other SSD 256GB"
    (other / RUN_FILE).write_text(json.dumps(info))
    alluredir = gate.pytester.path / "allure"
    result = gate.run("500", f"--baseline={other}", f"--alluredir={alluredir}")
    result.assert_outcomes(failed=1)
    out = flat_verdicts(result.stdout.str())
    assert "was taken on Other SSD 256GB" in out
    assert "refusing to compare a different model, controller or NAND" in out
    assert {r["status"] for r in _allure(alluredir).values()} == {"broken"}
    candidate = gate.runs()[-1]  # the measurement is still stored, with the refusal
    record = candidate.records_of(candidate.drives[0]["drive"])["seq_write_128k_qd32"]
    assert "Other SSD 256GB" in record["regression"]["error"]


def test_a_damaged_baseline_is_a_usage_error_or_a_broken_test_never_internalerror(
    gate: Gate,
) -> None:
    """A former bug: a stored figure of 401 digits (or a run.json nested 100000 deep) made
    float() / json raise inside the gate: INTERNALERROR, exit 3."""
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)
    [run] = gate.runs()
    [record] = run.path.glob("*/*/record.json")
    data = json.loads(record.read_text())
    data["metrics"]["write.bw_mbps"] = 10**400
    record.write_text(json.dumps(data))
    jobs = len(gate.fake_fio.job_rws())
    damage = (f'{record}: metrics["write.bw_mbps"]: unreadable, the stored file is damaged: a '
              "401-digit integer is beyond 2^128 (fix: remove or restore the run folder "
              f"{run.path})")
    by_id = gate.run("500", "--firmware=B", f"--baseline={run.run_id}")
    assert by_id.ret == pytest.ExitCode.USAGE_ERROR
    assert f"--baseline: {damage}" in by_id.stderr.str()
    assert len(gate.fake_fio.job_rws()) == jobs  # refused before any I/O
    # firmware:A finds the run in the index (indexed while it was sound): the test is broken
    by_firmware = gate.run("500", "--firmware=C", "--baseline=firmware:A")
    by_firmware.assert_outcomes(failed=1)
    assert damage in flat_verdicts(by_firmware.stdout.str())
    (run.path / RUN_FILE).write_text('{"run_id": ' + "[" * 100000 + "]" * 100000 + "}")
    deep = gate.run("500", "--firmware=D", f"--baseline={run.path}")
    assert deep.ret == pytest.ExitCode.USAGE_ERROR
    assert (f"--baseline: {run.path / RUN_FILE}: unreadable, the stored file is damaged: not "
            "valid JSON: nested too deeply to read") in deep.stderr.str()
    for result in (by_id, by_firmware, deep):
        assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()


def test_repeat_judges_the_change_first_noise_never_hides_a_drop(gate: Gate) -> None:
    """These drops passed as "too noisy to gate" before."""
    gate.run("1000", "--firmware=A", "--repeat=3").assert_outcomes(passed=1)
    jobs = len(gate.fake_fio.job_rws())
    half = gate.run("500,515,485", "--firmware=B", "--baseline=firmware:A", "--repeat=3")
    half.assert_outcomes(failed=1)
    # regressed on 3 vs 3 runs, then confirmed on every run up to --repeat-max (6): the
    # stand-in cycles 500, 515, 485
    assert len(gate.fake_fio.job_rws()) == jobs + 6
    out = unwrapped(half.stdout.str())
    assert re.search(  # the status column's padding ends where a long drive path wraps
        rf"REGRESSED\s+{re.escape(noisy_drive(gate))} seq_write_128k_qd32: write.bw_mbps 500 vs "
        rf"1000 on A \({MINUS}50.0 %, 90 % CI {MINUS}51.1 \u2026 {MINUS}48.9 %, limit "
        rf"{MINUS}5 %\) \[6 vs 3 runs, RSD 2.7 % vs 0.0 %\]", out), out
    run = gate.runs()[-1]
    record = run.records_of(run.drives[0]["drive"])["seq_write_128k_qd32"]
    assert record["repeat"] == 6 and record["metrics"]["write.bw_mbps"] == 500.0
    assert sorted(r["metrics"]["write.bw_mbps"] for r in record["repetitions"]) == [
        485, 485, 500, 500, 515, 515]
    assert record["regression"]["baseline_samples"]["write.bw_mbps"] == [1000.0] * 3
    # ssdqual rejudge with the same limits compares the same runs the same way
    [again] = rejudge.rejudge_run(run, ThresholdSet.load([gate.pytester.path / "limits.yaml"]))
    stored = [Comparison.from_dict(c) for c in record["regression"]["comparisons"]]
    assert [c.line() for c in again.comparisons] == [c.line() for c in stored]
    assert [c.status for c in stored] == ["regressed", "within limit", "within limit"]
    folder = run.path / run.drives[0]["slug"] / "seq_write_128k_qd32"
    assert sorted(p.name for p in folder.glob("rep*")) == [f"rep{n}" for n in range(1, 7)]

    gate.run("1000,1002,998", "--firmware=A2", "--repeat=3").assert_outcomes(passed=1)
    gate.run("900,902,850", "--firmware=B2", "--baseline=firmware:A2",
             "--repeat=3").assert_outcomes(failed=1)
    # the same build again passes: the same three figures in another order
    same = gate.run("998,1000,1002", "--firmware=C2", "--baseline=firmware:A2", "--repeat=3")
    same.assert_outcomes(passed=1)
    assert "0 regressed, 0 inconclusive" in unwrapped(same.stdout.str())


def _in_run_order(gate: Gate, figures: list[float]) -> str:
    """``FAKEFIO_BW_MBPS`` that gives the next runs ``figures`` in this order (the stand-in
    cycles its list by the number of fio jobs run so far)."""
    done, size = len(gate.fake_fio.job_rws()), len(figures)
    values = [0.0] * size
    for k, figure in enumerate(figures):
        values[(done + k) % size] = figure
    return ",".join(f"{v:g}" for v in values)


def test_too_few_runs_for_the_noise_are_rerun_to_repeat_max_then_undecided(gate: Gate) -> None:
    gate.run("1000", "--firmware=A", "--repeat=3").assert_outcomes(passed=1)
    # 1000, 900, 1100 (RSD 10 %) are too few runs for a 5 % limit: rerun to --repeat-max
    # whatever a look shows (before: the fourth run at 1000 looked within the limit and ended
    # the reruns); 6 runs exclude a 10 % drop at 95 %: passed
    jobs = len(gate.fake_fio.job_rws())
    decided = gate.run(_in_run_order(gate, [1000, 900, 1100, 1000, 1000, 1000]),
                       "--firmware=B", "--baseline=firmware:A", "--repeat=3")
    decided.assert_outcomes(passed=1)
    assert len(gate.fake_fio.job_rws()) == jobs + 6
    assert ("[6 vs 3 runs, RSD 6.3 % vs 0.0 %; too few runs for this noise (needs 7 per side): "
            "judged on what these runs alone settle]") in unwrapped(decided.stdout.str())
    run = gate.runs()[-1]
    record = run.records_of(run.drives[0]["drive"])["seq_write_128k_qd32"]
    assert record["repeat"] == 6 and len(record["repetitions"]) == 6

    # noise that never settles: rerun to --repeat-max (default twice --repeat), then UNDECIDED:
    # neither passed nor failed -- the test is skipped and the run exits 1 (incomplete)
    jobs = len(gate.fake_fio.job_rws())
    wild = gate.run("1000,700,1300", "--firmware=C", "--baseline=firmware:A", "--repeat=3")
    wild.assert_outcomes(skipped=1)
    assert wild.ret == 1
    assert len(gate.fake_fio.job_rws()) == jobs + 6
    out = unwrapped(wild.stdout.str())
    assert re.search(r"UNDECIDED\s+\S+ seq_write_128k_qd32: write.bw_mbps 969 vs 1000 "
                     r".*\[6 vs 3 runs, RSD 26.8 % vs 0.0 %\]: UNDECIDED: noise 23.5 % too "
                     r"high for a 5 % limit with 6 vs 3 runs; needs 115 runs per side "
                     r"\(--repeat 115 on this build and the baseline\)", out), out
    assert "1 UNDECIDED (neither pass nor fail: the run is incomplete)" in out
    assert "INCOMPLETE: 1 test(s) UNDECIDED by the regression gate" in out
    assert gate.runs()[-1].info["passed"] is False  # never a firmware:C baseline
    jobs = len(gate.fake_fio.job_rws())
    gate.run("1000,700,1300", "--firmware=C", "--baseline=firmware:A", "--repeat=3",
             "--repeat-max=3").assert_outcomes(skipped=1)
    assert len(gate.fake_fio.job_rws()) == jobs + 3
    # a regressed metric fails the test; the undecided one is listed with it
    jobs = len(gate.fake_fio.job_rws())
    gate.monkeypatch.setenv("FAKEFIO_IOPS", "50000,35000,65000")
    both = gate.run("500", "--firmware=D", "--baseline=firmware:A", "--repeat=3")
    both.assert_outcomes(failed=1)
    assert len(gate.fake_fio.job_rws()) == jobs + 6
    out = unwrapped(both.stdout.str())
    assert re.search(r"REGRESSION: \S+ seq_write_128k_qd32: 1 metric\(s\) regressed, 1 "
                     r"UNDECIDED vs baseline run", out), out


def noisy_drive(gate: Gate) -> str:
    return f"file:{gate.pytester.path / 'target.img'}"


def test_repeat_max_below_repeat_is_a_usage_error(gate: Gate) -> None:
    result = gate.pytester.runpytest(*gate.args("--repeat=3", "--repeat-max=2"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--repeat-max 2 is less than --repeat 3" in result.stderr.str()


@pytest.mark.parametrize("value", ["0", "-2", "three"])
def test_a_bad_repeat_count_is_a_usage_error(gate: Gate, value: str) -> None:
    result = gate.pytester.runpytest(*gate.args(f"--repeat={value}"))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"{value!r} is not a repeat count" in result.stderr.str()


def test_xdist_workers_store_into_one_run(gate: Gate) -> None:
    gate.monkeypatch.setenv("FAKEFIO_BW_MBPS", "500")
    a, b = gate.pytester.path / "a.img", gate.pytester.path / "b.img"
    args = [x for x in gate.args() if not x.startswith("--drive")]
    result = gate.pytester.runpytest_subprocess(
        f"--drive=file:{a}", f"--drive=file:{b}", *args, "-n", "2", "--firmware=A",
    )
    result.assert_outcomes(passed=2)
    [run] = gate.runs()
    assert sorted(d["drive"] for d in run.drives) == [f"file:{a}", f"file:{b}"]
    assert len(run.records) == 2 and all(d["firmware"] == "A" for d in run.drives)


def _cli(args: list[str], fake_fio: FakeFio, empty_path: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=str(empty_path), FAKEFIO_LOG=str(fake_fio.log))
    return subprocess.run([sys.executable, "-m", "pytest_ssdqual.cli", *args], env=env,
                          capture_output=True, text=True, timeout=120, cwd=REPO)


def test_rejudge_flips_the_verdict_with_stricter_limits_and_starts_no_fio(
    gate: Gate, tmp_path: Path
) -> None:
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)
    gate.run("400", "--firmware=B", "--baseline=firmware:A").assert_outcomes(failed=1)
    base, slow = gate.runs()
    calls = len(gate.fake_fio.calls())
    empty = tmp_path / "no-fio-here"
    empty.mkdir()
    stricter = tmp_path / "stricter.yaml"
    stricter.write_text(_limits(600))
    limits = gate.pytester.path / "limits.yaml"
    looser = tmp_path / "looser.yaml"
    looser.write_text(_limits(100, max_drop_pct=25))

    strict = _cli(["rejudge", base.run_id, "--thresholds", str(stricter),
                   "--results-dir", str(gate.results)], gate.fake_fio, empty)
    assert strict.returncode == 1, strict.stderr
    assert "seq_write_128k_qd32: stored PASSED, now FAILED  (changed)" in strict.stdout
    assert "write.bw_mbps 500 < min 600" in strict.stdout
    assert "run FAILS under the new thresholds" in strict.stdout

    same = _cli(["rejudge", base.run_id, "--thresholds", str(limits),
                 "--results-dir", str(gate.results)], gate.fake_fio, empty)
    assert same.returncode == 0 and "run PASSES" in same.stdout

    # the slow build failed the 5 % gate; a 25 % regression limit passes it, from the folder
    loose = _cli(["rejudge", str(slow.path), "--thresholds", str(looser)], gate.fake_fio, empty)
    assert loose.returncode == 0, loose.stdout + loose.stderr
    assert "seq_write_128k_qd32: stored FAILED, now PASSED  (changed)" in loose.stdout
    tight = _cli(["rejudge", str(slow.path), "--thresholds", str(limits)], gate.fake_fio, empty)
    assert tight.returncode == 1
    assert (f"REGRESSION: write.bw_mbps 400 vs 500 on A ({MINUS}20.0 %, 90 % CI {MINUS}20.0 "
            f"\u2026 {MINUS}20.0 %, limit {MINUS}5 %) [2 vs 1 runs") in tight.stdout

    assert len(gate.fake_fio.calls()) == calls  # fio never ran
    bad = _cli(["rejudge", "nope", "--thresholds", str(limits), "--results-dir",
                str(gate.results)], gate.fake_fio, empty)
    assert bad.returncode == 4 and "no run 'nope'" in bad.stderr


def test_compare_and_trend_across_firmware_builds(
    gate: Gate, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)
    gate.run("400", "--firmware=B").assert_outcomes(passed=1)
    gate.run("520", "--firmware=C", "--baseline=firmware:A").assert_outcomes(passed=1)
    a, b, c = gate.runs()
    capsys.readouterr()
    results = ["--results-dir", str(gate.results)]

    assert cli.main(["compare", a.run_id, b.run_id, *results]) == 0
    md = capsys.readouterr().out
    assert f"firmware A, profile smoke) vs B = run {b.run_id} (firmware B" in md
    assert (f"| Scratch file | seq_write_128k_qd32 | write.bw_mbps | 500 | 400 | {MINUS}20.0 % "
            "| - | \u00b11 % (default) | worse |") in md
    assert "| Scratch file | seq_write_128k_qd32 | write.lat_p99_us | 200 | 200 | +0.0 % | - " \
           "| \u00b11 % (default) | unchanged |" in md

    assert cli.main(["compare", a.run_id, c.run_id, "--format=json", *results]) == 0
    data = json.loads(capsys.readouterr().out)
    bw = next(d for d in data["deltas"] if d["workload"] == "seq_write_128k_qd32"
              and d["metric"] == "write.bw_mbps")
    # +4 % inside C's 5 % regression limit, the noise band of runs without repetitions
    assert (bw["a"], bw["b"], bw["status"], bw["limit_pct"]) == (500, 520, "within noise", 5.0)
    assert (bw["noise_pct"], bw["noise_from"]) == (5.0, "gate limit")
    assert bw["change_pct"] == pytest.approx(4.0)

    page = tmp_path / "cmp.html"
    assert cli.main(["compare", str(a.path), str(b.path), "--format=html", "-o", str(page)]) == 0
    assert "<td>write.bw_mbps</td><td>500</td><td>400</td>" in page.read_text()

    # runs with nothing in common: a usage error, never an empty table that reads as "no change"
    other = tmp_path / "other"
    shutil.copytree(b.path, other)
    record = next(other.rglob("record.json"))
    data = json.loads(record.read_text())
    data["workload"] = "seq_read_128k_qd32"
    record.write_text(json.dumps(data))
    assert cli.main(["compare", a.run_id, str(other), *results]) == 4
    err = capsys.readouterr().err
    assert f"runs A and B: runs {a.run_id} and {b.run_id} have no figure in common" in err, err
    assert "fix: compare runs of the same drive model" in err

    png = tmp_path / "trend.png"
    assert cli.main(["trend", "--model", "scratch*", "--workload", "seq_write_128k_qd32",
                     "--metric", "bw_mbps", "-o", str(png), *results]) == 0
    table = capsys.readouterr().out
    rows = [line for line in table.splitlines() if line.startswith("| ") and "runs" not in line]
    assert [r.split(" | ")[0].strip("| ") for r in rows] == ["A", "B", "C"]
    assert f"| B | 1 | 400 | 400 | 400 | {MINUS}20.0 % (worse) |" in table
    assert "| C | 1 | 520 | 520 | 520 | +30.0 % (better) |" in table
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000

    assert cli.main(["trend", "--model", "scratch*", "--workload", "seq_write_128k_qd32",
                     "--metric", "write.bw_mbps", "--order", "C,A", *results]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| ") and "runs" not in line]
    assert [r.split(" | ")[0].strip("| ") for r in rows] == ["C", "A", "B"]
    assert cli.main(["trend", "--model", "scratch*", "--workload", "seq_write_128k_qd32",
                     "--metric", "bw_mbps", "--order", "Z", *results]) == 4
    assert "--order names firmware with no figure here: Z" in capsys.readouterr().err


TWO_TESTS = SUITE + """

def test_read(qualify):
    qualify("seq_read_128k_qd32")
"""


def test_a_baseline_without_the_workload_fails_it_in_the_regression_category(gate: Gate) -> None:
    gate.run("500", "--firmware=A").assert_outcomes(passed=1)  # measured seq_write only
    [base] = gate.runs()
    gate.pytester.makepyfile(test_suite=TWO_TESTS)
    result = gate.run("500", "--firmware=B", f"--baseline={base.run_id}")
    result.assert_outcomes(passed=1, failed=1)  # seq_write gated and fine; seq_read not
    out = flat_verdicts(result.stdout.str())
    assert (f"REGRESSION: file:{gate.pytester.path / 'target.img'} seq_read_128k_qd32: "
            f"2 metric(s) regressed vs baseline run {base.run_id}") in out
    assert (f"no baseline figure for read.bw_mbps in run {base.run_id} (the baseline did not "
            "measure it; this run 500)") in out
    record = gate.runs()[1].records_of(f"file:{gate.pytester.path / 'target.img'}")
    assert record["seq_read_128k_qd32"]["status"] == "failed"
    assert record["seq_write_128k_qd32"]["status"] == "passed"


def test_a_run_with_skipped_or_deselected_tests_is_no_firmware_baseline(gate: Gate) -> None:
    gate.pytester.makepyfile(test_suite=TWO_TESTS)
    gate.run("500", "--firmware=A", "-k", "test_write").assert_outcomes(passed=1)
    [subset] = gate.runs()
    assert subset.info["exitstatus"] == 0 and not subset.passed
    assert subset.info["tests"] == {"skipped": 0, "deselected": 1, "failed": 0}
    gate.pytester.makepyfile(test_suite=TWO_TESTS + """

def test_skipped():
    pytest.skip("destructive tests need --confirm-destroy")
""")
    gate.run("500", "--firmware=A").assert_outcomes(passed=2, skipped=1)
    skipped = gate.runs()[1]
    assert not skipped.passed and skipped.info["tests"]["skipped"] == 1
    refused = gate.run("500", "--baseline=firmware:A")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    assert "no passing run of firmware 'A'" in refused.stderr.str()
    # named explicitly, it is used, with a warning in the gate summary
    named = gate.run("500", f"--baseline={subset.run_id}", "-k", "test_write")
    named.assert_outcomes(passed=1)
    assert (f"WARNING: baseline run {subset.run_id} is not a passing run (exit status 0, "
            "0 skipped, 1 deselected): used only because it was named explicitly") \
        in unwrapped(named.stdout.str())


def test_results_default_to_ssdqual_results_dir_env(gate: Gate,
                                                    tmp_path_factory: pytest.TempPathFactory
                                                    ) -> None:
    target = tmp_path_factory.mktemp("env-results")
    gate.monkeypatch.setenv("SSDQUAL_RESULTS_DIR", str(target))
    gate.monkeypatch.setenv("FAKEFIO_BW_MBPS", "500")
    args = [a for a in gate.args() if not a.startswith("--results-dir")]
    gate.pytester.runpytest(*args).assert_outcomes(passed=1)
    assert len(ResultsStore(target).complete_runs()) == 1
    assert not (gate.pytester.path / "ssdqual-results").exists()
    gate.monkeypatch.delenv("SSDQUAL_RESULTS_DIR")
    gate.pytester.runpytest(*args).assert_outcomes(passed=1)
    assert len(ResultsStore(gate.pytester.path / "ssdqual-results").complete_runs()) == 1


def test_the_commands_read_the_store_pytest_wrote_from_any_folder_of_the_project(
    gate: Gate, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ssdqual rejudge``/``compare``/``runs`` took ``ssdqual-results`` of the current folder,
    where pytest took the ini value in its rootdir (issue 17 item 3)."""
    gate.monkeypatch.delenv("SSDQUAL_RESULTS_DIR")
    gate.monkeypatch.setenv("FAKEFIO_BW_MBPS", "500")
    gate.pytester.makeini("[pytest]\nssdqual_results_dir = lab-store\n")
    args = [a for a in gate.args() if not a.startswith("--results-dir")]
    gate.pytester.runpytest(*args).assert_outcomes(passed=1)
    [run] = ResultsStore(gate.pytester.path / "lab-store").complete_runs()
    suites = gate.pytester.path / "suites"
    suites.mkdir()
    gate.monkeypatch.chdir(suites)
    capsys.readouterr()
    assert cli.main(["runs"]) == 0
    out = capsys.readouterr().out
    assert f"1 run(s) in {gate.pytester.path / 'lab-store'}" in out and run.name in out
    assert cli.main(["rejudge", run.name, "--thresholds",
                     str(gate.pytester.path / "limits.yaml")]) == 0


def test_repeat_takes_the_maximum_and_the_worst_percentile_and_records_how(gate: Gate) -> None:
    """Three runs whose maximum latencies are 1,000, 50,000 and 2,000 us (the stand-in's p99
    250, 12,500, 500 us; its maximum is 4x the p99): the record's figure is 50,000 (it was
    the median, 2,000), the p99 the worst run's, 12,500 (was 500), the bandwidth the median
    run's; each run's figure stays in the record for the gate, and the record says how each
    figure was taken."""
    gate.monkeypatch.setenv("FAKEFIO_P99_US", _in_run_order(gate, [250, 12500, 500]))
    result = gate.run(_in_run_order(gate, [1000, 1100, 900]), "--firmware=A", "--repeat=3")
    result.assert_outcomes(passed=1)
    run = gate.runs()[-1]
    record = run.records_of(run.drives[0]["drive"])["seq_write_128k_qd32"]
    assert record["metrics"]["write.lat_max_us"] == 50000.0
    assert record["metrics"]["write.lat_p99_us"] == 12500.0
    assert record["metrics"]["write.bw_mbps"] == 1000.0
    assert [r["metrics"]["write.lat_max_us"] for r in record["repetitions"]] == [
        1000.0, 50000.0, 2000.0]
    assert record["aggregation"]["write.lat_max_us"] == "max of 3 runs"
    assert record["aggregation"]["write.lat_p99_us"] == "worst of 3 runs"
    assert record["aggregation"]["write.bw_mbps"] == "median of 3 runs"
    # the limit on p99 (<= 100,000 us) passes; one at 10,000 us fails on the worst run, and
    # the failure says how the judged figures were taken
    write_suite(gate.pytester.path, SUITE, limits_yaml(
        {"seq_write_128k_qd32": {"bw_mbps": {"min": 100}, "lat_p99_us": {"max": 10000}}}))
    gate.monkeypatch.setenv("FAKEFIO_P99_US", _in_run_order(gate, [250, 12500, 500]))
    failed = gate.run("1000", "--firmware=A", "--repeat=3")
    failed.assert_outcomes(failed=1)
    out = unwrapped(failed.stdout.str())
    assert "  write.lat_p99_us 12500 > max 10000 (margin -25.0 %)" in out, out
    assert ("figures of 3 runs: write.lat_p99_us the worst run; the others the median run"
            in out), out


def test_a_failed_gates_summary_says_why_first_draws_the_baseline_and_hides_host_paths(
        gate: Gate, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17 item 11, as the audit reproduced it: 2,405 then 1,200 MB/s. The customer page
    (the default) gives the regression, its figures and the baseline run before any table,
    draws the baseline on the regressed write's chart, and carries no path of this host nor
    the profile's note; ``--report-audience=lab`` and ``ssdqual summary --audience lab`` keep
    them."""
    from pytest_ssdqual.report import chart_data, drive_summary
    from pytest_ssdqual.results.stored import load_results

    drawn: list[object] = []
    charts_for_test = chart_data.charts_for_test

    def recording(**kwargs: object) -> dict[str, bytes]:
        drawn.append(kwargs.get("baseline"))
        return charts_for_test(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(chart_data, "charts_for_test", recording)
    here = gate.pytester.path

    def run(bw: str, *extra: str) -> pytest.RunResult:  # the thresholds by absolute path
        monkeypatch.setenv("FAKEFIO_BW_MBPS", bw)
        return gate.pytester.runpytest(*qual_args(
            here, here / "limits.yaml", gate.fake_fio.path, f"--results-dir={gate.results}",
            "--firmware=B", "--baseline=firmware:A", *extra))

    gate.run("2405", "--firmware=A").assert_outcomes(passed=1)
    alluredir = here / "allure"
    run("1200", f"--alluredir={alluredir}").assert_outcomes(failed=1)
    baseline, _ = gate.runs()
    note = f"run {baseline.run_id}, firmware A"
    # the Allure chart of the write (per test) drew the baseline's 2,405 MB/s
    [(drawn_note, figures)] = drawn  # type: ignore[misc]  # charts only with --alluredir
    assert drawn_note == note and figures["write.bw_mbps"] == 2405.0

    [md_path] = (alluredir / "summary").glob("*.md")
    md = md_path.read_text()
    reason = (f"- REGRESSION seq_write_128k_qd32 write.bw_mbps: 1200 vs baseline 2405 "
              f"({MINUS}50.1 %, allowed {MINUS}5 %); baseline run {baseline.run_id} "
              "(firmware A)")
    first_table = md.index("\n|")
    assert md.index("**Overall: FAIL**") < md.index(reason) < first_table, md
    assert md.index(f"Compared with baseline run {baseline.run_id} (firmware A).") < first_table
    assert re.search(r"\| seq_write_128k_qd32 \| write\.bw_mbps \| .* \| 1200 \| >= 100 \| "
                     r"\+1100\.0 % \| PASS \|", md)
    page = re.sub(r"base64,[A-Za-z0-9+/=]+", "base64,...", next(
        (alluredir / "summary").glob("*.html")).read_text())
    for text in (md, page):
        assert str(here) not in text and "/tmp" not in text
        assert not re.search(r"(?<![\w./~-])/[\w.-]+/", text)  # no absolute path at all
        assert "test limits" not in text  # the profile's source note
    assert 'profile "scratch floors" in limits.yaml' in md
    title = f"Regression: seq_write_128k_qd32 vs baseline run {baseline.run_id}"
    assert f"<h2>{title}</h2>" in page
    assert f"Lines: baseline write.bw_mbps 2405 ({note}) (dash-dot line)" in page
    bw, iops = drive_summary.regression_panels(load_results(alluredir))[title]
    assert bw.ylabel == "bandwidth (MB/s)" and dict(bw.limits) == {"write.bw_mbps >= 100": 100}
    assert dict(bw.baselines) == {f"baseline write.bw_mbps 2405 ({note})": 2405.0}
    assert not iops.baselines  # the IOPS did not regress

    # the lab's pages: the thresholds file's absolute path and the profile's note
    assert cli.main(["summary", str(alluredir), "-o", str(here / "lab"),
                     "--audience", "lab"]) == 0
    lab = next((here / "lab").glob("*.md")).read_text()
    assert f'profile "scratch floors" in {here / "limits.yaml"}: test limits' in lab
    again = here / "allure-lab"
    run("1200", f"--alluredir={again}", "--report-audience=lab").assert_outcomes(failed=1)
    assert f"{here / 'limits.yaml'}: test limits" in next(
        (again / "summary").glob("*.md")).read_text()
