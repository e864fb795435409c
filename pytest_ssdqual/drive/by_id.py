"""A drive's own ``/dev/disk/by-id`` link: a name udev gives it from what the drive itself
reports -- its serial (``ata-MODEL_SERIAL``, ``scsi-SATA_MODEL_SERIAL``, for an NVMe namespace
``nvme-MODEL_SERIAL_NSID``) or its world-wide name (``wwn-0x...``, ``scsi-3...``, an NVMe
namespace's ``nvme-eui.…``, ``nvme-uuid.…`` or ``nvme-nvme.…``) -- so the name follows that
drive (that namespace), not the slot it sits in.

A remote drive's fio job opens this link (``drive.remote_target``): when another drive is in
the slot, the link is gone and fio fails to open it instead of writing the wrong drive.

Links not taken, because they can name another device than the one identified:

* NVMe ``nvme-MODEL_SERIAL`` without a namespace suffix: every namespace of a drive has the
  same serial, and udev moves that link to whichever namespace it processed last (systemd
  issue #31448; systemd >= 254 adds ``nvme-MODEL_SERIAL_NSID``, one per namespace). An
  ``nvme-..._N`` link is taken only when ``N`` is the namespace's sysfs ``nsid``.
* ``usb-...`` and ``ieee1394-...`` links (made from the USB or FireWire bridge's own serial,
  e.g. ``usb-JMicron_Generic_0123456789ABCDEF-0:0``) and any other link that holds neither
  the drive's serial nor a world-wide name: they belong to the dock or slot, and another drive
  put in it gets the same name.
  (A serial link is taken when it holds the serial the identity read: when that is a
  bridge's own, for a dock without pass-through to the drive, link and identity both name
  the slot.)
* Partition links (``-partN``) and those of device-mapper, md, LVM or bcache stacks.

Loop devices, zram and files have no by-id link (udev makes none for them), nor has a drive
with only the links above: :func:`by_id_link` returns None and the device is opened by path
(the report says it is not re-checkable by fio).

Sources: udev ``60-persistent-storage.rules`` (systemd 252; systemd commit c5ba7a2a, in 254,
for the ``_NSID`` links), Linux ``drivers/nvme/host`` (a namespace's sysfs ``nsid`` and
``wwid``: ``uuid.``, ``eui.`` from its own NGUID or EUI-64, else ``nvme.`` with the nsid).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["BY_ID", "by_id_link"]

BY_ID = Path("/dev/disk/by-id")

#: Link name prefixes made from the drive's own serial (taken when it holds the serial).
_SERIAL_PREFIXES = ("ata-", "scsi-", "mmc-", "memstick-")
#: Link name prefixes made from a world-wide name (NAA or EUI-64, an NVMe namespace's wwid).
_WWN_PREFIXES = ("wwn-", "scsi-3", "scsi-2", "nvme-eui.", "nvme-uuid.", "nvme-nvme.")
#: Links that name a stack on top of drives, never one drive.
_NOT_A_DRIVE = ("dm-", "md-", "lvm-", "raid-", "bcache-")


def _nsid(real: str, sysfs: Path) -> str | None:
    """The NVMe namespace id of the block device at ``real`` (``/sys/block/nvme0n2/nsid``:
    ``2``), None when it is not an NVMe namespace or sysfs cannot be read."""
    try:
        text = (sysfs / "block" / os.path.basename(real) / "nsid").read_text().strip()
    except OSError:
        return None
    return text if text.isdigit() else None


def _rank(name: str, serial: str, nsid: str | None) -> int | None:
    """0 for a link holding the drive's serial, 1 for a world-wide name, None: not taken
    (module docstring)."""
    if name.startswith(_WWN_PREFIXES):
        return 1
    # udev's string_escape=replace makes blanks and "/" in a serial "_"
    wanted = re.sub(r"[\s/]", "_", serial.strip())
    if not wanted:
        return None
    if name.startswith("nvme-"):
        suffix = f"_{nsid}"
        ok = nsid is not None and name.endswith(suffix) and name[:-len(suffix)].endswith(wanted)
        return 0 if ok else None
    if name.startswith(_SERIAL_PREFIXES) and wanted in name:
        return 0
    return None


def by_id_link(device: str, serial: str = "", by_id_dir: Path = BY_ID,
               sysfs: Path = Path("/sys")) -> str | None:
    """The ``by_id_dir`` link (absolute path) that resolves to ``device`` and names that drive
    (module docstring), or None when none does (a loop device, zram, a file, a host without
    udev, or a drive with only slot or shared links).

    Args:
        device: a block device path (``/dev/nvme0n1``; a link to one resolves first).
        serial: the drive's serial: a serial link is taken only when it holds it (an NVMe
            one only with the namespace's ``nsid`` as its last ``_N``); a link holding it is
            preferred to a world-wide name link; ties go to the first name in order.
        by_id_dir: the folder of links; sysfs: where the NVMe ``nsid`` is read (for tests).
    """
    real = os.path.realpath(device)
    try:
        names = sorted(os.listdir(by_id_dir))
    except OSError:
        return None
    nsid = _nsid(real, sysfs)
    found: list[tuple[int, str]] = []
    for name in names:
        if re.search(r"-part\d+$", name) or name.startswith(_NOT_A_DRIVE):
            continue
        rank = _rank(name, serial, nsid)
        if rank is not None and os.path.realpath(by_id_dir / name) == real:
            found.append((rank, name))
    return str(by_id_dir / min(found)[1]) if found else None
