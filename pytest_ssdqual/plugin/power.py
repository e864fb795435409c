"""The drive's power meter for the workload fixtures (thin: ``plugs.select`` chooses the spec,
``plugs.power_meter`` opens it, ``qualify.power`` meters the runs), one per drive and session."""

from __future__ import annotations

import pytest

from pytest_ssdqual.plugs.power_meter import open_power_meter
from pytest_ssdqual.plugs.select import missing_plug_reason, plug_spec_for
from pytest_ssdqual.qualify.power import DrivePower
from pytest_ssdqual.qualify.session import DriveContext, QualSession

_METERS = pytest.StashKey[dict[str, DrivePower]]()


def drive_power(config: pytest.Config, session: QualSession, ctx: DriveContext) -> DrivePower:
    """The power meter of ``ctx``'s drive (``--power-meter``, else the inventory's
    ``plugs: power_meter``, else an emulated drive's own), or why it has none.

    Raises:
        ConfigError: the spec names a meter that cannot be opened (quarchpy missing, ``emu``
            for a real drive, a bad ``cmd:`` placeholder).
    """
    meters = config.stash.setdefault(_METERS, {})
    key = ctx.key or ctx.target.spec.raw
    if key not in meters:
        ident = ctx.identity
        spec = plug_spec_for("power_meter", ident, option=config.getoption("power_meter"),
                             inventory=session.options.inventory)
        if spec is None:
            meters[key] = DrivePower(None, missing_plug_reason("power_meter", ident))
        else:
            meter = open_power_meter(spec, serial=ident.serial, device=ctx.target.device,
                                     emulated=getattr(ctx.target, "drive", None))
            meters[key] = DrivePower(meter, "" if meter is not None else (
                f"the emulated model of {ident.model} has no power: block (no power model)"))
    return meters[key]
