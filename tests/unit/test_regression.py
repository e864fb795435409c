"""Regression math: direction, default and per-metric limits, improvements, noise, message text.

Limits come from real threshold files loaded by ``ThresholdSet`` (written here), so the
per-metric override path is the one the plugin uses.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_ssdqual.results.comparison import (
    NO_BASELINE,
    NOT_MEASURED,
    Comparison,
    failure_message,
    signed_pct,
)
from pytest_ssdqual.results.gated_metrics import (
    DEFAULT_REGRESSION_LIMIT_PCT,
    gated_metrics,
    is_higher_better,
    regression_limit,
)
from pytest_ssdqual.results.regression import aggregate_repeats, compare_workload
from pytest_ssdqual.results.regression_stats import (
    IMPROVED,
    INCONCLUSIVE,
    REGRESSED,
    WITHIN,
    judge_samples,
)
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits

SINGLE = (" [single runs: no noise estimate, judged on the figures alone; a single-run baseline "
          "cannot give the 95 %/5 % guarantee (store the baseline with --repeat 3)]")
#: The end of the line of a change past the limit between two single runs.
UNSURE = (": INCONCLUSIVE: one run on each side gives no noise estimate: a change past the "
          "limit cannot be told from run-to-run noise; rerun with more repetitions "
          "(--repeat-max, or --repeat on this build and the baseline) or on a quieter bench")

FACTS = DriveFacts(controller="JMF667H", nand="L85C", firmware="SVN418a", model="X",
                   capacity_bytes=128 * 10**9, kind="block")

PROFILE = """
version: 1
profiles:
  - name: JMF667H L85C
    match: {controller: JMF667H, nand: L85C}
    source: "test"
    limits:
      seq_write_128k_qd32: {bw_mbps: {min: 140}, lat_p99_us: {max: 50000}}
      rand_read_4k_qd32: {iops: {min: 20000}}
