"""The firmware updater plug: what a firmware update needs from lab tooling, and the one
place that decides whether an image may be written at all.

A ``FirmwareUpdater`` reads the drive's firmware log (slots, active slot, activation history
where the drive keeps one), downloads an image, commits it to a slot with an NVMe commit action
and resets the controller where that action needs one. Implementations:

* ``nvme`` (:class:`~pytest_ssdqual.plugs.firmware_tools.NvmeUpdater`): nvme-cli's
  ``fw-log`` / ``fw-download`` / ``fw-commit`` / ``reset`` / ``subsystem-reset``;
* ``hdparm`` (:class:`~pytest_ssdqual.plugs.firmware_tools.HdparmUpdater`): ATA DOWNLOAD
  MICROCODE through ``hdparm --fwdownload``;
* ``cmd:`` (:class:`~pytest_ssdqual.plugs.firmware_tools.CommandUpdater`): a lab's own tool,
  placeholders ``{image}``, ``{slot}``, ``{action}``, ``{device}``, ``{serial}``;
* ``emu``: the emulated drive's own (:mod:`pytest_ssdqual.emulate.firmware`), by shape.

Commit actions (NVMe Base Specification, Firmware Commit command, Commit Action field; the
same table in nvme-cli's ``nvme-fw-commit(1)``): **0** the downloaded image replaces the image
in the slot, not activated; **1** replaces it and is activated at the next reset; **2** the
image already in the slot is activated at the next reset; **3** replaces it (if one was
downloaded) and is activated immediately, without a reset. Actions 1 and 2 therefore need a
controller reset afterwards (nvme-cli: "No further action is automatically taken to reset the
device, which is usually required to complete the activation process"); action 0 never
activates and is refused by the firmware update test.

:func:`update_refusals` is the gate every implementation goes through before the first
command that touches the drive: an explicit image file that exists, a drive confirmed by serial
(``--confirm-destroy``; an emulated drive needs none), no write refusal (mounted, holders,
the system disk), and a slot the firmware log has.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pytest_ssdqual.errors import DeviceError

__all__ = [
    "ACTIONS",
    "ACTIONS_NEEDING_RESET",
    "FirmwareLog",
    "FirmwareSlot",
    "FirmwareUpdateError",
    "FirmwareUpdater",
    "UpdateRecord",
    "apply_update",
    "update_refusals",
]

#: NVMe Firmware Commit actions this plug uses, value -> meaning (NVMe Base Specification).
ACTIONS: dict[int, str] = {
    0: "replace the image in the slot, do not activate",
    1: "replace the image in the slot, activate at the next reset",
    2: "activate the image already in the slot at the next reset",
    3: "replace the image in the slot (if downloaded) and activate it now, without a reset",
}
#: Actions whose activation happens at the next controller reset.
ACTIONS_NEEDING_RESET = frozenset({1, 2})


class FirmwareUpdateError(DeviceError):
    """A firmware update step failed or was refused; the message says which and why (the
    drive's or the tool's own words). The firmware update test is broken with it."""


@dataclass(frozen=True)
class FirmwareSlot:
    """One firmware slot.

    Attributes:
        number: 1-7 (NVMe); 1 for a drive with a single image (ATA).
        revision: the firmware revision in it, ``None`` when empty or not reported.
        read_only: the slot cannot be written (NVMe Identify Controller FRMW bit 0: slot 1).
    """

    number: int
    revision: str | None
    read_only: bool = False


@dataclass(frozen=True)
class FirmwareLog:
    """The drive's firmware log (NVMe Firmware Slot Information log page, 02h).

    Attributes:
        slots: every slot the drive has, by number.
        active_slot: the slot the running firmware was loaded from (AFI bits 2:0).
        next_slot: the slot activated at the next reset (AFI bits 6:4), ``None`` when none.
        history: activation history lines, oldest first, where the drive keeps one (``None``:
            the drive has none in a standard log -- NVMe and ATA do not; the emulated drive
            does).
        activation_without_reset: commit action 3 is supported (NVMe FRMW bit 4), ``None``
            when unknown.
        source: where the log came from (``nvme fw-log /dev/nvme0n1 -o json``).
    """

    slots: tuple[FirmwareSlot, ...]
    active_slot: int
    next_slot: int | None = None
    history: tuple[str, ...] | None = None
    activation_without_reset: bool | None = None
    source: str = ""

    def slot(self, number: int) -> FirmwareSlot | None:
        """The slot ``number``, ``None`` when the drive has no such slot."""
        return next((s for s in self.slots if s.number == number), None)

    @property
    def active_revision(self) -> str | None:
        found = self.slot(self.active_slot)
        return found.revision if found is not None else None

    def default_slot(self) -> int:
        """The slot an update goes to when none is given: the first writable slot that is not
        the active one, else the active slot when it is writable, else 0 (NVMe: "the
        controller shall choose the firmware slot")."""
        for s in self.slots:
            if not s.read_only and s.number != self.active_slot:
                return s.number
        active = self.slot(self.active_slot)
        return active.number if active is not None and not active.read_only else 0

    def describe(self) -> list[str]:
        """Human lines: one per slot (``slot 2: DEMO1 (active)``), then the history."""
        lines = []
        for s in self.slots:
            marks = [m for m, on in (("active", s.number == self.active_slot),
                                      ("next reset", s.number == self.next_slot),
                                      ("read-only", s.read_only)) if on]
            lines.append(f"slot {s.number}: {s.revision or '(empty)'}"
                         + (f" ({', '.join(marks)})" if marks else ""))
        if self.history is not None:
            lines += [f"history: {h}" for h in self.history] or ["history: (none)"]
        return lines


@dataclass(frozen=True)
class UpdateRecord:
    """What an update did, for the report.

    Attributes:
        image: the image file. slot: the slot committed to. action: the commit action.
        reset: ``controller``, ``subsystem`` or ``none``.
        commands: every command run, in order (argv lists; the emulated drive's are its own
            words, ``emu: download DEMO2``).
    """

    image: str
    slot: int
    action: int
    reset: str
    commands: tuple[tuple[str, ...], ...]


class FirmwareUpdater(Protocol):
    """A firmware updater plug. Every method raises :class:`FirmwareUpdateError` with the
    tool's or the drive's words when a step fails."""

    name: str

    def firmware_log(self) -> FirmwareLog:
        """The firmware log now."""

    def download(self, image: Path) -> None:
        """Transfer ``image`` to the drive (NVMe Firmware Image Download; ATA DOWNLOAD
        MICROCODE, which also activates: :attr:`activates_on_download`)."""

    def commit(self, slot: int, action: int) -> str:
        """Commit to ``slot`` with ``action`` (0-3). Returns the reset the activation still
        needs: ``controller``, ``subsystem`` or ``none``."""

    def reset(self, kind: str) -> None:
        """Reset the controller (``controller``) or the NVM subsystem (``subsystem``)."""

    @property
    def commands(self) -> list[tuple[str, ...]]:
        """Every command run so far, in order."""


def update_refusals(*, image: Path | None, serial: str, confirmed_serials: Collection[str],
                    emulated: bool, write_refusals: Sequence[str], log: FirmwareLog | None,
                    slot: int | None, action: int) -> list[str]:
    """Every reason a firmware image must not be written now (empty: go ahead).

    Args:
        image: ``--firmware-image`` (``None``: not given). serial: the drive's serial.
        confirmed_serials: ``--confirm-destroy`` values (an emulated drive needs none).
        emulated: the drive is an emulated one (the plugin built it).
        write_refusals: the target's refusals now (mounted, holders, system disk...).
        log: the firmware log read before the update, ``None`` when it could not be read.
        slot: ``--firmware-slot`` (``None``: the log's default). action: the commit action.
    """
    reasons = []
    if image is None:
        reasons.append("no firmware image: give --firmware-image=PATH (never guessed)")
    elif not image.is_file():
        reasons.append(f"the firmware image {image} does not exist or is not a file")
    if not emulated and serial not in [c.strip() for c in confirmed_serials]:
        reasons.append(f"the drive (S/N {serial or 'unknown'}) is not confirmed: a firmware "
                       f"image is written only with --confirm-destroy={serial or 'SERIAL'}")
    reasons += [r for r in write_refusals if r not in reasons]
    if action not in ACTIONS or action == 0:
        reasons.append(f"commit action {action} does not activate a new firmware: use 1 (at "
                       "the next reset, the default), 2 or 3 (now, without a reset)")
    elif action == 2:  # activates what the slot holds: --firmware-image would never be run
        reasons.append("commit action 2 activates the image already in the slot, not "
                       "--firmware-image: use 1 (replace, activate at the next reset) or 3 "
                       "(replace, activate now)")
    if log is not None and log.slots and slot:
        found = log.slot(slot)
        if found is None:
            reasons.append(f"slot {slot} does not exist: the drive's firmware log has slots "
                           + ", ".join(str(s.number) for s in log.slots))
        elif found.read_only and action != 2:
            reasons.append(f"slot {slot} is read-only (NVMe FRMW bit 0): choose another "
                           "--firmware-slot")
    if log is not None and action == 3 and log.activation_without_reset is False:
        reasons.append("commit action 3 (activate without reset) is not supported by this "
                       "drive (NVMe FRMW bit 4 clear): use 1 (the default) and a reset")
    return reasons


def apply_update(updater: FirmwareUpdater, image: Path, *, slot: int, action: int
                 ) -> UpdateRecord:
    """Download ``image``, commit it to ``slot`` with ``action``, then the reset the action
    needs. Call only after :func:`update_refusals` came back empty.

    Raises:
        FirmwareUpdateError: a step failed (a reset that failed says the drive may be running
            either firmware now).
    """
    updater.download(image)
    reset = updater.commit(slot, action)
    if reset != "none":
        try:
            updater.reset(reset)
        except FirmwareUpdateError as exc:
            raise FirmwareUpdateError(
                f"the {reset} reset that activates slot {slot} (commit action {action}) "
                f"failed: {exc}; the drive may still run the old firmware or need a power "
                "cycle") from None
    return UpdateRecord(str(image), slot, action, reset, tuple(updater.commands))
