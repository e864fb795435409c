"""Purge: return the drive to its fresh-out-of-box (FOB) state before a dirty-state test.

The best method the drive supports is tried first, falling back in this order:

1. NVMe: ``nvme format <ns> --ses=1 --force`` (Format NVM, Secure Erase Setting 1: user data
   erase; the current LBA format is kept). NVMe Sanitize is not used: it acts on the whole
   controller, every namespace, and cannot be undone or stopped. Format NVM is skipped (and
   blkdiscard used) when the controller has other namespaces and its FNA field (Identify
   Controller, Format NVM Attributes, ``nvme id-ctrl -o json`` ``fna``) says a format (bit 0) or
   a secure erase (bit 1) applies to all namespaces -- or when FNA cannot be read: formatting
   would erase the other namespaces too.
2. SATA (USB: read only, below): ATA SECURITY ERASE UNIT through ``hdparm`` (a temporary
   user password ``ATA_PASSWORD`` = ``ssdqual`` is set, then the enhanced erase when
   supported, else the normal one), only when ``hdparm -I`` reports the security feature
   supported, not enabled and *not frozen* (a frozen drive needs a power cycle or a
   suspend/resume first). Unless the erase succeeded (which clears the password),
   ``--security-disable`` is always attempted afterwards, also on a timeout or Ctrl-C; if that
   fails too, the record / error says the drive may be left locked with that password and how
   to unlock it. A drive that already has a password set (security *enabled*, by someone else
   or an interrupted earlier run) is not touched -- its password is unknown -- but
   :attr:`PurgeRecord.warnings` says so: an enabled drive locks itself at the next power
   cycle, a locked one refuses every read and write; such a purge is never FOB
   (:attr:`PurgeRecord.not_fob`). A password set is first tried with ``ATA_PASSWORD``: an
   interrupted earlier run leaves exactly that one, and it is removed. A USB drive (a SATA
   drive behind a bridge) gets ``hdparm -I`` only: a password found set is warned about and
   never FOB as above, but no security command goes through the bridge (no password tried,
   no erase: ``purge_ata``), and blkdiscard runs. An ATA drive whose security state could not
   be read (hdparm missing, ``hdparm -I`` failing) is never FOB either: a password may be set.
3. ``blkdiscard -f <dev>``: TRIM / deallocate the whole device (also loop devices, whose backing
   file gets its holes punched, and zram). ``-f`` (util-linux >= 2.36) skips blkdiscard's
   check for an existing signature, which refuses (only when stdin is a terminal: ``pytest -s``)
   a drive carrying an old partition table; an older blkdiscard that does not know ``-f`` is
   run again without it.

Every command runs with LC_ALL=C and stdin from ``/dev/null``, so no tool can wait on or
change its behaviour because of a terminal. nvme-cli older than 1.10 (Ubuntu 20.04's 1.9) has
no ``format --force``; when it rejects the option the format is run again without it (those
versions do not ask for confirmation).
4. File target: ``fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)`` over the whole file,
   else truncate it to 0 and back to its size.

A target that can purge itself -- an emulated drive resetting its model to FOB (empty SLC
cache, clean) -- offers ``self_purge() -> str`` (the name of what it did); that runs first and the
device methods above still deallocate the blocks.

Each method lives in its own module: ``purge_nvme`` (1), ``purge_ata`` (2), ``purge_discard`` (3
and 4); ``purge_commands`` runs the tools. Every attempt is recorded with its outcome, so a
report says which method ran or why none could. Nothing runs unless the drive allows writes now
(``DriveTarget.assert_write_allowed``) and still has the serial it had at start
(``recheck_identity``).

Sources: SNIA PTS Enterprise 1.1 / Client 2.0, section 3.3 "Purge" (ATA SECURITY ERASE, NVMe
Format with Secure Erase, SCSI SANITIZE; "if none is supported, the test operator records it");
NVM Express Base Specification 2.0, "Format NVM" (SES field), "Sanitize" and Identify Controller
"Format NVM Attributes (FNA)" (bit 0: format applies to all namespaces, bit 1: secure erase
applies to all namespaces); ACS-3 SECURITY ERASE UNIT and the Security feature set (an enabled
password locks the drive at power-on); hdparm(8); blkdiscard(8) and util-linux
sys-utils/blkdiscard.c (``-f``/``--force`` since 2.36; without it a signature is refused when
``isatty(STDIN_FILENO)``); nvme-cli ``format --force`` (since 1.10); fallocate(2).
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ssdqual.errors import SafetyRefusal
from pytest_ssdqual.methodology.purge_ata import (
    ATA_LEFT_LOCKED,
    ATA_LOCKED,
    ATA_PASSWORD_SET,
    ATA_STATE_UNREAD,
    ATA_USB_UNTRIED,
    ata_locked_warning,
    ata_password_warning,
    ata_secure_erase,
)
from pytest_ssdqual.methodology.purge_commands import CommandRunner, run_command
from pytest_ssdqual.methodology.purge_discard import blkdiscard, purge_file
from pytest_ssdqual.methodology.purge_nvme import nvme_format

if TYPE_CHECKING:
    from pytest_ssdqual.drive.target import DriveTarget

__all__ = ["PURGE_TIMEOUT_S", "PurgeRecord", "purge"]

#: Seconds a purge command may take (an enhanced ATA erase of a large drive can take an hour).
PURGE_TIMEOUT_S = 4 * 3600.0


@dataclass(frozen=True)
class PurgeRecord:
    """What the purge did.

    Attributes:
        method: the method that ran (``nvme-format-ses1``, ``ata-secure-erase``,
            ``ata-secure-erase-enhanced``, ``blkdiscard``, ``file-punch-hole``,
            ``file-truncate``), or ``None`` when none could.
        attempts: every method considered, in order, with its outcome (``"blkdiscard: ok"``,
            ``"nvme-format-ses1: not an NVMe namespace"``).
        duration_s: wall time of the purge.
        warnings: what the operator must act on whatever the method, e.g. an ATA password
            found set on the drive (``"ATA security is enabled on /dev/sdb ..."``).
        not_fob: why the drive is not fresh out of box although a method ran (an ATA
            password that is not pytest-ssdqual's -- or, behind a USB bridge, any password --
            is set: the drive was only discarded and locks itself at its next power cycle; or
            the temporary password could not be removed; or an ATA drive's security state
            could not be read); ``''`` when nothing stands against FOB.
    """

    method: str | None
    attempts: tuple[str, ...]
    duration_s: float
    warnings: tuple[str, ...] = ()
    not_fob: str = ""

    @property
    def ran(self) -> bool:
        """True when some method purged the drive."""
        return self.method is not None

    @property
    def fob(self) -> bool:
        """True when the drive is fresh out of box now: a method ran and nothing in
        ``not_fob`` stands against it."""
        return self.ran and not self.not_fob

    def describe(self) -> str:
        """One line for reports; every warning follows as ``WARNING: ...``."""
        if self.method is None:
            text = "purge: no method could run (" + "; ".join(self.attempts) + ")"
        else:
            text = f"purge: {self.method} in {self.duration_s:.1f} s (" + "; ".join(
                self.attempts) + ")"
            if self.not_fob:
                text += f"; NOT FOB: {self.not_fob}"
        return "".join([text, *(f"; WARNING: {w}" for w in self.warnings)])


def purge(
    target: DriveTarget,
    *,
    run: CommandRunner = run_command,
    which: Callable[[str], str | None] = shutil.which,
    timeout_s: float = PURGE_TIMEOUT_S,
) -> PurgeRecord:
    """Purge ``target`` with the best method it supports and record what happened.

    Args:
        target: the drive; it must allow writes.
        run: runs one command, returns ``(returncode, output)``.
        which: finds a tool on ``PATH`` (``shutil.which``).

    Raises:
        SafetyRefusal: the drive refuses writes, or is a ``fio://`` drive (nothing is run).
        DeviceError: the drive changed identity, or a file target cannot be opened.
    """
    target.assert_write_allowed()
    if target.spec.kind == "remote":  # nvme-cli, hdparm, blkdiscard would run HERE, on a
        # local device that has the remote drive's name (/dev/nvme0n1: often the system disk)
        raise SafetyRefusal(target.spec.raw, [
            "a purge of a fio:// drive is not supported: its tools (nvme format, ATA secure "
            "erase, blkdiscard) run on this machine, not on the drive's host; run the test "
            "on the host itself"])
    target.recheck_identity()
    start = time.monotonic()
    attempts: list[str] = []
    own = _self_purge(target, attempts)
    if target.spec.kind == "file":
        method = purge_file(target.fio_filename, target.size_bytes, attempts)
        return PurgeRecord(_join(own, method), tuple(attempts), time.monotonic() - start)
    dev = target.fio_filename
    warnings: list[str] = []
    not_fob: list[str] = []
    for name, attempt in (
        ("nvme-format-ses1", nvme_format),
        ("ata-secure-erase", ata_secure_erase),
        ("blkdiscard", blkdiscard),
    ):
        outcome, method = attempt(target, dev, run, which, timeout_s)
        attempts.append(f"{method or name}: {outcome}")
        if name == "ata-secure-erase" and ATA_PASSWORD_SET in outcome:
            locked = f"(security {ATA_LOCKED})" in outcome
            warnings.append(ata_password_warning(dev, locked=locked))
            whose = ("that was not tried (the drive is behind a USB bridge)"
                     if ATA_USB_UNTRIED in outcome else "that is not pytest-ssdqual's")
            not_fob.append(f"ATA security is enabled with a password {whose}: the drive was "
                           "not securely erased and locks itself at its next power cycle")
        if name == "ata-secure-erase" and outcome.startswith(ATA_STATE_UNREAD):
            not_fob.append(f"the drive's ATA security state could not be read ({outcome}): a "
                           "password may be set, so the drive may not have been erased")
        if name == "ata-secure-erase" and ATA_LEFT_LOCKED in outcome:
            warnings.append(ata_locked_warning(dev))
            not_fob.append("pytest-ssdqual's temporary ATA password could not be removed")
        if method is not None:
            return PurgeRecord(_join(own, method), tuple(attempts), time.monotonic() - start,
                               tuple(warnings), "; ".join(not_fob))
    return PurgeRecord(own, tuple(attempts), time.monotonic() - start, tuple(warnings),
                       "; ".join(not_fob))


def _self_purge(target: DriveTarget, attempts: list[str]) -> str | None:
    hook = getattr(target, "self_purge", None)
    if not callable(hook):
        return None
    name = str(hook())
    attempts.append(f"{name}: ok")
    return name


def _join(*methods: str | None) -> str | None:
    named = [m for m in methods if m]
    return " + ".join(named) or None
