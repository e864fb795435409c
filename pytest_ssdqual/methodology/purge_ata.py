"""Purge method 2: ATA SECURITY ERASE UNIT through ``hdparm``, and the ATA password warnings.

A temporary user password ``ATA_PASSWORD`` is set, then the enhanced erase runs when supported,
else the normal one -- only when ``hdparm -I`` reports the security feature supported, not
enabled and not frozen. A drive found with a password set is first tried with
``ATA_PASSWORD`` (a run killed between its set-pass and the end of its erase leaves exactly
that): unlocked when locked, then ``--security-disable``; if hdparm accepts it and the drive
then reports security disabled, the erase goes ahead, else the drive is left alone (its
password is unknown). An erase that exits 0 is checked with ``hdparm -I`` again: the erase
clears the password, so a drive still enabled was not erased. Unless the erase succeeded,
``--security-disable`` (after ``--security-unlock`` when it fails) is always attempted
afterwards, also on a timeout or Ctrl-C.

Which drives: those ``drive.ata_security.has_ata_security`` accepts -- SATA, and USB (a SATA
drive behind a USB-SATA bridge; hdparm reaches it through SAT ATA PASS-THROUGH). Behind a USB
bridge only ``hdparm -I`` is sent: its security state is read and a password found set is
reported exactly as on SATA (never FOB), but no security command goes through the bridge -- no
password is tried, set or removed, and no erase is attempted (many bridges do not pass SECURITY
ERASE UNIT through, or reset the drive when the erase outlasts their command timeout, which
would leave the temporary password set); the purge falls back to blkdiscard and says why.

Sources: ACS-3 SECURITY ERASE UNIT and 4.20 Security feature set; hdparm(8); T10 SAT (ATA
PASS-THROUGH).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_ssdqual.drive.ata_security import (
    ATA_PASSWORD,
    ata_security_from_hdparm,
    has_ata_security,
)
from pytest_ssdqual.methodology.purge_commands import CommandRunner, first_line
from pytest_ssdqual.methodology.purge_nvme import is_nvme

if TYPE_CHECKING:
    from pytest_ssdqual.drive.target import DriveTarget

__all__ = [
    "ATA_LEFT_LOCKED",
    "ATA_LOCKED",
    "ATA_PASSWORD",
    "ATA_PASSWORD_SET",
    "ATA_STATE_UNREAD",
    "ATA_USB_UNTRIED",
    "ata_locked_warning",
    "ata_password_warning",
    "ata_secure_erase",
    "ata_security_state",
]

#: What the erase's outcome says when the drive already had a password (not ours).
ATA_PASSWORD_SET = "an ATA security password is already set on the drive"
ATA_LOCKED = "locked"
#: What an outcome says of a drive behind a USB bridge (no security command sent through it).
ATA_USB_UNTRIED = "the drive is behind a USB bridge"
#: How the outcomes start when the security state of an ATA drive could not be read (hdparm
#: missing or ``hdparm -I`` failing): a password may be set, so the purge is not FOB.
ATA_STATE_UNREAD = ("hdparm not installed", "hdparm -I failed (")
#: What an outcome says when pytest-ssdqual's temporary password could not be removed.
ATA_LEFT_LOCKED = "drive may be left locked with the ATA user password"


def ata_secure_erase(
    target: DriveTarget, dev: str, run: CommandRunner, which: Callable[[str], str | None],
    timeout_s: float,
) -> tuple[str, str | None]:
    """Method 2: ATA SECURITY ERASE UNIT -> ``(outcome, method or None)``.

    ``method`` is ``ata-secure-erase[-enhanced]`` when the erase ran and cleared the password,
    else None and ``outcome`` says why: not an ATA drive (``has_ata_security``), hdparm missing
    or failing, no Security feature set, a password found set (``ATA_PASSWORD_SET`` and the
    state, ``(security locked)`` / ``(security enabled, not locked)``: the caller warns and
    marks the purge not FOB), frozen, behind a USB bridge (read only: see the module), or the
    erase failing. Raises only what ``run`` raises (after trying to remove the temporary
    password).
    """
    identity = target.identity
    device_type = str(getattr(identity, "smartctl_device_type", "") or "")
    if is_nvme(target, dev) or not has_ata_security(identity.transport, device_type):
        typed = f", smartctl -d {device_type}" if device_type else ""
        return f"not an ATA drive (transport {identity.transport}{typed})", None
    usb = identity.transport == "USB"
    hdparm = which("hdparm")
    if hdparm is None:
        return "hdparm not installed (apt-get install hdparm)", None
    code, info = run([hdparm, "-I", dev], 60)
    if code != 0:
        return f"hdparm -I failed (exit {code}: {first_line(info)})", None
    security = ata_security_state(info)
    if not security.get("supported"):
        return "the drive does not support the ATA security feature set", None
    before = ""
    if security.get("enabled") or security.get("locked"):
        state = ATA_LOCKED if security.get("locked") else "enabled, not locked"
        if usb:  # no security command through a bridge: not even one try of our password
            return (f"{ATA_PASSWORD_SET} (security {state}) and {ATA_USB_UNTRIED}: no "
                    f"password is tried through it (not even pytest-ssdqual's "
                    f"'{ATA_PASSWORD}'), not touching it"), None
        # pytest-ssdqual's own password, left by a run killed during its erase? Try it once.
        removed = _ata_remove_password(hdparm, dev, run, locked=bool(security.get("locked")),
                                       retry=False)
        if removed:
            code, info = run([hdparm, "-I", dev], 60)
            security = ata_security_state(info) if code == 0 else {"enabled": True}
        if not removed or security.get("enabled") or security.get("locked"):
            why = ("hdparm accepted pytest-ssdqual's password but the drive still reports "
                   "security enabled" if removed else
                   f"pytest-ssdqual's password '{ATA_PASSWORD}' does not remove it")
            return (f"{ATA_PASSWORD_SET} (security {state}) and {why}: its password is "
                    "unknown, not touching it"), None
        before = (f"security was {state} with pytest-ssdqual's own password '{ATA_PASSWORD}' "
                  "(left by an interrupted run): removed; ")
    if usb:
        return ("ATA security not enabled (hdparm -I); SECURITY ERASE UNIT not attempted: "
                f"{ATA_USB_UNTRIED}, and many bridges do not pass the erase through or reset "
                "the drive when it outlasts their command timeout, which would leave the "
                "temporary password set"), None
    if security.get("frozen"):
        return (before + "the drive's security state is frozen (power-cycle it or "
                "suspend/resume the host, then run again)"), None
    enhanced = bool(security.get("enhanced"))
    flag = "--security-erase-enhanced" if enhanced else "--security-erase"
    method = "ata-secure-erase-enhanced" if enhanced else "ata-secure-erase"
    # From the set-pass on, the drive may hold the temporary password (even a timed-out or
    # interrupted set-pass may have reached it): unless the erase succeeded -- which clears it
    # -- it is always removed again, also on Ctrl-C or a runner error.
    try:
        code, out = run([hdparm, "--user-master", "u", "--security-set-pass", ATA_PASSWORD, dev],
                        60)
        if code != 0:
            failure = f"setting the temporary password failed (exit {code}: {first_line(out)})"
        else:
            code, out = run([hdparm, "--user-master", "u", flag, ATA_PASSWORD, dev], timeout_s)
            if code == 0:
                # the erase clears the password: a drive still enabled was not erased
                code, info = run([hdparm, "-I", dev], 60)
                after = ata_security_state(info) if code == 0 else {}
                if code == 0 and not after.get("enabled") and not after.get("locked"):
                    return (before + f"ok (temporary ATA user password '{ATA_PASSWORD}' set "
                            "for the erase, cleared by it)"), method
                failure = (f"{flag} exited 0 but " + (
                    "the drive still reports ATA security enabled (the erase did not "
                    "complete)" if code == 0 else
                    f"hdparm -I failed afterwards (exit {code}: {first_line(info)})"))
            else:
                failure = f"{flag} failed (exit {code}: {first_line(out)})"
    except BaseException as exc:
        if not _ata_remove_password(hdparm, dev, run):
            exc.add_note(ata_locked_warning(dev))
        raise
    if _ata_remove_password(hdparm, dev, run):
        return f"{before}{failure}; temporary password '{ATA_PASSWORD}' removed", None
    return f"{before}{failure}; {ata_locked_warning(dev)}", None


def ata_password_warning(dev: str, *, locked: bool) -> str:
    """What to tell the operator about a drive found with ATA security enabled (``hdparm -I``:
    ``enabled``): it locks itself at its next power cycle (ACS-3, Security feature set), and a
    locked drive rejects every read and write until unlocked with the password."""
    now = ("it is LOCKED now: every read and write fails until it is unlocked"
           if locked else "it will lock itself at its next power cycle")
    return (f"ATA security is enabled on {dev} (a user password is set) and {now}: whoever set "
            f"the password must remove it (hdparm --user-master u --security-disable PASSWORD "
            f"{dev}); if an interrupted pytest-ssdqual run set it, the password is "
            f"'{ATA_PASSWORD}'")


def ata_locked_warning(dev: str) -> str:
    """What to tell the operator when the temporary ATA password could not be removed."""
    return (f"drive may be left locked with the ATA user password '{ATA_PASSWORD}': unlock with "
            f"hdparm --user-master u --security-disable {ATA_PASSWORD} {dev}")


def _ata_remove_password(hdparm: str, dev: str, run: CommandRunner, *,
                         locked: bool = False, retry: bool = True) -> bool:
    """Remove pytest-ssdqual's password: ``hdparm --security-disable`` with it (after
    ``--security-unlock`` on a ``locked`` drive), and with ``retry`` when that fails, unlock
    and disable once more; True when a disable succeeded. Never raises (it runs while an error
    propagates). Each wrong password counts towards the drive's attempt limit (5, then a power
    cycle is needed: ACS-3), so a drive whose password may not be ours gets one try."""
    unlock = [hdparm, "--user-master", "u", "--security-unlock", ATA_PASSWORD, dev]
    disable = [hdparm, "--user-master", "u", "--security-disable", ATA_PASSWORD, dev]
    try:
        if locked and run(unlock, 60)[0] != 0:
            return False  # not our password: a disable with it would be a second wrong try
        code, _ = run(disable, 60)
        if code == 0:
            return True
        if retry and not locked:
            run(unlock, 60)
            code, _ = run(disable, 60)
    except Exception:
        return False
    return code == 0


def ata_security_state(hdparm_info: str) -> dict[str, bool]:
    """The ``Security:`` block of ``hdparm -I`` as flags: supported, enabled, locked, frozen,
    enhanced (all False when there is no such block); parsed by
    :func:`pytest_ssdqual.drive.ata_security.ata_security_from_hdparm`."""
    found = ata_security_from_hdparm(hdparm_info)
    if found is None:
        return {"supported": False, "enabled": False, "locked": False, "frozen": False,
                "enhanced": False}
    return {"supported": found.supported, "enabled": found.enabled, "locked": found.locked,
            "frozen": found.frozen, "enhanced": found.enhanced}
