"""Tests of ``pytest_ssdqual.drive.identity`` on real smartctl / nvme-cli outputs, fake and real
sysfs.

Every file in the real cases' ``smartctl/`` and ``nvme/`` folders goes through the parsers, with
the exact values read from the file asserted. sysfs is tested on fake trees laid out as the kernel
lays them out (ATA, NVMe, USB, SAS, loop) and on the real ``/sys`` with a real loop device.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.drive import tool_runner
from pytest_ssdqual.drive.identity import DriveIdentity, identify
from pytest_ssdqual.drive.nvme_identity import identity_from_nvme_id_ctrl
from pytest_ssdqual.drive.smartctl_identity import identity_from_smartctl
from pytest_ssdqual.drive.sysfs_identity import identity_from_sysfs
from pytest_ssdqual.drive.tool_values import coerce_int
from pytest_ssdqual.errors import DeviceError

KERNEL = os.uname().release

# --------------------------------------------------------------------------- real smartctl files

#: Expected parse of every real smartctl file (values as read from the files; serials that the
#: upstream projects redacted or anonymised are returned as given).
SMARTCTL_EXPECTED: dict[str, dict[str, object]] = {
    "smartctl-7.0_nvme_corsair_force_mp510_anonymized.json": {
        "source": "smartctl 7.0",
        "model": "Force MP510",
        "serial": "yes",  # anonymised upstream (scrutiny)
        "firmware": "ECFM12.3",
        "capacity_bytes": 480103981056,
        "logical_sector_bytes": 512,
        "transport": "NVMe",
        "rotational": False,
    },
    "smartctl-7.0_sat_samsung860evo_xall.json": {
        "source": "smartctl 7.0",
        "model": "Samsung SSD 860 EVO 500GB",
        "serial": "S3YZNB0KB00864E",
        "firmware": "RVT02B6Q",
        "capacity_bytes": 500107862016,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 512,
        "transport": "SATA",
        "rotational": False,
    },
    "smartctl-7.1_nvme_intel660p_SSDPEKNW010T8.json": {
        "source": "smartctl 7.1",
        "model": "INTEL SSDPEKNW010T8",
        "serial": "BTNH93710FS91P0B",
        "firmware": "002C",
        "capacity_bytes": 1024209543168,
        "logical_sector_bytes": 512,
        "transport": "NVMe",
        "rotational": False,
    },
    "smartctl-7.1_sat+megaraid_wd4000fyyx_exit4_message.json": {
        "source": "smartctl 7.1",
        "model": "WD4000FYYX",
        "serial": "XXXXXXXXXXXX",
        "firmware": "00.0D1K4",
        "capacity_bytes": 4000787030016,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 512,
        "transport": "SATA",  # device.type 'sat+megaraid,0', protocol ATA
        "rotational": True,  # 7200 rpm
    },
    "smartctl-7.1_sat_intel_s4510_redacted.json": {
        "source": "smartctl 7.1",
        "model": "INTEL SSDSC2KB480G8",
        "serial": "REDACTED",
        "firmware": "REDACTED",
        "capacity_bytes": 480103981056,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 4096,
        "transport": "SATA",
        "rotational": False,
    },
    # smartctl run on the controller (/dev/nvme6): no namespace list, no block sizes; capacity is
    # the controller's nvme_total_capacity.
    "smartctl-7.3_nvme_micron7450_redacted.json": {
        "source": "smartctl 7.3",
        "model": "Micron_7450_MTFDKCB3T8TFR",
        "serial": "REDACTED",
        "firmware": "REDACTED",
        "capacity_bytes": 3840755982336,
        "transport": "NVMe",
        "rotational": False,
    },
    "smartctl-7.3_nvme_samsung_pm1725a_exit8_critwarn16_redacted.json": {
        "source": "smartctl 7.3",
        "model": "SAMSUNG MZWLL3T2HAJQ-00005",
        "serial": "REDACTED",
        "firmware": "REDACTED",
        "capacity_bytes": 3200631791616,
        "transport": "NVMe",
        "rotational": False,
    },
    "smartctl-7.3_sat_kingston_a400_exit4_redacted.json": {
        "source": "smartctl 7.3",
        "model": "KINGSTON SA400M8120G",
        "serial": "REDACTED",
        "firmware": "REDACTED",
        "capacity_bytes": 120034123776,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 512,
        "transport": "SATA",
        "rotational": False,
    },
    "smartctl-7.4_info_jmb39x_wd_red_exit4.json": {
        "source": "smartctl 7.4",
        "model": "WDC WD40EFRX-68N32N0",
        "serial": "WD-WCC7K0000000",
        "firmware": "82.00A82",
        "capacity_bytes": 4000787030016,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 4096,
        "transport": "SATA",  # device.type 'jmb39x-q,0', protocol ATA
        "rotational": True,  # 5400 rpm
    },
    "smartctl-7.4_sat_crucial_m4_xall_truenas_farm_unsupported.json": {
        "source": "smartctl 7.4",
        "model": "MTFDDAK128MAM-1J1",
        "serial": "123009116906",
        "firmware": "0809",
        "capacity_bytes": 128035676160,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 512,
        "transport": "SATA",
        "rotational": False,
    },
}

#: Files in which smartctl read no device data: the DeviceError must quote these words.
SMARTCTL_NO_DATA: dict[str, list[str]] = {
    "smartctl-7.0_windows_open_failed_exit2.json": [
        "/dev/sda",
        "exit status 2",
        "device open failed",
        r"\\.\PhysicalDrive0: Open failed, Error=5",
    ],
}


def load_json(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def test_every_real_smartctl_file_is_covered(real_cases: Path) -> None:
    on_disk = {p.name for p in (real_cases / "smartctl").glob("*.json")}
    assert on_disk, f"no smartctl files in {real_cases / 'smartctl'}"
    assert on_disk == set(SMARTCTL_EXPECTED) | set(SMARTCTL_NO_DATA)


@pytest.mark.parametrize("name", sorted(SMARTCTL_EXPECTED))
def test_smartctl_real_file(real_cases: Path, name: str) -> None:
    assert (
        identity_from_smartctl(load_json(real_cases / "smartctl" / name))
        == (SMARTCTL_EXPECTED[name])
    )


@pytest.mark.parametrize("name", sorted(SMARTCTL_NO_DATA))
def test_smartctl_real_file_without_data(real_cases: Path, name: str) -> None:
    with pytest.raises(DeviceError) as info:
        identity_from_smartctl(load_json(real_cases / "smartctl" / name))
    for words in SMARTCTL_NO_DATA[name]:
        assert words in str(info.value)


@pytest.mark.parametrize(
    ("name", "status"),
    [
        ("smartctl-7.1_sat+megaraid_wd4000fyyx_exit4_message.json", 4),
        ("smartctl-7.3_sat_kingston_a400_exit4_redacted.json", 4),
        ("smartctl-7.4_info_jmb39x_wd_red_exit4.json", 4),
        ("smartctl-7.3_nvme_samsung_pm1725a_exit8_critwarn16_redacted.json", 8),
    ],
)
def test_smartctl_exit_bits_2_to_7_keep_the_data(real_cases: Path, name: str, status: int) -> None:
    doc = load_json(real_cases / "smartctl" / name)
    meta = doc["smartctl"]
    assert isinstance(meta, dict) and meta["exit_status"] == status  # the file is what we think
    assert identity_from_smartctl(doc)["model"] == SMARTCTL_EXPECTED[name]["model"]


def test_smartctl_exit_bit0_from_real_doc_variant(real_cases: Path) -> None:
    """Bit 0 (command line did not parse) also means no data, whatever else the doc holds."""
    doc = load_json(real_cases / "smartctl" / "smartctl-7.4_info_jmb39x_wd_red_exit4.json")
    meta = doc["smartctl"]
    assert isinstance(meta, dict)
    meta["exit_status"] = 1 | 4
    with pytest.raises(DeviceError, match="command line did not parse") as info:
        identity_from_smartctl(doc)
    assert "Read Device Statistics page 0x00 failed: Invalid argument" in str(info.value)
    assert "/dev/sda" in str(info.value)


def test_smartctl_sas_fields() -> None:
    """SAS drives: smartctl >= 7.3 prints scsi_vendor / scsi_product / scsi_revision (synthetic
    document: no real SAS smartctl file is in the cases)."""
    doc: dict[str, object] = {
        "smartctl": {"version": [7, 3], "exit_status": 0},
        "device": {"name": "/dev/sdc", "type": "scsi", "protocol": "SCSI"},
        "scsi_vendor": "SEAGATE",
        "scsi_product": "ST1200MM0009",
        "scsi_revision": "N003",
        "serial_number": "W3E0ABCD",
        "user_capacity": {"blocks": 2344225968, "bytes": 1200243695616},
        "logical_block_size": 512,
        "rotation_rate": 10500,
    }
    assert identity_from_smartctl(doc) == {
        "source": "smartctl 7.3",
        "model": "SEAGATE ST1200MM0009",
        "vendor": "SEAGATE",
        "serial": "W3E0ABCD",
        "firmware": "N003",
        "capacity_bytes": 1200243695616,
        "logical_sector_bytes": 512,
        "transport": "SAS",
        "rotational": True,
    }


def test_not_smartctl_json_is_a_device_error() -> None:
    with pytest.raises(DeviceError, match="not smartctl JSON"):
        identity_from_smartctl({"Devices": []})


# --------------------------------------------------------------------------- real nvme-cli files

PM983 = "nvme-cli-1.x_id-ctrl_samsung_pm983_MZ1LB960HAJQ-000FB.json"


def nvme_files(real_cases: Path) -> list[Path]:
    files = sorted((real_cases / "nvme").rglob("*.json"))
    assert files, f"no nvme-cli files in {real_cases / 'nvme'}"
    return files


def test_nvme_id_ctrl_real_file(real_cases: Path) -> None:
    doc = load_json(real_cases / "nvme" / PM983)
    assert doc["sn"] == "S43ANA0M405593      "  # the raw field really is space-padded
    assert identity_from_nvme_id_ctrl(doc) == {
        "source": "nvme-cli",
        "transport": "NVMe",
        "rotational": False,
        "model": "Unknown MZ1LB960HAJQ-000FB",
        "serial": "S43ANA0M405593",
        "firmware": "EDA76F2Q",
        "capacity_bytes": 900185481216,
        "warning_temp_c": 80,  # wctemp 353 K
        "critical_temp_c": 92,  # cctemp 365 K
    }


def test_every_real_nvme_file_is_parsed_or_refused(real_cases: Path) -> None:
    """id-ctrl documents parse; smart-log, list and OCP logs are refused as not id-ctrl."""
    parsed = []
    for path in nvme_files(real_cases):
        doc = load_json(path)
        if "id-ctrl" in path.name:
            found = identity_from_nvme_id_ctrl(doc)
            assert found["model"] and found["serial"] and found["firmware"]
            parsed.append(path.name)
        else:
            with pytest.raises(DeviceError, match="not nvme id-ctrl"):
                identity_from_nvme_id_ctrl(doc)
    assert parsed == [PM983]


@pytest.mark.parametrize(
    "tnvmcap",
    [
        "900,185,481,216",  # nvme-cli 2.3 (issue #1827)
        "900185481216",  # quoted string
        900185481216.0,  # long double printing of older nvme-cli
        " 900185481216 ",
    ],
)
def test_nvme_id_ctrl_tnvmcap_spellings(real_cases: Path, tnvmcap: object) -> None:
    doc = load_json(real_cases / "nvme" / PM983)
    doc["tnvmcap"] = tnvmcap
    assert identity_from_nvme_id_ctrl(doc)["capacity_bytes"] == 900185481216


def test_nvme_id_ctrl_zero_fields_are_not_reported(real_cases: Path) -> None:
    doc = load_json(real_cases / "nvme" / PM983)
    doc.update(tnvmcap=0, wctemp=0, cctemp=0)
    found = identity_from_nvme_id_ctrl(doc)
    assert "capacity_bytes" not in found
    assert "warning_temp_c" not in found and "critical_temp_c" not in found


def test_nvme_id_ctrl_locale_comma_is_an_error(real_cases: Path) -> None:
    doc = load_json(real_cases / "nvme" / PM983)
    doc["tnvmcap"] = "0,000000"  # nvme-cli under a decimal-comma locale (issue #354)
    with pytest.raises(ValueError, match=r"tnvmcap.*LC_ALL=C"):
        identity_from_nvme_id_ctrl(doc)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (42, 42),
        (42.0, 42),
        ("42", 42),
        ("+42", 42),
        ("-7", -7),
        ("1,000,204,886,016", 1000204886016),
        ("3,200,631,791,616", 3200631791616),
        ("1e3", 1000),
        ("12.0", 12),
    ],
)
def test_coerce_int_accepts(value: object, expected: int) -> None:
    assert coerce_int(value, field="x") == expected


@pytest.mark.parametrize(
    "value",
    [
        True,
        None,
        1.5,
        float("nan"),
        float("inf"),
        "",
        "abc",
        "1,00",
        "12,3456",
        "1_000",
        "0x10",
        [1],
        "1.5",
    ],
)
def test_coerce_int_rejects(value: object) -> None:
    with pytest.raises(ValueError, match="^tnvmcap: expected an integer"):
        coerce_int(value, field="tnvmcap")


# --------------------------------------------------------------------------- fake sysfs


def ata_string(text: str, length: int) -> bytes:
    """ATA IDENTIFY string: space-padded, two characters per word, high byte first."""
    raw = text.ljust(length).encode("ascii")
    return b"".join(raw[i + 1 : i + 2] + raw[i : i + 1] for i in range(0, length, 2))


def vpd_pg89(model: str, serial: str, firmware: str, rpm: int) -> bytes:
    """SCSI VPD page 89h (ATA Information, SAT) wrapping an ATA IDENTIFY DEVICE block."""
    ident = bytearray(512)
    ident[20:40] = ata_string(serial, 20)  # words 10-19
    ident[46:54] = ata_string(firmware, 8)  # words 23-26
    ident[54:94] = ata_string(model, 40)  # words 27-46
    ident[434:436] = rpm.to_bytes(2, "little")  # word 217
    header = bytes([0, 0x89, 0x02, 0x38]) + bytes(4)
    sat = b"linux   " + b"libata".ljust(16) + b"3.00"
    return header + sat + bytes(20) + bytes([0xEC]) + bytes(3) + bytes(ident)


def vpd_pg80(serial: str) -> bytes:
    return bytes([0, 0x80, 0, len(serial)]) + serial.encode("ascii")


class FakeSysfs:
    """A fake ``/sys`` laid out like the kernel's: ``block/<dev>`` links into ``devices/``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def disk(
        self,
        name: str,
        devpath: str,
        *,
        sectors: int,
        logical: int = 512,
        physical: int = 512,
        rotational: int = 0,
        device_dir: str | None = "../../..",
        device: dict[str, str | bytes] | None = None,
        extra: dict[str, str] | None = None,
    ) -> Path:
        """Create ``devices/<devpath>/block/<name>`` (or ``devices/<devpath>/<name>``)."""
        real = self.root / "devices" / devpath / name
        (real / "queue").mkdir(parents=True)
        (real / "size").write_text(f"{sectors}\n")
        (real / "queue" / "logical_block_size").write_text(f"{logical}\n")
        (real / "queue" / "physical_block_size").write_text(f"{physical}\n")
        (real / "queue" / "rotational").write_text(f"{rotational}\n")
        for rel, content in (extra or {}).items():
            (real / rel).parent.mkdir(parents=True, exist_ok=True)
            (real / rel).write_text(content)
        if device is not None and device_dir is not None:
            target = (real / device_dir).resolve()
            target.mkdir(parents=True, exist_ok=True)
            (real / "device").symlink_to(device_dir)
            for file, data in device.items():
                if isinstance(data, bytes):
                    (target / file).write_bytes(data)
                else:
                    (target / file).write_text(data)
        link = self.root / "block" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(real, link.parent))
        return real

    def partition(self, disk_real: Path, name: str) -> None:
        part = disk_real / name
        part.mkdir()
        (part / "partition").write_text("1\n")
        link = self.root / "class" / "block" / name
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(os.path.relpath(part, link.parent))


