"""Emulated drive model files: the YAML file behind ``--drive=emu:MODEL``, found and loaded.

A model says who the emulated drive is (identity, controller, NAND -- what threshold profiles
match on) and how fast it may go over time, as caps a blkio throttle can enforce on a loop
device (:mod:`pytest_ssdqual.emulate.model` holds the result, ``DriveModel``)::

    version: 1
    source: "JMF667H reference design, IMFT L85C, 128 GB (2014 reviews)"
    identity:
      model: JMicron JMF667H 128GB (IMFT L85C)
      serial: EMU-JMF667H-L85C-128G
      firmware: SVN417w
      capacity_bytes: 128035676160        # the real drive's: profiles match capacity_gb on it
      controller: JMF667H
      nand: L85C
    emulated_capacity_bytes: 256MiB       # optional: the image (the host cannot hold 128 GB)
    caps: {read_bw_mbps: 556, write_bw_mbps: 155, read_iops: 8400, write_iops: 38000}
    slc_cache: {size_bytes: 2GiB, write_bw_mbps: 60, idle_flush_mbps: 200}
    dirty: {after_write_bytes: 4GiB, write_bw_mbps: 40}
    recovery:
      - {idle_s: 5, lift_pct: 50}
      - {idle_s: 15, lift_pct: 100}

Behaviours that need the job's shape, and sizes that scale with the image:
:mod:`pytest_ssdqual.emulate.model_behaviours`.

Units: bandwidth in decimal MB/s (10^6 B/s), sizes in bytes (an integer, or a string with a
binary ``KiB/MiB/GiB/TiB`` or decimal ``KB/MB/GB/TB`` unit), times in seconds. A cap left out
is not throttled: the host's speed applies. The behaviour (fresh caps, SLC cache, dirty state,
recovery) is defined in :mod:`pytest_ssdqual.emulate.state`.

``--drive=emu:MODEL[@SPEED]``: MODEL is a file name stem found in the model folders
(``--emu-models``, then ``emulated/`` in the rootdir) or a path to a YAML file; SPEED (default 1)
multiplies every bandwidth and IOPS cap, so ``emu:jmf667h-l85c-128g@0.8`` is the same drive made
20 % slower.

Files are validated against ``emu_model_schema.json`` (draft 2020-12), then sense-checked (caps
that would change nothing, recovery without a dirty state, steps out of order); every problem is
reported at once with the file, the YAML line and the key (:class:`ConfigErrors`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence
from fractions import Fraction
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from pytest_ssdqual.bounds import OutOfRange, check_number
from pytest_ssdqual.emulate.firmware_variants import parse_variants, variant_sense_errors
from pytest_ssdqual.emulate.model import (
    CAP_FIELDS,
    Caps,
    DirtyState,
    DriveModel,
    FiguresScale,
    NvmeFacts,
    PowerStateSpec,
    SlcCache,
)
from pytest_ssdqual.emulate.model_behaviours import (
    behaviour_fields,
    branch_errors,
    bs_bytes,
    curve_for,
    str_curve_keys,
)
from pytest_ssdqual.emulate.power_loss_model import power_loss_errors, power_loss_of
from pytest_ssdqual.emulate.power_model import power_model
from pytest_ssdqual.emulate.thermal import thermal_errors
from pytest_ssdqual.errors import ConfigError, ConfigErrors
from pytest_ssdqual.yamlutil import json_path, line_of, load_yaml_with_lines

__all__ = ["DEFAULT_FOLDER", "available_models", "find_model", "load_model", "load_schema",
           "parse_size"]

SCHEMA_RESOURCE = "emu_model_schema.json"
#: A model folder named in the rootdir (like ``thresholds/``).
DEFAULT_FOLDER = "emulated"

_UNITS = {
    "": 1, "B": 1,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
}
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B|B)?\s*", re.IGNORECASE)


def parse_size(value: int | str) -> int:
    """``268435456``, ``"256MiB"``, ``"128GB"``, ``"1.5GiB"`` -> bytes (int, rounded down).

    Raises:
        ValueError: not a size, or one that is negative or beyond 2**64 bytes
            (``bounds.OutOfRange``).
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size")
    m = None if isinstance(value, int) else _SIZE.fullmatch(str(value))
    if m is None and not isinstance(value, int):
        raise ValueError(f"{value!r} is not a size: write e.g. 268435456, 256MiB or 128GB")
    try:  # exact: float() of a long number is inf
        size = int(Fraction(m.group(1)) * _UNITS[(m.group(2) or "").upper()]) if m else value
        return int(check_number(int(size)))
    except (OutOfRange, ValueError) as exc:
        shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:20]}..."
        raise ValueError(f"size {shown}: {exc}") from None


