"""The drive's identity key: what tells one drive of a session from every other in Allure
history ids (the ``drive identity`` parameter), parent suites and per-drive summary page names,
and follows the same drive from session to session.

* A drive is its serial (a scratch file's serial is its absolute path); a drive that reports no
  usable serial is the drive as given (``/dev/sdb``). A drive on another host
  (``fio://HOST/dev/X``) is its serial on that host: ``S123 on lab-07``.
* An emulated drive run at another speed is another drive: ``emu:X@0.8`` is
  ``<serial of X>@0.8`` (``emu:X`` and ``emu:X@0.8`` may run in one session), whether or not
  ``emu:X`` runs beside it.
* When another ``--drive`` of the session has the same key -- two NVMe namespaces of one
  controller, two USB bridges that report one serial, two model files that keep one serial --
  the drive as given is added: ``S123 (/dev/nvme0n2)``. Only then: ``/dev`` names move between
  boots, so a drive whose serial is its own keeps the serial alone, and its history.

The other drives of the session are identified without opening them (``peek_key``: as opening
would identify a block device or a scratch file, from the model file for an emulated drive),
read only; one that cannot be identified is taken as no match.
Plain Python (no pytest).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from pytest_ssdqual.drive.identity import NO_SERIAL
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.drive.target import identity_kind
from pytest_ssdqual.errors import SsdQualError

__all__ = ["DriveKeys", "base_key", "identity_key", "peek_key"]



def _speed_suffix(spec: DriveSpec) -> str:
    from pytest_ssdqual.emulate.resolve import speed_suffix

    return speed_suffix(spec)


def base_key(spec: DriveSpec, serial: str) -> str:
    """The drive's key before it is told from the session's other drives: ``serial`` (stripped;
    ``spec.raw`` when it names no drive), plus ``@SPEED`` for an emulated drive at a speed
    other than 1 (``EMU-JMF612-43NM-64G@0.8``).

    Raises:
        ConfigError: an ``emu:`` spec with a bad speed (checked when options are parsed).
    """
    clean = serial.strip()
    key = clean if clean not in NO_SERIAL else spec.raw
    if spec.kind == "remote" and key != spec.raw:  # a drive on another host: "S123 on lab-07"
        from pytest_ssdqual.drive.remote_spec import host_label

        return f"{key} on {host_label(spec.host, spec.port)}"
    return key + _speed_suffix(spec)


def identity_key(spec: DriveSpec, serial: str, peers: Iterable[str | None]) -> str:
    """The drive's identity key (module docstring): ``base_key``, and `` (<spec.raw>)`` added
    when one of ``peers`` (the ``base_key`` of each other drive of the session, None when it
    could not be identified) is the same."""
    key = base_key(spec, serial)
    return f"{key} ({spec.raw})" if key in set(peers) else key


def peek_key(spec: DriveSpec) -> str | None:
    """The ``base_key`` of a drive of the session that is not opened here, read only, as
    opening it would identify it (``identity.identify``: sysfs, smartctl, nvme-cli for a block
    device; the path of a scratch file -- a file not created yet: its absolute path, which will
    be its serial) or, for an emulated drive, from its model file (the drive is not built).
    None when it cannot be identified (gone, unreadable, a tool failing)."""
    if spec.kind == "remote":  # read on its host over SSH only when opened
        return None
    try:
        if spec.kind == "emu":
            from pytest_ssdqual.emulate.model_file import load_model

            return base_key(spec, load_model(Path(spec.path)).serial)
        from pytest_ssdqual.drive.identity import identify

        name = os.path.basename(os.path.realpath(spec.path))
        kind = "file" if spec.kind == "file" else identity_kind(name)
        return base_key(spec, identify(spec.path, kind=kind).serial)
    except (SsdQualError, OSError, ValueError):
        if spec.kind == "file":
            return base_key(spec, str(Path(spec.path).resolve()))
        return None


class DriveKeys:
    """The identity keys of one session's drives (one per pytest process; each xdist worker
    computes the same keys for its drives).

    Args:
        specs: every ``--drive`` of the session.
    """

    def __init__(self, specs: Sequence[DriveSpec]) -> None:
        self.specs = tuple(specs)
        self._peeked: dict[str, str | None] = {}

    def key(self, spec: DriveSpec, serial: str) -> str:
        """``identity_key`` of the drive ``spec`` whose identity reports ``serial``, told from
        the session's other drives of the same kind (a file, an emulated drive and a block
        device never share a serial)."""
        peers = []
        for other in self.specs:
            if other.raw == spec.raw or other.kind != spec.kind:
                continue
            if other.raw not in self._peeked:
                self._peeked[other.raw] = peek_key(other)
            peers.append(self._peeked[other.raw])
        return identity_key(spec, serial, peers)
