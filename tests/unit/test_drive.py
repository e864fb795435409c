"""Unit tests of ``pytest_ssdqual.drive`` (spec, safety, target, lock, blockdev) on fake sysfs.

The fake tree mirrors the kernel's layout (Linux ``Documentation/ABI/stable/sysfs-block``):
``sys/block/<disk>/{dev,size,ro,holders/,slaves/}``, ``sys/block/<disk>/<part>/{dev,partition}``
and ``sys/block/loopN/loop/backing_file``, plus fake ``mountinfo`` and ``swaps`` files in
proc(5) format. Device paths point into a ``dev/`` folder that does not exist, so the kernel name
is taken from the path and nothing on the host is looked at. Device numbers follow the usual
assignments (sda 8:0, sdb 8:16, dm-0 253:0), so a host that does have these nodes agrees.

File targets and ``DriveLock`` use real files and processes; they need no root.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.drive.blockdev import BlockDeviceState, inspect_block_device
from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.identity import identify as real_identify
from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.drive.mounts import read_mountinfo, read_swaps
from pytest_ssdqual.drive.safety import write_refusal_reasons
from pytest_ssdqual.drive.spec import DriveSpec, _char_device_fix, parse_drive_option
from pytest_ssdqual.drive.target import DriveTarget, IdentityFn
from pytest_ssdqual.errors import ConfigError, DeviceError, DriveInUse, SafetyRefusal

SERIAL = "S3Z9NB0K123456"
MIB = 1024 * 1024


# --------------------------------------------------------------------------- fake tree


class FakeTree:
    """A fake ``/sys`` + ``/proc/self/mountinfo`` + ``/proc/swaps`` under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sysfs = root / "sys"
        self.dev = root / "dev"  # never created: paths are resolved by kernel name
        (self.sysfs / "block").mkdir(parents=True)
        self.mountinfo = root / "mountinfo"
        self.swaps = root / "swaps"
        self._mount_lines: list[str] = []
        self._swap_lines: list[str] = []
        self._flush()

    def path(self, name: str) -> str:
        return str(self.dev / name)

    def disk(
        self,
        name: str,
        dev: str,
        *,
        sectors: int = 2048,
        ro: int = 0,
        holders: tuple[str, ...] = (),
        slaves: tuple[str, ...] = (),
    ) -> Path:
        base = self.sysfs / "block" / name
        (base / "holders").mkdir(parents=True)
        (base / "slaves").mkdir()
        (base / "dev").write_text(dev + "\n")
        (base / "size").write_text(f"{sectors}\n")
        (base / "ro").write_text(f"{ro}\n")
        for holder in holders:
            (base / "holders" / holder).mkdir()
        for slave in slaves:
            (base / "slaves" / slave).mkdir()
        return base

    def part(self, disk: str, name: str, dev: str, *, holders: tuple[str, ...] = ()) -> Path:
        base = self.sysfs / "block" / disk / name
        (base / "holders").mkdir(parents=True)
        (base / "dev").write_text(dev + "\n")
        (base / "partition").write_text(name.removeprefix(disk).lstrip("p") + "\n")
        for holder in holders:
            (base / "holders" / holder).mkdir()
        return base

    def loop_backing(self, name: str, backing: str) -> None:
        (self.sysfs / "block" / name / "loop").mkdir()
        (self.sysfs / "block" / name / "loop" / "backing_file").write_text(backing + "\n")

    def mount(self, dev: str, mount_point: str, source: str, fstype: str = "ext4") -> None:
        escaped = mount_point.replace(" ", "\\040")
        n = len(self._mount_lines) + 30
        self._mount_lines.append(
            f"{n} 1 {dev} / {escaped} rw,relatime shared:{n} - {fstype} {source} rw"
        )
        self._flush()

    def swap(self, filename: str, kind: str = "partition") -> None:
        self._swap_lines.append(f"{filename}\t{kind}\t\t1048572\t\t0\t\t-2")
        self._flush()

    def _flush(self) -> None:
        self.mountinfo.write_text("".join(line + "\n" for line in self._mount_lines))
        header = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
        self.swaps.write_text(header + "".join(line + "\n" for line in self._swap_lines))

    def inspect(self, name: str, root_dev: tuple[int, int] = (8, 0)) -> BlockDeviceState:
        return inspect_block_device(
            self.path(name),
            sysfs=self.sysfs,
            mountinfo=self.mountinfo,
            swaps=self.swaps,
            root_dev=root_dev,
        )


@pytest.fixture
def tree(tmp_path: Path) -> FakeTree:
    """sda (system disk: sda1 on /boot, sda2 on /) and a blank sdb."""
    fake = FakeTree(tmp_path / "fake")
    fake.disk("sda", "8:0", sectors=500118192)
    fake.part("sda", "sda1", "8:1")
    fake.part("sda", "sda2", "8:2")
    fake.mount("8:2", "/", "/dev/sda2")
    fake.mount("8:1", "/boot", "/dev/sda1", "vfat")
    fake.disk("sdb", "8:16", sectors=250069680)
    return fake


def reasons_for(state: BlockDeviceState, *confirmed: str, serial: str = SERIAL) -> list[str]:
    return write_refusal_reasons(state, serial=serial, confirmed_serials=confirmed)


# --------------------------------------------------------------------------- inspection


def test_blank_disk_state(tree: FakeTree) -> None:
    state = tree.inspect("sdb", root_dev=(8, 2))
    assert state == BlockDeviceState(
        name="sdb",
        major=8,
        minor=16,
        partitions=(),
        holders=(),
        mounts=(),
        is_system_disk=False,
        read_only=False,
    )
    assert reasons_for(state, SERIAL) == []


def test_root_on_partition_makes_the_disk_a_system_disk(tree: FakeTree) -> None:
    state = tree.inspect("sda", root_dev=(8, 2))
    assert state.is_system_disk
    assert state.partitions == ("sda1", "sda2")
    assert state.mounts == ("/", "/boot")


