"""What an emulated drive loses in a power cut: a ring of image snapshots, and the restore.

A drive without power-loss protection (model key ``power_loss: {protection: false,
volatile_window_ms: N}``, :mod:`pytest_ssdqual.emulate.power_loss_model`) loses the writes it
acknowledged in its last N ms before the cut. The emulated drive's image is a file on tmpfs
behind a loop device; the host cannot see which blocks a write touched without a device-mapper
or ublk layer (this host has neither), so the emulator *keeps what was there*:

* while the drive is powered, :class:`SnapshotRing` copies the whole image every ``N / 2`` ms
  (a thread: ``readinto`` of a 64 MiB tmpfs image takes ~10-30 ms and releases the GIL) and keeps
  only the snapshots a cut could still need (the newest one finished at least N ms ago, and
  the newer ones);
* at the cut, :meth:`SnapshotRing.pick` takes the newest snapshot that *finished* at least N ms
  before the cut, and :func:`changed_ranges` + :func:`restore_ranges` put back every
  ``block_bytes`` block that differs from it. Every write acknowledged after the snapshot began
  is lost, none acknowledged before it: the lost window is ``cut - snapshot start``, between N
  and N + N/2 + one copy's time, and is logged with the exact byte ranges restored
  (:class:`CutRecord`).

Blocks are compared at ``block_bytes`` (the model's physical sector, 4 KiB: the mapping unit a
real SSD loses as a whole). Writes acknowledged *while* a snapshot was being copied may be
kept or lost; the record gives the copy's start and end, so the window is stated as measured.

The unsafe-shutdown counter (NVMe SMART / Health log "Unsafe Shutdowns", ATA attribute 174
"Unexpected Power Loss Count" on many SSDs) of an emulated drive is a small JSON file in the
drive's work folder (:func:`read_unsafe_shutdowns`, :func:`add_unsafe_shutdown`): clearly the
emulator's, never a real drive's.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = [
    "CutRecord",
    "Snapshot",
    "SnapshotRing",
    "add_unsafe_shutdown",
    "changed_ranges",
    "read_unsafe_shutdowns",
    "restore_ranges",
]

#: Bytes compared at once before looking at single blocks.
_CHUNK = 1 << 20
#: File in the drive's work folder holding the emulated health counters.
HEALTH_FILE = "emulated-health.json"


@dataclass
class Snapshot:
    """One copy of the image. start_s / end_s: ``time.monotonic()`` when the copy began / ended.
    data: the image's bytes."""

    start_s: float
    end_s: float
    data: bytearray


@dataclass
class CutRecord:
    """One emulated power cut, as logged.

    Attributes:
        cut_s: ``time.monotonic()`` at the cut. protection: the model's PLP flag.
        volatile_window_ms: the model's window (0 with PLP).
        snapshot_start_s / snapshot_end_s: the copy restored from (None: nothing restored).
        lost_window_ms: ``(cut - snapshot start) * 1000``: writes acknowledged in it are lost.
        restored: byte ranges ``(start, end)`` (end exclusive) put back to the snapshot.
        killed_pids: processes of the drive's cgroup killed at the cut (its fio).
        unsafe_shutdowns: the emulated counter after the cut.
        note: what happened in words (e.g. the ring had no snapshot old enough).
    """

    cut_s: float
    protection: bool
    volatile_window_ms: float
    snapshot_start_s: float | None = None
    snapshot_end_s: float | None = None
    lost_window_ms: float | None = None
    restored: list[tuple[int, int]] = field(default_factory=list)
    killed_pids: list[int] = field(default_factory=list)
    unsafe_shutdowns: int = 0
    note: str = ""

    @property
    def restored_bytes(self) -> int:
        return sum(end - start for start, end in self.restored)

    def contains(self, offset: int) -> bool:
        """True when byte ``offset`` lies in a restored range."""
        return any(start <= offset < end for start, end in self.restored)

    def to_json(self) -> str:
        data = asdict(self)
        data["restored"] = [list(r) for r in self.restored]
        data["restored_bytes"] = self.restored_bytes
        return json.dumps(data, sort_keys=True)