SATA_PATH = "pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block"
NVME_PATH = "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0"
USB_PATH = "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block"
SAS_PATH = (
    "pci0000:00/0000:00:01.0/0000:01:00.0/host0/port-0:0/end_device-0:0/target0:0:0/0:0:0:0/block"  # noqa: E501
)


@pytest.fixture
def fake_sys(tmp_path: Path) -> FakeSysfs:
    return FakeSysfs(tmp_path / "sys")


def add_860evo(fake_sys: FakeSysfs, *, pg89: bool = True) -> None:
    """The Samsung 860 EVO of the real smartctl case, as libata shows it in sysfs."""
    device: dict[str, str | bytes] = {
        "model": "Samsung SSD 860 \n",  # SCSI INQUIRY product id: 16 characters
        "vendor": "ATA     \n",
        "rev": "2B6Q\n",  # last 4 of the 8 firmware characters
        "vpd_pg80": vpd_pg80("S3YZNB0KB00864E     "),
    }
    if pg89:
        device["vpd_pg89"] = vpd_pg89("Samsung SSD 860 EVO 500GB", "S3YZNB0KB00864E", "RVT02B6Q", 1)
    fake_sys.disk("sda", SATA_PATH, sectors=976773168, device=device)


def test_sysfs_sata_reads_full_names_from_vpd_pages(fake_sys: FakeSysfs) -> None:
    add_860evo(fake_sys)
    assert identity_from_sysfs("sda", sysfs=fake_sys.root) == {
        "source": "sysfs",
        "capacity_bytes": 500107862016,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 512,
        "rotational": False,
        "model": "Samsung SSD 860 EVO 500GB",
        "serial": "S3YZNB0KB00864E",
        "firmware": "RVT02B6Q",
        "transport": "SATA",
    }


