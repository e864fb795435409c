"""The emulated drive's controller: blkio counters in, throttle caps out, every ~100 ms.

An emulated drive is a loop device whose fio jobs run in a cgroup-v1 blkio folder
(:mod:`pytest_ssdqual.emulate.emulator`). This module decides, from what the drive has done
so far, which caps its :class:`~pytest_ssdqual.emulate.model.DriveModel` allows now, and
writes them to the folder's throttle files. It runs as a small daemon next to the test session::

    python -m pytest_ssdqual.emulate.controller --model M.yaml --speed 1 --cgroup DIR \\
        --device 7:3 --image-bytes N --parent PID [--loop /dev/loop3 --workdir DIR] [--log FILE]

The job-shape channel: the session writes one JSON line per fio job on the daemon's stdin
(``emulate.shape.shapes_to_json``: ``{"seq": N, "jobs": [...]}``) before fio starts; the daemon
puts the caps for that shape in force at once and answers ``ack N`` on stdout (``ready`` is its
first line). A line it cannot read is answered ``error N? <why>``.

The state machine (fresh caps, SLC cache, dirty state, recovery after idle) is
:mod:`pytest_ssdqual.emulate.state`; the throttle files and counters are
:mod:`pytest_ssdqual.emulate.blkio`.

The daemon clears its throttles on SIGTERM. When its parent (the pytest process) is gone without
having stopped it (SIGKILL, crash), it tears the drive down itself: throttles cleared, processes
left in the folder killed, folder removed, loop device detached, work folder deleted.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from pytest_ssdqual.emulate.blkio import BlkioThrottle, orphan_cleanup
from pytest_ssdqual.emulate.firmware_variants import variant_model
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.power_meter import MeteredThrottle
from pytest_ssdqual.emulate.shape import shapes_from_json
from pytest_ssdqual.emulate.state import LOG_HEADER, ThrottleController
from pytest_ssdqual.emulate.thermal import PUBLISHED_NAME, publish, read_published

__all__ = ["DEFAULT_INTERVAL_S", "LOG_EVERY_S", "main", "run_loop"]

#: Seconds between polls of the counters.
DEFAULT_INTERVAL_S = 0.1

#: Seconds between two log lines when nothing changes.
LOG_EVERY_S = 1.0


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
    inbox: Callable[[float], list[str]] | None = None,
    reply: Callable[[str], None] | None = None,
    after_step: Callable[[], None] | None = None,
) -> None:
    """Poll the counters, update the controller, write the caps; until ``should_stop()``.

    Sleeps so that polls stay ``interval_s`` apart on average (a slow poll is not made up).
    With ``inbox`` (wait up to N seconds for job-shape lines, return those that came) the wait
    between polls is spent in it: each shape is put in force at once (counters read, caps
    written) and answered through ``reply`` (``ack SEQ``).
    Logs a CSV line (``LOG_HEADER``) when the throttle values change and every ``LOG_EVERY_S``;
    ``logged_values`` are values the caller already logged at the start. ``after_step`` is
    called after each poll (the thermal model's publication, ``emulate.thermal``).

    Raises:
        OSError: the cgroup folder vanished.
    """
    start = clock()
    last_values = logged_values
    last_log = 0.0 if logged_values is not None else -LOG_EVERY_S
    while not should_stop():
        now = clock()
        values = throttle.apply(controller.step(now, throttle.counters()))
        if after_step is not None:
            after_step()
        t = now - start
        if log is not None and (values != last_values or t - last_log >= LOG_EVERY_S):
            log.write(controller.log_fields(t, values) + "\n")
            log.flush()
            last_log = t
        last_values = values
        if inbox is None:
            sleep(max(0.0, interval_s - (clock() - now)))
            continue
        while not should_stop() and (left := interval_s - (clock() - now)) > 1e-3:
            lines = inbox(left)
            for line in lines:
                answer = _take_shape(controller, line)
                if answer.startswith("ack"):
                    values = throttle.apply(controller.step(clock(), throttle.counters()))
                    if log is not None:
                        log.write(controller.log_fields(clock() - start, values) + "\n")
                        log.flush()
                    last_values = values
                if reply is not None:
                    reply(answer)


def _take_shape(controller: ThrottleController, line: str) -> str:
    """Apply one job-shape line; the answer for the session (``ack N`` / ``error ...``)."""
    try:
        seq, shapes = shapes_from_json(line)
    except ValueError as exc:
        return f"error {exc}"
    controller.set_shape(shapes)
    return f"ack {seq}"


class _StdinInbox:
    """Job-shape lines from a pipe (the daemon's stdin), waited for with ``select``."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.buffer = b""
        self.closed = False

    def __call__(self, timeout_s: float) -> list[str]:
        if self.closed:
            time.sleep(timeout_s)
            return []
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if not ready:
            return []
        chunk = os.read(self.fd, 65536)
        if not chunk:  # the session closed the pipe: no more shapes
            self.closed = True
            return []
        self.buffer += chunk
        *lines, self.buffer = self.buffer.split(b"\n")
        return [line.decode(errors="replace") for line in lines if line.strip()]


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
    parser.add_argument("--firmware", default=None, help="firmware variant the drive runs")
    parser.add_argument("--cgroup", required=True, type=Path, help="blkio folder")
    parser.add_argument("--device", required=True, type=_device, help="MAJ:MIN")
    parser.add_argument("--interval", type=float, default=DEFAULT_INTERVAL_S)
    parser.add_argument("--parent", type=int, default=None, help="pid to outlive: on its exit, "
                        "tear the drive down")
    parser.add_argument("--loop", default=None, help="loop device to detach when orphaned")
    parser.add_argument("--workdir", default=None, help="folder to delete when orphaned")
    parser.add_argument("--log", type=Path, default=None, help="CSV log of the caps")
    parser.add_argument("--image-bytes", type=int, default=None,
                        help="emulated capacity (sizes in %% of it)")
    parser.add_argument("--power-log", type=Path, default=None,
                        help="CSV of the model's watts per poll (emulate.power_meter)")
    parser.add_argument("--shapes", action="store_true",
                        help="read job shapes on stdin, answer 'ack N' on stdout")
    args = parser.parse_args(argv)

    model = load_model(args.model)
    model = variant_model(model, args.firmware or model.firmware).with_speed(args.speed)
    throttle = BlkioThrottle(args.cgroup, args.device)
    controller = ThrottleController(model, args.image_bytes)
    stop = {"signal": False}
    thermal, hot = controller.thermal, Path(args.workdir or ".") / PUBLISHED_NAME
    if thermal is not None and args.workdir:  # the temperature outlives a restart
        thermal.resume(read_published(hot), time.time())

    def on_signal(_signo: int, _frame: object) -> None:
        stop["signal"] = True

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    orphaned = {"yes": False}

    def should_stop() -> bool:
        if args.parent is not None and os.getppid() != args.parent:
            orphaned["yes"] = True
        return stop["signal"] or orphaned["yes"]

    power_log = open(args.power_log, "a", encoding="utf-8") if args.power_log else None
    if power_log is not None and model.power is not None:  # the emulated power meter
        throttle = MeteredThrottle(args.cgroup, args.device, model, power_log, args.power_log)
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
        def reply(text: str) -> None:
            try:
                sys.stdout.write(text + "\n")
                sys.stdout.flush()
            except OSError:  # the session stopped listening
                pass

        run_loop(throttle, controller, interval_s=args.interval, should_stop=should_stop,
                 log=log, logged_values=values,
                 inbox=_StdinInbox(sys.stdin.fileno()) if args.shapes else None, reply=reply,
                 after_step=(lambda: publish(hot, thermal, time.time()))
                 if thermal is not None and args.workdir else None)
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
