"""smartctl's JSON envelope (``smartctl -j``, smartmontools >= 7.0), shared by identity and health.

Every smartctl document carries a ``smartctl`` object: ``version`` (``[7, 3]``), ``exit_status``
(a bit mask, smartctl(8) RETURN VALUES: bits 0-1 mean no device data was read, bits 2-7 are
findings about a drive whose data was read) and ``messages`` (``[{"string": ..., "severity":
...}]``). :func:`smartctl_envelope` reads it once for both readers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from pytest_ssdqual.errors import DeviceError

__all__ = ["SMARTCTL_EXIT_BITS", "SMARTCTL_NO_DATA_MASK", "SmartctlEnvelope", "smartctl_envelope"]

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
class SmartctlEnvelope:
    """The ``smartctl`` object of one document.

    Attributes:
        meta: the object itself.
        status: ``exit_status`` (0 when absent or not an integer).
        source: ``'smartctl 7.3'`` (``'smartctl'`` without a version).
        messages: ``messages[].string``, in order.
    """

    meta: Mapping[str, object]
    status: int
    source: str
    messages: tuple[str, ...]

    @property
    def no_data(self) -> str:
        """The meaning of exit-status bits 0-1 that are set (``''`` when data was read)."""
        return "; ".join(SMARTCTL_EXIT_BITS[b] for b in range(2) if self.status & (1 << b))

    @property
    def quoted(self) -> str:
        """The messages joined for an error: ``'a | b'``, or ``'no message'``."""
        return " | ".join(self.messages) or "no message"


def smartctl_envelope(doc: object) -> SmartctlEnvelope:
    """Read the ``smartctl`` object of a parsed smartctl JSON document.

    Raises:
        DeviceError: ``doc`` is not smartctl JSON (no ``smartctl`` object).
    """
    meta = doc.get("smartctl") if isinstance(doc, Mapping) else None
    if not isinstance(meta, Mapping):
        raise DeviceError("not smartctl JSON output: no 'smartctl' object (smartctl >= 7.0 -j)")
    status = meta.get("exit_status", 0)
    status = status if isinstance(status, int) and not isinstance(status, bool) else 0
    version = meta.get("version")
    source = "smartctl"
    if isinstance(version, list) and version:
        source += " " + ".".join(str(v) for v in version)
    raw = meta.get("messages")
    messages = tuple(
        str(m["string"]) for m in (raw if isinstance(raw, list) else [])
        if isinstance(m, Mapping) and isinstance(m.get("string"), str)
    )
    return SmartctlEnvelope(meta, status, source, messages)
