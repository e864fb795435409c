"""Purge: return the drive to its fresh-out-of-box (FOB) state before a dirty-state test.

The best method the drive supports is tried first, falling back in this order:

1. NVMe: ``nvme format <ns> --ses=1 --force`` (Format NVM, Secure Erase Setting 1: user data
   erase; the current LBA format is kept). NVMe Sanitize is not used: it acts on the whole
   controller, every namespace, and cannot be undone or stopped. Format NVM is skipped (and
   blkdiscard used) when the controller has other namespaces and its FNA field (Identify
   Controller, Format NVM Attributes, ``nvme id-ctrl -o json`` ``fna``) says a format (bit 0) or
   a secure erase (bit 1) applies to all namespaces -- or when FNA cannot be read: formatting
   would erase the other namespaces too.
2. SATA: ATA SECURITY ERASE UNIT through ``hdparm`` (a temporary user password
   ``ATA_PASSWORD`` = ``ssdqual`` is set, then the enhanced erase when supported, else the
   normal one), only when ``hdparm -I`` reports the security feature supported, not enabled and
   *not frozen* (a frozen drive needs a power cycle or a suspend/resume first). Unless the erase
   succeeded (which clears the password), ``--security-disable`` is always attempted afterwards,
   also on a timeout or Ctrl-C; if that fails too, the record / error says the drive may be left
   locked with that password and how to unlock it. A drive that already has a password set
   (security *enabled*, by someone else or an interrupted earlier run) is not touched -- its
   password is unknown -- but :attr:`PurgeRecord.warnings` says so: an enabled drive locks
   itself at the next power cycle, a locked one refuses every read and write.
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

Every attempt is recorded with its outcome, so a report says which method ran or why none
could. Nothing runs unless the drive allows writes now (``DriveTarget.assert_write_allowed``)
and still has the serial it had at start (``recheck_identity``).

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

import ctypes
import ctypes.util
import errno
import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pytest_ssdqual.errors import DeviceError

if TYPE_CHECKING:
    from pytest_ssdqual.drive.target import DriveTarget

#: ``(argv, timeout_s) -> (returncode, stdout + stderr)``; replaced in tests.
CommandRunner = Callable[[Sequence[str], float], tuple[int, str]]

#: Temporary ATA user password for SECURITY ERASE UNIT (cleared by the erase itself).
ATA_PASSWORD = "ssdqual"

#: sysfs mount point (replaced in tests): namespaces of a controller are listed from it.
SYSFS_ROOT = "/sys"

#: Seconds a purge command may take (an enhanced ATA erase of a large drive can take an hour).
PURGE_TIMEOUT_S = 4 * 3600.0

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02


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
    """

    method: str | None
    attempts: tuple[str, ...]
    duration_s: float
    warnings: tuple[str, ...] = ()

    @property
    def ran(self) -> bool:
        """True when some method purged the drive."""
        return self.method is not None

    def describe(self) -> str:
        """One line for reports; every warning follows as ``WARNING: ...``."""
        if self.method is None:
            text = "purge: no method could run (" + "; ".join(self.attempts) + ")"
        else:
            text = f"purge: {self.method} in {self.duration_s:.1f} s (" + "; ".join(
                self.attempts) + ")"
        return "".join([text, *(f"; WARNING: {w}" for w in self.warnings)])


def _run_command(argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
    """Run ``argv`` with stdin from ``/dev/null`` (no tool may prompt, wait on or look at a
    terminal) and ``LC_ALL=C``; ``(returncode, stdout + stderr)``, 124 on a timeout, 127 when it
    cannot start."""
    env = dict(os.environ, LC_ALL="C")
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout_s:.0f} s"
    except OSError as exc:
        return 127, str(exc)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def purge(
    target: DriveTarget,
    *,
    run: CommandRunner = _run_command,
    which: Callable[[str], str | None] = shutil.which,
    timeout_s: float = PURGE_TIMEOUT_S,
) -> PurgeRecord:
    """Purge ``target`` with the best method it supports and record what happened.

    Args:
        target: the drive; it must allow writes.
        run: runs one command, returns ``(returncode, output)``.
        which: finds a tool on ``PATH`` (``shutil.which``).

    Raises:
        SafetyRefusal: the drive refuses writes (nothing is run).
        DeviceError: the drive changed identity, or a file target cannot be opened.
    """
    target.assert_write_allowed()
    target.recheck_identity()
    start = time.monotonic()
    attempts: list[str] = []
    own = _self_purge(target, attempts)
    if target.spec.kind == "file":
        method = _purge_file(target.fio_filename, target.size_bytes, attempts)
        return PurgeRecord(_join(own, method), tuple(attempts), time.monotonic() - start)
    dev = target.fio_filename
    warnings: list[str] = []
    for name, attempt in (
        ("nvme-format-ses1", _nvme_format),
        ("ata-secure-erase", _ata_secure_erase),
        ("blkdiscard", _blkdiscard),
    ):
        outcome, method = attempt(target, dev, run, which, timeout_s)
        attempts.append(f"{method or name}: {outcome}")
        if name == "ata-secure-erase" and _ATA_PASSWORD_SET in outcome:
            locked = f"(security {_ATA_LOCKED})" in outcome
            warnings.append(ata_password_warning(dev, locked=locked))
        if method is not None:
            return PurgeRecord(_join(own, method), tuple(attempts), time.monotonic() - start,
                               tuple(warnings))
    return PurgeRecord(own, tuple(attempts), time.monotonic() - start, tuple(warnings))


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


