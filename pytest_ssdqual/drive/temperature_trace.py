"""The drive's temperature through a test: sampled at an interval in a thread (between and
during fio jobs), judged as maximum temperature, time above the warning temperature and
throttling seen.

Issue 18 item 5. :class:`TemperatureSampler` calls a reader (``drive.temperature_source``:
``nvme smart-log``, ``smartctl -A``, sysfs hwmon, an emulated drive's thermal model) every
``interval_s`` seconds in a daemon thread; a reader never does I/O to the drive's media.
:func:`temperature_figures` judges the samples of one test:

``temperature.max_c``
    the highest sample, °C.
``temperature.above_wctemp_s``
    seconds at or above WCTEMP (the drive's Warning Composite Temperature Threshold: NVMe
    Identify Controller ``WCTEMP``, Kelvin, NVMe Base Specification 2.0 5.17.2.1; ATA: SCT
    Status "op_limit_max"). Each sample holds until the next one (a step function, as the
    drive's own Warning Composite Temperature Time counts time above WCTEMP).
``temperature.throttle_events``, ``temperature.throttled_s``
    throttling seen: a drop in a per-second bandwidth log that coincides with a temperature at
    or above the throttle point (``throttle_c``: WCTEMP unless given; NVMe Base 2.0 says a
    controller may throttle above WCTEMP, and host-controlled thermal management TMT1 is where
    a host asks it to start). The rule, per fio run (one log): a second is *throttled* when

    * its bandwidth is below ``drop_ratio`` (0.5) x the run's *cool median*: the median
      bandwidth of the run's seconds whose temperature was below the throttle point (all its
      seconds when none was), and
    * its temperature -- the latest sample taken at or before the second's end -- is at or
      above the throttle point (a second before the first sample is never throttled).

    ``throttled_s`` counts such seconds; ``throttle_events`` counts runs of consecutive
    throttled seconds of one fio run (a 10-second throttle is one event).

Times are seconds on one clock: the sampler's (``time.time`` by default, the clock of fio's
``timestamp_ms``, so a run's per-second log is placed at ``[end - runtime, end]``).
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from pytest_ssdqual.drive.tool_runner import Runner, default_run, run_tool
from pytest_ssdqual.drive.tool_values import KELVIN_OFFSET, coerce_int

__all__ = ["DROP_RATIO", "BandwidthSecond", "TemperatureFigures", "TemperatureSample",
           "TemperatureSampler", "nvme_temperature_reader", "temperature_figures",
           "throttled_seconds"]

#: A second below this share of the run's cool median is a drop (see the module docstring).
DROP_RATIO = 0.5


@dataclass(frozen=True)
class TemperatureSample:
    """One reading: ``t_s`` seconds on the sampler's clock, ``temperature_c`` in °C."""

    t_s: float
    temperature_c: float


@dataclass(frozen=True)
class BandwidthSecond:
    """One second of a per-second bandwidth log placed in time.

    Attributes:
        end_s: the second's end on the sampler's clock. bw_mbps: decimal MB/s (read + write).
        run: which fio run (log) it belongs to; index: its position in that run's log.
    """

    end_s: float
    bw_mbps: float
    run: str = ""
    index: int = 0


def nvme_temperature_reader(path: str, run: Runner | None = None
                            ) -> Callable[[], float | None]:
    """A reader of ``path``'s composite temperature (°C) by ``nvme smart-log -o json PATH``
    (log 02h bytes 1-2, Kelvin); it returns ``None`` when nvme-cli gives no reading (0 K: no
    sensor)."""
    runner = run or default_run

    def read() -> float | None:
        doc = run_tool(runner, ["nvme", "smart-log", "-o", "json", path], "nvme-cli", [])
        if not doc or doc.get("temperature") is None:
            return None
        try:
            kelvin = coerce_int(doc["temperature"], field="temperature")
        except ValueError:
            return None
        return float(kelvin - KELVIN_OFFSET) if kelvin > 0 else None

    return read


class TemperatureSampler:
    """Samples ``read()`` every ``interval_s`` seconds in a daemon thread while in a ``with``
    block (first sample at entry, one more at exit). ``samples`` holds the readings that
    were not ``None``; a reader raising stops nothing (the error is kept in ``errors``).

    Raises:
        ValueError: ``interval_s`` not above 0.
    """

    def __init__(self, read: Callable[[], float | None], interval_s: float,
                 clock: Callable[[], float] = time.time) -> None:
        if not interval_s > 0:
            raise ValueError(f"temperature sampling interval must be above 0 s, got {interval_s}")
        self.read, self.interval_s, self.clock = read, interval_s, clock
        self.samples: list[TemperatureSample] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        try:
            value = self.read()
        except Exception as exc:  # noqa: BLE001 -- a failing read must not end the run
            self.errors.append(str(exc))
            return
        if value is not None:
            self.samples.append(TemperatureSample(self.clock(), float(value)))

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def __enter__(self) -> TemperatureSampler:
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