def test_root_on_the_disk_itself(tmp_path: Path) -> None:
    fake = FakeTree(tmp_path)
    fake.disk("vda", "254:0")
    fake.mount("254:0", "/", "/dev/vda")
    state = fake.inspect("vda", root_dev=(254, 0))
    assert state.is_system_disk
    reasons = reasons_for(state, SERIAL)
    assert reasons[0].startswith("/dev/vda holds the root filesystem (/)")
    assert "writes are never allowed" in reasons[0]
    assert len(reasons) == 1  # no "unmount it" / "--confirm-destroy" hints for the system disk


def test_root_device_from_stat_alone_marks_system_disk(tmp_path: Path) -> None:
    """root_dev alone (no '/' line in mountinfo) is enough."""
    fake = FakeTree(tmp_path)
    fake.disk("nvme0n1", "259:0")
    fake.part("nvme0n1", "nvme0n1p1", "259:1")
    assert fake.inspect("nvme0n1", root_dev=(259, 1)).is_system_disk
    assert not fake.inspect("nvme0n1", root_dev=(8, 0)).is_system_disk


def test_root_on_dm_chain_marks_the_disk_under_it(tmp_path: Path) -> None:
    """/ on dm-1 (an LV) over dm-0 (LUKS) over sda2: sda is the system disk."""
    fake = FakeTree(tmp_path)
    fake.disk("sda", "8:0")
    fake.part("sda", "sda1", "8:1")
    fake.part("sda", "sda2", "8:2", holders=("dm-0",))
    fake.disk("sdb", "8:16")
    fake.disk("dm-0", "253:0", slaves=("sda2",), holders=("dm-1",))
    fake.disk("dm-1", "253:1", slaves=("dm-0",))
    fake.mount("253:1", "/", "/dev/mapper/vg-root")

    sda = fake.inspect("sda", root_dev=(253, 1))
    assert sda.is_system_disk
    assert sda.holders == ("dm-0",)
    assert sda.mounts == ()  # mounted through dm, not directly: holders say it
    assert not fake.inspect("sdb", root_dev=(253, 1)).is_system_disk
    # The stacked devices themselves are system disks too.
    assert fake.inspect("dm-0", root_dev=(253, 1)).is_system_disk
    assert fake.inspect("dm-1", root_dev=(253, 1)).is_system_disk

    reasons = reasons_for(sda, SERIAL)
    assert len(reasons) == 1 and "root filesystem" in reasons[0]


def test_root_on_md_over_two_disks(tmp_path: Path) -> None:
    fake = FakeTree(tmp_path)
    fake.disk("sda", "8:0")
    fake.part("sda", "sda1", "8:1", holders=("md127",))
    fake.disk("sdb", "8:16")
    fake.part("sdb", "sdb1", "8:17", holders=("md127",))
    fake.disk("sdc", "8:32")
    fake.disk("md127", "9:127", slaves=("sda1", "sdb1"))
    for name in ("sda", "sdb"):
        assert fake.inspect(name, root_dev=(9, 127)).is_system_disk, name
    assert not fake.inspect("sdc", root_dev=(9, 127)).is_system_disk


def test_separate_boot_makes_a_system_disk(tree: FakeTree) -> None:
    tree.mount("8:17", "/boot/efi", "/dev/sdb1", "vfat")
    tree.part("sdb", "sdb1", "8:17")
    state = tree.inspect("sdb", root_dev=(8, 2))
    assert state.is_system_disk
    assert state.mounts == ("/boot/efi",)


def test_a_dm_device_on_the_system_disk_is_a_system_disk(tmp_path: Path) -> None:
    """dm-1 (another LV in root's volume group) writes to the system disk: refused."""
    fake = FakeTree(tmp_path)
    fake.disk("sda", "8:0")
    fake.part("sda", "sda2", "8:2", holders=("dm-0", "dm-1"))
    fake.disk("dm-0", "253:0", slaves=("sda2",))
    fake.disk("dm-1", "253:1", slaves=("sda2",))
    assert fake.inspect("dm-1", root_dev=(253, 0)).is_system_disk


def test_a_loop_device_over_the_system_disk_is_a_system_disk(tmp_path: Path) -> None:
    fake = FakeTree(tmp_path)
    fake.disk("sda", "8:0")
    fake.disk("loop5", "7:5")
    fake.loop_backing("loop5", "/dev/sda")  # losetup /dev/loop5 /dev/sda
    fake.disk("loop6", "7:6")
    fake.loop_backing("loop6", str(tmp_path / "disk.img"))
    assert fake.inspect("loop5", root_dev=(8, 0)).is_system_disk
    assert not fake.inspect("loop6", root_dev=(8, 0)).is_system_disk


def test_mounted_partition_and_mount_point_escapes(tree: FakeTree) -> None:
    tree.part("sdb", "sdb1", "8:17")
    tree.part("sdb", "sdb2", "8:18")
    tree.mount("8:17", "/mnt/lab data", "/dev/sdb1")
    tree.mount("8:17", "/srv/bind", "/dev/sdb1")  # a bind mount: second mount point
    tree.mount("8:17", "/srv/bind", "/dev/sdb1")  # listed twice: reported once
    state = tree.inspect("sdb", root_dev=(8, 2))
    assert state.partitions == ("sdb1", "sdb2")
    assert state.mounts == ("/mnt/lab data", "/srv/bind")
    assert (
        "/dev/sdb is mounted at /mnt/lab data, /srv/bind: unmount it first"
        in (reasons_for(state, SERIAL)[0])
    )


def test_btrfs_anonymous_device_is_matched_by_mount_source(tree: FakeTree) -> None:
    """btrfs shows 0:N in mountinfo; the source /dev/sdb1 names the partition."""
    tree.part("sdb", "sdb1", "8:17")
    tree.mount("0:45", "/data", "/dev/sdb1", "btrfs")
    tree.mount("0:46", "/tmp", "tmpfs", "tmpfs")
    assert tree.inspect("sdb", root_dev=(8, 2)).mounts == ("/data",)


def test_swap_partition(tree: FakeTree, tmp_path: Path) -> None:
    tree.part("sdb", "sdb2", "8:18")
    tree.swap("/dev/sdb2")
    tree.swap(str(tmp_path / "swapfile"), "file")  # a swap file is not a device
    state = tree.inspect("sdb", root_dev=(8, 2))
    assert state.mounts == ("[swap]",)
    reasons = reasons_for(state, SERIAL)
    assert reasons[0] == "/dev/sdb is in use as swap: turn it off first (swapoff, see /proc/swaps)"
    assert not any("mounted at" in r for r in reasons)


