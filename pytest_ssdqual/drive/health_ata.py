"""The ATA-only fields of drive health, from smartctl's JSON (``smartctl -j -a`` / ``-x``).

Media errors from attribute 187 (Reported Uncorrectable Errors) raw value, percentage used from
the Device Statistics page 7 "Percentage Used Endurance Indicator" (ACS-4 9.10), warning
temperature from ``temperature.op_limit_max`` (SCT status) or Device Statistics page 5
"Specified Maximum Operating Temperature", host and NAND bytes written from the vendor
attributes whose smartmontools drive-database name carries the unit (:data:`ATA_WRITE_ATTRIBUTES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ssdqual.drive.health import FieldReader

__all__ = ["ATA_MEDIA_ERRORS_ID", "ATA_WRITE_ATTRIBUTES", "ata_fields"]

#: ATA attribute name (smartmontools drive database) -> (``'host'`` or ``'nand'``, bytes per raw
#: unit; ``0`` = the drive's logical sector size). Only names that carry their unit are read.
ATA_WRITE_ATTRIBUTES: dict[str, tuple[str, int]] = {
    "Total_LBAs_Written": ("host", 0),
    "Host_Writes_32MiB": ("host", 32 * 2**20),
    "Host_Writes_GiB": ("host", 2**30),
    "Lifetime_Writes_GiB": ("host", 2**30),
    "Host_Writes_MiB": ("host", 2**20),
    "NAND_Writes_32MiB": ("nand", 32 * 2**20),
    "NAND_Writes_GiB": ("nand", 2**30),
    "NAND_Writes_1GiB": ("nand", 2**30),
    "Flash_Writes_GiB": ("nand", 2**30),
}
#: ATA attribute 187, Reported Uncorrectable Errors: the ATA drive's media-error count.
ATA_MEDIA_ERRORS_ID = 187


def _ata_statistic(doc: Mapping[str, object], name: str) -> object:
    """One value of smartctl's ``ata_device_statistics`` by its name, or ``None``."""
    stats = doc.get("ata_device_statistics")
    pages = stats.get("pages") if isinstance(stats, Mapping) else None
    for page in pages if isinstance(pages, list) else []:
        table = page.get("table") if isinstance(page, Mapping) else None
        for entry in table if isinstance(table, list) else []:
            if isinstance(entry, Mapping) and entry.get("name") == name:
                flags = entry.get("flags")
                if isinstance(flags, Mapping) and flags.get("valid") is False:
                    return None
                return entry.get("value")
    return None


def ata_fields(reader: FieldReader, doc: Mapping[str, object]) -> None:
    """ATA-only fields: media errors (attribute 187), percentage used (Device Statistics),
    warning temperature, host / NAND bytes written (``ATA_WRITE_ATTRIBUTES``)."""
    attrs = doc.get("ata_smart_attributes")
    table = attrs.get("table") if isinstance(attrs, Mapping) else None
    sector = doc.get("logical_block_size")
    sector = sector if isinstance(sector, int) and sector > 0 else 512
    for attr in table if isinstance(table, list) else []:
        if not isinstance(attr, Mapping):
            continue
        raw = attr.get("raw")
        value = raw.get("value") if isinstance(raw, Mapping) else None
        if value is None:
            continue
        name = attr.get("name")
        if attr.get("id") == ATA_MEDIA_ERRORS_ID and "media_errors" not in reader.values:
            reader.integer("media_errors", value, where=f"attribute 187 {name}")
        if isinstance(name, str) and name in ATA_WRITE_ATTRIBUTES:
            kind, unit = ATA_WRITE_ATTRIBUTES[name]
            field = f"{kind}_written_bytes"
            if field not in reader.values:
                count = reader.integer(field, value, where=name)
                if count is not None:
                    reader.values[field] = count * (unit or sector)
    if "percentage_used" not in reader.values:
        used = _ata_statistic(doc, "Percentage Used Endurance Indicator")
        if used is not None:
            reader.integer("percentage_used", used, where="Percentage Used Endurance Indicator")
    temperature = doc.get("temperature")
    limit = temperature.get("op_limit_max") if isinstance(temperature, Mapping) else None
    if limit is None:
        limit = _ata_statistic(doc, "Specified Maximum Operating Temperature")
    if limit is not None and "nvme_smart_health_information_log" not in doc:
        reader.integer("warning_temperature_c", limit, where="temperature.op_limit_max")
        if reader.values.get("warning_temperature_c") == 0:
            del reader.values["warning_temperature_c"]
