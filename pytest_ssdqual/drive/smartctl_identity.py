"""Drive identity from smartctl's JSON (``smartctl -j -i``, ``-a`` or ``-x``; smartctl >= 7.0).

smartctl speaks to the drive itself, so its model, serial and firmware are the full ones (a SATA
drive behind a SAS HBA reads as SATA, not as a 16-character SCSI INQUIRY), and its exit status
says whether any device data was read (:mod:`~pytest_ssdqual.drive.smartctl`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pytest_ssdqual.drive.smartctl import SMARTCTL_NO_DATA_MASK, smartctl_envelope
from pytest_ssdqual.drive.tool_values import positive_int, text_or_none
from pytest_ssdqual.errors import DeviceError

__all__ = ["identity_from_smartctl", "smartctl_note"]

_SMARTCTL_PROTOCOL = {"ATA": "SATA", "NVME": "NVMe", "SCSI": "SAS"}
_SMARTCTL_TYPE = {"sat": "SATA", "ata": "SATA", "nvme": "NVMe", "scsi": "SAS"}


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
    envelope = smartctl_envelope(doc)
    if envelope.status & SMARTCTL_NO_DATA_MASK:
        raise DeviceError(
            f"{envelope.source} could not read {_smartctl_device_name(doc, envelope.meta)} "
            f"(exit status {envelope.status}: {envelope.no_data}): {envelope.quoted}"
        )

    found: dict[str, object] = {"source": envelope.source}
    model = text_or_none(doc.get("model_name")) or text_or_none(doc.get("scsi_model_name"))
    vendor = text_or_none(doc.get("scsi_vendor")) or text_or_none(doc.get("vendor"))
    if model is None:
        product = text_or_none(doc.get("scsi_product")) or text_or_none(doc.get("product"))
        if product is not None:
            model = f"{vendor} {product}" if vendor else product
    if model is None:
        model = text_or_none(doc.get("model_family"))
    if model is not None:
        found["model"] = model
    if vendor is not None:
        found["vendor"] = vendor
    for key, field in (("serial_number", "serial"), ("firmware_version", "firmware")):
        text = text_or_none(doc.get(key))
        if text is not None:
            found[field] = text
    if "firmware" not in found:
        revision = text_or_none(doc.get("scsi_revision")) or text_or_none(doc.get("revision"))
        if revision is not None:
            found["firmware"] = revision

    namespaces = doc.get("nvme_namespaces")
    ns0 = namespaces[0] if isinstance(namespaces, list) and namespaces else None
    ns0 = ns0 if isinstance(ns0, Mapping) else {}
    capacity = None
    user_capacity = doc.get("user_capacity")
    if isinstance(user_capacity, Mapping):
        capacity = positive_int(user_capacity.get("bytes"), "user_capacity.bytes")
    if capacity is None and isinstance(ns0.get("size"), Mapping):
        capacity = positive_int(ns0["size"].get("bytes"), "nvme_namespaces[0].size.bytes")
    if capacity is None:
        capacity = positive_int(doc.get("nvme_total_capacity"), "nvme_total_capacity")
    if capacity is not None:
        found["capacity_bytes"] = capacity
    logical = positive_int(doc.get("logical_block_size"), "logical_block_size")
    if logical is None:
        logical = positive_int(ns0.get("formatted_lba_size"), "formatted_lba_size")
    if logical is not None:
        found["logical_sector_bytes"] = logical
    physical = positive_int(doc.get("physical_block_size"), "physical_block_size")
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


def smartctl_note(doc: Mapping[str, object], exc: DeviceError) -> str:
    """Short ``sources`` note for smartctl output without data: version, exit status, messages."""
    try:
        envelope = smartctl_envelope(doc)
    except DeviceError:
        return f"smartctl (unreadable: {exc})"
    status = envelope.meta.get("exit_status")
    return f"{envelope.source} (no data, exit {status}: {envelope.quoted})"