def test_sysfs_sata_without_vpd89_keeps_inquiry_fields(fake_sys: FakeSysfs) -> None:
    add_860evo(fake_sys, pg89=False)
    found = identity_from_sysfs("/dev/sda", sysfs=fake_sys.root)
    assert found["model"] == "Samsung SSD 860"  # truncated by SCSI INQUIRY
    assert found["firmware"] == "2B6Q"
    assert found["serial"] == "S3YZNB0KB00864E"  # from VPD page 80h
    assert "vendor" not in found  # 'ATA' is libata's, not the drive's


def test_sysfs_nvme(fake_sys: FakeSysfs) -> None:
    fake_sys.disk(
        "nvme0n1",
        NVME_PATH,
        sectors=1875385008,
        device_dir="..",
        device={
            "model": "SAMSUNG MZ1LB960HAJQ-000FB              \n",
            "serial": "S43ANA0M405593      \n",
            "firmware_rev": "EDA76F2Q\n",
        },
    )
    assert identity_from_sysfs("nvme0n1", sysfs=fake_sys.root) == {
        "source": "sysfs",
        "capacity_bytes": 960197124096,
        "logical_sector_bytes": 512,
        "physical_sector_bytes": 512,
        "rotational": False,
        "model": "SAMSUNG MZ1LB960HAJQ-000FB",
        "serial": "S43ANA0M405593",
        "firmware": "EDA76F2Q",
        "transport": "NVMe",
    }