def _is_nvme(target: DriveTarget, dev: str) -> bool:
    return os.path.basename(dev).startswith("nvme") or target.identity.transport == "NVMe"


def _nvme_format(
    target: DriveTarget, dev: str, run: CommandRunner, which: Callable[[str], str | None],
    timeout_s: float,
) -> tuple[str, str | None]:
    if not _is_nvme(target, dev):
        return "not an NVMe namespace", None
    nvme = which("nvme")
    if nvme is None:
        return "nvme-cli not installed (apt-get install nvme-cli)", None
    unsafe = _format_would_erase_others(nvme, dev, run)
    if unsafe is not None:
        return f"nvme format skipped: {unsafe}", None
    argv = [nvme, "format", dev, "--ses=1", "--force"]
    code, out = run(argv, timeout_s)
    note = ""
    if code != 0 and _unknown_option(out, "--force"):
        # nvme-cli < 1.10 (e.g. 1.9 of Ubuntu 20.04) has no --force and asks nothing
        code, out = run(argv[:-1], timeout_s)
        note = " (nvme-cli without --force: run without it)"
    if code != 0:
        return f"failed (exit {code}: {_first_line(out)}){note}", None
    return f"ok{note}", "nvme-format-ses1"


def _unknown_option(output: str, option: str) -> bool:
    """True when a tool's ``output`` says it does not know ``option`` (getopt_long's
    ``unrecognized option '--force'`` / ``invalid option -- 'f'``; nvme-cli's argconfig prints
    the former)."""
    text = output.lower()
    if option.startswith("--"):
        return f"unrecognized option '{option}'" in text or f"unrecognized option `{option}'" \
            in text or f"unknown option '{option}'" in text
    letter = option.lstrip("-")
    return f"invalid option -- '{letter}'" in text or f"invalid option -- {letter}" in text


def _format_would_erase_others(nvme: str, dev: str, run: CommandRunner) -> str | None:
    """Why ``nvme format`` on ``dev`` could erase other namespaces, or ``None`` when it cannot.

    Unsafe: the controller has other namespaces (``/sys/class/nvme/<ctrl>/<ctrl>n*`` and the
    entries of ``/sys/block/<ns>/device/``) -- or they cannot be listed -- and Identify
    Controller FNA (Format NVM Attributes) bit 0 (format applies to all namespaces) or bit 1
    (secure erase applies to all namespaces) is set, or FNA cannot be read.
    """
    name = os.path.basename(os.path.realpath(dev))
    others = _sibling_namespaces(name)
    if others is not None and not others:
        return None
    code, out = run([nvme, "id-ctrl", dev, "-o", "json"], 60)
    fna: int | None = None
    if code == 0:
        try:
            value = json.loads(out).get("fna")
            fna = int(value) if value is not None else None
        except (ValueError, TypeError, AttributeError):
            fna = None
    if fna is not None and not fna & 0x3:
        return None
    fna_text = f"FNA=0x{fna:x}" if fna is not None else (
        f"FNA unknown (nvme id-ctrl failed: exit {code}: {_first_line(out)})" if code != 0
        else "FNA unknown (no fna field in nvme id-ctrl -o json)")
    if others is None:
        return (f"{fna_text} and the other namespaces of {name}'s controller cannot be listed "
                "from sysfs: formatting could erase them")
    return (f"{fna_text} and the controller has other namespaces {', '.join(others)}: "
            "formatting would erase them")


def _sibling_namespaces(name: str) -> list[str] | None:
    """The other namespaces of namespace ``name``'s controller, ``None`` when unknown."""
    match = re.fullmatch(r"(nvme\d+)(?:c\d+)?n(\d+)", name)
    if match is None:
        return None
    ctrl = match.group(1)
    namespace = re.compile(r"nvme\d+(?:c\d+)?n\d+")
    found: set[str] = set()
    listed = False
    for folder in (os.path.join(SYSFS_ROOT, "class", "nvme", ctrl),
                   os.path.join(SYSFS_ROOT, "block", name, "device")):
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        listed = True
        found.update(e for e in entries if namespace.fullmatch(e))
    if not listed:
        return None
    # nvme0c0n1 is a multipath path to nvme0n1 itself: same namespace number
    return sorted(e for e in found if e.rpartition("n")[2] != match.group(2))


