"""Drive identity from sysfs (``/sys/block/<dev>``, Linux ``Documentation/ABI/stable/sysfs-block``).

Always there, no tool needed: capacity and sector sizes come from here because they are what
the kernel (and so fio) uses. For SCSI-attached drives ``device/model`` is the 16-character SCSI
INQUIRY product id (a SATA drive's model is cut to 16 characters, its vendor reads ``ATA`` and
``device/rev`` holds 4 of the 8 firmware characters); when the SAT layer exposes ATA IDENTIFY
DEVICE data (VPD page 89h, ``device/vpd_pg89``) the full model, serial and firmware are taken
from there instead (SAT-4, SPC-5 VPD pages 80h/89h).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pytest_ssdqual.errors import DeviceError

__all__ = ["block_dir", "identity_from_sysfs", "read_sysfs"]


_VIRTUAL_NAMES = re.compile(r"(loop|zram|ram|nbd|dm-|md|vd|xvd)\d*")


def read_sysfs(path: Path) -> str | None:
    """The stripped text of a sysfs file, or None when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _read_int(path: Path) -> int | None:
    text = read_sysfs(path)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _ata_string(raw: bytes) -> str:
    """ATA IDENTIFY strings hold two characters per 16-bit word, high byte first."""
    swapped = bytearray(len(raw))
    swapped[0::2] = raw[1::2]
    swapped[1::2] = raw[0::2]
    return swapped.decode("ascii", errors="replace").strip().strip("\x00").strip()


def _from_vpd_pg89(raw: bytes) -> dict[str, object]:
    """Model/serial/firmware from SCSI VPD page 89h (ATA Information, SAT): bytes 60-571 are the
    ATA IDENTIFY DEVICE data; words 10-19 serial, 23-26 firmware, 27-46 model, 217 rotation."""
    if len(raw) < 60 + 512 or raw[1] != 0x89:
        return {}
    ident = raw[60 : 60 + 512]
    found: dict[str, object] = {}
    for field, (first, last) in (("serial", (10, 19)), ("firmware", (23, 26)), ("model", (27, 46))):
        text = _ata_string(ident[first * 2 : (last + 1) * 2])
        if text:
            found[field] = text
    rpm = int.from_bytes(ident[434:436], "little")
    if rpm == 1:
        found["rotational"] = False
    elif 0x401 <= rpm <= 0xFFFE:
        found["rotational"] = True
    return found


def _from_vpd_pg80(raw: bytes) -> str | None:
    """Unit serial number from SCSI VPD page 80h (SPC): length in byte 3, ASCII from byte 4."""
    if len(raw) < 4 or raw[1] != 0x80:
        return None
    text = raw[4 : 4 + raw[3]].decode("ascii", errors="replace").strip().strip("\x00").strip()
    return text or None


def _sysfs_transport(dev_name: str, real: str) -> str:
    if dev_name.startswith("nvme") or "/nvme/" in real or "/nvme-subsystem/" in real:
        return "NVMe"
    if re.search(r"/usb\d+/", real):
        return "USB"
    if re.search(r"/ata\d+/", real):
        return "SATA"
    if re.search(r"/(end_device-|expander-|port-\d|sas_)", real):
        return "SAS"
    if "/virtual/" in real or "/virtio" in real or _VIRTUAL_NAMES.fullmatch(dev_name):
        return "virtual"
    return "unknown"


def block_dir(dev_name: str, sysfs: Path) -> Path:
    """``<sysfs>/block/<name>`` of a whole block device.

    Raises:
        DeviceError: ``dev_name`` is a partition (the message names its disk), or unknown.
    """
    name = dev_name.removeprefix("/dev/")
    base = sysfs / "block" / name
    if base.is_dir():
        return base
    part = sysfs / "class" / "block" / name
    if (part / "partition").exists():
        parent = Path(os.path.realpath(part)).parent.name
        raise DeviceError(
            f"{name} is a partition of {parent}: give the whole drive (/dev/{parent})"
        )
    raise DeviceError(f"no block device {name!r} in {sysfs / 'block'}: is the name right?")


def identity_from_sysfs(dev_name: str, *, sysfs: Path = Path("/sys")) -> dict[str, object]:
    """Identity fields from sysfs for a whole block device (Linux ABI, sysfs-block).

    Reads ``/sys/block/<dev>/size`` (always 512-byte units, whatever the sector size),
    ``queue/logical_block_size``, ``queue/physical_block_size``, ``queue/rotational``,
    ``device/model``, ``device/vendor``, ``device/serial`` (or ``serial``, or VPD page 80h),
    ``device/firmware_rev`` (NVMe) or ``device/rev`` (SCSI), and the ATA IDENTIFY data in VPD
    page 89h when present (full model/serial/firmware of a SATA drive). Transport comes from the
    resolved device path: ``nvme`` -> NVMe, ``usbN`` -> USB, ``ataN`` -> SATA, SAS end devices ->
    SAS, loop/zram/virtio/``devices/virtual`` -> virtual, otherwise unknown.

    Args:
        dev_name: kernel name, ``'sda'`` or ``'nvme0n1'`` (a leading ``/dev/`` is ignored).
        sysfs: sysfs mount point (a fake tree in tests).

    Returns:
        Any of ``model, serial, firmware, vendor, capacity_bytes, logical_sector_bytes,
        physical_sector_bytes, rotational, transport``, plus ``source='sysfs'``. The SCSI vendor
        ``ATA`` (a SATA drive seen through libata) and hex PCI ids are not reported as vendors.

    Raises:
        DeviceError: no such block device, or ``dev_name`` is a partition.
    """
    name = dev_name.removeprefix("/dev/")
    base = block_dir(name, sysfs)
    found: dict[str, object] = {"source": "sysfs"}
    sectors = _read_int(base / "size")
    if sectors is not None:
        found["capacity_bytes"] = sectors * 512
    for file, field in (
        ("logical_block_size", "logical_sector_bytes"),
        ("physical_block_size", "physical_sector_bytes"),
    ):
        value = _read_int(base / "queue" / file)
        if value is not None and value > 0:
            found[field] = value
    rotational = _read_int(base / "queue" / "rotational")
    if rotational is not None:
        found["rotational"] = bool(rotational)

    device = base / "device"
    model = read_sysfs(device / "model")
    if model:
        found["model"] = model
    vendor = read_sysfs(device / "vendor")
    if vendor and vendor.upper() != "ATA" and not vendor.lower().startswith("0x"):
        found["vendor"] = vendor
    firmware = read_sysfs(device / "firmware_rev") or read_sysfs(device / "rev")
    if firmware:
        found["firmware"] = firmware
    serial = read_sysfs(device / "serial") or read_sysfs(base / "serial")
    if not serial:
        try:
            serial = _from_vpd_pg80((device / "vpd_pg80").read_bytes())
        except OSError:
            serial = None
    if serial:
        found["serial"] = serial
    try:
        found.update(_from_vpd_pg89((device / "vpd_pg89").read_bytes()))
    except OSError:
        pass

    found["transport"] = _sysfs_transport(name, os.path.realpath(base))
    return found