def test_sysfs_usb_and_sas_transports(fake_sys: FakeSysfs) -> None:
    fake_sys.disk(
        "sdb", USB_PATH, sectors=1000, rotational=1, device={"model": "ASM1153E", "vendor": "ASMT"}
    )
    fake_sys.disk(
        "sdc",
        SAS_PATH,
        sectors=2344225968,
        rotational=1,
        device={"model": "ST1200MM0009", "vendor": "SEAGATE ", "rev": "N003"},
    )
    usb = identity_from_sysfs("sdb", sysfs=fake_sys.root)
    assert (usb["transport"], usb["vendor"], usb["rotational"]) == ("USB", "ASMT", True)
    sas = identity_from_sysfs("sdc", sysfs=fake_sys.root)
    assert (sas["transport"], sas["vendor"], sas["firmware"]) == ("SAS", "SEAGATE", "N003")


def test_sysfs_missing_device_and_partition(fake_sys: FakeSysfs) -> None:
    add_860evo(fake_sys)
    fake_sys.partition(fake_sys.root / "devices" / SATA_PATH / "sda", "sda1")
    with pytest.raises(DeviceError, match=r"sda1 is a partition of sda: give the whole drive"):
        identity_from_sysfs("sda1", sysfs=fake_sys.root)
    with pytest.raises(DeviceError, match="no block device 'sdz'"):
        identity_from_sysfs("sdz", sysfs=fake_sys.root)


