"""Every catalog metric's regression direction, listed by hand so a new metric cannot be gated
the wrong way round silently (an audit found ``saturation_qd`` was gated as lower-is-better
and ``size_ratio`` as lower-is-better; neither was listed anywhere).

``higher``: a drop is a worsening; ``lower``: a rise is; ``none``: a better drive can move it
either way (``gated_metrics.has_direction`` False: never gated by default, by an absolute limit
or by a workload-wide ``per_metric`` key; only where a profile names it with a one-sided limit).

The rules behind the table:

* figures of speed (``iops``, ``bw_mbps``, ``*_iops``, ``*_bw_mbps``) are higher-is-better,
  times and latencies lower-is-better;
* *consistency* ratios, a figure in a harder condition over the same figure in the reference one
  (fill state / empty, fragmented / clean, large / small test size, ``worst_ratio``), are
  higher-is-better (1 = the drive holds its speed) -- their latency ratios lower-is-better;
  ``delay_ratio`` (copy time / reading then writing) is lower-is-better (0.5: full overlap);
* *gain* ratios and curve shapes have none: burst / continuous and zero / random (a faster
  sustained speed lowers them), ``scaling_ratio`` = max / QD1 IOPS (a faster QD1 lowers it),
  ``saturation_qd`` (a drive that reaches its maximum earlier, or one whose maximum rose, moves
  it either way);
* ``lat_tail_ios`` (the I/O count fio's percentiles rest on) is a fact of the run: none;
* facts of the drive rather than measurements of it have none: the power-state table, APST,
  the warning temperature, bytes written (host and NAND; ``waf_*`` carries their ratio), the
  integrity test's ``written_bytes`` and ``first_bad_offset_bytes`` (any bad block fails on its
  own);
* health margins and spare are higher-is-better, counts, flags, wear and temperature lower.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.catalog.parametric import parametric_workload
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.results.gated_metrics import gated_metrics, has_direction, is_higher_better
from pytest_ssdqual.results.regression import compare_workload
from pytest_ssdqual.results.regression_stats import INCONCLUSIVE, REGRESSED
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts

H, L, N = "higher", "lower", "none"

_FIO = {"iops": H, "bw_mbps": H, "lat_mean_us": L, "lat_p50_us": L, "lat_p99_us": L,
        "lat_p99_9_us": L, "lat_p99_99_us": L, "lat_p99_999_us": L, "lat_p99_9999_us": L,
        "lat_max_us": L, "lat_tail_ios": N,
        # IOPS consistency (catalog.consistency): the 99.9 %-slowest second over the mean is
        # better higher, the spread and the slow seconds lower; the log's seconds are a fact
        "iops_consistency_pct": H, "iops_cov_pct": L, "seconds_below_50pct_of_mean": L,
        "iops_log_s": N}
#: A plain fio workload's power figures (with a power meter): less is better; the efficiency
#: (MB/s/W for sequential, IOPS/W for random workloads) more.
_POWER = {"power_avg_w": L, "power_peak_w": L, "energy_j": L}
_FILL = {"iops": H, "bw_mbps": H, "lat_p99_us": L, "iops_ratio": H, "bw_mbps_ratio": H,
         "lat_p99_us_ratio": L, "worst_ratio": H}

_LM = [f"ocp_lm_{k}_bucket{b}_{op}" for k in ("active", "static") for b in range(4)
       for op in ("read", "write", "trim")]
#: OCP C0h-C3h and SMART thermal health metrics (catalog.health_ocp): normalized / left
#: percentages higher, versions, configuration, bytes read and activations none, the rest lower.
_OCP_HEALTH: dict[str, str] = {
    **dict.fromkeys((
        "ocp_bad_user_nand_blocks", "ocp_bad_system_nand_blocks", "ocp_xor_recovery_count",
        "ocp_uncorrectable_read_errors", "ocp_soft_ecc_errors", "ocp_e2e_corrected_errors",
        "ocp_e2e_detected_errors", "ocp_system_data_used_pct", "ocp_refresh_count",
        "ocp_thermal_throttling_events", "ocp_throttling_status", "ocp_pcie_correctable_errors",
        "ocp_incomplete_shutdowns", "ocp_plp_start_count", "ocp_media_dies_offline",
        "ocp_max_temperature_recorded_c", "ocp_command_timeouts",
        "ocp_pcie_link_retraining_count", "ocp_fw_activation_failures",
        "warning_temp_time_minutes", "critical_comp_time_minutes", "thm_temp1_trans_count",
        "thm_temp2_trans_count", "thm_temp1_total_time_s", "thm_temp2_total_time_s", *_LM,
        *(f"ocp_lm_active_latency_bucket{b}_{op}_ms" for b in range(4)
          for op in ("read", "write", "trim")),
    ), L),
    **dict.fromkeys((
        "ocp_bad_user_nand_blocks_normalized", "ocp_bad_system_nand_blocks_normalized",
        "ocp_free_blocks_pct", "ocp_capacitor_health_pct"), H),
    **dict.fromkeys((
        "ocp_nand_read_bytes", "ocp_security_version", "ocp_nuse", "ocp_endurance_estimate",
        "ocp_log_page_version", "ocp_lm_feature_status", "ocp_fw_activation_entries",
        "ocp_fw_activation_count", "ocp_power_state_changes", "ocp_unaligned_io",
        "ocp_max_user_erase_count", "ocp_min_user_erase_count",
        "ocp_er_panic_reset_wait_time_ms", "ocp_er_panic_reset_action", "ocp_er_panic_id",
        "ocp_er_device_recovery_action_1", "ocp_er_device_recovery_action_2",
        "ocp_er_device_capabilities", "ocp_er_log_page_version"), N),
}
_OCP_HEALTH.update({f"{m}_delta": d for m, d in list(_OCP_HEALTH.items()) if m in (
    "ocp_nand_read_bytes", "ocp_bad_user_nand_blocks", "ocp_bad_system_nand_blocks",
    "ocp_xor_recovery_count", "ocp_uncorrectable_read_errors", "ocp_soft_ecc_errors",
    "ocp_e2e_corrected_errors", "ocp_e2e_detected_errors", "ocp_refresh_count",
    "ocp_thermal_throttling_events", "ocp_pcie_correctable_errors", "ocp_incomplete_shutdowns",
    "ocp_unaligned_io", "ocp_plp_start_count", "ocp_media_dies_offline",
    "ocp_command_timeouts", "ocp_pcie_link_retraining_count", "ocp_power_state_changes",
    "ocp_fw_activation_entries", "ocp_fw_activation_failures", "warning_temp_time_minutes",
    "critical_comp_time_minutes", "thm_temp1_trans_count", "thm_temp2_trans_count",
    "thm_temp1_total_time_s", "thm_temp2_total_time_s", *_LM)})

#: workload id -> bare metric name (after the last ".") -> direction. Exhaustive: a metric whose
#: bare name is missing here fails ``test_every_catalog_metric_has_its_listed_direction``.
EXPECTED: dict[str, dict[str, str]] = {
    **{wid: {**_FIO, **_POWER, "bw_mbps_per_w": H} for wid in (
        "seq_read_128k_qd32", "seq_write_128k_qd32", "seq_read_128k_qd1")},
    **{wid: {**_FIO, **_POWER, "iops_per_w": H} for wid in (
        "rand_read_4k_qd1", "rand_read_4k_qd32", "rand_write_4k_qd1", "rand_write_4k_qd32",
        "rand_rw70_4k_qd32")},
    "sustained_write": {**_FIO, "slc_cache_bytes": H, "burst_bw_mbps": H,
                        "sustained_bw_mbps": H, "cache_not_exhausted_after_bytes": H},
    "steady_state_rand_write_4k": {**_FIO, "steady_state_reached": H, "steady_state_round": L,
                                   "rounds": L, "data_excursion_pct": L,
                                   "slope_excursion_pct": L},
    "recovery_after_idle": {
        "recovery_ratio": H, "time_to_recover_s": L, "steady_state_reached": H,
        **{f"{p}_{f}": d for p in ("fresh", "degraded", "steady", "recovered")
           for f, d in (("iops", H), ("lat_mean_us", L), ("lat_p99_us", L))}},
    "drive_with_data": _FILL,
    "seq_after_random": {"bw_mbps": H, "bw_mbps_ratio": H, "iops": H, "worst_ratio": H},
    "qd_scaling": {"iops": H, "bw_mbps": H, "lat_mean_us": L, "lat_p99_us": L,
                   "saturation_qd": N, "scaling_ratio": N},
    "mixed_sweep": {"iops": H, "bw_mbps": H, "lat_p99_us": L, "copy_time_s": L,
                    "copy_read_time_s": L, "copy_write_time_s": L, "delay_ratio": L},
    "transfer_size_sweep": {"iops": H, "bw_mbps": H, "bs_bytes": N},
    "client_presets": {"iops": H, "bw_mbps": H, "lat_mean_us": L, "lat_p99_us": L,
                       "size_ratio": H},
    "burst_vs_sustained": {"iops": H, "bw_mbps": H, "lat_p99_us": L, "iops_ratio": N,
                           "bw_mbps_ratio": N, "lat_p99_us_ratio": N},
    "compressibility": {"iops": H, "bw_mbps": H, "iops_ratio": N, "bw_mbps_ratio": N},
    "data_integrity": {"written_bytes": N, "verified_bytes": H, "first_bad_offset_bytes": N},
    "power_loss_integrity": {"power_cycles": N, "written_bytes": N, "verified_bytes": H,
                             "first_bad_offset_bytes": N},
    "firmware_update": {"bw_mbps": H, "iops": H, "lat_p99_us": L, "bw_mbps_drop_pct": L,
                        "iops_drop_pct": L, "written_bytes": N, "verified_bytes": H,
                        "first_bad_offset_bytes": N},
    "health": {
        **dict.fromkeys(("smart_command_failed", "smart_disk_failing",
                         "smart_prefail_at_threshold", "smart_usage_past_threshold",
                         "smart_error_log", "smart_selftest_errors", "cw_spare_below_threshold",
                         "cw_temperature", "cw_reliability_degraded", "cw_read_only",
                         "cw_volatile_backup_failed", "cw_pmr_unreliable", "critical_warning"),
                        L),
        "temperature_c": L, "warning_temperature_c": N, "temperature_margin_c": H,
        "available_spare_pct": H, "spare_margin_pct": H, "percentage_used": L,
        "media_errors": L, "error_log_entries": L, "unsafe_shutdowns": L,
        "host_written_bytes": N, "nand_written_bytes": N, "waf_lifetime": L,
        "media_errors_delta": L, "error_log_entries_delta": L, "unsafe_shutdowns_delta": L,
        "percentage_used_delta": L, "available_spare_pct_delta": H,
        "host_written_bytes_delta": N, "nand_written_bytes_delta": N, "waf_session": L,
        **_OCP_HEALTH},
    # SNIA PTS tests (catalog.pts): point figures by their units, steady-state figures as the
    # steady-state test's (the throughput test's per point)
    **{wid: {fig: H if fig in ("iops", "bw_mbps") else L for fig in figs}
       | {"steady_state_reached": H, "steady_state_round": L, "rounds": L,
          "data_excursion_pct": L, "slope_excursion_pct": L}
       for wid, figs in (("pts_iops", ("iops",)), ("pts_throughput", ("bw_mbps",)))},
    "pts_latency": {"lat_mean_us": L, "lat_max_us": L, "lat_p99_999_us": L, "lat_tail_ios": N,
                    "steady_state_reached": H, "steady_state_round": L, "rounds": L,
                    "data_excursion_pct": L, "slope_excursion_pct": L},
    # SNIA PTS WSAT / HIR: speeds, the share of FOB kept, GB written before the cliff and the
    # recovery higher; how much the test wrote is a fact of the run
    "pts_wsat": {"iops_fob": H, "iops_steady": H, "steady_fob_ratio": H, "cliff_tgbw_gb": H,
                 "tgbw_gb": N, "written_multiple": N},
    "pts_hir": {"baseline_iops": H, "steady_state_reached": H,
                **{f"w{w}s_{f}": H for w in (5, 10, 15, 25, 50)
                   for f in ("iops", "recovery_ratio", "rebaseline_iops")}},
    "idle_power": {"active_idle_w": L, "idle_apst_w": L, "apst_saving_pct": H,
                   "ps0_max_power_w": N, "deepest_idle_max_power_w": N},
    "idle_wake_read_4k_qd1": {"lat_mean_us": L, "lat_p50_us": L, "lat_p99_us": L,
                              "wake_penalty_us": L, "wake_ratio": L, "power_states": N,
                              "non_operational_states": N, "max_idle_exit_latency_us": N,
                              "max_transition_latency_us": N, "apst_enabled": N,
                              "warning_temperature_c": N, "critical_temperature_c": N},
}


def direction(metric: str) -> str:
    """The gate's direction of a canonical metric: ``higher``, ``lower`` or ``none``."""
    if not has_direction(metric):
        return N
    return H if is_higher_better(metric) else L


