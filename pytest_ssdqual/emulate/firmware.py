"""The emulated drive's own firmware updater (plug spec ``emu``): an update switches the
model's firmware variant (``firmware_variants``, :mod:`pytest_ssdqual.emulate.firmware_variants`).

It has the shape of ``plugs.firmware_updater.FirmwareUpdater`` (this package does not import
``plugs``) and follows NVMe semantics: three slots, slot 1 holding the shipped firmware and
active; ``download`` takes an *emulated firmware image*, ``commit`` places it in a slot with an
NVMe commit action (0: place only; 1: place, activate at the next reset; 2: activate the slot's
image at the next reset; 3: place and activate now) and ``reset('controller')`` activates what
is pending. Unlike a real NVMe drive it keeps an activation history (each activation and each
failed one, with the reason).

Emulated firmware image: a small YAML file naming the build (the real image's bytes would mean
nothing to a loop device)::

    ssdqual_emulated_firmware: 1
    firmware: DEMO2-SLOWSEQ          # identity.firmware of the model or a firmware_variants key
    model: EMU DEMO FIRMWARE 256GB   # optional: the drive refuses an image for another model

Activation: a variant with ``fails_to_activate`` leaves the drive on its old firmware and the
commit (action 3) or the reset (actions 1, 2) fails with the reason, as a drive answers a
rejected image; otherwise the controller restarts with the variant's caps
(:meth:`EmulatedDrive.switch_firmware`) and the identity reports the new revision; a variant
with ``corrupts_data`` then overwrites 4 KiB at its offset through the loop device (``O_DIRECT``),
which a read-back with checksums must find.
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ssdqual.emulate.emulator import EmulatedDrive
from pytest_ssdqual.emulate.firmware_variants import CORRUPT_BYTES, variant_model
from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.errors import DeviceError
from pytest_ssdqual.yamlutil import load_yaml_with_lines

__all__ = ["EMULATED_SLOTS", "EmulatedFirmwareUpdater", "read_emulated_image"]

#: Slots of an emulated drive's firmware log.
EMULATED_SLOTS = 3
IMAGE_KEY = "ssdqual_emulated_firmware"


class EmulatedFirmwareError(DeviceError):
    """A step of the emulated update failed; the message is the drive's reason."""


def read_emulated_image(path: Path) -> dict[str, str]:
    """The emulated image ``path`` -> ``{'firmware': ..., 'model': ...}``.

    Raises:
        EmulatedFirmwareError: not such a file (the message names what is missing).
    """
    try:
        data, _ = load_yaml_with_lines(path)
    except Exception as exc:  # noqa: BLE001 - any unreadable file is an invalid image
        raise EmulatedFirmwareError(f"{path} is not an emulated firmware image: {exc}") from None
    if not isinstance(data, dict) or data.get(IMAGE_KEY) != 1 or not data.get("firmware"):
        raise EmulatedFirmwareError(
            f"{path} is not an emulated firmware image (Invalid Firmware Image): it needs "
            f"'{IMAGE_KEY}: 1' and 'firmware: NAME' (see docs/plugs.md)")
    return {"firmware": str(data["firmware"]), "model": str(data.get("model", ""))}


@dataclass
class _Slot:
    number: int
    revision: str | None


