"""The safety rules (docs/safety.md) as functions: why writing to a drive is refused, in full
sentences.

A block device may be written only when it is not the system disk, not a host-managed zoned
device, not mounted or used as swap, has no partitions and no holders (LVM, md, dm), is writable,
holds no partition table or file-system signature on the media either (one the kernel has not
registered: :func:`signature_reasons`, from ``wipefs``/``blkid``), and the user confirmed it by
*serial* with ``--confirm-destroy``
(:func:`write_refusal_reasons`; :func:`absolute_refusals` are the ones no option overrides).
A device the kernel will not open exclusively is busy (:func:`busy_reason`). An existing file
target is confirmed by its absolute path (:func:`confirmation_reasons` with another hint), and a
loop device's backing file is never written (:func:`loops_backed_by`). Every reason says how to
proceed. Nothing here writes; :class:`~pytest_ssdqual.drive.target.DriveTarget` applies these
before every write check.

Sources: Linux ``Documentation/ABI/stable/sysfs-block`` (``ro``, ``holders``, ``queue/zoned``,
``loop/backing_file``), proc(5) (``/proc/self/mountinfo``, ``/proc/swaps``), open(2) (``O_EXCL``
on a block device fails with ``EBUSY`` while the kernel holds it: mounted, swap, or claimed by
dm/md, in any mount namespace).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Collection
from pathlib import Path

from pytest_ssdqual.drive.blockdev import SWAP, BlockDeviceState
from pytest_ssdqual.drive.signatures import SignatureProbe
from pytest_ssdqual.errors import DeviceError

__all__ = [
    "absolute_refusals",
    "busy_reason",
    "confirmation_reasons",
    "loops_backed_by",
    "signature_reasons",
    "write_refusal_reasons",
]


def write_refusal_reasons(
    state: BlockDeviceState, *, serial: str, confirmed_serials: Collection[str]
) -> list[str]:
    """Every reason why writing to the block device ``state`` describes is refused.

    Args:
        state: from :func:`inspect_block_device`.
        serial: the drive's serial (``DriveIdentity.serial``); empty when unknown.
        confirmed_serials: the ``--confirm-destroy`` values. Compared with ``serial`` after
            stripping blanks, ignoring case.

    Returns:
        Full sentences, each saying how to proceed; empty when writes are allowed. A refusal no
        option overrides -- the system disk, a host-managed zoned device -- is given alone:
        hints such as "unmount it" or "add --confirm-destroy" would only mislead there.
    """
    absolute = absolute_refusals(state)
    if absolute:
        return absolute
    dev = state.device
    reasons: list[str] = []
    mount_points = [m for m in state.mounts if m != SWAP]
    if mount_points:
        reasons.append(
            f"{dev} is mounted at {', '.join(mount_points)}: unmount it first "
            f"(umount {mount_points[0]})"
        )
    if SWAP in state.mounts:
        reasons.append(f"{dev} is in use as swap: turn it off first (swapoff, see /proc/swaps)")
    if state.partitions:
        reasons.append(
            f"{dev} has partitions {', '.join(state.partitions)}: this tool only writes to blank "
            f"drives; wipe the partition table (wipefs -a {dev}) if the drive is really meant "
            "for destruction"
        )
    if state.holders:
        reasons.append(
            f"{dev} is in use by {', '.join(state.holders)} (LVM/md/dm): remove it from that "
            "stack first (lsblk shows the stack; vgreduce/mdadm --remove/dmsetup remove)"
        )
    if state.read_only:
        reasons.append(
            f"{dev} is read-only (/sys/block/{state.name}/ro is 1): if the drive is meant to be "
            f"written, make it writable (blockdev --setrw {dev}) or check its write-protect switch"
        )
    reasons.extend(confirmation_reasons(dev, serial, confirmed_serials))
    return reasons


def signature_reasons(dev: str, probe: SignatureProbe | None) -> list[str]:
    """The refusal for a device that is not blank on the media itself, or could not be checked.

    Args:
        dev: the device path, for the message.
        probe: from :func:`~pytest_ssdqual.drive.signatures.probe_signatures` (None: nothing
            to probe, e.g. a fake sysfs tree's path).

    Returns:
        One sentence naming what was found (type and byte offset of each signature) and the
        fix, or -- when no tool could read the device -- why it is unchecked: an unknown
        state is not a blank drive. Empty when the probe found nothing.
    """
    if probe is None:
        return []
    if not probe.checked:
        return [
            f"{dev} could not be checked for partition tables and file-system signatures "
            f"({probe.error}): a drive that was not checked is not known to be blank; install "
            "util-linux (apt-get install util-linux: wipefs, blkid) or find out why the probe "
            f"fails (wipefs --no-act {dev})"
        ]
    if not probe.signatures:
        return []
    found = ", ".join(s.describe() for s in probe.signatures)
    return [
        f"{dev} is not blank: {probe.tool} finds {found} on the device itself (a partition "
        "table or file system the kernel has not registered: no partitions in sysfs): this "
        f"tool only writes to blank drives; wipe the signatures (wipefs -a {dev}) if the data "
        "on the drive is really meant for destruction"
    ]


def absolute_refusals(state: BlockDeviceState) -> list[str]:
    """The refusals of ``state`` that no option or action of the user overrides: the device
    holds a system filesystem, or it is a host-managed zoned device (NVMe ZNS, SMR), which
    takes writes only sequentially at each zone's write pointer -- the catalog's random and
    overwriting workloads would fail with I/O errors (fio's ``zonemode=zbd`` is not used here).
    A host-aware zoned device accepts random writes and is not refused."""
    dev = state.device
    reasons: list[str] = []
    if state.is_system_disk:
        reasons.append(
            f"{dev} holds the root filesystem (/) or another system filesystem "
            "(/boot, /usr, /var), directly or through a partition, LVM/md/dm or loop stack: "
            "writes are never allowed, whatever the options"
        )
    if state.host_managed:
        reasons.append(
            f"{dev} is a host-managed zoned device (/sys/block/{state.name}/queue/zoned is "
            "host-managed: NVMe ZNS or SMR): it takes writes only sequentially at each zone's "
            "write pointer, which these workloads do not do (fio zonemode=zbd is not supported "
            "by pytest-ssdqual): writes are never allowed; reads run on the drive as found"
        )
    return reasons


def confirmation_reasons(
    dev: str,
    serial: str,
    confirmed: Collection[str],
    *,
    hint: str = "the drive's serial, not its path: /dev/sdX names move between boots",
) -> list[str]:
    serial = (serial or "").strip()
    given = [c.strip() for c in confirmed if c and c.strip()]
    if re.fullmatch(r"/dev/loop\d+", dev):
        return _loop_confirmation(dev, serial, given)
    if not serial:
        return [
            f"{dev} reports no serial number, so it cannot be confirmed for destruction "
            "(--confirm-destroy takes the serial): check smartctl -i / nvme id-ctrl, or test a "
            "drive that reports one"
        ]
    if not given:
        return [
            f"{dev} (serial {serial}) is not confirmed for destruction: add "
            f"--confirm-destroy={serial} ({hint})"
        ]
    if serial.casefold() not in {c.casefold() for c in given}:
        paths = [c for c in given if c.startswith("/dev/")]
        also = (f"; {', '.join(paths)} is a device path, not a serial: a /dev name moves "
                f"between boots, the serial does not (--confirm-destroy={serial})"
                if paths else "")
        return [
            f"--confirm-destroy values {', '.join(given)} do not match this drive's serial "
            f"{serial} ({dev}): check which drive is which (lsblk -d -o NAME,MODEL,SERIAL)"
            + also
        ]
    return []


def _loop_confirmation(dev: str, backing: str, given: list[str]) -> list[str]:
    """``confirmation_reasons`` for a loop device, whose serial is the absolute path of its
    backing file (``losetup -l``): loop numbers are handed out again after a detach, so the
    device path is no confirmation, and ``lsblk`` shows no serial for it."""
    where = "(losetup -l lists each loop device with its backing file)"
    if not backing:
        return [f"{dev} names no backing file, so it cannot be confirmed for destruction: "
                f"attach the image again (losetup -d {dev}; losetup -f --show IMAGE) {where}"]
    if backing.casefold() in {c.casefold() for c in given}:
        return []
    give = (f"a loop device is confirmed by the absolute path of its backing file, not by its "
            f"/dev name (loop numbers are reused): --confirm-destroy={backing} {where}")
    if not given:
        return [f"{dev} (loop device over {backing}) is not confirmed for destruction: {give}"]
    return [f"--confirm-destroy values {', '.join(given)} do not confirm {dev}, the loop device "
            f"over {backing}: {give}"]


def busy_reason(path: str) -> str | None:
    """A refusal when the kernel will not let us open ``path`` exclusively (EBUSY), else None.

    Opening a block device with ``O_EXCL`` (read-only here) fails while it is mounted, used as
    swap or claimed by a dm/md/bcache stack, including in other mount namespaces (containers),
    which ``/proc/self/mountinfo`` does not show.
    """
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISBLK(st.st_mode):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.EBUSY:
            return (
                f"{path} is busy: the kernel refuses to open it exclusively (EBUSY), so it is "
                "mounted, used as swap or claimed by another program, possibly in another mount "
                f"namespace or container: find the user (lsblk {path}; fuser -vm {path}) and "
                "release it first"
            )
        raise DeviceError(f"cannot open {path} to check it: {exc.strerror}") from exc
    os.close(fd)
    return None



def loops_backed_by(path: str, sysfs: Path) -> list[str]:
    """``/dev/loopN`` of every loop device whose backing file is ``path`` (same file: same
    ``st_dev``/``st_ino``, else the same real path), from ``/sys/block/loop*/loop/backing_file``.
    """
    try:
        st = os.stat(path)
        key: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except OSError:
        key = None
    real = os.path.realpath(path)
    found: list[str] = []
    try:
        names = sorted(n for n in os.listdir(sysfs / "block") if n.startswith("loop"))
    except OSError:
        return found
    for name in names:
        try:
            backing = (sysfs / "block" / name / "loop" / "backing_file").read_text().strip()
        except OSError:
            continue
        if not backing:
            continue
        same = backing == real or backing == path
        if not same and key is not None:
            try:
                bst = os.stat(backing)
                same = (bst.st_dev, bst.st_ino) == key
            except OSError:
                pass
        if same:
            found.append(f"/dev/{name}")
    return found

