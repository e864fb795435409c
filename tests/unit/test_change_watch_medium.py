"""``drive.change_watch``: which medium the identity check between two runs trusts, on a fake
sysfs tree. The drive is identified again unless the device number, ``diskseq``, size, the
sysfs device and the drive's own names there are those of this test's last identity -- and
always for a USB drive or a removable disk, whose ``diskseq`` need not move when the drive
in the dock or slot is swapped."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_ssdqual.drive.change_watch import ChangeWatch, identify_between_runs


class Tree:
    """``/sys/block/sdb`` with ``removable``, ``size``, ``diskseq`` and a ``device`` link to a
    SCSI device holding ``wwid`` and ``vpd_pg80``; a node (a regular file: ``st_rdev`` 0)."""

    def __init__(self, root: Path, transport: str = "SATA") -> None:
        self.root = root
        self.disk = root / "sys" / "block" / "sdb"
        self.disk.mkdir(parents=True)
        for name, text in (("removable", "0\n"), ("size", "1953525168\n"), ("diskseq", "9\n")):
            (self.disk / name).write_text(text)
        self.scsi = self.scsi_device("2:0:0:0", "naa.5002538e40a1b2c3",
                                     b"\x00\x80\x00\x0fS4EVNF0M123456A")
        self.point_at(self.scsi)
        self.node = root / "sdb-node"
        self.node.write_text("")
        self.reads = 0
        self.watch = ChangeWatch(str(self.node), "sdb", sysfs=root / "sys",
                                 mountinfo=root / "none", swaps=root / "none",
                                 transport=transport)

    def scsi_device(self, name: str, wwid: str, page80: bytes) -> Path:
        device = self.root / "sys" / "devices" / "host2" / name
        device.mkdir(parents=True)
        (device / "wwid").write_text(wwid + "\n")
        (device / "vpd_pg80").write_bytes(page80)
        return device

    def point_at(self, device: Path) -> None:
        link = self.disk / "device"
        if link.is_symlink():
            link.unlink()
        os.symlink(os.path.relpath(device, self.disk), link)

    def between(self) -> int:
        """One check before a run; returns how many times the drive was identified so far."""
        identify_between_runs(self.watch, self._identify)
        return self.reads

    def _identify(self) -> None:
        self.reads += 1


def test_a_fixed_disk_is_identified_once_while_nothing_changes(tmp_path: Path) -> None:
    tree = Tree(tmp_path)
    assert [tree.between() for _ in range(3)] == [1, 1, 1]
    assert tree.watch.medium() == (0, "9", "1953525168\n", str(tree.scsi),
                                   "naa.5002538e40a1b2c3\n", None,
                                   b"\x00\x80\x00\x0fS4EVNF0M123456A")


CHANGES: dict[str, Callable[[Tree], object]] = {
    "another size": lambda t: (t.disk / "size").write_text("976773168\n"),
    "another SCSI device behind the disk": lambda t: t.point_at(
        t.scsi_device("3:0:0:0", "naa.5002538e40a1b2c3", b"\x00\x80\x00\x0fS4EVNF0M123456A")),
    "another wwid": lambda t: (t.scsi / "wwid").write_text("naa.5002538e40ffffff\n"),
    "another unit serial page": lambda t: (t.scsi / "vpd_pg80").write_bytes(
        b"\x00\x80\x00\x0fS4EVNF0M999999Z"),
    "an NVMe namespace wwid appears": lambda t: (t.disk / "wwid").write_text("eui.00253\n"),
    "the wwid gone": lambda t: (t.scsi / "wwid").unlink(),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_change_of_what_names_the_drive_identifies_it_again(tmp_path: Path,
                                                              change: str) -> None:
    tree = Tree(tmp_path)
    assert tree.between() == 1
    assert tree.between() == 1
    CHANGES[change](tree)  # diskseq unchanged
    assert tree.between() == 2
    assert tree.between() == 2


def test_a_usb_drive_is_identified_before_every_run(tmp_path: Path) -> None:
    """A USB-SATA bridge is the disk the kernel sees: a drive swapped in the dock may keep
    its diskseq, size and bridge names."""
    tree = Tree(tmp_path, transport="USB")
    assert tree.watch.medium() is None
    assert [tree.between() for _ in range(3)] == [1, 2, 3]


@pytest.mark.parametrize("removable", ["1\n", None])
def test_a_removable_or_unknown_slot_is_identified_before_every_run(
        tmp_path: Path, removable: str | None) -> None:
    tree = Tree(tmp_path)
    if removable is None:
        (tree.disk / "removable").unlink()
    else:
        (tree.disk / "removable").write_text(removable)
    assert tree.watch.medium() is None
    assert [tree.between() for _ in range(3)] == [1, 2, 3]
