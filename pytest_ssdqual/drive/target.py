"""The drive under test: parse ``--drive``, identify it, decide whether writes are allowed, lock it.

Safety is this module's first job (DESIGN.md, "Safety rules"). A block device may be written only
when it is not the system disk, not a host-managed zoned device, not mounted or used as swap,
has no partitions and no holders (LVM, md, dm), is writable, and the user confirmed it by
*serial* with ``--confirm-destroy``.
:func:`write_refusal_reasons` lists every reason that fails, each a full sentence saying how to
proceed; :class:`DriveTarget` re-reads the kernel's view before every write check, so a drive
mounted in the middle of a session is refused from then on. A file target (``file:PATH``) the
plugin creates is written without confirmation (it is sized and removed by the plugin); an
*existing* file must be confirmed by its absolute path (``--confirm-destroy=/abs/path.img``),
a loop device's backing file is never written, and a symlink is never followed.
:class:`DriveLock` keeps a second pytest process off a drive that one is already using.

Sources: Linux ``Documentation/ABI/stable/sysfs-block`` (``dev``, ``size``, ``ro``, ``holders``,
``slaves``, ``partition``), proc(5) (``/proc/self/mountinfo``, ``/proc/swaps``), open(2)
(``O_EXCL`` on a block device fails with ``EBUSY`` while the kernel holds it: mounted, swap, or
claimed by dm/md, in any mount namespace), flock(2).
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_ssdqual.drive.blockdev import (
    SWAP,
    BlockDeviceState,
    SysfsIndex,
    disk_size_bytes,
    inspect_block_device,
    partition_error,
)
from pytest_ssdqual.errors import ConfigError, DeviceError, SafetyRefusal

if TYPE_CHECKING:
    from pytest_ssdqual.drive.identity import DriveIdentity
    from pytest_ssdqual.drive.inventory import Entry

__all__ = [
    "BlockDeviceState",
    "DriveLock",
    "DriveSpec",
    "DriveTarget",
    "inspect_block_device",
    "parse_drive_option",
    "write_refusal_reasons",
]

#: ``--drive`` prefixes that are planned but not implemented yet (DESIGN.md, ``--drive`` kinds).
RESERVED_SCHEMES: tuple[str, ...] = ("fio",)

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")

#: ``identity_fn(path, kind=..., sysfs=...) -> DriveIdentity``; defaults to ``identity.identify``.
IdentityFn = Callable[..., "DriveIdentity"]


@dataclass(frozen=True)
class DriveSpec:
    """A parsed ``--drive`` value, before any device is opened.

    Attributes:
        raw: the value as given: ``/dev/sdb``, ``file:/tmp/x.img``, ``/tmp/x.img``.
        kind: ``"block"``, ``"file"`` or ``"emu"`` (an emulated drive: ``path`` is the model
            name or file as written, the model file's absolute path once
            ``emulator.resolve_spec`` found it; ``raw`` keeps the ``@SPEED``).
        path: absolute path (a relative one is taken from ``cwd``); symlinks are kept, so a
            ``/dev/disk/by-id/...`` name shows as given.
    """

    raw: str
    kind: str
    path: str


def _bad(message: str, fix: str | None = None) -> ConfigError:
    return ConfigError(message, key="--drive", fix=fix)


def parse_drive_option(
    value: str, *, cwd: str | None = None, sysfs: Path = Path("/sys"), dev_dir: str = "/dev"
) -> DriveSpec:
    """Parse one ``--drive`` value. Reads the file system, never writes.

    * ``/dev/...`` or any existing block device -> ``kind="block"``;
    * ``file:PATH`` -> ``kind="file"`` (the file may not exist yet: it will be created);
    * an existing regular file -> ``kind="file"``.

    Args:
        value: the option value.
        cwd: directory relative paths are taken from (default: the current directory).
        sysfs: sysfs mount point, used to recognise partitions and name the disk behind a
            character device.
        dev_dir: where device nodes live (``/dev``): a bare name such as ``sdb`` that is not
            a file here but exists there is answered with ``did you mean --drive=/dev/sdb``.

    Raises:
        ConfigError: (``key="--drive"``, with a fix) for an empty value, a missing path, a
            directory, a character device, a partition, an unknown or not yet supported
            scheme (``fio://``), a bad ``emu:MODEL[@SPEED]``, a ``file:`` path under ``/dev`` or
            on a block device,
            or a ``file:`` path whose parent directory does not exist.
    """
    raw = value
    text = value.strip()
    if not text:
        raise _bad(
            "empty drive value",
            "give a block device (--drive=/dev/sdb) or a scratch file (--drive=file:/tmp/x.img)",
        )
    base = cwd if cwd is not None else os.getcwd()

    scheme = _SCHEME.match(text)
    if scheme and scheme.group(1).lower() == "file":
        return _parse_file_target(raw, text[len(scheme.group(0)) :], base)
    if scheme and scheme.group(1).lower() == "emu":
        from pytest_ssdqual.emulate.model import (
            parse_emu_ref,  # the model is found later (emulator.resolve_spec)
        )

        return DriveSpec(raw=raw, kind="emu", path=parse_emu_ref(text[4:]).model)
    if scheme and scheme.group(1).lower() in RESERVED_SCHEMES:
        name = scheme.group(1).lower()
        kind = (
            "emulated drives (emu:MODEL)" if name == "emu" else "remote drives (fio://HOST/dev/X)"
        )
        raise _bad(
            f"{value!r}: {kind} are not supported yet",
            "use a local block device (--drive=/dev/sdb) or a scratch file (--drive=file:PATH)",
        )

    path = os.path.normpath(os.path.join(base, text))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if scheme:
            raise _bad(
                f"{value!r}: unknown drive kind {scheme.group(1)!r}:",
                "give a block device (/dev/sdb), file:PATH, or a path to an existing file",
            ) from None
        if path.startswith("/dev/"):
            raise _bad(
                f"{path} does not exist",
                "check the drive's current name with lsblk -d -o NAME,MODEL,SERIAL "
                "(/dev/sdX names move between boots)",
            ) from None
        device = os.path.join(dev_dir, text)
        if os.sep not in text and os.path.exists(device):
            raise _bad(
                f"{text!r} is not a file here ({path} does not exist); did you mean "
                f"--drive={device}?",
                f"write --drive={device} (device paths start with {dev_dir}/)",
            ) from None
        raise _bad(
            f"{path} does not exist; to use a scratch file write --drive=file:{path}",
            f"write --drive=file:{path} to have it created, or give an existing block device",
        ) from None
    except OSError as exc:
        raise _bad(f"cannot stat {path}: {exc.strerror}") from None

    if stat.S_ISBLK(st.st_mode):
        _reject_partition(path, st, sysfs)
        return DriveSpec(raw=raw, kind="block", path=path)
    if stat.S_ISCHR(st.st_mode):
        raise _bad(
            f"{path} is a character device, not a block device",
            _char_device_fix(path, sysfs),
        )
    if stat.S_ISDIR(st.st_mode):
        raise _bad(
            f"{path} is a directory",
            f"give a file inside it, e.g. --drive=file:{os.path.join(path, 'ssdqual.img')}",
        )
    if stat.S_ISREG(st.st_mode):
        if _under_dev(path):
            raise _bad(f"{path} is a regular file under /dev", "give a block device")
        return DriveSpec(raw=raw, kind="file", path=path)
    raise _bad(
        f"{path} is neither a block device nor a regular file",
        "give a block device (/dev/sdb) or a scratch file (file:PATH)",
    )


def _parse_file_target(raw: str, rest: str, base: str) -> DriveSpec:
    if not rest.strip():
        raise _bad("file: needs a path", "write --drive=file:/tmp/ssdqual.img")
    if rest.endswith("/"):
        raise _bad(f"file:{rest} names a directory", "give a file name, e.g. file:/tmp/x.img")
    path = os.path.normpath(os.path.join(base, rest))
    if _under_dev(path) or _under_dev(os.path.realpath(path)):
        raise _bad(
            f"file:{path} is under /dev: a file target must be a regular file",
            f"for a block device write --drive={path} (without file:)",
        )
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _bad(f"cannot stat {path}: {exc.strerror}") from None
    if st is not None:
        if stat.S_ISBLK(st.st_mode):
            raise _bad(
                f"file:{path} is a block device: a file target must be a regular file",
                f"for a block device write --drive={os.path.realpath(path)} (without file:)",
            )
        if stat.S_ISDIR(st.st_mode):
            raise _bad(
                f"file:{path} is a directory",
                f"give a file inside it, e.g. --drive=file:{os.path.join(path, 'ssdqual.img')}",
            )
        if not stat.S_ISREG(st.st_mode):
            raise _bad(f"file:{path} exists and is not a regular file", "choose another path")
        return DriveSpec(raw=raw, kind="file", path=path)
    parent = os.path.dirname(path)
    if not os.path.isdir(parent):
        raise _bad(
            f"file:{path}: parent directory {parent} does not exist",
            f"create it (mkdir -p {parent}) or choose another path",
        )
    return DriveSpec(raw=raw, kind="file", path=path)


def _under_dev(path: str) -> bool:
    return path == "/dev" or path.startswith("/dev/")


def _reject_partition(path: str, st: os.stat_result, sysfs: Path) -> None:
    try:
        index = SysfsIndex(sysfs)
    except DeviceError:
        return  # no sysfs: DriveTarget.open reports it with the device error
    node = index.by_dev.get((os.major(st.st_rdev), os.minor(st.st_rdev)))
    if node is not None and node.is_partition:
        raise partition_error(path, node)


def _char_device_fix(path: str, sysfs: Path) -> str:
    name = os.path.basename(path)
    nvme = re.fullmatch(r"nvme(\d+)", name)
    if nvme:
        return f"give its namespace block device, e.g. /dev/nvme{nvme.group(1)}n1 (lsblk -d)"
    generic = re.fullmatch(r"ng(\d+)n(\d+)", name)
    if generic:
        return f"give the block device /dev/nvme{generic.group(1)}n{generic.group(2)}"
    if re.fullmatch(r"sg\d+", name):
        try:
            disks = sorted(os.listdir(sysfs / "class" / "scsi_generic" / name / "device" / "block"))
        except OSError:
            disks = []
        if disks:
            return f"give the block device /dev/{disks[0]}"
        return "give the matching /dev/sdX block device (lsscsi -g shows the pairs)"
    return "give a block device such as /dev/sdb or /dev/nvme0n1 (lsblk -d lists them)"


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
    reasons.extend(_confirmation_reasons(dev, serial, confirmed_serials))
    return reasons


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


def _confirmation_reasons(
    dev: str,
    serial: str,
    confirmed: Collection[str],
    *,
    hint: str = "the drive's serial, not its path: /dev/sdX names move between boots",
) -> list[str]:
    serial = (serial or "").strip()
    given = [c.strip() for c in confirmed if c and c.strip()]
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
        return [
            f"--confirm-destroy values {', '.join(given)} do not match this drive's serial "
            f"{serial} ({dev}): check which drive is which (lsblk -d -o NAME,MODEL,SERIAL)"
        ]
    return []


def _busy_reason(path: str) -> str | None:
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


def _default_identity_fn(path: str, *, kind: str, sysfs: Path = Path("/sys")) -> DriveIdentity:
    from pytest_ssdqual.drive.identity import (
        identify,  # lazy: identity may shell out to smartctl / nvme
    )

    return identify(path, kind=kind, sysfs=sysfs)


def _identity_kind(name: str) -> str:
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
    #: Inventory entries the target brings (an emulated drive's model: controller, NAND).
    assignment_entries: tuple[Entry, ...] = ()
    #: Extra ``(key, text)`` facts for reports (an emulated drive's model, caps, image).
    report_facts: tuple[tuple[str, str], ...] = ()

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
    ) -> DriveTarget:
        """Open the drive ``spec`` names: inspect it, identify it, decide on writes.

        Block device: :func:`inspect_block_device`, identity (kind ``loop`` for ``loop*``,
        ``zram`` for ``zram*``, else ``block``), :func:`write_refusal_reasons`, plus a refusal
        when the kernel reports it busy to an exclusive read-only open. Nothing is written.

        File: created when missing (``O_EXCL``) and sized to ``file_size_bytes`` with
        ``posix_fallocate`` (``ftruncate`` where the file system cannot allocate); an existing
        file keeps its size. A symlink is refused (``lstat``; ``O_NOFOLLOW``). Identity kind
        ``file``. Refused: an existing file the plugin did not create until it is confirmed by
        its absolute path (``--confirm-destroy=/abs/x.img``, the identity's serial), and -- with
        no override -- a file that is a loop device's backing file.

        Emulated (``emu``, ``spec.path`` the model file): built by
        ``emulator.open_emulated_target`` -- image of ``file_size_bytes`` (or the model's
        ``emulated_capacity_bytes``), loop device, blkio cgroup, controller; never refused.

        Args:
            spec: from :func:`parse_drive_option`.
            confirmed_serials: the ``--confirm-destroy`` values.
            file_size_bytes: size of a new file target, in bytes (> 0; checked only when the
                file is created, so 0 opens an existing file, e.g. for ``ssdqual identify``).
            identity_fn: ``(path, *, kind, sysfs) -> DriveIdentity``; default
                ``identity.identify``.
            sysfs, mountinfo, swaps, root_dev: see :func:`inspect_block_device`.

        Raises:
            ConfigError: a partition, or a file target that is a symlink or no longer a
                regular file.
            DeviceError: the device is gone or unreadable, the file cannot be created or
                sized (e.g. no space), or identification fails.
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
            identity = fn(spec.path, kind=_identity_kind(state.name), sysfs=sysfs)
            fio_filename = os.path.realpath(spec.path)
            target = cls(
                identity=identity,
                fio_filename=fio_filename,
                size_bytes=disk_size_bytes(state.name, sysfs=sysfs),
                write_refusals=(),
                created_file=False,
                name=state.name,
                state=state,
                **common,
            )
            target.write_refusals = target._block_refusals(state)
            return target
        if spec.kind == "file":
            created, file_id = _ensure_file(spec.path, file_size_bytes)
            try:
                identity = fn(spec.path, kind="file", sysfs=sysfs)
                size = os.lstat(spec.path).st_size
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
                    _remove(spec.path)
                raise
            return target
        if spec.kind == "emu":
            from pytest_ssdqual.emulate.emulator import (
                open_emulated_target,  # needs root; builds the drive
            )

            return open_emulated_target(spec, file_size_bytes=file_size_bytes)
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
            busy = _busy_reason(self.fio_filename)
            if busy:
                reasons.append(busy)
        return tuple(dict.fromkeys([*self._sticky, *reasons]))

    def refresh(self) -> tuple[str, ...]:
        """Re-read the kernel's view of a block device and recompute ``write_refusals``.

        Does not re-identify (see :meth:`recheck_identity`). A file target re-checks its
        confirmation and whether it became a loop device's backing file.

        Raises:
            DeviceError: the device is gone or its sysfs entry cannot be read.
        """
        if self.spec.kind == "file":
            self.write_refusals = self._file_refusals()
            return self.write_refusals
        if self.spec.kind != "block":
            self.write_refusals = self._sticky
            return self.write_refusals
        state = inspect_block_device(
            self.spec.path,
            sysfs=self._sysfs,
            mountinfo=self._mountinfo,
            swaps=self._swaps,
            root_dev=self._root_dev,
        )
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
        path = self.spec.path
        reasons: list[str] = []
        for loop in _loops_backed_by(path, self._sysfs):
            reasons.append(
                f"{path} is the backing file of {loop}: writing to it would corrupt that loop "
                f"device and whatever uses it; writes are refused whatever the options (detach "
                f"it first with losetup -d {loop} if it is really meant for destruction)"
            )
        if not self.created_file:
            reasons.extend(_confirmation_reasons(
                path, _serial_of(self.identity), self._confirmed,
                hint="the file's absolute path: it exists already and everything in it will "
                     "be overwritten",
            ))
        return tuple(dict.fromkeys([*self._sticky, *reasons]))

    def _recheck_file(self) -> None:
        """Refuse for good when the file target's path no longer names the regular file opened
        at start (replaced, or swapped for a symlink)."""
        path = self.spec.path
        try:
            st = os.lstat(path)
        except OSError as exc:
            problem = f"is gone ({exc.strerror})"
        else:
            if stat.S_ISLNK(st.st_mode):
                problem = "is now a symlink"
            elif not stat.S_ISREG(st.st_mode):
                problem = "is no longer a regular file"
            elif self._file_id is not None and (st.st_dev, st.st_ino) != self._file_id:
                problem = "was replaced by another file"
            else:
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
        kind = "file" if self.spec.kind == "file" else _identity_kind(self._name)
        try:
            identity = self._identity_fn(self.spec.path, kind=kind, sysfs=self._sysfs)
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
            _remove(self.spec.path)

    def __repr__(self) -> str:
        allowed = "writes allowed" if self.write_allowed else "writes refused"
        return f"<DriveTarget {self.id} {self.spec.path} {allowed}>"


def _ensure_file(path: str, size_bytes: int) -> tuple[bool, tuple[int, int]]:
    """Create ``path`` sized to ``size_bytes`` unless it exists; never through a symlink.

    Returns ``(created, (st_dev, st_ino))``. ``size_bytes`` must be > 0 only when creating.
    """
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise DeviceError(f"cannot stat file target {path}: {exc.strerror}") from exc
    if st is not None:
        return False, _existing_file_id(path, st)
    if size_bytes <= 0:
        raise ValueError(f"file_size_bytes must be > 0, got {size_bytes}")
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:  # appeared since the lstat: look at it again, never follow it
        return False, _existing_file_id(path, os.lstat(path))
    except OSError as exc:
        raise DeviceError(f"cannot create file target {path}: {exc.strerror}") from exc
    fst = os.fstat(fd)
    file_id = (fst.st_dev, fst.st_ino)
    try:
        try:
            os.posix_fallocate(fd, 0, size_bytes)
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
                raise
            os.ftruncate(fd, size_bytes)
    except OSError as exc:
        os.close(fd)
        _remove(path)
        raise DeviceError(
            f"cannot size file target {path} to {size_bytes} bytes: {exc.strerror}"
        ) from exc
    os.close(fd)
    return True, file_id


def _existing_file_id(path: str, st: os.stat_result) -> tuple[int, int]:
    """``(st_dev, st_ino)`` of the existing regular file ``path`` (``st`` from ``lstat``).

    Raises:
        ConfigError: ``path`` is a symlink or not a regular file.
    """
    if stat.S_ISLNK(st.st_mode):
        raise ConfigError(
            f"file:{path} is a symlink: a file target is never reached through a symlink",
            key="--drive",
            fix=f"give the real file ({os.path.realpath(path)}) if it is really meant for "
            "destruction, or a new path",
        )
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"file:{path} is no longer a regular file", key="--drive")
    return st.st_dev, st.st_ino


def _loops_backed_by(path: str, sysfs: Path) -> list[str]:
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


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _default_lock_dir() -> Path:
    run_lock = Path("/run/lock")
    if run_lock.is_dir() and os.access(run_lock, os.W_OK | os.X_OK):
        return run_lock
    return Path(tempfile.gettempdir())


class DriveLock:
    """Advisory per-drive lock so that a second pytest process cannot hit the same drive.

    ``flock(LOCK_EX | LOCK_NB)`` on ``<lock_dir>/pytest-ssdqual-<target_id>.lock``; the holder
    writes its pid there. The kernel drops the lock when the holder exits or crashes, so a
    stale file never blocks. The file is left in place (deleting it would race).

    Args:
        target_id: :attr:`DriveTarget.id` (``sdb``, ``loop3``, ``file-x.img``).
        lock_dir: where the lock files live; default ``/run/lock``, else the temp directory.
        label: how to name the drive in messages (default ``target_id``), e.g. ``/dev/sdb``.
    """

    def __init__(
        self, target_id: str, *, lock_dir: Path | None = None, label: str | None = None
    ) -> None:
        self.target_id = target_id
        self.label = label or target_id
        directory = Path(lock_dir) if lock_dir is not None else _default_lock_dir()
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", target_id)
        self.path = directory / f"pytest-ssdqual-{safe}.lock"
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock without waiting. A no-op when this object already holds it.

        Raises:
            DeviceError: another process holds it (``"drive /dev/sdb is in use by another
                pytest-ssdqual run (pid 1234): wait for it or stop it"``), or the lock file
                cannot be opened.
        """
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise DeviceError(f"cannot open lock file {self.path}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_pid(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise DeviceError(
                    f"drive {self.label} is in use by another pytest-ssdqual run "
                    f"(pid {holder or 'unknown'}): wait for it or stop it (lock {self.path})"
                ) from None
            raise DeviceError(f"cannot lock {self.path}: {exc.strerror}") from exc
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock. Idempotent."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> DriveLock:
        self.acquire()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _read_pid(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode(errors="replace").strip()
    except OSError:
        return ""
    return text if text.isdigit() else ""
