"""Lab inventory: which controller and NAND a drive carries, since drives do not report them.

Threshold profiles match on controller and NAND (docs/thresholds.md), but neither smartctl
nor nvme-cli can tell them: the same model name has shipped with different controllers and NAND
over its life. A lab keeps a YAML file (see ``inventory.example.yaml``)::

    version: 1
    drives:
      - match: {model: "JMicron*JMF667H*128*"}   # fnmatch glob, case-insensitive
        controller: JMF667H
        nand: L85C
      - match: {serial: "S3Z9NB0K123456"}        # exact serial: beats any model glob
        controller: PS5012-E12
        nand: BiCS3
      - match: {model: "HDS721050DLE630"}         # behind a USB bridge smartctl does not know
        smartctl_device_type: sntjmicron          # every smartctl call passes -d sntjmicron

Precedence (:func:`resolve_assignment`), per field: ``--controller`` / ``--nand`` options > a lab
entry matching the serial > the first lab entry whose model glob matches (file order) > built-in
entries for virtual targets (loop, zram, scratch file). A drive found nowhere gets an
``Assignment`` with ``known`` False, and the run goes on with generic limits.

Files are checked against ``inventory_schema.json`` before use; every problem is reported at
once, each with the file, the YAML line and the key (:class:`~pytest_ssdqual.errors.ConfigErrors`).
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from pytest_ssdqual.drive.identity import FILE_MODEL, LOOP_MODEL, ZRAM_MODEL, DriveIdentity
from pytest_ssdqual.errors import ConfigError, ConfigErrors
from pytest_ssdqual.yamlutil import json_path, line_of, load_yaml_with_lines

__all__ = ["Assignment", "Entry", "Inventory", "load_schema", "resolve_assignment"]

SCHEMA_RESOURCE = "inventory_schema.json"


@dataclass(frozen=True)
class Assignment:
    """Controller and NAND given to a drive, and where they came from.

    Attributes:
        controller: controller name as threshold files use it, or None when unknown.
        nand: NAND name, or None when unknown.
        source: provenance for reports: ``'inventory.yaml:12 (serial S3Z9NB0K123456)'``,
            ``'built-in (Linux loop device)'``, ``'--controller option'``, or
            ``'not in inventory: ...'``; fields from different places are joined with ``'; '``.
    """

    controller: str | None
    nand: str | None
    source: str

    @property
    def known(self) -> bool:
        """True when a controller is assigned (thresholds can then be resolved for it)."""
        return self.controller is not None


@dataclass(frozen=True)
class Entry:
    """One inventory entry.

    Attributes:
        model: fnmatch glob on the drive model (case-insensitive), or None.
        serial: exact serial number, or None. An entry with both needs both to hold.
        controller / nand: what the entry assigns (either may be None).
        note: free text.
        smartctl_device_type: smartctl ``-d`` type for the drive (``sntjmicron``), or None.
        where: provenance prefix, ``'inventory.yaml:12'`` or ``'built-in'``.
        plugs: lab hardware for the drive, plug kind (``power_switch``, ``power_meter``,
            ``firmware_updater``) -> plug spec text (parsed by ``pytest_ssdqual.plugs.spec``).
    """

    model: str | None
    serial: str | None
    controller: str | None
    nand: str | None
    note: str = ""
    where: str = "built-in"
    smartctl_device_type: str | None = None
    plugs: Mapping[str, str] = dataclass_field(default_factory=dict)

    def matches(self, identity: DriveIdentity) -> bool:
        """All given keys hold: serial equal (surrounding spaces ignored), model glob matches."""
        if self.serial is not None and self.serial.strip() != identity.serial.strip():
            return False
        if self.model is not None and not fnmatch.fnmatchcase(
            identity.model.strip().casefold(), self.model.strip().casefold()
        ):
            return False
        return True

    def describe(self) -> str:
        """``'inventory.yaml:12 (serial S3Z...)'`` / ``'inventory.yaml:4 (model glob "X*")'``."""
        if self.where == "built-in":
            return f"built-in ({self.model})"
        if self.serial is not None:
            return f"{self.where} (serial {self.serial})"
        return f'{self.where} (model glob "{self.model}")'


@cache
def load_schema() -> dict[str, Any]:
    """The inventory JSON Schema (draft 2020-12) shipped in the package."""
    text = resources.files("pytest_ssdqual").joinpath(SCHEMA_RESOURCE).read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


_FIELDS = ("match", "controller", "nand", "note", "smartctl_device_type")
_MATCH_KEYS = ("model", "serial")
_TOP_KEYS = ("version", "drives")


_REQUIRED_FIX = {
    "match": 'add match: {model: "GLOB*"} or match: {serial: "SERIAL"}',
    "version": "add version: 1 at the top",
    "drives": "add a drives: list",
}


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(choices)}"


def _written_value(file: str, line: int | None, key: str) -> str | None:
    """The value of ``key`` as written on ``line`` of ``file`` (before YAML typed it)."""
    if line is None:
        return None
    try:
        text = Path(file).read_text(encoding="utf-8").splitlines()[line - 1]
    except (OSError, IndexError, UnicodeDecodeError):
        return None
    found = re.search(rf"\b{re.escape(key)}\s*:\s*([^,}}#\s]+)", text)
    return found.group(1) if found else None


def _schema_errors(data: object, lines: dict[str, int], file: str) -> list[ConfigError]:
    """Every schema violation as a ConfigError with line, key and a fix."""
    if data is None:
        return [
            ConfigError(
                "the file is empty",
                file=file,
                fix="start with 'version: 1' and a 'drives:' list (see inventory.example.yaml)",
            )
        ]
    validator = jsonschema.Draft202012Validator(load_schema())
    errors: list[ConfigError] = []
    for error in validator.iter_errors(data):
        path = list(error.absolute_path)
        key = json_path(path) or None
        line = line_of(lines, path)
        message = error.message
        fix: str | None = None
        parent = path[-1] if path else None
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = _MATCH_KEYS if parent == "match" else _TOP_KEYS if not path else _FIELDS
            known = set(error.schema.get("properties", {}))
            for extra in sorted(k for k in error.instance if k not in known):
                where = [*path, str(extra)]
                errors.append(
                    ConfigError(
                        f"unknown key {extra!r}",
                        file=file,
                        line=line_of(lines, where),
                        key=json_path(where),
                        fix=_did_you_mean(str(extra), allowed),
                    )
                )
            continue
        if error.validator == "anyOf" and parent == "match":
            message = "match has neither 'model' nor 'serial'"
            fix = 'add model: "GLOB*" or serial: "SERIAL"'
        elif error.validator == "anyOf":
            message = "entry assigns neither 'controller', 'nand' nor 'smartctl_device_type'"
            fix = "add controller: and/or nand: (or smartctl_device_type:), or remove the entry"
        elif error.validator == "required":
            missing = next(
                (k for k in ("match", "version", "drives") if f"'{k}'" in error.message), None
            )
            fix = _REQUIRED_FIX.get(missing or "", None)
        elif error.validator == "pattern" and parent == "smartctl_device_type":
            message = f"{error.instance!r} is not a smartctl device type"
            fix = "give one of smartctl -h's -d types, e.g. sat, sntjmicron, sntasmedia"
        elif error.validator == "const" and path == ["version"]:
            message = f"unsupported version {error.instance!r}"
            fix = "set version: 1"
        elif error.validator == "type" and not path:
            message = (
                "expected a mapping with 'version' and 'drives', "
                f"got {type(error.instance).__name__}"
            )
        elif error.validator == "type" and error.instance is None:
            message = "no value given"
            fix = "give a value or remove the key"
        elif error.validator == "type" and isinstance(error.instance, int | float):
            written = _written_value(file, line, str(parent)) or str(error.instance)
            message = f"YAML read the unquoted value {written} as the number {error.instance!r}"
            fix = f'quote it: {parent}: "{written}"'
        errors.append(ConfigError(message, file=file, line=line, key=key, fix=fix))
    return sorted(errors, key=lambda e: (e.line or 0, e.key or ""))


def _entries(data: dict[str, Any], lines: dict[str, int], file: str) -> list[Entry]:
    entries: list[Entry] = []
    for index, item in enumerate(data["drives"]):
        match = item["match"]
        line = lines.get(f"drives[{index}]")
        entries.append(
            Entry(
                model=match.get("model"),
                serial=match.get("serial"),
                controller=item.get("controller"),
                nand=item.get("nand"),
                note=item.get("note", ""),
                where=f"{file}:{line}" if line else file,
                smartctl_device_type=item.get("smartctl_device_type"),
                plugs=dict(item.get("plugs", {})),
            )
        )
    return entries


def _duplicates(entries: Sequence[Entry], lines: dict[str, int], file: str) -> list[ConfigError]:
    """Two entries with the same match: the second could never win, so it is a mistake."""
    errors: list[ConfigError] = []
    first: dict[tuple[str | None, str | None], int] = {}
    for index, entry in enumerate(entries):
        ident = (
            entry.model.casefold() if entry.model is not None else None,
            entry.serial.strip() if entry.serial is not None else None,
        )
        if ident in first:
            errors.append(
                ConfigError(
                    f"same match as drives[{first[ident]}] "
                    f"(line {lines.get(f'drives[{first[ident]}]')}): this entry never applies",
                    file=file,
                    line=lines.get(f"drives[{index}].match"),
                    key=f"drives[{index}].match",
                    fix="merge the two entries or remove one",
                )
            )
        else:
            first[ident] = index
    return errors


class Inventory:
    """Inventory entries in file order; look a drive up with :meth:`lookup`."""

    def __init__(self, entries: Iterable[Entry], *, path: str | None = None) -> None:
        self.entries: tuple[Entry, ...] = tuple(entries)
        self.path = path

    def __len__(self) -> int:
        return len(self.entries)

    def __repr__(self) -> str:
        return f"Inventory({len(self.entries)} entries, path={self.path!r})"

    @classmethod
    def load(cls, path: str | Path) -> Inventory:
        """Read and validate a lab inventory YAML file.

        Args:
            path: the YAML file.

        Returns:
            The inventory, entries in file order.

        Raises:
            ConfigError: unreadable file or YAML syntax error (with the line from PyYAML's
                ``problem_mark``), a key repeated in one mapping.
            ConfigErrors: schema violations (``inventory_schema.json``): unknown keys, wrong
                types, a ``match`` with neither ``model`` nor ``serial``, an entry assigning
                nothing, a wrong ``version``; and two entries with the same ``match``. All are
                reported at once, each with file, line and key.
        """
        file = str(path)
        data, lines = load_yaml_with_lines(path)
        errors = _schema_errors(data, lines, file)
        if errors:
            raise ConfigErrors(errors)
        assert isinstance(data, dict)
        entries = _entries(data, lines, file)
        duplicates = _duplicates(entries, lines, file)
        if duplicates:
            raise ConfigErrors(duplicates)
        return cls(entries, path=file)

    @classmethod
    def builtin(cls) -> Inventory:
        """Entries for the virtual targets whose identity this package makes up.

        ``'Linux loop device'`` -> ``linux-loop`` / ``host-file``; ``'Linux zram device'`` ->
        ``linux-zram`` / ``dram``; ``'Scratch file'`` -> ``host-file`` / ``host-fs``.
        """
        return cls(
            [
                Entry(model=LOOP_MODEL, serial=None, controller="linux-loop", nand="host-file"),
                Entry(model=ZRAM_MODEL, serial=None, controller="linux-zram", nand="dram"),
                Entry(model=FILE_MODEL, serial=None, controller="host-file", nand="host-fs"),
            ]
        )

    def find(self, identity: DriveIdentity) -> Entry | None:
        """The entry assigning a controller or NAND to ``identity``: a serial entry first, else
        the first matching model glob (an entry giving only a ``smartctl_device_type`` is not
        one)."""
        serial_entries = [e for e in self.entries if e.serial is not None]
        for entry in [*serial_entries, *(e for e in self.entries if e.serial is None)]:
            if (entry.controller or entry.nand) and entry.matches(identity):
                return entry
        return None

    def smartctl_device_type(self, identity: DriveIdentity) -> tuple[str, str] | None:
        """``(type, 'inventory.yaml:12')`` of the first entry for ``identity`` that gives a
        ``smartctl_device_type`` (serial entries first, then model globs in file order)."""
        ordered = sorted(self.entries, key=lambda e: e.serial is None)
        for entry in ordered:
            if entry.smartctl_device_type and entry.matches(identity):
                return entry.smartctl_device_type, entry.where
        return None

    def plug(self, identity: DriveIdentity, kind: str) -> tuple[str, str] | None:
        """``(spec text, 'inventory.yaml:12')`` of the first entry for ``identity`` naming a plug of
        ``kind`` (a ``PLUG_KINDS`` key; serial entries first, then globs in order); or None."""
        for entry in sorted(self.entries, key=lambda e: e.serial is None):
            if kind in entry.plugs and entry.matches(identity):
                return entry.plugs[kind], entry.where
        return None

    def lookup(self, identity: DriveIdentity) -> Assignment | None:
        """Controller and NAND for ``identity`` from this inventory, or None if no entry holds.

        Serial entries are tried first (exact serial), then model globs in file order.
        """
        entry = self.find(identity)
        if entry is None:
            return None
        return Assignment(entry.controller, entry.nand, entry.describe())


def resolve_assignment(
    identity: DriveIdentity,
    inventory: Inventory | None,
    *,
    controller: str | None = None,
    nand: str | None = None,
    extra_builtin: Sequence[Entry] = (),
) -> Assignment:
    """Decide the controller and NAND of a drive.

    Per field, the first that has a value: the ``--controller`` / ``--nand`` option, the lab
    ``inventory`` (serial entry, else first model glob), the built-in entries for virtual targets.

    Args:
        identity: the drive.
        inventory: the lab inventory, or None when the user gave none.
        controller / nand: command-line overrides (``None`` or ``''`` = not given).
        extra_builtin: entries the target itself brings (an emulated drive's model), tried
            with the built-in entries, before them.

    Returns:
        The assignment; ``known`` is False when no controller was found anywhere (the source
        then reads ``'not in inventory: MODEL (S/N SERIAL)'``).
    """
    lab = inventory.lookup(identity) if inventory is not None else None
    builtin = Inventory([*extra_builtin, *Inventory.builtin().entries]).lookup(identity)
    candidates: list[tuple[str | None, str | None, str]] = []
    if controller or nand:
        options = [f"--{name}" for name, v in (("controller", controller), ("nand", nand)) if v]
        label = "/".join(options) + (" option" if len(options) == 1 else " options")
        candidates.append((controller or None, nand or None, label))
    for found in (lab, builtin):
        if found is not None:
            candidates.append((found.controller, found.nand, found.source))

    chosen: dict[str, tuple[str, str]] = {}
    for field in ("controller", "nand"):
        for cand_controller, cand_nand, source in candidates:
            value = cand_controller if field == "controller" else cand_nand
            if value is not None:
                chosen[field] = (value, source)
                break
    if not chosen:
        where = f" {inventory.path}" if inventory is not None and inventory.path else ""
        return Assignment(
            None,
            None,
            f"not in inventory{where}: {identity.model or '?'} (S/N {identity.serial or '?'})",
        )
    sources = [chosen[f][1] for f in ("controller", "nand") if f in chosen]
    if len(sources) == 2 and sources[0] != sources[1]:
        source = f"controller: {sources[0]}; nand: {sources[1]}"
    else:
        source = sources[0]
    return Assignment(
        chosen["controller"][0] if "controller" in chosen else None,
        chosen["nand"][0] if "nand" in chosen else None,
        source,
    )
