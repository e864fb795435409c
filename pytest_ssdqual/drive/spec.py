"""The ``--drive`` grammar: one value -> a :class:`DriveSpec`, before any device is opened.

Kinds (docs/qualifying.md, option ``--drive``): a block device path (``/dev/sdb``; a partition, a
character device or a directory is refused with the fix), ``file:PATH`` or an existing regular
file (a scratch file target), ``emu:MODEL[@SPEED]`` (an emulated drive: only the syntax is
checked here, by :func:`parse_emu_ref`; ``emulate`` finds the model and builds the drive).
``fio://HOST[:PORT]/dev/X`` (a drive on another host: :mod:`~pytest_ssdqual.drive.remote_spec`).
Reads the file system, never writes.

Sources: stat(2) (``S_ISBLK``/``S_ISCHR``), Linux ``Documentation/ABI/stable/sysfs-block``
(``partition``, ``class/scsi_generic/<sgN>/device/block``).
"""

from __future__ import annotations

import math
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.drive.blockdev import SysfsIndex, partition_error
from pytest_ssdqual.drive.path_stat import stat_or_none
from pytest_ssdqual.errors import ConfigError, DeviceError

__all__ = ["MAX_SPEED", "DriveSpec", "EmuRef", "parse_drive_option", "parse_emu_ref"]

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


@dataclass(frozen=True)
class DriveSpec:
    """A parsed ``--drive`` value, before any device is opened.

    Attributes:
        raw: the value as given: ``/dev/sdb``, ``file:/tmp/x.img``, ``/tmp/x.img``.
        kind: ``"block"``, ``"file"`` or ``"emu"`` (an emulated drive: ``path`` is the model
            name or file as written, the model file's absolute path once
            ``emulator.resolve_spec`` found it; ``raw`` keeps the ``@SPEED``).
        path: absolute path (a relative one is taken from ``cwd``); symlinks are kept, so a
            ``/dev/disk/by-id/...`` name shows as given. For ``kind="remote"``
            (``fio://HOST[:PORT]/dev/X``) the device path on that host.
        host, port: a remote drive's host (IPv4, IPv6 without brackets, or a name) and fio
            server port; ``""`` and 0 for a local drive.
    """

    raw: str
    kind: str
    path: str
    host: str = ""
    port: int = 0


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
            directory, a character device, a partition, an unknown scheme, a bad
            ``fio://HOST[:PORT]/dev/X``, a bad ``emu:MODEL[@SPEED]``, a ``file:`` path under
            ``/dev`` or on a block device,
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
        # only the syntax here: the model is found later (emulator.resolve_spec)
        return DriveSpec(raw=raw, kind="emu", path=parse_emu_ref(text[4:]).model)
    if scheme and scheme.group(1).lower() == "fio":
        from pytest_ssdqual.drive.remote_spec import parse_remote_drive

        host, port, device = parse_remote_drive(text)
        return DriveSpec(raw=raw, kind="remote", path=device, host=host, port=port)

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
            f"{text!r} is neither a file here ({path} does not exist) nor a device in "
            f"{dev_dir}/",
            f"give a block device ({dev_dir}/sdX, {dev_dir}/nvme0n1; lsblk lists them), or "
            f"write --drive=file:{path} to have a scratch file created there",
        ) from None
    except OSError as exc:
        raise _bad(f"cannot stat {path}: {exc.strerror}") from None

    if stat.S_ISBLK(st.st_mode):
        _reject_partition(path, st, sysfs)
        _reject_empty(path, st, sysfs)
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
    st = stat_or_none(path, error=lambda exc: _bad(f"cannot stat {path}: {exc.strerror}"))
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


def _reject_empty(path: str, st: os.stat_result, sysfs: Path) -> None:
    """A block device of size 0 (sysfs ``size``, 512-byte sectors) has nothing to test: a loop
    device with no image attached, a card reader or hot-plug bay with no medium. A usage error
    naming the fix, not a drive that fails every test."""
    try:
        node = SysfsIndex(sysfs).by_dev.get((os.major(st.st_rdev), os.minor(st.st_rdev)))
        if node is None or int((node.path / "size").read_text()) != 0:
            return
    except (DeviceError, OSError, ValueError):
        return  # unknown: DriveTarget.open reports what it finds
    if re.fullmatch(r"loop\d+", node.name):
        raise _bad(
            f"{path} has no image attached (size 0): there is nothing to test",
            f"attach an image first: truncate -s 1G drive.img && losetup -f --show --direct-io=on "
            f"drive.img (it prints the device to give, e.g. {path}; losetup -l lists those in use)",
        )
    raise _bad(
        f"{path} has no medium (size 0): there is nothing to test",
        "insert the medium or plug the drive in, then check its size with lsblk -d "
        f"{path}",
    )


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



@dataclass(frozen=True)
class EmuRef:
    """A parsed ``emu:`` value: ``model`` (name or path, as written) and ``speed`` factor."""

    model: str
    speed: float = 1.0


#: Highest ``@SPEED``: a throttle only slows the host down, so a factor above 1 only works
#: where the host is faster than the scaled caps; past this it is surely a typo.
MAX_SPEED = 10.0


def parse_emu_ref(text: str) -> EmuRef:
    """Parse what follows ``emu:``: ``MODEL`` or ``MODEL@SPEED`` (``jmf612-64g@0.8``).

    Raises:
        ConfigError: (key ``--drive``) empty model, or a SPEED that is not a number in
            (0, ``MAX_SPEED``].
    """
    body = text.strip()
    speed = 1.0
    if "@" in body:
        body, _, factor = body.rpartition("@")
        try:
            speed = float(factor)
        except ValueError:
            raise ConfigError(
                f"emu:{text}: speed {factor!r} is not a number",
                key="--drive",
                fix="write the factor as a number, e.g. emu:MODEL@0.8 for a 20 % slower drive",
            ) from None
        if not (0 < speed <= MAX_SPEED) or math.isnan(speed):
            raise ConfigError(
                f"emu:{text}: speed {factor} is out of range (0, {MAX_SPEED:g}]",
                key="--drive",
                fix="e.g. emu:MODEL@0.8 for a 20 % slower drive",
            )
    body = body.strip()
    if not body:
        raise ConfigError(
            "emu: needs a model",
            key="--drive",
            fix="write --drive=emu:MODEL (a name from the emulated/ folder, or a YAML path)",
        )
    return EmuRef(body, speed)