def test_every_catalog_workload_is_listed() -> None:
    assert set(EXPECTED) == set(CATALOG)


@pytest.mark.parametrize("workload_id", sorted(CATALOG))
def test_every_catalog_metric_has_its_listed_direction(workload_id: str) -> None:
    expected = EXPECTED[workload_id]
    found: dict[str, set[str]] = {}
    for metric in CATALOG[workload_id].metric_names():
        found.setdefault(metric.rpartition(".")[2], set()).add(direction(metric))
    # one direction per bare name within a workload, else the table must name metrics whole
    assert {b: d for b, d in found.items() if len(d) > 1} == {}
    assert {b: d.pop() for b, d in found.items()} == expected


def test_an_fio_pattern_workload_has_the_plain_directions() -> None:
    workload = parametric_workload("rand_w30_4k_qd4")
    assert workload is not None
    assert {m: direction(m) for m in workload.metric_names()} == {
        **{f"{d}.{b}": x for d in ("read", "write") for b, x in _FIO.items()},
        "total.iops": H, "total.bw_mbps": H, **_POWER,
        "read.iops_per_w": H, "write.iops_per_w": H, "total.iops_per_w": H}


FACTS = DriveFacts(controller="JMF667H", nand="L85C", firmware="SVN418a", model="X",
                   capacity_bytes=128 * 10**9, kind="block")


