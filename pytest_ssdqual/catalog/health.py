"""Metric names of the drive-health and idle-power tests.

Plain data only (no import from the rest of the package: ``workloads`` imports this module to
list the names in ``workloads.CATALOG``, so threshold files are checked before any I/O).

Health (``health`` workload, ``health_checks.py``):

* flags, 0 or 1: smartctl's exit-status bits 2-7 (smartctl(8), RETURN VALUES) and the NVMe
  SMART / Health log Critical Warning bits 0-5 (NVM Express Base Specification 2.0, log page
  02h, byte 0);
* values read from the drive (units in the names: ``_c`` °C, ``_pct`` %, ``_bytes`` bytes);
* ``<value>_delta``: after minus before (the session, or a destructive test), judged by
  ``max_delta`` limits (``media_errors: {max_delta: 0}``); ``waf_session`` is the write
  amplification over the same interval (NAND bytes written / host bytes written).

Idle wake-up (``idle_wake_read_4k_qd1`` workload, ``power_states.py``): QD1 4 KiB random read
completion latency without idle (``busy.*``) and after idle gaps (``idle_<gap>.*``), the
worst wake-up penalty, and the drive's power-state facts, each named for what it holds:
``max_idle_exit_latency_us`` the largest exit latency (EXLAT) of a non-operational state,
``max_transition_latency_us`` the largest entry + exit (ENLAT + EXLAT) of one, and
``warning_temperature_c`` / ``critical_temperature_c`` the drive's WCTEMP / CCTEMP (Identify
Controller, Kelvin in the structure, degrees C here).
"""

from __future__ import annotations

from pytest_ssdqual.catalog.health_ocp import (
    HIGHER_IS_BETTER_OCP,
    NO_DIRECTION_OCP,
    OCP_DELTA_BASES,
    OCP_HEALTH_METRICS,
)

HEALTH_WORKLOAD_ID = "health"
IDLE_WAKE_WORKLOAD_ID = "idle_wake_read_4k_qd1"
IDLE_POWER_WORKLOAD_ID = "idle_power"

#: The idle-power test's metrics (``qualify.idle_power``, with a power meter): watts at active
#: idle (APST off) and idle with APST (under the host's ASPM policy), the saving in percent, and
#: the power-state table's bounds they are compared with (facts: no direction).
IDLE_POWER_METRICS: tuple[str, ...] = (
    "active_idle_w", "idle_apst_w", "apst_saving_pct", "ps0_max_power_w",
    "deepest_idle_max_power_w")
NO_DIRECTION_IDLE_POWER: frozenset[str] = frozenset(
    {"ps0_max_power_w", "deepest_idle_max_power_w"})

#: smartctl exit-status bit -> flag metric (bits 0-1 mean "no data": an error, not a flag).
SMART_BIT_METRICS: dict[int, str] = {
    2: "smart_command_failed",
    3: "smart_disk_failing",
    4: "smart_prefail_at_threshold",
    5: "smart_usage_past_threshold",
    6: "smart_error_log",
    7: "smart_selftest_errors",
}

#: NVMe Critical Warning bit -> flag metric.
CRITICAL_WARNING_METRICS: dict[int, str] = {
    0: "cw_spare_below_threshold",
    1: "cw_temperature",
    2: "cw_reliability_degraded",
    3: "cw_read_only",
    4: "cw_volatile_backup_failed",
    5: "cw_pmr_unreliable",
}

#: Values read from the drive.
HEALTH_VALUE_METRICS: tuple[str, ...] = (
    "critical_warning",
    "temperature_c",
    "warning_temperature_c",
    "temperature_margin_c",
    "available_spare_pct",
    "spare_margin_pct",
    "percentage_used",
    "media_errors",
    "error_log_entries",
    "unsafe_shutdowns",
    "host_written_bytes",
    "nand_written_bytes",
    "waf_lifetime",
)