class EmulatedFirmwareUpdater:
    """The firmware updater of one emulated drive. ``drive``: the :class:`EmulatedDrive`."""

    name = "emu"

    def __init__(self, drive: EmulatedDrive) -> None:
        self.drive = drive
        self.base: DriveModel = load_model(drive.model.file)  # the shipped build, before @SPEED
        self.slots = [_Slot(n, drive.model.firmware if n == 1 else None)
                      for n in range(1, EMULATED_SLOTS + 1)]
        self.active = 1
        self.pending: int | None = None
        self.history: list[str] = []
        self._downloaded: str | None = None
        self._commands: list[tuple[str, ...]] = []

    @property
    def commands(self) -> list[tuple[str, ...]]:
        return list(self._commands)

    def firmware_log(self) -> Any:
        """The log, as ``plugs.firmware_updater.FirmwareLog`` (built there: this package does
        not import ``plugs``; a plain mapping of the same fields)."""
        return {"slots": [(s.number, s.revision, False) for s in self.slots],
                "active_slot": self.active, "next_slot": self.pending,
                "history": tuple(self.history), "activation_without_reset": True,
                "source": f"emulated drive {self.drive.model.name}"}

    def download(self, image: Path) -> None:
        self._commands.append(("emu", "download", str(image)))
        found = read_emulated_image(image)
        name = found["firmware"]
        if found["model"] and found["model"] != self.base.model:
            raise EmulatedFirmwareError(
                f"image {image} is for {found['model']!r}, this drive is {self.base.model!r} "
                "(Invalid Firmware Image)")
        try:
            variant_model(self.base, name)
        except KeyError as exc:
            raise EmulatedFirmwareError(f"image {image}: {exc.args[0]} (Invalid Firmware "
                                        "Image)") from None
        self._downloaded = name

    def commit(self, slot: int, action: int) -> str:
        self._commands.append(("emu", "commit", f"slot={slot}", f"action={action}"))
        if not 1 <= slot <= EMULATED_SLOTS:
            raise EmulatedFirmwareError(f"slot {slot} does not exist (Invalid Firmware Slot)")
        if action in (0, 1, 3) and self._downloaded is not None:
            self.slots[slot - 1].revision = self._downloaded
            self._downloaded = None
        elif action in (0, 1):
            raise EmulatedFirmwareError("no image downloaded (Invalid Firmware Image)")
        if self.slots[slot - 1].revision is None:
            raise EmulatedFirmwareError(f"slot {slot} is empty (Invalid Firmware Image)")
        if action == 3:
            self._activate(slot)
            return "none"
        if action in (1, 2):
            self.pending = slot
            return "controller"
        return "none"

    def reset(self, kind: str) -> None:
        self._commands.append(("emu", "reset", kind))
        if self.pending is not None:
            slot, self.pending = self.pending, None
            self._activate(slot)

    def _activate(self, slot: int) -> None:
        name = self.slots[slot - 1].revision
        assert name is not None
        old = self.drive.model.firmware
        variant = self.base.firmware_variants.get(name)
        if variant is not None and variant.fails_to_activate:
            self.history.append(f"slot {slot} {name}: activation FAILED "
                                f"({variant.fails_to_activate}); still running {old}")
            raise EmulatedFirmwareError(f"activating {name} from slot {slot} failed: "
                                        f"{variant.fails_to_activate}; still running {old}")
        speed = self.drive.model.speed
        self.drive.switch_firmware(variant_model(self.base, name).with_speed(speed))
        self.active = slot
        self.history.append(f"slot {slot}: {old} -> {name}")
        if variant is not None and variant.corrupts_at_bytes is not None:
            self._corrupt(variant.corrupts_at_bytes)

    def _corrupt(self, offset: int) -> None:
        """Overwrite ``CORRUPT_BYTES`` at ``offset`` (within the image) through the loop
        device with direct I/O, so no page cache hides it from the next read."""
        loop = self.drive.loop_device
        assert loop is not None
        offset = min(offset, self.drive.image_bytes - CORRUPT_BYTES)
        offset -= offset % CORRUPT_BYTES
        buf = mmap.mmap(-1, CORRUPT_BYTES)  # page aligned, as O_DIRECT needs
        buf.write(bytes((i * 37 + 11) % 256 for i in range(CORRUPT_BYTES)))
        fd = os.open(loop, os.O_WRONLY | os.O_DIRECT)
        try:
            os.pwrite(fd, buf, offset)
            os.fsync(fd)
        finally:
            os.close(fd)
            buf.close()
        self.history.append(f"(emulation) {CORRUPT_BYTES} bytes overwritten at offset {offset}")
