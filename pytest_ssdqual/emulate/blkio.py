"""A cgroup-v1 blkio folder as the emulated drive sees it: throttle files and I/O counters.

Throttle files (Linux ``Documentation/admin-guide/cgroup-v1/blkio-controller.rst``):
``blkio.throttle.{read,write}_{bps,iops}_device`` take ``"MAJ:MIN VALUE"`` (bytes/s or IO/s;
``0`` removes the rule); ``blkio.throttle.io_service_bytes`` / ``io_serviced`` list
``"MAJ:MIN Read|Write|... N"``. A new cap acts on a running fio within ~0.2 s here.

``orphan_cleanup`` tears a drive down when the session that built it died without doing it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from pytest_ssdqual.emulate.model import CAP_FIELDS, Caps
from pytest_ssdqual.emulate.state import IoCounters

__all__ = ["THROTTLE_FILES", "BlkioThrottle", "orphan_cleanup", "throttle_values"]

#: Model cap -> cgroup-v1 blkio throttle file.
THROTTLE_FILES: dict[str, str] = {
    "read_bw_mbps": "blkio.throttle.read_bps_device",
    "write_bw_mbps": "blkio.throttle.write_bps_device",
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
}


def throttle_values(caps: Caps) -> dict[str, int]:
    """Caps -> the integers the throttle files take: bytes/s (MB/s x 10^6) and IO/s; 0 = no rule.

    A cap is never rounded to 0 (which would lift it): the smallest is 1.
    """
    out: dict[str, int] = {}
    for name in CAP_FIELDS:
        value = caps.get(name)
        if value is None:
            out[name] = 0
        elif name.endswith("_mbps"):
            out[name] = max(1, round(value * 1e6))
        else:
            out[name] = max(1, round(value))
    return out


class BlkioThrottle:
    """The throttle files and counters of one device in one cgroup-v1 blkio folder.

    Args:
        group: the folder (``/sys/fs/cgroup/blkio/ssdqual-emu-...``; any folder holding the same
            file names works, e.g. in tests).
        device: ``(major, minor)`` of the loop device.
    """

    def __init__(self, group: Path, device: tuple[int, int]) -> None:
        self.group = Path(group)
        self.device = device
        self.rule = f"{device[0]}:{device[1]}"
        self._written: dict[str, int] = {}

    def counters(self) -> IoCounters:
        """Read ``io_service_bytes`` and ``io_serviced`` for the device (zeros before any I/O).

        Raises:
            OSError: the folder is gone.
        """
        service = self._rows("blkio.throttle.io_service_bytes")
        serviced = self._rows("blkio.throttle.io_serviced")
        ios = serviced.get("Total", serviced.get("Read", 0) + serviced.get("Write", 0))
        return IoCounters(service.get("Read", 0), service.get("Write", 0), ios)

    def _rows(self, name: str) -> dict[str, int]:
        rows: dict[str, int] = {}
        for line in (self.group / name).read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == self.rule and parts[2].isdigit():
                rows[parts[1]] = int(parts[2])
        return rows

    def apply(self, caps: Caps) -> dict[str, int]:
        """Write the caps (only the files whose value changed). Returns the values in force.

        Raises:
            OSError: a throttle file cannot be written (folder gone, bad value).
        """
        values = throttle_values(caps)
        for name, value in values.items():
            if self._written.get(name) != value:
                (self.group / THROTTLE_FILES[name]).write_text(f"{self.rule} {value}\n")
                self._written[name] = value
        return values

    def clear(self) -> None:
        """Remove every throttle rule of the device (value 0). Never raises for a gone folder."""
        for name, file in THROTTLE_FILES.items():
            try:
                (self.group / file).write_text(f"{self.rule} 0\n")
            except OSError:
                pass
            self._written[name] = 0


def _kill_members(group: Path) -> None:
    """SIGKILL every process still in the folder (fio jobs of a session that died)."""
    try:
        pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def orphan_cleanup(throttle: BlkioThrottle, *, loop: str | None, workdir: str | None) -> None:
    """Tear the drive down when the session died without doing it (best effort, no raise)."""
    throttle.clear()
    _kill_members(throttle.group)
    for _ in range(50):
        try:
            throttle.group.rmdir()
            break
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.1)
    if loop:
        subprocess.run(["losetup", "-d", loop], check=False, capture_output=True)
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)