def add_loop(
    fake_sys: FakeSysfs, name: str = "loop3", backing: str | None = "/srv/img.bin"
) -> None:
    extra = {"loop/backing_file": backing + "\n"} if backing is not None else {}
    fake_sys.disk(name, "virtual/block", sectors=131072, rotational=1, device_dir=None, extra=extra)


def test_identify_loop_on_fake_sysfs(fake_sys: FakeSysfs) -> None:
    add_loop(fake_sys)
    ident = identify("loop3", kind="loop", sysfs=fake_sys.root)
    assert ident == DriveIdentity(
        model="Linux loop device",
        serial="/srv/img.bin",
        firmware=KERNEL,
        capacity_bytes=67108864,
        logical_sector_bytes=512,
        physical_sector_bytes=512,
        transport="virtual",
        rotational=False,
        vendor="Linux",
        kind="loop",
        sources=("sysfs",),
    )
    # Given as a plain block device, a loop device still gets its loop identity.
    assert identify("loop3", kind="block", sysfs=fake_sys.root) == ident
    assert ident.label() == f"Linux loop device / fw {KERNEL} / S/N /srv/img.bin"


def test_identify_unbound_loop_is_a_device_error(fake_sys: FakeSysfs) -> None:
    add_loop(fake_sys, "loop5", backing=None)
    with pytest.raises(DeviceError, match="loop5 has no backing file"):
        identify("loop5", kind="loop", sysfs=fake_sys.root)