def _ata_secure_erase(
    target: DriveTarget, dev: str, run: CommandRunner, which: Callable[[str], str | None],
    timeout_s: float,
) -> tuple[str, str | None]:
    if _is_nvme(target, dev) or target.identity.transport != "SATA":
        return f"not an ATA drive (transport {target.identity.transport})", None
    hdparm = which("hdparm")
    if hdparm is None:
        return "hdparm not installed (apt-get install hdparm)", None
    code, info = run([hdparm, "-I", dev], 60)
    if code != 0:
        return f"hdparm -I failed (exit {code}: {_first_line(info)})", None
    security = ata_security_state(info)
    if not security.get("supported"):
        return "the drive does not support the ATA security feature set", None
    if security.get("enabled") or security.get("locked"):
        state = _ATA_LOCKED if security.get("locked") else "enabled, not locked"
        return (f"{_ATA_PASSWORD_SET} (security {state}): its password is unknown, not "
                "touching it"), None
    if security.get("frozen"):
        return ("the drive's security state is frozen (power-cycle it or suspend/resume the "
                "host, then run again)"), None
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
            failure = f"setting the temporary password failed (exit {code}: {_first_line(out)})"
        else:
            code, out = run([hdparm, "--user-master", "u", flag, ATA_PASSWORD, dev], timeout_s)
            if code == 0:
                return (f"ok (temporary ATA user password '{ATA_PASSWORD}' set for the erase, "
                        "cleared by it)"), method
            failure = f"{flag} failed (exit {code}: {_first_line(out)})"
    except BaseException as exc:
        if not _ata_remove_password(hdparm, dev, run):
            exc.add_note(ata_locked_warning(dev))
        raise
    if _ata_remove_password(hdparm, dev, run):
        return f"{failure}; temporary password '{ATA_PASSWORD}' removed", None
    return f"{failure}; {ata_locked_warning(dev)}", None


_ATA_PASSWORD_SET = "an ATA security password is already set on the drive"
_ATA_LOCKED = "locked"


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


def _ata_remove_password(hdparm: str, dev: str, run: CommandRunner) -> bool:
    """``hdparm --security-disable`` with the temporary password; True when it succeeded."""
    try:
        code, _ = run([hdparm, "--user-master", "u", "--security-disable", ATA_PASSWORD, dev],
                      60)
    except Exception:
        return False
    return code == 0


def ata_security_state(hdparm_info: str) -> dict[str, bool]:
    """The ``Security:`` block of ``hdparm -I`` as flags: supported, enabled, locked, frozen,
    enhanced.

    hdparm prints ``not`` before a flag that is off (``not\\tenabled``, ``not\\tfrozen``) and
    ``supported: enhanced erase`` when the enhanced erase exists.
    """
    lines: list[str] = []
    inside = False
    for line in hdparm_info.splitlines():
        if line.strip().startswith("Security:"):
            inside = True
            continue
        if inside:
            if line and not line[0].isspace():
                break
            lines.append(" ".join(line.split()))
    state = {"supported": False, "enabled": False, "locked": False, "frozen": False,
             "enhanced": False}
    for text in lines:
        for flag in ("supported", "enabled", "locked", "frozen"):
            if text == flag:
                state[flag] = True
        if text == "supported: enhanced erase":
            state["enhanced"] = True
    return state


def _blkdiscard(
    target: DriveTarget, dev: str, run: CommandRunner, which: Callable[[str], str | None],
    timeout_s: float,
) -> tuple[str, str | None]:
    tool = which("blkdiscard")
    if tool is None:
        return "blkdiscard not installed (util-linux)", None
    # -f: util-linux >= 2.36 otherwise refuses a device with a signature when stdin is a tty
    code, out = run([tool, "-f", dev], timeout_s)
    if code != 0 and _unknown_option(out, "-f"):  # util-linux < 2.36: no -f, and no check
        code, out = run([tool, dev], timeout_s)
    if code != 0:
        return f"failed (exit {code}: {_first_line(out)})", None
    return "ok", "blkdiscard"


def _purge_file(path: str, size_bytes: int, attempts: list[str]) -> str | None:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError as exc:
        raise DeviceError(f"cannot open file target {path} to purge it: {exc.strerror}") from exc
    try:
        err = _punch_hole(fd, size_bytes)
        if err == 0:
            attempts.append("file-punch-hole: ok")
            return "file-punch-hole"
        attempts.append(f"file-punch-hole: {os.strerror(err)}")
        try:
            os.ftruncate(fd, 0)
            os.ftruncate(fd, size_bytes)
        except OSError as exc:
            attempts.append(f"file-truncate: {exc.strerror}")
            return None
        attempts.append("file-truncate: ok")
        return "file-truncate"
    finally:
        os.close(fd)


def _punch_hole(fd: int, size_bytes: int) -> int:
    """``fallocate(fd, PUNCH_HOLE | KEEP_SIZE, 0, size)``; returns 0 or the errno."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return errno.ENOSYS
    libc = ctypes.CDLL(libc_name, use_errno=True)
    fallocate = libc.fallocate
    fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    fallocate.restype = ctypes.c_int
    if fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, 0, size_bytes) == 0:
        return 0
    return ctypes.get_errno() or errno.EIO


def _first_line(text: str) -> str:
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "no output"
