"""Read-only inspection of a Linux block device: partitions, holders, mounts, swap, system disk.

Only facts live here (what the kernel says about a device); the policy that turns them into
write refusals is :func:`pytest_ssdqual.drive.safety.write_refusal_reasons`.

Nothing in this module writes anything or opens a device for writing. Every source is
injectable, so the unit tests run on a fake tree:

* ``sysfs`` -- ``/sys`` (Linux ``Documentation/ABI/stable/sysfs-block``): ``block/<disk>/dev``
  (``"MAJ:MIN"``), ``size`` (512-byte sectors, whatever the logical block size), ``ro``
  (``0``/``1``), ``holders/`` and ``slaves/`` (device-mapper, md, bcache stacks),
  ``<disk>/<part>/partition`` (present only on partitions), ``loop/backing_file`` (loop devices),
  ``queue/zoned`` (``none``, ``host-aware`` or ``host-managed``; Linux
  ``Documentation/ABI/stable/sysfs-block``, zoned block devices since 4.10).
* ``mountinfo`` and ``swaps`` -- ``/proc/self/mountinfo`` and ``/proc/swaps``, read by
  :mod:`~pytest_ssdqual.drive.mounts`. btrfs and some others report an anonymous ``0:N``
  device, so for major 0 the mount source (``/dev/sdb1``) is used instead.

A device path is mapped to its sysfs entry by the ``st_rdev`` of the device node. When the path
does not exist (unit tests on a fake tree), its last component is taken as the kernel name.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.drive.mounts import MountEntry, read_mountinfo, read_swaps, root_device
from pytest_ssdqual.drive.path_stat import stat_or_none
from pytest_ssdqual.errors import ConfigError, DeviceError

#: Mount points whose device counts as the running system's disk, besides ``/`` itself.
SYSTEM_MOUNT_POINTS: tuple[str, ...] = ("/", "/boot", "/boot/efi", "/usr", "/var")

#: The pseudo mount point listed in :attr:`BlockDeviceState.mounts` when swap is on the device.
SWAP = "[swap]"


@dataclass(frozen=True)
class BlockDeviceState:
    """What the kernel says about one whole-disk block device, read at one moment.

    Attributes:
        name: kernel name, e.g. ``sdb``, ``loop3``, ``nvme0n1``, ``dm-0``.
        major: device major number; minor: device minor number.
        partitions: kernel names of its partitions, sorted, e.g. ``("sdb1", "sdb2")``.
        holders: devices stacked on it or on one of its partitions (``dm-0``, ``md127``), from
            ``/sys/block/<name>/holders`` and ``/sys/block/<name>/<part>/holders``.
        mounts: mount points of the device or of any partition (``/proc/self/mountinfo``), in
            mountinfo order without repeats, plus ``"[swap]"`` when it or a partition is in
            ``/proc/swaps``.
        is_system_disk: it holds ``/`` (or ``/boot``, ``/usr``, ``/var``): directly, through a
            partition, or below a dm/md/loop stack that does.
        read_only: ``/sys/block/<name>/ro`` is 1.
        zoned: ``/sys/block/<name>/queue/zoned``: ``"none"`` (a conventional drive, also when
            the file is missing: kernels before 4.10), ``"host-aware"`` (random writes allowed)
            or ``"host-managed"`` (NVMe ZNS, SMR: writes only sequential at each zone's write
            pointer).
    """

    name: str
    major: int
    minor: int
    partitions: tuple[str, ...]
    holders: tuple[str, ...]
    mounts: tuple[str, ...]
    is_system_disk: bool
    read_only: bool
    zoned: str = "none"

    @property
    def host_managed(self) -> bool:
        """True for a host-managed zoned device (``queue/zoned`` is ``host-managed``)."""
        return self.zoned == "host-managed"

    @property
    def device(self) -> str:
        """The conventional device node path, ``/dev/<name>``."""
        return f"/dev/{self.name}"


@dataclass(frozen=True)
class SysfsNode:
    """One block device known to sysfs: a whole disk or a partition of one.

    Attributes:
        name: kernel name (``sdb``, ``sdb1``).
        dev: ``(major, minor)``.
        disk: kernel name of the whole disk (equal to ``name`` for a disk).
        path: its directory in sysfs (``/sys/block/sdb`` or ``/sys/block/sdb/sdb1``).
    """

    name: str
    dev: tuple[int, int]
    disk: str
    path: Path

    @property
    def is_partition(self) -> bool:
        """True for a partition (sysfs has a ``partition`` file for it)."""
        return self.name != self.disk


class SysfsIndex:
    """Every disk and partition under ``<sysfs>/block``, by kernel name and by device number.

    Args:
        sysfs: the sysfs mount point (``/sys``), or a fake tree with the same layout.

    Raises:
        DeviceError: ``<sysfs>/block`` cannot be read.
    """

    def __init__(self, sysfs: Path = Path("/sys")) -> None:
        self.sysfs = Path(sysfs)
        self.by_name: dict[str, SysfsNode] = {}
        self.by_dev: dict[tuple[int, int], SysfsNode] = {}
        block = self.sysfs / "block"
        try:
            disks = sorted(block.iterdir())
        except OSError as exc:
            raise DeviceError(f"cannot list block devices in {block}: {exc}") from exc
        for disk_dir in disks:
            dev = _read_dev(disk_dir / "dev")
            if dev is None:
                continue
            self._add(SysfsNode(disk_dir.name, dev, disk_dir.name, disk_dir))
            for sub in sorted(_subdirs(disk_dir)):
                if (sub / "partition").is_file():
                    part_dev = _read_dev(sub / "dev")
                    if part_dev is not None:
                        self._add(SysfsNode(sub.name, part_dev, disk_dir.name, sub))

    def _add(self, node: SysfsNode) -> None:
        self.by_name[node.name] = node
        self.by_dev[node.dev] = node

    def partitions_of(self, disk: str) -> tuple[str, ...]:
        """Kernel names of ``disk``'s partitions, sorted naturally (``sdb2`` before ``sdb10``)."""
        names = [n.name for n in self.by_name.values() if n.disk == disk and n.is_partition]
        return tuple(sorted(names, key=_natural_key))

    def lookup_path(self, path: str) -> SysfsNode:
        """The sysfs entry of the block device node at ``path`` (symlinks followed).

        An existing path is matched by its ``st_rdev``; a missing one by its last component.

        Raises:
            DeviceError: the path is not a block device, or sysfs does not know it.
        """
        st = stat_or_none(path, error=lambda exc: DeviceError(f"cannot stat {path}: {exc}"))
        if st is None:
            name = os.path.basename(os.path.normpath(path))
            node = self.by_name.get(name)
            if node is None:
                raise DeviceError(
                    f"{path} does not exist and {self.sysfs}/block has no device {name!r}: "
                    "the drive is gone or was renamed (list drives with lsblk -d)"
                )
            return node
        if not stat.S_ISBLK(st.st_mode):
            raise DeviceError(f"{path} is not a block device")
        dev = (os.major(st.st_rdev), os.minor(st.st_rdev))
        found = self.by_dev.get(dev)
        if found is None:
            raise DeviceError(
                f"{path} is block device {dev[0]}:{dev[1]} but {self.sysfs}/block has no entry "
                "for it: the drive is gone or sysfs is not mounted"
            )
        return found

    def resolve_source(self, source: str) -> SysfsNode | None:
        """The node behind a mount source or swap file name such as ``/dev/sdb1``, else None.

        Regular files (swap files), pseudo sources (``tmpfs``, ``overlay``) and unknown paths
        give None.
        """
        if not source.startswith("/"):
            return None
        try:
            st = os.stat(source)
        except OSError:
            st = None
        if st is not None:
            if not stat.S_ISBLK(st.st_mode):
                return None
            return self.by_dev.get((os.major(st.st_rdev), os.minor(st.st_rdev)))
        if source.startswith("/dev/"):
            return self.by_name.get(os.path.basename(source))
        return None

    def lower(self, node: SysfsNode) -> Iterator[SysfsNode]:
        """Devices directly below ``node``: its disk (for a partition), its ``slaves/``, and the
        block device a loop device is backed by (``loop/backing_file``)."""
        if node.is_partition:
            disk = self.by_name.get(node.disk)
            if disk is not None:
                yield disk
        for name in _listdir(node.path / "slaves"):
            slave = self.by_name.get(name)
            if slave is not None:
                yield slave
        backing = _read_text(node.path / "loop" / "backing_file")
        if backing:
            backing_node = self.resolve_source(backing.removesuffix(" (deleted)"))
            if backing_node is not None:
                yield backing_node

    def closure_disks(self, start: Iterable[SysfsNode]) -> set[str]:
        """Whole-disk names of ``start`` and of everything below it (see :meth:`lower`)."""
        seen: set[str] = set()
        todo = list(start)
        disks: set[str] = set()
        while todo:
            node = todo.pop()
            if node.name in seen:
                continue
            seen.add(node.name)
            disks.add(node.disk)
            todo.extend(self.lower(node))
        return disks


