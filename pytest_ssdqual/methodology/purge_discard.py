"""Purge methods 3 and 4: ``blkdiscard -f`` on a device, hole punching on a file target.

``blkdiscard -f <dev>`` deallocates the whole device (also loop devices, whose backing file gets
its holes punched, and zram); ``-f`` (util-linux >= 2.36) skips the signature check that refuses
a drive with an old partition table when stdin is a terminal; an older blkdiscard without ``-f``
is run again without it. A file target gets ``fallocate(FALLOC_FL_PUNCH_HOLE |
FALLOC_FL_KEEP_SIZE)`` over the whole file, else is truncated to 0 and back to its size.
blkdiscard(8), util-linux sys-utils/blkdiscard.c, fallocate(2).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from pytest_ssdqual.errors import DeviceError
from pytest_ssdqual.methodology.purge_commands import CommandRunner, first_line, unknown_option

if TYPE_CHECKING:
    from pytest_ssdqual.drive.target import DriveTarget

__all__ = ["blkdiscard", "purge_file"]

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02


def blkdiscard(
    target: DriveTarget, dev: str, run: CommandRunner, which: Callable[[str], str | None],
    timeout_s: float,
) -> tuple[str, str | None]:
    """Method 3: ``blkdiscard -f`` -> ``(outcome, method or None)``."""
    tool = which("blkdiscard")
    if tool is None:
        return "blkdiscard not installed (util-linux)", None
    # -f: util-linux >= 2.36 otherwise refuses a device with a signature when stdin is a tty
    code, out = run([tool, "-f", dev], timeout_s)
    if code != 0 and unknown_option(out, "-f"):  # util-linux < 2.36: no -f, and no check
        code, out = run([tool, dev], timeout_s)
    if code != 0:
        return f"failed (exit {code}: {first_line(out)})", None
    return "ok", "blkdiscard"


def purge_file(path: str, size_bytes: int, attempts: list[str]) -> str | None:
    """Method 4 (file target): punch holes over the whole file, else truncate it to 0 and back;
    each try appended to ``attempts``. Returns the method that worked, or ``None``.

    Raises:
        DeviceError: the file cannot be opened.
    """
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError as exc:
        raise DeviceError(f"cannot open file target {path} to purge it: {exc.strerror}") from exc
    try:
        err = _punch_hole(fd, size_bytes)
        if err == 0:
            attempts.append("file-punch-hole: ok")
            return "file-punch-hole"
        attempts.append(f"file-punch-hole: {os.strerror(err)}")
        try:
            os.ftruncate(fd, 0)
            os.ftruncate(fd, size_bytes)
        except OSError as exc:
            attempts.append(f"file-truncate: {exc.strerror}")
            return None
        attempts.append("file-truncate: ok")
        return "file-truncate"
    finally:
        os.close(fd)


def _punch_hole(fd: int, size_bytes: int) -> int:
    """``fallocate(fd, PUNCH_HOLE | KEEP_SIZE, 0, size)``; returns 0 or the errno."""
    libc_name = ctypes.util.find_library("c")
    if libc_name is None:
        return errno.ENOSYS
    libc = ctypes.CDLL(libc_name, use_errno=True)
    fallocate = libc.fallocate
    fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    fallocate.restype = ctypes.c_int
    if fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, 0, size_bytes) == 0:
        return 0
    return ctypes.get_errno() or errno.EIO
