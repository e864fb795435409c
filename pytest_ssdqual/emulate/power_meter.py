"""The emulated drive's power meter: its controller logs the model's watts at every poll, the
session reads them back.

Writer (in the controller daemon, ``--power-log FILE``): :class:`MeteredThrottle` wraps the
blkio throttle; every read of the counters (each ~100 ms poll, ``controller.DEFAULT_INTERVAL_S``)
appends one row::

    time_s,power_w,read_bytes,write_bytes,poll_end_s

``power_w`` is the mean power over the interval since the previous read
(``power_model.power_w`` at the interval's byte rates, divided back to the real drive's by
``figures_scale``), stamped at the interval's middle (``time_s``, seconds since the epoch: the
clock of fio's ``timestamp_ms``); ``read_bytes`` / ``write_bytes`` are the cumulative counters
at its end (``poll_end_s``), so a test can compute the model's energy from the I/O itself.

Reader (:class:`EmulatedPowerMeter`, the ``emu`` power meter plug): the rows appended between
``start()`` and ``stop()``, ~10 samples per second. It satisfies ``plugs.power_meter.
PowerMeter`` by shape (this package does not import ``plugs``); its samples are the
``PowerSamples`` shape of ``plugs.power_csv`` without importing it: a plain object with
``times_s``, ``power_w``, ``source``, ``rate_hz``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pytest_ssdqual.emulate.blkio import BlkioThrottle
from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.power_model import apst_off_flag, power_w
from pytest_ssdqual.emulate.state import IoCounters

__all__ = ["POWER_LOG_HEADER", "EmulatedPowerMeter", "MeteredThrottle", "emulated_power_meter"]

POWER_LOG_HEADER = "time_s,power_w,read_bytes,write_bytes,poll_end_s"
#: Samples per second of the emulated meter (one per controller poll).
EMULATED_RATE_HZ = 10.0


#: Seconds the two clock readings around a counter read may be apart for the read to end a
#: power interval (reading two small sysfs files takes ~0.05 ms; 2 ms: 2 % of the 0.1 s period).
MAX_READ_S = 0.002
#: Seconds after which an imprecise read ends an interval all the same (a host so loaded that
#: every read is preempted still gets rows, at most about this far apart).
MAX_GAP_S = 0.5


class MeteredThrottle(BlkioThrottle):
    """A ``BlkioThrottle`` whose every counter read also logs the power (controller side).

    Args:
        group, device: as ``BlkioThrottle``. model: the drive model (its ``power`` set).
        log: the power log, open for appending. path: its path (for the APST-off flag).
        clock: wall-clock seconds since the epoch (``time.time``; a fake one in tests).
    """

    def __init__(self, group: Path, device: tuple[int, int], model: DriveModel, log: IO[str],
                 path: Path, clock: Callable[[], float] = time.time) -> None:
        super().__init__(group, device)
        assert model.power is not None
        self.power = model.power
        self.scale = model.figures_scale.factor if model.figures_scale is not None else 1.0
        self.apst = bool(model.nvme is not None and model.nvme.apst_enabled)
        self.log = log
        self.flag = apst_off_flag(path)
        self.clock = clock
        self._last: tuple[float, IoCounters] | None = None
        self._io_at = clock()

    def counters(self) -> IoCounters:
        """The counters (``BlkioThrottle.counters``), and a power row for the interval since
        the last read that made one: the rates are the bytes moved over the time between the
        two reads, each read's time the middle of the clock readings around it. A read the
        thread was preempted in (the two clock readings over ``MAX_READ_S`` apart) makes no
        row unless ``MAX_GAP_S`` passed since the last one (nor is it the first read, the
        baseline): its time is not known, and the
        next interval would be cut short of the bytes it counted (CI, 2026-12-06: a clock read
        late under load drew the E12 twin 9.6 W at its write cap, the model's 8.9 W)."""
        read_from = self.clock()
        counters = super().counters()
        read_to = self.clock()
        now = (read_from + read_to) / 2
        if read_to - read_from > MAX_READ_S and (self._last is None
                                                  or now - self._last[0] < MAX_GAP_S):
            return counters  # the next read's row covers this interval too (or is the first)
        if self._last is not None and now > self._last[0]:
            then, before = self._last
            dt = now - then
            read = max(0, counters.read_bytes - before.read_bytes)
            write = max(0, counters.write_bytes - before.write_bytes)
            if read or write:
                self._io_at = now
            watts = power_w(self.power, read_mbps=read / dt / 1e6 / self.scale,
                            write_mbps=write / dt / 1e6 / self.scale,
                            idle_for_s=now - self._io_at,
                            apst=self.apst and not self.flag.exists())
            self.log.write(f"{(then + now) / 2:.4f},{watts:.6f},{counters.read_bytes},"
                           f"{counters.write_bytes},{now:.4f}\n")
            self.log.flush()
        self._last = (now, counters)
        return counters


@dataclass(frozen=True)
class EmulatedSamples:
    """``plugs.power_csv.PowerSamples`` by shape."""

    times_s: tuple[float, ...]
    power_w: tuple[float, ...]
    source: str
    rate_hz: float | None = EMULATED_RATE_HZ


class EmulatedPowerMeter:
    """The ``emu`` power meter: rows of the controller's power log between start and stop."""

    def __init__(self, path: Path, name: str) -> None:
        self.path = path
        self.source = f"emulated meter of {name}"
        self._offset = 0

    def start(self) -> None:
        self._offset = self.path.stat().st_size if self.path.exists() else 0

    def rows(self) -> list[list[float]]:
        """Every complete row since ``start()``, as numbers (the header skipped)."""
        data = self.path.read_bytes() if self.path.exists() else b""
        tail = data[self._offset:]
        tail = tail[:tail.rfind(b"\n") + 1]
        out = []
        for line in tail.decode().splitlines():
            if line and not line.startswith("time_s"):
                out.append([float(f) for f in line.split(",")])
        return out

    def stop(self) -> EmulatedSamples:
        stopped = time.time()
        rows = self.rows()
        # a later poll stamps a sample after the stop: rows are stamped mid-interval, and an
        # interval may stretch to MAX_GAP_S on a loaded host
        deadline = time.monotonic() + 1.0 + 2 * MAX_GAP_S
        while (not rows or rows[-1][0] < stopped) and time.monotonic() < deadline:
            time.sleep(0.05)
            rows = self.rows()
        rows.sort()
        return EmulatedSamples(tuple(r[0] for r in rows), tuple(r[1] for r in rows),
                               self.source)


def emulated_power_meter(drive: Any) -> EmulatedPowerMeter | None:
    """The meter of the ``EmulatedDrive`` ``drive``; None when its model has no ``power:``."""
    if drive.model.power is None:
        return None
    return EmulatedPowerMeter(drive.workdir / "power.csv", drive.model.name)
