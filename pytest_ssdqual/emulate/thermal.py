"""An emulated drive's temperature: the model key ``thermal:``, the temperature its controller
works out from the I/O it counts, and the throttle it puts in force when hot.

::

    temperature: {warning_c: 70, critical_c: 80}   # WCTEMP / CCTEMP it reports (as id-ctrl)
    thermal:
      ambient_c: 40            # idle temperature, °C
      c_per_mbps: 0.1          # steady-state rise per MB/s written, °C (the twin's own MB/s)
      read_share: 0.3          # a MB/s read heats this share of a MB/s written (default 0.3)
      time_constant_s: 3       # first-order lag towards the steady state, seconds
      throttle_c: 72           # at or above: throttle_caps in force ...
      resume_c: 62             # ... until the temperature falls below this (default -5 °C)
      throttle_caps: {write_bw_mbps: 30}

Model (a first-order thermal lag, Newton's law of cooling with heat in proportion to the data
moved): at each controller poll (``dt`` seconds, ``W`` / ``R`` MB/s written / read in it) the
steady state is ``S = ambient_c + c_per_mbps * (W + read_share * R)`` and the temperature moves
towards it: ``T <- S + (T - S) * exp(-dt / time_constant_s)``. Idle, it falls back to
``ambient_c`` with the same time constant. At ``throttle_c`` the caps ``throttle_caps`` join the
caps in force (``state.ThrottleController.caps``: the tightest wins), lifted once ``T`` is below
``resume_c`` -- a drive's thermal throttling with hysteresis, paced through the same blkio
throttle as every other behaviour.

The controller daemon publishes the temperature in ``temperature.json`` in the drive's work
folder after every poll (:func:`publish`; written to a temporary file and renamed, so a reader
never sees half of it); :func:`read_published` reads it (the session's temperature sampler:
no I/O to the drive). A restarted controller (a purge, a firmware switch) starts from the
published temperature, cooled for the time it was down (:meth:`ThermalState.resume`).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ssdqual.drive.temperature_source import TemperatureSource
from pytest_ssdqual.emulate.model import CAP_FIELDS, Caps
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.yamlutil import json_path, line_of

__all__ = ["PUBLISHED_NAME", "Published", "ThermalModel", "ThermalState",
           "emulated_temperature_source", "publish", "read_published", "thermal_errors",
           "thermal_model"]

#: The file in the drive's work folder the controller publishes the temperature in.
PUBLISHED_NAME = "temperature.json"


@dataclass(frozen=True)
class ThermalModel:
    """The ``thermal:`` block (see the module docstring; °C, MB/s, seconds)."""

    ambient_c: float
    c_per_mbps: float
    time_constant_s: float
    throttle_c: float
    resume_c: float
    throttle_caps: Caps
    read_share: float = 0.3

    def describe(self) -> str:
        """One line for reports."""
        return (f"thermal: {self.ambient_c:g} °C idle, +{self.c_per_mbps:g} °C per MB/s "
                f"written (time constant {self.time_constant_s:g} s), throttled to "
                f"{self.throttle_caps.describe()} at {self.throttle_c:g} °C until below "
                f"{self.resume_c:g} °C")


def thermal_model(data: dict[str, Any]) -> ThermalModel | None:
    """The model file's ``thermal:`` block (schema- and sense-checked already), or None."""
    block = data.get("thermal")
    if block is None:
        return None
    caps = block.get("throttle_caps") or {}
    throttle = float(block["throttle_c"])
    return ThermalModel(float(block["ambient_c"]), float(block["c_per_mbps"]),
                        float(block["time_constant_s"]), throttle,
                        float(block.get("resume_c", throttle - 5)),
                        Caps(**{f: float(caps[f]) if f in caps else None for f in CAP_FIELDS}),
                        float(block.get("read_share", 0.3)))


