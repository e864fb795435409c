"""``--drive=emu:MODEL[@SPEED]`` before any I/O: find and validate the model, name the drive.

The plugin calls :func:`resolve_spec` while it parses options (an unknown model, an invalid model
file or a host that cannot emulate is a usage error) and :func:`drive_id` for xdist groups and
test ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_ssdqual.drive.spec import DriveSpec, parse_emu_ref
from pytest_ssdqual.emulate.host import host_problems
from pytest_ssdqual.emulate.model_file import DEFAULT_FOLDER, find_model, load_model
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.shipped import shipped_folder

__all__ = ["drive_id", "emu_text", "model_folders", "resolve_spec"]


def model_folders(rootdir: Path, extra: Sequence[Path] = ()) -> list[Path]:
    """Where ``emu:NAME`` is looked up, in order: ``extra`` (``--emu-models``), then
    ``<rootdir>/emulated``, then the shipped models (``shipped_folder("emulated")``: the
    checkout's ``emulated/``, or the installed wheel's copy), each folder once."""
    folders = [*extra, rootdir / DEFAULT_FOLDER]
    shipped = shipped_folder("emulated")
    if shipped.is_dir() and all(f.resolve() != shipped.resolve() for f in folders):
        folders.append(shipped)
    return folders


def resolve_spec(
    spec: DriveSpec, folders: Sequence[Path], *, cwd: Path | None = None, check_host: bool = True
) -> DriveSpec:
    """Find and validate the model of an ``emu:`` spec, before any I/O.

    Returns:
        The spec with ``path`` set to the model file's absolute path (``raw`` keeps the speed).

    Raises:
        ConfigError: unknown model, an invalid model file (all its errors, with line and key),
            or a host that cannot emulate (not root, no cgroup-v1 blkio, no losetup).
    """
    ref = parse_emu_ref(emu_text(spec.raw))
    path = find_model(ref.model, folders, cwd=cwd).resolve()
    load_model(path)
    if check_host:
        problems = host_problems()
        if problems:
            raise ConfigError(f"{spec.raw}: " + "; ".join(problems), key="--drive")
    return DriveSpec(raw=spec.raw, kind="emu", path=str(path))


def emu_text(raw: str) -> str:
    """The ``MODEL[@SPEED]`` part of a ``--drive`` value (``emu:`` prefix removed)."""
    text = raw.strip()
    return text.split(":", 1)[1] if text.lower().startswith("emu:") else text


def speed_suffix(spec: DriveSpec) -> str:
    """``@0.8`` for an emulated drive run at another speed than 1; ``""`` otherwise (any
    other drive too)."""
    if spec.kind != "emu":
        return ""
    speed = parse_emu_ref(emu_text(spec.raw)).speed
    return f"@{speed:g}" if speed != 1 else ""


def drive_id(spec: DriveSpec) -> str:
    """Short id for xdist groups and test ids: ``emu-jmf667h-l85c-128g``, ``emu-x@0.8``."""
    ref = parse_emu_ref(emu_text(spec.raw))
    name = Path(ref.model).stem if "/" in ref.model or ref.model.endswith((".yaml", ".yml")) \
        else ref.model
    return f"emu-{name}{speed_suffix(spec)}"
