"""A file target's file (``--drive=file:PATH``): create and size it, name it, remove it.

The plugin creates a missing file with ``O_EXCL | O_NOFOLLOW`` and sizes it (``posix_fallocate``,
else ``ftruncate``); an existing file is identified by ``(st_dev, st_ino)`` so that a swap behind
the plugin's back is noticed, and a symlink is never followed (docs/safety.md: a file
target is created, sized and removed by the plugin when it made it).

Sources: open(2) (``O_EXCL``, ``O_NOFOLLOW``), posix_fallocate(3), lstat(2).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from pytest_ssdqual.drive.path_stat import stat_or_none
from pytest_ssdqual.drive.safety import confirmation_reasons, loops_backed_by
from pytest_ssdqual.errors import ConfigError, DeviceError, DriveInUse

__all__ = ["ensure_file", "existing_file_id", "file_problem", "file_refusals", "identify_file",
           "remove_file"]


def ensure_file(path: str, size_bytes: int) -> tuple[bool, tuple[int, int]]:
    """Create ``path`` sized to ``size_bytes`` unless it exists; never through a symlink.

    Returns ``(created, (st_dev, st_ino))``. ``size_bytes`` must be > 0 only when creating.
    """
    st = stat_or_none(
        path, follow=False,
        error=lambda exc: DeviceError(f"cannot stat file target {path}: {exc.strerror}"),
    )
    if st is not None:
        return False, existing_file_id(path, st)
    if size_bytes <= 0:
        raise ValueError(f"file_size_bytes must be > 0, got {size_bytes}")
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except FileExistsError:  # appeared since the lstat: look at it again, never follow it
        return False, existing_file_id(path, os.lstat(path))
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
        remove_file(path)
        raise DeviceError(
            f"cannot size file target {path} to {size_bytes} bytes: {exc.strerror}"
        ) from exc
    os.close(fd)
    return True, file_id


def existing_file_id(path: str, st: os.stat_result) -> tuple[int, int]:
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


def remove_file(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass



def file_problem(path: str, file_id: tuple[int, int] | None) -> str | None:
    """What changed about a file target since it was opened, or None: ``is gone (...)``,
    ``is now a symlink``, ``is no longer a regular file``, ``was replaced by another file``
    (another ``st_dev``/``st_ino`` than ``file_id``)."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"is gone ({exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "is now a symlink"
    if not stat.S_ISREG(st.st_mode):
        return "is no longer a regular file"
    if file_id is not None and (st.st_dev, st.st_ino) != file_id:
        return "was replaced by another file"
    return None


def identify_file(identity_fn: Callable[..., Any], path: str, sysfs: Any, *,
                  created: bool) -> tuple[Any, int]:
    """``(identity_fn(path, kind="file", sysfs=sysfs), size in bytes)`` of a file target.

    Raises:
        DriveInUse: the file went away meanwhile (``sibling`` when this process did not create
            it: a sibling pytest-xdist worker that created the session's scratch file removed
            it when it finished), whether the removal shows as a FileNotFoundError or as the
            identity function's DeviceError ("scratch file ...: No such file or directory").
        DeviceError: any other failure to identify the file (the file is still there).
    """
    try:
        return identity_fn(path, kind="file", sysfs=sysfs), os.lstat(path).st_size
    except (FileNotFoundError, DeviceError) as exc:
        if isinstance(exc, DeviceError) and os.path.lexists(path):
            raise
        raise DriveInUse(
            f"{path} was removed while this process opened it: the process that created it "
            "(another pytest-xdist worker of this session, or another run) has finished with it",
            sibling=not created) from None



def file_refusals(path: str, sysfs: Path, *, created: bool, serial: str,
                  confirmed: Collection[str]) -> list[str]:
    """Why writing to the file target ``path`` is refused, in full sentences (empty: allowed):
    it is a loop device's backing file (never written, whatever the options:
    ``safety.loops_backed_by`` over ``sysfs``), or it existed before and is not confirmed by
    its absolute path (``serial``, among the ``--confirm-destroy`` values ``confirmed``)."""
    reasons: list[str] = []
    for loop in loops_backed_by(path, sysfs):
        reasons.append(
            f"{path} is the backing file of {loop}: writing to it would corrupt that loop "
            f"device and whatever uses it; writes are refused whatever the options (detach "
            f"it first with losetup -d {loop} if it is really meant for destruction)"
        )
    if not created:
        reasons.extend(confirmation_reasons(
            path, serial, confirmed,
            hint="the file's absolute path: it exists already and everything in it will "
                 "be overwritten",
        ))
    return reasons
