"""Between two write checks of one block device: did anything change that the full check would
see? If not, the full check's findings stand and its costly parts are not repeated.

The full check before a write (``DriveTarget.refresh``) indexes every block device in sysfs,
reads the mounts and swaps, and runs ``wipefs --no-act`` on the device (a fork and exec of a
tool that reads the device's first and last sectors): 8 ms on this project's development host,
before every fio run that writes. A methodology test runs 15 to 31 fio runs of a second each in
the ``smoke`` profile. :class:`ChangeWatch` keeps the full check's result and a cheap
:class:`DeviceStamp` of everything it depends on, read in well under a millisecond:

* the device node's ``st_rdev`` (a ``/dev/disk/by-id`` link moved to another disk), and the
  disk's ``diskseq`` (Linux >= 5.15: a new number for every medium attached, a loop device
  attached again included);
* the names in ``/sys/block/<disk>`` (a partition the kernel registers is a sub-folder there),
  its ``holders/`` and ``slaves/`` and each partition's ``holders/`` (LVM, md, dm), ``ro`` and,
  for a loop device, ``loop/backing_file``;
* ``/proc/self/mountinfo`` and ``/proc/swaps``, byte for byte;
* the disk's write and discard counters (``/sys/block/<disk>/stat`` fields 5, 7, 12 and 14:
  write I/Os, sectors written, discard I/Os, sectors discarded) and its writes in flight
  (``inflight``). After each of this session's own fio runs they become the new reference
  only when what moved since the last reference is, to the byte, what fio reported writing
  and trimming (:meth:`ChangeWatch.settle`): a write by anything else -- before, during or
  after the run: a partition table written without a rescan, a file system made and not
  mounted -- makes the next check a full one.

The full check runs again when any of those differs, at the first write check of every test
(:meth:`ChangeWatch.new_test`), after a fio run that did not end cleanly or whose bytes are not
the counters' (no ``settle``; so after every job with a ``ramp_time``, whose ramp I/O fio does
not count), and when the last full check is older than :data:`MAX_AGE_S` (so runs of minutes,
the ``quick`` and ``full`` profiles, are checked in full before every write as before). The
busy check (an exclusive open, ``safety.busy_reason``) is not cached: it runs before every
write.

What a full check sees of another program's write is what it leaves behind: a mount, swap,
partition, holder, or a signature ``wipefs`` finds (a partition table, a file system). A write
that leaves none (data over the middle of the drive) is seen by no check; the counters only
make sure that any write not fio's is followed by a full check before the next write.

The identity check between runs (:func:`identify_between_runs`) is skipped only for a fixed,
non-USB disk still showing the medium identified last (:meth:`ChangeWatch.medium`).

Sources: Linux ``Documentation/ABI/stable/sysfs-block`` (``diskseq``, ``stat``, ``inflight``,
``holders``, ``slaves``, ``ro``), ``Documentation/block/stat.rst`` (the ``stat`` fields), proc(5)
(``mountinfo``, ``swaps``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.drive.blockdev import BlockDeviceState
from pytest_ssdqual.drive.signatures import SignatureProbe, probe_signatures

__all__ = ["MAX_AGE_S", "ChangeWatch", "DeviceStamp", "identify_between_runs", "read_stamp",
           "write_counters"]

#: Seconds a full check's findings are reused at most (between runs of one test).
MAX_AGE_S = 30.0

#: ``/sys/block/<disk>/stat`` fields (0-based) that only writes and discards move:
#: write I/Os, sectors written, discard I/Os, sectors discarded (``Documentation/block/stat.rst``).
_WRITE_FIELDS = (4, 6, 11, 13)


@dataclass(frozen=True)
class DeviceStamp:
    """What the kernel shows of one whole disk at one moment, cheaply (module docstring).

    Attributes:
        layout: device number, ``diskseq``, the disk's sysfs entries, holders, slaves, ``ro``,
            backing file, mount table and swaps: what the full check reads, as found.
        writes: :func:`write_counters` at the same moment.
    """

    layout: tuple[object, ...]
    writes: tuple[int, ...] | None


def write_counters(sysfs_disk: Path) -> tuple[int, ...] | None:
    """Write I/Os, sectors written (512 bytes each), discard I/Os and sectors discarded of the
    disk at ``sysfs_disk`` (``/sys/block/sdb``), plus its writes in flight; None when ``stat``
    cannot be read (then nothing is reused: every check is a full one).

    Fields missing on an old kernel (discards before Linux 4.18) are left out."""
    try:
        fields = (sysfs_disk / "stat").read_text().split()
    except OSError:
        return None
    counts = [int(fields[i]) for i in _WRITE_FIELDS if i < len(fields) and fields[i].isdigit()]
    try:
        inflight = (sysfs_disk / "inflight").read_text().split()
        counts.append(int(inflight[1]))
    except (OSError, IndexError, ValueError):
        pass
    return tuple(counts) if counts else None


def _sectors(counts: tuple[int, ...]) -> int:
    """Sectors written plus discarded in :func:`write_counters`' tuple (discards only when
    the kernel has them: 4 or more entries)."""
    return counts[1] + (counts[3] if len(counts) >= 4 else 0)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(errors="surrogateescape")
    except OSError:
        return None


def _names(path: Path) -> tuple[str, ...]:
    try:
        return tuple(sorted(os.listdir(path)))
    except OSError:
        return ()


def read_stamp(path: str, name: str, *, sysfs: Path, mountinfo: Path,
               swaps: Path) -> DeviceStamp:
    """The :class:`DeviceStamp` of disk ``name`` (kernel name) opened as ``path``, from
    ``sysfs``, ``mountinfo`` and ``swaps`` (injectable, as ``blockdev.inspect_block_device``'s).
    Never raises: what cannot be read is stamped as missing, which differs from what was read."""
    disk = Path(sysfs) / "block" / name
    try:
        rdev: int | None = os.stat(path).st_rdev
    except OSError:
        rdev = None
    entries = _names(disk)
    # the kernel names a partition after its disk (sdb1, nvme0n1p1): only those are looked in
    partitions = tuple(_names(disk / e / "holders") for e in entries
                       if e.startswith(name) and (disk / e / "partition").exists())
    layout = (rdev, _text(disk / "diskseq"), entries, _names(disk / "holders"),
              _names(disk / "slaves"), partitions, _text(disk / "ro"),
              _text(disk / "loop" / "backing_file"), _text(Path(mountinfo)), _text(Path(swaps)))
    return DeviceStamp(layout, write_counters(disk))


class ChangeWatch:
    """The last full write check of one block device and whether it still holds.

    Args:
        path: the device node (``--drive``). name: its kernel name (``sdb``).
        sysfs, mountinfo, swaps: where to read (as ``DriveTarget.open``'s).
        transport: the identity's (``DriveIdentity.transport``): a ``'USB'`` drive is
            identified again before every run (:meth:`medium`).
        max_age_s: a full check older than this is not reused.
        clock: seconds, monotonic (tests pass their own).
        prober: ``device -> SignatureProbe | None``; ``signatures.probe_signatures`` by default.
    """

    def __init__(self, path: str, name: str, *, sysfs: Path, mountinfo: Path, swaps: Path,
                 max_age_s: float = MAX_AGE_S, clock: Callable[[], float] = time.monotonic,
                 prober: Callable[[str], SignatureProbe | None] = probe_signatures,
                 transport: str = "") -> None:
        self._read = lambda: read_stamp(path, name, sysfs=sysfs, mountinfo=mountinfo,
                                        swaps=swaps)
        self._disk = Path(sysfs) / "block" / name
        self._path = path
        self._transport = transport
        self._identified: tuple[tuple[object, ...], float] | None = None
        self._max_age_s = max_age_s
        self._clock = clock
        self._prober = prober
        self._stamp: DeviceStamp | None = None
        self._state: BlockDeviceState | None = None
        self._probe: tuple[str, SignatureProbe | None] | None = None
        self._at = 0.0
        self._reusing = False
        self.full_checks = 0  #: full checks made (for tests and benchmarks)

    def state(self, inspect: Callable[[], BlockDeviceState]) -> BlockDeviceState:
        """The device's state: the last full check's when nothing changed since (same test,
        younger than ``max_age_s``, an equal stamp), else ``inspect()`` -- the stamp is read
        first, so a change while it runs shows at the next check.

        Raises:
            whatever ``inspect`` raises (``DeviceError``: the device is gone).
        """
        stamp = self._read()
        if (self._state is not None and stamp == self._stamp and stamp.writes is not None
                and self._clock() - self._at <= self._max_age_s):
            self._reusing = True
            return self._state
        self._reusing = False
        self._stamp, self._state, self._probe = stamp, None, None
        self._at = self._clock()
        state = inspect()
        self._state = state
        self.full_checks += 1
        return state

    def probe(self, device: str) -> SignatureProbe | None:
        """``device``'s signatures (``signatures.probe_signatures``): the full check's probe
        while :meth:`state` reuses that check, else a new probe."""
        if self._reusing and self._probe is not None and self._probe[0] == device:
            return self._probe[1]
        found = self._prober(device)
        self._probe = (device, found)
        return found

    def settle(self, own_bytes: int | None) -> bool:
        """After one of this session's fio runs on the device ended (its I/O complete): when
        the disk's sectors written plus discarded since the stamp's counters, times 512, are
        exactly ``own_bytes`` -- what the run reported writing and trimming (fio JSON
        ``write`` and ``trim`` ``io_bytes``: ``fio.written.device_bytes``) -- take the write
        counters as they are now, so that only other writers move them before the next check
        (only the counters: the rest of the stamp stays the full check's). Otherwise drop the
        stamp: the next write check is a full one. That is so for a write by another program
        since the stamp (before, during or after the run), for ``own_bytes`` None (fio's
        output unreadable), and for a job with ``ramp_time`` (fio counts no ramp I/O).

        No tolerance: on a raw block device with direct I/O the kernel adds no writes of its
        own, and fio 3.33's ``io_bytes`` equalled the ``stat`` sectors x 512 to the byte (a
        loop device: 128 KiB writes at QD32 on io_uring, time based; 64 KiB trims); a
        mismatch costs one full check (8 ms), a tolerance would hide a partition table.

        Returns:
            True when the counters were taken.
        """
        if self._stamp is None:
            return False
        now = write_counters(self._disk)
        if own_bytes is None or now is None or self.moved_bytes(now) != own_bytes:
            self._stamp = None
            return False
        self._stamp = DeviceStamp(self._stamp.layout, now)
        return True

    def moved_bytes(self, now: tuple[int, ...] | None = None) -> int | None:
        """Bytes written plus discarded on the disk since the stamp's counters (``stat``
        sectors x 512), from ``now`` (:func:`write_counters`; read when not given); None
        without a stamp or when the counters cannot be read."""
        now = write_counters(self._disk) if now is None else now
        before = self._stamp.writes if self._stamp is not None else None
        if now is None or before is None or len(now) != len(before):
            return None
        return (_sectors(now) - _sectors(before)) * 512

    def new_test(self) -> None:
        """A new test begins: its first write check and identity check are full ones."""
        self._state = None
        self._probe = None
        self._reusing = False
        self._identified = None

    def medium(self) -> tuple[object, ...] | None:
        """What names the drive behind the device node, read now: the node's ``st_rdev``, the
        disk's ``diskseq`` (a new number for every medium the kernel attaches), ``size`` (512-byte
        sectors), where its ``device`` link leads (the SCSI device or NVMe controller in sysfs)
        and the drive's own names there: ``device/wwid``, ``wwid`` (an NVMe namespace's) and
        ``device/vpd_pg80`` (the SCSI unit serial page, as the kernel read it), each None when
        absent or unreadable.

        None -- the drive is identified again before every run -- when ``diskseq`` or the node
        cannot be read (no ``diskseq`` before Linux 5.15), or the kernel can keep the disk while
        the drive in it changes: the identity's transport is USB (a USB-SATA bridge is the disk;
        a drive swapped in its dock need not give a new ``diskseq``) or ``removable`` is not
        ``0`` (a slot of removable media: sysfs ``removable``, unreadable counts as not 0)."""
        removable = _text(self._disk / "removable")
        if self._transport == "USB" or removable is None or removable.strip() != "0":
            return None
        try:
            rdev = os.stat(self._path).st_rdev
        except OSError:
            return None
        seq = _text(self._disk / "diskseq")
        if not seq or not seq.strip():
            return None
        try:
            device: str | None = os.path.realpath(self._disk / "device", strict=True)
        except OSError:
            device = None
        try:
            serial_page: bytes | None = (self._disk / "device" / "vpd_pg80").read_bytes()
        except OSError:
            serial_page = None
        return (rdev, seq.strip(), _text(self._disk / "size"), device,
                _text(self._disk / "device" / "wwid"), _text(self._disk / "wwid"), serial_page)

    def same_medium(self, medium: tuple[object, ...] | None) -> bool:
        """True when ``medium`` (:meth:`medium`, read now) is the one of this test's last
        :meth:`identified`, at most ``max_age_s`` ago: the drive need not be identified again
        (its serial cannot have changed)."""
        return (medium is not None and self._identified is not None
                and self._identified[0] == medium
                and self._clock() - self._identified[1] <= self._max_age_s)

    def identified(self, medium: tuple[object, ...] | None) -> None:
        """The drive was identified and found the same; ``medium`` was read just before."""
        self._identified = (medium, self._clock()) if medium is not None else None


def identify_between_runs(watch: ChangeWatch | None, recheck: Callable[[], None]) -> None:
    """Before a fio run: ``recheck()`` (``DriveTarget.recheck_identity``: identify the drive
    again, refuse for good if its serial changed), skipped while the device node still names
    the medium identified last in this test, at most ``max_age_s`` ago
    (:meth:`ChangeWatch.same_medium`: device number, ``diskseq``, size, the sysfs device and
    the drive's wwid and serial page there, read before the identity) -- never for a USB
    drive or a removable disk (:meth:`ChangeWatch.medium`). A real drive's identity is a
    smartctl or nvme-cli call -- 55 ms on this project's virtio disk.

    Raises:
        whatever ``recheck`` raises (``DeviceError``: the drive is gone or another one).
    """
    medium = watch.medium() if watch is not None else None
    if watch is not None and watch.same_medium(medium):
        return
    recheck()
    if watch is not None:
        watch.identified(medium)