def test_holders_of_disk_and_partitions(tree: FakeTree) -> None:
    tree.disk("sdc", "8:32", holders=("dm-3",))
    tree.part("sdc", "sdc1", "8:33", holders=("md0",))
    tree.part("sdc", "sdc2", "8:34", holders=("dm-3", "dm-4"))
    state = tree.inspect("sdc", root_dev=(8, 2))
    assert state.holders == ("dm-3", "md0", "dm-4")
    assert (
        "/dev/sdc is in use by dm-3, md0, dm-4 (LVM/md/dm): remove it from that stack first"
        in reasons_for(state, SERIAL)[1]
    )


def test_partitions_reason(tree: FakeTree) -> None:
    tree.part("sdb", "sdb1", "8:17")
    tree.part("sdb", "sdb2", "8:18")
    tree.part("sdb", "sdb10", "8:26")
    state = tree.inspect("sdb", root_dev=(8, 2))
    assert state.partitions == ("sdb1", "sdb2", "sdb10")
    assert reasons_for(state, SERIAL) == [
        "/dev/sdb has partitions sdb1, sdb2, sdb10: this tool only writes to blank drives; wipe "
        "the partition table (wipefs -a /dev/sdb) if the drive is really meant for destruction"
    ]


def test_read_only(tree: FakeTree) -> None:
    tree.disk("sdd", "8:48", ro=1)
    state = tree.inspect("sdd", root_dev=(8, 2))
    assert state.read_only
    [reason] = reasons_for(state, SERIAL)
    assert reason.startswith("/dev/sdd is read-only (/sys/block/sdd/ro is 1)")
    assert "blockdev --setrw /dev/sdd" in reason


def test_every_reason_at_once_and_the_system_disk_alone(tree: FakeTree) -> None:
    tree.disk("sdx", "65:112", ro=1, holders=("dm-7",))
    tree.part("sdx", "sdx1", "65:113")
    tree.mount("65:113", "/mnt/x", "/dev/sdx1")
    tree.swap("/dev/sdx")
    state = tree.inspect("sdx", root_dev=(8, 99))
    reasons = reasons_for(state)
    assert [r.split(" ", 3)[1:3] for r in reasons[:5]] == [
        ["is", "mounted"],
        ["is", "in"],
        ["has", "partitions"],
        ["is", "in"],
        ["is", "read-only"],
    ]
    assert "swap" in reasons[1] and "dm-7" in reasons[3]
    assert "not confirmed for destruction" in reasons[5]
    assert len(reasons) == 6
    # Confirming the serial removes only the confirmation reason.
    assert len(reasons_for(state, SERIAL)) == 5
    # The same drive holding / gets the system-disk reason alone: no way round it to hint at.
    system = tree.inspect("sdx", root_dev=(65, 113))
    assert [r.split(" ", 3)[1:3] for r in reasons_for(system)] == [["holds", "the"]]


def test_partition_path_is_refused_by_inspect(tree: FakeTree) -> None:
    tree.part("sdb", "sdb1", "8:17")
    with pytest.raises(ConfigError) as info:
        tree.inspect("sdb1")
    assert info.value.key == "--drive"
    assert "is partition sdb1 of sdb: give the whole disk" in str(info.value)


def test_unknown_device(tree: FakeTree) -> None:
    with pytest.raises(DeviceError, match="has no device 'sdq'"):
        tree.inspect("sdq")


def test_missing_proc_swaps_means_no_swap(tmp_path: Path) -> None:
    assert read_swaps(tmp_path / "absent") == []


def test_mountinfo_optional_fields(tmp_path: Path) -> None:
    path = tmp_path / "mountinfo"
    path.write_text(
        "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 shared:7 - ext3 /dev/root rw,errors=continue\n"
        "garbage line\n"
    )
    [entry] = read_mountinfo(path)
    assert (entry.dev, entry.mount_point, entry.fstype, entry.source) == (
        (98, 0),
        "/mnt2",
        "ext3",
        "/dev/root",
    )


# --------------------------------------------------------------------------- confirmation


def test_not_confirmed_names_the_serial(tree: FakeTree) -> None:
    [reason] = reasons_for(tree.inspect("sdb"))
    assert reason == (
        f"/dev/sdb (serial {SERIAL}) is not confirmed for destruction: add "
        f"--confirm-destroy={SERIAL} (the drive's serial, not its path: /dev/sdX names move "
        "between boots)"
    )


def test_wrong_serial_names_both(tree: FakeTree) -> None:
    [reason] = reasons_for(tree.inspect("sdb"), "WRONG1", "WRONG2")
    assert reason.startswith(
        f"--confirm-destroy values WRONG1, WRONG2 do not match this drive's serial {SERIAL}"
    )


def test_a_loop_device_says_its_serial_is_the_backing_file(tmp_path: Path) -> None:
    """Before: ``--confirm-destroy=/dev/loop0`` was told to check ``lsblk ... SERIAL`` (empty
    for a loop device) and that a /dev name moves between boots; the serial to give, the
    backing file's path, was called "this drive's serial" without saying what it is."""
    fake = FakeTree(tmp_path)
    fake.disk("loop0", "7:0")
    backing = str(tmp_path / "drive.img")
    fake.loop_backing("loop0", backing)
    state = fake.inspect("loop0")  # its device: /dev/loop0
    give = (f"a loop device is confirmed by the absolute path of its backing file, not by its "
            f"/dev name (loop numbers are reused): --confirm-destroy={backing} (losetup -l lists "
            "each loop device with its backing file)")
    assert reasons_for(state, "/dev/loop0", serial=backing) == [
        f"--confirm-destroy values /dev/loop0 do not confirm /dev/loop0, the loop device over "
        f"{backing}: {give}"]
    assert reasons_for(state, serial=backing) == [
        f"/dev/loop0 (loop device over {backing}) is not confirmed for destruction: {give}"]
    assert reasons_for(state, backing, serial=backing) == []
    assert "losetup -f --show IMAGE" in reasons_for(state, backing, serial="")[0]


