"""smartctl device types (the found case B38: a USB bridge smartctl does not know answers
"Unknown USB bridge ... Please specify device type with the -d option.", exit 1, and the drive
was stored as passed with SMART never read): the bridge types are tried and the one that works
is kept for every later call; a type given by option or inventory is passed to every call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_ssdqual.drive.device_types import DeviceTypes, parse_device_type_options
from pytest_ssdqual.drive.health_query import HealthUnavailable, query_health
from pytest_ssdqual.drive.identity import identify
from pytest_ssdqual.drive.inventory import Inventory
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.errors import ConfigError, ConfigErrors

from ..conftest import cases_dir
from .test_identity import USB_PATH, FakeSysfs

B38 = cases_dir() / "found" / "t3" / "B38"
GOOD = "smartctl-7.0_sat_samsung860evo_xall.json"
SDX = DriveSpec("/dev/sdx", "block", "/dev/sdx")  # known to the fake sysfs only


class Bridge:
    """A smartctl that reads the drive only with ``-d <works>``; otherwise B38's answer."""

    def __init__(self, real_cases: Path, works: str | None) -> None:
        self.works = works
        self.good = (real_cases / "smartctl" / GOOD).read_text(encoding="utf-8")
        self.unknown = (B38 / "smartctl-7.4_unknown_usb_bridge_exit1.json").read_text(
            encoding="utf-8")
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> tuple[int, str]:
        self.calls.append(argv)
        if argv[0] != "smartctl":
            raise FileNotFoundError(argv[0])
        given = argv[argv.index("-d") + 1] if "-d" in argv else None
        if self.works is not None and given == self.works:
            return 0, self.good
        return 1, self.unknown


@pytest.fixture
def usb_disk(tmp_path: Path) -> FakeSysfs:
    """``sdx`` behind USB in a fake sysfs tree, as B38's: model only, no serial."""
    fake = FakeSysfs(tmp_path / "sys")
    fake.disk("sdx", USB_PATH, sectors=976773168, rotational=1,
              device={"model": "HDS721050DLE630\n", "vendor": "ATA     \n"},
              extra={"dev": "240:0\n", "ro": "0\n"})
    return fake


def _smartctl(argv_list: list[list[str]]) -> list[list[str]]:
    return [a for a in argv_list if a[0] == "smartctl"]


def test_unknown_bridge_tries_the_bridge_types_and_keeps_the_one_that_works(
    usb_disk: FakeSysfs, real_cases: Path
) -> None:
    """Before: one ``smartctl -j -i``, no ``-d`` ever, serial and firmware never read."""
    run = Bridge(real_cases, "sntjmicron")
    ident = identify("/dev/sdx", kind="block", run=run, sysfs=usb_disk.root)
    assert _smartctl(run.calls) == [
        ["smartctl", "-j", "-i", "/dev/sdx"],
        ["smartctl", "-j", "-d", "sat", "-i", "/dev/sdx"],
        ["smartctl", "-j", "-d", "sntjmicron", "-i", "/dev/sdx"],
    ]
    assert (ident.model, ident.serial, ident.firmware) == (
        "Samsung SSD 860 EVO 500GB", "S3YZNB0KB00864E", "RVT02B6Q")
    assert ident.transport == "USB"  # a bridge stays USB
    assert ident.smartctl_device_type == "sntjmicron"
    assert ident.sources[:2] == ("sysfs", "smartctl 7.0 (-d sntjmicron, found by trying sat, "
                                 "sntjmicron: smartctl asked for a device type)")
    # the health read uses the type at once: one call
    run.calls.clear()
    health = query_health("/dev/sdx", kind="block", transport=ident.transport, run=run,
                          smartctl_device_type=ident.smartctl_device_type)
    assert run.calls == [["smartctl", "-j", "-d", "sntjmicron", "-a", "/dev/sdx"]]
    assert health.source == "smartctl 7.0"


