"""An advisory per-drive lock: one pytest-ssdqual process per drive (docs/safety.md).

Sources: flock(2) (the kernel drops the lock when its holder exits or crashes).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import tempfile
import time
from pathlib import Path

from pytest_ssdqual import installed_version
from pytest_ssdqual.errors import DeviceError, DriveInUse

__all__ = ["DriveLock"]

HOLDER_SETTLE_S = 1.0  # how long a lock file may not yet name its holder (_flock_or_read_holder)


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
        session: the holder's session (the run id every xdist worker of one pytest session
            shares), written beside the pid: a lock held by a sibling worker of the same
            session is named as such, never as "another run".
    """

    def __init__(
        self, target_id: str, *, lock_dir: Path | None = None, label: str | None = None,
        session: str = "",
    ) -> None:
        self.target_id = target_id
        self.label = label or target_id
        self.session = session
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
            _flock_or_read_holder(fd)
        except _Held as held:
            os.close(fd)
            holder, holder_session = held.pid, held.session
            if self.session and holder_session == self.session:
                raise DriveInUse(
                    f"drive {self.label} is in use by another worker of this same pytest "
                    f"session (pid {holder or 'unknown'}): the drive's tests were handed to "
                    "more than one pytest-xdist worker, so pytest-ssdqual's per-drive "
                    f"scheduling did not take effect (pytest {installed_version('pytest')}, "
                    f"pytest-xdist {installed_version('pytest-xdist')}); run this drive "
                    "without -n meanwhile, and report the versions", sibling=True,
                ) from None
            raise DriveInUse(
                f"drive {self.label} is in use by another pytest-ssdqual run "
                f"(pid {holder or 'unknown'}): wait for it or stop it (lock {self.path})"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise DeviceError(f"cannot lock {self.path}: {exc.strerror}") from exc
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{self.session}\n".encode(), 0)
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


class _Held(Exception):
    """The lock is held by someone else: their pid and session ("" for what is not said)."""

    def __init__(self, pid: str, session: str) -> None:
        super().__init__(pid)
        self.pid, self.session = pid, session


def _flock_or_read_holder(fd: int, settle_s: float = HOLDER_SETTLE_S) -> None:
    """Take the flock on ``fd`` without blocking, or raise :class:`_Held` with the holder.

    A holder writes its pid and session just *after* its flock succeeds (and empties the file
    just before it lets go), so a file that does not say who holds it is read again, with the
    lock retried, for up to ``settle_s`` seconds: an xdist sibling caught in that gap was named
    "another pytest-ssdqual run (pid unknown)" (CI, 2026-12-03).

    Raises:
        _Held: someone else holds the lock.
        OSError: flock failed for another reason.
    """
    deadline = time.monotonic() + settle_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        pid, session = _read_holder(fd)
        if pid or time.monotonic() >= deadline:
            raise _Held(pid, session)
        time.sleep(0.02)


def _read_holder(fd: int) -> tuple[str, str]:
    """The holder's pid and session from the lock file (``""`` for what it does not say)."""
    try:
        lines = os.pread(fd, 256, 0).decode(errors="replace").splitlines()
    except OSError:
        return "", ""
    pid = lines[0].strip() if lines else ""
    session = lines[1].strip() if len(lines) > 1 else ""
    return (pid if pid.isdigit() else ""), session