def test_identify_zram_on_fake_sysfs(fake_sys: FakeSysfs) -> None:
    fake_sys.disk(
        "zram0", "virtual/block", sectors=2097152, logical=4096, physical=4096, device_dir=None
    )
    ident = identify("zram0", kind="zram", sysfs=fake_sys.root)
    assert (ident.model, ident.serial, ident.capacity_bytes) == (
        "Linux zram device",
        "zram0",
        2**30,
    )
    assert (ident.logical_sector_bytes, ident.transport, ident.kind) == (4096, "virtual", "zram")


def test_identify_wrong_kind_for_device(fake_sys: FakeSysfs) -> None:
    add_860evo(fake_sys)
    with pytest.raises(DeviceError, match="is not a loop device"):
        identify("sda", kind="loop", sysfs=fake_sys.root)
    with pytest.raises(DeviceError, match="unknown drive kind 'tape'"):
        identify("sda", kind="tape", sysfs=fake_sys.root)


def test_identify_file(tmp_path: Path) -> None:
    scratch = tmp_path / "scratch.bin"
    scratch.write_bytes(b"\0" * 1048576)
    ident = identify(str(scratch), kind="file")
    assert ident.model == "Scratch file"
    assert ident.serial == str(scratch.resolve())
    assert ident.capacity_bytes == 1048576
    assert ident.logical_sector_bytes == 512
    assert ident.physical_sector_bytes == os.stat(scratch).st_blksize
    assert (ident.firmware, ident.transport, ident.kind) == (KERNEL, "virtual", "file")
    with pytest.raises(DeviceError, match="No such file"):
        identify(str(tmp_path / "missing.bin"), kind="file")


# --------------------------------------------------------------------------- identify + tools


