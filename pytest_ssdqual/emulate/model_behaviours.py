"""Model-file parsing of the behaviour keys that need the job's shape or choose a form:
``transfer_caps`` / ``qd_iops`` curves, ``recovery`` as steps or a rate, ``fragmentation`` and
``copy`` (split out of :mod:`pytest_ssdqual.emulate.model_file`, which validates and loads).

Behaviours that need the job's shape (told through the job-shape channel, ``emulate.shape``)
and sizes that scale with the image::

    transfer_caps:                        # sequential jobs: MB/s by fio bs (ATTO-like)
      read: {4k: 90, 128k: 556, 1m: 556}
      write: {4k: 80, 128k: 155}
    qd_iops:                              # random jobs: IOPS by iodepth x numjobs (Anvil-like)
      read: {1: 8400, 32: 60000}
      write: {1: 9000, 32: 38000}
    slc_cache: {size_pct: 40, write_bw_mbps: 60}     # % of the emulated capacity
    dirty: {after_write_pct: 150, write_iops: 9000}
    recovery: {clean_mbps: 100}           # or steps; a rate scales with the image
    fragmentation: {after_random_write_pct: 50, seq_write_factor: 0.6, seq_read_factor: 0.9}
    copy: {concurrent_factor: 0.4}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from pytest_ssdqual.emulate.model import (
    CopyBehaviour,
    Curve,
    Fragmentation,
    RecoveryRate,
    RecoveryStep,
)
from pytest_ssdqual.emulate.thermal import thermal_model

__all__ = ["behaviour_fields", "branch_errors", "bs_bytes", "curve_for", "curves",
           "str_curve_keys"]


def branch_errors(errors: Iterable[Any]) -> Iterator[Any]:
    """``recovery`` is steps (a list) or a rate (a mapping): report the errors of the form the
    file chose, not jsonschema's "is not valid under any of the given schemas"."""
    for error in errors:
        if error.validator == "oneOf" and list(error.absolute_path) == ["recovery"]:
            branch = 0 if isinstance(error.instance, list) else (
                1 if isinstance(error.instance, dict) else None)
            inner = [e for e in error.context or ()
                     if branch is not None and e.relative_schema_path[0] == branch]
            if inner:
                yield from inner
                continue
        yield error


def str_curve_keys(data: object) -> object:
    """``transfer_caps`` / ``qd_iops`` with their point keys as text (YAML reads ``1:`` and
    ``512:`` as integers; JSON Schema property names are text)."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for key in ("transfer_caps", "qd_iops"):
        block = out.get(key)
        if isinstance(block, dict):
            out[key] = {d: ({str(k): v for k, v in c.items()} if isinstance(c, dict) else c)
                        for d, c in block.items()}
    return out


_BS_UNITS = {"": 1, "k": 2**10, "m": 2**20}


def bs_bytes(text: str | int) -> int:
    """A transfer-size key (``4k``, ``128K``, ``1m``, ``512``) -> bytes (fio: k = 1024)."""
    m = re.fullmatch(r"([0-9]+)([kKmM]?)", str(text))
    if m is None:
        raise ValueError(f"{text!r} is not a transfer size")
    return int(m.group(1)) * _BS_UNITS[m.group(2).lower()]


def curves(block: dict[str, Any] | None, x_of: Any) -> dict[str, Curve]:
    out: dict[str, Curve] = {}
    for direction, points in (block or {}).items():
        out[str(direction)] = Curve(tuple(sorted((float(x_of(k)), float(v))
                                                 for k, v in points.items())))
    return out


def curve_for(data: dict[str, Any], cap: str) -> bool:
    """True when a curve gives the fresh figure of ``cap`` (``write_iops`` -> qd_iops.write)."""
    direction = cap.split("_")[0]
    key = "transfer_caps" if cap.endswith("_mbps") else "qd_iops"
    return direction in (data.get(key) or {})



def behaviour_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The ``DriveModel`` fields of a validated file's recovery, curves, fragmentation, copy
    and thermal keys."""
    recovery = data.get("recovery")
    frag = data.get("fragmentation")
    copy = data.get("copy")
    return {
        "recovery": tuple(RecoveryStep(float(s["idle_s"]), float(s["lift_pct"]))
                          for s in (recovery if isinstance(recovery, list) else ())),
        "recovery_rate": (RecoveryRate(float(recovery["clean_mbps"]))
                          if isinstance(recovery, dict) else None),
        "transfer_caps": curves(data.get("transfer_caps"), bs_bytes),
        "qd_iops": curves(data.get("qd_iops"), int),
        "fragmentation": Fragmentation(float(frag["after_random_write_pct"]),
                                       float(frag["seq_write_factor"]),
                                       float(frag["seq_read_factor"])) if frag else None,
        "copy": CopyBehaviour(float(copy["concurrent_factor"])) if copy else None,
        "thermal": thermal_model(data),  # emulate.thermal
    }