def _mount_node(index: SysfsIndex, entry: MountEntry) -> SysfsNode | None:
    node = index.by_dev.get(entry.dev) if entry.dev[0] != 0 else None
    return node if node is not None else index.resolve_source(entry.source)


def system_disks(
    index: SysfsIndex, mounts: list[MountEntry], root_dev: tuple[int, int]
) -> set[str]:
    """Whole disks that hold ``/`` (``root_dev``) or a :data:`SYSTEM_MOUNT_POINTS` mount,
    directly, through a partition, or below a dm/md/loop stack."""
    start: list[SysfsNode] = []
    if root_dev in index.by_dev:
        start.append(index.by_dev[root_dev])
    for entry in mounts:
        if entry.mount_point in SYSTEM_MOUNT_POINTS:
            node = _mount_node(index, entry)
            if node is not None:
                start.append(node)
    return index.closure_disks(start)


def inspect_block_device(
    path: str,
    *,
    sysfs: Path = Path("/sys"),
    mountinfo: Path = Path("/proc/self/mountinfo"),
    swaps: Path = Path("/proc/swaps"),
    root_dev: tuple[int, int] | None = None,
) -> BlockDeviceState:
    """Inspect the whole-disk block device at ``path``, read-only.

    Args:
        path: device node (``/dev/sdb``, a ``/dev/disk/by-id/...`` link); on a fake tree a
            path whose last component is the kernel name.
        sysfs, mountinfo, swaps: where to read (see the module docstring).
        root_dev: ``(major, minor)`` of ``/``; defaults to ``os.stat('/').st_dev``.

    Returns:
        The device's :class:`BlockDeviceState`.

    Raises:
        ConfigError: ``path`` is a partition, not a whole disk (key ``--drive``).
        DeviceError: not a block device, unknown to sysfs, or a source cannot be read.
    """
    index = SysfsIndex(sysfs)
    node = index.lookup_path(path)
    if node.is_partition:
        raise partition_error(path, node)
    mounts = read_mountinfo(mountinfo)
    partitions = index.partitions_of(node.name)
    members = {node.name, *partitions}

    holders: list[str] = []
    for name in (node.name, *partitions):
        for holder in _listdir(index.by_name[name].path / "holders"):
            if holder not in holders:
                holders.append(holder)

    mount_points: list[str] = []
    for entry in mounts:
        mounted = _mount_node(index, entry)
        if mounted is not None and mounted.name in members:
            if entry.mount_point not in mount_points:
                mount_points.append(entry.mount_point)
    for swap in read_swaps(swaps):
        swap_node = index.resolve_source(swap)
        if swap_node is not None and swap_node.name in members and SWAP not in mount_points:
            mount_points.append(SWAP)

    if root_dev is None:
        root_dev = root_device()
    system = system_disks(index, mounts, root_dev)
    # The device is a system disk when it is one, or when it sits on one (a dm/loop device over
    # the system disk writes to it).
    is_system = bool(index.closure_disks([node]) & system)

    return BlockDeviceState(
        name=node.name,
        major=node.dev[0],
        minor=node.dev[1],
        partitions=partitions,
        holders=tuple(holders),
        mounts=tuple(mount_points),
        is_system_disk=is_system,
        read_only=_read_text(node.path / "ro") == "1",
        zoned=_read_text(node.path / "queue" / "zoned") or "none",
    )


