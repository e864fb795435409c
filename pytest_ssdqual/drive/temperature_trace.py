"""The drive's temperature through a run: sampled at an interval, judged as maximum
temperature, time above the warning temperature and seconds throttled.

Issue 18 item 5 (domain part; not yet wired into the fio runner, the profile or the report):

* :class:`TemperatureSampler` calls a reader (:func:`nvme_temperature_reader`: ``nvme
  smart-log -o json DEV``, Composite Temperature in Kelvin, NVMe Base Specification 2.0 log
  02h bytes 1-2) every ``interval_s`` in a thread, between and during fio jobs.
* :func:`temperature_figures` judges the samples: ``temp_max_c``; ``time_above_wctemp_s``
  (each sample at or above WCTEMP holds until the next one: a step function, as the drive's
  own Warning Composite Temperature Time counts whole minutes above WCTEMP); and, with a
  per-second bandwidth log of the same run on the same clock, ``throttled_s``: seconds whose
  bandwidth is more than ``drop_pct`` below the run's median while the last sample was at or
  above the throttle temperature (WCTEMP unless given: NVMe Base 2.0 says a controller above
  WCTEMP may throttle; host-controlled thermal management TMT1 is the alternative) -- a drop
  in the per-second log that coincides with a temperature at the throttle point.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise

from pytest_ssdqual.drive.tool_runner import Runner, default_run, run_tool
from pytest_ssdqual.drive.tool_values import KELVIN_OFFSET, coerce_int

__all__ = ["TemperatureSample", "TemperatureSampler", "nvme_temperature_reader",
           "temperature_figures"]


@dataclass(frozen=True)
class TemperatureSample:
    """One reading: ``t_s`` seconds since the sampler started, ``temperature_c`` in °C."""

    t_s: float
    temperature_c: int


def nvme_temperature_reader(path: str, run: Runner | None = None
                            ) -> Callable[[], int | None]:
    """A reader of ``path``'s composite temperature (°C) by ``nvme smart-log -o json PATH``;
    it returns ``None`` when nvme-cli gives no reading (0 K: no sensor)."""
    runner = run or default_run

    def read() -> int | None:
        doc = run_tool(runner, ["nvme", "smart-log", "-o", "json", path], "nvme-cli", [])
        if not doc or doc.get("temperature") is None:
            return None
        try:
            kelvin = coerce_int(doc["temperature"], field="temperature")
        except ValueError:
            return None
        return kelvin - KELVIN_OFFSET if kelvin > 0 else None

    return read


class TemperatureSampler:
    """Samples ``read()`` every ``interval_s`` seconds in a daemon thread while in a ``with``
    block (first sample at entry, one more at exit). ``samples`` holds the readings that
    were not ``None``; a reader raising stops nothing (the error is kept in ``errors``).

    Raises:
        ValueError: ``interval_s`` not above 0.
    """

    def __init__(self, read: Callable[[], int | None], interval_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not interval_s > 0:
            raise ValueError(f"temperature sampling interval must be above 0 s, got {interval_s}")
        self.read, self.interval_s, self.clock = read, interval_s, clock
        self.samples: list[TemperatureSample] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0

    def _sample(self) -> None:
        try:
            value = self.read()
        except Exception as exc:  # noqa: BLE001 -- a failing read must not end the run
            self.errors.append(str(exc))
            return
        if value is not None:
            self.samples.append(TemperatureSample(self.clock() - self._t0, value))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> TemperatureSampler:
        self._t0 = self.clock()
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="ssdqual-temperature",
                                        daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._sample()


def temperature_figures(samples: Sequence[TemperatureSample], *,
                        warning_c: int | None = None, throttle_c: int | None = None,
                        bw_mbps_per_s: Sequence[float] = (), drop_pct: float = 20.0
                        ) -> dict[str, float]:
    """Figures of one run's temperature samples (sorted by time).

    Args:
        samples: the sampler's readings.
        warning_c: the drive's WCTEMP (°C); ``None``: no ``time_above_wctemp_s``.
        throttle_c: the throttle temperature; default ``warning_c``.
        bw_mbps_per_s: bandwidth of second ``i`` (from 0, the sampler's clock) of the run.
        drop_pct: how far below the median a second must fall to count as throttled.

    Returns:
        ``temp_max_c``, ``temp_samples``; ``time_above_wctemp_s`` with ``warning_c``;
        ``throttled_s`` with a bandwidth log and a throttle temperature. Empty without samples.
    """
    if not samples:
        return {}
    out: dict[str, float] = {"temp_max_c": float(max(s.temperature_c for s in samples)),
                             "temp_samples": float(len(samples))}
    if warning_c is not None:
        out["time_above_wctemp_s"] = sum(
            b.t_s - a.t_s for a, b in pairwise(samples)
            if a.temperature_c >= warning_c)
    limit = throttle_c if throttle_c is not None else warning_c
    if bw_mbps_per_s and limit is not None:
        floor = statistics.median(bw_mbps_per_s) * (1 - drop_pct / 100)
        throttled = 0
        for second, bw in enumerate(bw_mbps_per_s):
            last = [s for s in samples if s.t_s <= second]
            if bw < floor and last and last[-1].temperature_c >= limit:
                throttled += 1
        out["throttled_s"] = float(throttled)
    return out
