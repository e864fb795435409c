"""Purge: method selection and the record of what ran (commands faked, never run), and a real
hole punch on a file target."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_ssdqual.errors import SafetyRefusal
from pytest_ssdqual.methodology import purge_nvme
from pytest_ssdqual.methodology.purge import purge
from pytest_ssdqual.methodology.purge_ata import ATA_PASSWORD, ata_security_state

# hdparm -I, Security block as hdparm 9.x prints it (tabs kept)
HDPARM_NOT_FROZEN = """
/dev/sdb:

ATA device, with non-removable media
\tModel Number:       JMicron JMF667H 128GB
Security:
\tMaster password revision code = 65534
\t\tsupported
\tnot\tenabled
\tnot\tlocked
\tnot\tfrozen
\tnot\texpired: security count
\t\tsupported: enhanced erase
\t2min for SECURITY ERASE UNIT. 2min for ENHANCED SECURITY ERASE UNIT.
Logical Unit WWN Device Identifier: 5000000000000000
"""
HDPARM_FROZEN = HDPARM_NOT_FROZEN.replace("\tnot\tfrozen", "\t\tfrozen")


@dataclass
class FakeTarget:
    """What purge() reads of a DriveTarget."""

    path: str
    kind: str = "block"
    transport: str = "SATA"
    refusals: tuple[str, ...] = ()
    size_bytes: int = 1 << 20
    checks: list[str] = field(default_factory=list)

    @property
    def spec(self) -> SimpleNamespace:
        return SimpleNamespace(kind=self.kind, raw=self.path)

    @property
    def fio_filename(self) -> str:
        return self.path

    @property
    def identity(self) -> SimpleNamespace:
        return SimpleNamespace(transport=self.transport)

    def assert_write_allowed(self) -> None:
        self.checks.append("write")
        if self.refusals:
            raise SafetyRefusal(self.path, list(self.refusals))

    def recheck_identity(self) -> None:
        self.checks.append("identity")


class Commands:
    """Records argv; answers by the first matching (substring, (code, output)) rule."""

    def __init__(self, rules: dict[str, tuple[int, str]]) -> None:
        self.rules = rules
        self.calls: list[list[str]] = []

    def __call__(self, argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
        self.calls.append(list(argv))
        line = " ".join(argv)
        for key, answer in self.rules.items():
            if key in line:
                return answer
        return 0, ""


def which_all(name: str) -> str:
    return f"/usr/sbin/{name}"


def test_security_block_of_hdparm() -> None:
    assert ata_security_state(HDPARM_NOT_FROZEN) == {
        "supported": True, "enabled": False, "locked": False, "frozen": False, "enhanced": True}
    assert ata_security_state(HDPARM_FROZEN)["frozen"] is True
    assert ata_security_state("no security block") == {
        "supported": False, "enabled": False, "locked": False, "frozen": False,
        "enhanced": False}


@pytest.fixture
def sysfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fake /sys with controller nvme0 holding namespace nvme0n1 (add siblings to it)."""
    root = tmp_path / "sys"
    (root / "class" / "nvme" / "nvme0" / "nvme0n1").mkdir(parents=True)
    (root / "block" / "nvme0n1" / "device").mkdir(parents=True)
    monkeypatch.setattr(purge_nvme, "SYSFS_ROOT", str(root))
    return root


def test_a_remote_drive_is_never_purged_with_this_machines_tools(sysfs: Path) -> None:
    """A fio:// drive's device path names a drive on its host: nvme format / hdparm /
    blkdiscard here would erase this machine's namesake (often its system disk)."""
    target = FakeTarget("/dev/nvme0n1", kind="remote", transport="NVMe")
    run = Commands({})
    with pytest.raises(SafetyRefusal, match="purge of a fio:// drive is not supported"):
        purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert run.calls == [] and target.checks == ["write"]


def test_nvme_namespace_is_formatted_with_user_data_erase(sysfs: Path) -> None:
    target = FakeTarget("/dev/nvme0n1", transport="NVMe")
    run = Commands({})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "nvme-format-ses1" and record.ran
    assert run.calls == [["/usr/sbin/nvme", "format", "/dev/nvme0n1", "--ses=1", "--force"]]
    assert target.checks == ["write", "identity"]