class FakeRun:
    """A ``run`` callable answering from real files; records every argv."""

    def __init__(self, answers: dict[str, tuple[int, str] | type[BaseException]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, argv: list[str]) -> tuple[int, str]:
        self.calls.append(argv)
        answer = self.answers.get(argv[0], FileNotFoundError)
        if isinstance(answer, type):
            raise answer(argv[0])
        return answer


def real_text(real_cases: Path, folder: str, name: str) -> str:
    return (real_cases / folder / name).read_text(encoding="utf-8")


def test_identify_sata_with_smartctl(fake_sys: FakeSysfs, real_cases: Path) -> None:
    add_860evo(fake_sys, pg89=False)
    run = FakeRun(
        {
            "smartctl": (
                0,
                real_text(real_cases, "smartctl", "smartctl-7.0_sat_samsung860evo_xall.json"),
            )
        }
    )
    ident = identify("/dev/sda", kind="block", run=run, sysfs=fake_sys.root)
    assert run.calls == [["smartctl", "-j", "-i", "/dev/sda"]]  # no nvme-cli for a SATA drive
    assert ident == DriveIdentity(
        model="Samsung SSD 860 EVO 500GB",  # smartctl overrides the 16-character sysfs model
        serial="S3YZNB0KB00864E",
        firmware="RVT02B6Q",
        capacity_bytes=500107862016,
        logical_sector_bytes=512,
        physical_sector_bytes=512,
        transport="SATA",
        rotational=False,
        kind="block",
        sources=("sysfs", "smartctl 7.0"),
    )
    assert ident.label() == "Samsung SSD 860 EVO 500GB / fw RVT02B6Q / S/N S3YZNB0KB00864E"


def test_identify_without_tools_notes_them(fake_sys: FakeSysfs) -> None:
    add_860evo(fake_sys)
    ident = identify("/dev/sda", kind="block", run=FakeRun({}), sysfs=fake_sys.root)
    assert ident.sources == ("sysfs", "smartctl (not installed)")
    assert ident.model == "Samsung SSD 860 EVO 500GB"  # from VPD page 89h


def test_identify_smartctl_open_failed_falls_back_to_sysfs(
    fake_sys: FakeSysfs, real_cases: Path
) -> None:
    add_860evo(fake_sys)
    text = real_text(real_cases, "smartctl", "smartctl-7.0_windows_open_failed_exit2.json")
    ident = identify(
        "/dev/sda", kind="block", run=FakeRun({"smartctl": (2, text)}), sysfs=fake_sys.root
    )
    assert ident.serial == "S3YZNB0KB00864E"
    assert ident.sources == (
        "sysfs",
        r"smartctl 7.0 (no data, exit 2: Smartctl open device: /dev/sda failed: "
        r"\\.\PhysicalDrive0: Open failed, Error=5)",
    )


@pytest.mark.parametrize(
    "answer", [(1, "smartctl: unrecognized option '-j'\n"), subprocess.TimeoutExpired]
)
def test_identify_smartctl_unusable_output(
    fake_sys: FakeSysfs, answer: tuple[int, str] | type[BaseException]
) -> None:
    add_860evo(fake_sys)

    def run(argv: list[str]) -> tuple[int, str]:
        if answer is subprocess.TimeoutExpired:
            raise subprocess.TimeoutExpired(argv, 30)
        assert isinstance(answer, tuple)
        return answer

    ident = identify("/dev/sda", kind="block", run=run, sysfs=fake_sys.root)
    assert ident.model == "Samsung SSD 860 EVO 500GB"
    assert ident.sources[1] in (
        "smartctl (exit 1, no JSON output)",
        "smartctl (timed out after 30 s)",
    )


def test_identify_nvme_uses_nvme_cli_but_keeps_sysfs_capacity(
    fake_sys: FakeSysfs, real_cases: Path
) -> None:
    fake_sys.disk(
        "nvme0n1",
        NVME_PATH,
        sectors=1875385008,
        device_dir="..",
        device={"model": "SAMSUNG MZ1LB960HAJQ-000FB", "serial": "S43ANA0M405593"},
    )
    run = FakeRun({"nvme": (0, real_text(real_cases, "nvme", PM983))})
    ident = identify("/dev/nvme0n1", kind="block", run=run, sysfs=fake_sys.root)
    assert run.calls == [
        ["smartctl", "-j", "-i", "/dev/nvme0n1"],
        ["nvme", "id-ctrl", "-o", "json", "/dev/nvme0n1"],
    ]
    assert ident.model == "Unknown MZ1LB960HAJQ-000FB"  # nvme-cli is the last source: it wins
    assert ident.firmware == "EDA76F2Q"
    assert ident.capacity_bytes == 960197124096  # the namespace size, not tnvmcap 900185481216
    assert ident.sources == ("sysfs", "smartctl (not installed)", "nvme-cli")


def test_identify_usb_bridge_keeps_usb_transport(fake_sys: FakeSysfs, real_cases: Path) -> None:
    fake_sys.disk("sdb", USB_PATH, sectors=234441648, rotational=1, device={"model": "SA400M8120G"})
    text = real_text(real_cases, "smartctl", "smartctl-7.3_sat_kingston_a400_exit4_redacted.json")
    ident = identify(
        "/dev/sdb", kind="block", run=FakeRun({"smartctl": (4, text)}), sysfs=fake_sys.root
    )
    assert ident.transport == "USB"
    assert ident.rotational is False  # smartctl's rotation rate beats the bridge's claim
    assert ident.model == "KINGSTON SA400M8120G"


def test_identify_missing_device(fake_sys: FakeSysfs) -> None:
    (fake_sys.root / "block").mkdir(parents=True)
    with pytest.raises(DeviceError, match="no block device 'sdq'"):
        identify("/dev/sdq", kind="block", run=FakeRun({}), sysfs=fake_sys.root)


def test_default_run_sets_c_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "ru_RU.UTF-8")
    assert tool_runner.default_run(["sh", "-c", 'printf %s "$LC_ALL"']) == (0, "C")
    with pytest.raises(FileNotFoundError):
        tool_runner.default_run(["ssdqual-no-such-tool"])


