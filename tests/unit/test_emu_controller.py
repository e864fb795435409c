"""Tests of ``pytest_ssdqual.emulate`` controller, state and blkio with a fake clock and a fake
blkio folder.

The fake folder holds the same files as a cgroup-v1 blkio folder. A simulated drive reads the
caps the controller wrote to the throttle files and "writes" at the lower of the host speed and
the cap each tick, adding to ``io_service_bytes`` / ``io_serviced``: so the tests follow the
same loop as the real daemon (counters in, caps out), only faster than real time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_ssdqual.emulate.blkio import THROTTLE_FILES, BlkioThrottle, throttle_values
from pytest_ssdqual.emulate.controller import run_loop
from pytest_ssdqual.emulate.model import Caps, DriveModel
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.state import LOG_HEADER, IoCounters, ThrottleController

from ..conftest import REPO

MIB = 2**20
DEV = (7, 3)

SLC = """\
version: 1
identity: {model: SLC demo, serial: S1, firmware: F1, capacity_bytes: 512GB,
           controller: EMU, nand: TLC}
caps: {read_bw_mbps: 500, write_bw_mbps: 400}
slc_cache: {size_bytes: 1GiB, write_bw_mbps: 100, idle_flush_mbps: 200}
"""

DIRTY = """\
version: 1
identity: {model: Dirty demo, serial: S2, firmware: F1, capacity_bytes: 256GB,
           controller: EMU, nand: MLC}
caps: {write_bw_mbps: 300, write_iops: 40000}
dirty: {after_write_bytes: 512MiB, write_bw_mbps: 60, write_iops: 8000}
recovery:
  - {idle_s: 5, lift_pct: 50}
  - {idle_s: 10, lift_pct: 100}
