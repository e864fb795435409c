"""The emulated drive's own power switch (plug spec ``emu``): a cut as on a real bench.

:meth:`EmulatedPowerSwitch.off` is a power cut of the emulated drive:

1. I/O stops at once: every process in the drive's blkio cgroup (its fio) gets SIGKILL, and
   the cut waits (up to ``KILL_WAIT_S``) until they are gone;
2. the device stops answering: the loop device is detached (``losetup -d``), so ``/dev/loopN``
   fails every open and I/O (ENXIO) until power is back;
3. what the model's ``power_loss`` says is lost is lost (:mod:`pytest_ssdqual.emulate.power_cut`:
   without power-loss protection, the blocks written in the last ``volatile_window_ms`` are put
   back to their earlier content, and the byte ranges are logged);
4. the drive's unsafe-shutdown counter rises by one.

:meth:`on` attaches the same image to the same loop device again
(``losetup --direct-io=on /dev/loopN IMAGE``; the blkio throttle rules of the device survive a
detach, checked on kernel 6.18) and flushes its buffer cache (``blockdev --flushbufs``).

Every cut is appended as a JSON line (``CutRecord.to_json``) to ``power_cuts.jsonl`` in the
drive's work folder and kept in :attr:`EmulatedPowerSwitch.cuts`. The class satisfies the
power-switch protocol of ``pytest_ssdqual.plugs.power_switch`` by shape (on, off, cycle, close,
describe); this package does not import ``plugs``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from pytest_ssdqual.emulate.emulator import EmulatedDrive
from pytest_ssdqual.emulate.power_cut import (
    CutRecord,
    SnapshotRing,
    add_unsafe_shutdown,
    changed_ranges,
    read_unsafe_shutdowns,
    restore_ranges,
)
from pytest_ssdqual.errors import DeviceError

__all__ = ["EmulatedPowerSwitch"]

#: Seconds a cut waits for the killed fio processes to leave the drive's cgroup.
KILL_WAIT_S = 5.0
#: Seconds the loop device may take to let go of the image after ``losetup -d``.
DETACH_WAIT_S = 5.0
#: Log of the cuts, in the drive's work folder.
CUT_LOG = "power_cuts.jsonl"


class EmulatedPowerSwitch:
    """Power switch of one emulated drive (see the module text).

    Args:
        drive: the emulated drive (powered on when the switch is made).
        block_bytes: restore granularity (default: the model's physical sector, 4 KiB).
    """

    def __init__(self, drive: EmulatedDrive, *, block_bytes: int | None = None) -> None:
        self.drive = drive
        self.block_bytes = block_bytes or max(4096, drive.model.physical_sector_bytes)
        self.loss = drive.model.power_loss
        self.powered = True
        self.cuts: list[CutRecord] = []
        self.ring: SnapshotRing | None = None
        self._start_ring()

    def describe(self) -> str:
        """``'emulated power switch of /dev/loop3 (no power-loss protection: ...)'``."""
        loss = self.loss.describe() if self.loss is not None else (
            "no power_loss key: every acknowledged write survives")
        return f"emulated power switch of {self.drive.loop_device} ({loss})"

    @property
    def unsafe_shutdowns(self) -> int:
        """The emulated drive's unsafe-shutdown count (an emulated health reading)."""
        return read_unsafe_shutdowns(self.drive.workdir)

    def _start_ring(self) -> None:
        if self.loss is None or self.loss.protection:
            return
        self.ring = SnapshotRing(self.drive.image_path, self.drive.image_bytes,
                                 self.loss.volatile_window_ms / 1000)
        self.ring.start()

    def off(self) -> CutRecord | None:
        """Cut the power (see the module text). Returns the cut's record; None when the drive
        was already off (nothing happens).

        Raises:
            DeviceError: the fio processes or the loop device did not go away, or the image
                could not be restored.
        """
        if not self.powered:
            return None
        cut_s = time.monotonic()
        killed = self._kill_io()
        if self.ring is not None:
            self.ring.stop()
        self._detach()
        self.powered = False
        record = CutRecord(cut_s, self.loss is None or self.loss.protection,
                           0.0 if self.loss is None else self.loss.volatile_window_ms,
                           killed_pids=killed)
        if self.ring is not None:
            self._lose(record, self.ring)
            self.ring = None
        record.unsafe_shutdowns = add_unsafe_shutdown(self.drive.workdir)
        self.cuts.append(record)
        with open(self.drive.workdir / CUT_LOG, "a", encoding="utf-8") as log:
            log.write(record.to_json() + "\n")
        return record

    def _lose(self, record: CutRecord, ring: SnapshotRing) -> None:
        snap = ring.pick(record.cut_s)
        if snap is None:
            record.note = "no snapshot of the image: nothing restored"
            return
        record.snapshot_start_s, record.snapshot_end_s = snap.start_s, snap.end_s
        record.lost_window_ms = (record.cut_s - snap.start_s) * 1000
        if snap.end_s > record.cut_s - ring.window_s:
            record.note = (f"powered for less than the {ring.window_s * 1000:g} ms window: "
                           "restored to the image as it was at power-on")
        try:
            with open(self.drive.image_path, "rb") as fh:
                current = fh.read()
            record.restored = changed_ranges(current, snap.data, self.block_bytes)
            restore_ranges(self.drive.image_path, snap.data, record.restored)
        except (OSError, ValueError) as exc:
            raise DeviceError(f"emulated power cut: cannot restore the image "
                              f"{self.drive.image_path}: {exc}") from exc

    def _kill_io(self) -> list[int]:
        """SIGKILL every process in the drive's cgroup; wait until it is empty."""
        procs = self.drive.cgroup / "cgroup.procs" if self.drive.cgroup else None
        if procs is None:
            return []
        killed: list[int] = []
        deadline = time.monotonic() + KILL_WAIT_S
        while True:
            try:
                pids = [int(p) for p in procs.read_text().split() if int(p) != os.getpid()]
            except (OSError, ValueError):
                return killed
            if not pids:
                return killed
            if time.monotonic() > deadline:
                raise DeviceError(f"emulated power cut: process(es) {pids} of "
                                  f"{self.drive.cgroup} still running {KILL_WAIT_S:g} s after "
                                  "SIGKILL (stuck in device I/O)")
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                if pid not in killed:
                    killed.append(pid)
            time.sleep(0.01)

    def _backing(self) -> str:
        name = Path(str(self.drive.loop_device)).name
        try:
            return (Path("/sys/block") / name / "loop" / "backing_file").read_text().strip()
        except OSError:
            return ""

    def _detach(self) -> None:
        loop = str(self.drive.loop_device)
        deadline = time.monotonic() + DETACH_WAIT_S
        while True:
            proc = subprocess.run(["losetup", "-d", loop], capture_output=True, text=True,
                                  check=False)
            if not self._backing():
                return
            if time.monotonic() > deadline:
                raise DeviceError(f"emulated power cut: {loop} still has the image behind it "
                                  f"{DETACH_WAIT_S:g} s after losetup -d "
                                  f"({(proc.stderr or proc.stdout).strip() or 'held open'})")
            time.sleep(0.05)

    def on(self) -> None:
        """Power back: the same image on the same loop device. No-op when on.

        Raises:
            DeviceError: ``losetup`` failed (e.g. the loop device was taken by another program
                while the drive was off) or the device has another file behind it.
        """
        if self.powered:
            return
        loop, image = str(self.drive.loop_device), str(self.drive.image_path)
        proc = subprocess.run(["losetup", "--direct-io=on", loop, image], capture_output=True,
                              text=True, check=False)
        if proc.returncode != 0 or self._backing() not in (image, os.path.realpath(image)):
            raise DeviceError(f"emulated power on: cannot attach {image} to {loop} again: "
                              f"{(proc.stderr or proc.stdout).strip() or self._backing()}")
        subprocess.run(["blockdev", "--flushbufs", loop], capture_output=True, check=False)
        self.powered = True
        self._start_ring()

    def cycle(self, off_s: float = 1.0) -> CutRecord | None:
        """:meth:`off`, ``off_s`` seconds without power, :meth:`on`; the cut's record."""
        record = self.off()
        time.sleep(off_s)
        self.on()
        return record

    def close(self) -> None:
        """Stop the snapshots and leave the drive powered (its teardown detaches it)."""
        if self.ring is not None:
            self.ring.stop()
            self.ring = None
        if not self.powered:
            self.on()
