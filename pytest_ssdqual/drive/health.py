"""Drive health from ``smartctl -j`` and ``nvme smart-log -o json``: wear, spare, warnings.

Tools print the same facts differently from version to version, and this module reads them all
into one :class:`DriveHealth`:

* smartctl's exit status is a bit mask (smartctl(8), RETURN VALUES): bits 0-1 mean no device
  data was read (:class:`~pytest_ssdqual.errors.DeviceError`); bits 2-7 are findings *about* a
  drive whose data was read (a failed SMART command, DISK FAILING, attributes at threshold,
  error-log entries): the data is kept and the findings listed.
* nvme-cli prints numbers as JSON integers, as floats (long-double printing of older versions,
  ``310.0``), as quoted strings, or as comma-grouped strings (``"3,200,631,791,616"``, 2.3);
  all go through :func:`~pytest_ssdqual.drive.tool_values.coerce_int`.
* ``critical_warning`` is an integer bit mask, or since nvme-cli 2.11 an object
  ``{"value": N, "available_spare": 0, ...}``; smartctl >= 7.3 also expands it under
  ``smart_status.nvme``.
* NVMe counters are 128-bit (NVM Express Base Specification, SMART / Health Information log
  page 02h). Python integers keep them exact; a value at or beyond 2**64 is kept as read and
  flagged in ``implausible`` (no drive has written 2**64 data units of 512,000 bytes).
* Absent fields are ``None`` and named in ``absent``, never 0: "not reported" is not "none".

* ATA drives (smartctl ``-a``/``-x``): media errors from attribute 187 (Reported Uncorrectable
  Errors) raw value, percentage used from the Device Statistics page 7 "Percentage Used
  Endurance Indicator" (ACS-4 9.10), warning temperature from ``temperature.op_limit_max`` (SCT
  status) or Device Statistics page 5 "Specified Maximum Operating Temperature", host and NAND
  bytes written from the vendor attributes whose smartmontools drive-database name carries the
  unit (``Host_Writes_32MiB``, ``NAND_Writes_32MiB``, ``Lifetime_Writes_GiB``,
  ``Flash_Writes_GiB``, ``Total_LBAs_Written`` in logical sectors;
  :data:`~pytest_ssdqual.drive.health_ata.ATA_WRITE_ATTRIBUTES`).

Units: temperatures in °C (nvme-cli prints Kelvin, smartctl Celsius; Kelvin - 273 as nvme-cli
and smartctl convert), percentages in %, ``data_units_*`` in NVMe data units of 1000 512-byte
sectors (``DATA_UNIT_BYTES``), hours, bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from pytest_ssdqual.drive.health_ata import ata_fields
from pytest_ssdqual.drive.health_ocp import smart_thermal_metrics
from pytest_ssdqual.drive.smartctl import (
    SMARTCTL_EXIT_BITS,
    SMARTCTL_NO_DATA_MASK,
    smartctl_envelope,
)
from pytest_ssdqual.drive.tool_values import KELVIN_OFFSET, coerce_int
from pytest_ssdqual.errors import DeviceError

__all__ = [
    "CRITICAL_WARNING_BITS",
    "COUNTER_FIELDS",
    "DATA_UNIT_BYTES",
    "DriveHealth",
    "FieldReader",
    "health_from_nvme_smart_log",
    "health_from_smartctl",
]

#: Bytes in one NVMe "data unit" (``data_units_read``/``written``): 1000 units of 512 bytes.
DATA_UNIT_BYTES = 512_000

#: NVMe SMART / Health log byte 0, Critical Warning: bit -> meaning.
CRITICAL_WARNING_BITS: dict[int, str] = {
    0: "available spare below threshold",
    1: "temperature above or below a threshold",
    2: "NVM subsystem reliability degraded",
    3: "media placed in read-only mode",
    4: "volatile memory backup device failed",
    5: "persistent memory region read-only or unreliable",
}

#: Counter fields: 128-bit in NVMe, plain integers here.
COUNTER_FIELDS: tuple[str, ...] = (
    "data_units_read",
    "data_units_written",
    "host_read_commands",
    "host_write_commands",
    "power_cycles",
    "power_on_hours",
    "unsafe_shutdowns",
    "media_errors",
    "error_log_entries",
)

_FIELDS: tuple[str, ...] = (
    "critical_warning",
    "temperature_c",
    "available_spare_pct",
    "available_spare_threshold_pct",
    "percentage_used",
    *COUNTER_FIELDS,
)

_LIMIT_64 = 2**64

#: nvme smart-log key -> field, alternatives in order (nvme-cli 1.x/2.x spellings).
_NVME_CLI_KEYS: dict[str, tuple[str, ...]] = {
    "available_spare_pct": ("avail_spare", "available_spare"),
    "available_spare_threshold_pct": ("spare_thresh", "available_spare_threshold"),
    "percentage_used": ("percent_used", "percentage_used"),
    "data_units_read": ("data_units_read",),
    "data_units_written": ("data_units_written",),
    "host_read_commands": ("host_read_commands", "host_reads"),
    "host_write_commands": ("host_write_commands", "host_writes"),
    "power_cycles": ("power_cycles",),
    "power_on_hours": ("power_on_hours",),
    "unsafe_shutdowns": ("unsafe_shutdowns",),
    "media_errors": ("media_errors",),
    "error_log_entries": ("num_err_log_entries",),
}

#: smartctl ``nvme_smart_health_information_log`` key -> field.
_SMARTCTL_NVME_KEYS: dict[str, tuple[str, ...]] = {
    "available_spare_pct": ("available_spare",),
    "available_spare_threshold_pct": ("available_spare_threshold",),
    "percentage_used": ("percentage_used",),
    "data_units_read": ("data_units_read",),
    "data_units_written": ("data_units_written",),
    "host_read_commands": ("host_reads",),
    "host_write_commands": ("host_writes",),
    "power_cycles": ("power_cycles",),
    "power_on_hours": ("power_on_hours",),
    "unsafe_shutdowns": ("unsafe_shutdowns",),
    "media_errors": ("media_errors",),
    "error_log_entries": ("num_err_log_entries",),
}


@dataclass(frozen=True)
class DriveHealth:
    """A drive's health as one tool reported it, at one moment.

    Attributes:
        source: ``'smartctl 7.3'``, ``'nvme-cli smart-log'``.
        critical_warning: NVMe critical-warning bit mask (``None`` for ATA or when absent).
        temperature_c: composite / current temperature in °C; ``None`` when not reported
            (smartctl prints 0 for a drive without a sensor, nvme-cli 0 K).
        available_spare_pct, available_spare_threshold_pct, percentage_used: in %
            (``percentage_used`` may exceed 100: the spec allows up to 255).
        data_units_read, data_units_written: NVMe data units (``DATA_UNIT_BYTES`` each).
        host_read_commands, host_write_commands, power_cycles, power_on_hours,
        unsafe_shutdowns, media_errors, error_log_entries: counters, exact integers.
        smart_passed: smartctl's overall ``smart_status.passed``; ``None`` when absent.
        findings: smartctl exit-status bits 2-7 that were set, as sentences.
        exit_status: smartctl's exit status (a bit mask, smartctl(8) RETURN VALUES); ``None``
            for nvme-cli.
        messages: smartctl's ``messages[].string`` as printed (severity first).
        warning_temperature_c: the drive's warning temperature in °C (NVMe ``WCTEMP`` of
            Identify Controller; ATA SCT ``op_limit_max``), ``None`` when unknown.
        host_written_bytes: bytes the host wrote (NVMe ``data_units_written``; ATA host-write
            attributes), ``None`` when not reported.
        nand_written_bytes: bytes written to the NAND (ATA NAND-write attributes; an OCP
            datacenter NVMe drive's C0 log, see :func:`nand_written_from_ocp_c0`), ``None``
            when not reported (NVMe's standard log has no such counter).
        implausible: ``'field: why'`` for values kept but not believable (beyond 64 bits,
            spare above 100 %, unreadable text).
        absent: the fields the tool did not report.
        log_metrics: metric -> integer from the OCP datacenter logs (C0h-C3h) and the SMART
            thermal fields (``health_ocp``; names in ``catalog.health_ocp``); only those read.
        log_notes: why a log or field is not in ``log_metrics`` ("not reported" lines).
    """

    source: str
    critical_warning: int | None = None
    temperature_c: int | None = None
    available_spare_pct: int | None = None
    available_spare_threshold_pct: int | None = None
    percentage_used: int | None = None
    data_units_read: int | None = None
    data_units_written: int | None = None
    host_read_commands: int | None = None
    host_write_commands: int | None = None
    power_cycles: int | None = None
    power_on_hours: int | None = None
    unsafe_shutdowns: int | None = None
    media_errors: int | None = None
    error_log_entries: int | None = None
    smart_passed: bool | None = None
    findings: tuple[str, ...] = ()
    implausible: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()
    exit_status: int | None = None
    messages: tuple[str, ...] = ()
    warning_temperature_c: int | None = None
    host_written_bytes: int | None = None
    nand_written_bytes: int | None = None
    log_metrics: Mapping[str, int] = dc_field(default_factory=dict)
    log_notes: tuple[str, ...] = ()

    @property
    def critical_warnings(self) -> tuple[str, ...]:
        """The set bits of ``critical_warning``, as meanings (reserved bits as ``bit N``)."""
        if not self.critical_warning:
            return ()
        return tuple(
            CRITICAL_WARNING_BITS.get(bit, f"reserved bit {bit}")
            for bit in range(self.critical_warning.bit_length())
            if self.critical_warning & (1 << bit)
        )

    @property
    def data_written_bytes(self) -> int | None:
        """``data_units_written`` in bytes (exact), or ``None``."""
        return None if self.data_units_written is None else self.data_units_written * (
            DATA_UNIT_BYTES
        )


class FieldReader:
    """Collects the fields of one :class:`DriveHealth` from a document, noting unreadable and
    implausible values (``integer``), then builds it (``build``)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
        self.implausible: list[str] = []

    def integer(self, field: str, raw: object, *, where: str) -> int | None:
        try:
            value = coerce_int(raw, field=where)
        except ValueError as exc:
            self.implausible.append(f"{field}: unreadable ({exc})")
            return None
        if value >= _LIMIT_64:
            self.implausible.append(
                f"{field}: {value} is 2**64 or more (kept exact; no drive counts that far)"
            )
        elif value < 0:
            self.implausible.append(f"{field}: {value} is negative")
        self.values[field] = value
        return value

    def first(self, doc: Mapping[str, object], field: str, keys: tuple[str, ...]) -> None:
        for key in keys:
            if key in doc and doc[key] is not None:
                self.integer(field, doc[key], where=key)
                return

    def build(self, source: str, **extra: Any) -> DriveHealth:
        spare = self.values.get("available_spare_pct")
        if isinstance(spare, int) and spare > 100:
            self.implausible.append(f"available_spare_pct: {spare} % is above 100 %")
        units = self.values.get("data_units_written")
        if "host_written_bytes" not in self.values and isinstance(units, int):
            self.values["host_written_bytes"] = units * DATA_UNIT_BYTES
        absent = tuple(f for f in _FIELDS if f not in self.values and f not in extra)
        return DriveHealth(
            source=source, implausible=tuple(self.implausible), absent=absent,
            **self.values, **extra,
        )


def _critical_warning(reader: FieldReader, raw: object) -> None:
    """An int (or int-like) bit mask, or nvme-cli 2.11's ``{"value": N, ...}`` object."""
    if isinstance(raw, Mapping):
        if "value" not in raw:
            reader.implausible.append("critical_warning: an object without 'value'")
            return
        raw = raw["value"]
    reader.integer("critical_warning", raw, where="critical_warning")


def health_from_nvme_smart_log(doc: dict[str, object]) -> DriveHealth:
    """Health from ``nvme smart-log -o json`` (nvme-cli 1.x to 2.11+).

    Args:
        doc: the parsed JSON document (``temperature`` in Kelvin).

    Returns:
        A ``DriveHealth`` with ``source='nvme-cli smart-log'``.

    Raises:
        DeviceError: the document has neither ``critical_warning`` nor ``temperature`` (not
            smart-log output).
    """
    if not isinstance(doc, Mapping) or not (
        "critical_warning" in doc or "temperature" in doc
    ):
        raise DeviceError(
            "not nvme smart-log JSON output: no 'critical_warning' or 'temperature' field"
        )
    reader = FieldReader()
    if "critical_warning" in doc:
        _critical_warning(reader, doc["critical_warning"])
    if doc.get("temperature") is not None:
        kelvin = reader.integer("temperature_c", doc["temperature"], where="temperature")
        if kelvin is not None and kelvin > 0:
            reader.values["temperature_c"] = kelvin - KELVIN_OFFSET
        elif kelvin is not None:  # 0 K: no sensor reading
            del reader.values["temperature_c"]
    for name, keys in _NVME_CLI_KEYS.items():
        reader.first(doc, name, keys)
    thermal = smart_thermal_metrics(doc, smartctl=False, notes=reader.implausible)
    return reader.build("nvme-cli smart-log", log_metrics=thermal)


def health_from_smartctl(doc: dict[str, object]) -> DriveHealth:
    """Health from smartctl's JSON (``smartctl -j -a`` / ``-x``, smartctl >= 7.0).

    NVMe drives: ``nvme_smart_health_information_log`` (temperature in °C). ATA/SCSI drives:
    ``temperature.current`` (0 = no sensor), ``power_on_time.hours``, ``power_cycle_count``.
    Both: ``smart_status.passed``; exit-status bits 2-7 as ``findings``.

    Args:
        doc: the parsed JSON document.

    Returns:
        A ``DriveHealth`` with ``source='smartctl X.Y'``.

    Raises:
        DeviceError: not smartctl JSON, or exit-status bit 0 or 1 (no device data; the message
            quotes smartctl's messages).
    """
    envelope = smartctl_envelope(doc)
    meta, status, source = envelope.meta, envelope.status, envelope.source
    if status & SMARTCTL_NO_DATA_MASK:
        raise DeviceError(f"{source} read no device data (exit status {status}: "
                          f"{envelope.no_data}): {envelope.quoted}")
    findings = tuple(SMARTCTL_EXIT_BITS[b] for b in range(2, 8) if status & (1 << b))

    reader = FieldReader()
    thermal: dict[str, int] = {}
    log = doc.get("nvme_smart_health_information_log")
    if isinstance(log, Mapping):
        if "critical_warning" in log:
            _critical_warning(reader, log["critical_warning"])
        if log.get("temperature") is not None:
            reader.integer("temperature_c", log["temperature"], where="temperature")
        for name, keys in _SMARTCTL_NVME_KEYS.items():
            reader.first(log, name, keys)
        thermal = smart_thermal_metrics(log, smartctl=True, notes=reader.implausible)
    temperature = doc.get("temperature")
    if "temperature_c" not in reader.values and isinstance(temperature, Mapping):
        if temperature.get("current") is not None:
            reader.integer("temperature_c", temperature["current"], where="temperature.current")
    if reader.values.get("temperature_c") == 0:  # smartctl prints 0 when there is no sensor
        del reader.values["temperature_c"]
    ata_fields(reader, doc)
    hours = doc.get("power_on_time")
    if "power_on_hours" not in reader.values and isinstance(hours, Mapping):
        if hours.get("hours") is not None:
            reader.integer("power_on_hours", hours["hours"], where="power_on_time.hours")
    if "power_cycles" not in reader.values and doc.get("power_cycle_count") is not None:
        reader.integer("power_cycles", doc["power_cycle_count"], where="power_cycle_count")
    smart = doc.get("smart_status")
    passed = smart.get("passed") if isinstance(smart, Mapping) else None
    raw_messages = meta.get("messages")
    messages = tuple(
        f"{m.get('severity', 'information')}: {m['string']}"
        for m in (raw_messages if isinstance(raw_messages, list) else [])
        if isinstance(m, Mapping) and isinstance(m.get("string"), str)
    )
    return reader.build(
        source, smart_passed=passed if isinstance(passed, bool) else None, findings=findings,
        exit_status=status, messages=messages, log_metrics=thermal,
    )


def _key(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def nand_written_from_ocp_c0(doc: Mapping[str, object]) -> int | None:
    """Bytes written to the NAND from ``nvme ocp smart-add-log -o json`` (OCP Datacenter NVMe
    SSD Specification, SMART / Health Information Extended log C0h, "Physical Media Units
    Written": a 128-bit count of bytes, printed by nvme-cli as ``{"hi": H, "lo": L}``).

    Args:
        doc: the parsed document (key spelled ``"Physical media units written"`` or in snake
            case by other nvme-cli versions).

    Returns:
        ``hi * 2**64 + lo``, or ``None`` when the document has no such counter.

    Raises:
        ValueError: the counter is there but unreadable (the message names it).
    """
    wanted = _key("Physical media units written")
    for name, value in doc.items():
        if _key(str(name)) != wanted:
            continue
        if isinstance(value, Mapping):
            return (coerce_int(value.get("hi", 0), field=f"{name}.hi") << 64) + coerce_int(
                value.get("lo", 0), field=f"{name}.lo")
        return coerce_int(value, field=str(name))
    return None