"""


def model(tmp_path: Path, text: str, name: str = "m.yaml") -> DriveModel:
    path = tmp_path / name
    path.write_text(text)
    return load_model(path)


class FakeBlkio:
    """A fake blkio folder plus a drive that obeys its write cap; time is simulated."""

    def __init__(self, folder: Path, host_write_bps: float = 1.5e9) -> None:
        self.folder = folder
        folder.mkdir(exist_ok=True)
        for name in THROTTLE_FILES.values():
            (folder / name).write_text("")
        self.read_bytes = self.write_bytes = self.ios = 0
        self.now = 0.0
        self.host_write_bps = host_write_bps
        self.writing = False
        self.cap_trace: list[tuple[float, int, int]] = []  # (t, write_bytes, write_bps cap)
        self._publish()

    def _publish(self) -> None:
        rule = f"{DEV[0]}:{DEV[1]}"
        (self.folder / "blkio.throttle.io_service_bytes").write_text(
            f"8:0 Read 999\n8:0 Write 999\n{rule} Read {self.read_bytes}\n"
            f"{rule} Write {self.write_bytes}\n{rule} Total {self.read_bytes + self.write_bytes}\n"
            f"Total {self.read_bytes + self.write_bytes + 1998}\n"
        )
        (self.folder / "blkio.throttle.io_serviced").write_text(
            f"8:0 Read 5\n{rule} Read 0\n{rule} Write {self.ios}\n{rule} Total {self.ios}\n"
        )

    def cap(self, name: str = "write_bw_mbps") -> int:
        text = (self.folder / THROTTLE_FILES[name]).read_text().split()
        return int(text[1]) if len(text) == 2 else 0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        """Time passes; if writing, the drive writes at min(host, cap) meanwhile."""
        self.now += seconds
        if self.writing:
            cap = self.cap() or self.host_write_bps
            written = int(min(self.host_write_bps, cap) * seconds)
            self.write_bytes += written
            self.ios += max(1, written // (128 * 1024))
            self._publish()
        self.cap_trace.append((self.now, self.write_bytes, self.cap()))

    def run(self, controller: ThrottleController, seconds: float, *, writing: bool,
            throttle: BlkioThrottle | None = None) -> None:
        self.writing = writing
        end = self.now + seconds
        run_loop(throttle or BlkioThrottle(self.folder, DEV), controller, clock=self.clock,
                 sleep=self.sleep, interval_s=0.1, should_stop=lambda: self.now >= end - 1e-9)


def test_counters_read_the_device_rows_only(tmp_path: Path) -> None:
    fake = FakeBlkio(tmp_path / "g")
    fake.write_bytes, fake.read_bytes, fake.ios = 4096, 8192, 3
    fake._publish()
    assert BlkioThrottle(fake.folder, DEV).counters() == IoCounters(8192, 4096, 3)
    assert BlkioThrottle(fake.folder, (7, 9)).counters() == IoCounters(0, 0, 0)


def test_throttle_values_units_and_no_accidental_zero() -> None:
    values = throttle_values(Caps(read_bw_mbps=556, write_bw_mbps=0.0000001, write_iops=38000))
    assert values == {"read_bw_mbps": 556_000_000, "write_bw_mbps": 1, "read_iops": 0,
                      "write_iops": 38000}


def test_apply_writes_changed_values_only_and_clear_removes_rules(tmp_path: Path) -> None:
    fake = FakeBlkio(tmp_path / "g")
    throttle = BlkioThrottle(fake.folder, DEV)
    throttle.apply(Caps(write_bw_mbps=155, read_iops=8400))
    assert (fake.folder / THROTTLE_FILES["write_bw_mbps"]).read_text() == "7:3 155000000\n"
    assert (fake.folder / THROTTLE_FILES["read_iops"]).read_text() == "7:3 8400\n"
    assert (fake.folder / THROTTLE_FILES["read_bw_mbps"]).read_text() == "7:3 0\n"
    (fake.folder / THROTTLE_FILES["write_bw_mbps"]).unlink()
    throttle.apply(Caps(write_bw_mbps=155, read_iops=6720))  # write cap unchanged: not rewritten
    assert not (fake.folder / THROTTLE_FILES["write_bw_mbps"]).exists()
    assert (fake.folder / THROTTLE_FILES["read_iops"]).read_text() == "7:3 6720\n"
    throttle.clear()
    assert all((fake.folder / f).read_text() == "7:3 0\n" for f in THROTTLE_FILES.values())


def test_slc_cache_full_speed_then_post_cache_cap_then_idle_flush(tmp_path: Path) -> None:
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, SLC))
    fake.run(controller, 5.0, writing=True)
    first_low = next((t, w) for t, w, cap in fake.cap_trace if cap == 100_000_000)
    # the cap drops once 1 GiB is written: one 100 ms poll late at most (400 MB/s x 0.1 s)
    assert 2**30 <= first_low[1] <= 2**30 + 0.1 * 400e6 + 1
    assert first_low[0] == pytest.approx(2**30 / 400e6, abs=0.25)
    assert fake.cap() == 100_000_000
    assert all(cap == 400_000_000 for t, w, cap in fake.cap_trace if w < 2**30)
    # 5 s idle at 200 MB/s flush: 1 GB leaves the cache, so ~1 GB at full speed again
    fake.run(controller, 5.0, writing=False)
    assert controller.cache_used_bytes == pytest.approx(2**30 - 5 * 200e6, abs=0.2 * 200e6)
    assert fake.cap() == 400_000_000
    before = fake.write_bytes
    fake.cap_trace.clear()
    fake.run(controller, 4.0, writing=True)
    refill = next(w for t, w, cap in fake.cap_trace if cap == 100_000_000) - before
    assert refill == pytest.approx(5 * 200e6, rel=0.1)


def test_dirty_state_and_recovery_steps_after_idle(tmp_path: Path) -> None:
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, DIRTY))
    assert fake.cap() == 0  # nothing written before the first poll
    fake.run(controller, 0.2, writing=False)
    assert (fake.cap(), fake.cap("write_iops")) == (300_000_000, 40000)
    fake.run(controller, 4.0, writing=True)
    dirty_at = next(w for t, w, cap in fake.cap_trace if cap == 60_000_000)
    assert 512 * MIB <= dirty_at <= 512 * MIB + 0.1 * 300e6 + 1
    assert (fake.cap(), fake.cap("write_iops")) == (60_000_000, 8000)
    fake.run(controller, 4.5, writing=False)  # below the first step: still dirty
    assert fake.cap() == 60_000_000
    fake.run(controller, 1.0, writing=False)  # 5.5 s idle: half way back
    assert (fake.cap(), fake.cap("write_iops")) == (180_000_000, 24000)
    assert controller.lift_pct == 50
    fake.run(controller, 1.0, writing=True)  # 180 MB written: the lift holds
    assert fake.cap() == 180_000_000
    fake.run(controller, 4.8, writing=False)  # idle accumulates over both periods: 10.3 s
    assert (fake.cap(), fake.cap("write_iops")) == (300_000_000, 40000)
    assert not controller.dirty and controller.written_since_clean_bytes == 0
    fake.cap_trace.clear()
    start = fake.write_bytes
    fake.run(controller, 3.0, writing=True)  # clean again: dirty after another 512 MiB
    again = next(w for t, w, cap in fake.cap_trace if cap == 60_000_000) - start
    assert 512 * MIB <= again <= 512 * MIB + 0.1 * 300e6 + 1


def test_writing_after_a_partial_recovery_undoes_it(tmp_path: Path) -> None:
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, DIRTY))
    fake.run(controller, 3.0, writing=True)
    fake.run(controller, 6.0, writing=False)
    assert fake.cap() == 180_000_000
    fake.run(controller, 4.0, writing=True)  # 512 MiB more at <= 180 MB/s: ~3 s
    assert fake.cap() == 60_000_000 and controller.lift_pct == 0
    assert controller.idle_credit_s == 0


def test_gaps_between_back_to_back_runs_do_not_add_up_to_a_recovery(tmp_path: Path) -> None:
    """Gaps shorter than RECOVERY_IDLE_MIN_S (the host starting the next fio run: 0.2-1 s, more
    when loaded) leave a dirty drive dirty however many there are; an idle period counts from
    its start. (At 0.5 s, loaded-host gaps lifted a test model half way in its steady state.)"""
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, DIRTY))  # 50 % after 5 s, 100 % after 10 s
    fake.run(controller, 3.0, writing=True)
    assert controller.dirty and fake.cap() == 60_000_000
    for _ in range(12):  # 12 x 0.8 s = 9.6 s without writes, 1.2 s of writes (< 512 MiB)
        fake.run(controller, 0.8, writing=False)
        fake.run(controller, 0.1, writing=True)
    assert controller.idle_credit_s == 0 and controller.lift_pct == 0
    assert fake.cap() == 60_000_000
    fake.run(controller, 5.5, writing=False)  # one idle period: from its start (less a poll)
    assert controller.idle_credit_s == pytest.approx(5.4, abs=0.11)
    assert controller.lift_pct == 50 and fake.cap() == 180_000_000


def test_a_model_without_recovery_stays_dirty_however_long_it_idles(tmp_path: Path) -> None:
    text = DIRTY.split("recovery:")[0]
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, text))
    fake.run(controller, 3.0, writing=True)
    fake.run(controller, 60.0, writing=False)
    assert fake.cap() == 60_000_000 and controller.dirty


def test_speed_factor_scales_every_cap_the_controller_writes(tmp_path: Path) -> None:
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, DIRTY).with_speed(0.8))
    fake.run(controller, 4.0, writing=True)
    assert (fake.cap(), fake.cap("write_iops")) == (48_000_000, 6400)
    fake.run(controller, 5.1, writing=False)
    assert fake.cap() == 144_000_000  # 48 + 50 % of (240 - 48)


def test_run_loop_logs_changes_and_once_a_second(tmp_path: Path) -> None:
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, SLC))
    log = tmp_path / "log.csv"
    end = 5.0
    with log.open("w") as fh:
        fh.write(LOG_HEADER + "\n")
        fake.writing = True
        run_loop(BlkioThrottle(fake.folder, DEV), controller, clock=fake.clock, sleep=fake.sleep,
                 interval_s=0.1, should_stop=lambda: fake.now >= end, log=fh)
    rows = [line.split(",") for line in log.read_text().splitlines()[1:]]
    header = LOG_HEADER.split(",")
    assert all(len(r) == len(header) for r in rows)
    caps = [int(r[header.index("write_bps")]) for r in rows]
    assert caps[0] == 400_000_000 and caps[-1] == 100_000_000
    assert 5 <= len(rows) <= 7  # one per second plus the change


def test_daemon_starts_reports_ready_and_clears_its_caps_on_sigterm(tmp_path: Path) -> None:
    """The real daemon process on a fake folder: first caps in force before 'ready', polls,
    and every rule removed on SIGTERM. No root needed."""
    fake = FakeBlkio(tmp_path / "g")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytest_ssdqual.emulate.controller",
         "--model", str(REPO / "emulated" / "jmf667h-l85c-128g.yaml"), "--speed", "0.8",
         "--cgroup", str(fake.folder), "--device", "7:3", "--parent", str(os.getpid()),
         "--log", str(tmp_path / "log.csv"), "--interval", "0.05",
         "--image-bytes", str(256 * 2**20)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        # before a job shape: the fresh caps block only (IOPS come from qd_iops per shape)
        assert fake.cap() == 124_000_000 and fake.cap("read_iops") == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    assert all((fake.folder / f).read_text() == "7:3 0\n" for f in THROTTLE_FILES.values())
    log = (tmp_path / "log.csv").read_text().splitlines()
    assert log[0] == LOG_HEADER and log[1].endswith(",444800000,124000000,0,0,0,-"), log[1]


def test_daemon_rejects_a_bad_device_argument(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_ssdqual.emulate.controller", "--model", "x.yaml",
         "--cgroup", str(tmp_path), "--device", "loop3"],
        capture_output=True, text=True, timeout=30,
    )
    assert proc.returncode == 2 and "'loop3' is not MAJ:MIN" in proc.stderr


def test_gaps_shorter_than_idle_min_are_not_idle(tmp_path: Path) -> None:
    """The throttle leaves short gaps between dispatches at low caps: they must not drain the
    cache (which would lift the post-cache cap for a poll and let a burst through)."""
    fake = FakeBlkio(tmp_path / "g")
    controller = ThrottleController(model(tmp_path, SLC))
    fake.run(controller, 3.0, writing=True)
    assert controller.cache_full
    for _ in range(10):
        fake.run(controller, 0.3, writing=False)
        fake.run(controller, 0.2, writing=True)
    assert controller.cache_full and fake.cap() == 100_000_000
    assert controller.cache_used_bytes == 2**30
    fake.run(controller, 1.0, writing=False)  # a real idle stretch counts from its start
    # (the first poll of the stretch still sees the last writes: 0.9 s of idle counted)
    assert 2**30 - 200e6 <= controller.cache_used_bytes <= 2**30 - 0.8 * 200e6