def test_drive_identity_rejects_unknown_transport() -> None:
    with pytest.raises(ValueError, match="transport 'PATA'"):
        DriveIdentity("m", "s", "f", 1, 512, 512, "PATA", False)


# --------------------------------------------------------------------------- real /sys


@pytest.fixture
def real_loop(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A 64 MiB direct-I/O loop device over a file in ``tmp_path``; always detached."""
    if os.geteuid() != 0:
        pytest.skip("needs root to attach a loop device (CI runs as root)")
    if shutil.which("losetup") is None:
        pytest.skip("losetup not installed")
    image = tmp_path / "loop.img"
    with open(image, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, 64 * 1024 * 1024)
    out = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", str(image)],
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        pytest.skip(f"losetup failed: {out.stderr.strip()}")
    dev = out.stdout.strip()
    try:
        yield dev, image
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True, check=False)


def test_identify_real_loop_device(real_loop: tuple[str, Path]) -> None:
    dev, image = real_loop
    ident = identify(dev, kind="loop")
    assert ident.capacity_bytes == 67108864
    assert ident.serial == os.path.realpath(image)
    assert (ident.model, ident.vendor, ident.firmware) == ("Linux loop device", "Linux", KERNEL)
    assert (ident.transport, ident.kind, ident.rotational) == ("virtual", "loop", False)
    assert ident.logical_sector_bytes in (512, 4096)
    assert identify(dev, kind="block") == ident


def test_real_smartctl_on_loop_device_reads_no_data(real_loop: tuple[str, Path]) -> None:
    """The installed smartctl cannot open a loop device: its JSON sets exit bit 0 or 1."""
    if shutil.which("smartctl") is None:
        pytest.skip("smartctl not installed")
    dev, _ = real_loop
    returncode, stdout = tool_runner.default_run(["smartctl", "-j", "-i", dev])
    assert returncode & 0b11
    with pytest.raises(DeviceError, match=dev):
        identity_from_smartctl(json.loads(stdout))


def test_identify_real_zram_read_only() -> None:
    base = Path("/sys/block/zram0")
    if not base.is_dir():
        pytest.skip("no /sys/block/zram0 (modprobe zram)")
    ident = identify("/dev/zram0", kind="zram")
    assert (ident.model, ident.serial) == ("Linux zram device", "zram0")
    assert ident.capacity_bytes == int((base / "size").read_text()) * 512


def test_identify_virtio_disk_gets_a_model(fake_sys: FakeSysfs) -> None:
    fake_sys.disk(
        "vda",
        "pci0000:00/0000:00:02.0/virtio1/block",
        sectors=536870912,
        rotational=1,
        device={"vendor": "0x1af4\n"},
        extra={"serial": "overlayblk"},
    )
    ident = identify("/dev/vda", kind="block", run=FakeRun({}), sysfs=fake_sys.root)
    assert (ident.model, ident.serial, ident.vendor) == ("Virtio block device", "overlayblk", "")
    assert (ident.transport, ident.capacity_bytes) == ("virtual", 274877906944)