def test_failed_nvme_format_falls_back_to_blkdiscard_and_says_why(sysfs: Path) -> None:
    target = FakeTarget("/dev/nvme0n1", transport="NVMe")
    run = Commands({"format": (22, "NVMe status: INVALID_FORMAT")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert record.attempts == (
        "nvme-format-ses1: failed (exit 22: NVMe status: INVALID_FORMAT)",
        "ata-secure-erase: not an ATA drive (transport NVMe)",
        "blkdiscard: ok",
    )
    assert "purge: blkdiscard" in record.describe()


@pytest.mark.parametrize("fna", [0x1, 0x2, 0x3])
def test_nvme_format_is_skipped_when_it_would_erase_other_namespaces(
    sysfs: Path, fna: int
) -> None:
    (sysfs / "class" / "nvme" / "nvme0" / "nvme0n2").mkdir()
    (sysfs / "class" / "nvme" / "nvme0" / "nvme0n1p1").mkdir()  # a partition: not a namespace
    target = FakeTarget("/dev/nvme0n1", transport="NVMe")
    run = Commands({"id-ctrl": (0, f'{{"vid": 5197, "fna": {fna}}}')})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert record.attempts[0] == (
        f"nvme-format-ses1: nvme format skipped: FNA=0x{fna:x} and the controller has other "
        "namespaces nvme0n2: formatting would erase them")
    assert not any("format" in call for call in run.calls)
    assert ["/usr/sbin/nvme", "id-ctrl", "/dev/nvme0n1", "-o", "json"] in run.calls


def test_nvme_format_with_unknown_fna_and_other_namespaces_is_skipped(sysfs: Path) -> None:
    (sysfs / "block" / "nvme0n1" / "device" / "nvme0n3").mkdir()
    target = FakeTarget("/dev/nvme0n1", transport="NVMe")
    run = Commands({"id-ctrl": (1, "Permission denied")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert record.attempts[0] == (
        "nvme-format-ses1: nvme format skipped: FNA unknown (nvme id-ctrl failed: exit 1: "
        "Permission denied) and the controller has other namespaces nvme0n3: formatting "
        "would erase them")


def test_nvme_format_runs_when_fna_keeps_it_to_the_namespace(sysfs: Path) -> None:
    (sysfs / "class" / "nvme" / "nvme0" / "nvme0n2").mkdir()
    (sysfs / "class" / "nvme" / "nvme0" / "nvme0c0n1").mkdir()  # a path to nvme0n1 itself
    target = FakeTarget("/dev/nvme0n1", transport="NVMe")
    run = Commands({"id-ctrl": (0, '{"fna": 4}')})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "nvme-format-ses1"
    assert run.calls[-1] == ["/usr/sbin/nvme", "format", "/dev/nvme0n1", "--ses=1", "--force"]


def test_nvme_format_is_skipped_when_the_namespaces_cannot_be_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(purge_nvme, "SYSFS_ROOT", str(tmp_path / "nothing"))
    target = FakeTarget("/dev/nvme0n1", transport="NVMe")
    run = Commands({"id-ctrl": (0, '{"fna": 0}')})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "nvme-format-ses1"
    run = Commands({"id-ctrl": (0, '{"fna": 1}')})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert "cannot be listed from sysfs" in record.attempts[0]


def test_sata_drive_gets_an_enhanced_secure_erase() -> None:
    target = FakeTarget("/dev/sdb")
    run = Commands({"-I": (0, HDPARM_NOT_FROZEN)})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "ata-secure-erase-enhanced"
    assert run.calls == [
        ["/usr/sbin/hdparm", "-I", "/dev/sdb"],
        ["/usr/sbin/hdparm", "--user-master", "u", "--security-set-pass", ATA_PASSWORD,
         "/dev/sdb"],
        ["/usr/sbin/hdparm", "--user-master", "u", "--security-erase-enhanced", ATA_PASSWORD,
         "/dev/sdb"],
        ["/usr/sbin/hdparm", "-I", "/dev/sdb"],  # the erase cleared the password: checked
    ]


def test_frozen_sata_drive_is_discarded_instead_and_the_reason_recorded() -> None:
    target = FakeTarget("/dev/sdb")
    run = Commands({"-I": (0, HDPARM_FROZEN)})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert "frozen (power-cycle it" in record.attempts[1]
    assert not any("--security-set-pass" in c for call in run.calls for c in call)


def test_failed_erase_removes_the_temporary_password() -> None:
    target = FakeTarget("/dev/sdb")
    run = Commands({"-I": (0, HDPARM_NOT_FROZEN), "--security-erase": (5, "I/O error")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert ["/usr/sbin/hdparm", "--user-master", "u", "--security-disable", ATA_PASSWORD,
            "/dev/sdb"] in run.calls
    assert record.attempts[1] == (
        "ata-secure-erase: --security-erase-enhanced failed (exit 5: I/O error); temporary "
        "password 'ssdqual' removed")


def test_erase_timeout_with_a_failed_unlock_says_the_drive_may_be_locked() -> None:
    target = FakeTarget("/dev/sdb")
    run = Commands({"-I": (0, HDPARM_NOT_FROZEN),
                    "--security-erase": (124, "timed out after 14400 s"),
                    "--security-disable": (5, "I/O error")})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.method == "blkdiscard"
    assert record.attempts[1] == (
        "ata-secure-erase: --security-erase-enhanced failed (exit 124: timed out after 14400 s); "
        "drive may be left locked with the ATA user password 'ssdqual': unlock with hdparm "
        "--user-master u --security-disable ssdqual /dev/sdb")


@pytest.mark.parametrize("disable_code", [0, 5])
def test_interrupted_erase_still_removes_the_temporary_password(disable_code: int) -> None:
    target = FakeTarget("/dev/sdb")
    calls: list[list[str]] = []

    def run(argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
        calls.append(list(argv))
        if "-I" in argv:
            return 0, HDPARM_NOT_FROZEN
        if "--security-erase-enhanced" in argv:
            raise KeyboardInterrupt
        if "--security-disable" in argv:
            return disable_code, ""
        return 0, ""

    with pytest.raises(KeyboardInterrupt) as info:
        purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert calls[-1] == ["/usr/sbin/hdparm", "--user-master", "u", "--security-disable",
                         ATA_PASSWORD, "/dev/sdb"]
    notes = getattr(info.value, "__notes__", [])
    if disable_code == 0:
        assert notes == []
    else:
        assert notes == ["drive may be left locked with the ATA user password 'ssdqual': "
                         "unlock with hdparm --user-master u --security-disable ssdqual /dev/sdb"]


def test_successful_erase_records_the_temporary_password() -> None:
    target = FakeTarget("/dev/sdb")
    run = Commands({"-I": (0, HDPARM_NOT_FROZEN)})
    record = purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert record.attempts[1:] == ("ata-secure-erase-enhanced: ok (temporary ATA user "
                                   "password 'ssdqual' set for the erase, cleared by it)",)


@pytest.mark.parametrize(("hdparm", "rules", "why"), [
    (None, {}, "hdparm not installed (apt-get install hdparm)"),
    ("/usr/sbin/hdparm", {"-I": (5, "HDIO_DRIVE_CMD(identify) failed: Input/output error")},
     "hdparm -I failed (exit 5: HDIO_DRIVE_CMD(identify) failed: Input/output error)"),
])
def test_an_ata_drive_whose_security_state_is_unread_is_discarded_but_never_fob(
    hdparm: str | None, rules: dict[str, tuple[int, str]], why: str
) -> None:
    """A password may be set on a SATA drive whose ``hdparm -I`` could not be read: its
    blkdiscard is recorded, but its figures are not FOB (the drive may not be fresh)."""
    target = FakeTarget("/dev/sdb")
    tools = {"hdparm": hdparm, "blkdiscard": "/usr/sbin/blkdiscard"}
    run = Commands({**rules, "blkdiscard": (0, "")})
    record = purge(target, run=run, which=tools.get)  # type: ignore[arg-type]
    assert record.method == "blkdiscard" and record.ran
    assert not record.fob
    assert record.not_fob == (f"the drive's ATA security state could not be read ({why}): a "
                              "password may be set, so the drive may not have been erased")
    assert "NOT FOB: the drive's ATA security state could not be read" in record.describe()


def test_no_method_at_all_is_recorded_not_raised() -> None:
    target = FakeTarget("/dev/sdb")
    record = purge(target, run=Commands({}), which=lambda _name: None)  # type: ignore[arg-type]
    assert record.method is None and not record.ran
    assert record.attempts == (
        "nvme-format-ses1: not an NVMe namespace",
        "ata-secure-erase: hdparm not installed (apt-get install hdparm)",
        "blkdiscard: blkdiscard not installed (util-linux)",
    )
    assert record.describe().startswith("purge: no method could run (")


def test_a_drive_that_refuses_writes_is_never_purged() -> None:
    target = FakeTarget("/dev/sdb", refusals=("/dev/sdb is mounted at /mnt",))
    run = Commands({})
    with pytest.raises(SafetyRefusal, match="is mounted"):
        purge(target, run=run, which=which_all)  # type: ignore[arg-type]
    assert run.calls == []


def test_a_target_that_purges_itself_goes_first() -> None:
    class SelfPurging(FakeTarget):
        def self_purge(self) -> str:
            self.checks.append("self")
            return "emulated secure erase"

    target = SelfPurging("/dev/loop7", transport="emulated")
    record = purge(target, run=Commands({}), which=which_all)  # type: ignore[arg-type]
    assert record.method == "emulated secure erase + blkdiscard"
    assert target.checks == ["write", "identity", "self"]


def test_file_target_gets_its_blocks_deallocated(tmp_path: Path) -> None:
    path = tmp_path / "target.img"
    size = 8 << 20
    with open(path, "wb") as fh:
        fh.write(os.urandom(size))
        fh.flush()
        os.fsync(fh.fileno())
    before = os.stat(path).st_blocks
    target = FakeTarget(str(path), kind="file", transport="virtual", size_bytes=size)
    record = purge(target)  # type: ignore[arg-type]
    assert record.method in ("file-punch-hole", "file-truncate")
    st = os.stat(path)
    assert st.st_size == size  # the size is kept
    assert st.st_blocks < before // 8  # the data blocks are gone
    with open(path, "rb") as fh:
        assert fh.read(4096) == b"\0" * 4096
