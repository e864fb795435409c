"""Tool output of other versions: ``pytest_ssdqual.drive.health`` on the real
smartctl and nvme-cli files in ``../shared/cases/real/``.

Where no real file shows a spelling (nvme-cli 2.3's comma-grouped strings, quoted numbers,
counters beyond 64 bits), the test takes a real file and changes the one value, saying so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.drive.health import (
    DATA_UNIT_BYTES,
    DriveHealth,
    health_from_nvme_smart_log,
    health_from_smartctl,
)
from pytest_ssdqual.errors import DeviceError


def load(real_cases: Path, name: str) -> dict[str, Any]:
    return json.loads((real_cases / name).read_text())


# --------------------------------------------------------------------------- smartctl


def test_every_real_smartctl_file_gives_health_or_a_device_error(real_cases: Path) -> None:
    for path in sorted((real_cases / "smartctl").glob("*.json")):
        doc = json.loads(path.read_text())
        try:
            health = health_from_smartctl(doc)
        except DeviceError as exc:
            assert doc["smartctl"]["exit_status"] & 0b11, (path.name, exc)
            continue
        assert isinstance(health, DriveHealth)
        assert health.source.startswith("smartctl 7."), path.name
        assert health.implausible == (), (path.name, health.implausible)


def test_smartctl_nvme_failing_drive_keeps_data_and_lists_the_finding(real_cases: Path) -> None:
    # exit status 8 (bit 3, DISK FAILING) with critical_warning 16: data kept, finding named
    name = "smartctl-7.3_nvme_samsung_pm1725a_exit8_critwarn16_redacted.json"
    health = health_from_smartctl(load(real_cases, f"smartctl/{name}"))
    assert health.findings == ("SMART status check returned DISK FAILING",)
    assert health.smart_passed is False
    assert health.critical_warning == 16
    assert health.critical_warnings == ("volatile memory backup device failed",)
    assert health.temperature_c == 40
    assert (health.available_spare_pct, health.percentage_used) == (100, 0)
    assert health.data_units_written == 147556750
    assert health.data_written_bytes == 147556750 * DATA_UNIT_BYTES
    assert (health.host_read_commands, health.host_write_commands) == (3927325763, 2665106227)
    assert (health.power_on_hours, health.power_cycles, health.unsafe_shutdowns) == (18376, 6, 4)
    assert health.absent == ()


@pytest.mark.parametrize(
    ("name", "status", "findings"),
    [
        ("smartctl-7.1_sat+megaraid_wd4000fyyx_exit4_message.json", 4,
         ("some SMART or other ATA command to the disk failed, or a SMART data checksum error",)),
        ("smartctl-7.3_sat_kingston_a400_exit4_redacted.json", 4,
         ("some SMART or other ATA command to the disk failed, or a SMART data checksum error",)),
    ],
)
def test_smartctl_ata_with_exit_bit_2_is_data_with_a_finding(
    real_cases: Path, name: str, status: int, findings: tuple[str, ...]
) -> None:
    doc = load(real_cases, f"smartctl/{name}")
    assert doc["smartctl"]["exit_status"] == status
    health = health_from_smartctl(doc)
    assert health.findings == findings
    assert health.smart_passed is True
    assert health.power_on_hours and health.power_on_hours > 0
    assert health.critical_warning is None and "critical_warning" in health.absent


def test_smartctl_all_bits_2_to_7_are_findings_not_errors(real_cases: Path) -> None:
    doc = load(real_cases, "smartctl/smartctl-7.0_sat_samsung860evo_xall.json")
    doc["smartctl"]["exit_status"] = 0b11111100  # derived: every finding bit set
    health = health_from_smartctl(doc)
    assert len(health.findings) == 6
    assert health.temperature_c == 36 and health.power_on_hours == 14551


def test_smartctl_no_sensor_temperature_zero_is_absent(real_cases: Path) -> None:
    name = "smartctl-7.4_sat_crucial_m4_xall_truenas_farm_unsupported.json"
    health = health_from_smartctl(load(real_cases, f"smartctl/{name}"))
    assert health.temperature_c is None and "temperature_c" in health.absent
    assert (health.power_on_hours, health.power_cycles) == (4179, 1931)


def test_smartctl_info_only_output_has_every_field_absent(real_cases: Path) -> None:
    name = "smartctl-7.4_info_jmb39x_wd_red_exit4.json"
    health = health_from_smartctl(load(real_cases, f"smartctl/{name}"))
    assert health.smart_passed is None
    assert set(health.absent) >= {"temperature_c", "power_on_hours", "critical_warning"}
    assert health.findings  # exit status 4


def test_smartctl_open_failed_is_a_device_error(real_cases: Path) -> None:
    with pytest.raises(DeviceError, match=r"exit status 2: device open failed.*Open failed"):
        health_from_smartctl(
            load(real_cases, "smartctl/smartctl-7.0_windows_open_failed_exit2.json")
        )


def test_not_smartctl_json_is_a_device_error() -> None:
    with pytest.raises(DeviceError, match="not smartctl JSON"):
        health_from_smartctl({"temperature": 300})


# --------------------------------------------------------------------------- nvme-cli


def test_nvme_cli_2x_integer_critical_warning_and_kelvin(real_cases: Path) -> None:
    health = health_from_nvme_smart_log(
        load(real_cases, "nvme/nvme-cli-2.x_smart-log_firecuda530.json")
    )
    assert health.source == "nvme-cli smart-log"
    assert health.critical_warning == 0 and health.critical_warnings == ()
    assert health.temperature_c == 310 - 273
    assert (health.available_spare_pct, health.available_spare_threshold_pct) == (100, 5)
    assert health.percentage_used == 2
    assert health.data_units_written == 136157684
    assert health.host_write_commands == 1928062610
    assert health.error_log_entries == 110
    assert health.absent == () and health.implausible == ()


def test_nvme_cli_2_11_critical_warning_object(real_cases: Path) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.11_smart-log_critical_warning_object.json")
    assert isinstance(doc["critical_warning"], dict)
    health = health_from_nvme_smart_log(doc)
    assert health.critical_warning == 0
    assert health.temperature_c == 324 - 273
    assert health.host_write_commands == 24273507789  # beyond 32 bits, exact
    assert health.error_log_entries == 212


def test_nvme_cli_critical_warning_object_with_bits_set(real_cases: Path) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.11_smart-log_critical_warning_object.json")
    doc["critical_warning"]["value"] = 0b1001  # derived: spare below threshold + read-only
    health = health_from_nvme_smart_log(doc)
    assert health.critical_warnings == ("available spare below threshold",
                                        "media placed in read-only mode")


def test_nvme_cli_numbers_as_floats(real_cases: Path) -> None:
    floats = health_from_nvme_smart_log(
        load(real_cases, "nvme/derived/DERIVED_netdata_smart-log_numbers_as_floats.json")
    )
    ints = health_from_nvme_smart_log(
        load(real_cases, "nvme/nvme-cli-2.x_smart-log_firecuda530.json")
    )
    assert floats == ints


@pytest.mark.parametrize(
    ("spelling", "value"),
    [
        ("integer", 136157684),
        ("float", 136157684.0),
        ("quoted", "136157684"),
        ("comma-grouped (nvme-cli 2.3)", "136,157,684"),
    ],
)
def test_nvme_cli_number_spellings(real_cases: Path, spelling: str, value: object) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.x_smart-log_firecuda530.json")
    doc["data_units_written"] = value  # derived: one value respelled
    health = health_from_nvme_smart_log(doc)
    assert health.data_units_written == 136157684, spelling
    assert health.implausible == ()


def test_counters_beyond_64_bits_are_kept_exact_and_flagged(real_cases: Path) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.x_smart-log_firecuda530.json")
    huge = 2**64 + 12345  # derived: a garbled 128-bit counter (upper half not zero)
    doc["data_units_read"] = huge
    doc["host_read_commands"] = f"{2**100:,}"
    health = health_from_nvme_smart_log(json.loads(json.dumps(doc)))  # through JSON, as read
    assert health.data_units_read == huge  # exact, not a float
    assert health.host_read_commands == 2**100
    assert [i.split(":")[0] for i in health.implausible] == ["data_units_read",
                                                             "host_read_commands"]
    assert "2**64 or more" in health.implausible[0]


def test_unreadable_number_is_flagged_not_fatal(real_cases: Path) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.x_smart-log_firecuda530.json")
    doc["power_on_hours"] = "4974,5"  # derived: a locale decimal comma
    health = health_from_nvme_smart_log(doc)
    assert health.power_on_hours is None
    assert "power_on_hours" in health.absent
    assert health.implausible == (
        "power_on_hours: unreadable (power_on_hours: expected an integer, got '4974,5' "
        "(a locale decimal comma? run the tool with LC_ALL=C))",
    )


def test_absent_fields_are_none_and_named(real_cases: Path) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.x_smart-log_firecuda530.json")
    for key in ("percent_used", "media_errors", "temperature"):
        del doc[key]
    health = health_from_nvme_smart_log(doc)
    assert (health.percentage_used, health.media_errors, health.temperature_c) == (None,) * 3
    assert set(health.absent) == {"percentage_used", "media_errors", "temperature_c"}


def test_spare_above_100_percent_is_flagged(real_cases: Path) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.x_smart-log_firecuda530.json")
    doc["avail_spare"] = 255  # derived
    assert health_from_nvme_smart_log(doc).implausible == (
        "available_spare_pct: 255 % is above 100 %",
    )


def test_other_nvme_documents_are_device_errors(real_cases: Path) -> None:
    for name in ("nvme-cli-1.x_id-ctrl_samsung_pm983_MZ1LB960HAJQ-000FB.json",
                 "nvme-cli-2.x_list_flat_firecuda530.json"):
        with pytest.raises(DeviceError, match="not nvme smart-log JSON"):
            health_from_nvme_smart_log(load(real_cases, f"nvme/{name}"))