def _limits(tmp_path: Path, limits: str):
    path = tmp_path / "t.yaml"
    path.write_text(f"""version: 1
profiles:
  - name: p
    match: {{kind: block}}
    source: "test"
    limits: {limits}
""")
    return ThresholdSet.load([path]).resolve(FACTS)


def test_a_saturation_qd_limit_does_not_gate_it_by_direction(tmp_path: Path) -> None:
    # docs/methodology.md's example limit: the smallest QD reaching 90 % of the maximum, at most
    # 32. A firmware that raises the maximum IOPS may saturate later (4 -> 8): no regression.
    metric = "rand_read_4k.saturation_qd"
    limits = _limits(tmp_path, f"{{qd_scaling: {{{metric}: {{max: 32}}}}}}")
    assert metric not in gated_metrics(limits, "qd_scaling")
    compared = compare_workload("qd_scaling", {metric: 8.0}, {metric: 4.0},
                                baseline_firmware="A", limits=limits)
    assert metric not in {c.metric for c in compared}


def test_a_size_ratio_limit_gates_it_higher_is_better(tmp_path: Path) -> None:
    # large / small test size: 0.9 -> 0.5 is the drive slowing on the larger test
    metric = "seq1m_q8t1.write.size_ratio"
    limits = _limits(tmp_path, f"{{client_presets: {{{metric}: {{min: 0.2}}}}}}")
    assert metric in gated_metrics(limits, "client_presets")
    [c] = [c for c in compare_workload("client_presets", {metric: 0.5}, {metric: 0.9},
                                       baseline_firmware="A", limits=limits)
           if c.metric == metric]
    # one run a side past the limit: inconclusive, a failure after reruns
    assert (c.status, c.higher_is_better, c.failed) == (INCONCLUSIVE, True, True)
    [c] = [c for c in compare_workload("client_presets", {metric: 0.5}, {metric: 0.9},
                                       baseline_firmware="A", limits=limits,
                                       samples={metric: [0.5, 0.51, 0.49]},
                                       baseline_samples={metric: [0.9, 0.91, 0.89]})
           if c.metric == metric]
    assert (c.status, c.higher_is_better) == (REGRESSED, True)


def test_trend_says_changed_for_a_metric_without_a_direction() -> None:
    from pytest_ssdqual.results.trend import FirmwarePoint, format_table

    points = [FirmwarePoint("A", [4.0], ["r1"]), FirmwarePoint("B", [8.0], ["r2"])]
    assert "(changed)" in format_table(points, "rand_read_4k.saturation_qd")[-1]
    worse = format_table(points, "rand_read_4k_qd1.read.lat_p99_us")[-1]
    assert "+100" in worse and "(worse)" in worse
    assert "(better)" in format_table(points, "seq1m_q8t1.read.size_ratio")[-1]