def changed_ranges(current: bytes | bytearray | memoryview, before: bytes | bytearray | memoryview,
                   block_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges ``(start, end)`` (end exclusive, merged, ascending) of the ``block_bytes``
    blocks whose content differs between ``current`` and ``before``.

    Raises:
        ValueError: the two differ in length, or the length is not a multiple of the block.
    """
    if len(current) != len(before):
        raise ValueError(f"image {len(current)} bytes, snapshot {len(before)} bytes")
    if block_bytes <= 0 or len(current) % block_bytes:
        raise ValueError(f"{len(current)} bytes is not a multiple of the {block_bytes} B block")
    cur, old = memoryview(current), memoryview(before)
    ranges: list[tuple[int, int]] = []
    chunk = max(block_bytes, _CHUNK - _CHUNK % block_bytes)
    for base in range(0, len(cur), chunk):
        top = min(base + chunk, len(cur))
        if cur[base:top] == old[base:top]:
            continue
        for start in range(base, top, block_bytes):
            end = start + block_bytes
            if cur[start:end] == old[start:end]:
                continue
            if ranges and ranges[-1][1] == start:
                ranges[-1] = (ranges[-1][0], end)
            else:
                ranges.append((start, end))
    return ranges


def restore_ranges(path: Path, before: bytes | bytearray | memoryview,
                   ranges: list[tuple[int, int]]) -> None:
    """Write ``before[start:end]`` back at each range of the image file ``path``, then fsync.

    Raises:
        OSError: the image cannot be written.
    """
    view = memoryview(before)
    with open(path, "r+b", buffering=0) as fh:
        for start, end in ranges:
            fh.seek(start)
            fh.write(view[start:end])
        fh.flush()
        os.fsync(fh.fileno())


def _read_image(path: Path, into: bytearray) -> None:
    view = memoryview(into)
    with open(path, "rb", buffering=0) as fh:
        done = 0
        while done < len(view):
            n = fh.readinto(view[done:])
            if not n:
                raise OSError(f"{path}: short read at {done} of {len(view)} bytes")
            done += n


class SnapshotRing:
    """Copies of the image every ``period_s`` while running, pruned to what a cut can use.

    Args:
        image: the image file. image_bytes: its size.
        window_s: the model's volatile window, seconds.
        period_s: seconds between copies (default ``window_s / 2``, at least 20 ms).
        clock: ``time.monotonic`` (replaced in tests).

    :meth:`start` takes the first copy before it returns (a cut right after power-on restores
    to it), then copies in a thread until :meth:`stop`.
    """

    def __init__(self, image: Path, image_bytes: int, window_s: float, *,
                 period_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.image = image
        self.image_bytes = image_bytes
        self.window_s = window_s
        self.period_s = max(0.02, period_s if period_s is not None else window_s / 2)
        self.clock = clock
        self.snapshots: list[Snapshot] = []
        self.copies = 0
        self._spare: list[bytearray] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: str | None = None

    def take(self) -> None:
        """One copy now, added to the ring (then pruned)."""
        buf = self._spare.pop() if self._spare else bytearray(self.image_bytes)
        start = self.clock()
        _read_image(self.image, buf)
        self.add(Snapshot(start, self.clock(), buf))

    def add(self, snap: Snapshot) -> None:
        """Add a copy and drop those older than the newest one a cut now could use."""
        with self._lock:
            self.snapshots.append(snap)
            self.copies += 1
            usable = [i for i, s in enumerate(self.snapshots)
                      if s.end_s <= snap.end_s - self.window_s]
            if usable:
                drop, self.snapshots = self.snapshots[:usable[-1]], self.snapshots[usable[-1]:]
                self._spare += [s.data for s in drop][:2]

    def pick(self, cut_s: float) -> Snapshot | None:
        """The newest copy finished at least ``window_s`` before ``cut_s``; else the oldest
        (the drive was powered for less than the window); None when there is none."""
        with self._lock:
            old = [s for s in self.snapshots if s.end_s <= cut_s - self.window_s]
            if old:
                return old[-1]
            return self.snapshots[0] if self.snapshots else None

    def start(self) -> None:
        self._stop.clear()
        self.take()
        self._thread = threading.Thread(target=self._run, name="ssdqual-emu-snapshots",
                                        daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.period_s):
            try:
                self.take()
            except OSError as exc:  # the image went away (drive closed): stop copying
                self.error = str(exc)
                return

    def stop(self) -> None:
        """Stop copying (waits for a copy in progress). Idempotent."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def read_unsafe_shutdowns(workdir: Path) -> int:
    """The emulated drive's unsafe-shutdown count (0 before its first cut)."""
    try:
        data = json.loads((workdir / HEALTH_FILE).read_text())
    except (OSError, ValueError):
        return 0
    return int(data.get("unsafe_shutdowns", 0))


def add_unsafe_shutdown(workdir: Path) -> int:
    """Count one unsafe shutdown; returns the new count."""
    count = read_unsafe_shutdowns(workdir) + 1
    (workdir / HEALTH_FILE).write_text(json.dumps({"unsafe_shutdowns": count}) + "\n")
    return count
