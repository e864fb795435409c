"""The drive under test for one session: open it, identify it, decide whether writes are allowed.

:class:`DriveTarget` is safety's enforcer (docs/safety.md): it applies
:mod:`~pytest_ssdqual.drive.safety`'s rules at open and re-reads the kernel's view before every
write check, so a drive mounted in the middle of a session is refused from then on; a drive
whose serial changes, or a file target swapped for another file or a symlink, is refused for
good. A file target (``file:PATH``) the plugin creates is written without confirmation (it is
sized and removed by the plugin, :mod:`~pytest_ssdqual.drive.file_target`); an *existing* file
must be confirmed by its absolute path (``--confirm-destroy=/abs/path.img``), and a loop
device's backing file is never written. An emulated drive (``emu:``) is not opened here: the
``emulate`` package builds it on top of this class. The ``--drive`` grammar is
:mod:`~pytest_ssdqual.drive.spec`; the lock is :mod:`~pytest_ssdqual.drive.lock`.

Sources: Linux ``Documentation/ABI/stable/sysfs-block`` (``dev``, ``size``), lstat(2).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.drive.ata_security import AtaSecurity, refuse_if_locked
from pytest_ssdqual.drive.blockdev import BlockDeviceState, disk_size_bytes, inspect_block_device
from pytest_ssdqual.drive.change_watch import ChangeWatch
from pytest_ssdqual.drive.device_types import smartctl_keywords
from pytest_ssdqual.drive.file_target import (
    ensure_file,
    file_problem,
    file_refusals,
    identify_file,
    remove_file,
)
from pytest_ssdqual.drive.safety import (
    absolute_refusals,
    busy_reason,
    signature_reasons,
    write_refusal_reasons,
)
from pytest_ssdqual.drive.signatures import probe_signatures
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.errors import ConfigError, DeviceError, SafetyRefusal

if TYPE_CHECKING:
    from pytest_ssdqual.drive.device_types import DeviceTypes
    from pytest_ssdqual.drive.identity import DriveIdentity
    from pytest_ssdqual.drive.inventory import Entry
    from pytest_ssdqual.fio.client import FioServer

__all__ = ["DriveTarget", "IdentityFn", "identity_kind"]

#: ``identity_fn(path, kind=..., sysfs=...) -> DriveIdentity``; defaults to ``identity.identify``.
IdentityFn = Callable[..., "DriveIdentity"]

def _default_identity_fn(path: str, *, kind: str, sysfs: Path = Path("/sys"),
                         **smartctl: str) -> DriveIdentity:
    from pytest_ssdqual.drive.identity import (
        identify,  # lazy: identity may shell out to smartctl / nvme
    )

    return identify(path, kind=kind, sysfs=sysfs, **smartctl)  # type: ignore[arg-type]


def identity_kind(name: str) -> str:
    """The identity kind of a block device by its kernel name (``loop0``: ``loop``, ``zram0``:
    ``zram``, anything else: ``block``), as ``identity.identify`` takes it."""
    if name.startswith("loop"):
        return "loop"
    if name.startswith("zram"):
        return "zram"
    return "block"


def _serial_of(identity: Any) -> str:
    return str(getattr(identity, "serial", "") or "").strip()


class DriveTarget:
    """A drive under test for one session: spec, identity, write permission and cleanup.

    Build it with :meth:`open`. Attributes:

    * ``spec``: the parsed :class:`DriveSpec`.
    * ``identity``: the ``DriveIdentity`` read at open (model, serial, firmware, ...).
    * ``fio_filename``: what fio gets as ``filename=`` -- the device node with symlinks
      resolved (``/dev/disk/by-id/x`` -> ``/dev/sdb``) or the file's absolute path. Not
      escaped: a job writer must escape ``:`` as ``\\:`` (fio's file separator).
    * ``size_bytes``: the device size (sysfs ``size`` * 512) or the file size, in bytes.
    * ``write_refusals``: full-sentence reasons writes are refused; empty = allowed.
    * ``created_file``: True when :meth:`open` created the file (then :meth:`cleanup`
      removes it).
    * ``state``: the last :class:`BlockDeviceState` read (None for a file target).
    * ``cgroup``: a cgroup-v1 blkio folder every fio on this drive runs in (an emulated
      drive's throttle), or None.
    """

    cgroup: Path | None = None
    #: A block device's last full write check and its change detector (``change_watch``).
    watch: ChangeWatch | None = None
    fio_server: FioServer | None = None  #: a remote drive's ``fio --server`` (``remote_target``)
    #: Inventory entries the target brings (an emulated drive's model: controller, NAND).
    assignment_entries: tuple[Entry, ...] = ()
    #: Extra ``(key, text)`` facts for reports (an emulated drive's model, caps, image).
    report_facts: tuple[tuple[str, str], ...] = ()

    def before_fio(self, job_text: str) -> str:
        """Called with every fio job's text just before fio starts on this drive; returns the
        text fio runs. A no-op here (a real drive sees QD and pattern in its command stream);
        ``EmulatedTarget`` tells its controller the job's shape (the job-shape channel).

        Raises:
            DeviceError: (emulated drive) the controller did not acknowledge the shape.
        """
        return job_text

    def __init__(
        self,
        *,
        spec: DriveSpec,
        identity: DriveIdentity,
        fio_filename: str,
        size_bytes: int,
        write_refusals: tuple[str, ...],
        created_file: bool,
        name: str,
        state: BlockDeviceState | None,
        confirmed_serials: Collection[str],
        identity_fn: IdentityFn,
        sysfs: Path,
        mountinfo: Path,
        swaps: Path,
        root_dev: tuple[int, int] | None,
    ) -> None:
        self.spec = spec
        self.identity = identity
        self.fio_filename = fio_filename
        self.size_bytes = size_bytes
        self.write_refusals = write_refusals
        self.created_file = created_file
        self.state = state
        self._name = name
        self._confirmed = tuple(confirmed_serials)
        self._identity_fn = identity_fn
        self._sysfs = sysfs
        self._mountinfo = mountinfo
        self._swaps = swaps
        self._root_dev = root_dev
        self._sticky: tuple[str, ...] = ()  # refusals that never clear (identity changed)
        self._cleaned = False
        self._file_id: tuple[int, int] | None = None  # (st_dev, st_ino) of a file target

    @classmethod
    def open(
        cls,
        spec: DriveSpec,
        *,
        confirmed_serials: Collection[str],
        file_size_bytes: int,
        identity_fn: IdentityFn | None = None,
        sysfs: Path = Path("/sys"),
        mountinfo: Path = Path("/proc/self/mountinfo"),
        swaps: Path = Path("/proc/swaps"),
        root_dev: tuple[int, int] | None = None,
        ata_security_fn: Callable[[str], AtaSecurity | None] | None = None,
        smartctl_types: DeviceTypes | None = None,
    ) -> DriveTarget:
        """Open the drive ``spec`` names: inspect it, identify it, decide on writes.

        Block device: :func:`inspect_block_device`, identity (kind ``loop`` for ``loop*``,
        ``zram`` for ``zram*``, else ``block``), :func:`write_refusal_reasons`, plus a refusal
        when the kernel reports it busy to an exclusive read-only open, and one when the media
        holds a partition table or file-system signature sysfs does not show, or cannot be
        checked for one (:func:`signature_reasons`; rechecked before every write). Nothing is
        written.

        File: created when missing (``O_EXCL``) and sized to ``file_size_bytes`` with
        ``posix_fallocate`` (``ftruncate`` where the file system cannot allocate); an existing
        file keeps its size. A symlink is refused (``lstat``; ``O_NOFOLLOW``). Identity kind
        ``file``. Refused: an existing file the plugin did not create until it is confirmed by
        its absolute path (``--confirm-destroy=/abs/x.img``, the identity's serial), and -- with
        no override -- a file that is a loop device's backing file.

        Emulated (``emu``): not here -- ``emulate.target.open_emulated_target`` builds it
        (image, loop device, blkio cgroup, controller) as a subclass of this one.

        Args:
            spec: from :func:`~pytest_ssdqual.drive.spec.parse_drive_option`.
            confirmed_serials: the ``--confirm-destroy`` values.
            file_size_bytes: size of a new file target, in bytes (> 0; checked only when the
                file is created, so 0 opens an existing file, e.g. for ``ssdqual identify``).
            identity_fn: ``(path, *, kind, sysfs) -> DriveIdentity``; default
                ``identity.identify``.
            sysfs, mountinfo, swaps, root_dev: see :func:`inspect_block_device`.
            ata_security_fn: reads a SATA/USB drive's ATA security (``ata_security.
                refuse_if_locked``'s ``read``); default ``read_ata_security``.
            smartctl_types: smartctl ``-d`` types (``device_types.DeviceTypes``): a block
                device is identified with the option's type for it, else -- identified again
                -- with its inventory entry's (``smartctl_device_type``), if any.

        Raises:
            ConfigError: a partition, a file target that is a symlink or no longer a
                regular file, or an ``emu`` spec.
            DeviceError: the device is gone or unreadable, the file cannot be created or
                sized (e.g. no space), or identification fails; a SATA/USB drive that ATA
                security has locked (every read and write would fail), before any I/O.
        """
        fn = identity_fn if identity_fn is not None else _default_identity_fn
        common: dict[str, Any] = {
            "spec": spec,
            "confirmed_serials": confirmed_serials,
            "identity_fn": fn,
            "sysfs": Path(sysfs),
            "mountinfo": Path(mountinfo),
            "swaps": Path(swaps),
            "root_dev": root_dev,
        }
        if spec.kind == "block":
            state = inspect_block_device(
                spec.path, sysfs=sysfs, mountinfo=mountinfo, swaps=swaps, root_dev=root_dev
            )
            kind = identity_kind(state.name)
            identity = (fn(spec.path, kind=kind, sysfs=sysfs) if smartctl_types is None
                        else smartctl_types.identify(fn, spec, kind=kind, sysfs=sysfs))
            refuse_if_locked(spec.path, identity.transport,
                             getattr(identity, "smartctl_device_type", ""), ata_security_fn)
            target = cls(
                identity=identity,
                fio_filename=os.path.realpath(spec.path),
                size_bytes=disk_size_bytes(state.name, sysfs=sysfs),
                write_refusals=(),
                created_file=False,
                name=state.name,
                state=state,
                **common,
            )
            target.watch = ChangeWatch(spec.path, state.name, sysfs=Path(sysfs),
                                       mountinfo=Path(mountinfo), swaps=Path(swaps),
                                       transport=identity.transport)
            target.write_refusals = target._block_refusals(state)
            return target
        if spec.kind == "file":
            created, file_id = ensure_file(spec.path, file_size_bytes)
            try:
                identity, size = identify_file(fn, spec.path, sysfs, created=created)
                target = cls(
                    identity=identity,
                    fio_filename=spec.path,
                    size_bytes=size,
                    write_refusals=(),
                    created_file=created,
                    name="file-" + os.path.basename(spec.path),
                    state=None,
                    **common,
                )
                target._file_id = file_id
                target.write_refusals = target._file_refusals()
            except BaseException:
                if created:
                    remove_file(spec.path)
                raise
            return target
        if spec.kind == "emu":
            raise ConfigError(
                f"{spec.raw}: an emulated drive is built by "
                "pytest_ssdqual.emulate.target.open_emulated_target, not DriveTarget.open",
                key="--drive",
            )
        raise ConfigError(f"unknown drive kind {spec.kind!r}", key="--drive")

    @property
    def id(self) -> str:
        """Stable short id for xdist groups, locks and logs: ``sdb``, ``loop3``, ``file-x.img``."""
        return self._name

    @property
    def lock_key(self) -> str:
        """Key for :class:`DriveLock`: the kernel name of a block device (``sdb``; every path to
        the same disk gives the same key), or for a file ``file-<name>-<8 hex digits of the
        SHA-256 of its real path>``, so that two scratch files with the same name in different
        folders do not lock each other out."""
        if self.spec.kind != "file":
            return self._name
        digest = hashlib.sha256(os.path.realpath(self.spec.path).encode()).hexdigest()[:8]
        return f"{self._name}-{digest}"

    @property
    def device(self) -> str:
        """What to call the drive in messages: ``/dev/sdb`` or the file path."""
        return self.spec.path

    @property
    def write_allowed(self) -> bool:
        """True when no refusal was recorded at the last check."""
        return not self.write_refusals

    def _block_refusals(self, state: BlockDeviceState) -> tuple[str, ...]:
        reasons = write_refusal_reasons(
            state, serial=_serial_of(self.identity), confirmed_serials=self._confirmed
        )
        # EBUSY with nothing visible here to explain it: mounted or claimed elsewhere. Not for
        # a refusal that stands alone (system disk, host-managed zoned).
        if not (state.mounts or state.holders or absolute_refusals(state)):
            busy = busy_reason(self.fio_filename)
            if busy:
                reasons.append(busy)
            # sysfs looks blank: so must the media (a table written without a rescan, an
            # unmounted file system): read the device's own signatures (wipefs / blkid)
            if not state.partitions:
                probe = (self.watch.probe if self.watch else probe_signatures)(self.fio_filename)
                reasons.extend(signature_reasons(state.device, probe))
        return tuple(dict.fromkeys([*self._sticky, *reasons]))

    def refresh(self) -> tuple[str, ...]:
        """Re-read the kernel's view of a block device and recompute ``write_refusals``.

        Does not re-identify (see :meth:`recheck_identity`). A file target re-checks its
        confirmation and whether it became a loop device's backing file. Between the runs of
        one test a block device's sysfs view, mounts and ``wipefs`` probe are those of the
        test's first check unless the kernel shows a change (``change_watch.ChangeWatch``:
        layout, mount table, writes since this session's last fio run); the exclusive-open
        busy check runs every time.

        Raises:
            DeviceError: the device is gone or its sysfs entry cannot be read.
        """
        if self.spec.kind == "file":
            self.write_refusals = self._file_refusals()
            return self.write_refusals
        if self.spec.kind != "block":
            self.write_refusals = self._sticky
            return self.write_refusals
        def inspect() -> BlockDeviceState:
            return inspect_block_device(self.spec.path, sysfs=self._sysfs,
                                        mountinfo=self._mountinfo, swaps=self._swaps,
                                        root_dev=self._root_dev)

        state = self.watch.state(inspect) if self.watch is not None else inspect()
        if state.name != self._name:
            self._refuse(
                f"{self.spec.path} is now {state.name}, was {self._name} at start: the device "
                "was replaced; refusing to continue"
            )
        self.state = state
        self.write_refusals = self._block_refusals(state)
        return self.write_refusals

    def assert_write_allowed(self) -> None:
        """Raise unless writing is allowed now. Re-reads the block device's state first.

        Raises:
            SafetyRefusal: with every reason (``drive`` is the path).
            DeviceError: the device is gone.
        """
        self.refresh()
        if self.write_refusals:
            raise SafetyRefusal(self.device, list(self.write_refusals))

    def _file_refusals(self) -> tuple[str, ...]:
        reasons = file_refusals(self.spec.path, self._sysfs, created=self.created_file,
                                serial=_serial_of(self.identity), confirmed=self._confirmed)
        return tuple(dict.fromkeys([*self._sticky, *reasons]))

    def _recheck_file(self) -> None:
        """Refuse for good when the file target's path no longer names the regular file opened
        at start (replaced, or swapped for a symlink)."""
        path = self.spec.path
        problem = file_problem(path, self._file_id)
        if problem is None:
            return
        message = f"{path} {problem} since it was opened: refusing to continue"
        self._refuse(message)
        raise DeviceError(message)

    def recheck_identity(self) -> None:
        """Identify the drive again and refuse all further writes if its serial changed; for a
        file target, first check that the path is still the same regular file (not a symlink,
        same ``st_dev``/``st_ino`` as at open).

        Raises:
            DeviceError: identification fails, or the serial differs from the one at open
                (``"/dev/sdb now has serial B, was A at start: refusing to continue"``), or a
                file target was replaced.
        """
        if self.spec.kind == "file":
            self._recheck_file()
        kind = "file" if self.spec.kind == "file" else identity_kind(self._name)
        try:
            identity = self._identity_fn(
                self.spec.path, kind=kind, sysfs=self._sysfs,
                **smartctl_keywords(getattr(self.identity, "smartctl_device_type", "")))
        except Exception as exc:
            self._refuse(f"{self.device} could not be identified again ({exc}): refusing writes")
            raise
        before, after = _serial_of(self.identity), _serial_of(identity)
        if after != before:
            message = (
                f"{self.device} now has serial {after or '(none)'}, was {before or '(none)'} "
                "at start: refusing to continue"
            )
            self._refuse(message)
            raise DeviceError(message)

    def _refuse(self, reason: str) -> None:
        self._sticky = tuple(dict.fromkeys([*self._sticky, reason]))
        self.write_refusals = tuple(dict.fromkeys([*self._sticky, *self.write_refusals]))

    def cleanup(self) -> None:
        """Remove the file target if :meth:`open` created it. Idempotent; never touches a
        block device or a file that existed before."""
        if self._cleaned:
            return
        self._cleaned = True
        if self.spec.kind == "file" and self.created_file:
            remove_file(self.spec.path)

    def __repr__(self) -> str:
        allowed = "writes allowed" if self.write_allowed else "writes refused"
        return f"<DriveTarget {self.id} {self.spec.path} {allowed}>"
