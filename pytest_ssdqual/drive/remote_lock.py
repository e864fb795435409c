"""The drive lock of a remote drive, held on its host: the same lock file a local run there
takes (``DriveLock``: ``/run/lock/pytest-ssdqual-<kernel name>.lock``, flock(2)), taken by
flock(1) in a shell that an SSH session keeps open for as long as this run holds the drive.

The remote shell waits on its standard input; releasing closes it. When this process dies in
any way, ssh's input closes with it, the remote shell reads end-of-file and exits, and the
kernel there drops the flock: no stale lock, as for a local drive.

Sources: flock(1) (util-linux), flock(2), ssh(1).
"""

from __future__ import annotations

import select
import shlex
import subprocess
import time
from pathlib import Path

from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.drive.ssh import SshRunner
from pytest_ssdqual.errors import DeviceError, DriveInUse

__all__ = ["LOCK_WAIT_S", "RemoteLock"]

#: Seconds to wait for the host's answer (SSH connect + flock).
LOCK_WAIT_S = 30.0

_SCRIPT = """d=/run/lock; [ -d "$d" ] && [ -w "$d" ] || d="${{TMPDIR:-/tmp}}"
f="$d/pytest-ssdqual-{key}.lock"
exec 9<>"$f" || exit 71
if ! flock -n 9; then sleep 1; if ! flock -n 9; then echo BUSY; cat "$f"; exit 75; fi; fi
printf '%s\\n%s\\n' "$$" {session} > "$f"
echo LOCKED "$f"
cat > /dev/null
: > "$f"
"""


class RemoteLock(DriveLock):
    """:class:`DriveLock` of a drive on another host (module docstring).

    Args:
        ssh: the host's :class:`SshRunner`.
        key: the drive's kernel name on the host (``nvme0n1``: ``DriveTarget.lock_key`` there).
        label: the drive in messages (``fio://lab-07/dev/nvme0n1``).
        session: the run id every xdist worker of this session shares.
    """

    def __init__(self, ssh: SshRunner, key: str, *, label: str, session: str = "") -> None:
        super().__init__(key, lock_dir=Path("/run/lock"), label=label, session=session)
        self._ssh = ssh
        self._proc: subprocess.Popen[str] | None = None

    @property
    def held(self) -> bool:
        return self._proc is not None

    def acquire(self) -> None:
        """Take the lock on the host without waiting for another holder.

        Raises:
            DriveInUse: another run holds it (its pid on the host is named), or a sibling
                worker of this same session.
            DeviceError: ssh failed, or the host did not answer within ``LOCK_WAIT_S``.
        """
        if self._proc is not None:
            return
        script = _SCRIPT.format(key=self.path.name[len("pytest-ssdqual-"):-len(".lock")],
                                session=shlex.quote(self.session))
        proc = subprocess.Popen(self._ssh.argv(script), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stderr is not None
        first = _read_line(proc, LOCK_WAIT_S)
        if first.startswith("LOCKED"):
            self._proc = proc
            return
        rest = ""
        if first.startswith("BUSY"):
            rest = proc.stdout.read()
        _end(proc)
        if first.startswith("BUSY"):
            lines = rest.splitlines()
            pid = lines[0].strip() if lines else ""
            session = lines[1].strip() if len(lines) > 1 else ""
            where = f"on {self._ssh.host}"
            if self.session and session == self.session:
                raise DriveInUse(f"drive {self.label} is in use by another worker of this same "
                                 f"pytest session (pid {pid or 'unknown'} {where})",
                                 sibling=True)
            raise DriveInUse(f"drive {self.label} is in use by another pytest-ssdqual run (pid "
                             f"{pid or 'unknown'} {where}): wait for it or stop it "
                             f"(lock {self.path} {where})")
        err = (proc.stderr.read() or "").strip()
        raise DeviceError(f"cannot take the drive lock of {self.label} on {self._ssh.host} "
                          f"over SSH: {err or first or 'no answer'}")

    def release(self) -> None:
        """Drop the lock (close the remote shell's input; it empties the file and exits).
        Idempotent."""
        proc, self._proc = self._proc, None
        if proc is not None:
            _end(proc)


def _read_line(proc: subprocess.Popen[str], timeout_s: float) -> str:
    """The first line ``proc`` prints within ``timeout_s`` (``''`` when none)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if ready:
            return proc.stdout.readline().strip()
    return ""


def _end(proc: subprocess.Popen[str]) -> None:
    try:
        if proc.stdin is not None:
            proc.stdin.close()
    except OSError:
        pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
