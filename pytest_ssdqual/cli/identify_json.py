"""``ssdqual identify --json DRIVE``: the drive's identity document
(:mod:`~pytest_ssdqual.drive.identity_file`), made on the drive's host for a remote run
(``--drive=fio://HOST/dev/X`` reads it over SSH, or from ``--remote-identity=FILE``)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from pytest_ssdqual.cli.options import EXIT_OK
from pytest_ssdqual.drive.identity_file import identity_document
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.errors import ConfigError

__all__ = ["print_identity_json"]


def print_identity_json(spec: DriveSpec, *, engine: bool = False,
                        host_aliases: tuple[str, ...] = ()) -> int:
    """Print the identity document of the local drive ``spec``; with ``engine`` also the best
    fio I/O engine of this host (``FioRunner.ioengine``, probed on a temporary file);
    ``host_aliases`` (``--host-alias``) are added to the host's recorded names.

    Raises:
        ConfigError: ``spec`` is not a local block device or file (an emulated or remote
            drive has no document of its own); a host alias is not a name or address.
        DeviceError, FioError: as ``DriveTarget.open`` / ``FioRunner.ioengine``.
    """
    if spec.kind not in ("block", "file"):
        raise ConfigError(f"{spec.raw}: identify --json describes a drive of this host",
                          key="--json", fix="run it on the drive's host with its /dev path")
    ioengine = None
    if engine:
        from pytest_ssdqual.fio.runner import FioRunner

        with tempfile.TemporaryDirectory(prefix="ssdqual-engine-") as folder:
            ioengine = FioRunner().ioengine(Path(folder) / "probe.bin")
    print(json.dumps(identity_document(spec, ioengine=ioengine, host_aliases=host_aliases),
                     indent=2))
    return EXIT_OK