def thermal_errors(data: dict[str, Any], lines: dict[str, int], file: str
                   ) -> list[ConfigError]:
    """What the schema cannot say about ``thermal:``: it needs the ``temperature:`` block (the
    WCTEMP / CCTEMP the drive reports), ``resume_c`` below ``throttle_c``, ``throttle_c`` above
    ``ambient_c``, and at least one throttle cap."""
    block = data.get("thermal")
    if not isinstance(block, dict):
        return []
    errors: list[ConfigError] = []

    def err(path: list[str | int], message: str, fix: str) -> None:
        errors.append(ConfigError(message, file=file, line=line_of(lines, path),
                                  key=json_path(path), fix=fix))

    if "temperature" not in data:
        err(["thermal"], "thermal: without temperature: (the drive's WCTEMP / CCTEMP)",
            "add temperature: {warning_c: C, critical_c: C} (what the drive reports)")
    throttle = block.get("throttle_c", 0)
    if "resume_c" in block and block["resume_c"] >= throttle:
        err(["thermal", "resume_c"], f"resume_c {block['resume_c']} is not below throttle_c "
            f"{throttle}", "the throttle lifts below the temperature it starts at")
    if throttle <= block.get("ambient_c", 0):
        err(["thermal", "throttle_c"], f"throttle_c {throttle} is not above ambient_c "
            f"{block.get('ambient_c')}", "a drive throttles above its idle temperature")
    if not block.get("throttle_caps"):
        err(["thermal", "throttle_caps"], "thermal throttling sets no cap",
            f"add at least one of {', '.join(CAP_FIELDS)} to throttle_caps")
    return errors


class ThermalState:
    """The temperature of an emulated drive and whether it is throttling; pure logic, time
    and byte counts given by the caller (``state.ThrottleController``)."""

    def __init__(self, model: ThermalModel) -> None:
        self.model = model
        self.temperature_c = model.ambient_c
        self.throttled = False

    def step(self, dt_s: float, read_bytes: int, write_bytes: int) -> None:
        """Account for ``dt_s`` seconds in which the drive read / wrote these bytes."""
        if dt_s <= 0:
            return
        m = self.model
        heat = (write_bytes + m.read_share * read_bytes) / dt_s / 1e6
        steady = m.ambient_c + m.c_per_mbps * heat
        self.temperature_c = steady + (self.temperature_c - steady) * math.exp(
            -dt_s / m.time_constant_s)
        if self.throttled and self.temperature_c < m.resume_c:
            self.throttled = False
        elif not self.throttled and self.temperature_c >= m.throttle_c:
            self.throttled = True

    def caps(self) -> Caps:
        """The throttle caps while throttled, else none."""
        return self.model.throttle_caps if self.throttled else Caps()

    def resume(self, published: Published | None, now_s: float) -> None:
        """Start from a published state, cooled (idle) for the seconds since it was written."""
        if published is None:
            return
        self.temperature_c, self.throttled = published.temperature_c, published.throttled
        self.step(max(0.0, now_s - published.time_s), 0, 0)


@dataclass(frozen=True)
class Published:
    """The controller's last published state: ``time_s`` (epoch), ``temperature_c``,
    ``throttled``."""

    time_s: float
    temperature_c: float
    throttled: bool


def publish(path: Path, state: ThermalState, now_s: float) -> None:
    """Write ``state`` to ``path`` atomically (a temporary file renamed over it)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({"time_s": round(now_s, 3),
                               "temperature_c": round(state.temperature_c, 3),
                               "throttled": state.throttled}))
    os.replace(tmp, path)


def read_published(path: Path) -> Published | None:
    """The state in ``path``, or None when there is none (yet) or it cannot be read."""
    try:
        doc = json.loads(path.read_text())
        return Published(float(doc["time_s"]), float(doc["temperature_c"]),
                         bool(doc["throttled"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def emulated_temperature_source(drive: Any) -> TemperatureSource | str:
    """The temperature source of the ``EmulatedDrive`` ``drive``: what its controller
    publishes (:func:`read_published`: no I/O to the drive), with WCTEMP / CCTEMP from the
    model's ``temperature:`` block (what ``nvme id-ctrl`` reports for the real drive); the
    reason when its model has no ``thermal:`` block (no sensor)."""
    model = drive.model
    if model.thermal is None:
        return (f"emu:{model.name}: the model has no thermal: block (an emulated drive without "
                "a temperature sensor)")
    path = Path(drive.workdir) / PUBLISHED_NAME

    def read() -> float | None:
        state = read_published(path)
        return None if state is None else state.temperature_c

    nvme = model.nvme
    return TemperatureSource(
        read, f"emulated thermal model of {model.file} ({path})",
        nvme.warning_temperature_c if nvme is not None else None,
        f"model file {model.file} temperature.warning_c (WCTEMP as nvme id-ctrl reports it)",
        nvme.critical_temperature_c if nvme is not None else None)
