"""Where a drive's temperature comes from: sysfs hwmon, nvme-cli, smartctl; none on a loop
device. The tools are a recording runner (no drive is touched)."""

from __future__ import annotations

import json
from pathlib import Path

from pytest_ssdqual.drive.temperature_source import TemperatureSource, block_temperature_source


class Runner:
    """Answers argv[0] + argv[1] from a table; records every call."""

    def __init__(self, answers: dict[str, dict[str, object]]) -> None:
        self.answers, self.calls = answers, []  # type: ignore[var-annotated]

    def __call__(self, argv: list[str]) -> tuple[int, str]:
        self.calls.append(argv)
        key = " ".join(argv[:2]) if argv[0] == "nvme" else argv[0]
        doc = self.answers.get(key)
        return (0, json.dumps(doc)) if doc is not None else (1, "")


def test_a_loop_device_zram_and_a_file_have_no_sensor() -> None:
    run = Runner({})
    for kind in ("loop", "zram", "file"):
        why = block_temperature_source("/dev/x", kind=kind, transport="", run=run)
        assert isinstance(why, str) and "no temperature sensor" in why
    assert run.calls == []


def test_sata_hwmon_gives_reading_and_warning_from_temp1_max(tmp_path: Path) -> None:
    hw = tmp_path / "block/sda/device/hwmon/hwmon3"
    hw.mkdir(parents=True)
    (hw / "temp1_input").write_text("41000\n")
    (hw / "temp1_max").write_text("70000\n")
    run = Runner({})
    src = block_temperature_source("/dev/sda", kind="block", transport="SATA", run=run,
                                   sysfs=tmp_path)
    assert isinstance(src, TemperatureSource)
    assert src.read() == 41.0 and src.warning_c == 70.0 and run.calls == []
    (hw / "temp1_input").write_text("43500\n")
    assert src.read() == 43.5
    assert src.where == f"sysfs {hw}/temp1_input"


def test_nvme_hwmon_takes_wctemp_from_id_ctrl(tmp_path: Path) -> None:
    hw = tmp_path / "block/nvme0n1/device/hwmon2"
    hw.mkdir(parents=True)
    (hw / "temp1_input").write_text("38850\n")
    run = Runner({"nvme id-ctrl": {"wctemp": 343, "cctemp": 358}})
    src = block_temperature_source("/dev/nvme0n1", kind="block", transport="NVMe", run=run,
                                   sysfs=tmp_path)
    assert isinstance(src, TemperatureSource)
    assert (src.read(), src.warning_c) == (38.85, 70.0)
    assert run.calls == [["nvme", "id-ctrl", "-o", "json", "/dev/nvme0n1"]]


def test_nvme_smart_log_without_hwmon(tmp_path: Path) -> None:
    run = Runner({"nvme smart-log": {"temperature": 318}, "nvme id-ctrl": {"wctemp": 0}})
    src = block_temperature_source("/dev/nvme0n1", kind="block", transport="NVMe", run=run,
                                   sysfs=tmp_path)
    assert isinstance(src, TemperatureSource)
    assert src.read() == 45.0 and src.warning_c is None  # wctemp 0: not reported
    assert ["nvme", "smart-log", "-o", "json", "/dev/nvme0n1"] in run.calls


def test_smartctl_temperature_and_op_limit_then_none(tmp_path: Path) -> None:
    run = Runner({"smartctl": {"temperature": {"current": 33, "op_limit_max": 60}}})
    src = block_temperature_source("/dev/sdb", kind="block", transport="SATA", run=run,
                                   sysfs=tmp_path)
    assert isinstance(src, TemperatureSource)
    assert (src.read(), src.warning_c) == (33.0, 60.0)
    assert run.calls[0] == ["smartctl", "-j", "-A", "/dev/sdb"]
    why = block_temperature_source("/dev/sdb", kind="block", transport="SATA",
                                   run=Runner({"smartctl": {"temperature": {"current": 0}}}),
                                   sysfs=tmp_path)
    assert isinstance(why, str) and "no temperature reading" in why
