"""The real firmware updaters: nvme-cli, hdparm and a lab's own command (``cmd:``).

Exact commands (``DEV`` the namespace block device, ``CTRL`` its controller character device,
``/dev/nvme0n1`` -> ``/dev/nvme0``):

* ``nvme``, from nvme-cli's manual pages (``nvme-fw-log(1)``, ``nvme-fw-download(1)``,
  ``nvme-fw-commit(1)``, ``nvme-reset(1)``, ``nvme-subsystem-reset(1)``)::

      nvme id-ctrl DEV -o json            FRMW: slot count (bits 3:1), slot 1 read-only
                                          (bit 0), activation without reset (bit 4)
      nvme fw-log DEV -o json             {"nvme0n1": {"Active Firmware Slot (afi)": 1,
                                                       "Firmware Rev Slot 1": "N (REV)"}}
      nvme fw-download DEV --fw=IMAGE [--xfer=BYTES]
      nvme fw-commit DEV --slot=N --action=A
      nvme reset CTRL                     after action 1 or 2 (activated at the next reset)
      nvme subsystem-reset CTRL           when fw-commit says the firmware "requires
                                          subsystem reset"

  A commit answered "requires conventional reset" needs a power cycle, which this plug cannot
  do: the update stops there with that reason.
* ``hdparm`` (hdparm 9.65 ``--help``: "--fwdownload Download firmware file to drive
  (EXTREMELY DANGEROUS)"; the man page: "this should be the only option given", sent with ATA
  DOWNLOAD MICROCODE, which activates the new microcode when the transfer completes; hdparm
  refuses it without both safety flags)::

      hdparm -I DEV                       "Firmware Revision:" (the one image ATA reports)
      hdparm --fwdownload IMAGE --yes-i-know-what-i-am-doing --please-destroy-my-drive DEV

* ``cmd:ARGV`` with ``{image}``, ``{slot}``, ``{action}``, ``{device}``, ``{serial}``: run once,
  at commit, without a shell; the lab's tool does download, commit and any reset.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from pytest_ssdqual.plugs.firmware_updater import (
    ACTIONS_NEEDING_RESET,
    FirmwareLog,
    FirmwareSlot,
    FirmwareUpdateError,
)
from pytest_ssdqual.plugs.spec import PlugSpec

__all__ = ["CommandUpdater", "HdparmUpdater", "NvmeUpdater", "controller_device",
           "parse_fw_log"]

#: ``run(argv) -> (exit status, stdout, stderr)``.
Runner = Callable[[list[str]], tuple[int, str, str]]
#: Seconds a firmware tool may take (a download of a large image over a slow link).
TOOL_TIMEOUT_S = 600.0
#: Seconds to wait for the namespace device to come back after a reset.
RESET_SETTLE_S = 60.0


def default_run(argv: list[str]) -> tuple[int, str, str]:
    """Run ``argv`` without a shell; a missing tool or a time-out is a FirmwareUpdateError."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False,
                              timeout=TOOL_TIMEOUT_S)
    except FileNotFoundError:
        raise FirmwareUpdateError(f"{argv[0]} is not installed (needed for `{' '.join(argv)}`)"
                                  ) from None
    except subprocess.TimeoutExpired:
        raise FirmwareUpdateError(f"`{' '.join(argv)}` did not finish within "
                                  f"{TOOL_TIMEOUT_S:g} s") from None
    return proc.returncode, proc.stdout, proc.stderr


