"""The emulated drive's controller: blkio counters in, throttle caps out, every ~100 ms.

An emulated drive is a loop device whose fio jobs run in a cgroup-v1 blkio folder
(:mod:`pytest_ssdqual.emulate.emulator`). This module decides, from what the drive has done
so far, which caps its :class:`~pytest_ssdqual.emulate.model.DriveModel` allows now, and
writes them to the folder's throttle files. It runs as a small daemon next to the test session::

    python -m pytest_ssdqual.emulate.controller --model M.yaml --speed 1 --cgroup DIR \\
        --device 7:3 --parent PID [--loop /dev/loop3 --workdir DIR] [--log FILE]

Behaviour (all byte counts from ``blkio.throttle.io_service_bytes``, I/O counts from
``blkio.throttle.io_serviced`` of the device in the folder; idle time is time without new I/O,
counted once it lasts ``IDLE_MIN_S``: the throttle itself leaves gaps of ~0.1 s between dispatches
at low caps, and a drive's firmware also waits a moment before it takes the host for idle):

* **Fresh caps**: ``caps`` of the model.
* **SLC cache**: every byte written fills the cache (up to ``size_bytes``); once full, the
  post-cache write caps apply. Idle time empties it at ``idle_flush_mbps``.
* **Dirty state**: once ``after_write_bytes`` were written since the drive was last clean, the
  dirty caps apply.
* **Recovery after idle**: while dirty, idle seconds accumulate; at each step's ``idle_s`` the
  caps are lifted ``lift_pct`` % of the way from dirty back to fresh. At 100 % the drive is clean
  (the byte count restarts). Writing ``after_write_bytes`` more undoes a partial recovery (lift
  and accumulated idle go back to 0).
* The caps in force are, per dimension, the tightest of those that apply.

Throttle files (Linux ``Documentation/admin-guide/cgroup-v1/blkio-controller.rst``):
``blkio.throttle.{read,write}_{bps,iops}_device`` take ``"MAJ:MIN VALUE"`` (bytes/s or IO/s;
``0`` removes the rule); ``blkio.throttle.io_service_bytes`` / ``io_serviced`` list
``"MAJ:MIN Read|Write|... N"``. A new cap acts on a running fio within ~0.2 s here.

The daemon clears its throttles on SIGTERM. When its parent (the pytest process) is gone without
having stopped it (SIGKILL, crash), it tears the drive down itself: throttles cleared, processes
left in the folder killed, folder removed, loop device detached, work folder deleted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pytest_ssdqual.emulate.model import CAP_FIELDS, Caps, DriveModel, load_model

__all__ = [
    "THROTTLE_FILES",
    "BlkioThrottle",
    "IoCounters",
    "ThrottleController",
    "main",
    "run_loop",
    "throttle_values",
]

#: Model cap -> cgroup-v1 blkio throttle file.
THROTTLE_FILES: dict[str, str] = {
    "read_bw_mbps": "blkio.throttle.read_bps_device",
    "write_bw_mbps": "blkio.throttle.write_bps_device",
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
}

#: Seconds between polls of the counters.
DEFAULT_INTERVAL_S = 0.1

#: A stretch without I/O counts as idle (from its start) once it lasts this long, in seconds.
IDLE_MIN_S = 0.5

#: Seconds between two log lines when nothing changes.
LOG_EVERY_S = 1.0

LOG_HEADER = (
    "t_s,read_bytes,write_bytes,idle_s,cache_used_bytes,written_since_clean_bytes,dirty,"
    "lift_pct,read_bps,write_bps,read_iops,write_iops"
)


@dataclass(frozen=True)
class IoCounters:
    """Cumulative I/O of one device in one blkio folder.

    Attributes:
        read_bytes, write_bytes: bytes (``io_service_bytes`` Read / Write).
        ios: I/Os of any direction (``io_serviced`` Total, else Read + Write).
    """

    read_bytes: int = 0
    write_bytes: int = 0
    ios: int = 0


def throttle_values(caps: Caps) -> dict[str, int]:
    """Caps -> the integers the throttle files take: bytes/s (MB/s x 10^6) and IO/s; 0 = no rule.

    A cap is never rounded to 0 (which would lift it): the smallest is 1.
    """
    out: dict[str, int] = {}
    for name in CAP_FIELDS:
        value = caps.get(name)
        if value is None:
            out[name] = 0
        elif name.endswith("_mbps"):
            out[name] = max(1, round(value * 1e6))
        else:
            out[name] = max(1, round(value))
    return out


class ThrottleController:
    """The drive's state and the caps it allows; pure logic, no I/O, time given by the caller.

    Args:
        model: the drive model, ``@SPEED`` already applied (:meth:`DriveModel.with_speed`).

    Attributes (state, for logs and tests): ``written_bytes`` total, ``idle_s`` since the last
    I/O, ``cache_used_bytes``, ``written_since_clean_bytes``, ``lift_pct``, ``idle_credit_s``
    (idle accumulated while dirty).
    """

    def __init__(self, model: DriveModel) -> None:
        self.model = model
        self.written_bytes = 0
        self.read_bytes = 0
        self.idle_s = 0.0
        self.cache_used_bytes = 0.0
        self.written_since_clean_bytes = 0
        self.lift_pct = 0.0
        self.idle_credit_s = 0.0
        self._written_since_credit = 0
        self._last: IoCounters | None = None
        self._last_t: float | None = None

    @property
    def dirty(self) -> bool:
        """True once the dirty state's byte count was reached since the drive was clean."""
        d = self.model.dirty
        return d is not None and self.written_since_clean_bytes >= d.after_write_bytes

    @property
    def cache_full(self) -> bool:
        slc = self.model.slc_cache
        return slc is not None and self.cache_used_bytes >= slc.size_bytes

    def step(self, now_s: float, counters: IoCounters) -> Caps:
        """Account for what happened since the last call and return the caps for now.

        Args:
            now_s: a monotonic time in seconds.
            counters: cumulative counters read now. The first call only sets the baseline (a
                restarted controller starts from FOB whatever the folder counted before); a
                counter that went down (folder reset) counts as no I/O.
        """
        if self._last is None or self._last_t is None:  # the baseline: the drive starts FOB
            self._last, self._last_t = counters, now_s
            return self.caps()
        dt = max(0.0, now_s - self._last_t)
        written = max(0, counters.write_bytes - self._last.write_bytes)
        active = counters.ios != self._last.ios or written > 0 or (
            counters.read_bytes != self._last.read_bytes)
        self._last, self._last_t = counters, now_s
        self.read_bytes = counters.read_bytes
        self.written_bytes += written
        self._account_writes(written)
        if active:
            self.idle_s = 0.0
        else:
            before, self.idle_s = self.idle_s, self.idle_s + dt
            if self.idle_s >= IDLE_MIN_S:  # the whole stretch counts once it is long enough
                self._account_idle(self.idle_s - before if before >= IDLE_MIN_S else self.idle_s)
        return self.caps()

    def _account_writes(self, written: int) -> None:
        if written <= 0:
            return
        slc = self.model.slc_cache
        if slc is not None:
            self.cache_used_bytes = min(float(slc.size_bytes), self.cache_used_bytes + written)
        dirty = self.model.dirty
        if dirty is None:
            return
        self.written_since_clean_bytes += written
        if self.idle_credit_s > 0 or self.lift_pct > 0:
            self._written_since_credit += written
            if self._written_since_credit >= dirty.after_write_bytes:
                self.lift_pct = self.idle_credit_s = 0.0
                self._written_since_credit = 0

    def _account_idle(self, dt: float) -> None:
        slc = self.model.slc_cache
        if slc is not None and self.cache_used_bytes > 0:
            self.cache_used_bytes = max(0.0, self.cache_used_bytes - slc.idle_flush_mbps * 1e6 * dt)
        if not self.dirty or not self.model.recovery:
            return
        self.idle_credit_s += dt
        for stp in self.model.recovery:
            if self.idle_credit_s >= stp.idle_s - 1e-9:
                self.lift_pct = max(self.lift_pct, stp.lift_pct)
        if self.lift_pct >= 100:
            self.written_since_clean_bytes = 0
            self.lift_pct = self.idle_credit_s = 0.0
            self._written_since_credit = 0

    def caps(self) -> Caps:
        """The caps in force for the current state (tightest of fresh, post-cache, dirty)."""
        caps = self.model.caps
        slc = self.model.slc_cache
        if slc is not None and self.cache_full:
            caps = caps.tightest(slc.caps)
        dirty = self.model.dirty
        if dirty is not None and self.dirty:
            lifted: dict[str, float | None] = {}
            for name in CAP_FIELDS:
                low, high = dirty.caps.get(name), self.model.caps.get(name)
                if low is None or high is None:
                    lifted[name] = low
                else:
                    lifted[name] = low + (high - low) * self.lift_pct / 100
            caps = caps.tightest(Caps(**lifted))
        return caps

    def log_fields(self, t_s: float, values: dict[str, int]) -> str:
        """One CSV line (``LOG_HEADER``) for the state and the throttle ``values`` in force."""
        return (
            f"{t_s:.3f},{self.read_bytes},{self.written_bytes},{self.idle_s:.3f},"
            f"{self.cache_used_bytes:.0f},{self.written_since_clean_bytes},{int(self.dirty)},"
            f"{self.lift_pct:g},{values['read_bw_mbps']},{values['write_bw_mbps']},"
            f"{values['read_iops']},{values['write_iops']}"
        )


