"""Plug specs (pytest_ssdqual.plugs.spec) and the inventory's ``plugs:`` key."""

from __future__ import annotations

import dataclasses

import pytest

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.inventory import Inventory
from pytest_ssdqual.errors import ConfigError, ConfigErrors
from pytest_ssdqual.plugs.spec import parse_plug_spec


def test_a_command_template_is_split_like_a_shell_and_filled_per_call() -> None:
    spec = parse_plug_spec("cmd:pdu --host 'rack 3' --outlet 7 {action}", "power_switch",
                           where="--power-switch")
    assert (spec.form, spec.argv) == ("cmd", ("pdu", "--host", "rack 3", "--outlet", "7",
                                              "{action}"))
    assert spec.command(action="off") == ["pdu", "--host", "rack 3", "--outlet", "7", "off"]


def test_a_placeholder_the_call_does_not_fill_names_the_ones_it_does() -> None:
    spec = parse_plug_spec("cmd:pdu {outlet} {action}", "power_switch", where="lab.yaml:4")
    with pytest.raises(ConfigError) as error:
        spec.command(action="on", serial="S1")
    text = str(error.value)
    assert "lab.yaml:4" in text and "'outlet'" in text and "{action}, {serial}" in text


@pytest.mark.parametrize(("text", "kind", "said"), [
    ("csv:/tmp/m.csv", "power_switch", "'csv' is not a power switch plug"),
    ("ipmi:host", "power_switch", "unknown plug form 'ipmi'"),
    ("cmd:", "power_meter", "cmd: needs a value"),
    ("nvme:/dev/nvme0", "firmware_updater", "'nvme' takes no value"),
    ("cmd:pdu 'unclosed", "power_switch", "cannot split the command"),
])
def test_bad_specs_say_what_is_wrong_and_the_forms_the_kind_takes(text: str, kind: str,
                                                                   said: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_plug_spec(text, kind, where="--x")
    assert said in str(error.value) and "--x" in str(error.value)


def test_forms_with_a_target_keep_it() -> None:
    assert parse_plug_spec("quarch:USB::QTL1999-02-001", "power_meter", where="-").target == (
        "USB::QTL1999-02-001")
    assert parse_plug_spec(" NVMe ", "firmware_updater", where="-").form == "nvme"


def _identity(serial: str, model: str) -> DriveIdentity:
    return DriveIdentity(model=model, serial=serial, firmware="1", capacity_bytes=10**9,
                         logical_sector_bytes=512, physical_sector_bytes=4096, transport="SATA",
                         rotational=False)


def test_the_inventory_names_a_drives_plugs_serial_entries_first(tmp_path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text(
        "version: 1\ndrives:\n"
        "  - match: {model: 'Lab*'}\n    plugs: {power_switch: 'cmd:pdu all {action}'}\n"
        "  - match: {serial: S1}\n    plugs: {power_switch: 'cmd:pdu 1 {action}',"
        " power_meter: 'csv:/m.csv'}\n")
    inventory = Inventory.load(path)
    assert inventory.plug(_identity("S1", "Lab 1"), "power_switch") == (
        "cmd:pdu 1 {action}", f"{path}:5")
    assert inventory.plug(_identity("S2", "Lab 2"), "power_switch") == (
        "cmd:pdu all {action}", f"{path}:3")
    assert inventory.plug(_identity("S2", "Lab 2"), "power_meter") is None


def test_an_unknown_plug_kind_in_the_inventory_is_a_schema_error(tmp_path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text("version: 1\ndrives:\n  - match: {serial: S1}\n"
                    "    plugs: {power_swich: 'emu'}\n")
    with pytest.raises(ConfigErrors) as error:
        Inventory.load(path)
    assert "power_swich" in str(error.value)


def test_the_option_beats_the_inventory_and_an_emulated_drive_has_its_own(tmp_path) -> None:
    from pytest_ssdqual.plugs.select import missing_plug_reason, plug_spec_for

    path = tmp_path / "lab.yaml"
    path.write_text("version: 1\ndrives:\n  - match: {serial: S1}\n"
                    "    plugs: {power_meter: 'csv:/m.csv'}\n")
    inventory = Inventory.load(path)
    real = _identity("S1", "Lab 1")
    assert plug_spec_for("power_meter", real, option=None, inventory=inventory).target == "/m.csv"
    chosen = plug_spec_for("power_meter", real, option="csv:/o.csv", inventory=inventory)
    assert (chosen.target, chosen.where) == ("/o.csv", "--power-meter")
    assert plug_spec_for("power_switch", real, option=None, inventory=inventory) is None
    assert "--power-switch=SPEC" in missing_plug_reason("power_switch", real)
    emulated = dataclasses.replace(real, kind="emu")
    assert plug_spec_for("power_switch", emulated, option=None, inventory=None).form == "emu"
    with pytest.raises(ConfigError, match="is not emulated"):
        plug_spec_for("power_switch", real, option="emu", inventory=None)
