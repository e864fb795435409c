"""What a firmware update, a controller reset or a power cut reaches beyond the ``--drive`` given:
the other NVMe namespaces of the same controller.

``--confirm-destroy`` names the controller's serial, and the write checks
(:func:`~pytest_ssdqual.drive.safety.write_refusal_reasons`) look at the one block device given
(``/dev/nvme0n1``). ``nvme fw-download`` / ``fw-commit``, ``nvme reset /dev/nvme0`` and a power
cut act on the whole controller -- every namespace (``nvme0n2``, ``nvme0n3``...) -- so each of
those must pass the same checks: not mounted, no swap, no partitions, no LVM/md/dm holders, not
the system disk (NVMe Base Specification: a Firmware Commit and a Controller Level Reset affect
every namespace attached to the controller).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pytest_ssdqual.drive.blockdev import inspect_block_device
from pytest_ssdqual.drive.safety import write_refusal_reasons

__all__ = ["other_namespaces", "whole_drive_refusals"]

_NAMESPACE = re.compile(r"(nvme\d+)n\d+")


def other_namespaces(name: str, *, sysfs: Path = Path("/sys")) -> list[str]:
    """The other namespace block devices of the NVMe controller of block device ``name``
    (``nvme0n1`` -> ``['nvme0n2']``), from ``/sys/block``; ``[]`` for any other device."""
    m = _NAMESPACE.fullmatch(name)
    if m is None:
        return []
    try:
        names = os.listdir(sysfs / "block")
    except OSError:
        return []
    return sorted(n for n in names if n != name and (o := _NAMESPACE.fullmatch(n)) is not None
                  and o.group(1) == m.group(1))


def whole_drive_refusals(path: str, *, serial: str, confirmed: tuple[str, ...],
                         action: str, sysfs: Path = Path("/sys")) -> list[str]:
    """Why ``action`` (``"a firmware update"``, ``"a power cut"``) must not reach the drive of
    the block device ``path``: each other namespace of its NVMe controller that is mounted, in
    use, partitioned or the system disk (:func:`write_refusal_reasons`, the controller's serial
    confirmed as given). ``[]`` for a device that is not an NVMe namespace or has no others.

    Raises:
        DeviceError: a namespace's sysfs entry cannot be read (from ``inspect_block_device``).
    """
    name = Path(os.path.realpath(path)).name
    controller = name.rpartition("n")[0]
    out: list[str] = []
    for other in other_namespaces(name, sysfs=sysfs):
        state = inspect_block_device(f"/dev/{other}", sysfs=sysfs)
        for reason in write_refusal_reasons(state, serial=serial, confirmed_serials=confirmed):
            out.append(f"{action} reaches every namespace of {controller}, /dev/{other} too: "
                       f"{reason}")
    return out
