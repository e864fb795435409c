"""A drive's identity and safety state as one JSON document (``ssdqual identify --json``), made
on the host the drive is in, and read back on the machine that drives it through fio's
client/server mode (``--drive=fio://HOST/dev/X``): over SSH at every check, or from a file the
engineer made on the host (``--remote-identity=FILE``) when there is no SSH access.

Document (``format`` ``ssdqual-identify/1``)::

    {"format": "ssdqual-identify/1", "host": "lab-07", "device": "/dev/nvme0n1",
     "fio_filename": "/dev/nvme0n1", "lock_key": "nvme0n1", "size_bytes": 960197124096,
     "made_at": "2026-12-05T20:00:00+00:00", "ssdqual_version": "0.1.0",
     "identity": {DriveIdentity fields}, "refusals": ["... is mounted at /mnt ...", ...],
     "ioengine": "io_uring",
     "host_names": ["lab-07", "lab-07.lab.example", "10.0.0.7", "fd00::7"],
     "by_id": "/dev/disk/by-id/nvme-Samsung_SSD_980_S64DNF0R123456"}

``refusals`` are every reason writes are refused on that host *except* the confirmation
(mounted, partitions, holders, system disk, signatures, busy): confirming is the driving
machine's part (``--confirm-destroy`` there). ``ioengine`` is the host's best fio engine (only
with ``--engine``). ``host_names`` are the names the host answers to, ``--host-alias`` names
included (``drive.host_names``): a file is taken only for a ``fio://HOST`` among them.
``by_id`` is the drive's own ``/dev/disk/by-id`` link (``drive.by_id``), ``null`` when it has
none (a loop device, zram, a file): fio opens it, so another drive in the slot is never written.
A file made before these two fields existed (ssdqual 0.1.0 before issue 19) reads back with
``host_names`` and ``by_id`` None and ``legacy`` True: it is good for reads only.
"""

from __future__ import annotations

import json
import socket
from dataclasses import asdict, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pytest_ssdqual import installed_version
from pytest_ssdqual.drive.by_id import by_id_link
from pytest_ssdqual.drive.host_names import local_host_names
from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.errors import ConfigError, DeviceError

__all__ = ["FORMAT", "RemoteIdentity", "identity_document", "read_identity_document"]

FORMAT = "ssdqual-identify/1"


def identity_document(spec: DriveSpec, *, ioengine: str | None = None,
                      host_aliases: tuple[str, ...] = ()) -> dict[str, Any]:
    """Open the local drive ``spec`` read only (``DriveTarget.open``; a second time as if its
    serial were confirmed, when anything refuses writes, to leave the confirmation out of
    ``refusals``) and describe it (module docstring). Nothing is written.

    Args:
        host_aliases: more names this host answers to (``--host-alias``), added to
            ``host_names``.

    Raises:
        ConfigError: (key ``--host-alias``) an alias is not a host name or IP address.
        ConfigError, DeviceError: as ``DriveTarget.open`` (a partition, a device gone, ...).
    """
    try:
        names = local_host_names(host_aliases)
    except ValueError as exc:
        raise ConfigError(str(exc), key="--host-alias",
                          fix="give a name or address the driving machine uses for this host "
                          "in --drive=fio://HOST/dev/X, e.g. --host-alias 10.0.0.7") from None
    target = DriveTarget.open(spec, confirmed_serials=(), file_size_bytes=0)
    ident = target.identity
    refusals = target.write_refusals
    if refusals and ident.serial:  # as if confirmed: what else refuses writes on this host
        refusals = DriveTarget.open(spec, confirmed_serials=(ident.serial,),
                                    file_size_bytes=0).write_refusals
    return {
        "format": FORMAT,
        "host": socket.gethostname(),
        "device": spec.path,
        "fio_filename": target.fio_filename,
        "lock_key": target.lock_key,
        "size_bytes": target.size_bytes,
        "made_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "ssdqual_version": installed_version("pytest-ssdqual"),
        "identity": {k: list(v) if isinstance(v, tuple) else v
                     for k, v in asdict(ident).items()},
        "refusals": list(refusals),
        "ioengine": ioengine,
        "host_names": list(names),
        "by_id": (by_id_link(target.fio_filename, ident.serial or "")
                  if spec.kind == "block" else None),
    }


class RemoteIdentity:
    """A read-back identity document: ``identity`` (DriveIdentity), ``refusals``,
    ``fio_filename``, ``lock_key``, ``size_bytes``, ``host``, ``device``, ``made_at``,
    ``ioengine`` (None when not probed), ``host_names`` (tuple; None in a legacy file),
    ``by_id`` (the drive's by-id link; None when it has none or in a legacy file), ``legacy``
    (True: made before ``host_names`` and ``by_id`` were recorded; good for reads only)."""

    def __init__(self, doc: dict[str, Any], where: str) -> None:
        try:
            raw = doc["identity"]
            known = {f.name for f in fields(DriveIdentity)}
            values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v
                                      for k, v in raw.items() if k in known}
            self.identity = DriveIdentity(**values)
            self.refusals = tuple(str(r) for r in doc.get("refusals") or ())
            self.fio_filename = str(doc["fio_filename"])
            self.lock_key = str(doc["lock_key"])
            self.size_bytes = int(doc["size_bytes"])
            self.host = str(doc.get("host") or "")
            self.device = str(doc["device"])
            self.made_at = str(doc.get("made_at") or "")
            engine = doc.get("ioengine")
            self.ioengine = str(engine) if engine else None
            self.legacy = "host_names" not in doc or "by_id" not in doc
            names = doc.get("host_names")
            if names is not None and not isinstance(names, list):
                raise TypeError(f"host_names is {type(names).__name__}, not a list")
            self.host_names = None if names is None else tuple(str(n) for n in names)
            self.by_id = str(doc["by_id"]) if doc.get("by_id") else None
        except (KeyError, TypeError, ValueError, AttributeError) as exc:  # a hand-edited file
            raise DeviceError(f"{where}: not an ssdqual identity document ({exc})") from None


def read_identity_document(text: str, where: str) -> RemoteIdentity:
    """Parse ``ssdqual identify --json`` output (``where`` names it in messages).

    Raises:
        DeviceError: not JSON, another format, or fields missing.
    """
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DeviceError(f"{where}: not JSON ({exc.msg}, line {exc.lineno}): "
                          f"{text.strip()[:200]!r}") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise DeviceError(f"{where}: not an ssdqual identity document (format "
                          f"{doc.get('format') if isinstance(doc, dict) else None!r}, "
                          f"expected {FORMAT!r})")
    return RemoteIdentity(doc, where)


def load_identity_file(path: str) -> RemoteIdentity:
    """Read a ``--remote-identity`` file.

    Raises:
        ConfigError: (key ``--remote-identity``) missing, unreadable or not an identity
            document, with the command that makes one.
    """
    try:
        return read_identity_document(Path(path).read_text(), path)
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror}", key="--remote-identity",
                          fix="make it on the drive's host: ssdqual identify --json /dev/X "
                          "> FILE, and copy it here") from None
    except DeviceError as exc:
        raise ConfigError(str(exc), key="--remote-identity",
                          fix="make it on the drive's host: ssdqual identify --json /dev/X "
                          "> FILE") from None
