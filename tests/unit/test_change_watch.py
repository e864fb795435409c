"""``drive.change_watch``: the full write check of a block device is reused between the runs of
one test only while nothing the kernel shows has changed.

Two levels: ``ChangeWatch`` on a fake sysfs tree (each part of the stamp, changed alone, makes
the next check a full one), and ``DriveTarget`` / ``QualSession`` on real loop devices (root):
a partition table written between two runs (no rescan: sysfs stays blank), a partition table
the kernel registers and a mount between two runs are each refused before the next write, with
the real ``wipefs`` and fio. The identity check between runs is skipped only while the device
number and ``diskseq`` stay those of this test's last one: a loop device attached again to
another image between two runs is identified again and refused.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.drive.blockdev import BlockDeviceState
from pytest_ssdqual.drive.change_watch import (
    ChangeWatch,
    identify_between_runs,
    read_stamp,
    write_counters,
)
from pytest_ssdqual.drive.signatures import SignatureProbe
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.errors import DeviceError, SafetyRefusal
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import TINY
from .test_drive_blockdev import (
    attached_loop,
    make_image,
    mounted,
    open_target,
    wait_for,
    write_mbr,
)

MIB = 1024 * 1024
STAT = "  100 0 800 0  {writes} 0 {sectors} 0 {inflight} 0 0  {discards} 0 {dsectors} 0 0 0\n"
STATE = BlockDeviceState("sdb", 8, 16, (), (), (), False, False)


class Fake:
    """A fake /sys/block/sdb, mountinfo and swaps, and a watch over them that counts its full
    inspections and probes."""

    def __init__(self, root: Path) -> None:
        self.disk = root / "sys" / "block" / "sdb"
        for sub in ("holders", "slaves"):
            (self.disk / sub).mkdir(parents=True)
        (self.disk / "ro").write_text("0\n")
        (self.disk / "diskseq").write_text("7\n")
        (self.disk / "inflight").write_text("       0        0\n")
        self.counters(writes=10, sectors=80)
        self.mountinfo = root / "mountinfo"
        self.mountinfo.write_text("22 1 8:2 / / rw - ext4 /dev/sda2 rw\n")
        self.swaps = root / "swaps"
        self.swaps.write_text("Filename Type Size Used Priority\n")
        self.now = 100.0
        self.inspections = 0
        self.probes = 0
        self.watch = ChangeWatch("/nonexistent/sdb", "sdb", sysfs=root / "sys",
                                 mountinfo=self.mountinfo, swaps=self.swaps,
                                 clock=lambda: self.now, prober=self._probe)

    def counters(self, *, writes: int, sectors: int, inflight: int = 0, discards: int = 0,
                 dsectors: int = 0) -> None:
        (self.disk / "stat").write_text(STAT.format(writes=writes, sectors=sectors,
                                                    inflight=0, discards=discards,
                                                    dsectors=dsectors))
        (self.disk / "inflight").write_text(f"       0 {inflight:8d}\n")

    def _probe(self, device: str) -> SignatureProbe:
        self.probes += 1
        return SignatureProbe(device, (), "wipefs --no-act --json")

    def _inspect(self) -> BlockDeviceState:
        self.inspections += 1
        return STATE

    def check(self) -> int:
        """One write check (state, then probe, as ``DriveTarget.refresh``); returns how many
        full inspections there have been."""
        assert self.watch.state(self._inspect) == STATE
        assert self.watch.probe("/dev/sdb").checked  # type: ignore[union-attr]
        assert self.probes == self.inspections  # a probe with every full check, no other
        return self.inspections


@pytest.fixture
def fake(tmp_path: Path) -> Fake:
    return Fake(tmp_path)


def test_nothing_changed_reuses_the_full_check(fake: Fake) -> None:
    assert [fake.check() for _ in range(4)] == [1, 1, 1, 1]
    assert fake.watch.full_checks == 1


CHANGES: dict[str, Callable[[Fake], object]] = {
    "a partition registered": lambda f: (f.disk / "sdb1").mkdir() or
    (f.disk / "sdb1" / "partition").write_text("1\n"),
    "a holder (dm, md)": lambda f: (f.disk / "holders" / "dm-0").mkdir(),
    "a slave": lambda f: (f.disk / "slaves" / "sdc").mkdir(),
    "read-only": lambda f: (f.disk / "ro").write_text("1\n"),
    "another medium (diskseq)": lambda f: (f.disk / "diskseq").write_text("8\n"),
    "a mount": lambda f: f.mountinfo.write_text(
        f.mountinfo.read_text() + "40 22 8:16 / /mnt rw - ext4 /dev/sdb rw\n"),
    "swap on": lambda f: f.swaps.write_text(
        f.swaps.read_text() + "/dev/sdb partition 1020 0 -2\n"),
    "a write by another program": lambda f: f.counters(writes=11, sectors=81),
    "sectors written only": lambda f: f.counters(writes=10, sectors=88),
    "a discard": lambda f: f.counters(writes=10, sectors=80, discards=1, dsectors=8),
    "a write in flight": lambda f: f.counters(writes=10, sectors=80, inflight=1),
    "the stat file gone": lambda f: (f.disk / "stat").unlink(),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_any_change_makes_the_next_check_a_full_one(fake: Fake, change: str) -> None:
    assert fake.check() == 1
    assert fake.check() == 1
    CHANGES[change](fake)
    assert fake.check() == 2


def test_a_new_test_and_age_make_a_full_check(fake: Fake) -> None:
    assert fake.check() == 1
    fake.watch.new_test()
    assert fake.check() == 2
    assert fake.check() == 2
    fake.now += 30.0  # MAX_AGE_S: still reused at exactly 30 s
    assert fake.check() == 2
    fake.now += 0.5
    assert fake.check() == 3


def test_settle_takes_the_sessions_own_writes_and_nothing_else(fake: Fake) -> None:
    assert fake.check() == 1
    fake.counters(writes=50, sectors=4000)  # this session's fio run: 3920 sectors
    assert fake.watch.moved_bytes() == 3920 * 512
    assert fake.watch.settle(3920 * 512)
    assert fake.check() == 1
    # without a settle (a run killed before it ended cleanly) its writes refresh in full
    fake.counters(writes=60, sectors=5000)
    assert fake.check() == 2
    # settle keeps the layout of the full check: a mount during the run is still seen
    fake.counters(writes=70, sectors=6000)
    CHANGES["a mount"](fake)
    assert fake.watch.settle(1000 * 512)
    assert fake.check() == 3


def test_a_write_fio_did_not_report_makes_the_next_check_full(fake: Fake) -> None:
    """The counters moved by more than the run's own bytes (a foreign write before, during
    or after it, or ramp I/O fio does not count), by less, or the run's bytes are unknown:
    the stamp is dropped, and the next check is a full one."""
    assert fake.check() == 1
    fake.counters(writes=51, sectors=4008)  # fio's 3920 sectors, and 8 more of a GPT write
    assert not fake.watch.settle(3920 * 512)
    assert fake.check() == 2
    fake.counters(writes=60, sectors=5000, discards=2, dsectors=2048)  # fio's write + trim
    assert fake.watch.settle((992 + 2048) * 512)
    assert fake.check() == 2
    fake.counters(writes=61, sectors=5100, discards=2, dsectors=2048)
    assert not fake.watch.settle(101 * 512)  # fio reported more than the disk shows
    assert fake.check() == 3
    fake.counters(writes=62, sectors=5108, discards=2, dsectors=2048)
    assert not fake.watch.settle(None)  # fio's output unreadable
    assert fake.check() == 4
    assert fake.check() == 4


def test_write_counters_read_the_write_and_discard_fields(fake: Fake) -> None:
    fake.counters(writes=5, sectors=40, inflight=2, discards=3, dsectors=24)
    assert write_counters(fake.disk) == (5, 40, 3, 24, 2)
    (fake.disk / "stat").write_text(" 1 2 3 4 5 6 7 8 9 10 11\n")  # a kernel before 4.18
    assert write_counters(fake.disk) == (5, 7, 2)
    assert write_counters(fake.disk / "missing") is None


def test_the_stamp_holds_what_the_full_check_reads(fake: Fake, tmp_path: Path) -> None:
    stamp = read_stamp("/nonexistent/sdb", "sdb", sysfs=tmp_path / "sys",
                       mountinfo=fake.mountinfo, swaps=fake.swaps)
    assert stamp.layout == (None, "7\n", ("diskseq", "holders", "inflight", "ro", "slaves",
                                          "stat"), (), (), (), "0\n", None,
                            fake.mountinfo.read_text(), fake.swaps.read_text())
    assert stamp.writes == (10, 80, 0, 0, 0)


# --------------------------------------------------------------------------- real devices

def need(*tools: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to set up loop devices")
    for tool in ("losetup", "wipefs", *tools):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    need()
    image = make_image(tmp_path / "disk.img", 32 * MIB)
    with attached_loop(image) as device:
        yield device, image


def _write_mbr_to(device: str, staging: Path) -> None:
    """An MS-DOS partition table written to the device itself, as another program would
    (no partition rescan), and flushed; ``staging`` is a scratch file."""
    staging.write_bytes(bytes(512))
    write_mbr(staging, [(2048, 8192)])
    fd = os.open(device, os.O_WRONLY)
    try:
        os.write(fd, staging.read_bytes())
        os.fsync(fd)
    finally:
        os.close(fd)


def _mount_tables() -> tuple[str, str]:
    return Path("/proc/self/mountinfo").read_text(), Path("/proc/swaps").read_text()


def assert_reused(step: Callable[[], object], watch: ChangeWatch) -> None:
    """``step`` (a write check, or a run with its check) reuses the last full check. Other users
    of a shared host mount and unmount their own devices at any time, which changes the mount
    table and rightly makes a full check: a full check made while the mount table differs from
    the one the last full check stamped (``layout[8:10]``: mountinfo, swaps; also a change
    between that check and this step), or changes during the step, is tried again for up to
    90 s (CI runs the end-to-end tests beside this one, and they mount and unmount their RAM
    folders: five tries in a row all met a change there, 2026-12-06); a full check with the
    same tables throughout fails."""
    deadline = time.monotonic() + 90
    tries = 0
    while tries < 5 or time.monotonic() < deadline:
        tries += 1
        stamped = watch._stamp.layout[8:10] if watch._stamp is not None else None
        before, checks = _mount_tables(), watch.full_checks
        step()
        if watch.full_checks == checks:
            return
        assert not (stamped == before == _mount_tables()), "a full check, nothing changed"
        time.sleep(0.05 * min(tries, 20))
    pytest.skip(f"the mount table changed during each of {tries} tries in 90 s (other users "
                "of this host)")


def test_partition_table_written_between_two_runs_is_refused(loop: tuple[str, Path],
                                                             tmp_path: Path) -> None:
    device, image = loop
    target = open_target(device, str(image))
    assert target.watch is not None
    target.assert_write_allowed()
    assert_reused(target.assert_write_allowed, target.watch)  # the first check stands
    checks = target.watch.full_checks
    _write_mbr_to(device, tmp_path / "mbr.bin")  # another program, no rescan: sysfs blank
    assert not [p for p in os.listdir(f"/sys/block/{Path(device).name}")
                if p.startswith(Path(device).name)]
    with pytest.raises(SafetyRefusal) as info:
        target.assert_write_allowed()
    assert target.watch.full_checks == checks + 1
    assert info.value.reasons == [
        f"{device} is not blank: wipefs --no-act --json finds dos at offset 0x1fe on the device "
        "itself (a partition table or file system the kernel has not registered: no partitions "
        "in sysfs): this tool only writes to blank drives; wipe the signatures (wipefs -a "
        f"{device}) if the data on the drive is really meant for destruction"]


def test_partitions_the_kernel_registers_between_two_runs_are_refused(tmp_path: Path) -> None:
    need("partx")
    image = make_image(tmp_path / "disk.img", 32 * MIB)
    with attached_loop(image, partscan=True) as device:
        name = Path(device).name
        target = open_target(device, str(image))
        assert target.watch is not None
        target.assert_write_allowed()
        assert_reused(target.assert_write_allowed, target.watch)
        checks = target.watch.full_checks
        _write_mbr_to(device, tmp_path / "mbr.bin")
        # as if the table came with this session's own fio writes
        assert target.watch.settle(target.watch.moved_bytes())
        # partx adds it from user space (BLKPG): this project's VMs' kernels have no MS-DOS
        # partition parser, and a kernel rescan would find nothing
        subprocess.run(["partx", "--add", device], check=True, capture_output=True)
        assert wait_for(lambda: Path(f"/sys/block/{name}/{name}p1").exists())
        with pytest.raises(SafetyRefusal) as info:
            target.assert_write_allowed()
        assert target.watch.full_checks == checks + 1
        assert info.value.reasons[0].startswith(
            f"{device} has partitions {name}p1: this tool only writes to blank drives")


def test_a_mount_between_two_runs_is_refused(loop: tuple[str, Path], tmp_path: Path) -> None:
    need("mkfs.ext4", "mount", "umount")
    device, image = loop
    target = open_target(device, str(image))
    assert target.watch is not None
    target.assert_write_allowed()
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    # the file system counted as this session's own writes
    assert target.watch.settle(target.watch.moved_bytes())
    # what the watch cannot see: writes inside a run (module docstring)
    assert_reused(target.assert_write_allowed, target.watch)
    checks = target.watch.full_checks
    with mounted(device, tmp_path / "mnt") as mnt:
        with pytest.raises(SafetyRefusal) as info:
            target.assert_write_allowed()
        assert info.value.reasons == [f"{device} is mounted at {mnt}: unmount it first "
                                      f"(umount {mnt})"]
    assert target.watch.full_checks == checks + 1


def test_session_runs_reuse_the_check_and_refuse_after_a_foreign_write(
        loop: tuple[str, Path], tmp_path: Path) -> None:
    """Real fio through ``QualSession.run_job``: its own writes settle the watch (the next run
    reuses the full check); a partition table written between two runs refuses the next."""
    need("fio")
    device, image = loop
    limits = tmp_path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    (tmp_path / "scratch").mkdir()
    session = QualSession.create(SessionOptions(
        specs=(), confirmed_serials=(str(image),), profile=TINY,
        thresholds=ThresholdSet.load([limits])), tmp_path / "scratch")
    try:
        ctx = session.drive(parse_drive_option(device))
        watch = ctx.target.watch
        assert watch is not None
        job = (f"[w]\nfilename={device}\nrw=write\nbs=128k\nsize=4m\ndirect=1\n"
               "ioengine=psync\n")

        def run(name: str) -> None:
            session.run_job(ctx, name, job, tmp_path / "work", writes=True,
                            expected_runtime_s=None, timeout_s=60)

        runs = iter(range(100))
        run(f"run{next(runs)}")
        assert_reused(lambda: run(f"run{next(runs)}"), watch)  # fio's own writes: no wipefs
        assert_reused(lambda: run(f"run{next(runs)}"), watch)
        wrote = session.written[device].writing_runs
        _write_mbr_to(device, tmp_path / "mbr.bin")
        with pytest.raises(SafetyRefusal, match="is not blank: wipefs --no-act --json finds dos"):
            run("fourth")
        assert not (tmp_path / "work" / "fourth.json").exists()  # fio never started
        assert session.written[device].writing_runs == wrote
    finally:
        session.close()


# --------------------------------------------------------------------------- identity checks

def test_identity_is_read_again_only_for_another_medium_a_new_test_or_age(fake: Fake) -> None:
    node = fake.disk.parent.parent.parent / "sdb-node"  # st_rdev of a regular file: 0
    node.write_text("")
    (fake.disk / "removable").write_text("0\n")  # a fixed disk (else identified every run)
    fake.watch = ChangeWatch(str(node), "sdb", sysfs=fake.disk.parent.parent,
                             mountinfo=fake.mountinfo, swaps=fake.swaps, clock=lambda: fake.now)
    reads: list[int] = []

    def between() -> None:
        identify_between_runs(fake.watch, lambda: reads.append(1))

    between()
    between()
    between()
    assert len(reads) == 1
    (fake.disk / "diskseq").write_text("8\n")  # another medium behind the same node
    between()
    between()
    assert len(reads) == 2
    fake.watch.new_test()
    between()
    assert len(reads) == 3
    fake.now += 31
    between()
    assert len(reads) == 4
    (fake.disk / "diskseq").unlink()  # a kernel before 5.15: read before every run
    between()
    between()
    assert len(reads) == 6
    identify_between_runs(None, lambda: reads.append(1))  # no watch (a file target)
    assert len(reads) == 7


def test_a_failed_identity_check_is_not_remembered(fake: Fake, tmp_path: Path) -> None:
    node = tmp_path / "node"
    node.write_text("")
    watch = ChangeWatch(str(node), "sdb", sysfs=tmp_path / "sys", mountinfo=fake.mountinfo,
                        swaps=fake.swaps)

    def fails() -> None:
        raise DeviceError("/dev/sdb now has serial B, was A at start: refusing to continue")

    for _ in range(2):
        with pytest.raises(DeviceError, match="now has serial B"):
            identify_between_runs(watch, fails)


def test_a_loop_device_attached_again_between_two_runs_is_identified_again(
        tmp_path: Path) -> None:
    need()
    image, other = (make_image(tmp_path / n, 16 * MIB) for n in ("disk.img", "other.img"))
    with attached_loop(image) as device:
        target = open_target(device, str(image))
        assert target.watch is not None
        identify_between_runs(target.watch, target.recheck_identity)
        medium = target.watch.medium()
        assert medium is not None and target.watch.same_medium(medium)
        subprocess.run(["losetup", "-d", device], check=True)
        # a detach while udev still probes the device is deferred to its last close (slow on
        # a loaded host): attach the other image once it is gone
        assert wait_for(lambda: not Path(f"/sys/block/{Path(device).name}/loop").exists()
                        or not Path(f"/sys/block/{Path(device).name}/loop/backing_file")
                        .exists(), 30)
        subprocess.run(["losetup", "--direct-io=on", device, str(other)], check=True)
        assert not target.watch.same_medium(target.watch.medium())  # diskseq moved on
        with pytest.raises(DeviceError, match=f"now has serial {other}, was {image} at start"):
            identify_between_runs(target.watch, target.recheck_identity)
        with pytest.raises(SafetyRefusal, match=f"now has serial {other}"):
            target.assert_write_allowed()