@dataclass(frozen=True)
class TemperatureFigures:
    """The figures of one test's samples and why any is missing.

    Attributes:
        figures: ``temperature.*`` metric -> value (see the module docstring).
        unmeasured: metric -> ``not measured: <why>`` for those it could not give.
        throttled: the throttled seconds (for the report).
    """

    figures: dict[str, float] = field(default_factory=dict)
    unmeasured: dict[str, str] = field(default_factory=dict)
    throttled: tuple[BandwidthSecond, ...] = ()


def _temperature_at(samples: Sequence[TemperatureSample], t_s: float) -> float | None:
    """The latest sample at or before ``t_s`` (samples sorted by time), or None."""
    found = None
    for s in samples:
        if s.t_s > t_s:
            break
        found = s.temperature_c
    return found


def throttled_seconds(samples: Sequence[TemperatureSample], seconds: Sequence[BandwidthSecond],
                      throttle_c: float, drop_ratio: float = DROP_RATIO
                      ) -> list[BandwidthSecond]:
    """The throttled seconds of ``seconds`` (the rule in the module docstring), in order."""
    ordered = sorted(samples, key=lambda s: s.t_s)
    out: list[BandwidthSecond] = []
    for run in dict.fromkeys(s.run for s in seconds):
        mine = [s for s in seconds if s.run == run]
        temps = [_temperature_at(ordered, s.end_s) for s in mine]
        cool = [s.bw_mbps for s, t in zip(mine, temps, strict=True)
                if t is not None and t < throttle_c]
        reference = statistics.median(cool or [s.bw_mbps for s in mine])
        out += [s for s, t in zip(mine, temps, strict=True)
                if t is not None and t >= throttle_c and s.bw_mbps < drop_ratio * reference]
    return out


def temperature_figures(samples: Sequence[TemperatureSample], *,
                        warning_c: float | None = None, throttle_c: float | None = None,
                        seconds: Sequence[BandwidthSecond] | None = None,
                        drop_ratio: float = DROP_RATIO) -> TemperatureFigures:
    """Figures of one test's temperature samples.

    Args:
        samples: the sampler's readings (any order).
        warning_c: the drive's WCTEMP (°C); ``None``: the time above it and the throttling
            are not measured (the reason says so).
        throttle_c: the throttle point (°C); default ``warning_c``.
        seconds: the test's per-second bandwidth on the same clock; ``None`` or empty: the
            throttling is not measured.
        drop_ratio: a second below this share of its run's cool median is a drop.

    Returns:
        ``TemperatureFigures``; no figure at all (every metric unmeasured) without samples.
    """
    names = ("temperature.max_c", "temperature.above_wctemp_s",
             "temperature.throttle_events", "temperature.throttled_s")
    if not samples:
        return TemperatureFigures({}, {n: "not measured: no temperature sample" for n in names})
    ordered = sorted(samples, key=lambda s: s.t_s)
    out = {"temperature.max_c": max(s.temperature_c for s in ordered)}
    why: dict[str, str] = {}
    if warning_c is None:
        why["temperature.above_wctemp_s"] = ("not measured: the drive reports no warning "
                                             "temperature (WCTEMP)")
    else:
        out["temperature.above_wctemp_s"] = sum(b.t_s - a.t_s for a, b in pairwise(ordered)
                                                if a.temperature_c >= warning_c)
    point = throttle_c if throttle_c is not None else warning_c
    throttled: list[BandwidthSecond] = []
    if point is None or not seconds:
        reason = ("not measured: no throttle point (the drive reports no WCTEMP)"
                  if point is None else "not measured: no per-second bandwidth log")
        why.update({n: reason for n in names[2:]})
    else:
        throttled = throttled_seconds(ordered, seconds, point, drop_ratio)
        events = sum(1 for i, s in enumerate(throttled)
                     if i == 0 or throttled[i - 1].run != s.run
                     or throttled[i - 1].index != s.index - 1)
        out["temperature.throttle_events"] = float(events)
        out["temperature.throttled_s"] = float(len(throttled))
    return TemperatureFigures(out, why, tuple(throttled))