%s
"""


def _limits(tmp_path: Path, regression: str = "") -> ResolvedLimits:
    path = tmp_path / "t.yaml"
    path.write_text(PROFILE % regression)
    return ThresholdSet.load([path]).resolve(FACTS)


def test_direction_comes_from_workloads_higher_is_better() -> None:
    assert is_higher_better("write.bw_mbps") and is_higher_better("read.iops")
    assert is_higher_better("total.iops") and is_higher_better("bw_mbps")
    assert not is_higher_better("write.lat_p99_us") and not is_higher_better("read.lat_mean_us")


def test_exact_message_of_a_bandwidth_drop(tmp_path: Path) -> None:
    limits = _limits(tmp_path, "    regression: {max_drop_pct: 5}")
    [bw, lat] = compare_workload(
        "seq_write_128k_qd32", {"write.bw_mbps": 270.0, "write.lat_p99_us": 9000.0},
        {"write.bw_mbps": 315.0, "write.lat_p99_us": 9000.0},
        baseline_firmware="SVN417w", limits=limits,
    )
    # one run on each side: past the limit, but no noise estimate -> inconclusive (it fails)
    assert bw.status == INCONCLUSIVE and bw.failed
    assert bw.line() == ("write.bw_mbps 270 vs 315 on SVN417w (\u221214.3 %, limit \u22125 %)"
                         + SINGLE + UNSURE)
    assert lat.status == WITHIN
    message = failure_message("/dev/sdb", "seq_write_128k_qd32", [bw, lat], "RUN1")
    assert message.splitlines() == [
        "REGRESSION: /dev/sdb seq_write_128k_qd32: 0 metric(s) regressed, 1 INCONCLUSIVE vs "
        "baseline run RUN1",
        "  write.bw_mbps 270 vs 315 on SVN417w (\u221214.3 %, limit \u22125 %)" + SINGLE + UNSURE,
    ]
    # with repetitions on both sides the same drop is a regression, in the format of
    # docs/regression-gate.md
    [rep] = compare_workload(
        "seq_write_128k_qd32", {"write.bw_mbps": 270.0}, {"write.bw_mbps": 315.0},
        baseline_firmware="SVN417w", limits=limits, gated=["write.bw_mbps"],
        samples={"write.bw_mbps": [270.0, 266.5, 273.5]},
        baseline_samples={"write.bw_mbps": [315.0, 312.0, 318.0]})
    assert rep.status == REGRESSED
    assert rep.line() == ("write.bw_mbps 270 vs 315 on SVN417w (\u221214.3 %, 90 % CI \u221216.0 "
                          "\u2026 \u221212.5 %, limit \u22125 %) [3 vs 3 runs, RSD 1.3 % vs 1.0 %]")


def test_latency_worsens_upwards_and_improves_downwards(tmp_path: Path) -> None:
    limits = _limits(tmp_path, "    regression: {max_drop_pct: 10}")
    [up] = compare_workload("seq_write_128k_qd32", {"write.lat_p99_us": 1200.0},
                            {"write.lat_p99_us": 1000.0}, baseline_firmware="A", limits=limits)
    assert up.status == INCONCLUSIVE  # past the limit on single runs
    assert up.line() == ("write.lat_p99_us 1200 vs 1000 on A (+20.0 %, limit +10 %)" + SINGLE
                         + UNSURE)
    [down] = compare_workload("seq_write_128k_qd32", {"write.lat_p99_us": 800.0},
                              {"write.lat_p99_us": 1000.0}, baseline_firmware="A", limits=limits)
    assert down.status == IMPROVED and not down.failed
    assert down.worsening_pct == pytest.approx(-20.0)
    # the same 20 % drop on a higher-is-better metric is the worsening, a rise an improvement
    assert judge_samples([80], [100], limit_pct=10, higher_is_better=True).status == INCONCLUSIVE
    assert judge_samples([80, 81], [100, 101], limit_pct=10,
                         higher_is_better=True).status == REGRESSED
    assert judge_samples([120], [100], limit_pct=10, higher_is_better=True).status == IMPROVED


def test_default_limit_when_no_profile_gives_one(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    assert regression_limit(limits, "seq_write_128k_qd32", "write.bw_mbps") == (
        DEFAULT_REGRESSION_LIMIT_PCT, "default")
    # 4 % drop passes the 5 % default, 6 % fails it (inconclusive on single runs); exactly 5 %
    # passes (inclusive)
    for value, status in ((480.0, WITHIN), (470.0, INCONCLUSIVE), (475.0, WITHIN)):
        [c] = compare_workload("seq_write_128k_qd32", {"write.bw_mbps": value},
                               {"write.bw_mbps": 500.0}, baseline_firmware="A", limits=limits)
        assert c.status == status, (value, c)
        assert c.limit_source == "default"


def test_per_metric_limit_overrides_the_profile_default(tmp_path: Path) -> None:
    limits = _limits(
        tmp_path,
        "    regression: {max_drop_pct: 30, per_metric: "
        "{seq_write_128k_qd32.write.bw_mbps: 3, rand_read_4k_qd32: 12}}",
    )
    assert regression_limit(limits, "seq_write_128k_qd32", "write.bw_mbps")[0] == 3
    assert regression_limit(limits, "seq_write_128k_qd32", "write.lat_p99_us")[0] == 30
    assert regression_limit(limits, "rand_read_4k_qd32", "read.iops")[0] == 12
    value, source = regression_limit(limits, "seq_write_128k_qd32", "write.bw_mbps")
    assert 'profile "JMF667H L85C"' in source and "t.yaml" in source
    [bw, lat] = compare_workload(
        "seq_write_128k_qd32", {"write.bw_mbps": 480.0, "write.lat_p99_us": 1200.0},
        {"write.bw_mbps": 500.0, "write.lat_p99_us": 1000.0}, baseline_firmware="A",
        limits=limits,
    )
    assert bw.status == INCONCLUSIVE and bw.failed  # -4 % against a 3 % per-metric limit
    assert lat.status == WITHIN  # +20 % against the profile's 30 %
    # a bare workload key gates every metric of that workload, limits or not
    assert gated_metrics(limits, "rand_read_4k_qd32") == frozenset(
        {"read.iops", "read.bw_mbps", "*"})


def test_only_limited_metrics_are_gated(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    comparisons = compare_workload(
        "seq_write_128k_qd32",
        {"write.bw_mbps": 500.0, "write.lat_p99_us": 900.0, "write.lat_max_us": 99999.0},
        {"write.bw_mbps": 500.0, "write.lat_p99_us": 900.0, "write.lat_max_us": 1000.0},
        baseline_firmware="A", limits=limits,
    )
    assert [c.metric for c in comparisons] == ["write.bw_mbps", "write.lat_p99_us"]


def test_median_and_spread_of_repetitions() -> None:
    median, spread = aggregate_repeats([
        {"write.bw_mbps": 500.0, "write.iops": 4000.0},
        {"write.bw_mbps": 300.0, "write.iops": 4000.0},
        {"write.bw_mbps": 520.0, "write.iops": 4000.0, "write.lat_p99_us": 7.0},
    ])
    assert median == {"write.bw_mbps": 500.0, "write.iops": 4000.0}  # p99 not in every run
    assert spread["write.bw_mbps"] == pytest.approx((520 - 300) / 500 * 100)
    assert spread["write.iops"] == 0.0
    single, none = aggregate_repeats([{"read.iops": 10.0}])
    assert single == {"read.iops": 10.0} and none == {}
    # an even N takes a run's real value, never the mean of the middle two (it was 2.0, which
    # no run measured): "x" has the default direction (lower is better), so the worse is 3.0
    even, _ = aggregate_repeats([{"x": 1.0}, {"x": 3.0}])
    assert even == {"x": 3.0}


def test_noise_never_passes_a_change_it_cannot_decide(tmp_path: Path) -> None:
    """Before: a spread above the limit made the metric "too noisy to gate", and it passed."""
    limits = _limits(tmp_path, "    regression: {max_drop_pct: 10}")
    samples = {"write.bw_mbps": [500.0, 300.0, 520.0]}
    median, _ = aggregate_repeats([{"write.bw_mbps": v} for v in samples["write.bw_mbps"]])
    [unsure] = compare_workload("seq_write_128k_qd32", median, {"write.bw_mbps": 600.0},
                                baseline_firmware="A", limits=limits, samples=samples,
                                baseline_samples={"write.bw_mbps": [600.0, 590.0, 610.0]})
    # 3 + 3 runs at this noise cannot tell a 20 % drop from none: undecided, never passed
    assert (unsure.status, unsure.failed, unsure.undecided) == ("undecided", False, True)
    assert unsure.method == "welch" and (unsure.n, unsure.baseline_n) == (3, 3)
    # geometric means (500 * 300 * 520) ** (1/3) = 427 and 600; RSD = stdev / mean
    assert unsure.line().startswith("write.bw_mbps 427 vs 600 on A (\u221228.8 %, 90 % CI "
                                    "\u221257.5 \u2026 +19.3 %, ")
    assert unsure.line().endswith(
        "limit \u221210 %) [3 vs 3 runs, RSD 27.6 % vs 1.7 %]: UNDECIDED: noise 21.7 % too high "
        "for a 10 % limit with 3 vs 3 runs; needs 24 runs per side (--repeat 24 on this build "
        "and the baseline)")
    message = failure_message("/dev/sdb", "seq_write_128k_qd32", [unsure, dataclasses.replace(
        unsure, metric="write.iops", status=INCONCLUSIVE, reason="r")], "RUN1")
    assert message.splitlines()[0] == ("REGRESSION: /dev/sdb seq_write_128k_qd32: 0 metric(s) "
                                       "regressed, 1 INCONCLUSIVE, 1 UNDECIDED vs baseline run "
                                       "RUN1")
    # quiet repetitions: a 20 % drop regresses, with its interval
    [quiet] = compare_workload("seq_write_128k_qd32", {"write.bw_mbps": 400.0},
                               {"write.bw_mbps": 500.0}, baseline_firmware="A", limits=limits,
                               samples={"write.bw_mbps": [400.0, 404.0, 396.0]},
                               baseline_samples={"write.bw_mbps": [500.0, 505.0, 495.0]})
    assert quiet.status == REGRESSED
    assert quiet.line() == ("write.bw_mbps 400 vs 500 on A (\u221220.0 %, 90 % CI \u221221.4 "
                            "\u2026 \u221218.6 %, limit \u221210 %) [3 vs 3 runs, RSD 1.0 % vs "
                            "1.0 %]")


def test_a_gated_metric_missing_on_either_side_fails(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    new, gone = compare_workload(
        "seq_write_128k_qd32", {"write.bw_mbps": 500.0}, {"write.lat_p99_us": 900.0},
        baseline_firmware="A", limits=limits, baseline_run="RUN0",
    )
    assert (new.metric, new.status) == ("write.bw_mbps", NO_BASELINE)
    assert (gone.metric, gone.status) == ("write.lat_p99_us", NOT_MEASURED)
    assert new.failed and gone.failed
    assert new.line() == ("no baseline figure for write.bw_mbps in run RUN0 (the baseline did "
                          "not measure it; this run 500)")
    message = failure_message("/dev/sdb", "seq_write_128k_qd32", [new, gone], "RUN0")
    assert message.splitlines() == [
        "REGRESSION: /dev/sdb seq_write_128k_qd32: 2 metric(s) regressed vs baseline run RUN0",
        "  no baseline figure for write.bw_mbps in run RUN0 (the baseline did not measure it; "
        "this run 500)",
        "  write.lat_p99_us not measured in this run (baseline 900)",
    ]


def test_a_baseline_without_the_workload_fails_its_primary_figures(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    comparisons = compare_workload(
        "rand_write_4k_qd32", {"write.iops": 9000.0, "write.bw_mbps": 36.0,
                               "write.lat_p99_us": 500.0},
        {}, baseline_firmware="A", limits=limits, baseline_run="RUN0",
    )
    assert [(c.metric, c.status) for c in comparisons] == [
        ("write.bw_mbps", NO_BASELINE), ("write.iops", NO_BASELINE)]
    assert all(c.failed for c in comparisons)


def test_primary_figures_are_gated_without_any_limit(tmp_path: Path) -> None:
    path = tmp_path / "none.yaml"
    path.write_text("version: 1\nprofiles: []\n")
    limits = ThresholdSet.load([path]).resolve(FACTS)
    assert gated_metrics(limits, "seq_read_128k_qd32") == frozenset(
        {"read.iops", "read.bw_mbps"})
    assert gated_metrics(limits, "rand_rw70_4k_qd32") == frozenset(
        {"total.iops", "total.bw_mbps"})
    assert "recovery_ratio" in gated_metrics(limits, "recovery_after_idle")
    assert not any("lat" in m for m in gated_metrics(limits, "recovery_after_idle"))
    # an 80 % drop with no threshold profile at all fails on the 5 % default; latency tails
    # without a limit stay ungated
    comparisons = compare_workload(
        "seq_read_128k_qd32",
        {"read.bw_mbps": 100.0, "read.iops": 800.0, "read.lat_p99_us": 99999.0},
        {"read.bw_mbps": 500.0, "read.iops": 4000.0, "read.lat_p99_us": 100.0},
        baseline_firmware="A", limits=limits,
    )
    assert [(c.metric, c.status, c.limit_pct) for c in comparisons] == [
        ("read.bw_mbps", INCONCLUSIVE, 5.0), ("read.iops", INCONCLUSIVE, 5.0)]  # single runs
    assert all(c.failed for c in comparisons)


def test_comparison_round_trips_through_a_dict(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    [c, _] = compare_workload("seq_write_128k_qd32",
                              {"write.bw_mbps": 1.0, "write.lat_p99_us": 2.0},
                              {"write.bw_mbps": 2.0, "write.lat_p99_us": 2.0},
                              baseline_firmware="A", limits=limits)
    assert Comparison.from_dict(c.as_dict()) == c


def test_signed_percent_uses_a_true_minus() -> None:
    assert signed_pct(-14.468) == "\u221214.5 %"
    assert signed_pct(4) == "+4.0 %"
    assert signed_pct(-0.01) == "+0.0 %"


def test_the_gate_summary_warns_of_a_single_run_baseline(tmp_path: Path) -> None:
    """A baseline with one run per figure cannot give the 95 %/5 % guarantee:
    a WARNING line says so, besides each comparison's line."""
    from pytest_ssdqual.results.gate_summary import GateResult, format_gate_summary

    limits = _limits(tmp_path)
    pooled = compare_workload("seq_write_128k_qd32", {"write.bw_mbps": 500.0},
                              {"write.bw_mbps": 500.0}, baseline_firmware="A", limits=limits,
                              gated=["write.bw_mbps"],
                              samples={"write.bw_mbps": [500.0, 505.0, 495.0]})
    repeated = compare_workload("seq_write_128k_qd32", {"write.bw_mbps": 500.0},
                                {"write.bw_mbps": 500.0}, baseline_firmware="A", limits=limits,
                                gated=["write.bw_mbps"],
                                samples={"write.bw_mbps": [500.0, 505.0, 495.0]},
                                baseline_samples={"write.bw_mbps": [500.0, 502.0, 498.0]})
    rows = GateResult("/dev/sdb", "seq_write_128k_qd32", "R0", pooled, tmp_path).rows()
    assert rows[0]["baseline_n"] == 1 and rows[0]["status"] == WITHIN
    lines = format_gate_summary(rows, None)
    assert lines[0] == ("WARNING: 1 metric(s) judged against a baseline with one run per figure: "
                        "a single-run baseline cannot give the 95 %/5 % guarantee (store the "
                        "baseline with --repeat 3)")
    assert lines[1].startswith("ok ") and lines[1].endswith(
        "; a single-run baseline cannot give the 95 %/5 % guarantee (store the baseline with "
        "--repeat 3)]")
    quiet = format_gate_summary(
        GateResult("/dev/sdb", "seq_write_128k_qd32", "R0", repeated, tmp_path).rows(), None)
    assert not [line for line in quiet if line.startswith("WARNING") or "single-run" in line]


