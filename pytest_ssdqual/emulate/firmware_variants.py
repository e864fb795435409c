"""Per-firmware behaviour of an emulated drive: the model file's ``firmware_variants``.

The model's own ``identity.firmware`` is the firmware the drive ships with; each variant is
another build a firmware update can switch to (:mod:`pytest_ssdqual.emulate.firmware`), keyed
by the revision the drive reports once it runs it::

    firmware_variants:
      DEMO2:                          # a good build: the same speed
        note: release candidate
      DEMO2-SLOWSEQ:
        speed: {write_bw_mbps: 0.9}   # factor on every write-bandwidth cap (caps, curves,
                                      # SLC and dirty caps): 10 % slower sequential writes
      DEMO2-CAPPED:
        caps: {read_iops: 15000}      # fresh caps replaced (MB/s, IOPS; x @SPEED)
      DEMO2-BRICK:
        fails_to_activate: "boot loader rejected the image signature"
      DEMO2-CORRUPT:
        corrupts_data: 8MiB           # on activation, 4 KiB at this byte offset are
                                      # overwritten (true: at 1 MiB)

``speed`` keys and ``caps`` keys are the cap dimensions (``read_bw_mbps``, ``write_bw_mbps``,
``read_iops``, ``write_iops``). A variant that fails to activate leaves the drive on its old
firmware and the commit answers with the reason; one that corrupts data does so when it is
activated, as a broken mapping-table migration would. Plain Python; parsed here and hooked into
:func:`pytest_ssdqual.emulate.model_file.load_model`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_ssdqual.emulate.model import CAP_FIELDS, Caps, DriveModel
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.yamlutil import json_path, line_of

__all__ = ["CORRUPT_BYTES", "FirmwareVariant", "parse_variants", "variant_model",
           "variant_sense_errors"]

#: Bytes a ``corrupts_data`` variant overwrites at its offset.
CORRUPT_BYTES = 4096
#: Offset of ``corrupts_data: true``.
DEFAULT_CORRUPT_AT = 1 << 20


@dataclass(frozen=True)
class FirmwareVariant:
    """One firmware build of an emulated drive.

    Attributes:
        firmware: the revision the drive reports while running it.
        speed: cap dimension -> factor on every cap of that dimension.
        caps: fresh caps that replace the model's (``None`` dimensions unchanged).
        fails_to_activate: why activating it fails (the drive stays on the old firmware).
        corrupts_at_bytes: byte offset overwritten with garbage on activation, or ``None``.
        note: the file's own words.
    """

    firmware: str
    speed: dict[str, float] = field(default_factory=dict, hash=False)
    caps: Caps = Caps()
    fails_to_activate: str | None = None
    corrupts_at_bytes: int | None = None
    note: str = ""

    def describe(self) -> str:
        """``DEMO2-SLOWSEQ: write_bw_mbps x0.9`` -- what differs from the shipped build."""
        parts = [f"{k} x{v:g}" for k, v in sorted(self.speed.items())]
        if self.caps != Caps():
            parts.append(f"caps {self.caps.describe()}")
        if self.fails_to_activate:
            parts.append(f"fails to activate ({self.fails_to_activate})")
        if self.corrupts_at_bytes is not None:
            parts.append(f"corrupts {CORRUPT_BYTES} bytes at offset {self.corrupts_at_bytes}")
        return f"{self.firmware}: " + (", ".join(parts) or "same behaviour")


def parse_variants(data: dict[str, Any], parse_size: Callable[[Any], int]
                   ) -> dict[str, FirmwareVariant]:
    """The ``firmware_variants`` block (already schema-checked) -> revision -> variant;
    ``parse_size`` reads the ``corrupts_data`` offset (``model_file.parse_size``)."""
    out: dict[str, FirmwareVariant] = {}
    for name, block in (data.get("firmware_variants") or {}).items():
        block = block or {}
        corrupt = block.get("corrupts_data")
        at = (None if corrupt is None or corrupt is False else
              DEFAULT_CORRUPT_AT if corrupt is True else parse_size(corrupt))
        caps = block.get("caps") or {}
        out[str(name)] = FirmwareVariant(
            str(name), {k: float(v) for k, v in (block.get("speed") or {}).items()},
            Caps(**{f: float(caps[f]) if f in caps else None for f in CAP_FIELDS}),
            str(block["fails_to_activate"]) if block.get("fails_to_activate") else None,
            at, " ".join(str(block.get("note", "")).split()))
    return out


def variant_sense_errors(data: dict[str, Any], lines: dict[str, int], file: str
                         ) -> list[ConfigError]:
    """What the schema cannot say: a variant named like the shipped firmware, or a variant
    that both fails to activate and changes the drive (it never runs)."""
    errors = []
    base = str((data.get("identity") or {}).get("firmware", ""))
    for name, block in (data.get("firmware_variants") or {}).items():
        path: list[str | int] = ["firmware_variants", str(name)]
        if str(name) == base:
            errors.append(ConfigError(
                f"variant {name!r} is the firmware the model ships with (identity.firmware)",
                file=file, line=line_of(lines, path), key=json_path(path),
                fix="name each variant by the revision the drive reports after the update"))
        block = block or {}
        if block.get("fails_to_activate") and any(k in block for k in
                                                  ("speed", "caps", "corrupts_data")):
            errors.append(ConfigError(
                f"variant {name!r} fails to activate, so its other keys never act",
                file=file, line=line_of(lines, path), key=json_path(path),
                fix="keep fails_to_activate alone in that variant"))
    return errors


def variant_model(base: DriveModel, firmware: str) -> DriveModel:
    """``base`` (as loaded, before ``@SPEED``) running ``firmware``: the shipped build (the
    model unchanged) or one of its variants (identity's firmware changed, caps scaled or
    replaced; every curve, SLC and dirty cap of a ``speed`` dimension scaled alike).

    Raises:
        KeyError: ``firmware`` is neither the shipped build nor a variant (names the known).
    """
    if firmware == base.firmware:
        return base
    variant = base.firmware_variants.get(firmware)
    if variant is None:
        known = [base.firmware, *base.firmware_variants]
        raise KeyError(f"{base.name} has no firmware {firmware!r}; known: {', '.join(known)}")
    caps = {f: base.caps.get(f) for f in CAP_FIELDS}
    for f, factor in variant.speed.items():
        if caps[f] is not None:
            caps[f] = caps[f] * factor  # type: ignore[operator]
    for f in CAP_FIELDS:
        if variant.caps.get(f) is not None:
            caps[f] = variant.caps.get(f)
    transfer = dict(base.transfer_caps)
    qd = dict(base.qd_iops)
    for f, factor in variant.speed.items():
        direction, _, unit = f.partition("_")
        curves = transfer if unit == "bw_mbps" else qd
        if direction in curves:
            curves[direction] = curves[direction].scaled(factor)
    slc, dirty = base.slc_cache, base.dirty
    if slc is not None:
        w_bw, w_iops = variant.speed.get("write_bw_mbps", 1.0), variant.speed.get("write_iops", 1.0)
        slc = replace(slc, write_bw_mbps=slc.write_bw_mbps * w_bw,
                      write_iops=slc.write_iops * w_iops if slc.write_iops is not None else None)
    if dirty is not None:
        dirty_caps = {f: (v * variant.speed.get(f, 1.0) if (v := dirty.caps.get(f)) is not None
                          else None) for f in CAP_FIELDS}
        dirty = replace(dirty, caps=Caps(**dirty_caps))
    return replace(base, firmware=firmware, caps=Caps(**caps), transfer_caps=transfer,
                   qd_iops=qd, slc_cache=slc, dirty=dirty)
