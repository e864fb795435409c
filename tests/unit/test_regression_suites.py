"""The regression gate on the sweep, data-state and data-test suites.

1. Without ``--repeat`` every gated figure of these suites is judged on one run per side (and
   formerly, methodology tests ignored ``--repeat``). Gating all ~40-90
   higher-is-better per-point figures failed every identical build at 3 % noise; by default only
   each suite's few summary figures (``Workload.primary_figures``) are gated. The simulations
   below compare one run per side; the last one runs recovery_after_idle with ``--repeat``.
2. Burst / continuous and zero / random ratios have no better direction: a burst ratio that
   falls because the sustained speed improved is no regression.

The simulation draws 3 % noise on each fio point (IOPS; bandwidth and latency follow from it)
and derives the summary figures with the suites' own arithmetic (``qd_scaling._pattern``,
``mixed.sweep_average``, ``mixed.copy_timing``), then gates through ``compare_workload``.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.sweeps import (
    MIX_FIGURES,
    MIXES,
    QD_PATTERNS,
    QUEUE_DEPTHS,
    WRITE_PCTS,
    mix_point,
)
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.methodology.mixed import copy_timing, sweep_average
from pytest_ssdqual.methodology.qd_scaling import _pattern
from pytest_ssdqual.results.comparison import rerun_may_change
from pytest_ssdqual.results.gated_metrics import gated_metrics, has_direction, is_higher_better
from pytest_ssdqual.results.regression import (
    BaselineError,
    aggregate_repeats,
    compare_workload,
    repetition_samples,
)
from pytest_ssdqual.results.regression_stats import IMPROVED, INCONCLUSIVE, REGRESSED
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts, ResolvedLimits

FACTS = DriveFacts(controller="JMF667H", nand="L85C", firmware="SVN418a", model="X",
                   capacity_bytes=128 * 10**9, kind="block")
NOISE = 0.03
BUILDS = 1000


def _limits(tmp_path: Path, profiles: str = "[]") -> ResolvedLimits:
    """``profiles`` as YAML (default none: the 5 % default regression limit)."""
    path = tmp_path / "t.yaml"
    path.write_text(f"version: 1\nprofiles: {profiles}\n")
    return ThresholdSet.load([path]).resolve(FACTS)


def _failed(workload_id: str, new: dict[str, float], old: dict[str, float],
            limits: ResolvedLimits) -> list[str]:
    """Single runs on both sides, as a methodology test is gated without ``--repeat``."""
    return [c.line() for c in compare_workload(workload_id, new, old, baseline_firmware="A",
                                               limits=limits) if c.failed]


# -- qd_scaling ------------------------------------------------------------------------------

@dataclass
class _Point:
    """What ``_pattern`` reads of a fio step: its figures and ``figure(name)``."""

    metrics: dict[str, float]
    direction: str

    def figure(self, name: str) -> float:
        return self.metrics.get(f"{self.direction}.{name}", float("nan"))


#: Plausible IOPS by QD per curve (a SATA-class drive): rises, then saturates.
QD_IOPS = {"rand_read_4k": (12e3, 22e3, 40e3, 65e3, 85e3, 95e3),
           "seq_read_128k": (2.5e3, 3.5e3, 4.0e3, 4.2e3, 4.2e3, 4.2e3),
           "rand_write_4k": (30e3, 45e3, 60e3, 70e3, 75e3, 76e3),
           "seq_write_128k": (2.8e3, 3.6e3, 3.9e3, 3.9e3, 4.0e3, 4.0e3)}


def _qd_run(rng: random.Random, scale: dict[str, float] | None = None) -> dict[str, float]:
    """One qd_scaling run: every point's IOPS with ``NOISE``; ``scale`` multiplies a curve's
    QD1, QD2 and QD4 points (a firmware slower at low queue depth)."""
    metrics: dict[str, float] = {}
    for p in QD_PATTERNS:
        steps = []
        for qd, iops in zip(QUEUE_DEPTHS, QD_IOPS[p.name], strict=True):
            if scale and qd <= 4:
                iops *= scale.get(p.name, 1.0)
            iops *= 1 + NOISE * rng.gauss(0, 1)
            lat = qd / iops * 1e6
            steps.append((qd, _Point({f"{p.direction}.iops": iops,
                                      f"{p.direction}.bw_mbps": iops * p.bs_bytes / 1e6,
                                      f"{p.direction}.lat_mean_us": lat,
                                      f"{p.direction}.lat_p99_us": 3 * lat}, p.direction)))
        metrics.update(_pattern(p, steps)[0])  # type: ignore[arg-type]
    return metrics


def test_qd_scaling_identical_builds_pass_and_a_30_percent_qd1_4_drop_is_caught(
        tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    rng = random.Random(20261201)
    run = _qd_run(rng)
    assert set(run) == set(CATALOG["qd_scaling"].methodology_metrics)
    failed = sum(bool(_failed("qd_scaling", _qd_run(rng), _qd_run(rng), limits))
                 for _ in range(BUILDS))
    # 1 gated QD1-4 average, ~2.5 % at 3 % point noise (measured 26 of 1000; 51 with the random
    # write curve's gated too; 967 of 1000 with the 60 higher-is-better figures gated before)
    assert failed <= BUILDS * 0.05, failed
    slower = _failed("qd_scaling", _qd_run(rng, {"rand_read_4k": 0.7}), _qd_run(rng), limits)
    assert len(slower) == 1 and slower[0].startswith("rand_read_4k_qd1_4_avg.read.iops "), slower
    assert "(\u221230." in slower[0] or "(\u221229." in slower[0] or "(\u221231." in slower[0]


# -- mixed_sweep -----------------------------------------------------------------------------

def _mixed_run(rng: random.Random, scale: float = 1.0) -> dict[str, float]:
    """One mixed_sweep run: read and write IOPS of each point with ``NOISE`` (a 4 KiB random
    QD4 and a 128 KiB sequential QD1 mix), the copy's four bandwidths likewise."""
    metrics: dict[str, float] = {}
    for name, _rw, bs, _qd in MIXES:
        base_iops = 40e3 if bs == 4096 else 3e3
        points: dict[int, dict[str, float]] = {}
        for pct in WRITE_PCTS:
            fig: dict[str, float] = {}
            for d, share in (("read", 100 - pct), ("write", pct)):
                if share:
                    iops = base_iops * scale * share / 100 * (1 + NOISE * rng.gauss(0, 1))
                    fig[f"{d}.iops"] = iops
                    fig[f"{d}.bw_mbps"] = iops * bs / 1e6
                    fig[f"{d}.lat_p99_us"] = 4e6 / iops
            if "read.iops" in fig and "write.iops" in fig:
                fig["total.iops"] = fig["read.iops"] + fig["write.iops"]
                fig["total.bw_mbps"] = fig["read.bw_mbps"] + fig["write.bw_mbps"]
            points[pct] = fig
            metrics.update({f"{mix_point(name, pct)}.{f}": fig[f] for f in MIX_FIGURES
                            if f in fig})
        metrics.update(sweep_average(name, points))
    bws = [mbps * (1 + NOISE * rng.gauss(0, 1)) for mbps in (500.0, 450.0, 300.0, 280.0)]
    timing = copy_timing(256 * 2**20, read_alone_mbps=bws[0], write_alone_mbps=bws[1],
                         copy_read_mbps=bws[2], copy_write_mbps=bws[3])
    metrics.update({"copy_read_only.read.bw_mbps": bws[0], "copy_write_only.write.bw_mbps": bws[1],
                    "copy.read.bw_mbps": bws[2], "copy.write.bw_mbps": bws[3],
                    "copy_time_s": timing.copy_s, "copy_read_time_s": timing.read_s,
                    "copy_write_time_s": timing.write_s, "delay_ratio": timing.delay_ratio})
    return metrics