def test_no_bridge_type_reads_the_drive_says_what_was_tried(usb_disk: FakeSysfs,
                                                            real_cases: Path) -> None:
    run = Bridge(real_cases, None)
    ident = identify("/dev/sdx", kind="block", run=run, sysfs=usb_disk.root)
    assert [a[2:4] for a in _smartctl(run.calls)[1:]] == [
        ["-d", "sat"], ["-d", "sntjmicron"], ["-d", "sntasmedia"], ["-d", "sntrealtek"]]
    assert ident.smartctl_device_type == "" and ident.serial == ""
    assert ident.sources[1] == (
        "smartctl 7.4 (no data, exit 1: /dev/sdf: Unknown USB bridge [0x21c4:0xb06a (0x214)] | "
        "Please specify device type with the -d option.); tried -d sat, sntjmicron, sntasmedia, "
        "sntrealtek: none read the drive (give its type: --smartctl-device-type=/dev/sdx=TYPE, "
        "or smartctl_device_type in the inventory)")
    with pytest.raises(HealthUnavailable, match=r"Unknown USB bridge .*; tried -d sat, "
                       r"sntjmicron, sntasmedia, sntrealtek: none read the drive") as info:
        query_health("/dev/sdx", kind="block", transport="USB", run=run)
    assert info.value.applicable


def _open(usb_disk: FakeSysfs, run: Bridge, types: DeviceTypes) -> DriveTarget:
    (usb_disk.root.parent / "mountinfo").write_text("")
    (usb_disk.root.parent / "swaps").write_text("Filename\tType\tSize\tUsed\tPriority\n")
    return DriveTarget.open(
        SDX, confirmed_serials=(), file_size_bytes=0,
        identity_fn=lambda path, **kw: identify(path, run=run, **kw),
        sysfs=usb_disk.root, mountinfo=usb_disk.root.parent / "mountinfo",
        swaps=usb_disk.root.parent / "swaps", root_dev=(254, 1), smartctl_types=types)


def test_a_type_from_the_option_is_passed_to_every_call(usb_disk: FakeSysfs,
                                                        real_cases: Path) -> None:
    run = Bridge(real_cases, "sat,12")  # a type the probe never tries
    target = _open(usb_disk, run, DeviceTypes(parse_device_type_options(
        ["/dev/sdx=sat,12"], [SDX])))
    assert _smartctl(run.calls) == [["smartctl", "-j", "-d", "sat,12", "-i", "/dev/sdx"]]
    assert target.identity.serial == "S3YZNB0KB00864E"
    assert target.identity.sources[1] == "smartctl 7.0 (-d sat,12 from --smartctl-device-type)"
    run.calls.clear()
    target.recheck_identity()  # the same type again: no probing, same serial
    assert _smartctl(run.calls) == [["smartctl", "-j", "-d", "sat,12", "-i", "/dev/sdx"]]


def test_a_type_from_the_inventory_reidentifies_the_drive(usb_disk: FakeSysfs,
                                                          real_cases: Path,
                                                          tmp_path: Path) -> None:
    inv = tmp_path / "inventory.yaml"
    inv.write_text('version: 1\ndrives:\n  - match: {model: "HDS721050DLE630"}\n'
                   "    smartctl_device_type: sat,12\n")
    run = Bridge(real_cases, "sat,12")
    target = _open(usb_disk, run, DeviceTypes(inventory=Inventory.load(inv)))
    assert _smartctl(run.calls)[-1] == ["smartctl", "-j", "-d", "sat,12", "-i", "/dev/sdx"]
    assert target.identity.smartctl_device_type == "sat,12"
    assert target.identity.sources[1] == f"smartctl 7.0 (-d sat,12 from {inv}:3)"
    # the serial now read: the refusal is about confirmation, no longer "reports no serial"
    assert any("S3YZNB0KB00864E" in r for r in target.write_refusals)
    assert not any("reports no serial" in r for r in target.write_refusals)


def test_bad_device_types_are_config_errors(tmp_path: Path) -> None:
    specs = [SDX]
    with pytest.raises(ConfigError, match=r"'-d sat' is not a smartctl device type") as info:
        parse_device_type_options(["-d sat"], specs)
    assert info.value.key == "--smartctl-device-type"
    with pytest.raises(ConfigError, match=r"names /dev/sdy, which is no --drive of this run"):
        parse_device_type_options(["/dev/sdy=sat"], specs)
    assert parse_device_type_options(["sat", f"{os.sep}dev/sdx=sntjmicron"], specs) == (
        ("", "sat"), ("/dev/sdx", "sntjmicron"))
    inv = tmp_path / "inventory.yaml"
    inv.write_text('version: 1\ndrives:\n  - match: {model: "X*"}\n'
                   '    smartctl_device_type: "sat 12"\n')
    with pytest.raises(ConfigErrors) as errors:
        Inventory.load(inv)
    (err,) = errors.value.errors
    assert (err.line, err.key, err.message) == (
        4, "drives[0].smartctl_device_type", "'sat 12' is not a smartctl device type")
