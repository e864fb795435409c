"""The ``power_loss`` key of an emulated drive model: what survives a power cut.

::

    power_loss: {protection: true}                          # PLP: every acknowledged write
    power_loss: {protection: false, volatile_window_ms: 500} # no PLP: the last 500 ms are lost

With power-loss protection (capacitors that let the drive flush its volatile cache after the
host's power is gone) everything the drive acknowledged survives a cut. Without it, the writes
the drive acknowledged in its last ``volatile_window_ms`` before the cut were still in volatile
cache and are lost: the emulator puts those blocks back to their earlier content
(:mod:`pytest_ssdqual.emulate.power_cut`). A model without the key keeps every acknowledged
write (a cut still stops I/O and counts an unsafe shutdown).

Parsed here and hooked into :func:`pytest_ssdqual.emulate.model_file.load_model`; the schema is
``$defs.power_loss`` of ``emu_model_schema.json``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.yamlutil import json_path, line_of

__all__ = ["PowerLoss", "power_loss_errors", "power_loss_of"]


@dataclass(frozen=True)
class PowerLoss:
    """What an emulated drive keeps across a power cut.

    Attributes:
        protection: True: power-loss protection, every acknowledged write survives.
        volatile_window_ms: without protection, writes acknowledged this many milliseconds
            before the cut (or later) are lost; 0 with protection.
    """

    protection: bool
    volatile_window_ms: float = 0.0

    def describe(self) -> str:
        """``'power-loss protection'`` or ``'no power-loss protection: writes acknowledged in
        the last 500 ms before a cut are lost'``."""
        if self.protection:
            return "power-loss protection: every acknowledged write survives a cut"
        return (f"no power-loss protection: writes acknowledged in the last "
                f"{self.volatile_window_ms:g} ms before a cut are lost")


def power_loss_errors(data: dict[str, Any], lines: dict[str, int], file: str
                      ) -> list[ConfigError]:
    """What the schema cannot say: a window needs ``protection: false``, and no protection
    needs a window.

    Returns one ConfigError per problem (file, YAML line, key, fix); empty when fine.
    """
    block = data.get("power_loss")
    if not isinstance(block, dict):
        return []
    path: list[str | int] = ["power_loss"]
    if block.get("protection") and "volatile_window_ms" in block:
        return [ConfigError(
            "volatile_window_ms with protection: true", file=file,
            line=line_of(lines, [*path, "volatile_window_ms"]),
            key=json_path([*path, "volatile_window_ms"]),
            fix="a drive with power-loss protection loses nothing: remove volatile_window_ms, "
                "or set protection: false")]
    if block.get("protection") is False and "volatile_window_ms" not in block:
        return [ConfigError(
            "protection: false without volatile_window_ms", file=file,
            line=line_of(lines, path), key=json_path(path),
            fix="say how many milliseconds of acknowledged writes a cut loses: "
                "volatile_window_ms: 500")]
    return []


def power_loss_of(data: dict[str, Any]) -> PowerLoss | None:
    """The ``power_loss`` block of a validated model file, or None when it has none."""
    block = data.get("power_loss")
    if block is None:
        return None
    return PowerLoss(bool(block["protection"]), float(block.get("volatile_window_ms", 0.0)))