def disk_size_bytes(name: str, *, sysfs: Path = Path("/sys")) -> int:
    """Size of disk ``name`` in bytes: ``/sys/block/<name>/size`` (512-byte sectors) * 512.

    Raises:
        DeviceError: the size cannot be read.
    """
    text = _read_text(Path(sysfs) / "block" / name / "size")
    if text is None or not text.isdigit():
        raise DeviceError(f"cannot read the size of /dev/{name} from {sysfs}/block/{name}/size")
    return int(text) * 512


def partition_error(path: str, node: SysfsNode) -> ConfigError:
    """The ``--drive`` error for a partition given where a whole disk is needed."""
    return ConfigError(
        f"{path} is partition {node.name} of {node.disk}: give the whole disk",
        key="--drive",
        fix=f"use --drive=/dev/{node.disk} (this tool tests whole drives, never partitions)",
    )


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _read_dev(path: Path) -> tuple[int, int] | None:
    text = _read_text(path)
    if not text:
        return None
    major, _, minor = text.partition(":")
    if not (major.isdigit() and minor.isdigit()):
        return None
    return (int(major), int(minor))


def _listdir(path: Path) -> list[str]:
    try:
        return sorted(os.listdir(path), key=_natural_key)
    except OSError:
        return []


def _subdirs(path: Path) -> list[Path]:
    """The real folders in ``path`` (no symlinks), from ``os.scandir``'s entry types: sysfs
    gives them without a ``stat`` per entry (the index walks every block device before every
    write run: 5.5 ms with two stats an entry, 2.1 ms now)."""
    try:
        with os.scandir(path) as entries:
            return [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _natural_key(name: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]
