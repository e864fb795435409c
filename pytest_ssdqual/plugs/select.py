"""Which plug serves a drive: the option, else the lab inventory, else the emulated drive's own.

Order (first that holds wins), for each plug kind (``PLUG_KINDS``):

1. the command-line option (``--power-switch`` / ``--power-meter`` / ``--firmware-updater``);
2. the lab inventory's ``plugs:`` for the drive (serial entries first, then model globs);
3. ``emu`` for an emulated drive (``DriveIdentity.kind == 'emu'``): its own plug;
4. none: a test that needs the plug is skipped with the reason (real hardware is never assumed).

An ``emu`` spec on a drive that is not emulated is a :class:`ConfigError`.
"""

from __future__ import annotations

from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.inventory import Inventory
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.plugs.spec import PLUG_KINDS, PlugSpec, parse_plug_spec

__all__ = ["missing_plug_reason", "plug_spec_for"]


def plug_spec_for(kind: str, identity: DriveIdentity, *, option: str | None,
                  inventory: Inventory | None) -> PlugSpec | None:
    """The plug spec of ``kind`` for the drive ``identity``, or None when it has none.

    Args:
        kind: a ``PLUG_KINDS`` key.
        identity: the drive.
        option: the option's value (``None`` when not given).
        inventory: the lab inventory, or None.

    Raises:
        ConfigError: a spec that does not parse (:func:`parse_plug_spec`), or ``emu`` for a
            drive that is not emulated.
    """
    spec: PlugSpec | None = None
    if option:
        spec = parse_plug_spec(option, kind, where=PLUG_KINDS[kind])
    elif inventory is not None and (found := inventory.plug(identity, kind)) is not None:
        spec = parse_plug_spec(found[0], kind, where=found[1])
    elif identity.kind == "emu":
        spec = PlugSpec(kind, "emu", where="emulated drive")
    if spec is not None and spec.form == "emu" and identity.kind != "emu":
        raise ConfigError(
            f"'emu' names the emulated drive's own {kind.replace('_', ' ')}, but "
            f"{identity.model} (S/N {identity.serial}) is not emulated", key=spec.where,
            fix=f"name this drive's real {kind.replace('_', ' ')} (see docs/plugs.md) or "
                f"use --drive=emu:MODEL")
    return spec


def missing_plug_reason(kind: str, identity: DriveIdentity) -> str:
    """The skip reason of a test that needs a plug of ``kind`` the drive does not have."""
    what = kind.replace("_", " ")
    return (f"no {what} for {identity.model} (S/N {identity.serial}): give "
            f"{PLUG_KINDS[kind]}=SPEC or a plugs: {kind}: entry in the lab inventory")
