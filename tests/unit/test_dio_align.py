"""The direct-I/O unit of a file target (``drive.dio_align``): statx ``STATX_DIOALIGN`` first,
then the backing device's logical block size from a fake sysfs tree (``dev/block/MAJ:MIN``
links as the kernel lays them out, a partition's ``queue/`` on its parent disk), then 512; and
the file target's identity, the transfer sizes and a plain 512-byte pattern that follow from it
(the found case B35: a file on ext4 over a 4Kn device, 512-byte direct I/O fails with EINVAL)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_ssdqual.drive import dio_align
from pytest_ssdqual.drive.dio_align import (
    device_logical_block_bytes,
    dio_alignment,
    statx_dio_offset_align,
)
from pytest_ssdqual.drive.identity import identify
from pytest_ssdqual.methodology.transfer_size import sizes_for

from .test_identity import SATA_PATH, FakeSysfs


def _dev_link(fake: FakeSysfs, major: int, minor: int, real: Path) -> None:
    link = fake.root / "dev" / "block" / f"{major}:{minor}"
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(os.path.relpath(real, link.parent))


@pytest.fixture
def fake_sys(tmp_path: Path) -> FakeSysfs:
    return FakeSysfs(tmp_path / "sys")


def test_logical_block_size_of_the_backing_disk_and_of_a_partition(fake_sys: FakeSysfs) -> None:
    disk = fake_sys.disk("sdc", SATA_PATH, sectors=1 << 20, logical=4096, physical=4096)
    fake_sys.partition(disk, "sdc1")  # no queue/ of its own: the disk's is used
    _dev_link(fake_sys, 8, 32, disk)
    _dev_link(fake_sys, 8, 33, disk / "sdc1")
    assert device_logical_block_bytes(os.makedev(8, 32), sysfs=fake_sys.root) == 4096
    assert device_logical_block_bytes(os.makedev(8, 33), sysfs=fake_sys.root) == 4096
    assert device_logical_block_bytes(os.makedev(8, 34), sysfs=fake_sys.root) is None  # absent
    assert device_logical_block_bytes(os.makedev(0, 27), sysfs=fake_sys.root) is None  # tmpfs


def test_unreadable_logical_block_size_is_none(fake_sys: FakeSysfs) -> None:
    disk = fake_sys.disk("sdd", SATA_PATH, sectors=1 << 20)
    (disk / "queue" / "logical_block_size").write_text("garbage\n")
    _dev_link(fake_sys, 8, 48, disk)
    assert device_logical_block_bytes(os.makedev(8, 48), sysfs=fake_sys.root) is None


def _file_on(fake_sys: FakeSysfs, tmp_path: Path, logical: int) -> Path:
    """A file whose st_dev is linked in the fake sysfs to a disk with ``logical``-byte
    sectors."""
    f = tmp_path / "target.img"
    f.write_bytes(b"\0" * 65536)
    st_dev = os.stat(f).st_dev
    disk = fake_sys.disk("vdz", SATA_PATH, sectors=1 << 20, logical=logical, physical=logical)
    _dev_link(fake_sys, os.major(st_dev), os.minor(st_dev), disk)
    return f


def test_statx_wins_over_the_device(fake_sys: FakeSysfs, tmp_path: Path) -> None:
    f = _file_on(fake_sys, tmp_path, 512)
    assert dio_alignment(str(f), sysfs=fake_sys.root, statx=lambda p: 4096) == (
        4096, "statx STATX_DIOALIGN: 4096-byte direct I/O")


def test_without_statx_the_backing_device_gives_the_unit(fake_sys: FakeSysfs,
                                                         tmp_path: Path) -> None:
    f = _file_on(fake_sys, tmp_path, 4096)
    st_dev = os.stat(f).st_dev
    dev = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    assert dio_alignment(str(f), sysfs=fake_sys.root, statx=lambda p: None) == (
        4096, f"direct I/O in 4096-byte units: logical block size of device {dev}")


def test_neither_statx_nor_a_device_assumes_512(tmp_path: Path) -> None:
    f = tmp_path / "target.img"
    f.write_bytes(b"\0" * 4096)
    st_dev = os.stat(f).st_dev
    align, source = dio_alignment(str(f), sysfs=tmp_path / "no-sys", statx=lambda p: None)
    assert (align, source) == (512, "direct I/O in 512-byte units assumed: no STATX_DIOALIGN "
                               f"and no block device {os.major(st_dev)}:{os.minor(st_dev)} "
                               "in sysfs")


def test_statx_through_libc_reads_this_host(tmp_path: Path) -> None:
    """The ctypes call on a real file: the kernel's figure, or None where it gives none
    (before Linux 6.1, a file system without it); never a crash, never a made-up 0."""
    f = tmp_path / "target.img"
    f.write_bytes(b"\0" * 4096)
    found = statx_dio_offset_align(str(f))
    assert found is None or (found >= 512 and found & (found - 1) == 0)
    assert statx_dio_offset_align(str(tmp_path / "missing")) is None


def test_file_identity_takes_the_unit_and_the_sweep_skips_below_it(
    fake_sys: FakeSysfs, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a file target was 512-byte aligned whatever held it (B35: 512 on ext4 over a
    4Kn loop device, and the sweep's seq_read_512 failed with EINVAL)."""
    f = _file_on(fake_sys, tmp_path, 4096)
    monkeypatch.setattr(dio_align, "statx_dio_offset_align", lambda p: None)
    ident = identify(str(f), kind="file", sysfs=fake_sys.root)
    assert ident.logical_sector_bytes == 4096
    assert ident.physical_sector_bytes >= 4096
    assert ident.sources[0] == "os.stat"
    assert ident.sources[1].startswith("direct I/O in 4096-byte units: logical block size")
    assert sizes_for(ident.logical_sector_bytes) == (
        [4096 << i for i in range(12)], [512, 1024, 2048])
