"""pytest glue of the firmware update test: its options and the ``firmware_update`` fixture
(thin: the flow is ``qualify.firmware_update``)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_ssdqual.errors import ConfigError, SsdQualError

# loaded with the plugin: the flow is imported in the fixture (tests/plugin/test_inert.py)
if TYPE_CHECKING:
    from pytest_ssdqual.qualify.firmware_update import FirmwareOptions
    from pytest_ssdqual.qualify.session import DriveContext, QualSession

__all__ = ["add_firmware_options", "firmware_options", "firmware_update"]


def _action(value: str) -> int:
    """``--firmware-action``: an NVMe commit action that installs the image and activates it
    (1 or 3; 2 activates the image already in the slot, never --firmware-image)."""
    if value.strip() not in ("1", "3"):
        raise argparse.ArgumentTypeError(
            f"{value!r} is no commit action that installs and activates --firmware-image: give "
            "1 (activate at the next reset) or 3 (now, without a reset)")
    return int(value)


def _image(value: str) -> str:
    """``--firmware-image``, ``--firmware-downgrade-image``: an existing file (a mistyped path
    would skip the test and let the run pass with nothing tested)."""
    if not Path(value).expanduser().is_file():
        raise argparse.ArgumentTypeError(f"{value!r} does not exist or is not a file: give the "
                                         "firmware image's path")
    return value


def _slot(value: str) -> int:
    """``--firmware-slot``: an NVMe firmware slot, 1-7."""
    if not value.strip().isdigit() or not 1 <= int(value) <= 7:
        raise argparse.ArgumentTypeError(f"{value!r} is no firmware slot: NVMe slots are 1-7")
    return int(value)


def _bytes(value: str) -> int:
    """``--firmware-xfer``: a positive byte count."""
    if not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is no transfer size: give bytes, e.g. "
                                         "65536")
    return int(value)


def _spec(value: str) -> str:
    """``--firmware-updater``: a plug spec the firmware updater takes (``plugs.spec``)."""
    from pytest_ssdqual.plugs.spec import parse_plug_spec

    try:
        parse_plug_spec(value, "firmware_updater", where="--firmware-updater")
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def add_firmware_options(group: Any) -> None:
    """The firmware update test's options (``pytest_addoption``'s ssdqual group)."""
    group.addoption(
        "--firmware-updater", default=None, type=_spec, metavar="SPEC",
        help="firmware updater plug of the drive(s): nvme, hdparm, cmd:TEMPLATE ({image} "
        "{slot} {action} {device} {serial}) or emu (docs/plugs.md). Default: the lab "
        "inventory's plugs: firmware_updater, else the emulated drive's own, else none.")
    group.addoption(
        "--firmware-image", default=None, type=_image, metavar="PATH",
        help="firmware image the firmware update test writes (with --confirm-destroy for the "
        "drive's serial; an emulated drive needs none). Default: none, the test is skipped.")
    group.addoption("--firmware-slot", default=None, type=_slot, metavar="N",
                    help="firmware slot to commit to. Default: the first writable slot that "
                    "is not the active one, per the drive's firmware log.")
    group.addoption("--firmware-action", default=1, type=_action, metavar="A",
                    help="NVMe commit action: 1 activate at the next reset (then a controller "
                    "reset), 3 activate now (2, the slot's own image, is refused). Default: 1.")
    group.addoption("--firmware-downgrade-image", default=None, type=_image, metavar="PATH",
                    help="after the update, go back with this image and check again. "
                    "Default: none.")
    group.addoption("--firmware-xfer", default=None, type=_bytes, metavar="BYTES",
                    help="nvme fw-download --xfer. Default: nvme-cli's (4 KiB).")


def firmware_options(config: pytest.Config) -> FirmwareOptions:
    """The options as a ``FirmwareOptions`` (each checked by its parser at start: a bad value
    is a usage error before any I/O)."""
    from pytest_ssdqual.qualify.firmware_update import FirmwareOptions

    def path(name: str) -> Path | None:
        value = config.getoption(name)
        return Path(value).expanduser().absolute() if value else None

    return FirmwareOptions(config.getoption("firmware_updater"), path("firmware_image"),
                           config.getoption("firmware_slot"), config.getoption("firmware_action"),
                           path("firmware_downgrade_image"),
                           config.getoption("firmware_xfer"))


@pytest.fixture
def firmware_update(request: pytest.FixtureRequest, ssd_session: QualSession,
                    ssd_drive: DriveContext, tmp_path: Path) -> Callable[[], dict[str, float]]:
    """``firmware_update()``: run the firmware update test on the drive (skipped with the
    reason without an updater or ``--firmware-image``) and judge it; returns its metrics."""
    from pytest_ssdqual.plugin.host import PytestHost
    from pytest_ssdqual.qualify.firmware_update import (
        FIRMWARE_UPDATE,
        adopt_reported_firmware,
        measure_firmware_update,
    )

    host = PytestHost(request, ssd_session, ssd_drive)
    options = firmware_options(request.config)

    def run() -> dict[str, float]:
        cleared: list[bool] = []  # no refusal: the drive may have been flashed
        try:
            return host.run(FIRMWARE_UPDATE, lambda: measure_firmware_update(
                host, ssd_session, ssd_drive, tmp_path, options,
                on_cleared=lambda: cleared.append(True)), writes=True).metrics
        finally:  # the update test's record is built: the later tests name the new firmware
            # (never raises: an error here would replace the test's stored outcome)
            try:
                note = adopt_reported_firmware(ssd_session, ssd_drive) if cleared else ""
            except SsdQualError as exc:  # not expected (it notes its own errors): say it
                note = (f"[ssdqual {ssd_drive.target.spec.raw}] the firmware it reports after "
                        f"the update test could not be adopted ({exc}): later records name "
                        f"firmware {ssd_drive.identity.firmware}")
            if note:
                host.note(note)

    return run
