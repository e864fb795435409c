"""ATA security state of a drive (ACS-3, Security feature set): is a password set, is the drive
locked, frozen -- read-only, from smartctl's JSON or hdparm -I.

A drive whose user password is set ("enabled") locks itself at every power-on; a *locked* drive
rejects every read and write (the kernel logs I/O errors, fio fails its first I/O) until it is
unlocked with the password. :func:`read_ata_security` asks ``smartctl -j -i`` (its
``ata_security`` object: ``state`` is IDENTIFY DEVICE word 128 -- bit 0 supported, 1 enabled,
2 locked, 3 frozen, 5 enhanced erase supported -- plus ``enabled``/``frozen``/``locked``
flags), else ``hdparm -I`` (its ``Security:`` block, :func:`ata_security_from_hdparm`).

Sources: ACS-3 7.1 IDENTIFY DEVICE word 128 and 4.20 Security feature set; smartmontools
``ataprint.cpp`` (``ata_security`` JSON); hdparm(8).
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pytest_ssdqual.drive.tool_runner import Runner, default_run, run_tool
from pytest_ssdqual.errors import DeviceError

__all__ = [
    "ATA_PASSWORD",
    "ATA_TRANSPORTS",
    "AtaSecurity",
    "ata_security_from_hdparm",
    "ata_security_from_smartctl",
    "has_ata_security",
    "locked_reason",
    "read_ata_security",
    "refuse_if_locked",
]

#: The password pytest-ssdqual sets for an ATA SECURITY ERASE UNIT (cleared by the erase).
ATA_PASSWORD = "ssdqual"

#: Transports whose drives speak ATA security (USB: a SATA drive behind a SAT bridge).
ATA_TRANSPORTS = ("SATA", "USB")

#: How smartctl's ``-d`` types for an NVMe drive behind a USB bridge begin (``sntjmicron``,
#: ``sntasmedia``, ``sntrealtek``): such a drive has no ATA security to ask.
NVME_BRIDGE_TYPE_PREFIX = "snt"


def has_ata_security(transport: str, device_type: str = "") -> bool:
    """Whether a drive is one to ask about, and handle by, the ATA Security feature set: the
    one decision used by the open-time refusal (:func:`refuse_if_locked`) and the purge
    (``methodology.purge_ata.ata_secure_erase``).

    Args:
        transport: ``DriveIdentity.transport`` (``'SATA'``, ``'USB'``, ``'NVMe'``, ...).
        device_type: ``DriveIdentity.smartctl_device_type``, smartctl's ``-d`` type that read
            the drive (``''``: smartctl's own choice).

    Returns:
        True for a transport in ``ATA_TRANSPORTS`` -- SATA, or USB: a SATA drive behind a
        USB-SATA bridge, which smartctl (``-d sat``) and hdparm reach through SAT ATA
        PASS-THROUGH -- unless ``device_type`` is an NVMe bridge's (``snt*``). Never raises.

    Sources: ACS-3 4.20 Security feature set; smartctl(8) ``-d sat`` / ``-d snt*``; hdparm(8).
    """
    return transport in ATA_TRANSPORTS and not device_type.startswith(NVME_BRIDGE_TYPE_PREFIX)


@dataclass(frozen=True)
class AtaSecurity:
    """The Security feature set's state.

    Attributes:
        supported: the drive has the feature set. enabled: a user password is set.
        locked: the drive rejects reads and writes until unlocked. frozen: security commands
            are refused until the next power cycle. enhanced: ENHANCED SECURITY ERASE UNIT exists.
        source: where it was read (``smartctl -j -i`` / ``hdparm -I``).
    """

    supported: bool
    enabled: bool
    locked: bool
    frozen: bool
    enhanced: bool = False
    source: str = ""


def ata_security_from_smartctl(doc: Mapping[str, object]) -> AtaSecurity | None:
    """smartctl's ``ata_security`` object (``{"state": 33, "string": "Disabled, NOT FROZEN
    [SEC1]", "enabled": false, "frozen": false}``), or None when the document has none. The
    ``state`` word's bits decide; a ``locked``/``enabled``/``frozen`` flag or ``LOCKED`` in
    the string, when present, can only add to them."""
    sec = doc.get("ata_security")
    if not isinstance(sec, Mapping):
        return None
    word = sec.get("state")
    word = word if isinstance(word, int) and not isinstance(word, bool) else 0
    text = str(sec.get("string") or "")
    return AtaSecurity(
        supported=bool(word & 0x1) or bool(text) and not text.startswith("Unavailable"),
        enabled=bool(word & 0x2) or sec.get("enabled") is True,
        locked=bool(word & 0x4) or sec.get("locked") is True or "LOCKED" in text,
        frozen=bool(word & 0x8) or sec.get("frozen") is True,
        enhanced=bool(word & 0x20),
        source="smartctl -j -i",
    )


def ata_security_from_hdparm(hdparm_info: str) -> AtaSecurity | None:
    """The ``Security:`` block of ``hdparm -I`` (None when there is none).

    hdparm prints ``not`` before a flag that is off (``not\\tenabled``, ``not\\tfrozen``) and
    ``supported: enhanced erase`` when the enhanced erase exists.
    """
    lines: list[str] = []
    inside = found = False
    for line in hdparm_info.splitlines():
        if line.strip().startswith("Security:"):
            inside = found = True
            continue
        if inside:
            if line and not line[0].isspace():
                break
            lines.append(" ".join(line.split()))
    if not found:
        return None
    flags = {flag: flag in lines for flag in ("supported", "enabled", "locked", "frozen")}
    return AtaSecurity(enhanced="supported: enhanced erase" in lines, source="hdparm -I",
                       **flags)


def read_ata_security(
    path: str,
    *,
    run: Runner | None = None,
    which: Callable[[str], str | None] | None = None,
    is_device: Callable[[str], bool] | None = None,
    device_type: str = "",
) -> AtaSecurity | None:
    """The ATA security state of the drive at ``path``: ``smartctl -j -i``, else ``hdparm -I``.
    Both only read (IDENTIFY DEVICE).

    Args:
        device_type: smartctl's ``-d`` type for the drive (a USB bridge's, as identification
            found it; ``""``: smartctl's own choice).
        run: ``argv -> (returncode, stdout)`` (tests pass a recording stand-in).
        which: finds hdparm (``shutil.which``). is_device: whether ``path`` is a block device
            node (default: ``os.stat``); nothing is run for anything else.

    Returns:
        The state, or None when no tool could say (not installed, no security block: an NVMe
        or SAS drive, a USB bridge smartctl does not know).
    """
    if not (is_device or _is_block)(path):
        return None
    run = run or default_run
    notes: list[str] = []
    typed = ["-d", device_type] if device_type else []
    doc = run_tool(run, ["smartctl", "-j", *typed, "-i", path], "smartctl", notes)
    found = ata_security_from_smartctl(doc) if doc is not None else None
    if found is not None:
        return found
    if device_type.startswith(NVME_BRIDGE_TYPE_PREFIX):  # NVMe behind a USB bridge: no ATA
        return None
    hdparm = (which or shutil.which)("hdparm")
    if hdparm is None:
        return None
    try:
        code, out = run([hdparm, "-I", path])
    except (OSError, subprocess.TimeoutExpired):
        return None
    return ata_security_from_hdparm(out) if code == 0 else None


def refuse_if_locked(path: str, transport: str, device_type: str = "",
                     read: Callable[[str], AtaSecurity | None] | None = None) -> None:
    """Refuse a SATA/USB drive that ATA security has locked, before any I/O (every read and
    write would fail); a drive :func:`has_ata_security` rejects (another transport, an NVMe
    drive behind a USB bridge) is not asked.

    Args:
        read: ``path -> AtaSecurity | None`` (default :func:`read_ata_security` with
            ``device_type``; tests pass a stand-in).

    Raises:
        DeviceError: the drive is locked (:func:`locked_reason`).
    """
    if not has_ata_security(transport, device_type):
        return
    security = (read(path) if read is not None
                else read_ata_security(path, device_type=device_type))
    if security is not None and security.locked:
        raise DeviceError(locked_reason(path, security))


def locked_reason(dev: str, security: AtaSecurity) -> str:
    """Why a locked drive is refused before any I/O, and how to unlock it."""
    return (
        f"{dev} is locked by ATA security (a user password is set and the drive is LOCKED, "
        f"from {security.source}): every read and write fails until it is unlocked, so no test "
        f"runs on it; whoever set the password must unlock and remove it (hdparm --user-master "
        f"u --security-unlock PASSWORD {dev}, then hdparm --user-master u --security-disable "
        f"PASSWORD {dev}); if an interrupted pytest-ssdqual run set it, the password is "
        f"'{ATA_PASSWORD}'"
    )


def _is_block(path: str) -> bool:
    try:
        return stat.S_ISBLK(os.stat(path).st_mode)
    except OSError:
        return False