class BlkioThrottle:
    """The throttle files and counters of one device in one cgroup-v1 blkio folder.

    Args:
        group: the folder (``/sys/fs/cgroup/blkio/ssdqual-emu-...``; any folder holding the same
            file names works, e.g. in tests).
        device: ``(major, minor)`` of the loop device.
    """

    def __init__(self, group: Path, device: tuple[int, int]) -> None:
        self.group = Path(group)
        self.device = device
        self.rule = f"{device[0]}:{device[1]}"
        self._written: dict[str, int] = {}

    def counters(self) -> IoCounters:
        """Read ``io_service_bytes`` and ``io_serviced`` for the device (zeros before any I/O).

        Raises:
            OSError: the folder is gone.
        """
        service = self._rows("blkio.throttle.io_service_bytes")
        serviced = self._rows("blkio.throttle.io_serviced")
        ios = serviced.get("Total", serviced.get("Read", 0) + serviced.get("Write", 0))
        return IoCounters(service.get("Read", 0), service.get("Write", 0), ios)

    def _rows(self, name: str) -> dict[str, int]:
        rows: dict[str, int] = {}
        for line in (self.group / name).read_text().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == self.rule and parts[2].isdigit():
                rows[parts[1]] = int(parts[2])
        return rows

    def apply(self, caps: Caps) -> dict[str, int]:
        """Write the caps (only the files whose value changed). Returns the values in force.

        Raises:
            OSError: a throttle file cannot be written (folder gone, bad value).
        """
        values = throttle_values(caps)
        for name, value in values.items():
            if self._written.get(name) != value:
                (self.group / THROTTLE_FILES[name]).write_text(f"{self.rule} {value}\n")
                self._written[name] = value
        return values

    def clear(self) -> None:
        """Remove every throttle rule of the device (value 0). Never raises for a gone folder."""
        for name, file in THROTTLE_FILES.items():
            try:
                (self.group / file).write_text(f"{self.rule} 0\n")
            except OSError:
                pass
            self._written[name] = 0


