"""Health metric names read from the OCP datacenter logs and the NVMe SMART thermal fields.

Parsed by :mod:`pytest_ssdqual.drive.health_ocp`; judged like the other ``health`` metrics
(value and ``<name>_delta`` limits). Names carry the field's unit where it has one:

* ``ocp_*``: SMART / Health Information Extended log (C0h) of the OCP Datacenter NVMe SSD
  Specification 2.0 (as nvme-cli's ``nvme ocp smart-add-log`` prints it); counts unless
  named otherwise.
* ``ocp_lm_*``: Latency Monitor log (C3h): active / static bucket counters per operation
  (``read``, ``write``, ``trim``) and bucket 0-3, the measured (worst) latency per bucket in ms.
* ``ocp_fw_*``: Firmware Activation History log (C2h); ``ocp_er_*``: Error Recovery log (C1h).
* ``warning_temp_time_minutes`` ... ``thm_temp2_total_time_s``: NVMe Base Specification 2.0,
  SMART / Health Information log 02h, bytes 192-231 (minutes for the composite temperature
  times, seconds for the thermal-management totals).
"""

from __future__ import annotations

#: C0h counters and values (metric names).
OCP_C0_METRICS: tuple[str, ...] = (
    "ocp_nand_read_bytes",
    "ocp_bad_user_nand_blocks",
    "ocp_bad_user_nand_blocks_normalized",
    "ocp_bad_system_nand_blocks",
    "ocp_bad_system_nand_blocks_normalized",
    "ocp_xor_recovery_count",
    "ocp_uncorrectable_read_errors",
    "ocp_soft_ecc_errors",
    "ocp_e2e_corrected_errors",
    "ocp_e2e_detected_errors",
    "ocp_system_data_used_pct",
    "ocp_refresh_count",
    "ocp_max_user_erase_count",
    "ocp_min_user_erase_count",
    "ocp_thermal_throttling_events",
    "ocp_throttling_status",
    "ocp_pcie_correctable_errors",
    "ocp_incomplete_shutdowns",
    "ocp_free_blocks_pct",
    "ocp_capacitor_health_pct",
    "ocp_unaligned_io",
    "ocp_security_version",
    "ocp_nuse",
    "ocp_plp_start_count",
    "ocp_endurance_estimate",
    "ocp_log_page_version",
    "ocp_media_dies_offline",
    "ocp_max_temperature_recorded_c",
    "ocp_command_timeouts",
    "ocp_pcie_link_retraining_count",
    "ocp_power_state_changes",
)

LM_OPERATIONS: tuple[str, ...] = ("read", "write", "trim")
LM_BUCKETS: tuple[int, ...] = (0, 1, 2, 3)

#: C3h metrics: bucket counters (active window and static, since the feature was enabled)
#: and the worst measured latency per active bucket (ms), plus the feature status byte.
OCP_C3_METRICS: tuple[str, ...] = (
    "ocp_lm_feature_status",
    *(f"ocp_lm_{kind}_bucket{b}_{op}" for kind in ("active", "static")
      for b in LM_BUCKETS for op in LM_OPERATIONS),
    *(f"ocp_lm_active_latency_bucket{b}_{op}_ms" for b in LM_BUCKETS for op in LM_OPERATIONS),
)

#: C2h: valid entries, the highest activation count, entries whose result is not 0.
OCP_C2_METRICS: tuple[str, ...] = (
    "ocp_fw_activation_entries", "ocp_fw_activation_count", "ocp_fw_activation_failures")

#: C1h: numbers of the error recovery log.
OCP_C1_METRICS: tuple[str, ...] = (
    "ocp_er_panic_reset_wait_time_ms", "ocp_er_panic_reset_action", "ocp_er_panic_id",
    "ocp_er_device_recovery_action_1", "ocp_er_device_recovery_action_2",
    "ocp_er_device_capabilities", "ocp_er_log_page_version")

#: NVMe SMART / Health log 02h thermal fields.
SMART_THERMAL_METRICS: tuple[str, ...] = (
    "warning_temp_time_minutes", "critical_comp_time_minutes",
    "thm_temp1_trans_count", "thm_temp2_trans_count",
    "thm_temp1_total_time_s", "thm_temp2_total_time_s",
)

OCP_HEALTH_METRICS: tuple[str, ...] = (
    *OCP_C0_METRICS, *OCP_C3_METRICS, *OCP_C2_METRICS, *OCP_C1_METRICS, *SMART_THERMAL_METRICS)

#: Metrics whose change over an interval is a metric of its own (``<name>_delta``): counters.
OCP_DELTA_BASES: tuple[str, ...] = (
    "ocp_nand_read_bytes", "ocp_bad_user_nand_blocks", "ocp_bad_system_nand_blocks",
    "ocp_xor_recovery_count", "ocp_uncorrectable_read_errors", "ocp_soft_ecc_errors",
    "ocp_e2e_corrected_errors", "ocp_e2e_detected_errors", "ocp_refresh_count",
    "ocp_thermal_throttling_events", "ocp_pcie_correctable_errors", "ocp_incomplete_shutdowns",
    "ocp_unaligned_io", "ocp_plp_start_count", "ocp_media_dies_offline",
    "ocp_command_timeouts", "ocp_pcie_link_retraining_count", "ocp_power_state_changes",
    *(m for m in OCP_C3_METRICS if "_bucket" in m and not m.endswith("_ms")),
    "ocp_fw_activation_entries", "ocp_fw_activation_failures",
    *SMART_THERMAL_METRICS,
)

#: Higher is better: the normalized (100 = fresh) and percentage-left values.
HIGHER_IS_BETTER_OCP: frozenset[str] = frozenset({
    "ocp_bad_user_nand_blocks_normalized", "ocp_bad_system_nand_blocks_normalized",
    "ocp_free_blocks_pct", "ocp_capacitor_health_pct"})

#: Facts of the drive, no better direction (versions, configuration, bytes read, activations).
NO_DIRECTION_OCP: frozenset[str] = frozenset({
    "ocp_nand_read_bytes", "ocp_nand_read_bytes_delta", "ocp_security_version", "ocp_nuse",
    "ocp_endurance_estimate", "ocp_log_page_version", "ocp_lm_feature_status",
    "ocp_fw_activation_entries", "ocp_fw_activation_count", "ocp_fw_activation_entries_delta",
    "ocp_power_state_changes", "ocp_power_state_changes_delta", "ocp_unaligned_io",
    "ocp_unaligned_io_delta", "ocp_max_user_erase_count", "ocp_min_user_erase_count",
    *OCP_C1_METRICS,
})