def test_an_undecided_metric_has_its_own_row_and_count_and_is_no_failure(tmp_path: Path) -> None:
    """Too few runs for the noise: the gate summary's row says UNDECIDED and how many runs per
    side would decide; the test gets the ``UNDECIDED:`` text, no ``REGRESSION:`` failure."""
    from pytest_ssdqual.results.gate_summary import GateResult, format_gate_summary

    noisy = compare_workload("seq_write_128k_qd32", {"write.bw_mbps": 1000.0},
                             {"write.bw_mbps": 1000.0}, baseline_firmware="A",
                             limits=_limits(tmp_path), gated=["write.bw_mbps"],
                             samples={"write.bw_mbps": [1000.0, 800.0, 1200.0]},
                             baseline_samples={"write.bw_mbps": [1000.0, 1003.0, 998.0]})
    result = GateResult("/dev/sdb", "seq_write_128k_qd32", "R0", noisy, tmp_path)
    assert result.failure_message() is None and len(result.undecided) == 1
    message = result.undecided_message()
    assert message is not None and message.startswith(
        "UNDECIDED: /dev/sdb seq_write_128k_qd32: 1 metric(s) the gate cannot decide vs "
        "baseline run R0 (neither a pass nor a regression: the run is incomplete)\n  "
        "write.bw_mbps 986 vs 1000 on A")
    # appended to the failure of a test that failed a limit: no "neither a pass" there (review)
    also = result.undecided_message(also_failed=True)
    assert also is not None and also.startswith(
        "UNDECIDED: /dev/sdb seq_write_128k_qd32: 1 metric(s) the gate cannot decide vs "
        "baseline run R0 (the test failed on the grounds above)\n  write.bw_mbps 986 vs 1000")
    rows = result.rows()
    assert (rows[0]["status"], rows[0]["runs_needed"]) == ("undecided", 44)
    lines = format_gate_summary(rows, None)
    assert lines[0].startswith("UNDECIDED         /dev/sdb seq_write_128k_qd32: write.bw_mbps ")
    assert lines[0].endswith("UNDECIDED: noise 14.4 % too high for a 5 % limit with 3 vs 3 "
                             "runs; needs 44 runs per side (--repeat 44 on this build and the "
                             "baseline)")
    assert lines[1].startswith("0 regressed, 0 inconclusive, 1 UNDECIDED (neither pass nor "
                               "fail: the run is incomplete), 0 improved,")