#: Values whose change over an interval is a metric of its own (``<name>_delta``).
HEALTH_DELTA_BASES: tuple[str, ...] = (
    "media_errors",
    "error_log_entries",
    "unsafe_shutdowns",
    "percentage_used",
    "available_spare_pct",
    "host_written_bytes",
    "nand_written_bytes",
)

HEALTH_METRICS: tuple[str, ...] = (
    *SMART_BIT_METRICS.values(),
    *CRITICAL_WARNING_METRICS.values(),
    *HEALTH_VALUE_METRICS,
    *(f"{m}_delta" for m in HEALTH_DELTA_BASES),
    "waf_session",
    *OCP_HEALTH_METRICS,  # OCP C0h-C3h and SMART thermal fields (catalog.health_ocp)
    *(f"{m}_delta" for m in OCP_DELTA_BASES),
)

#: Health figures where higher is better (for the regression gate and ``ssdqual compare``):
#: margins and spare. Every other health figure but ``NO_DIRECTION_HEALTH`` is lower-is-better
#: (flags, counts, wear, temperature, write amplification).
HIGHER_IS_BETTER_HEALTH: frozenset[str] = frozenset(
    {"temperature_margin_c", "available_spare_pct", "spare_margin_pct",
     "available_spare_pct_delta"}) | HIGHER_IS_BETTER_OCP
#: Facts of the drive rather than measurements of how well it does (no better direction): its
#: warning temperature and the bytes written to it (host and NAND; ``waf_*`` is their ratio).
NO_DIRECTION_HEALTH: frozenset[str] = frozenset(
    {"warning_temperature_c", "host_written_bytes", "nand_written_bytes",
     "host_written_bytes_delta", "nand_written_bytes_delta"}) | NO_DIRECTION_OCP

#: Idle gaps of the wake-up test, in milliseconds (longest last). Profiles use a prefix.
IDLE_GAPS_MS: tuple[int, ...] = (1, 10, 100, 1000, 5000)

#: Per-point latency figures of the wake-up test (µs, fio completion latency).
IDLE_POINT_FIGURES: tuple[str, ...] = ("lat_mean_us", "lat_p50_us", "lat_p99_us")


def idle_point(gap_ms: int) -> str:
    """Point name of one idle gap: ``1`` -> ``'idle_1ms'``, ``1000`` -> ``'idle_1000ms'``."""
    return f"idle_{gap_ms}ms"


IDLE_WAKE_METRICS: tuple[str, ...] = (
    *(f"busy.{f}" for f in IDLE_POINT_FIGURES),
    *(f"{idle_point(g)}.{f}" for g in IDLE_GAPS_MS for f in IDLE_POINT_FIGURES),
    "wake_penalty_us",
    "wake_ratio",
    "power_states",
    "non_operational_states",
    "max_idle_exit_latency_us",
    "max_transition_latency_us",
    "apst_enabled",
    "warning_temperature_c",
    "critical_temperature_c",
)
#: The power-state facts of the wake-up test have no better direction (a firmware that adds a
#: deeper idle state raises the exit latency and saves power); its latencies are
#: lower-is-better.
NO_DIRECTION_IDLE_WAKE: frozenset[str] = frozenset(
    {"power_states", "non_operational_states", "max_idle_exit_latency_us",
     "max_transition_latency_us", "apst_enabled", "warning_temperature_c",
     "critical_temperature_c"})

#: Metrics that were renamed because their name said something else than they held, by workload:
#: old name -> the error's explanation and fix. A threshold file naming one gets that error (the
#: same name with a new meaning would silently judge, compare and trend a different quantity).
RENAMED_METRICS: dict[str, dict[str, str]] = {
    IDLE_WAKE_WORKLOAD_ID: {
        "max_exit_latency_us": (
            "held the entry + exit latency of the slowest idle power state (the E12's PS4: "
            "25 ms + 25 ms = 50,000 us), not its exit latency; a limit written from the name "
            "failed the drive it was written for"
            "|use max_transition_latency_us (entry + exit, what the old name held) or "
            "max_idle_exit_latency_us (exit latency only, EXLAT)"
        ),
    },
}