def run_loop(
    throttle: BlkioThrottle,
    controller: ThrottleController,
    *,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
    interval_s: float = DEFAULT_INTERVAL_S,
    should_stop: Callable[[], bool] = lambda: False,
    log: TextIO | None = None,
    logged_values: dict[str, int] | None = None,
) -> None:
    """Poll the counters, update the controller, write the caps; until ``should_stop()``.

    Sleeps so that polls stay ``interval_s`` apart on average (a slow poll is not made up).
    Logs a CSV line (``LOG_HEADER``) when the throttle values change and every ``LOG_EVERY_S``;
    ``logged_values`` are values the caller already logged at the start.

    Raises:
        OSError: the cgroup folder vanished.
    """
    start = clock()
    last_values = logged_values
    last_log = 0.0 if logged_values is not None else -LOG_EVERY_S
    while not should_stop():
        now = clock()
        values = throttle.apply(controller.step(now, throttle.counters()))
        t = now - start
        if log is not None and (values != last_values or t - last_log >= LOG_EVERY_S):
            log.write(controller.log_fields(t, values) + "\n")
            log.flush()
            last_log = t
        last_values = values
        sleep(max(0.0, interval_s - (clock() - now)))


def _kill_members(group: Path) -> None:
    """SIGKILL every process still in the folder (fio jobs of a session that died)."""
    try:
        pids = [int(p) for p in (group / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def orphan_cleanup(throttle: BlkioThrottle, *, loop: str | None, workdir: str | None) -> None:
    """Tear the drive down when the session died without doing it (best effort, no raise)."""
    throttle.clear()
    _kill_members(throttle.group)
    for _ in range(50):
        try:
            throttle.group.rmdir()
            break
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.1)
    if loop:
        subprocess.run(["losetup", "-d", loop], check=False, capture_output=True)
    if workdir:
        shutil.rmtree(workdir, ignore_errors=True)


def _device(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(":")
    if not (major.isdigit() and minor.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not MAJ:MIN")
    return int(major), int(minor)


def main(argv: Sequence[str] | None = None) -> int:
    """Daemon entry point. Prints ``ready`` on stdout once the first caps are in force."""
    parser = argparse.ArgumentParser(prog="python -m pytest_ssdqual.emulate.controller")
    parser.add_argument("--model", required=True, help="drive model YAML")
    parser.add_argument("--speed", type=float, default=1.0, help="factor on every cap")
    parser.add_argument("--cgroup", required=True, type=Path, help="blkio folder")
    parser.add_argument("--device", required=True, type=_device, help="MAJ:MIN")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL_S)
    parser.add_argument("--parent", type=int, default=None, help="pid to outlive: on its exit, "
                        "tear the drive down")
    parser.add_argument("--loop", default=None, help="loop device to detach when orphaned")
    parser.add_argument("--workdir", default=None, help="folder to delete when orphaned")
    parser.add_argument("--log", type=Path, default=None, help="CSV log of the caps")
    args = parser.parse_args(argv)

    model = load_model(args.model).with_speed(args.speed)
    throttle = BlkioThrottle(args.cgroup, args.device)
    controller = ThrottleController(model)
    stop = {"signal": False}

    def on_signal(_signo: int, _frame: object) -> None:
        stop["signal"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    orphaned = {"yes": False}

    def should_stop() -> bool:
        if args.parent is not None and os.getppid() != args.parent:
            orphaned["yes"] = True
        return stop["signal"] or orphaned["yes"]

    fresh_log = args.log is not None and (not args.log.exists() or args.log.stat().st_size == 0)
    log = open(args.log, "a", encoding="utf-8") if args.log else None  # a restart appends
    try:
        if log is not None and fresh_log:
            log.write(LOG_HEADER + "\n")
        values = throttle.apply(controller.step(time.monotonic(), throttle.counters()))
        if log is not None:
            log.write(controller.log_fields(0.0, values) + "\n")
            log.flush()
        sys.stdout.write("ready\n")
        sys.stdout.flush()
        run_loop(throttle, controller, interval_s=args.interval, should_stop=should_stop,
                 log=log, logged_values=values)
    except OSError as exc:
        if not stop["signal"]:
            sys.stderr.write(f"emu_controller: {exc}\n")
            return 1
    finally:
        if orphaned["yes"]:
            orphan_cleanup(throttle, loop=args.loop, workdir=args.workdir)
        else:
            throttle.clear()
        if log is not None:
            log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
