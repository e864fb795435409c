"""Each drive's short label in a session: its test id (``sdb``, ``file-x.img``,
``emu-jmf612-43nm-64g``), unique among the session's drives.

The label names the drive where a full path would not fit: in test ids (xdist schedules per
drive on them, ``plugin.scheduling``) and in the progress lines of a run
(``[ssdqual sdb] seq_write_128k_qd32: ...``).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.emulate.resolve import drive_id

__all__ = ["drive_label", "drive_test_ids"]


def _drive_id(spec: DriveSpec, depth: int) -> str:
    """``sdb`` for a block device, ``file-x.img`` for a file, ``emu-<model>`` emulated; with
    ``depth`` > 0 the last ``depth`` parent folders go in front of the name (``file-a-x.img``)."""
    if spec.kind == "emu":
        return drive_id(spec)
    if spec.kind == "remote":  # lab-07-nvme0n1, 10.0.0.7-sdb, ip6_fd00__7-sdb
        from pytest_ssdqual.drive.remote_spec import host_id

        return f"{host_id(spec.host, spec.port)}-{Path(spec.path).name}"
    path = Path(spec.path)
    parents = [p for p in path.parent.parts if p != "/"][-depth:] if depth else []
    name = "-".join([*parents, path.name])
    return name if spec.kind == "block" else f"file-{name}"


def drive_test_ids(specs: Sequence[DriveSpec]) -> list[str]:
    """The test id of each drive, in ``specs`` order, unique within the session.

    A drive's id is its short name (``sdb``, ``file-x.img``, ``emu-jmf612-43nm-64g``). Two
    drives whose short names are alike (``file:/t/a/x.img`` and ``file:/t/b/x.img``) get their
    parent folders in front until they differ (``file-a-x.img``, ``file-b-x.img``), and
    failing that their position (``file-x.img-2``): pytest's own disambiguation (``x.img0``,
    ``x.img1``) would make ids that name no drive, and one shared group would run both drives
    on one worker, one after the other.

    Args:
        specs: the session's drives (``SessionOptions.specs``).

    Returns:
        one id per drive; ``[]`` for no drives.
    """
    depth = [0] * len(specs)
    ids = [_drive_id(spec, 0) for spec in specs]
    for _ in range(16):
        clashes = {i for i in ids if ids.count(i) > 1}
        if not clashes:
            break
        for n, spec in enumerate(specs):
            if ids[n] in clashes and spec.kind != "emu":
                depth[n] += 1
                ids[n] = _drive_id(spec, depth[n])
    seen: dict[str, int] = {}
    unique = []
    for i in ids:
        seen[i] = seen.get(i, 0) + 1
        unique.append(i if seen[i] == 1 else f"{i}-{seen[i]}")
    return unique


def drive_label(spec: DriveSpec, specs: Sequence[DriveSpec]) -> str:
    """``spec``'s entry of :func:`drive_test_ids` over ``specs`` (its short name alone when
    ``spec`` is not among them)."""
    raws = [s.raw for s in specs]
    if spec.raw not in raws:
        return drive_test_ids([spec])[0]
    return drive_test_ids(specs)[raws.index(spec.raw)]
