"""The power meter option (``--power-meter``), the drive's meter for the workload fixtures and
the ``idle_power`` fixture (``suites/test_power.py``): thin glue (``plugs.select`` chooses the
spec, ``plugs.power_meter`` opens it, ``qualify.power`` meters the runs,
``qualify.idle_power`` measures idle power), one meter per drive and session."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

# loaded with the plugin: the domain is imported where it is used (tests/plugin/test_inert.py)
if TYPE_CHECKING:
    from pytest_ssdqual.qualify.power import DrivePower
    from pytest_ssdqual.qualify.session import DriveContext, QualSession

__all__ = ["add_power_meter_options", "check_power_meter_option", "drive_power", "idle_power"]


def add_power_meter_options(group: Any) -> None:
    """Add ``--power-meter`` to the plugin's option group."""
    group.addoption(
        "--power-meter", default=None, metavar="SPEC",
        help="power meter of the drive(s): csv:PATH, cmd:COMMAND, quarch:CONNECTION or emu "
        "(docs/plugs.md); each fio workload then reports W, J and MB/s/W or IOPS/W. Default: "
        "the inventory's plugs: power_meter, else an emulated drive's own, else none.",
    )


def check_power_meter_option(config: pytest.Config) -> None:
    """Parse ``--power-meter`` (ConfigError naming the option, the forms it takes)."""
    text = config.getoption("power_meter")
    if text:
        from pytest_ssdqual.plugs.spec import parse_plug_spec

        parse_plug_spec(text, "power_meter", where="--power-meter")


_METERS = pytest.StashKey[dict[str, "DrivePower"]]()


def drive_power(config: pytest.Config, session: QualSession, ctx: DriveContext) -> DrivePower:
    """The power meter of ``ctx``'s drive (``--power-meter``, else the inventory's
    ``plugs: power_meter``, else an emulated drive's own), or why it has none.

    Raises:
        ConfigError: the spec names a meter that cannot be opened (quarchpy missing, ``emu``
            for a real drive, a bad ``cmd:`` placeholder).
    """
    from pytest_ssdqual.plugs.power_meter import open_power_meter
    from pytest_ssdqual.plugs.select import missing_plug_reason, plug_spec_for
    from pytest_ssdqual.qualify.power import DrivePower

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


@pytest.fixture
def idle_power(request: pytest.FixtureRequest, ssd_session: QualSession,
               ssd_drive: DriveContext) -> Callable[[], dict[str, float]]:
    """``idle_power()``: measure active idle and idle with APST with the drive's power meter
    (``qualify.idle_power``; skipped with the reason without a meter or idle power states)
    and judge them; returns its metrics."""
    from pytest_ssdqual.plugin.host import PytestHost
    from pytest_ssdqual.qualify.idle_power import IDLE_POWER, measure_idle_power

    host = PytestHost(request, ssd_session, ssd_drive)

    def run() -> dict[str, float]:
        power = drive_power(request.config, ssd_session, ssd_drive)
        return host.run(IDLE_POWER, lambda: measure_idle_power(host, ssd_session, ssd_drive,
                                                               power), writes=False).metrics

    return run