def test_a_device_path_given_for_the_serial_is_named_as_such(tree: FakeTree) -> None:
    """``--confirm-destroy=/dev/sdb``: the refusal said only that the values do not match."""
    [reason] = reasons_for(tree.inspect("sdb"), "/dev/sdb")
    assert reason.endswith(f"; /dev/sdb is a device path, not a serial: a /dev name moves "
                           f"between boots, the serial does not (--confirm-destroy={SERIAL})")
    [reason] = reasons_for(tree.inspect("sdb"), "WRONG1")
    assert "device path" not in reason


def test_confirmation_ignores_blanks_and_case(tree: FakeTree) -> None:
    state = tree.inspect("sdb")
    assert reasons_for(state, "other", f"  {SERIAL.lower()} ") == []


def test_a_path_is_not_a_confirmation(tree: FakeTree) -> None:
    assert reasons_for(tree.inspect("sdb"), "/dev/sdb", "sdb") != []


def test_no_serial_cannot_be_confirmed(tree: FakeTree) -> None:
    [reason] = reasons_for(tree.inspect("sdb"), "", serial="")
    assert "reports no serial number, so it cannot be confirmed for destruction" in reason


# --------------------------------------------------------------------------- parse


def parse_error(value: str, cwd: str | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        parse_drive_option(value, cwd=cwd)
    assert info.value.key == "--drive"
    assert info.value.fix
    return str(info.value)


@pytest.mark.parametrize("value", ["", "   "])
def test_parse_empty(value: str) -> None:
    assert "empty drive value" in parse_error(value)


def test_parse_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "x.img"
    message = parse_error(str(missing))
    assert f"({missing} does not exist) nor a device in /dev/" in message
    assert message.count(f"--drive=file:{missing}") == 1  # the fix says it once


def test_parse_missing_relative_path(tmp_path: Path) -> None:
    message = parse_error("x.img", cwd=str(tmp_path))
    assert f"write --drive=file:{tmp_path / 'x.img'}" in message


def test_parse_missing_device() -> None:
    message = parse_error("/dev/ssdqual-no-such-disk")
    assert "/dev/ssdqual-no-such-disk does not exist" in message
    assert "lsblk" in message


def test_parse_directory(tmp_path: Path) -> None:
    assert f"{tmp_path} is a directory" in parse_error(str(tmp_path))
    assert f"file:{tmp_path} is a directory" in parse_error(f"file:{tmp_path}")
    assert "names a directory" in parse_error(f"file:{tmp_path}/")


def test_parse_character_device() -> None:
    message = parse_error("/dev/null")
    assert "/dev/null is a character device, not a block device" in message
    assert "lsblk" in message


def test_character_device_fixes(tmp_path: Path) -> None:
    sysfs = tmp_path / "sys"
    (sysfs / "class" / "scsi_generic" / "sg1" / "device" / "block" / "sdc").mkdir(parents=True)
    assert "/dev/nvme0n1" in _char_device_fix("/dev/nvme0", sysfs)
    assert "/dev/nvme1n2" in _char_device_fix("/dev/ng1n2", sysfs)
    assert "/dev/sdc" in _char_device_fix("/dev/sg1", sysfs)
    assert "lsscsi -g" in _char_device_fix("/dev/sg0", sysfs)


def test_parse_remote_drive() -> None:
    # fio://HOST[:PORT]/dev/X: the device is on that host, nothing is looked up here
    assert parse_drive_option("FIO://lab-host:9000/dev/sdb") == DriveSpec(
        raw="FIO://lab-host:9000/dev/sdb", kind="remote", path="/dev/sdb", host="lab-host",
        port=9000)
    assert "is not a number 1-65535" in parse_error("fio://lab-host:0/dev/sdb")


def test_parse_emulated_drive() -> None:
    # the model is looked up later (emulator.resolve_spec); here only the syntax is checked
    assert parse_drive_option("emu:jmf612-43nm-64g@0.8") == DriveSpec(
        raw="emu:jmf612-43nm-64g@0.8", kind="emu", path="jmf612-43nm-64g"
    )
    assert "speed 'fast' is not a number" in parse_error("emu:x@fast")
    assert "emu: needs a model" in parse_error("emu:@0.8")


def test_parse_unknown_scheme(tmp_path: Path) -> None:
    assert "unknown drive kind 'nbd':" in parse_error("nbd:host:10809", cwd=str(tmp_path))


def test_parse_file_target_parent_missing(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "x.img"
    message = parse_error(f"file:{path}")
    assert f"parent directory {path.parent} does not exist" in message
    assert f"mkdir -p {path.parent}" in message


def test_parse_file_target_without_path() -> None:
    assert "file: needs a path" in parse_error("file:")


@pytest.mark.parametrize("value", ["file:/dev/null", "file:/dev/sdb", "file:/dev/shm/../sdb"])
def test_parse_file_target_under_dev(value: str) -> None:
    assert "is under /dev: a file target must be a regular file" in parse_error(value)


def test_parse_file_target_through_symlink_into_dev(tmp_path: Path) -> None:
    link = tmp_path / "disk"
    link.symlink_to("/dev/null")
    assert "is under /dev" in parse_error(f"file:{link}")


def test_parse_file_targets(tmp_path: Path) -> None:
    spec = parse_drive_option("file:x.img", cwd=str(tmp_path))
    assert spec == DriveSpec(raw="file:x.img", kind="file", path=str(tmp_path / "x.img"))

    existing = tmp_path / "y.img"
    existing.write_bytes(b"\0" * 4096)
    assert parse_drive_option(str(existing)) == DriveSpec(str(existing), "file", str(existing))
    assert parse_drive_option("y.img", cwd=str(tmp_path)).path == str(existing)
    assert parse_drive_option(f"file:{existing}").kind == "file"


# --------------------------------------------------------------------------- DriveTarget


def fake_identity(serial: str, kind: str = "block") -> DriveIdentity:
    return DriveIdentity(
        model="Fake SSD",
        serial=serial,
        firmware="1.0",
        capacity_bytes=128 * 10**9,
        logical_sector_bytes=512,
        physical_sector_bytes=4096,
        transport="SATA",
        rotational=False,
        kind=kind,
    )


class FakeIdentify:
    """Records calls; returns the serials given, one per call (the last one repeats)."""

    def __init__(self, *serials: str) -> None:
        self.serials = list(serials)
        self.calls: list[tuple[str, str]] = []

    def __call__(self, path: str, *, kind: str, sysfs: Path = Path("/sys")) -> DriveIdentity:
        self.calls.append((path, kind))
        serial = self.serials.pop(0) if len(self.serials) > 1 else self.serials[0]
        return fake_identity(serial, kind)


def open_block(
    tree: FakeTree, name: str, *confirmed: str, identify: IdentityFn | None = None
) -> DriveTarget:
    return DriveTarget.open(
        DriveSpec(raw=tree.path(name), kind="block", path=tree.path(name)),
        confirmed_serials=confirmed,
        file_size_bytes=MIB,
        identity_fn=identify or FakeIdentify(SERIAL),
        sysfs=tree.sysfs,
        mountinfo=tree.mountinfo,
        swaps=tree.swaps,
        root_dev=(8, 2),
    )


@pytest.mark.parametrize("identity_fn", ["raw", "real"])
def test_a_file_removed_while_it_is_opened_is_in_use_by_a_sibling_not_a_traceback(
        tmp_path: Path, identity_fn: str) -> None:
    # two pytest-xdist workers on the session's one scratch file: the one that created it
    # finished and removed it while the other was opening it. "raw": the removal shows as a
    # FileNotFoundError (a traceback before); "real": the project's own identity function
    # wraps it as DeviceError "scratch file ...: No such file or directory" (CI, session 9:
    # the test broken with that text instead of the sibling advice)
    path = tmp_path / "scratch.img"
    path.write_bytes(b"\0" * MIB)

    def identify_then_vanish(p: str, *, kind: str, sysfs: Path) -> Any:
        os.remove(p)
        if identity_fn == "real":
            return real_identify(p, kind=kind, sysfs=sysfs)
        return fake_identity(SERIAL, kind)

    with pytest.raises(DriveInUse) as caught:
        DriveTarget.open(DriveSpec(raw=f"file:{path}", kind="file", path=str(path)),
                         confirmed_serials=(), file_size_bytes=MIB,
                         identity_fn=identify_then_vanish)
    assert caught.value.sibling and "was removed while this process opened it" in str(
        caught.value)


def test_a_file_target_error_other_than_removal_is_not_called_in_use(tmp_path: Path) -> None:
    path = tmp_path / "scratch.img"
    path.write_bytes(b"\0" * MIB)

    def identify_fails(p: str, *, kind: str, sysfs: Path) -> Any:
        raise DeviceError(f"scratch file {p}: Permission denied")

    with pytest.raises(DeviceError, match="Permission denied") as caught:
        DriveTarget.open(DriveSpec(raw=f"file:{path}", kind="file", path=str(path)),
                         confirmed_serials=(), file_size_bytes=MIB, identity_fn=identify_fails)
    assert not isinstance(caught.value, DriveInUse)


def test_open_block_confirmed(tree: FakeTree) -> None:
    identify = FakeIdentify(SERIAL)
    target = open_block(tree, "sdb", SERIAL, identify=identify)
    assert identify.calls == [(tree.path("sdb"), "block")]
    assert target.id == "sdb"
    assert target.size_bytes == 250069680 * 512
    assert target.fio_filename == tree.path("sdb")
    assert target.write_refusals == ()
    assert not target.created_file
    target.assert_write_allowed()
    target.cleanup()  # never touches a block device


@pytest.mark.parametrize(("name", "kind"), [("loop3", "loop"), ("zram1", "zram")])
def test_open_virtual_block_identity_kind(tree: FakeTree, name: str, kind: str) -> None:
    tree.disk(name, "7:3")
    identify = FakeIdentify(SERIAL)
    assert open_block(tree, name, identify=identify).id == name
    assert identify.calls == [(tree.path(name), kind)]


def test_open_block_not_confirmed_refuses(tree: FakeTree) -> None:
    target = open_block(tree, "sdb")
    assert len(target.write_refusals) == 1
    with pytest.raises(SafetyRefusal) as info:
        target.assert_write_allowed()
    assert info.value.drive == tree.path("sdb")
    assert f"--confirm-destroy={SERIAL}" in info.value.reasons[0]


def test_open_system_disk_refuses_even_when_confirmed(tree: FakeTree) -> None:
    target = open_block(tree, "sda", SERIAL)
    assert "root filesystem" in target.write_refusals[0]
    with pytest.raises(SafetyRefusal):
        target.assert_write_allowed()


def test_mount_during_session_is_caught_before_the_next_write(tree: FakeTree) -> None:
    target = open_block(tree, "sdb", SERIAL)
    target.assert_write_allowed()
    tree.mount("8:16", "/mnt/oops", "/dev/sdb")
    with pytest.raises(SafetyRefusal, match="mounted at /mnt/oops: unmount it first"):
        target.assert_write_allowed()


def test_serial_change_refuses_for_good(tree: FakeTree) -> None:
    target = open_block(tree, "sdb", SERIAL, identify=FakeIdentify(SERIAL, SERIAL, "OTHER9"))
    target.recheck_identity()  # same serial: fine
    target.assert_write_allowed()
    with pytest.raises(DeviceError) as info:
        target.recheck_identity()
    assert str(info.value) == (
        f"{tree.path('sdb')} now has serial OTHER9, was {SERIAL} at start: refusing to continue"
    )
    with pytest.raises(SafetyRefusal, match="now has serial OTHER9"):
        target.assert_write_allowed()  # a refresh does not clear it


def test_identity_failure_on_recheck_refuses(tree: FakeTree) -> None:
    calls = 0

    def flaky(path: str, *, kind: str, sysfs: Path = Path("/sys")) -> DriveIdentity:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise DeviceError("smartctl: device open failed")
        return fake_identity(SERIAL)

    target = open_block(tree, "sdb", SERIAL, identify=flaky)
    with pytest.raises(DeviceError, match="device open failed"):
        target.recheck_identity()
    assert "could not be identified again" in target.write_refusals[0]


def test_device_gone_before_write(tree: FakeTree) -> None:
    target = open_block(tree, "sdb", SERIAL)
    shutil.rmtree(tree.sysfs / "block" / "sdb")  # unplugged
    with pytest.raises(DeviceError, match="gone"):
        target.assert_write_allowed()


# --------------------------------------------------------------------------- file targets


def open_file(path: Path, size: int = 4 * MIB) -> DriveTarget:
    return DriveTarget.open(
        parse_drive_option(f"file:{path}"),
        confirmed_serials=(),
        file_size_bytes=size,
        identity_fn=FakeIdentify(str(path)),
    )


def test_file_target_created_sized_and_removed(tmp_path: Path) -> None:
    path = tmp_path / "scratch.img"
    target = open_file(path, 4 * MIB)
    assert target.created_file
    assert path.stat().st_size == 4 * MIB == target.size_bytes
    assert target.write_refusals == ()
    target.assert_write_allowed()  # a file target is never confirmed by serial
    assert target.id == "file-scratch.img"
    assert target.lock_key.startswith("file-scratch.img-") and len(target.lock_key) == 25
    assert target.fio_filename == str(path)
    target.cleanup()
    assert not path.exists()
    target.cleanup()  # idempotent


def test_same_file_name_in_two_folders_locks_separately(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one, two = open_file(tmp_path / "a" / "x.img"), open_file(tmp_path / "b" / "x.img")
    try:
        assert one.id == two.id == "file-x.img"
        assert one.lock_key != two.lock_key
        with DriveLock(one.lock_key, lock_dir=tmp_path), DriveLock(two.lock_key, lock_dir=tmp_path):
            pass
    finally:
        one.cleanup()
        two.cleanup()


def test_block_lock_key_is_the_kernel_name(tree: FakeTree) -> None:
    assert open_block(tree, "sdb").lock_key == "sdb"


def test_file_target_existing_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "keep.img"
    path.write_bytes(b"x" * 8192)
    identify = FakeIdentify(str(path))
    target = DriveTarget.open(
        parse_drive_option(str(path)),
        confirmed_serials=(),
        file_size_bytes=MIB,
        identity_fn=identify,
    )
    assert identify.calls == [(str(path), "file")]
    assert not target.created_file
    assert target.size_bytes == 8192
    target.cleanup()
    assert path.read_bytes() == b"x" * 8192


def test_file_target_removed_when_identity_fails(tmp_path: Path) -> None:
    path = tmp_path / "scratch.img"

    def broken(path: str, *, kind: str, sysfs: Path = Path("/sys")) -> DriveIdentity:
        raise DeviceError("cannot identify")

    with pytest.raises(DeviceError):
        DriveTarget.open(
            parse_drive_option(f"file:{path}"),
            confirmed_serials=(),
            file_size_bytes=MIB,
            identity_fn=broken,
        )
    assert not path.exists()


def test_file_target_size_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="file_size_bytes must be > 0"):
        open_file(tmp_path / "x.img", 0)
    assert not (tmp_path / "x.img").exists()


def test_file_target_with_the_real_identify(tmp_path: Path) -> None:
    path = tmp_path / "real.img"
    target = DriveTarget.open(
        parse_drive_option(f"file:{path}"), confirmed_serials=(), file_size_bytes=MIB
    )
    try:
        assert target.identity.kind == "file"
        assert target.identity.serial == str(path)
        assert target.identity.capacity_bytes == MIB
    finally:
        target.cleanup()
    assert not path.exists()


# --------------------------------------------------------------------------- DriveLock


HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from pytest_ssdqual.drive.lock import DriveLock
    lock = DriveLock(sys.argv[1], lock_dir=Path(sys.argv[2]))
    lock.acquire()
    print("locked", flush=True)
    sys.stdin.readline()
    lock.release()
    """
)


@contextlib.contextmanager
def lock_holder(target_id: str, lock_dir: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``DriveLock(target_id)``; a newline on its stdin releases it."""
    with subprocess.Popen(
        [sys.executable, "-c", HOLDER, target_id, str(lock_dir)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    ) as holder:
        try:
            assert holder.stdout is not None
            assert holder.stdout.readline().strip() == "locked"
            yield holder
        finally:
            if holder.poll() is None:
                holder.kill()
            holder.wait(timeout=30)


def test_lock_held_by_another_process(tmp_path: Path) -> None:
    lock = DriveLock("sdb", lock_dir=tmp_path, label="/dev/sdb")
    with lock_holder("sdb", tmp_path) as holder:
        with pytest.raises(DeviceError) as info:
            lock.acquire()
        assert str(info.value).startswith(
            f"drive /dev/sdb is in use by another pytest-ssdqual run (pid {holder.pid}): "
            "wait for it or stop it"
        )
        assert not lock.held
        with DriveLock("sdc", lock_dir=tmp_path):  # another drive: free
            pass
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=30) == 0
    lock.acquire()  # released: now ours
    assert (tmp_path / "pytest-ssdqual-sdb.lock").read_text() == f"{os.getpid()}\n\n"
    lock.release()
    lock.release()  # idempotent


def test_lock_is_dropped_when_the_holder_dies(tmp_path: Path) -> None:
    with lock_holder("loop3", tmp_path) as holder:
        holder.kill()  # crashed run: the kernel drops its flock
        holder.wait(timeout=30)
        with DriveLock("loop3", lock_dir=tmp_path) as lock:
            assert lock.held


def test_lock_in_one_process_two_objects(tmp_path: Path) -> None:
    with DriveLock("file-x.img", lock_dir=tmp_path):
        with pytest.raises(DeviceError, match=f"pid {os.getpid()}"):
            DriveLock("file-x.img", lock_dir=tmp_path).acquire()


def test_lock_held_by_a_sibling_worker_of_the_same_session_says_so(tmp_path: Path) -> None:
    """Found case B34: a drive's tests spread over two xdist workers of one session broke with
    "in use by another pytest-ssdqual run" -- the other "run" was the sibling worker. The
    holder's session (the shared run id) is in the lock file, so the message names the cause."""
    with DriveLock("file-x1.img", lock_dir=tmp_path, session="20261202-101500-ab12"):
        with pytest.raises(DeviceError) as info:
            DriveLock("file-x1.img", lock_dir=tmp_path, session="20261202-101500-ab12",
                      label="/t/x1.img").acquire()
        message = str(info.value)
        assert message.startswith(
            f"drive /t/x1.img is in use by another worker of this same pytest session "
            f"(pid {os.getpid()}): the drive's tests were handed to more than one "
            "pytest-xdist worker, so pytest-ssdqual's per-drive scheduling did not take effect")
        assert "pytest 9." in message and "pytest-xdist 3." in message
        assert "another pytest-ssdqual run" not in message
        with pytest.raises(DeviceError, match="another pytest-ssdqual run"):  # another session
            DriveLock("file-x1.img", lock_dir=tmp_path, session="20261202-111111-cd34").acquire()


def test_a_sibling_caught_between_its_flock_and_its_pid_write_is_still_a_sibling(
        tmp_path: Path) -> None:
    """CI (2026-12-03): a sibling xdist worker had taken the flock but not yet written its pid
    and session, and the second worker said "another pytest-ssdqual run (pid unknown)". A lock
    file that does not yet say who holds it is read again for up to a second."""
    path = tmp_path / "pytest-ssdqual-file-s.img.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held, the file still empty
    writer = threading.Timer(0.3, lambda: os.pwrite(fd, b"4242\nrun-7\n", 0))
    writer.start()
    try:
        with pytest.raises(DriveInUse) as info:
            DriveLock("file-s.img", lock_dir=tmp_path, session="run-7").acquire()
        assert info.value.sibling
        assert "another worker of this same pytest session (pid 4242)" in str(info.value)
        os.ftruncate(fd, 0)  # a holder that never says who it is: named as unknown, in time
        started = time.monotonic()
        with pytest.raises(DriveInUse, match=r"another pytest-ssdqual run \(pid unknown\)"):
            DriveLock("file-s.img", lock_dir=tmp_path, session="run-7").acquire()
        assert 0.9 <= time.monotonic() - started < 3
    finally:
        writer.join()
        os.close(fd)


def test_lock_file_name_is_sanitised(tmp_path: Path) -> None:
    lock = DriveLock("file-a b/../c.img", lock_dir=tmp_path)
    assert lock.path == tmp_path / "pytest-ssdqual-file-a_b_.._c.img.lock"


def test_lock_default_dir() -> None:
    lock = DriveLock("sdb")
    assert lock.path.parent in (Path("/run/lock"), Path(tempfile.gettempdir()))


# --------------------------------------------------------------------------- existing files


def fake_loop_sysfs(tmp_path: Path, backing: str) -> Path:
    sysfs = tmp_path / "sys"
    (sysfs / "block" / "loop7" / "loop").mkdir(parents=True)
    (sysfs / "block" / "loop7" / "loop" / "backing_file").write_text(backing + "\n")
    (sysfs / "block" / "sda").mkdir()
    return sysfs


@pytest.mark.parametrize("prefix", ["file:", ""])
def test_existing_file_needs_confirmation_by_its_absolute_path(
    tmp_path: Path, prefix: str
) -> None:
    path = tmp_path / "vm.img"
    path.write_bytes(b"precious" * 1024)
    spec = parse_drive_option(f"{prefix}{path}")
    target = DriveTarget.open(spec, confirmed_serials=(), file_size_bytes=MIB)
    assert not target.created_file
    assert target.write_refusals == (
        f"{path} (serial {path}) is not confirmed for destruction: add "
        f"--confirm-destroy={path} (the file's absolute path: it exists already and "
        "everything in it will be overwritten)",
    )
    with pytest.raises(SafetyRefusal, match=f"--confirm-destroy={path}"):
        target.assert_write_allowed()  # refresh() keeps the refusal
    wrong = DriveTarget.open(spec, confirmed_serials=("/other.img",), file_size_bytes=MIB)
    assert "do not match" in wrong.write_refusals[0]
    confirmed = DriveTarget.open(spec, confirmed_serials=(str(path),), file_size_bytes=MIB)
    assert confirmed.write_refusals == ()
    confirmed.assert_write_allowed()
    confirmed.cleanup()
    assert path.read_bytes() == b"precious" * 1024  # never removed: the plugin did not make it


def test_loop_backing_file_is_refused_even_when_confirmed(tmp_path: Path) -> None:
    path = tmp_path / "backing.img"
    path.write_bytes(b"\0" * 4096)
    sysfs = fake_loop_sysfs(tmp_path, str(path))
    target = DriveTarget.open(
        parse_drive_option(f"file:{path}"),
        confirmed_serials=(str(path),),
        file_size_bytes=MIB,
        sysfs=sysfs,
    )
    assert target.write_refusals == (
        f"{path} is the backing file of /dev/loop7: writing to it would corrupt that loop "
        "device and whatever uses it; writes are refused whatever the options (detach it "
        "first with losetup -d /dev/loop7 if it is really meant for destruction)",
    )
    with pytest.raises(SafetyRefusal, match="backing file of /dev/loop7"):
        target.assert_write_allowed()
    # detached: the confirmed file may be written
    (sysfs / "block" / "loop7" / "loop" / "backing_file").write_text("\n")
    target.assert_write_allowed()


def test_loop_backing_file_is_matched_by_inode(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    path = real / "backing.img"
    path.write_bytes(b"\0" * 4096)
    (tmp_path / "alias").symlink_to(real)  # the kernel names it one way, the user another
    sysfs = fake_loop_sysfs(tmp_path, str(tmp_path / "alias" / "backing.img"))
    target = DriveTarget.open(
        parse_drive_option(f"file:{path}"), confirmed_serials=(str(path),),
        file_size_bytes=MIB, sysfs=sysfs,
    )
    assert "backing file of /dev/loop7" in target.write_refusals[0]


def test_a_symlink_is_never_a_file_target(tmp_path: Path) -> None:
    victim = tmp_path / "victim.img"
    victim.write_bytes(b"keep")
    link = tmp_path / "scratch.img"
    link.symlink_to(victim)
    with pytest.raises(ConfigError, match="is a symlink"):
        DriveTarget.open(
            DriveSpec(raw=f"file:{link}", kind="file", path=str(link)),
            confirmed_serials=(str(victim),), file_size_bytes=MIB,
        )
    dangling = tmp_path / "dangling.img"
    dangling.symlink_to(tmp_path / "nowhere.img")
    with pytest.raises(ConfigError, match="is a symlink"):
        DriveTarget.open(
            DriveSpec(raw=f"file:{dangling}", kind="file", path=str(dangling)),
            confirmed_serials=(), file_size_bytes=MIB,
        )
    assert victim.read_bytes() == b"keep"
    assert not (tmp_path / "nowhere.img").exists()  # not created through the link


def test_file_replaced_by_a_symlink_after_open_is_refused_for_good(tmp_path: Path) -> None:
    path = tmp_path / "scratch.img"
    target = DriveTarget.open(
        parse_drive_option(f"file:{path}"), confirmed_serials=(), file_size_bytes=MIB
    )
    assert target.created_file
    target.recheck_identity()  # same file: fine
    victim = tmp_path / "victim.img"
    victim.write_bytes(b"keep")
    path.unlink()
    path.symlink_to(victim)
    with pytest.raises(DeviceError, match="is now a symlink since it was opened"):
        target.recheck_identity()
    with pytest.raises(SafetyRefusal, match="is now a symlink"):
        target.assert_write_allowed()


def test_file_replaced_by_another_file_after_open_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "scratch.img"
    target = DriveTarget.open(
        parse_drive_option(f"file:{path}"), confirmed_serials=(), file_size_bytes=MIB
    )
    path.rename(tmp_path / "moved.img")  # kept, so the new file cannot reuse its inode
    path.write_bytes(b"other")
    with pytest.raises(DeviceError, match=f"{path} was replaced by another file"):
        target.recheck_identity()
    assert not target.write_allowed
    path.unlink()
    with pytest.raises(DeviceError, match="is gone"):
        target.recheck_identity()


def test_existing_file_opens_with_size_zero_for_identify(tmp_path: Path) -> None:
    path = tmp_path / "existing.img"
    path.write_bytes(b"\0" * 8192)
    target = DriveTarget.open(parse_drive_option(str(path)), confirmed_serials=(),
                              file_size_bytes=0)
    assert target.size_bytes == 8192 and target.identity.serial == str(path)


def test_cli_identify_an_existing_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_ssdqual.cli.main import main

    path = tmp_path / "existing.img"
    path.write_bytes(b"\0" * 8192)
    assert main(["identify", f"file:{path}"]) == 0
    out = capsys.readouterr().out
    assert f"serial          {path}" in out
    assert f"--confirm-destroy={path}" in out and "writes          refused" in out
    assert {line.index(line.split()[1]) for line in out.splitlines()  # one value column
            if line[:1].isalpha()} == {16}
    assert main(["identify", str(path), "--confirm-destroy", str(path)]) == 0
    assert "writes          allowed" in capsys.readouterr().out


def test_cli_identify_takes_the_drive_spelled_as_its_error_fixes_spell_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """identify's errors come from the --drive parser and their fixes say --drive=...: that
    spelling works for identify too, and a missing or doubled drive is a usage error (4)."""
    from pytest_ssdqual.cli.main import main

    path = tmp_path / "existing.img"
    path.write_bytes(b"\0" * 8192)
    assert main(["identify", f"--drive=file:{path}"]) == 0
    assert f"serial          {path}" in capsys.readouterr().out
    missing = tmp_path / "sdb"
    assert main(["identify", str(missing)]) == 4
    err = capsys.readouterr().err
    assert f"write --drive=file:{missing} to have a scratch file created there" in err
    assert main(["identify", f"--drive=file:{missing}"]) == 0  # the fix, as written, works
    assert "does not exist yet (a file target is created by the run)" in capsys.readouterr().out
    assert main(["identify"]) == 4
    assert "identify needs one drive" in capsys.readouterr().err
    assert main(["identify", str(path), f"--drive={path}"]) == 4
    assert "identify got two drives" in capsys.readouterr().err
    assert main(["identify", f"--drive={path}", f"--drive={missing}"]) == 4
    assert "identify got two drives" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["rejudge", "RUN"], "the following arguments are required: --thresholds"),
    (["compare", "A"], "the following arguments are required: B"),
    (["turbo"], "invalid choice: 'turbo'"),
])
def test_a_bad_ssdqual_command_line_is_a_usage_error_4(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse exits 2; the exit-code table (pytest's; docs/regression-gate.md) says 4 for a
    usage error."""
    from pytest_ssdqual.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 4
    assert message in capsys.readouterr().err


def _a_block_device_node() -> str:
    """A real block device node (stat only, never opened): a loop device node, or /dev/ram0."""
    for name in sorted(os.listdir("/dev")):
        path = f"/dev/{name}"
        with contextlib.suppress(OSError):
            if (name.startswith("loop") or name.startswith("ram")) and \
                    stat.S_ISBLK(os.stat(path).st_mode):
                return path
    pytest.skip("no block device node to stat here")


@pytest.mark.parametrize(("kernel_name", "needle", "fix"), [
    ("loop5", "has no image attached (size 0)", "losetup -f --show --direct-io=on"),
    ("sdz", "has no medium (size 0)", "insert the medium"),
])
def test_a_block_device_of_size_0_is_a_usage_error(tmp_path: Path, kernel_name: str,
                                                    needle: str, fix: str) -> None:
    """Before: a loop device with nothing attached passed the option check, every test then
    broke on it (ERROR, exit 1 "drive failed"), where a missing /dev/sdb is a usage error."""
    node = _a_block_device_node()
    rdev = os.stat(node).st_rdev
    tree = FakeTree(tmp_path)
    tree.disk(kernel_name, f"{os.major(rdev)}:{os.minor(rdev)}", sectors=0)
    with pytest.raises(ConfigError) as info:
        parse_drive_option(node, sysfs=tree.sysfs)
    assert info.value.key == "--drive"
    assert f"{node} {needle}" in str(info.value)
    assert info.value.fix is not None and fix in info.value.fix
    tree2 = FakeTree(tmp_path / "sized")  # the same node with an image attached: accepted
    tree2.disk(kernel_name, f"{os.major(rdev)}:{os.minor(rdev)}", sectors=2048)
    assert parse_drive_option(node, sysfs=tree2.sysfs) == DriveSpec(node, "block", node)
