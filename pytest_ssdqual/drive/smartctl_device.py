"""smartctl's device type (``-d TYPE``): given for a drive, or found by trying the USB bridge
types when smartctl says it needs one.

smartctl reads a drive behind a USB bridge it does not know only when told the bridge type:
without ``-d`` it prints ``Unknown USB bridge [0x21c4:0xb06a (0x214)]`` / ``Please specify device
type with the -d option.`` (or ``Unable to detect device type``) and exits with bit 0 set (no
device data). :func:`run_smartctl` then tries ``BRIDGE_TYPES`` in order and keeps the first that
reads the drive; identity records it (``DriveIdentity.smartctl_device_type``) so that every later
smartctl call of the session uses it. A type given for the drive (``--smartctl-device-type``, the
inventory's ``smartctl_device_type``) is used as given, without trying others.

Sources: smartctl(8) ``-d TYPE`` (``sat``: SCSI to ATA Translation, the T10 SAT pass-through
most USB-SATA bridges implement; ``sntjmicron``, ``sntasmedia``, ``sntrealtek``: NVMe behind a
JMicron, ASMedia or Realtek USB bridge), RETURN VALUES (bit 0); smartmontools issues #541 and
#370 (unknown bridge, the message above) and #275 (``-d sntjmicron`` reads a JMicron 0x152d:0xb581
enclosure).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_ssdqual.drive.smartctl import SMARTCTL_NO_DATA_MASK, smartctl_envelope
from pytest_ssdqual.drive.tool_runner import Runner, run_tool
from pytest_ssdqual.errors import ConfigError, DeviceError

__all__ = [
    "BRIDGE_TYPES",
    "DEVICE_TYPE_RE",
    "SmartctlAnswer",
    "asks_for_device_type",
    "check_device_type",
    "run_smartctl",
    "smartctl_argv",
]

#: Types tried, in order, when smartctl asks for one. ``sat`` first: the standard ATA
#: pass-through, which a bridge without it rejects as an unknown command; the ``snt*`` types
#: send their vendor's own commands. usbjmicron/usbcypress are left out: smartctl(8) warns
#: that a wrong guess of their variants can give I/O errors or disconnect the drive.
BRIDGE_TYPES: tuple[str, ...] = ("sat", "sntjmicron", "sntasmedia", "sntrealtek")

#: What a smartctl ``-d`` value looks like: a name, then ``,``/``+`` options (``sat,12``,
#: ``sntjmicron,0x1``, ``megaraid,3``).
DEVICE_TYPE_RE = re.compile(r"[a-z][a-z0-9]*([,+][A-Za-z0-9_./-]+)*")

_ASKS = ("please specify device type", "unable to detect device type")


def check_device_type(value: str, *, key: str, file: str | None = None) -> str:
    """``value`` when it is a smartctl ``-d`` type (``DEVICE_TYPE_RE``).

    Raises:
        ConfigError: naming ``key`` (and ``file``) and the types smartctl offers for USB.
    """
    if DEVICE_TYPE_RE.fullmatch(value):
        return value
    raise ConfigError(f"{value!r} is not a smartctl device type", key=key, file=file,
                      fix=f"give one of smartctl -h's -d types, e.g. {', '.join(BRIDGE_TYPES)}")


def smartctl_argv(args: Sequence[str], path: str, device_type: str | None) -> list[str]:
    """``['smartctl', '-j', ('-d', TYPE), *args, path]``."""
    return ["smartctl", "-j", *(("-d", device_type) if device_type else ()), *args, path]


def asks_for_device_type(doc: object) -> bool:
    """True when a smartctl document read no data and its messages ask for ``-d``."""
    try:
        envelope = smartctl_envelope(doc)
    except DeviceError:
        return False
    said = " ".join(envelope.messages).casefold()
    return bool(envelope.status & SMARTCTL_NO_DATA_MASK) and any(a in said for a in _ASKS)


def _has_data(doc: object) -> bool:
    try:
        return not smartctl_envelope(doc).status & SMARTCTL_NO_DATA_MASK
    except DeviceError:
        return False


class SmartctlAnswer:
    """What :func:`run_smartctl` got.

    Attributes:
        doc: the JSON document used (the one that read the drive; else smartctl's first
            answer), or None when there was none (the reason is in the caller's notes).
        device_type: the ``-d`` type that read the drive (given or found), or None.
        tried: the ``BRIDGE_TYPES`` tried because smartctl asked for a type, in order.
    """

    def __init__(self, doc: dict[str, object] | None, device_type: str | None,
                 tried: tuple[str, ...] = ()) -> None:
        self.doc, self.device_type, self.tried = doc, device_type, tried

    def note(self, source: str, given_from: str = "") -> str:
        """The identity-sources note of a document that read the drive: ``'smartctl 7.4 (-d
        sntjmicron, found by trying sat, sntjmicron: smartctl asked for a device type)'``,
        ``'smartctl 7.4 (-d sat from inventory.yaml:3)'``, or ``source`` alone."""
        if self.device_type is None:
            return source
        if self.tried:
            return (f"{source} (-d {self.device_type}, found by trying {', '.join(self.tried)}: "
                    "smartctl asked for a device type)")
        return f"{source} (-d {self.device_type}" + (f" from {given_from})" if given_from
                                                       else ")")

    def failure(self, path: str) -> str:
        """Why no type was found (``''`` when none was tried): for a note or an error."""
        if not self.tried or self.device_type is not None:
            return ""
        return (f"tried -d {', '.join(self.tried)}: none read the drive (give its type: "
                f"--smartctl-device-type={path}=TYPE, or smartctl_device_type in the inventory)")


def run_smartctl(run: Runner, args: Sequence[str], path: str, notes: list[str], *,
                 device_type: str | None = None) -> SmartctlAnswer:
    """Run ``smartctl -j [-d TYPE] ARGS PATH``.

    With ``device_type``: that type only. Without: no ``-d``; when smartctl answers that it
    needs a device type (:func:`asks_for_device_type`), each of ``BRIDGE_TYPES`` in turn until
    one reads the drive (exit-status bits 0-1 clear). A missing tool, a timeout or output
    without JSON is noted in ``notes`` (``tool_runner.run_tool``); the failed tries are not.
    """
    if device_type:
        return SmartctlAnswer(run_tool(run, smartctl_argv(args, path, device_type), "smartctl",
                                       notes), device_type)
    doc = run_tool(run, smartctl_argv(args, path, None), "smartctl", notes)
    if doc is None or not asks_for_device_type(doc):
        return SmartctlAnswer(doc, None)
    tried: list[str] = []
    for candidate in BRIDGE_TYPES:
        tried.append(candidate)
        found = run_tool(run, smartctl_argv(args, path, candidate), "smartctl", [])
        if found is not None and _has_data(found):
            return SmartctlAnswer(found, candidate, tuple(tried))
    return SmartctlAnswer(doc, None, tuple(tried))
