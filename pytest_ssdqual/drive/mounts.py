"""What is mounted and what is swap: ``/proc/self/mountinfo`` and ``/proc/swaps`` (proc(5)).

* ``mountinfo``: field 3 is ``major:minor`` of the mounted filesystem, field 5 the mount point
  (octal-escaped), and after the ``-`` separator the filesystem type and the mount source.
* ``swaps``: one header line, then ``Filename Type Size ...``.

Read-only; the paths are injectable so that tests read fake files.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.errors import DeviceError

__all__ = ["MountEntry", "read_mountinfo", "read_swaps", "root_device"]

_OCTAL_ESCAPE = re.compile(r"\\([0-7]{3})")


@dataclass(frozen=True)
class MountEntry:
    """One line of ``/proc/self/mountinfo``: device number, mount point and mount source."""

    dev: tuple[int, int]
    mount_point: str
    fstype: str
    source: str


def read_mountinfo(path: Path = Path("/proc/self/mountinfo")) -> list[MountEntry]:
    """Parse ``/proc/self/mountinfo`` (proc(5)); octal escapes (``\\040``) are decoded.

    Raises:
        DeviceError: the file cannot be read.
    """
    try:
        text = Path(path).read_text(errors="surrogateescape")
    except OSError as exc:
        raise DeviceError(f"cannot read {path}: {exc}") from exc
    entries: list[MountEntry] = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) < 7 or "-" not in fields[6:]:
            continue
        sep = fields.index("-", 6)
        major, _, minor = fields[2].partition(":")
        if not (major.isdigit() and minor.isdigit()):
            continue
        fstype = fields[sep + 1] if len(fields) > sep + 1 else ""
        source = fields[sep + 2] if len(fields) > sep + 2 else ""
        entries.append(
            MountEntry((int(major), int(minor)), _unescape(fields[4]), fstype, _unescape(source))
        )
    return entries


def read_swaps(path: Path = Path("/proc/swaps")) -> list[str]:
    """File names of the active swap areas in ``/proc/swaps`` (proc(5)); none when it is absent.

    Raises:
        DeviceError: the file exists but cannot be read.
    """
    try:
        text = Path(path).read_text(errors="surrogateescape")
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise DeviceError(f"cannot read {path}: {exc}") from exc
    names: list[str] = []
    for line in text.splitlines()[1:]:
        fields = line.split()
        if fields:
            names.append(_unescape(fields[0]))
    return names


def root_device() -> tuple[int, int]:
    """``(major, minor)`` of the filesystem holding ``/`` (``os.stat('/').st_dev``)."""
    dev = os.stat("/").st_dev
    return (os.major(dev), os.minor(dev))


def _unescape(text: str) -> str:
    return _OCTAL_ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), text)
