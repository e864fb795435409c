"""An emulated drive's power: the model key ``power:``, and the watts it draws for the I/O
its controller counts.

::

    power:                       # the REAL drive's watts, at the real drive's rates
      idle_w: 1.8                # active idle: powered, no I/O, no power saving
      read_w_per_mbps: 0.00222   # added per MB/s read (decimal MB/s, at the drive's own rate)
      write_w_per_mbps: 0.00237  # added per MB/s written
      apst_idle_w: 0.0018        # optional: idle longer than apst_after_s with APST enabled
      apst_after_s: 0.5

Power = ``idle_w + read_w_per_mbps * read MB/s + write_w_per_mbps * write MB/s``, the rates
being the twin's measured ones divided by ``figures_scale.factor``: power is NOT scaled like
the rates. A twin at a tenth of the drive's speed moves a tenth of the bytes, but the drive it
stands for moves all of them in the same time, at the drive's power: the meter reports the
real drive's watts and joules (comparable with reviews and spec sheets), and a MB/s/W figure
divides the twin's (scaled) MB/s by them, so it is scaled like any rate
(``thresholds.scaling``). With APST enabled (``apst.enabled``, and not switched off through
``apst_off_flag``), a stretch without I/O draws ``apst_idle_w`` once it lasted
``apst_after_s`` (the drive dropped to an idle power state), ``idle_w`` before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.yamlutil import json_path, line_of

__all__ = ["PowerModel", "apst_off_flag", "power_model", "power_w"]


@dataclass(frozen=True)
class PowerModel:
    """The ``power:`` block (see the module docstring; watts and decimal MB/s)."""

    idle_w: float
    read_w_per_mbps: float
    write_w_per_mbps: float
    apst_idle_w: float | None = None
    apst_after_s: float | None = None


def power_model(data: dict[str, Any], lines: dict[str, int], file: str) -> PowerModel | None:
    """The model file's ``power:`` block (schema-checked already), or None without one.

    Raises:
        ConfigError: ``apst_idle_w`` without ``apst_after_s`` (or the reverse), or an APST idle
            power not below ``idle_w`` (names the file, line and key).
    """
    block = data.get("power")
    if block is None:
        return None
    model = PowerModel(float(block["idle_w"]), float(block.get("read_w_per_mbps", 0.0)),
                       float(block.get("write_w_per_mbps", 0.0)),
                       float(block["apst_idle_w"]) if "apst_idle_w" in block else None,
                       float(block["apst_after_s"]) if "apst_after_s" in block else None)
    path: list[str | int] = ["power", "apst_idle_w"]
    if (model.apst_idle_w is None) != (model.apst_after_s is None):
        raise ConfigError("power: apst_idle_w and apst_after_s go together", file=file,
                          line=line_of(lines, ["power"]), key="power",
                          fix="give both (the idle state's watts and when the drive enters "
                              "it) or neither")
    if model.apst_idle_w is not None and model.apst_idle_w >= model.idle_w:
        raise ConfigError(f"power.apst_idle_w {model.apst_idle_w:g} W is not below idle_w "
                          f"{model.idle_w:g} W", file=file, line=line_of(lines, path),
                          key=json_path(path), fix="an idle power state draws less than "
                                                  "active idle")
    return model


def power_w(model: PowerModel, *, read_mbps: float, write_mbps: float, idle_for_s: float,
            apst: bool) -> float:
    """Watts drawn at the real drive's ``read_mbps`` / ``write_mbps`` (decimal MB/s), after
    ``idle_for_s`` seconds without I/O (0 while busy), APST enabled or not."""
    if (read_mbps <= 0 and write_mbps <= 0 and apst and model.apst_idle_w is not None
            and model.apst_after_s is not None and idle_for_s >= model.apst_after_s):
        return model.apst_idle_w
    return (model.idle_w + model.read_w_per_mbps * max(0.0, read_mbps)
            + model.write_w_per_mbps * max(0.0, write_mbps))


def apst_off_flag(power_log: Path) -> Path:
    """The file whose existence switches the twin's APST off (what the idle-power test does
    on a real NVMe drive through the kernel's PM QoS latency tolerance)."""
    return power_log.with_name(power_log.name + ".apst-off")
