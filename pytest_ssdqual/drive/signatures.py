"""What a block device itself holds at its start and end: partition tables, file systems, RAID
and LVM labels -- read from the device, not from the kernel's view of it.

sysfs lists a partition only once the kernel has scanned the table (at attach, ``partprobe``,
``blockdev --rereadpt``); a table written without a rescan -- or an unmounted file system on the
whole device -- leaves sysfs blank. :func:`probe_signatures` asks util-linux's probing library
through ``wipefs --no-act --json DEV`` (wipefs(8): every signature with its type and byte
offset; ``--no-act`` writes nothing), else ``blkid -p -o export DEV`` (blkid(8): low-level
probe, exit status 2 when nothing is found, 8 when the result is ambivalent). Both only read.

Plain facts; the policy (a signature means the drive is not blank) is
:func:`pytest_ssdqual.drive.safety.signature_reasons`.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pytest_ssdqual.bounds import load_json
from pytest_ssdqual.drive.tool_runner import TOOL_TIMEOUT_S, run_with_stderr

__all__ = ["SIGNATURE_TOOLS", "Signature", "SignatureProbe", "probe_signatures"]

#: Directories searched for wipefs / blkid besides ``PATH`` (a non-root user's PATH often
#: lacks the sbin folders where Debian installs them).
_SBIN = ("/usr/sbin", "/sbin")

#: The tools tried, in order.
SIGNATURE_TOOLS = ("wipefs", "blkid")

#: ``argv -> (returncode, stdout, stderr)``; raises ``OSError`` when the program cannot start
#: and ``subprocess.TimeoutExpired`` when it hangs. Replaced in tests.
ProbeRunner = Callable[[Sequence[str]], tuple[int, str, str]]


@dataclass(frozen=True)
class Signature:
    """One signature found on a device.

    Attributes:
        type: what it is, as util-linux names it: ``gpt``, ``PMBR``, ``dos``, ``ext4``,
            ``xfs``, ``LVM2_member``, ``linux_raid_member``, ``swap`` ...
        offset_bytes: where its magic sits, in bytes from the device's start (None when the
            tool did not say: ``blkid``).
        label: its label or UUID when it has one (``''`` otherwise).
    """

    type: str
    offset_bytes: int | None = None
    label: str = ""

    def describe(self) -> str:
        """``gpt at offset 0x200`` / ``ext4 (UUID 1c2d...) at offset 0x438`` / ``ext4``."""
        text = self.type + (f" ({self.label})" if self.label else "")
        if self.offset_bytes is not None:
            text += f" at offset {self.offset_bytes:#x}"
        return text


@dataclass(frozen=True)
class SignatureProbe:
    """The result of probing one device.

    Attributes:
        device: the path probed.
        signatures: what was found, in the tool's order (empty: blank at the probed places).
        tool: the command that answered (``wipefs --no-act --json``, ``blkid -p``), ``''``
            when none could.
        error: why the device could not be checked (no tool, the tool failed or hung), ``''``
            when it was. A probe with an error says nothing about the device.
    """

    device: str
    signatures: tuple[Signature, ...] = ()
    tool: str = ""
    error: str = ""

    @property
    def checked(self) -> bool:
        """True when a tool answered (then ``signatures`` is what the device holds)."""
        return not self.error


def _which(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    for folder in _SBIN:
        path = os.path.join(folder, name)
        if os.access(path, os.X_OK):
            return path
    return None


def probe_signatures(
    device: str,
    *,
    run: ProbeRunner | None = None,
    which: Callable[[str], str | None] | None = None,
) -> SignatureProbe | None:
    """Every partition-table, file-system and other signature util-linux finds on ``device``.

    Tries ``wipefs --no-act --json DEVICE`` (types and offsets), then ``blkid -p -o export
    DEVICE`` (types only) when wipefs is missing or fails. Never writes.

    Args:
        device: a block device node (``/dev/sdb``).
        run, which: how to run a tool / find it (tests pass recording stand-ins).

    Returns:
        The probe, whose ``error`` says why the device could not be checked; None when
        ``device`` is not a block device node (a fake sysfs tree's path: nothing to probe).
    """
    try:
        if not stat.S_ISBLK(os.stat(device).st_mode):
            return None
    except OSError:
        return None
    run = run or run_with_stderr
    which = which or _which
    failures: list[str] = []
    for tool in SIGNATURE_TOOLS:
        path = which(tool)
        if path is None:
            failures.append(f"{tool} is not installed")
            continue
        argv = ([path, "--no-act", "--json", device] if tool == "wipefs"
                else [path, "-p", "-o", "export", device])
        shown = "wipefs --no-act --json" if tool == "wipefs" else "blkid -p"
        try:
            code, out, err = run(argv)
        except subprocess.TimeoutExpired:
            failures.append(f"{shown} timed out after {TOOL_TIMEOUT_S} s")
            continue
        except OSError as exc:
            failures.append(f"{shown} could not run ({exc.strerror or exc})")
            continue
        parsed = (_wipefs(code, out) if tool == "wipefs" else _blkid(code, out, err))
        if isinstance(parsed, str):
            detail = (err.strip().splitlines() or [parsed])[0]
            failures.append(f"{shown} failed: {detail}")
            continue
        return SignatureProbe(device, parsed, shown)
    return SignatureProbe(device, (), "", "; ".join(failures))


def _wipefs(code: int, out: str) -> tuple[Signature, ...] | str:
    """wipefs's JSON (``{"signatures": [{"offset": "0x200", "type": "gpt", ...}]}``); an old
    util-linux prints nothing for a blank device. A string is why it cannot be read."""
    if code != 0:
        return f"exit status {code}"
    if not out.strip():
        return ()
    try:
        doc = load_json(out)
        rows = doc["signatures"]
        found = []
        for row in rows:
            offset = row.get("offset")
            label = row.get("label") or (f"UUID {row['uuid']}" if row.get("uuid") else "")
            found.append(Signature(str(row.get("type") or "unknown"),
                                   int(offset, 0) if isinstance(offset, str) else None,
                                   str(label)))
        return tuple(found)
    except (ValueError, KeyError, TypeError, AttributeError):
        return "output is not wipefs's JSON"


def _blkid(code: int, out: str, err: str = "") -> tuple[Signature, ...] | str:
    """``blkid -p -o export``'s ``KEY=value`` lines: ``PTTYPE`` (a partition table) and
    ``TYPE`` (a file system, RAID/LVM member, swap ...). Exit status 2 with nothing on stderr:
    nothing found -- with an error on stderr (``Permission denied``, an I/O error) it is the
    same status, and the device was not read; 8: more than one signature (ambivalent), which
    is not blank either."""
    if code == 2:
        return () if not err.strip() else "exit status 2"
    if code == 8:
        return (Signature("several signatures (blkid: ambivalent result)"),)
    if code != 0:
        return f"exit status {code}"
    values = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
    found = [Signature(values[key], None, f"UUID {values['UUID']}" if key == "TYPE"
                       and values.get("UUID") else "")
             for key in ("PTTYPE", "TYPE") if values.get(key)]
    return tuple(found) or (Signature("unknown signature (blkid)"),)
