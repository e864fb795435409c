"""OCP datacenter logs and SMART thermal fields as health metrics (``drive.health_ocp``).

C0h: the real ``nvme ocp smart-add-log -o json`` of ``cases/real/nvme``; C1h-C3h: outputs
BUILT from nvme-cli v2.16's printers (``tests/data/nvme_ocp/SOURCES.md``), not real drives'.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.drive.health import (
    DriveHealth,
    health_from_nvme_smart_log,
    health_from_smartctl,
)
from pytest_ssdqual.drive.health_checks import (
    health_deltas,
    health_limits,
    health_metrics,
    judge_health,
)
from pytest_ssdqual.drive.health_ocp import (
    ocp_c0_metrics,
    ocp_c1_metrics,
    ocp_c2_metrics,
    ocp_c3_metrics,
)
from pytest_ssdqual.drive.health_ocp_query import read_nvme_logs
from pytest_ssdqual.errors import DeviceError

BUILT = Path(__file__).resolve().parents[1] / "data" / "nvme_ocp"
C0_REAL = "nvme/nvme-cli_ocp_smart-add-log_C0_hi_lo.json"


def built(log: str) -> dict[str, Any]:
    return json.loads(next(BUILT.glob(f"BUILT_*_{log}.json")).read_text())


def real(real_cases: Path, name: str) -> dict[str, Any]:
    return json.loads((real_cases / name).read_text())


C0_EXPECTED = {
    "ocp_nand_read_bytes": 36265469677568, "ocp_bad_user_nand_blocks": 0,
    "ocp_bad_user_nand_blocks_normalized": 100, "ocp_bad_system_nand_blocks": 0,
    "ocp_bad_system_nand_blocks_normalized": 100, "ocp_xor_recovery_count": 0,
    "ocp_uncorrectable_read_errors": 0, "ocp_soft_ecc_errors": 1117,
    "ocp_e2e_corrected_errors": 0, "ocp_e2e_detected_errors": 0,
    "ocp_system_data_used_pct": 0, "ocp_refresh_count": 520628,
    "ocp_max_user_erase_count": 45, "ocp_min_user_erase_count": 16,
    "ocp_thermal_throttling_events": 0, "ocp_throttling_status": 0,
    "ocp_pcie_correctable_errors": 0, "ocp_incomplete_shutdowns": 0, "ocp_free_blocks_pct": 1,
    "ocp_capacitor_health_pct": 100, "ocp_unaligned_io": 0, "ocp_security_version": 65537,
    "ocp_nuse": 0, "ocp_plp_start_count": 287, "ocp_endurance_estimate": 20100000,
    "ocp_log_page_version": 2,
}


def test_real_c0_every_field_exact(real_cases: Path) -> None:
    notes: list[str] = []
    assert ocp_c0_metrics(real(real_cases, C0_REAL), notes) == C0_EXPECTED
    assert notes == []


# nvme-cli --output-format-version=2 (json_smart_extended_log_v2) spells the keys in snake case
# and prints uint128 values as decimal strings (util_json_object_new_uint128)
_V2_KEYS = {
    "Physical media units read": "physical_media_units_read",
    "Bad user nand blocks - Raw": "bad_user_nand_blocks_raw",
    "Uncorrectable read error count": "uncorrectable_read_errors",
    "End to end detected errors": "end_to_end_detected_errors",
    "Refresh counts": "refresh_count",
    "Number of Thermal throttling events": "thermal_throttling_events",
    "PCIe correctable error count": "pcie_correctable_errors",
    "NUSE - Namespace utilization": "nuse_namespace_utilization",
    "PLP start count": "plp_start_count",
    "Log page GUID": "log_page_guid",
}


def test_c0_snake_case_spelling_and_128_bit_values(real_cases: Path) -> None:
    doc = {_V2_KEYS.get(k, k): v for k, v in real(real_cases, C0_REAL).items()}
    doc["plp_start_count"] = "287"
    doc["physical_media_units_read"] = {"hi": 1, "lo": 5}
    doc["end_to_end_detected_errors"] = 3
    got = ocp_c0_metrics(doc)
    assert got == {**C0_EXPECTED, "ocp_nand_read_bytes": 2**64 + 5,
                   "ocp_e2e_detected_errors": 3}


def test_c0_refuses_other_output_and_notes_unreadable_fields(real_cases: Path) -> None:
    with pytest.raises(DeviceError, match="Log page GUID"):
        ocp_c0_metrics({"critical_warning": 0})
    doc = real(real_cases, C0_REAL)
    doc["Incomplete shutdowns"] = "n/a"
    notes: list[str] = []
    got = ocp_c0_metrics(doc, notes)
    assert "ocp_incomplete_shutdowns" not in got  # not reported, never 0
    assert notes == ["ocp_incomplete_shutdowns: unreadable (Incomplete shutdowns: expected "
                     "an integer, got 'n/a')"]


def test_built_c3_latency_monitor_buckets_and_outliers() -> None:
    got = ocp_c3_metrics(built("C3"))
    assert got["ocp_lm_feature_status"] == 1
    assert [got[f"ocp_lm_active_bucket{b}_read"] for b in range(4)] == [5210, 41, 3, 0]
    assert [got[f"ocp_lm_active_bucket{b}_write"] for b in range(4)] == [1830, 17, 2, 1]
    assert [got[f"ocp_lm_active_bucket{b}_trim"] for b in range(4)] == [12, 0, 0, 0]
    assert [got[f"ocp_lm_static_bucket{b}_write"] for b in range(4)] == [30111, 215, 19, 4]
    assert [got[f"ocp_lm_active_latency_bucket{b}_write_ms"] for b in range(4)] == [
        8, 12, 27, 118]
    assert len(got) == 1 + 2 * 12 + 12
    with pytest.raises(DeviceError, match="Feature Status"):
        ocp_c3_metrics({"Panic ID": 0})


def test_built_c2_fw_activation_history() -> None:
    assert ocp_c2_metrics(built("C2")) == {
        "ocp_fw_activation_entries": 3, "ocp_fw_activation_count": 3,
        "ocp_fw_activation_failures": 1}
    assert ocp_c2_metrics({"valid entries": 0, "entries": []}) == {
        "ocp_fw_activation_entries": 0, "ocp_fw_activation_failures": 0}


def test_built_c1_error_recovery() -> None:
    assert ocp_c1_metrics(built("C1")) == {
        "ocp_er_panic_reset_wait_time_ms": 1000, "ocp_er_panic_reset_action": 2,
        "ocp_er_panic_id": 0, "ocp_er_device_recovery_action_1": 1,
        "ocp_er_device_recovery_action_2": 4, "ocp_er_device_capabilities": 3,
        "ocp_er_log_page_version": 2}


def test_thermal_fields_from_nvme_cli_and_smartctl(real_cases: Path) -> None:
    nvme = health_from_nvme_smart_log(
        real(real_cases, "nvme/nvme-cli-2.11_smart-log_critical_warning_object.json"))
    assert dict(nvme.log_metrics) == {
        "warning_temp_time_minutes": 0, "critical_comp_time_minutes": 0, "thm_temp1_trans_count": 3,
        "thm_temp2_trans_count": 0, "thm_temp1_total_time_s": 1474,
        "thm_temp2_total_time_s": 0}
    smart = health_from_smartctl(
        real(real_cases, "smartctl/smartctl-7.1_nvme_intel660p_SSDPEKNW010T8.json"))
    assert dict(smart.log_metrics) == {"warning_temp_time_minutes": 0,
                                       "critical_comp_time_minutes": 0}
    assert health_metrics(nvme)["thm_temp1_total_time_s"] == 1474.0


def _with(base: DriveHealth, **metrics: int) -> DriveHealth:
    return DriveHealth(source=base.source, log_metrics={**base.log_metrics, **metrics})


def test_deltas_judged_by_the_builtin_limits(real_cases: Path) -> None:
    start = DriveHealth(source="nvme-cli smart-log",
                        log_metrics={**C0_EXPECTED, "thm_temp1_trans_count": 3})
    end = _with(start, ocp_e2e_detected_errors=1, ocp_incomplete_shutdowns=2,
                ocp_thermal_throttling_events=4, ocp_soft_ecc_errors=1120,
                thm_temp1_trans_count=5)
    deltas = health_deltas(start, end)
    assert deltas["ocp_e2e_detected_errors_delta"] == 1.0
    assert deltas["ocp_soft_ecc_errors_delta"] == 3.0
    assert deltas["thm_temp1_trans_count_delta"] == 2.0
    judged = judge_health("start -> end", deltas, health_limits([]))
    assert [v.metric for v in judged.failed] == ["ocp_e2e_detected_errors_delta"]
    assert sorted(v.metric for v in judged.warnings) == [
        "ocp_incomplete_shutdowns_delta", "ocp_thermal_throttling_events_delta",
        "thm_temp1_trans_count_delta"]
    assert "critical_comp_time_minutes_delta" in judged.not_reported  # no thermal times here
    quiet = judge_health("start -> start", health_deltas(start, start), health_limits([]))
    assert quiet.failed == [] and quiet.warnings == []


class _Recorder:
    """``argv -> (returncode, stdout)`` answering from a table; records every argv."""

    def __init__(self, answers: dict[str, dict[str, Any]], code: int = 1) -> None:
        self.answers = answers
        self.code = code  # the exit status of a request not in the table
        self.argv: list[list[str]] = []

    def __call__(self, argv: list[str]) -> tuple[int, str]:
        self.argv.append(argv)
        key = " ".join(argv[1:-3])
        return (0, json.dumps(self.answers[key])) if key in self.answers else (self.code, "")


def test_non_ocp_drive_is_asked_c0_only_and_not_reported(real_cases: Path) -> None:
    smart = real(real_cases, "nvme/nvme-cli-2.11_smart-log_critical_warning_object.json")
    run = _Recorder({"smart-log": smart})
    metrics, notes, c0 = read_nvme_logs(run, "/dev/nvme0n1")
    assert [a[:3] for a in run.argv] == [["nvme", "smart-log", "-o"],
                                        ["nvme", "ocp", "smart-add-log"]]
    assert c0 is None and metrics["thm_temp1_trans_count"] == 3
    assert notes == ["OCP C0h not reported: nvme-cli ocp (exit 1, no JSON output)",
                     "OCP C1h-C3h not asked: no C0h, not an OCP datacenter drive"]


def test_ocp_drive_without_latency_monitor(real_cases: Path) -> None:
    run = _Recorder({"ocp smart-add-log": real(real_cases, C0_REAL),
                     "ocp error-recovery-log": built("C1"),
                     "ocp fw-activate-history": built("C2")})
    metrics, notes, c0 = read_nvme_logs(run, "/dev/nvme0n1", smart_log={})
    assert [a[1:3] for a in run.argv] == [["ocp", "smart-add-log"],
                                         ["ocp", "error-recovery-log"],
                                         ["ocp", "fw-activate-history"],
                                         ["ocp", "latency-monitor-log"]]
    assert all(a[-3:] == ["-o", "json", "/dev/nvme0n1"] for a in run.argv)
    assert c0 is not None and metrics["ocp_soft_ecc_errors"] == 1117
    assert metrics["ocp_fw_activation_failures"] == 1 and metrics["ocp_er_panic_id"] == 0
    assert not any(m.startswith("ocp_lm_") for m in metrics)
    assert notes == ["OCP C3h not reported: nvme-cli ocp (exit 1, no JSON output)"]


def test_every_builtin_limit_names_a_catalog_health_metric() -> None:
    # a limit on a misspelt metric would never judge anything ("not reported" forever)
    from pytest_ssdqual.catalog.health import HEALTH_METRICS
    from pytest_ssdqual.drive.health_ocp_limits import OCP_BUILTIN_LIMITS

    assert [lim.metric for lim in OCP_BUILTIN_LIMITS if lim.metric not in HEALTH_METRICS] == []
    assert "critical_comp_time_minutes_delta" in {lim.metric for lim in OCP_BUILTIN_LIMITS}


def test_a_drive_that_refused_c0h_is_not_asked_again_in_the_session(real_cases: Path) -> None:
    from pytest_ssdqual.drive.health_ocp_query import OcpSupport

    smart = real(real_cases, "nvme/nvme-cli-2.11_smart-log_critical_warning_object.json")
    run = _Recorder({"smart-log": smart}, code=9)  # NVMe status 0x109 Invalid Log Page
    support = OcpSupport()
    read_nvme_logs(run, "/dev/nvme0n1", ocp=support)
    assert support.refused == "nvme-cli ocp (exit 9, no JSON output)"
    metrics, notes, c0 = read_nvme_logs(run, "/dev/nvme0n1", ocp=support)
    assert [a[1:3] for a in run.argv] == [["smart-log", "-o"], ["ocp", "smart-add-log"],
                                         ["smart-log", "-o"]]  # the second reading: no OCP
    assert c0 is None and metrics["thm_temp1_trans_count"] == 3
    assert notes == ["OCP C0h-C3h not asked: C0h not reported earlier in this session "
                     "(nvme-cli ocp (exit 9, no JSON output)), not an OCP datacenter drive"]
    # a drive that answers C0h is asked every time (its counters are judged as deltas)
    answering = _Recorder({"ocp smart-add-log": real(real_cases, C0_REAL)})
    ocp = OcpSupport()
    for _reading in range(2):
        read_nvme_logs(answering, "/dev/nvme0n1", smart_log={}, ocp=ocp)
    assert ocp.refused is None
    assert [a[1:3] for a in answering.argv].count(["ocp", "smart-add-log"]) == 2


@pytest.mark.parametrize("answer", ["exit 1", "timeout", "not started"])
def test_a_c0h_refusal_that_may_pass_is_asked_again(real_cases: Path, answer: str) -> None:
    """Exit 1 without JSON (a drive just back from a power cycle), a timeout or a tool that
    could not start is no definite refusal: the next reading asks C0h again."""
    import subprocess

    from pytest_ssdqual.drive.health_ocp_query import OcpSupport

    smart = real(real_cases, "nvme/nvme-cli-2.11_smart-log_critical_warning_object.json")
    table = _Recorder({"smart-log": smart})

    def run(argv: list[str]) -> tuple[int, str]:
        if "ocp" in argv and answer == "timeout":
            table.argv.append(argv)
            raise subprocess.TimeoutExpired(argv, 30)
        if "ocp" in argv and answer == "not started":
            table.argv.append(argv)
            raise PermissionError(13, "Permission denied")
        return table(argv)

    support = OcpSupport()
    for _reading in range(2):
        read_nvme_logs(run, "/dev/nvme0n1", ocp=support)
    assert support.refused is None
    assert [a[1:3] for a in table.argv].count(["ocp", "smart-add-log"]) == 2
