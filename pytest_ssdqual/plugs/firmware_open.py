"""Open the firmware updater a drive's plug spec names, and identify the drive again after an
update.

``emu`` gives the emulated drive's own updater (:mod:`pytest_ssdqual.emulate.firmware`)
behind :class:`EmulatedPlug`, which turns its firmware log into a
:class:`~pytest_ssdqual.plugs.firmware_updater.FirmwareLog`; ``nvme``, ``hdparm`` and ``cmd:``
give :mod:`pytest_ssdqual.plugs.firmware_tools`' updaters on the drive's device node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_ssdqual.drive.device_types import smartctl_keywords
from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.target import DriveTarget, identity_kind
from pytest_ssdqual.emulate.firmware import EmulatedFirmwareUpdater
from pytest_ssdqual.emulate.target import EmulatedTarget
from pytest_ssdqual.errors import ConfigError, DeviceError
from pytest_ssdqual.plugs.firmware_tools import CommandUpdater, HdparmUpdater, NvmeUpdater
from pytest_ssdqual.plugs.firmware_updater import (
    FirmwareLog,
    FirmwareSlot,
    FirmwareUpdateError,
    FirmwareUpdater,
)
from pytest_ssdqual.plugs.spec import PlugSpec

__all__ = ["EmulatedPlug", "open_firmware_updater", "reidentify"]


class EmulatedPlug:
    """:class:`EmulatedFirmwareUpdater` as a ``FirmwareUpdater``: the same calls, its errors
    as :class:`FirmwareUpdateError`, its log as a :class:`FirmwareLog`."""

    name = "emu"

    def __init__(self, inner: EmulatedFirmwareUpdater) -> None:
        self.inner = inner

    @property
    def commands(self) -> list[tuple[str, ...]]:
        return self.inner.commands

    def firmware_log(self) -> FirmwareLog:
        log: dict[str, Any] = self.inner.firmware_log()
        return FirmwareLog(tuple(FirmwareSlot(*s) for s in log["slots"]), log["active_slot"],
                           log["next_slot"], log["history"], log["activation_without_reset"],
                           log["source"])

    def download(self, image: Path) -> None:
        self._do(self.inner.download, image)

    def commit(self, slot: int, action: int) -> str:
        result: str = self._do(self.inner.commit, slot, action)
        return result

    def reset(self, kind: str) -> None:
        self._do(self.inner.reset, kind)

    @staticmethod
    def _do(call: Any, *args: Any) -> Any:
        try:
            return call(*args)
        except FirmwareUpdateError:
            raise
        except DeviceError as exc:
            raise FirmwareUpdateError(str(exc)) from None


def open_firmware_updater(spec: PlugSpec, target: DriveTarget, *,
                          xfer_bytes: int | None = None) -> FirmwareUpdater:
    """The updater ``spec`` names, on ``target``'s device.

    Raises:
        ConfigError: ``nvme`` on a device that is not an NVMe namespace, or ``emu`` on a
            drive that is not emulated (``plugs.select`` refuses that first).
    """
    if spec.form == "emu":
        if not isinstance(target, EmulatedTarget):
            raise ConfigError("'emu' names the emulated drive's own firmware updater",
                              key=spec.where, fix="use --drive=emu:MODEL or a real updater")
        return EmulatedPlug(EmulatedFirmwareUpdater(target.drive))
    device = target.fio_filename
    if spec.form == "nvme":
        try:
            return NvmeUpdater(device, xfer_bytes=xfer_bytes)
        except FirmwareUpdateError as exc:
            raise ConfigError(str(exc), key=spec.where,
                              fix="use hdparm for a SATA drive, or a cmd: template") from None
    if spec.form == "hdparm":
        return HdparmUpdater(device)
    return CommandUpdater(spec, device, target.identity.serial)


def reidentify(target: DriveTarget) -> DriveIdentity:
    """The drive identified again (same serial, else refused for good: ``recheck_identity``)
    with the firmware revision it reports now. ``target.identity`` is left as it was.

    Raises:
        DeviceError: identification failed or the serial changed.
    """
    if isinstance(target, EmulatedTarget):
        return target.identify_again()
    target.recheck_identity()
    from pytest_ssdqual.drive.identity import identify  # lazy: shells out to smartctl / nvme

    kind = "file" if target.spec.kind == "file" else identity_kind(Path(target.fio_filename).name)
    keywords = smartctl_keywords(getattr(target.identity, "smartctl_device_type", ""))
    found: DriveIdentity = identify(target.spec.path, kind=kind, **keywords)
    return found