def wait_for_device(device: str, timeout_s: float = RESET_SETTLE_S) -> None:
    """Wait until ``device`` exists again (the kernel re-creates the namespace after a
    controller reset). Raises FirmwareUpdateError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not os.path.exists(device):
        if time.monotonic() > deadline:
            raise FirmwareUpdateError(f"{device} did not come back within {timeout_s:g} s "
                                      "of the reset")
        time.sleep(0.5)


def controller_device(device: str) -> str:
    """``/dev/nvme0n1`` -> ``/dev/nvme0`` (``nvme reset`` takes the controller's character
    device); a controller device is returned as is.

    Raises:
        FirmwareUpdateError: not an NVMe device name.
    """
    m = re.fullmatch(r"(/dev/nvme\d+)(?:n\d+)?", device)
    if not m:
        raise FirmwareUpdateError(f"{device} is not an NVMe device (/dev/nvmeXnY): the nvme "
                                  "firmware updater needs one")
    return m.group(1)


def parse_fw_log(text: str, *, frmw: int | None, source: str) -> FirmwareLog:
    """nvme-cli's ``fw-log -o json`` (and Identify Controller FRMW) -> :class:`FirmwareLog`.

    AFI bits 2:0 = the active slot, bits 6:4 = the slot activated at the next reset (0: none);
    ``frs`` printed as ``"<u64> (<revision>)"`` per non-empty slot (nvme-cli ``json_fw_log``).
    FRMW (Identify Controller): bits 3:1 the number of slots, bit 0 slot 1 read-only, bit 4
    activation without reset (NVMe Base Specification).

    Raises:
        FirmwareUpdateError: not JSON, or no ``Active Firmware Slot (afi)``.
    """
    try:
        doc = json.loads(text)
        entry: dict[str, object] = next(iter(doc.values()))
        afi = int(entry["Active Firmware Slot (afi)"])  # type: ignore[call-overload]
    except (ValueError, StopIteration, KeyError, TypeError, AttributeError):
        raise FirmwareUpdateError(f"unreadable firmware log from {source}: {text[:200]!r}"
                                  ) from None
    revisions: dict[int, str] = {}
    for key, value in entry.items():
        m = re.fullmatch(r"Firmware Rev Slot (\d)", key)
        if m:
            rev = re.search(r"\((.*)\)\s*$", str(value))
            revisions[int(m.group(1))] = (rev.group(1) if rev else str(value)).strip()
    count = (frmw >> 1) & 0x7 if frmw is not None else 0
    numbers = range(1, count + 1) if count else sorted(revisions)
    read_only = bool(frmw & 0x1) if frmw is not None else False
    slots = tuple(FirmwareSlot(n, revisions.get(n), read_only and n == 1) for n in numbers)
    nxt = (afi >> 4) & 0x7
    return FirmwareLog(slots, afi & 0x7, nxt or None, None,
                       bool(frmw & 0x10) if frmw is not None else None, source)


class _Recorded:
    """Runs and records commands; a non-zero exit is a FirmwareUpdateError with the output."""

    name = ""

    def __init__(self, run: Runner | None) -> None:
        self._run = run or default_run
        self._commands: list[tuple[str, ...]] = []

    @property
    def commands(self) -> list[tuple[str, ...]]:
        return list(self._commands)

    def _call(self, argv: list[str], *, check: bool = True) -> tuple[int, str]:
        self._commands.append(tuple(argv))
        rc, out, err = self._run(argv)
        text = (out + ("\n" if out and err else "") + err).strip()
        if check and rc != 0:
            raise FirmwareUpdateError(f"`{' '.join(argv)}` failed (exit status {rc}): "
                                      f"{text or 'no output'}")
        return rc, text


class NvmeUpdater(_Recorded):
    """nvme-cli. Args: ``device`` the namespace block device; ``xfer_bytes`` fw-download's
    ``--xfer`` (``None``: nvme-cli's default, 4 KiB); ``run`` / ``wait`` for tests."""

    name = "nvme"

    def __init__(self, device: str, *, xfer_bytes: int | None = None, run: Runner | None = None,
                 wait: Callable[[str], None] = wait_for_device) -> None:
        super().__init__(run)
        self.device = device
        self.controller = controller_device(device)
        self.xfer_bytes = xfer_bytes
        self._wait = wait

    def firmware_log(self) -> FirmwareLog:
        _, ctrl = self._call(["nvme", "id-ctrl", self.device, "-o", "json"])
        try:
            frmw: int | None = int(json.loads(ctrl)["frmw"])
        except (ValueError, KeyError, TypeError):
            frmw = None
        argv = ["nvme", "fw-log", self.device, "-o", "json"]
        _, text = self._call(argv)
        return parse_fw_log(text, frmw=frmw, source=" ".join(argv))

    def download(self, image: Path) -> None:
        argv = ["nvme", "fw-download", self.device, f"--fw={image}"]
        self._call(argv + ([f"--xfer={self.xfer_bytes}"] if self.xfer_bytes else []))

    def commit(self, slot: int, action: int) -> str:
        rc, text = self._call(["nvme", "fw-commit", self.device, f"--slot={slot}",
                               f"--action={action}"], check=False)
        needs = re.search(r"requires (conventional|subsystem|any controller|controller)"
                          r"(?: level)? reset", text, re.IGNORECASE)
        if needs:
            kind = needs.group(1).lower()
            if kind == "conventional":
                raise FirmwareUpdateError(
                    f"fw-commit slot {slot} action {action}: {text}: a conventional reset is a "
                    "power cycle, which the nvme plug cannot do; power-cycle the drive and "
                    "run again")
            return "subsystem" if kind == "subsystem" else "controller"
        if rc != 0:
            raise FirmwareUpdateError(f"`nvme fw-commit {self.device} --slot={slot} "
                                      f"--action={action}` failed (exit status {rc}): "
                                      f"{text or 'no output'}")
        return "controller" if action in ACTIONS_NEEDING_RESET else "none"

    def reset(self, kind: str) -> None:
        verb = "subsystem-reset" if kind == "subsystem" else "reset"
        self._call(["nvme", verb, self.controller])
        self._wait(self.device)


class HdparmUpdater(_Recorded):
    """hdparm (ATA DOWNLOAD MICROCODE). One image, reported as slot 1; the download itself
    activates it (mode 7 / 3), so commit needs no command and no reset."""

    name = "hdparm"

    def __init__(self, device: str, *, run: Runner | None = None) -> None:
        super().__init__(run)
        self.device = device

    def firmware_log(self) -> FirmwareLog:
        argv = ["hdparm", "-I", self.device]
        _, text = self._call(argv)
        m = re.search(r"Firmware Revision:\s*(\S.*?)\s*$", text, re.MULTILINE)
        return FirmwareLog((FirmwareSlot(1, m.group(1) if m else None),), 1, None, None,
                           False, " ".join(argv))

    def download(self, image: Path) -> None:
        self._call(["hdparm", "--fwdownload", str(image), "--yes-i-know-what-i-am-doing",
                    "--please-destroy-my-drive", self.device])

    def commit(self, slot: int, action: int) -> str:
        if slot not in (0, 1):
            raise FirmwareUpdateError(f"an ATA drive has one firmware image: slot {slot} "
                                      "does not exist (give no --firmware-slot)")
        return "none"

    def reset(self, kind: str) -> None:
        raise FirmwareUpdateError(f"hdparm has no {kind} reset")


class CommandUpdater(_Recorded):
    """A lab's own tool: the ``cmd:`` template, run once at commit with ``{image}``,
    ``{slot}``, ``{action}``, ``{device}`` and ``{serial}`` filled in. It keeps no firmware log
    here (the slots are unknown; the re-identification checks the result)."""

    name = "cmd"

    def __init__(self, spec: PlugSpec, device: str, serial: str, *,
                 run: Runner | None = None) -> None:
        super().__init__(run)
        self.spec, self.device, self.serial = spec, device, serial
        self._image: Path | None = None

    def firmware_log(self) -> FirmwareLog:
        return FirmwareLog((), 0, source=f"{self.spec.where}: a command keeps no firmware log")

    def download(self, image: Path) -> None:
        self._image = image

    def commit(self, slot: int, action: int) -> str:
        if self._image is None:
            raise FirmwareUpdateError("commit before download: no image")
        self._call(self.spec.command(image=str(self._image), slot=str(slot), action=str(action),
                                     device=self.device, serial=self.serial))
        return "none"

    def reset(self, kind: str) -> None:
        raise FirmwareUpdateError(f"the {self.spec.where} command does its own resets")
