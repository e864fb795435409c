"""What a session learns of a drive once and keeps for its other tests: whether it reports the
OCP datacenter logs (``health_ocp_query.OcpSupport``) and where its temperature is read
(``temperature_source.block_temperature_source``). Probing either costs tool runs (a failing
``nvme ocp smart-add-log``; ``nvme smart-log`` / ``id-ctrl`` or ``smartctl -A``) that would
otherwise be repeated at every health reading and every test. A firmware update forgets them
(``forget``): the new firmware may report other logs and limits.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pytest_ssdqual.drive.health_ocp_query import OcpSupport
from pytest_ssdqual.drive.temperature_source import TemperatureSource

__all__ = ["DriveProbes"]


@dataclass
class DriveProbes:
    """One drive's probe results for the session (kept on ``qualify.session.DriveContext``).

    Attributes:
        ocp: what the drive said of its OCP logs (``OcpSupport.refused``).
        temperature: the drive's temperature source, or why it has none (a reason string);
            ``None`` while not probed yet.
        stop_reason: why the drive's remaining tests must not run, ``""`` while they may: set
            when the threshold profiles cannot be resolved for the firmware a firmware update
            left (``qualify.firmware_update.adopt_reported_firmware``); ``forget`` keeps it.
            (Kept here as the one per-drive state of the session outside ``DriveContext``.)
    """

    ocp: OcpSupport = field(default_factory=OcpSupport)
    temperature: TemperatureSource | str | None = None
    stop_reason: str = ""

    def forget(self) -> None:
        """Probe again at the next use (after a firmware update)."""
        self.ocp = OcpSupport()
        self.temperature = None
