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

Parsers take plain documents (``dict`` from ``json.loads``) and return plain ``dict`` of the
``DriveIdentity`` field names they found; absent fields are absent from the dict.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.errors import DeviceError

__all__ = [
    "KINDS",
    "TRANSPORTS",
    "DriveIdentity",
    "Runner",
    "coerce_int",
    "identify",
    "identity_from_nvme_id_ctrl",
    "identity_from_smartctl",
    "identity_from_sysfs",
]

TRANSPORTS: tuple[str, ...] = (
    "SATA", "SAS", "NVMe", "USB", "virtual", "emulated", "unknown"
)
#: ``emu``: an emulated drive (``--drive=emu:MODEL``); its identity comes from the model
#: (``pytest_ssdqual.emulate.target``), never from :func:`identify`.
KINDS: tuple[str, ...] = ("block", "loop", "zram", "file", "emu")

#: ``argv -> (returncode, stdout)``; raises ``FileNotFoundError`` when the program is missing.
Runner = Callable[[list[str]], tuple[int, str]]

#: Seconds a helper tool (smartctl, nvme) may take before it is abandoned.
TOOL_TIMEOUT_S = 30

LOOP_MODEL = "Linux loop device"
ZRAM_MODEL = "Linux zram device"
FILE_MODEL = "Scratch file"
VIRTIO_MODEL = "Virtio block device"

#: smartctl(8), section RETURN VALUES: the exit status is a bit mask.
SMARTCTL_EXIT_BITS: dict[int, str] = {
    0: "command line did not parse (also used for 'Unable to detect device type')",
    1: "device open failed, device did not return an IDENTIFY DEVICE structure, "
    "or device is in a low-power mode",
    2: "some SMART or other ATA command to the disk failed, or a SMART data checksum error",
    3: "SMART status check returned DISK FAILING",
    4: "prefail attributes <= threshold",
    5: "some attributes have been <= threshold at some time in the past",
    6: "the device error log contains records of errors",
    7: "the device self-test log contains records of errors",
}
#: Bits after which smartctl printed no device data (0: bad command line, 1: open failed).
SMARTCTL_NO_DATA_MASK = 0b11


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


# --------------------------------------------------------------------------- numbers

_GROUPED_INT = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+")
_PLAIN_INT = re.compile(r"[+-]?\d+")
_PLAIN_FLOAT = re.compile(r"[+-]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?")


