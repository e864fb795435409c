"""The power-loss options (``--power-switch``, ``--power-cycles``, ``--power-loss-seed``) and the
``power_loss`` fixture (``suites/test_power_loss.py``): thin glue over
``qualify.power_loss.measure_power_loss``."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# loaded with the plugin: the flow is imported in the fixture (tests/plugin/test_inert.py)
if TYPE_CHECKING:
    from pytest_ssdqual.qualify.session import DriveContext, QualSession

__all__ = ["add_power_loss_options", "power_loss"]

#: Power cycles per power-loss test when --power-cycles is not given, per run profile.
DEFAULT_CYCLES = {"smoke": 1, "quick": 3, "full": 10}


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise pytest.UsageError(f"--power-cycles={value}: give a whole number >= 1")
    return number


def add_power_loss_options(group: Any) -> None:
    """Add the power-loss options to the plugin's option group."""
    group.addoption(
        "--power-switch", default=None, metavar="SPEC",
        help="the power switch of every --drive (docs/plugs.md): 'cmd:TEMPLATE' with {action} "
        "{serial} {device}, 'quarch:CONNECTION' (quarchpy) or 'emu'. Default: the lab "
        "inventory's plugs: power_switch, else an emulated drive's own.")
    group.addoption(
        "--power-cycles", type=_positive, default=None, metavar="N",
        help="power cuts per power-loss test (default: smoke 1, quick 3, full 10)")
    group.addoption(
        "--power-loss-seed", type=int, default=None, metavar="N",
        help="seed of the power-loss test's cut points and fio random seeds (default: a new "
        "one per run, printed in the notes and stored with the record)")


@pytest.fixture
def power_loss(request: pytest.FixtureRequest, ssd_session: QualSession,
               ssd_drive: DriveContext, tmp_path: Path) -> Callable[[], dict[str, float]]:
    """``power_loss()``: the power-loss integrity test on the drive (skipped with the reason
    without a power switch or when the drive refuses writes) and judged; returns its metrics."""
    from pytest_ssdqual.plugin.host import PytestHost
    from pytest_ssdqual.qualify.measure import check_marked
    from pytest_ssdqual.qualify.power_loss import POWER_LOSS, measure_power_loss

    host = PytestHost(request, ssd_session, ssd_drive)
    config = request.config

    def run() -> dict[str, float]:
        check_marked(POWER_LOSS, methodology=True, destructive=host.destructive,
                     test=request.node.nodeid)
        profile = ssd_session.options.profile.name
        cycles = config.getoption("power_cycles") or DEFAULT_CYCLES.get(profile, 3)
        seed = config.getoption("power_loss_seed")
        if seed is None:
            seed = random.SystemRandom().randrange(2**31)
        return host.run(POWER_LOSS, lambda: measure_power_loss(
            host, ssd_session, ssd_drive, tmp_path, option=config.getoption("power_switch"),
            cycles=cycles, seed=seed), writes=True).metrics

    return run