def _is_path(ref: str) -> bool:
    return "/" in ref or ref.endswith((".yaml", ".yml"))


def available_models(folders: Iterable[Path]) -> dict[str, Path]:
    """Model name -> file over ``folders`` (``*.yaml``/``*.yml``); the first folder wins."""
    found: dict[str, Path] = {}
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]):
            found.setdefault(path.stem.casefold(), path)
    return found


def find_model(ref: str, folders: Sequence[Path], *, cwd: Path | None = None) -> Path:
    """The model file ``ref`` names: a path (holding ``/`` or ending ``.yaml``), else a name
    looked up (case-insensitive) in ``folders``, in order.

    Raises:
        ConfigError: (key ``--drive``) no such file / no model of that name (the fix lists the
            known names, with a "did you mean").
    """
    if _is_path(ref):
        path = Path(ref) if Path(ref).is_absolute() else (cwd or Path.cwd()) / ref
        if not path.is_file():
            raise ConfigError(f"emu:{ref}: model file {path} not found", key="--drive",
                              fix="give an existing model YAML, or a model name")
        return path
    models = available_models(folders)
    found = models.get(ref.casefold())
    if found is not None:
        return found
    where = ", ".join(str(f) for f in folders) or "no model folder"
    if not models:
        fix = f"no models in {where}: pass --emu-models DIR or give a YAML path"
    else:
        close = difflib.get_close_matches(ref.casefold(), list(models), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        fix = f"{hint}known models: {', '.join(sorted(models))}"
    raise ConfigError(f"emu:{ref}: no drive model {ref!r} in {where}", key="--drive", fix=fix)


@cache
def load_schema() -> dict[str, Any]:
    """The model JSON Schema (draft 2020-12) shipped in the package."""
    text = resources.files("pytest_ssdqual").joinpath(SCHEMA_RESOURCE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def _schema_errors(data: object, lines: dict[str, int], file: str) -> list[ConfigError]:
    if data is None:
        return [ConfigError("the file is empty", file=file,
                            fix="start with version: 1, identity: and caps: (see emulated/)")]
    validator = jsonschema.Draft202012Validator(load_schema())
    errors: list[ConfigError] = []
    for error in branch_errors(validator.iter_errors(str_curve_keys(data))):
        path = list(error.absolute_path)
        message, fix = error.message, None
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            known = list(error.schema.get("properties", {}))
            for extra in sorted(str(k) for k in error.instance if k not in known):
                where = [*path, extra]
                close = difflib.get_close_matches(extra, known, n=1)
                errors.append(ConfigError(
                    f"unknown key {extra!r}", file=file, line=line_of(lines, where),
                    key=json_path(where),
                    fix=f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(known)}",
                ))
            continue
        if error.validator == "required":
            missing = re.search(r"'([^']+)' is a required property", error.message)
            name = missing.group(1) if missing else "?"
            message = f"missing key {name!r}"
            fix = f"add {name}: (see the model files in emulated/)"
        elif error.validator == "anyOf" and path and isinstance(error.instance, str | int):
            message = f"{error.instance!r} is not a size"
            fix = "write bytes as an integer or with a unit: 268435456, 256MiB, 128GB"
        elif error.validator == "const" and path == ["version"]:
            message = f"unsupported version {error.instance!r}"
            fix = "set version: 1"
        elif "propertyNames" in list(error.schema_path) and path and path[0] == "transfer_caps":
            message = f"{error.instance!r} is not a transfer size"
            fix = "write transfer sizes as fio does: 512, 4k, 128k, 1m"
        elif "propertyNames" in list(error.schema_path) and path and path[0] == "qd_iops":
            message = f"{error.instance!r} is not a queue depth"
            fix = "write outstanding I/Os as whole numbers: 1, 2, 4 ... 32"
        elif error.validator == "oneOf" and path == ["recovery"]:
            message = "recovery is neither a list of steps nor a rate"
            fix = ("write a list of {idle_s: S, lift_pct: P} steps, or {clean_mbps: N} "
                   "(MB cleaned per idle second)")
        elif error.validator in ("exclusiveMinimum", "minimum", "maximum"):
            fix = "give a positive number" if error.validator != "maximum" else "at most 100"
        errors.append(ConfigError(message, file=file, line=line_of(lines, path),
                                  key=json_path(path) or None, fix=fix))
    return sorted(errors, key=lambda e: (e.line or 0, e.key or ""))


def _caps(block: dict[str, Any] | None) -> Caps:
    block = block or {}
    return Caps(**{f: float(block[f]) if f in block else None for f in CAP_FIELDS})


def _sense_errors(data: dict[str, Any], lines: dict[str, int], file: str) -> list[ConfigError]:
    """What the schema cannot say: caps that change nothing, recovery without dirty state,
    unordered steps, an image bigger than the drive."""
    errors: list[ConfigError] = []

    def err(path: list[str | int], message: str, fix: str) -> None:
        errors.append(ConfigError(message, file=file, line=line_of(lines, path),
                                  key=json_path(path), fix=fix))

    for parent, a, b in (("slc_cache", "size_bytes", "size_pct"),
                         ("dirty", "after_write_bytes", "after_write_pct")):
        block = data.get(parent)
        if isinstance(block, dict) and (a in block) == (b in block):
            err([parent], f"{parent} needs exactly one of {a} and {b}",
                f"give {a} (bytes) or {b} (% of the emulated capacity, which scales with "
                "the image)")
    sizes = [("identity", "capacity_bytes"), ("", "emulated_capacity_bytes"),
             ("slc_cache", "size_bytes"), ("dirty", "after_write_bytes")]
    for parent, key in sizes:
        block = data.get(parent) if parent else data
        if isinstance(block, dict) and key in block:
            try:
                parse_size(block[key])
            except ValueError as exc:
                err([parent, key] if parent else [key], str(exc),
                    "give bytes up to 2^64: 268435456, 256MiB, 128GB")
    if errors:
        return errors
    fresh = data.get("caps") or {}
    ident = data["identity"]
    capacity = parse_size(ident["capacity_bytes"])
    if "emulated_capacity_bytes" in data:
        emulated = parse_size(data["emulated_capacity_bytes"])
        if emulated > capacity:
            err(["emulated_capacity_bytes"],
                f"{emulated} bytes is more than the drive's capacity_bytes {capacity}",
                "the image scales the drive down: make it at most capacity_bytes")
        if emulated % 4096 or emulated < 2**20:
            err(["emulated_capacity_bytes"], f"{emulated} bytes is not a multiple of 4 KiB "
                "of at least 1 MiB", "e.g. 256MiB")
    slc = data.get("slc_cache")
    if slc is not None:
        for f in ("write_bw_mbps", "write_iops"):
            if f in slc and f in fresh and slc[f] >= fresh[f]:
                err(["slc_cache", f], f"post-cache {f} {slc[f]} is not below caps.{f} "
                    f"{fresh[f]}: the cache would change nothing",
                    f"lower slc_cache.{f} or raise caps.{f}")
    dirty = data.get("dirty")
    recovery = data.get("recovery")
    if dirty is not None:
        given = [f for f in CAP_FIELDS if f in dirty]
        if not given:
            err(["dirty"], "dirty state sets no cap",
                f"add at least one of {', '.join(CAP_FIELDS)} (the caps while dirty)")
        for f in given:
            if f in fresh and dirty[f] >= fresh[f]:
                err(["dirty", f], f"dirty {f} {dirty[f]} is not below caps.{f} {fresh[f]}",
                    f"lower dirty.{f}: a dirty drive is slower than a fresh one")
            elif f not in fresh and recovery is not None and not curve_for(data, f):
                curve = "transfer_caps" if f.endswith("_mbps") else "qd_iops"
                err(["dirty", f], f"dirty {f} has no fresh cap caps.{f} (nor {curve}."
                    f"{f.split('_')[0]}) for recovery to lift it towards",
                    f"add caps.{f} or {curve}.{f.split('_')[0]}, or remove recovery:")
    if recovery is not None:
        if dirty is None:
            err(["recovery"], "recovery without a dirty state",
                "add dirty: (what the drive recovers from) or remove recovery:")
        steps = recovery if isinstance(recovery, list) else []
        for i in range(1, len(steps)):
            prev, step = steps[i - 1], steps[i]
            if step["idle_s"] <= prev["idle_s"] or step["lift_pct"] <= prev["lift_pct"]:
                err(["recovery", i], f"step idle_s {step['idle_s']} / lift_pct "
                    f"{step['lift_pct']} does not follow idle_s {prev['idle_s']} / lift_pct "
                    f"{prev['lift_pct']}", "order the steps by increasing idle_s and lift_pct")
    for key, of in (("transfer_caps", bs_bytes), ("qd_iops", int)):
        for direction, points in (data.get(key) or {}).items():
            xs = [of(k) for k in points]
            if key == "transfer_caps" and any(x % 512 for x in xs):
                err([key, direction], f"{key}.{direction} has a transfer size that is not a "
                    "multiple of 512 bytes", "use sizes fio can move with direct I/O: 512, 4k")
    return errors


def load_model(path: str | Path) -> DriveModel:
    """Read, validate and build the model in ``path``.

    Raises:
        ConfigErrors: every problem at once (YAML syntax, schema, sense), each with the file,
            the YAML line, the key and a fix.
    """
    file = str(path)
    data, lines = load_yaml_with_lines(path)  # ConfigError on syntax / duplicate keys
    errors = _schema_errors(data, lines, file)
    if errors:
        raise ConfigErrors(errors)
    assert isinstance(data, dict)
    errors = [*_sense_errors(data, lines, file), *_nvme_sense_errors(data, lines, file),
              *power_loss_errors(data, lines, file), *variant_sense_errors(data, lines, file),
              *thermal_errors(data, lines, file)]
    if errors:
        raise ConfigErrors(errors)
    ident = data["identity"]
    slc = data.get("slc_cache")
    dirty = data.get("dirty")
    return DriveModel(
        name=Path(file).stem,
        file=file,
        line=lines.get("identity"),
        model=str(ident["model"]),
        serial=str(ident["serial"]),
        firmware=str(ident["firmware"]),
        controller=str(ident["controller"]),
        nand=str(ident["nand"]),
        capacity_bytes=parse_size(ident["capacity_bytes"]),
        emulated_capacity_bytes=(parse_size(data["emulated_capacity_bytes"])
                                 if "emulated_capacity_bytes" in data else None),
        logical_sector_bytes=int(ident.get("logical_sector_bytes", 512)),
        physical_sector_bytes=int(ident.get("physical_sector_bytes", 4096)),
        caps=_caps(data["caps"]),
        slc_cache=SlcCache(
            size_bytes=parse_size(slc["size_bytes"]) if "size_bytes" in slc else 0,
            size_pct=float(slc["size_pct"]) if "size_pct" in slc else None,
            write_bw_mbps=float(slc["write_bw_mbps"]),
            write_iops=float(slc["write_iops"]) if "write_iops" in slc else None,
            idle_flush_mbps=float(slc.get("idle_flush_mbps", slc["write_bw_mbps"])),
        ) if slc is not None else None,
        dirty=DirtyState(
            parse_size(dirty["after_write_bytes"]) if "after_write_bytes" in dirty else 0,
            _caps(dirty),
            float(dirty["after_write_pct"]) if "after_write_pct" in dirty else None,
            bool(dirty.get("random_writes_only", False)),
        ) if dirty is not None else None,
        **behaviour_fields(data),
        source=str(data.get("source", "")).strip(),
        notes=str(data.get("notes", "")).strip(),
        figures_scale=_figures_scale(data),
        nvme=_nvme_facts(data),
        power=power_model(data, lines, file),
        power_loss=power_loss_of(data),
        firmware_variants=parse_variants(data, parse_size),
    )


# -- figures_scale and the NVMe facts of an emulated NVMe twin ----------------


def _figures_scale(data: dict[str, Any]) -> FiguresScale | None:
    block = data.get("figures_scale")
    if block is None:
        return None
    return FiguresScale(float(block["factor"]), " ".join(str(block["why"]).split()))


def _nvme_facts(data: dict[str, Any]) -> NvmeFacts | None:
    """The ``power_states`` / ``apst`` / ``temperature`` blocks, or None when none is given."""
    if not any(k in data for k in ("power_states", "apst", "temperature")):
        return None
    apst = data.get("apst") or {}
    temp = data.get("temperature") or {}
    return NvmeFacts(
        power_states=tuple(
            PowerStateSpec(float(ps["max_power_w"]), bool(ps["non_operational"]),
                           int(ps.get("entry_latency_us", 0)), int(ps.get("exit_latency_us", 0)))
            for ps in data.get("power_states") or ()),
        apst_supported=bool(apst.get("supported", False)),
        apst_enabled=bool(apst["enabled"]) if "enabled" in apst else None,
        warning_temperature_c=float(temp["warning_c"]) if "warning_c" in temp else None,
        critical_temperature_c=float(temp["critical_c"]) if "critical_c" in temp else None,
    )


def _nvme_sense_errors(data: dict[str, Any], lines: dict[str, int], file: str
                       ) -> list[ConfigError]:
    """What the schema cannot say about the NVMe facts: PS0 must be operational (NVMe Base
    Specification: power state 0 is the highest-performance operational state), APST needs a
    non-operational state to go to, and the warning temperature is below the critical one."""
    errors: list[ConfigError] = []

    def err(path: list[str | int], message: str, fix: str) -> None:
        errors.append(ConfigError(message, file=file, line=line_of(lines, path),
                                  key=json_path(path), fix=fix))

    states = data.get("power_states") or []
    if states and states[0].get("non_operational"):
        err(["power_states", 0, "non_operational"], "PS0 is non-operational",
            "power state 0 is the drive's full-performance state: list PS0 first, operational")
    for i, ps in enumerate(states):
        if ps.get("non_operational") and "exit_latency_us" not in ps:
            err(["power_states", i], f"PS{i} is non-operational without exit_latency_us",
                "give its ENLAT / EXLAT as entry_latency_us / exit_latency_us (microseconds)")
    apst = data.get("apst") or {}
    if apst.get("enabled") and not apst.get("supported"):
        err(["apst", "enabled"], "APST enabled but not supported", "set apst.supported: true")
    if apst.get("supported") and not any(ps.get("non_operational") for ps in states):
        err(["apst", "supported"], "APST supported without a non-operational power state",
            "add the idle states to power_states: (APST moves the drive into them)")
    temp = data.get("temperature") or {}
    if "warning_c" in temp and "critical_c" in temp and temp["warning_c"] >= temp["critical_c"]:
        err(["temperature", "warning_c"], f"warning_c {temp['warning_c']} is not below "
            f"critical_c {temp['critical_c']}", "WCTEMP is below CCTEMP on every NVMe drive")
    return errors
