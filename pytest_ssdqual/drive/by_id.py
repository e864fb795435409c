"""A drive's own ``/dev/disk/by-id`` link: the name udev gives it from what the drive reports
(its serial: ``nvme-MODEL_SERIAL``, ``ata-MODEL_SERIAL``; its world-wide name: ``wwn-0x...``,
``nvme-eui.…``), so the name follows the drive, not the slot.

A remote drive's fio job opens this link (``drive.remote_target``): when another drive is in
the slot, the link is gone and fio fails to open it instead of writing the wrong drive. Loop
devices, zram and files have no such link (udev's ``60-persistent-storage.rules`` makes none
for them): :func:`by_id_link` returns None and the device is opened by path.

Source: udev ``60-persistent-storage.rules`` (systemd 252), the link names it makes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["BY_ID", "by_id_link"]

BY_ID = Path("/dev/disk/by-id")

#: Link name prefixes made from a drive's serial, in order of preference (the serial readable
#: in the name), then those made from a world-wide name.
_SERIAL_PREFIXES = ("nvme-", "ata-", "scsi-", "usb-", "mmc-", "ieee1394-", "memstick-")
_WWN_PREFIXES = ("wwn-", "nvme-eui.", "nvme-nvme.", "scsi-3", "scsi-2", "scsi-1")
#: Links that name a stack on top of drives, never one drive.
_NOT_A_DRIVE = ("dm-", "md-", "lvm-", "raid-", "bcache-")


def _rank(name: str, serial: str) -> tuple[int, str]:
    if serial and serial in name and name.startswith(_SERIAL_PREFIXES):
        return 0, name
    if name.startswith(_WWN_PREFIXES):
        return 1, name
    return 2, name


def by_id_link(device: str, serial: str = "", by_id_dir: Path = BY_ID) -> str | None:
    """The ``by_id_dir`` link (absolute path) that resolves to ``device``, or None when none
    does (a loop device, zram, a file, or a host without udev).

    Args:
        device: a block device path (``/dev/nvme0n1``; a link to one resolves first).
        serial: the drive's serial: a link that contains it is preferred, then a world-wide
            name link, then any other (name order); partition links (``-partN``) and links
            of device-mapper or md stacks are never taken.
        by_id_dir: the folder of links (for tests).
    """
    real = os.path.realpath(device)
    try:
        names = os.listdir(by_id_dir)
    except OSError:
        return None
    found = []
    for name in names:
        if re.search(r"-part\d+$", name) or name.startswith(_NOT_A_DRIVE):
            continue
        if os.path.realpath(by_id_dir / name) == real:
            found.append(name)
    if not found:
        return None
    return str(by_id_dir / min(found, key=lambda n: _rank(n, serial)))