def test_mixed_sweep_identical_builds_pass_and_a_30_percent_drop_is_caught(
        tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    rng = random.Random(20261202)
    run = _mixed_run(rng)  # no figure of a direction without I/O (0 or 100 % writes)
    assert set(run) <= set(CATALOG["mixed_sweep"].methodology_metrics) and len(run) >= 110
    failed = sum(bool(_failed("mixed_sweep", _mixed_run(rng), _mixed_run(rng), limits))
                 for _ in range(BUILDS))
    assert failed <= BUILDS * 0.05, failed  # measured 0 of 1000 (993 of 1000 before)
    slower = _failed("mixed_sweep", _mixed_run(rng, 0.7), _mixed_run(rng), limits)
    assert [line.split()[0] for line in slower] == [
        "rand_4k_qd4_avg.total.iops", "seq_128k_qd1_avg.total.bw_mbps"], slower


def test_a_per_point_figure_is_gated_where_a_profile_names_it(tmp_path: Path) -> None:
    metric = "rand_read_4k_qd32.read.iops"
    assert metric not in gated_metrics(_limits(tmp_path), "qd_scaling")
    named = _limits(tmp_path, f"""
  - name: p
    match: {{kind: block}}
    source: "test"
    limits: {{}}
    regression: {{per_metric: {{qd_scaling.{metric}: 10}}}}""")
    assert metric in gated_metrics(named, "qd_scaling")
    [c] = [c for c in compare_workload("qd_scaling", {metric: 80e3}, {metric: 95e3},
                                       baseline_firmware="A", limits=named) if c.metric == metric]
    assert (c.status, c.limit_pct) == (INCONCLUSIVE, 10) and c.failed  # one run per side


def test_each_suite_gates_only_its_few_summary_figures(tmp_path: Path) -> None:
    limits = _limits(tmp_path)
    gated = {wid: gated_metrics(limits, wid) for wid in (
        "qd_scaling", "mixed_sweep", "transfer_size_sweep", "client_presets",
        "drive_with_data", "seq_after_random", "burst_vs_sustained", "compressibility")}
    assert gated["qd_scaling"] == {"rand_read_4k_qd1_4_avg.read.iops"}
    assert gated["drive_with_data"] == gated["seq_after_random"] == {"worst_ratio"}
    assert gated["transfer_size_sweep"] == {"seq_read_1m.read.bw_mbps",
                                            "seq_write_1m.write.bw_mbps"}
    assert len(gated["client_presets"]) == 4 and len(gated["mixed_sweep"]) == 2
    assert all(m in CATALOG[w].methodology_metrics for w, ms in gated.items() for m in ms)


# -- ratios without a direction -------------------------------------------------

BURST_RATIO = "burst_rand_write_4k_qd32.write.iops_ratio"


def _burst(continuous_iops: float) -> dict[str, float]:
    """Burst figures with bursts at 60k IOPS and the given continuous (sustained) IOPS."""
    return {"continuous_rand_write_4k_qd32.write.iops": continuous_iops,
            "burst_rand_write_4k_qd32.write.iops": 60e3, BURST_RATIO: 60e3 / continuous_iops,
            "continuous_seq_write_128k_qd32.write.bw_mbps": 400.0,
            "burst_seq_write_128k_qd32.write.bw_mbps": 500.0,
            "burst_seq_write_128k_qd32.write.bw_mbps_ratio": 1.25}


def test_a_burst_ratio_falling_because_sustained_improved_is_no_regression(
        tmp_path: Path) -> None:
    # sustained 20k -> 30k IOPS: the burst ratio falls 3.0 -> 2.0 (-33 %)
    limits = _limits(tmp_path, """
  - name: burst floor
    match: {kind: block}
    source: "test"
    limits: {burst_vs_sustained: {burst_rand_write_4k_qd32.write.iops_ratio: {min: 1.0}}}
    regression: {max_drop_pct: 5, per_metric: {burst_vs_sustained: 5}}""")
    assert not has_direction(BURST_RATIO) and not is_higher_better(BURST_RATIO)
    comparisons = compare_workload("burst_vs_sustained", _burst(30e3), _burst(20e3),
                                   baseline_firmware="A", limits=limits)
    assert not [c for c in comparisons if c.failed], [c.line() for c in comparisons]
    assert BURST_RATIO not in {c.metric for c in comparisons}
    by_metric = {c.metric: c.status for c in comparisons}
    assert by_metric["continuous_rand_write_4k_qd32.write.iops"] == IMPROVED
    # a zero/random ratio likewise has no direction; fill-state ratios keep theirs
    assert not has_direction("zero_seq_write_128k_qd32.write.bw_mbps_ratio")
    assert is_higher_better("full75_rand_write_4k_qd32.write.iops_ratio")
    assert is_higher_better("fragmented_seq_write_128k_qd32.write.bw_mbps_ratio")


def test_worst_fill_ratio_stays_gated_higher_is_better(tmp_path: Path) -> None:
    [c] = compare_workload("drive_with_data", {"worst_ratio": 0.6}, {"worst_ratio": 0.9},
                           baseline_firmware="A", limits=_limits(tmp_path))
    assert (c.metric, c.status, c.higher_is_better) == ("worst_ratio", INCONCLUSIVE, True)
    [two] = compare_workload("drive_with_data", {"worst_ratio": 0.6}, {"worst_ratio": 0.9},
                             baseline_firmware="A", limits=_limits(tmp_path),
                             samples={"worst_ratio": [0.6, 0.61]},
                             baseline_samples={"worst_ratio": [0.9, 0.91]})
    assert two.status == REGRESSED


def test_a_ratio_named_with_a_direction_is_gated_in_it(tmp_path: Path) -> None:
    profile = """
  - name: burst rule
    match: {kind: block}
    source: "test"
    limits: %s
    regression: {per_metric: {burst_vs_sustained.%s: 10}}"""
    lower = _limits(tmp_path, profile % (
        f"{{burst_vs_sustained: {{{BURST_RATIO}: {{max: 4}}}}}}", BURST_RATIO))
    [c] = [c for c in compare_workload("burst_vs_sustained", _burst(15e3), _burst(20e3),
                                       baseline_firmware="A", limits=lower)
           if c.metric == BURST_RATIO]
    # 3.0 -> 4.0, limit +10 %: past it, in the worse direction (single runs: inconclusive)
    assert (c.status, c.higher_is_better, c.failed) == (INCONCLUSIVE, False, True)
    assert c.worsening_pct is not None and c.worsening_pct == pytest.approx(33.3, abs=0.1)
    unnamed = _limits(tmp_path, profile % ("{}", BURST_RATIO))
    with pytest.raises(BaselineError, match="no better direction.*one-sided absolute limit"):
        compare_workload("burst_vs_sustained", _burst(30e3), _burst(20e3),
                         baseline_firmware="A", limits=unnamed)


def test_a_warn_limit_does_not_gate_its_figure_and_a_fail_limit_does(tmp_path: Path) -> None:
    # a warn limit never fails a test, so it does not make a single-run figure gated either
    profile = """
  - name: copy
    match: {kind: block}
    source: "test"
    limits: {mixed_sweep: {delay_ratio: {max: 3%s}}}"""
    warn = _limits(tmp_path, profile % ", severity: warn")
    assert "delay_ratio" not in gated_metrics(warn, "mixed_sweep")
    assert not [c for c in compare_workload("mixed_sweep", {"delay_ratio": 2.0},
                                            {"delay_ratio": 1.0}, baseline_firmware="A",
                                            limits=warn) if c.metric == "delay_ratio"]
    fail = _limits(tmp_path, profile % "")
    [c] = [c for c in compare_workload("mixed_sweep", {"delay_ratio": 2.0}, {"delay_ratio": 1.0},
                                       baseline_firmware="A", limits=fail)
           if c.metric == "delay_ratio"]
    # one run a side past the limit: inconclusive (reruns, then fails)
    assert (c.status, c.higher_is_better, c.failed) == (INCONCLUSIVE, False, True)


# -- a methodology test with several gated figures, under --repeat ---------

def _recovery_run(rng: random.Random) -> dict[str, float]:
    """One recovery_after_idle run: its four IOPS figures with ``NOISE``, the ratio from them."""
    fresh, degraded, steady, recovered = (m * (1 + NOISE * rng.gauss(0, 1))
                                          for m in (40e3, 8e3, 10e3, 36e3))
    return {"fresh_iops": fresh, "degraded_iops": degraded, "steady_iops": steady,
            "recovered_iops": recovered, "recovery_ratio": recovered / fresh,
            "steady_state_reached": 1.0}


def _recovery_outcome(limits: ResolvedLimits, rng: random.Random, runs: int, repeat_max: int
                      ) -> str:
    """One identical build of recovery_after_idle through the gate as the plugin runs it
    (``runs`` runs on each side, reruns while ``comparison.rerun_may_change`` up to
    ``repeat_max``): ``failed``, ``undecided`` (none failed, one undecided) or ``passed``."""
    old = [_recovery_run(rng) for _ in range(runs)]
    new = [_recovery_run(rng) for _ in range(runs)]
    while True:
        comparisons = compare_workload(
            "recovery_after_idle", aggregate_repeats(new)[0], aggregate_repeats(old)[0],
            baseline_firmware="A", limits=limits, samples=repetition_samples(new),
            baseline_samples=repetition_samples(old))
        if not rerun_may_change(comparisons) or len(new) >= repeat_max:
            if any(c.failed for c in comparisons):
                return "failed"
            return "undecided" if any(c.undecided for c in comparisons) else "passed"
        new.append(_recovery_run(rng))


def test_recovery_after_idle_identical_builds_with_and_without_repeat(tmp_path: Path) -> None:
    """Its 6 gated figures (5 noisy ones): one run per build leaves nearly half of identical
    builds failed or undecided; --repeat 3 (now honoured by methodology tests) fails about 5 %
    (9 % before a regression had to be confirmed on the reruns) and leaves 14 % undecided:
    each figure's rate adds up over the test's figures."""
    limits = _limits(tmp_path)
    assert len(gated_metrics(limits, "recovery_after_idle")) == 6
    rng = random.Random(20261204)
    single = Counter(_recovery_outcome(limits, rng, 1, 2) for _ in range(BUILDS))
    repeated = Counter(_recovery_outcome(limits, rng, 3, 6) for _ in range(BUILDS))
    # one run per build: 70 failed, 412 undecided (before the undecided rule: 482 failed)
    assert 40 <= single["failed"] <= 110 and 350 <= single["undecided"] <= 470, single
    # --repeat 3: 47 failed (48 before; 85 when regressions were not rerun), 139 undecided: the
    # recovery ratio (noise of two figures, about 4.2 %) needs more than 3 baseline runs
    assert 25 <= repeated["failed"] <= 75 and 90 <= repeated["undecided"] <= 190, repeated
