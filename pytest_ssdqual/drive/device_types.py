"""Which smartctl ``-d`` type a drive is read with: given per drive on the command line
(``--smartctl-device-type=[DRIVE=]TYPE``), else by the lab inventory (``smartctl_device_type``
of the drive's entry), else none (smartctl's own choice, then the USB bridge types when it asks
for one: ``smartctl_device.run_smartctl``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.inventory import Inventory
from pytest_ssdqual.drive.smartctl_device import check_device_type
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.errors import ConfigError

__all__ = ["OPTION", "DeviceTypes", "parse_device_type_options", "smartctl_keywords"]

#: The command-line option.
OPTION = "--smartctl-device-type"


@dataclass(frozen=True)
class DeviceTypes:
    """The smartctl device types of a session.

    Attributes:
        given: ``(drive, type)`` from the option, ``drive`` a ``--drive`` value or ``''`` for
            every block device of the session.
        inventory: the lab inventory, or None.
    """

    given: tuple[tuple[str, str], ...] = ()
    inventory: Inventory | None = None

    def given_for(self, spec: DriveSpec) -> str | None:
        """The option's type for ``spec`` (a type named for the drive beats one for all)."""
        named = {drive: t for drive, t in self.given}
        for key in (spec.raw, spec.path, os.path.realpath(spec.path)):
            if key in named:
                return named[key]
        return named.get("")

    def from_inventory(self, identity: DriveIdentity) -> tuple[str, str] | None:
        """``(type, where)`` from the inventory entry of ``identity``, or None."""
        return None if self.inventory is None else self.inventory.smartctl_device_type(identity)

    def identify(self, identity_fn: Callable[..., DriveIdentity], spec: DriveSpec, *,
                 kind: str, sysfs: Path) -> DriveIdentity:
        """``spec``'s identity read with its smartctl type: the option's for it; else, when
        its inventory entry (found by the first identity) names another type, identified
        again with that one. ``identity_fn`` is ``DriveTarget.open``'s."""
        given = self.given_for(spec)
        identity = identity_fn(spec.path, kind=kind, sysfs=sysfs,
                               **smartctl_keywords(given, OPTION))
        listed = self.from_inventory(identity) if given is None else None
        if listed is not None and listed[0] != identity.smartctl_device_type:
            identity = identity_fn(spec.path, kind=kind, sysfs=sysfs, **smartctl_keywords(*listed))
        return identity


def smartctl_keywords(device_type: str | None, origin: str = "") -> dict[str, Any]:
    """An identity function's smartctl keywords (``smartctl_device_type``, and where the type
    came from): none without a type, so stand-in identity functions need not take them."""
    return {"smartctl_device_type": device_type, "smartctl_device_type_from": origin} \
        if device_type else {}


def parse_device_type_options(values: Iterable[str], specs: Iterable[DriveSpec]
                              ) -> tuple[tuple[str, str], ...]:
    """``--smartctl-device-type`` values (``TYPE`` or ``DRIVE=TYPE``) as ``(drive, type)``.

    Raises:
        ConfigError: a bad type, or a DRIVE that is none of the session's ``--drive`` values.
    """
    known = {key for s in specs for key in (s.raw, s.path, os.path.realpath(s.path))}
    out: list[tuple[str, str]] = []
    for value in values:
        drive, _, kind = value.rpartition("=")
        check_device_type(kind, key=OPTION)
        if drive and drive not in known:
            raise ConfigError(f"{OPTION}={value} names {drive}, which is no --drive of this run",
                              key=OPTION, fix=f"write {OPTION}=<a --drive value>={kind}, or "
                              f"{OPTION}={kind} for every drive")
        out.append((drive, kind))
    return tuple(out)
