"""Can this host build emulated drives, and where does an emulated drive's image go?

Emulated drives need root (loop devices, cgroups), cgroup-v1 blkio throttling and ``losetup``
(:func:`host_problems`); their image goes on tmpfs when it fits, so the caps, not the host disk,
set the speed (:func:`image_folder`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = ["BLKIO_ROOT", "TMPFS_MEMORY_SHARE", "host_problems", "image_folder", "size_text"]

#: Where the cgroup-v1 blkio hierarchy is mounted.
BLKIO_ROOT = Path("/sys/fs/cgroup/blkio")

#: tmpfs holds the image only when it takes at most this share of the available memory.
TMPFS_MEMORY_SHARE = 0.5


def host_problems(
    *,
    blkio_root: Path = BLKIO_ROOT,
    euid: int | None = None,
    which: Callable[[str], str | None] = shutil.which,
) -> list[str]:
    """Why emulated drives cannot be built here (empty when they can), each a full sentence."""
    problems = []
    if (os.geteuid() if euid is None else euid) != 0:
        problems.append(
            "emulated drives need root (they create a loop device and a blkio cgroup): run "
            "pytest as root (sudo -E .venv/bin/pytest ...)"
        )
    if not (blkio_root / "blkio.throttle.write_bps_device").exists():
        problems.append(
            f"cgroup-v1 blkio throttling is not available ({blkio_root} has no "
            "blkio.throttle.write_bps_device): emulated drives need a cgroup-v1 blkio hierarchy "
            "mounted there (mount -t cgroup -o blkio blkio /sys/fs/cgroup/blkio)"
        )
    if which("losetup") is None:
        problems.append("losetup is not installed (apt-get install mount)")
    return problems


def _mem_available_bytes() -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def image_folder(size_bytes: int) -> tuple[Path, str]:
    """Where to put an image of ``size_bytes``: ``($SSDQUAL_EMU_DIR or /dev/shm or the temp
    folder, description)``. tmpfs only when the image fits in ``TMPFS_MEMORY_SHARE`` of the
    available memory and in the tmpfs's free space."""
    env = os.environ.get("SSDQUAL_EMU_DIR")
    if env:
        return Path(env), f"in {env} ($SSDQUAL_EMU_DIR)"
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        st = os.statvfs(shm)
        free = st.f_bavail * st.f_frsize
        if size_bytes <= min(free * 0.9, _mem_available_bytes() * TMPFS_MEMORY_SHARE):
            return shm, "on tmpfs (RAM)"
    tmp = Path(tempfile.gettempdir())
    return tmp, (f"on disk in {tmp} (too big for tmpfs: figures above the host disk's speed "
                 "are not reached)")


def size_text(n: int) -> str:
    """``n`` bytes for humans, in binary units: ``256 MiB``, ``1.5 GiB``, ``512 B``."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= factor:
            return f"{n / factor:g} {unit}"
    return f"{n} B"
