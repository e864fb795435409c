"""Open the target a ``DriveSpec`` names, by kind, and make its drive lock: a local block
device or file (``DriveTarget.open``), an emulated drive (``emulate.target``), a drive on
another host (``drive.remote_target``: fio's client/server mode, the host reached over SSH)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_ssdqual.drive.device_types import DeviceTypes
from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.drive.ssh import RemoteAccess
from pytest_ssdqual.drive.target import DriveTarget

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.session import SessionOptions

__all__ = ["open_target", "target_lock"]


def open_target(spec: DriveSpec, options: SessionOptions) -> DriveTarget:
    """The opened target of ``spec`` (a file target created and sized to
    ``options.file_size_bytes`` or the profile's).

    Raises:
        DeviceError, ConfigError: as ``DriveTarget.open``, ``open_emulated_target``,
            ``open_remote_target``.
    """
    size = options.file_size_bytes or options.profile.file_size_bytes
    if spec.kind == "emu":  # emulate builds on drive: it makes the target (needs root)
        from pytest_ssdqual.emulate.target import open_emulated_target

        return open_emulated_target(spec, file_size_bytes=size)
    if spec.kind == "remote":
        from pytest_ssdqual.drive.remote_target import open_remote_target

        return open_remote_target(spec, options.remote or RemoteAccess(),
                                  options.confirmed_serials)
    return DriveTarget.open(
        spec, confirmed_serials=options.confirmed_serials, file_size_bytes=size,
        smartctl_types=DeviceTypes(options.smartctl_device_types, options.inventory))


def target_lock(target: DriveTarget, session: str) -> DriveLock:
    """The drive's lock, not yet taken: on the drive's host for a remote drive
    (``RemoteTarget.make_lock``), else on this machine (``DriveLock`` by ``lock_key``)."""
    make = getattr(target, "make_lock", None)
    if make is not None:
        lock: DriveLock = make(session)
        return lock
    return DriveLock(target.lock_key, label=target.device, session=session)
