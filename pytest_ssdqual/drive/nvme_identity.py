"""Drive identity from ``nvme id-ctrl -o json`` (NVM Express Base Specification, Identify
Controller data structure: ``MN``, ``SN``, ``FR``, ``TNVMCAP``, ``WCTEMP``/``CCTEMP``).
"""

from __future__ import annotations

from pytest_ssdqual.drive.tool_values import KELVIN_OFFSET, coerce_int, text_or_none
from pytest_ssdqual.errors import DeviceError

__all__ = ["identity_from_nvme_id_ctrl"]


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
        text = text_or_none(doc.get(key))
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
