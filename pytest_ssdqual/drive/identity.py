"""Who is this drive? Model, serial, firmware, capacity and sector sizes from sysfs and tools.

Sources, read in this order for a real block device (``kind='block'``):

1. **sysfs** (``/sys/block/<dev>``): always there, no tool needed. Capacity and sector sizes come
   from here because they are what the kernel (and so fio) uses. For SCSI-attached drives the
   ``device/model`` file is the 16-character SCSI INQUIRY product id (a SATA drive's model is cut
   to 16 characters, its vendor reads ``ATA`` and ``device/rev`` holds 4 of the 8 firmware
   characters); when the SAT layer exposes ATA IDENTIFY DEVICE data (VPD page 89h,
   ``device/vpd_pg89``) the full model, serial and firmware are taken from there instead.
2. **smartctl** ``-j -i`` (smartmontools >= 7.0 for JSON): full model, serial, firmware,
   transport as the drive itself speaks it (ATA behind a SAS HBA is SATA).
3. **nvme-cli** ``id-ctrl -o json`` for NVMe drives (NVM Express Base Specification, Identify
   Controller data structure: ``MN``, ``SN``, ``FR``, ``TNVMCAP``, ``WCTEMP``/``CCTEMP``).

Later sources override earlier ones for model, serial and firmware; a missing tool is skipped and
noted in ``DriveIdentity.sources``. Virtual targets (loop, zram, scratch file) get a synthetic
identity whose serial is what a user would name to confirm destruction (the backing file path for
a loop device).

The parsers (:mod:`~pytest_ssdqual.drive.sysfs_identity`,
:mod:`~pytest_ssdqual.drive.smartctl_identity`, :mod:`~pytest_ssdqual.drive.nvme_identity`) take
plain documents (``dict`` from ``json.loads``) and return plain ``dict`` of the ``DriveIdentity``
field names they found; absent fields are absent from the dict. This module holds the model and
:func:`identify`, which runs the tools (:mod:`~pytest_ssdqual.drive.tool_runner`) and merges.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from pytest_ssdqual.drive.dio_align import dio_alignment
from pytest_ssdqual.drive.nvme_identity import identity_from_nvme_id_ctrl
from pytest_ssdqual.drive.smartctl_device import run_smartctl
from pytest_ssdqual.drive.smartctl_identity import identity_from_smartctl, smartctl_note
from pytest_ssdqual.drive.sysfs_identity import block_dir, identity_from_sysfs, read_sysfs
from pytest_ssdqual.drive.tool_runner import Runner, default_run, run_tool
from pytest_ssdqual.errors import DeviceError

#: Serials that name no drive (what identification reports when it found none).
NO_SERIAL: frozenset[str] = frozenset({"", "?", "unknown"})

__all__ = [
    "KINDS",
    "NO_SERIAL",
    "TRANSPORTS",
    "DriveIdentity",
    "identify",
    "relabel_firmware",
]

TRANSPORTS: tuple[str, ...] = (
    "SATA", "SAS", "NVMe", "USB", "virtual", "emulated", "unknown"
)
#: ``emu``: an emulated drive (``--drive=emu:MODEL``); its identity comes from the model
#: (``pytest_ssdqual.emulate.target``), never from :func:`identify`.
KINDS: tuple[str, ...] = ("block", "loop", "zram", "file", "emu")

LOOP_MODEL = "Linux loop device"
ZRAM_MODEL = "Linux zram device"
FILE_MODEL = "Scratch file"
VIRTIO_MODEL = "Virtio block device"


@dataclass(frozen=True)
class DriveIdentity:
    """What a drive says it is, plus where each fact came from.

    Attributes:
        model: model number as the drive reports it (``'Samsung SSD 860 EVO 500GB'``), or a
            synthetic one for virtual targets (``'Linux loop device'``); ``''`` when unknown.
        serial: serial number (``''`` when unknown); for a loop device the backing file path,
            for zram the device name, for a scratch file its absolute path.
        firmware: firmware revision; the kernel release for virtual targets.
        capacity_bytes: usable size in bytes (the block device size for a drive).
        logical_sector_bytes: logical block size in bytes (512 or 4096 for drives).
        physical_sector_bytes: physical block size in bytes.
        transport: one of ``TRANSPORTS``: ``'SATA' | 'SAS' | 'NVMe' | 'USB' | 'virtual' |
            'emulated' | 'unknown'``.
        rotational: True for spinning media.
        vendor: vendor string when the drive reports one apart from the model (SAS); ``''``.
        kind: one of ``KINDS``: ``'block'`` (real drive), ``'loop'``, ``'zram'``, ``'file'``,
            ``'emu'`` (emulated drive).
        sources: where the fields came from, in order, with notes on skipped tools, e.g.
            ``('sysfs', 'smartctl 7.3', 'nvme-cli (not installed)')``.
        smartctl_device_type: the smartctl ``-d`` type that read the drive (given, or found
            behind a USB bridge smartctl does not know: ``'sntjmicron'``); every smartctl call
            for the drive passes it. ``''``: smartctl's own choice.
    """

    model: str
    serial: str
    firmware: str
    capacity_bytes: int
    logical_sector_bytes: int
    physical_sector_bytes: int
    transport: str
    rotational: bool
    vendor: str = ""
    kind: str = "block"
    sources: tuple[str, ...] = ()
    smartctl_device_type: str = ""
    #: an emulated twin's factor on the real drive's figures (``figures_scale`` of its model,
    #: ``emulate.target.emulated_identity``); ``None`` for every other target.
    figures_scale: float | None = None

    def __post_init__(self) -> None:
        if self.transport not in TRANSPORTS:
            raise ValueError(f"transport {self.transport!r} is not one of {TRANSPORTS}")
        if self.kind not in KINDS:
            raise ValueError(f"kind {self.kind!r} is not one of {KINDS}")
        if self.capacity_bytes < 0:
            raise ValueError(f"capacity_bytes {self.capacity_bytes} is negative")

    def label(self) -> str:
        """One line naming the drive: ``'MODEL / fw FIRMWARE / S/N SERIAL'`` (``?`` if unknown)."""
        return f"{self.model or '?'} / fw {self.firmware or '?'} / S/N {self.serial or '?'}"


def _kernel_release() -> str:
    return os.uname().release


def _virtual_block(name: str, kind: str, sysfs: Path) -> DriveIdentity:
    base = block_dir(name, sysfs)
    info = identity_from_sysfs(name, sysfs=sysfs)
    if kind == "loop":
        backing = read_sysfs(base / "loop" / "backing_file")
        if not backing:
            raise DeviceError(
                f"/dev/{name} has no backing file: the loop device is not set up "
                "(losetup -f --show --direct-io=on FILE)"
            )
        model, serial = LOOP_MODEL, backing
    else:
        model, serial = ZRAM_MODEL, name
    logical = info.get("logical_sector_bytes", 512)
    physical = info.get("physical_sector_bytes", logical)
    capacity = info.get("capacity_bytes", 0)
    assert isinstance(logical, int) and isinstance(physical, int) and isinstance(capacity, int)
    return DriveIdentity(
        model=model,
        serial=serial,
        firmware=_kernel_release(),
        capacity_bytes=capacity,
        logical_sector_bytes=logical,
        physical_sector_bytes=physical,
        transport="virtual",
        rotational=False,
        vendor="Linux",
        kind=kind,
        sources=("sysfs",),
    )


def _file_identity(path: str, sysfs: Path) -> DriveIdentity:
    target = Path(path).resolve()
    try:
        st = target.stat()
        if not target.is_file():
            raise DeviceError(f"scratch file {target} is not a regular file")
        align, align_source = dio_alignment(str(target), sysfs=sysfs)
    except OSError as exc:
        raise DeviceError(f"scratch file {target}: {exc.strerror or exc}") from exc
    return DriveIdentity(
        model=FILE_MODEL,
        serial=str(target),
        firmware=_kernel_release(),
        capacity_bytes=st.st_size,
        logical_sector_bytes=align,
        physical_sector_bytes=max(st.st_blksize or 4096, align),
        transport="virtual",
        rotational=False,
        vendor="",
        kind="file",
        sources=("os.stat", align_source),
    )


def identify(
    path: str,
    *,
    kind: str,
    run: Runner | None = None,
    sysfs: Path = Path("/sys"),
    smartctl_device_type: str | None = None,
    smartctl_device_type_from: str = "",
) -> DriveIdentity:
    """Identify a drive target.

    ``kind='block'``: sysfs first, then ``smartctl -j -i PATH``, then for NVMe
    ``nvme id-ctrl -o json PATH``. Each tool runs through ``run`` (default: a subprocess with
    ``LC_ALL=C`` and a 30 s timeout). A missing tool, a timeout, output without JSON, or smartctl
    reporting it could not open the device is noted in ``sources`` and skipped. Model, serial and
    firmware: later sources win. Capacity and sector sizes: sysfs wins (that is what fio
    addresses); tools only fill gaps. Rotational and transport: smartctl wins over sysfs (USB
    bridges often claim rotational media), except that a drive behind USB stays ``'USB'``. A
    ``/dev/loopN`` or ``/dev/zramN`` given as ``'block'`` is identified as ``'loop'``/``'zram'``.
    smartctl runs with ``-d smartctl_device_type`` when one is given; otherwise, when it
    answers that it needs a device type (a USB bridge it does not know), the bridge types are
    tried (``smartctl_device.run_smartctl``) and the one that read the drive is kept in
    ``smartctl_device_type`` and named in ``sources``.

    ``kind='loop'``: model ``'Linux loop device'``, serial = backing file path (from
    ``/sys/block/loopN/loop/backing_file``, so confirming destruction names the file).
    ``kind='zram'``: model ``'Linux zram device'``, serial = device name (``'zram0'``; capacity 0
    until ``disksize`` is set). ``kind='file'``: model ``'Scratch file'``, serial = absolute path,
    capacity = file size, logical sector = the file's direct-I/O unit
    (:func:`~pytest_ssdqual.drive.dio_align.dio_alignment`: statx ``STATX_DIOALIGN``, else the
    backing device's logical block size, else 512; 4096 on a file system over a 4Kn device),
    physical = ``st_blksize`` (at least the logical). Virtual targets: firmware = kernel
    release, transport ``'virtual'``, not rotational.

    Args:
        path: ``/dev/sdb``, ``/dev/disk/by-id/...`` (symlinks resolved), or a file path.
        kind: one of ``KINDS``.
        run: ``argv -> (returncode, stdout)``, raising ``FileNotFoundError`` for a missing tool.
        sysfs: sysfs mount point.
        smartctl_device_type: smartctl ``-d`` type for a block device (``None``: smartctl's
            choice, then the bridge types when it asks for one).
        smartctl_device_type_from: where the given type came from, for ``sources``
            (``'--smartctl-device-type'``, ``'inventory.yaml:3'``).

    Returns:
        The ``DriveIdentity``.

    Raises:
        DeviceError: the device is not in sysfs, is a partition, a loop device without backing
            file, a missing scratch file; or ``kind`` is unknown.
    """
    if kind not in KINDS or kind == "emu":
        raise DeviceError(f"unknown drive kind {kind!r}: expected one of {', '.join(KINDS)}")
    if kind == "file":
        return _file_identity(path, sysfs)
    name = Path(os.path.realpath(path)).name if path.startswith("/") else path
    if kind in ("loop", "zram"):
        if not name.startswith(kind):
            raise DeviceError(f"{path} is not a {kind} device")
        return _virtual_block(name, kind, sysfs)
    for virtual in ("loop", "zram"):
        if re.fullmatch(virtual + r"\d+", name):
            return _virtual_block(name, virtual, sysfs)

    run = run or default_run
    merged = identity_from_sysfs(name, sysfs=sysfs)
    sources = [str(merged.pop("source"))]
    transport = str(merged.get("transport", "unknown"))

    answer = run_smartctl(run, ["-i"], path, sources, device_type=smartctl_device_type)
    smart = answer.doc
    if smart is not None:
        try:
            found = identity_from_smartctl(smart)
        except DeviceError as exc:
            failure = answer.failure(path)
            sources.append(smartctl_note(smart, exc) + (f"; {failure}" if failure else ""))
        else:
            sources.append(answer.note(str(found.pop("source")), smartctl_device_type_from))
            _merge(merged, found)
            if "transport" in found and transport != "USB":  # a USB bridge stays USB
                transport = str(found["transport"])

    if transport == "NVMe":
        nvme = run_tool(run, ["nvme", "id-ctrl", "-o", "json", path], "nvme-cli", sources)
        if nvme is not None:
            try:
                found = identity_from_nvme_id_ctrl(nvme)
            except (DeviceError, ValueError) as exc:
                sources.append(f"nvme-cli (unreadable: {exc})")
            else:
                sources.append(str(found.pop("source")))
                _merge(merged, found)

    def number(field: str, default: int) -> int:
        value = merged.get(field, default)
        return value if isinstance(value, int) and not isinstance(value, bool) else default

    logical = number("logical_sector_bytes", 512)
    model = str(merged.get("model", ""))
    if not model and "/virtio" in os.path.realpath(sysfs / "block" / name):
        model = VIRTIO_MODEL  # virtio-blk has no model attribute
    return DriveIdentity(
        model=model,
        serial=str(merged.get("serial", "")),
        firmware=str(merged.get("firmware", "")),
        capacity_bytes=number("capacity_bytes", 0),
        logical_sector_bytes=logical,
        physical_sector_bytes=number("physical_sector_bytes", logical),
        transport=transport,
        rotational=bool(merged.get("rotational", False)),
        vendor=str(merged.get("vendor", "")),
        kind="block",
        sources=tuple(sources),
        smartctl_device_type=answer.device_type or "",
    )


_OVERRIDE = ("model", "serial", "firmware", "vendor", "rotational")
_FILL = ("capacity_bytes", "logical_sector_bytes", "physical_sector_bytes")


def _merge(merged: dict[str, object], found: Mapping[str, object]) -> None:
    """Later source wins for names and rotational; sysfs keeps sizes (tools only fill gaps)."""
    for field in _OVERRIDE:
        if field in found:
            merged[field] = found[field]
    for field in _FILL:
        if field in found and field not in merged:
            merged[field] = found[field]


def relabel_firmware(identity: DriveIdentity, firmware: str) -> DriveIdentity:
    """``identity`` with ``firmware`` as its firmware (``--firmware``: a lab flashing dev builds
    names the build; the drive may report a generic revision). ``sources`` records the label
    and what the drive reported."""
    if identity.firmware == firmware:
        return identity
    note = f"firmware {firmware!r} from --firmware (the drive reports {identity.firmware!r})"
    return replace(identity, firmware=firmware, sources=(*identity.sources, note))
