"""The direct-I/O unit of a file: the smallest offset and length alignment ``O_DIRECT`` I/O to
it needs, which a file target's transfers must be whole multiples of.

A file on a file system over a 4096-byte-sector device (a 4Kn drive, a loop device set up with
``--sector-size 4096``) refuses 512-byte direct I/O with ``EINVAL`` once data is written, so a
file target cannot be taken as 512-byte aligned. The unit is read, in this order:

1. ``statx(2)`` with ``STATX_DIOALIGN`` (Linux >= 6.1; glibc >= 2.28 has the ``statx``
   wrapper): ``stx_dio_offset_align``, when the kernel returns the mask bit and a non-zero
   value (0 means the file system gives no direct-I/O figure for this file).
2. The logical block size of the block device holding the file: ``st_dev`` ->
   ``/sys/dev/block/MAJ:MIN/queue/logical_block_size``, or the parent disk's ``queue/`` for a
   partition (a partition's sysfs folder has no ``queue/``).
3. 512 bytes (the smallest logical sector there is), when neither answers (tmpfs, a file
   system without a block device of its own such as btrfs' anonymous ``st_dev``).

Python 3.11 has no ``os.statx``; :func:`statx_dio_offset_align` calls libc's through ctypes.

Sources: statx(2) (``STATX_DIOALIGN``, ``stx_dio_offset_align``, ``struct statx`` layout from
``include/uapi/linux/stat.h``), Linux ``Documentation/ABI/stable/sysfs-block``
(``queue/logical_block_size``), open(2) NOTES "O_DIRECT".
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "DEFAULT_DIO_ALIGN_BYTES",
    "STATX_DIOALIGN",
    "device_logical_block_bytes",
    "dio_alignment",
    "statx_dio_offset_align",
]

#: ``STATX_DIOALIGN`` (``include/uapi/linux/stat.h``, Linux 6.1): want ``stx_dio_*_align``.
STATX_DIOALIGN = 0x2000
#: The unit assumed when neither statx nor the backing device gives one.
DEFAULT_DIO_ALIGN_BYTES = 512
_AT_FDCWD = -100


class _StatxTimestamp(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_int64), ("tv_nsec", ctypes.c_uint32),
                ("reserved", ctypes.c_int32)]


class _Statx(ctypes.Structure):
    """``struct statx`` (256 bytes) up to ``stx_dio_offset_align``, the rest spare."""

    _fields_ = [
        ("stx_mask", ctypes.c_uint32), ("stx_blksize", ctypes.c_uint32),
        ("stx_attributes", ctypes.c_uint64), ("stx_nlink", ctypes.c_uint32),
        ("stx_uid", ctypes.c_uint32), ("stx_gid", ctypes.c_uint32),
        ("stx_mode", ctypes.c_uint16), ("spare0", ctypes.c_uint16),
        ("stx_ino", ctypes.c_uint64), ("stx_size", ctypes.c_uint64),
        ("stx_blocks", ctypes.c_uint64), ("stx_attributes_mask", ctypes.c_uint64),
        ("stx_atime", _StatxTimestamp), ("stx_btime", _StatxTimestamp),
        ("stx_ctime", _StatxTimestamp), ("stx_mtime", _StatxTimestamp),
        ("stx_rdev_major", ctypes.c_uint32), ("stx_rdev_minor", ctypes.c_uint32),
        ("stx_dev_major", ctypes.c_uint32), ("stx_dev_minor", ctypes.c_uint32),
        ("stx_mnt_id", ctypes.c_uint64),
        ("stx_dio_mem_align", ctypes.c_uint32), ("stx_dio_offset_align", ctypes.c_uint32),
        ("spare3", ctypes.c_uint64 * 12),
    ]


@functools.cache
def _libc_statx() -> Callable[..., int] | None:
    """libc's ``statx``, looked up once per process: ``ctypes.util.find_library`` runs
    ``ldconfig -p`` each time (1.3 ms, and a file target is identified again before every fio
    run)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    except OSError:
        return None
    fn = getattr(libc, "statx", None)  # glibc >= 2.28
    if fn is None:
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint,
                   ctypes.POINTER(_Statx)]
    fn.restype = ctypes.c_int
    return fn


def statx_dio_offset_align(path: str) -> int | None:
    """``stx_dio_offset_align`` of ``path`` in bytes from ``statx(2)`` with ``STATX_DIOALIGN``,
    or None when libc has no ``statx``, the call fails, the kernel does not return the mask bit
    (before Linux 6.1, or a file system that does not report it), or the value is 0."""
    fn = _libc_statx()
    if fn is None:
        return None
    buf = _Statx()
    if fn(_AT_FDCWD, os.fsencode(path), 0, STATX_DIOALIGN, ctypes.byref(buf)) != 0:
        return None
    if not buf.stx_mask & STATX_DIOALIGN or buf.stx_dio_offset_align <= 0:
        return None
    return int(buf.stx_dio_offset_align)


def device_logical_block_bytes(st_dev: int, *, sysfs: Path = Path("/sys")) -> int | None:
    """Logical block size in bytes of the block device ``st_dev`` (``os.stat().st_dev``):
    ``SYSFS/dev/block/MAJ:MIN/queue/logical_block_size``, else the parent folder's (a
    partition), or None when ``st_dev`` is no block device in sysfs (major 0: tmpfs, btrfs)
    or the value is unreadable."""
    major, minor = os.major(st_dev), os.minor(st_dev)
    if major == 0:
        return None
    node = sysfs / "dev" / "block" / f"{major}:{minor}"
    try:
        base = node.resolve(strict=True)
    except OSError:
        return None
    for folder in (base, base.parent):
        try:
            text = (folder / "queue" / "logical_block_size").read_text(encoding="ascii")
        except OSError:
            continue
        value = text.strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
        return None
    return None


def dio_alignment(
    path: str,
    *,
    sysfs: Path = Path("/sys"),
    statx: Callable[[str], int | None] | None = None,
) -> tuple[int, str]:
    """The direct-I/O unit of the file ``path`` and where it came from (module docstring).

    Args:
        path: an existing file.
        sysfs: sysfs mount point.
        statx: ``path -> stx_dio_offset_align`` or None; default :func:`statx_dio_offset_align`
            (looked up at each call).

    Returns:
        ``(bytes, source)``: e.g. ``(4096, 'statx STATX_DIOALIGN: 4096-byte direct I/O')``,
        ``(4096, 'direct I/O in 4096-byte units: logical block size of device 7:3')`` or
        ``(512, 'direct I/O in 512-byte units assumed: ...')``.

    Raises:
        OSError: ``path`` cannot be stat'ed.
    """
    found = (statx or statx_dio_offset_align)(path)
    if found is not None:
        return found, f"statx STATX_DIOALIGN: {found}-byte direct I/O"
    st_dev = os.stat(path).st_dev
    dev = f"{os.major(st_dev)}:{os.minor(st_dev)}"
    logical = device_logical_block_bytes(st_dev, sysfs=sysfs)
    if logical is not None:
        return logical, f"direct I/O in {logical}-byte units: logical block size of device {dev}"
    return DEFAULT_DIO_ALIGN_BYTES, (
        f"direct I/O in {DEFAULT_DIO_ALIGN_BYTES}-byte units assumed: no STATX_DIOALIGN and "
        f"no block device {dev} in sysfs")
