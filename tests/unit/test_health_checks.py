"""Health findings as verdicts: ``health_checks``,
``health_query`` and the ``health`` limits of threshold files, on the real smartctl / nvme-cli
outputs in ``../shared/cases/real/`` and the B11 case in ``../shared/cases/found/``.

Where no real file shows a change over time (a second reading), the test takes a real file and
changes the named counters, saying so.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.drive.health import (
    health_from_nvme_smart_log,
    health_from_smartctl,
    nand_written_from_ocp_c0,
)
from pytest_ssdqual.drive.health_checks import (
    MIN_WAF_HOST_BYTES,
    health_deltas,
    health_limits,
    health_metrics,
    judge_health,
)
from pytest_ssdqual.drive.health_query import HealthUnavailable, query_health
from pytest_ssdqual.drive.tool_runner import default_run
from pytest_ssdqual.errors import ConfigErrors
from pytest_ssdqual.report.summary import format_summary, rows_from_verdicts
from pytest_ssdqual.thresholds.loader import ThresholdSet
from pytest_ssdqual.thresholds.profile import DriveFacts

from ..conftest import cases_dir

B11 = cases_dir() / "found" / "bugtrial-inputs" / "B11"
PM1725A = "smartctl/smartctl-7.3_nvme_samsung_pm1725a_exit8_critwarn16_redacted.json"
FIRECUDA = "nvme/nvme-cli-2.x_smart-log_firecuda530.json"


def load(real_cases: Path, name: str) -> dict[str, Any]:
    return json.loads((real_cases / name).read_text())


def statuses(judgement: Any) -> dict[str, str]:
    return {v.metric: v.status for v in judgement.verdicts}


def profile_limits(tmp_path: Path, limits_yaml: str) -> list[Any]:
    """The health limits a threshold file gives a drive (through the real loader)."""
    path = tmp_path / "health.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: lab health\n    match: {}\n"
                    "    source: lab rules\n    limits:\n      health:\n" + limits_yaml)
    resolved = ThresholdSet.load([path]).resolve(DriveFacts(
        controller=None, nand=None, firmware="1", model="m", serial="s",
        capacity_bytes=10**12, transport="NVMe", kind="block"))
    return list(resolved.limits.values())


# --------------------------------------------------------------------------- B11


def test_b11_disk_failing_shim_is_a_failing_health_verdict(tmp_path: Path) -> None:
    # B11: the PATH shim answers every smartctl call with exit status 8 (DISK FAILING); the run
    # passed because nothing judged it. Read through query_health, exactly as the plugin does.
    if not B11.is_dir():
        pytest.skip(f"B11 case folder {B11} not found: set SSDQUAL_CASES_DIR")
    shim = tmp_path / "bin"
    shutil.copytree(B11, shim)
    (shim / "smartctl").chmod(0o755)

    def run(argv: list[str]) -> tuple[int, str]:
        return default_run([str(shim / argv[0]), *argv[1:]])

    health = query_health("/dev/sdX", kind="block", transport="SATA", run=run)
    assert health.exit_status == 8
    assert health.source == "smartctl 7.3"
    assert health.findings == ("SMART status check returned DISK FAILING",)
    judgement = judge_health("session start", health_metrics(health), health_limits([]))
    assert [v.metric for v in judgement.failed] == ["smart_disk_failing"]
    assert judgement.failed[0].measured == 1
    assert judgement.failed[0].limit is not None
    assert judgement.failed[0].limit.provenance.profile == "built-in health limits"


def test_a_profile_cannot_relax_disk_failing(tmp_path: Path, real_cases: Path) -> None:
    health = health_from_smartctl(load(real_cases, PM1725A))
    limits = health_limits(profile_limits(
        tmp_path, "        smart_disk_failing: {max: 1}\n"
                  "        cw_volatile_backup_failed: {max: 0, severity: warn}\n"))
    judgement = judge_health("start", health_metrics(health), limits)
    failing = [(v.metric, v.limit.provenance.profile) for v in judgement.failed if v.limit]
    assert failing == [("smart_disk_failing", "built-in health limits")]
    # the lab's own limit on the capacitor bit made it a warning, shown, not failing
    assert [v.metric for v in judgement.warnings] == ["cw_volatile_backup_failed"]


# --------------------------------------------------------------------------- real readings


def test_pm1725a_exit8_and_critical_warning_16_fail(real_cases: Path) -> None:
    health = health_from_smartctl(load(real_cases, PM1725A))
    judgement = judge_health("start", health_metrics(health), health_limits([]))
    assert sorted(v.metric for v in judgement.failed) == [
        "cw_volatile_backup_failed", "smart_disk_failing"]
    s = statuses(judgement)
    assert s["cw_spare_below_threshold"] == s["smart_error_log"] == "pass"
    assert judgement.metrics["critical_warning"] == 16
    assert judgement.metrics["spare_margin_pct"] == 90  # 100 % spare, threshold 10 %
    assert "media_errors_delta" in judgement.not_reported  # one reading: no change yet


def test_exit_bits_4_to_7_severities(real_cases: Path) -> None:
    # the real Kingston A400 file (exit 4) with exit status 216 = bits 3, 4, 6, 7 (the held-back
    # USB Hitachi case of B11) and then 32 = bit 5 only
    doc = load(real_cases, "smartctl/smartctl-7.3_sat_kingston_a400_exit4_redacted.json")
    real = judge_health("s", health_metrics(health_from_smartctl(doc)), health_limits([]))
    assert [v.metric for v in real.warnings] == ["smart_command_failed"]
    assert real.failed == []
    doc["smartctl"]["exit_status"] = 216
    j216 = judge_health("s", health_metrics(health_from_smartctl(doc)), health_limits([]))
    assert sorted(v.metric for v in j216.failed) == [
        "smart_disk_failing", "smart_prefail_at_threshold", "smart_selftest_errors"]
    assert [v.metric for v in j216.warnings] == ["smart_error_log"]
    doc["smartctl"]["exit_status"] = 32
    j32 = judge_health("s", health_metrics(health_from_smartctl(doc)), health_limits([]))
    assert j32.failed == [] and [v.metric for v in j32.warnings] == ["smart_usage_past_threshold"]


def test_critical_warning_object_bits(real_cases: Path) -> None:
    doc = load(real_cases, "nvme/nvme-cli-2.11_smart-log_critical_warning_object.json")
    doc["critical_warning"] = dict(doc["critical_warning"], value=0b1001)  # spare + read-only
    metrics = health_metrics(health_from_nvme_smart_log(doc))
    assert metrics["cw_spare_below_threshold"] == metrics["cw_read_only"] == 1
    assert metrics["cw_temperature"] == metrics["cw_reliability_degraded"] == 0
    assert "smart_disk_failing" not in metrics  # nvme-cli has no smartctl exit status


def test_ata_temperature_margin_and_lifetime_waf(real_cases: Path) -> None:
    evo = health_metrics(health_from_smartctl(
        load(real_cases, "smartctl/smartctl-7.0_sat_samsung860evo_xall.json")))
    assert (evo["temperature_c"], evo["warning_temperature_c"]) == (36, 70)
    assert evo["temperature_margin_c"] == 34
    assert evo["percentage_used"] == 19  # Device Statistics page 7
    intel = health_metrics(health_from_smartctl(
        load(real_cases, "smartctl/smartctl-7.1_sat_intel_s4510_redacted.json")))
    assert intel["host_written_bytes"] == 14308 * 32 * 2**20  # Host_Writes_32MiB
    assert intel["nand_written_bytes"] == 95488 * 32 * 2**20  # NAND_Writes_32MiB
    assert intel["waf_lifetime"] == pytest.approx(95488 / 14308)


def test_session_waf_from_two_readings(real_cases: Path) -> None:
    # second reading: the real Intel S4510 file with 8 GiB host and 20 GiB NAND writes added
    before = health_from_smartctl(
        load(real_cases, "smartctl/smartctl-7.1_sat_intel_s4510_redacted.json"))
    assert before.host_written_bytes is not None and before.nand_written_bytes is not None
    after = replace(before, host_written_bytes=before.host_written_bytes + 8 * 2**30,
                    nand_written_bytes=before.nand_written_bytes + 20 * 2**30)
    deltas = health_deltas(before, after)
    assert deltas["waf_session"] == pytest.approx(2.5)
    small = replace(before, host_written_bytes=before.host_written_bytes + MIN_WAF_HOST_BYTES - 1)
    assert "waf_session" not in health_deltas(before, small)  # mostly rounding: not reported


def test_media_errors_max_delta_from_a_threshold_file(tmp_path: Path, real_cases: Path) -> None:
    # second reading: the real FireCuda 530 smart-log with 2 more media errors
    doc = load(real_cases, FIRECUDA)
    before = health_from_nvme_smart_log(doc)
    assert before.media_errors is not None and before.error_log_entries is not None
    after = health_from_nvme_smart_log(dict(doc, media_errors=before.media_errors + 2,
                                            num_err_log_entries=before.error_log_entries + 3))
    limits = health_limits(profile_limits(
        tmp_path, "        media_errors: {max_delta: 0}\n"
                  "        error_log_entries: {max_delta: 0, severity: warn}\n"))
    judgement = judge_health("start -> end", health_deltas(before, after), limits)
    failed = judgement.failed
    assert [(v.metric, v.measured) for v in failed] == [("media_errors_delta", 2)]
    assert failed[0].limit is not None and failed[0].limit.provenance.profile == "lab health"
    assert failed[0].limit.provenance.line == 8
    assert [(v.metric, v.measured) for v in judgement.warnings] == [("error_log_entries_delta", 3)]
    rows = rows_from_verdicts("/dev/nvme0n1", "health", judgement.verdicts)
    table = "\n".join(format_summary(rows))
    assert "media_errors_delta" in table and "FAIL" in table and "WARN" in table


def test_counters_beyond_64_bits_give_exact_deltas(real_cases: Path) -> None:
    doc = load(real_cases, FIRECUDA)
    before = health_from_nvme_smart_log(dict(doc, data_units_written=2**64 + 5))
    after = health_from_nvme_smart_log(dict(doc, data_units_written=str(2**64 + 12)))
    assert health_deltas(before, after)["host_written_bytes_delta"] == 7 * 512_000


def test_kelvin_smart_log_and_wctemp_give_the_margin(real_cases: Path) -> None:
    smart_log = (real_cases / FIRECUDA).read_text()
    id_ctrl = (real_cases / "nvme/nvme-cli-1.x_id-ctrl_samsung_pm983_MZ1LB960HAJQ-000FB.json"
               ).read_text()

    def run(argv: list[str]) -> tuple[int, str]:
        if argv[0] == "smartctl":
            raise FileNotFoundError("smartctl")
        return 0, smart_log if argv[1] == "smart-log" else id_ctrl

    health = query_health("/dev/nvme0n1", kind="block", transport="NVMe", run=run)
    metrics = health_metrics(health)
    assert metrics["temperature_c"] == 310 - 273  # Kelvin in the smart-log
    assert metrics["warning_temperature_c"] == 353 - 273  # wctemp 353 K
    assert metrics["temperature_margin_c"] == 80 - 37


def test_ocp_c0_nand_writes_give_the_nvme_waf(real_cases: Path) -> None:
    # the real OCP C0 log (128-bit hi/lo byte counter) with the real FireCuda smart-log: two
    # different drives' files, joined only to check the arithmetic of the NVMe WAF
    smart_log = (real_cases / FIRECUDA).read_text()
    ocp = (real_cases / "nvme/nvme-cli_ocp_smart-add-log_C0_hi_lo.json").read_text()
    answers = {"smart-log": smart_log, "ocp": ocp, "id-ctrl": "{}"}

    def run(argv: list[str]) -> tuple[int, str]:
        if argv[0] == "smartctl":
            raise FileNotFoundError("smartctl")
        return 0, answers[argv[1]]

    health = query_health("/dev/nvme0n1", kind="block", transport="NVMe", run=run)
    assert health.nand_written_bytes == 39074645999616
    assert health.host_written_bytes is not None
    metrics = health_metrics(health)
    assert metrics["waf_lifetime"] == pytest.approx(39074645999616 / health.host_written_bytes)
    # hi is the upper 64 bits
    assert nand_written_from_ocp_c0(
        {"physical_media_units_written": {"hi": 1, "lo": 5}}) == 2**64 + 5
    assert nand_written_from_ocp_c0({"Log page version": 2}) is None


@pytest.mark.parametrize("kind", ["loop", "zram", "file", "emu"])
def test_virtual_targets_have_no_health(kind: str) -> None:
    with pytest.raises(HealthUnavailable, match="has no SMART / NVMe health log"):
        query_health("/dev/x", kind=kind, transport="virtual",
                     run=lambda argv: pytest.fail("no tool may run"))


def test_no_tool_output_is_unavailable_with_the_tool_words(real_cases: Path) -> None:
    text = (real_cases / "smartctl/smartctl-7.0_windows_open_failed_exit2.json").read_text()
    with pytest.raises(HealthUnavailable, match="Open failed, Error=5"):
        query_health("/dev/sda", kind="block", transport="SATA", run=lambda argv: (2, text))


# --------------------------------------------------------------------------- threshold files


@pytest.mark.parametrize(
    ("workload", "limit", "key", "needle"),
    [
        ("seq_read_128k_qd32", "bw_mbps: {max_delta: 0}", "max_delta", "no before/after change"),
        ("health", "temperature_c: {max_delta: 5}", "max_delta", "no before/after change"),
        ("health", "media_errors: {max: 0, severity: fatal}", "severity",
         "'fatal' is not one of fail, warn"),
        ("seq_read_128k_qd32", "lat_p99_us: {max: 0}", "max", "0 must be > 0"),
    ],
)
def test_bad_health_limits_name_the_key(tmp_path: Path, workload: str, limit: str, key: str,
                                         needle: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("version: 1\nprofiles:\n  - name: p\n    match: {}\n    source: s\n"
                    f"    limits:\n      {workload}:\n        {limit}\n")
    with pytest.raises(ConfigErrors) as info:
        ThresholdSet.load([path])
    errors = info.value.errors
    assert len(errors) == 1, [str(e) for e in errors]
    assert errors[0].key is not None and errors[0].key.endswith(f".{key}")
    assert needle in str(errors[0]) and errors[0].line == 8 and errors[0].fix


def test_health_max_zero_and_max_delta_load(tmp_path: Path) -> None:
    limits = profile_limits(tmp_path, "        media_errors: {max: 0, max_delta: 0}\n")
    got = sorted((lim.metric, lim.max, lim.severity) for lim in limits)
    assert got == [("media_errors", 0, "fail"), ("media_errors_delta", 0, "fail")]


def test_seed_generic_profile_limits_health_changes_and_wake_up() -> None:
    seeds = Path(__file__).resolve().parents[2] / "thresholds"
    resolved = ThresholdSet.load([seeds]).resolve(DriveFacts(
        controller=None, nand=None, firmware="1.0", model="Some SSD", serial="S1",
        capacity_bytes=500 * 10**9, transport="NVMe", kind="block"))
    got = {(lim.workload, lim.metric): (lim.max, lim.severity)
           for lim in resolved.limits.values()
           if lim.workload in ("health", "idle_wake_read_4k_qd1")}
    assert got == {
        ("health", "media_errors_delta"): (0, "fail"),
        ("health", "error_log_entries_delta"): (0, "warn"),
        ("health", "unsafe_shutdowns_delta"): (0, "warn"),
        ("idle_wake_read_4k_qd1", "wake_penalty_us"): (100000, "fail"),
    }