def coerce_int(value: object, *, field: str) -> int:
    """Read an integer that a tool may print as a number, a float or a string.

    nvme-cli has printed 128-bit fields such as ``tnvmcap`` as a JSON integer, as a long double
    (``900185481216.0``), as a quoted string, and in 2.3 as a comma-grouped string
    ``"3,200,631,791,616"`` (linux-nvme/nvme-cli issue #1827).

    Args:
        value: ``int``, integral ``float``, or a string of digits, optionally thousands-grouped
            with commas (groups of exactly three digits) or written as an integral decimal.
        field: the field name, for the error message.

    Returns:
        The integer.

    Raises:
        ValueError: ``bool``, ``None``, a fractional or non-finite number, or any other text, such
            as ``"0,000000"`` (a locale decimal comma: nvme-cli issue #354; run tools with
            ``LC_ALL=C``). The message names ``field`` and the value.
    """
    if isinstance(value, bool):
        raise ValueError(f"{field}: expected an integer, got boolean {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return int(value)
        raise ValueError(f"{field}: expected an integer, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        if _PLAIN_INT.fullmatch(text):
            return int(text)
        if _GROUPED_INT.fullmatch(text):
            return int(text.replace(",", ""))
        if _PLAIN_FLOAT.fullmatch(text):
            number = float(text)
            if number.is_integer():
                return int(number)
        hint = " (a locale decimal comma? run the tool with LC_ALL=C)" if "," in text else ""
        raise ValueError(f"{field}: expected an integer, got {value!r}{hint}")
    raise ValueError(f"{field}: expected an integer, got {type(value).__name__} {value!r}")


def _text(value: object) -> str | None:
    """A stripped non-empty string, or None."""
    if isinstance(value, str):
        text = value.strip()
        return text or None
    return None


def _positive(value: object, field: str) -> int | None:
    try:
        number = coerce_int(value, field=field)
    except ValueError:
        return None
    return number if number > 0 else None


# --------------------------------------------------------------------------- smartctl

_SMARTCTL_PROTOCOL = {"ATA": "SATA", "NVME": "NVMe", "SCSI": "SAS"}
_SMARTCTL_TYPE = {"sat": "SATA", "ata": "SATA", "nvme": "NVMe", "scsi": "SAS"}


def _smartctl_messages(meta: Mapping[str, object]) -> list[str]:
    messages = meta.get("messages")
    found: list[str] = []
    if isinstance(messages, list):
        for message in messages:
            if isinstance(message, Mapping) and isinstance(message.get("string"), str):
                found.append(str(message["string"]))
    return found


def _smartctl_device_name(doc: Mapping[str, object], meta: Mapping[str, object]) -> str:
    device = doc.get("device")
    if isinstance(device, Mapping) and isinstance(device.get("name"), str):
        return str(device["name"])
    argv = meta.get("argv")
    if isinstance(argv, list) and argv and isinstance(argv[-1], str):
        return argv[-1]
    return "the device"


def _smartctl_transport(doc: Mapping[str, object]) -> str | None:
    device = doc.get("device")
    if not isinstance(device, Mapping):
        return None
    protocol = device.get("protocol")
    if isinstance(protocol, str) and protocol.upper() in _SMARTCTL_PROTOCOL:
        return _SMARTCTL_PROTOCOL[protocol.upper()]
    dev_type = device.get("type")
    if isinstance(dev_type, str):
        # 'sat+megaraid,0', 'jmb39x-q,0', 'nvme': the first word names the protocol.
        head = re.split(r"[+,]", dev_type, maxsplit=1)[0].lower()
        if head in _SMARTCTL_TYPE:
            return _SMARTCTL_TYPE[head]
    return None


def _smartctl_rotational(value: object) -> bool | None:
    """smartctl ``rotation_rate``: 0 for "Solid State Device" (and, for SCSI, "not reported"),
    else rpm. ATA ACS / SCSI SBC nominal media rotation rate: 1 = non-rotating, 0401h-FFFEh rpm."""
    if isinstance(value, str):
        return False if "solid state" in value.lower() else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value in (0, 1):
        return False
    if 0x401 <= value <= 0xFFFE:
        return True
    return None


def identity_from_smartctl(doc: dict[str, object]) -> dict[str, object]:
    """Identity fields from smartctl's JSON (``smartctl -j -i``, ``-a`` or ``-x``; smartctl >= 7.0).

    Reads ``model_name`` (else ``scsi_model_name``, else ``vendor``/``scsi_vendor`` +
    ``product``/``scsi_product``, else ``model_family``), ``serial_number``, ``firmware_version``
    (``scsi_revision``/``revision`` for SCSI), ``user_capacity.bytes`` (NVMe: namespace 1 size,
    else ``nvme_total_capacity``), ``logical_block_size`` (NVMe: ``formatted_lba_size``),
    ``physical_block_size``, ``rotation_rate`` and ``device.protocol``/``device.type``.

    smartctl's exit status is a bit mask (smartctl(8), RETURN VALUES), kept in
    ``smartctl.exit_status``: bits 0-1 mean no device data was read (bad command line, device
    open failed); bits 2-7 report command failures and health findings *about* a drive whose data
    was read, so the data is returned.

    Args:
        doc: the parsed JSON document.

    Returns:
        A dict with any of ``model, serial, firmware, vendor, capacity_bytes,
        logical_sector_bytes, physical_sector_bytes, transport, rotational`` (units: bytes) and
        ``source`` (``'smartctl 7.3'``). Fields absent from the document are absent here. Values
        are returned as given: a serial redacted upstream reads ``'REDACTED'``.

    Raises:
        DeviceError: exit status bit 0 or 1 set (message names the device, the meaning of the
            bits and quotes ``smartctl.messages[].string``); or ``doc`` is not smartctl JSON.
    """
    meta = doc.get("smartctl")
    if not isinstance(meta, Mapping):
        raise DeviceError("not smartctl JSON output: no 'smartctl' object (smartctl >= 7.0 -j)")
    status = meta.get("exit_status", 0)
    status = status if isinstance(status, int) else 0
    version = meta.get("version")
    source = "smartctl"
    if isinstance(version, list) and version:
        source += " " + ".".join(str(v) for v in version)
    if status & SMARTCTL_NO_DATA_MASK:
        bits = "; ".join(SMARTCTL_EXIT_BITS[b] for b in range(2) if status & (1 << b))
        quoted = " | ".join(_smartctl_messages(meta)) or "no message"
        raise DeviceError(
            f"{source} could not read {_smartctl_device_name(doc, meta)} "
            f"(exit status {status}: {bits}): {quoted}"
        )

    found: dict[str, object] = {"source": source}
    model = _text(doc.get("model_name")) or _text(doc.get("scsi_model_name"))
    vendor = _text(doc.get("scsi_vendor")) or _text(doc.get("vendor"))
    if model is None:
        product = _text(doc.get("scsi_product")) or _text(doc.get("product"))
        if product is not None:
            model = f"{vendor} {product}" if vendor else product
    if model is None:
        model = _text(doc.get("model_family"))
    if model is not None:
        found["model"] = model
    if vendor is not None:
        found["vendor"] = vendor
    for key, field in (("serial_number", "serial"), ("firmware_version", "firmware")):
        text = _text(doc.get(key))
        if text is not None:
            found[field] = text
    if "firmware" not in found:
        revision = _text(doc.get("scsi_revision")) or _text(doc.get("revision"))
        if revision is not None:
            found["firmware"] = revision

    namespaces = doc.get("nvme_namespaces")
    ns0 = namespaces[0] if isinstance(namespaces, list) and namespaces else None
    ns0 = ns0 if isinstance(ns0, Mapping) else {}
    capacity = None
    user_capacity = doc.get("user_capacity")
    if isinstance(user_capacity, Mapping):
        capacity = _positive(user_capacity.get("bytes"), "user_capacity.bytes")
    if capacity is None and isinstance(ns0.get("size"), Mapping):
        capacity = _positive(ns0["size"].get("bytes"), "nvme_namespaces[0].size.bytes")
    if capacity is None:
        capacity = _positive(doc.get("nvme_total_capacity"), "nvme_total_capacity")
    if capacity is not None:
        found["capacity_bytes"] = capacity
    logical = _positive(doc.get("logical_block_size"), "logical_block_size")
    if logical is None:
        logical = _positive(ns0.get("formatted_lba_size"), "formatted_lba_size")
    if logical is not None:
        found["logical_sector_bytes"] = logical
    physical = _positive(doc.get("physical_block_size"), "physical_block_size")
    if physical is not None:
        found["physical_sector_bytes"] = physical

    transport = _smartctl_transport(doc)
    if transport is not None:
        found["transport"] = transport
    rotational = _smartctl_rotational(doc.get("rotation_rate"))
    if rotational is None and transport == "NVMe":
        rotational = False
    if rotational is not None:
        found["rotational"] = rotational
    return found


# --------------------------------------------------------------------------- nvme-cli

KELVIN_OFFSET = 273  # NVMe Base Spec and nvme-cli/smartctl convert Kelvin with 273, not 273.15


def identity_from_nvme_id_ctrl(doc: dict[str, object]) -> dict[str, object]:
    """Identity fields from ``nvme id-ctrl -o json`` (NVM Express Base Specification, Identify
    Controller data structure).

    ``mn`` (Model Number, 40 bytes), ``sn`` (Serial Number, 20 bytes) and ``fr`` (Firmware
    Revision, 8 bytes) are space-padded ASCII: stripped here. ``tnvmcap`` (Total NVM Capacity,
    bytes; 0 when not reported) goes through :func:`coerce_int`. ``wctemp``/``cctemp`` (Warning /
    Critical Composite Temperature Threshold, Kelvin; 0 = not reported) become Celsius, K - 273.

    Args:
        doc: the parsed JSON document.

    Returns:
        Any of ``model, serial, firmware, capacity_bytes`` (bytes), ``warning_temp_c``,
        ``critical_temp_c`` (int °C), plus ``transport='NVMe'``, ``rotational=False``,
        ``source='nvme-cli'``.

    Raises:
        DeviceError: the document has none of ``mn``/``sn``/``fr`` (not id-ctrl output).
        ValueError: ``tnvmcap`` is present but not an integer in any known spelling.
    """
    if not any(key in doc for key in ("mn", "sn", "fr")):
        raise DeviceError("not nvme id-ctrl JSON output: no 'mn', 'sn' or 'fr' field")
    found: dict[str, object] = {"transport": "NVMe", "rotational": False, "source": "nvme-cli"}
    for key, field in (("mn", "model"), ("sn", "serial"), ("fr", "firmware")):
        text = _text(doc.get(key))
        if text is not None:
            found[field] = text
    if "tnvmcap" in doc:
        capacity = coerce_int(doc["tnvmcap"], field="tnvmcap")
        if capacity > 0:
            found["capacity_bytes"] = capacity
    for key, field in (("wctemp", "warning_temp_c"), ("cctemp", "critical_temp_c")):
        if key in doc:
            kelvin = coerce_int(doc[key], field=key)
            if kelvin > 0:
                found[field] = kelvin - KELVIN_OFFSET
    return found


# --------------------------------------------------------------------------- sysfs

_VIRTUAL_NAMES = re.compile(r"(loop|zram|ram|nbd|dm-|md|vd|xvd)\d*")


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def _read_int(path: Path) -> int | None:
    text = _read(path)
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


def _block_dir(dev_name: str, sysfs: Path) -> Path:
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
    base = _block_dir(name, sysfs)
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
    model = _read(device / "model")
    if model:
        found["model"] = model
    vendor = _read(device / "vendor")
    if vendor and vendor.upper() != "ATA" and not vendor.lower().startswith("0x"):
        found["vendor"] = vendor
    firmware = _read(device / "firmware_rev") or _read(device / "rev")
    if firmware:
        found["firmware"] = firmware
    serial = _read(device / "serial") or _read(base / "serial")
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


# --------------------------------------------------------------------------- identify


def _default_run(argv: list[str]) -> tuple[int, str]:
    """Run a helper tool with ``LC_ALL=C`` (locale-free numbers), no stdin, a 30 s timeout."""
    proc = subprocess.run(
        argv,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TOOL_TIMEOUT_S,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    return proc.returncode, proc.stdout


def _json_document(text: str) -> dict[str, object] | None:
    """The JSON object in a tool's stdout (tolerating warning lines before the ``{``)."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        doc = json.loads(text[start:])
    except json.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


def _run_tool(
    run: Runner, argv: list[str], tool: str, notes: list[str]
) -> dict[str, object] | None:
    """Run ``argv``; return its JSON document, or None after noting why there is none."""
    try:
        returncode, stdout = run(argv)
    except FileNotFoundError:
        notes.append(f"{tool} (not installed)")
        return None
    except subprocess.TimeoutExpired:
        notes.append(f"{tool} (timed out after {TOOL_TIMEOUT_S} s)")
        return None
    except OSError as exc:
        notes.append(f"{tool} (could not run: {exc.strerror or exc})")
        return None
    doc = _json_document(stdout)
    if doc is None:
        notes.append(f"{tool} (exit {returncode}, no JSON output)")
    return doc


def _smartctl_note(doc: Mapping[str, object], exc: DeviceError) -> str:
    """Short ``sources`` note for smartctl output without data: version, exit status, messages."""
    meta = doc.get("smartctl")
    if not isinstance(meta, Mapping):
        return f"smartctl (unreadable: {exc})"
    version = meta.get("version")
    name = "smartctl"
    if isinstance(version, list) and version:
        name += " " + ".".join(str(v) for v in version)
    messages = " | ".join(_smartctl_messages(meta)) or "no message"
    return f"{name} (no data, exit {meta.get('exit_status')}: {messages})"


def _kernel_release() -> str:
    return os.uname().release


def _virtual_block(name: str, kind: str, sysfs: Path) -> DriveIdentity:
    base = _block_dir(name, sysfs)
    info = identity_from_sysfs(name, sysfs=sysfs)
    if kind == "loop":
        backing = _read(base / "loop" / "backing_file")
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


def _file_identity(path: str) -> DriveIdentity:
    target = Path(path).resolve()
    try:
        st = target.stat()
    except OSError as exc:
        raise DeviceError(f"scratch file {target}: {exc.strerror or exc}") from exc
    if not target.is_file():
        raise DeviceError(f"scratch file {target} is not a regular file")
    return DriveIdentity(
        model=FILE_MODEL,
        serial=str(target),
        firmware=_kernel_release(),
        capacity_bytes=st.st_size,
        logical_sector_bytes=512,
        physical_sector_bytes=st.st_blksize or 4096,
        transport="virtual",
        rotational=False,
        vendor="",
        kind="file",
        sources=("os.stat",),
    )


def identify(
    path: str,
    *,
    kind: str,
    run: Runner | None = None,
    sysfs: Path = Path("/sys"),
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

    ``kind='loop'``: model ``'Linux loop device'``, serial = backing file path (from
    ``/sys/block/loopN/loop/backing_file``, so confirming destruction names the file).
    ``kind='zram'``: model ``'Linux zram device'``, serial = device name (``'zram0'``; capacity 0
    until ``disksize`` is set). ``kind='file'``: model ``'Scratch file'``, serial = absolute path,
    capacity = file size, sectors 512 / ``st_blksize``. Virtual targets: firmware = kernel
    release, transport ``'virtual'``, not rotational.

    Args:
        path: ``/dev/sdb``, ``/dev/disk/by-id/...`` (symlinks resolved), or a file path.
        kind: one of ``KINDS``.
        run: ``argv -> (returncode, stdout)``, raising ``FileNotFoundError`` for a missing tool.
        sysfs: sysfs mount point.

    Returns:
        The ``DriveIdentity``.

    Raises:
        DeviceError: the device is not in sysfs, is a partition, a loop device without backing
            file, a missing scratch file; or ``kind`` is unknown.
    """
    if kind not in KINDS or kind == "emu":
        raise DeviceError(f"unknown drive kind {kind!r}: expected one of {', '.join(KINDS)}")
    if kind == "file":
        return _file_identity(path)
    name = Path(os.path.realpath(path)).name if path.startswith("/") else path
    if kind in ("loop", "zram"):
        if not name.startswith(kind):
            raise DeviceError(f"{path} is not a {kind} device")
        return _virtual_block(name, kind, sysfs)
    for virtual in ("loop", "zram"):
        if re.fullmatch(virtual + r"\d+", name):
            return _virtual_block(name, virtual, sysfs)

    run = run or _default_run
    merged = identity_from_sysfs(name, sysfs=sysfs)
    sources = [str(merged.pop("source"))]
    transport = str(merged.get("transport", "unknown"))

    smart = _run_tool(run, ["smartctl", "-j", "-i", path], "smartctl", sources)
    if smart is not None:
        try:
            found = identity_from_smartctl(smart)
        except DeviceError as exc:
            sources.append(_smartctl_note(smart, exc))
        else:
            sources.append(str(found.pop("source")))
            _merge(merged, found)
            if "transport" in found and transport != "USB":  # a USB bridge stays USB
                transport = str(found["transport"])

    if transport == "NVMe":
        nvme = _run_tool(run, ["nvme", "id-ctrl", "-o", "json", path], "nvme-cli", sources)
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
