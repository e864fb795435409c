"""Misuse that must never write: no write job is started, and the message says
why. Every fio invocation is recorded by the stand-in ``tests/fakefio.py``, so "no write job"
is read from its log, not inferred.

Two levels:

* the guard in front of every write job (``QualSession.run_workload``), on a fake sysfs tree:
  system disk, mounted partition, partitions, holders (LVM/md/dm: there is no device-mapper on
  the CI machines, so holders exist only on the fake tree), swap, read-only, no or a wrong
  confirmation, a serial that changed since the drive was opened;
* the plugin on real loop devices (root): a wrong ``--confirm-destroy``, a read-only loop
  device, a partitioned one, one that becomes read-only in the middle of the session, and one
  whose backing image is swapped between the drive's opening and its write job (same
  ``/dev/loopN`` path, another serial).

Covered elsewhere and not repeated: the disk holding ``/`` and a mounted loop device through the
plugin (``test_plugin.py``), each refusal reason's wording (``test_drive.py``) and the kernel's
view of real mounted/swap/busy/partitioned loop devices (``test_drive_blockdev.py``).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, PROFILES
from pytest_ssdqual.drive.inventory import resolve_assignment
from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.errors import DeviceError, SafetyRefusal
from pytest_ssdqual.qualify.session import DriveContext, QualSession, SessionOptions, drive_facts
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import FakeFio, need_root
from ..unit.test_drive import SERIAL, FakeIdentify, FakeTree, open_block
from ..unit.test_drive_blockdev import make_image, write_gpt, write_mbr

WRITE = CATALOG["seq_write_128k_qd32"]


@pytest.fixture
def tree(tmp_path: Path) -> FakeTree:
    """sda holds / (on sda2); further disks are added per case."""
    fake = FakeTree(tmp_path / "fake")
    fake.disk("sda", "8:0")
    fake.part("sda", "sda2", "8:2")
    fake.mount("8:2", "/", "/dev/sda2")
    return fake


# --------------------------------------------------------------------------- the guard


def _context(tree: FakeTree, name: str, *confirmed: str, identify: FakeIdentify | None = None,
             tmp_path: Path) -> DriveContext:
    target = open_block(tree, name, *confirmed, identify=identify)
    assignment = resolve_assignment(target.identity, None)
    facts = drive_facts(target.identity, assignment)
    return DriveContext(
        target=target, assignment=assignment, facts=facts,
        limits=ThresholdSet().resolve(facts),
        lock=DriveLock(target.lock_key, lock_dir=tmp_path),
    )


def _session(fake_fio: FakeFio, tmp_path: Path) -> QualSession:
    options = SessionOptions(
        specs=(), confirmed_serials=(SERIAL,), profile=PROFILES["smoke"],
        thresholds=ThresholdSet(), fio_bin=fake_fio.path,
    )
    return QualSession.create(options, tmp_path / "scratch")


def _sdc_with(setup: Callable[[FakeTree], None]) -> Callable[[FakeTree], str]:
    def make(tree: FakeTree) -> str:
        setup(tree)
        return "sdc"
    return make


CASES: dict[str, tuple[Callable[[FakeTree], str], tuple[str, ...], str]] = {
    "system disk": (lambda tree: "sda", (SERIAL,),
                    "holds the root filesystem (/) or another system filesystem"),
    "mounted partition": (
        _sdc_with(lambda t: (t.disk("sdc", "8:32"), t.part("sdc", "sdc1", "8:33"),
                             t.mount("8:33", "/srv/data", "/dev/sdc1"))),
        (SERIAL,), "is mounted at /srv/data: unmount it first (umount /srv/data)"),
    "partitions": (
        _sdc_with(lambda t: (t.disk("sdc", "8:32"), t.part("sdc", "sdc1", "8:33"))),
        (SERIAL,), "has partitions sdc1: this tool only writes to blank drives"),
    "holders on a partition": (
        _sdc_with(lambda t: (t.disk("sdc", "8:32"),
                             t.part("sdc", "sdc1", "8:33", holders=("dm-3",)))),
        (SERIAL,), "is in use by dm-3 (LVM/md/dm): remove it from that stack first"),
    "holders on the disk": (
        _sdc_with(lambda t: t.disk("sdc", "8:32", holders=("md127",))),
        (SERIAL,), "is in use by md127 (LVM/md/dm)"),
    "swap": (
        _sdc_with(lambda t: (t.disk("sdc", "8:32"), t.swap("/dev/sdc"))),
        (SERIAL,), "is in use as swap: turn it off first"),
    "read-only": (
        _sdc_with(lambda t: t.disk("sdc", "8:32", ro=1)),
        (SERIAL,), "is read-only (/sys/block/sdc/ro is 1)"),
    "not confirmed": (
        _sdc_with(lambda t: t.disk("sdc", "8:32")),
        (), f"is not confirmed for destruction: add --confirm-destroy={SERIAL}"),
    "confirmation mismatch": (
        _sdc_with(lambda t: t.disk("sdc", "8:32")),
        ("S3Z9NB0K999999",),
        f"--confirm-destroy values S3Z9NB0K999999 do not match this drive's serial {SERIAL}"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_guard_before_every_write_job_refuses_and_starts_no_fio(
    tree: FakeTree, fake_fio: FakeFio, tmp_path: Path, case: str
) -> None:
    make, confirmed, reason = CASES[case]
    ctx = _context(tree, make(tree), *confirmed, tmp_path=tmp_path)
    with pytest.raises(SafetyRefusal) as info:
        _session(fake_fio, tmp_path).run_workload(ctx, WRITE, tmp_path / "work")
    assert reason in str(info.value)
    assert str(info.value).startswith(f"write to {ctx.target.device} refused: ")
    assert fake_fio.calls() == []  # not even fio --version: the guard comes first
    assert not (tmp_path / "work").exists()


def test_a_serial_that_changed_since_opening_stops_the_write_before_fio(
    tree: FakeTree, fake_fio: FakeFio, tmp_path: Path
) -> None:
    tree.disk("sdc", "8:32")
    ctx = _context(tree, "sdc", SERIAL, identify=FakeIdentify(SERIAL, "S3Z9NB0K000001"),
                   tmp_path=tmp_path)
    with pytest.raises(DeviceError, match=(
        f"now has serial S3Z9NB0K000001, was {SERIAL} at start: refusing to continue"
    )):
        _session(fake_fio, tmp_path).run_workload(ctx, WRITE, tmp_path / "work")
    assert fake_fio.job_rws() == []
    assert any("now has serial" in r for r in ctx.target.write_refusals)  # and for good


# --------------------------------------------------------------------------- the plugin, real loops

SUITE = """
import os
import subprocess

import pytest

def test_1_read(qualify):
    qualify("seq_read_128k_qd32")

@pytest.mark.destructive
def test_2_write(qualify):
    qualify("seq_write_128k_qd32")
"""

SUITE_CHANGE = """
import os
import subprocess

import pytest

def test_1_read(qualify):
    qualify("seq_read_128k_qd32")

@pytest.mark.destructive
def test_2_write(qualify):
    qualify("seq_write_128k_qd32")

def test_3_the_drive_changes(ssd_drive):  # on the drive, so it runs in order
    for argv in os.environ["CHANGE_CMDS"].split(";"):
        subprocess.run(argv.split(), check=True)

@pytest.mark.destructive
def test_4_write_again(qualify):
    qualify("rand_write_4k_qd32")
"""

THRESHOLDS = """
version: 1
profiles:
  - name: loop floors
    match: {kind: loop}
    source: "test limits"
    limits:
      seq_read_128k_qd32: {bw_mbps: {min: 1}}
"""


def _loop_backing(device: str) -> str:
    try:
        text = Path(f"/sys/block/{os.path.basename(device)}/loop/backing_file").read_text()
    except OSError:
        return ""
    return text.strip().removesuffix(" (deleted)")


@contextlib.contextmanager
def own_loop(image: Path, *extra: str) -> Iterator[str]:
    """Attach ``image``; on exit detach the device only while one of *our* images backs it
    (a detached ``/dev/loopN`` may meanwhile belong to another user of this machine)."""
    need_root("losetup")
    device = subprocess.run(
        ["losetup", "-f", "--show", "--direct-io=on", *extra, str(image)],
        check=True, capture_output=True, text=True,
    ).stdout.strip()
    try:
        yield device
    finally:
        subprocess.run(["blockdev", "--setrw", device], check=False, capture_output=True)
        if Path(_loop_backing(device)).parent == image.parent:
            subprocess.run(["losetup", "-d", device], check=False)


def _run(pytester: pytest.Pytester, fake_fio: FakeFio, device: str, confirm: str,
         suite: str = SUITE) -> pytest.RunResult:
    pytester.makepyfile(test_suite=suite)
    th = pytester.path / "limits.yaml"
    th.write_text(THRESHOLDS)
    return pytester.runpytest(
        f"--drive={device}", f"--confirm-destroy={confirm}", f"--thresholds={th}",
        f"--fio-bin={fake_fio.path}", "--ssd-profile=smoke", "-rs", "-p", "no:cacheprovider",
    )


def test_wrong_confirmation_serial_never_writes(
    pytester: pytest.Pytester, fake_fio: FakeFio, tmp_path: Path
) -> None:
    image = make_image(tmp_path / "disk.img", 64 * 1024 * 1024)
    with own_loop(image) as device:
        result = _run(pytester, fake_fio, device, confirm=str(tmp_path / "other.img"))
    result.assert_outcomes(passed=1, skipped=1)
    out = result.stdout.str()
    assert (f"--confirm-destroy values {tmp_path / 'other.img'} do not confirm {device}, the "
            f"loop device over {image}: a loop device is confirmed by the absolute path of its "
            f"backing file, not by its /dev name") in out
    assert f"--confirm-destroy={image} (losetup -l lists" in out
    assert fake_fio.job_rws() == ["read"]
    assert all("--readonly" in c["argv"] for c in fake_fio.calls() if c["job"])


def test_read_only_loop_device_never_writes(
    pytester: pytest.Pytester, fake_fio: FakeFio, tmp_path: Path
) -> None:
    image = make_image(tmp_path / "disk.img", 64 * 1024 * 1024)
    with own_loop(image, "--read-only") as device:
        result = _run(pytester, fake_fio, device, confirm=str(image))
    result.assert_outcomes(passed=1, skipped=1)
    name = os.path.basename(device)
    assert f"{device} is read-only (/sys/block/{name}/ro is 1)" in result.stdout.str()
    assert fake_fio.job_rws() == ["read"]


def test_partitioned_loop_device_never_writes(
    pytester: pytest.Pytester, fake_fio: FakeFio, tmp_path: Path
) -> None:
    image = make_image(tmp_path / "disk.img", 64 * 1024 * 1024)
    write_mbr(image, [(2048, 32768)])
    with own_loop(image, "--partscan") as device:
        name = os.path.basename(device)
        if not Path(f"/sys/block/{name}/{name}p1").exists():
            # kernels without the MS-DOS partition parser: add the partitions from user space
            subprocess.run(["partx", "--add", device], check=True)
        result = _run(pytester, fake_fio, device, confirm=str(image))
    result.assert_outcomes(passed=1, skipped=1)
    assert f"{device} has partitions {name}p1: this tool only writes to blank drives" in (
        result.stdout.str()
    )
    assert fake_fio.job_rws() == ["read"]


def test_partition_table_the_kernel_has_not_registered_never_gets_a_write(
    pytester: pytest.Pytester, fake_fio: FakeFio, tmp_path: Path
) -> None:
    # GPT written into the image before it is attached without -P: no rescan, sysfs blank
    image = make_image(tmp_path / "disk.img", 64 * 1024 * 1024)
    write_gpt(image)
    with own_loop(image) as device:
        name = os.path.basename(device)
        assert not [p for p in os.listdir(f"/sys/block/{name}") if p.startswith(name)]
        result = _run(pytester, fake_fio, device, confirm=str(image))
    result.assert_outcomes(passed=1, skipped=1)
    assert (f"{device} is not blank: wipefs --no-act --json finds gpt at offset 0x200, gpt at "
            f"offset {64 * 1024 * 1024 - 512:#x}, PMBR at offset 0x1fe on the device itself"
            ) in result.stdout.str()
    assert f"wipe the signatures (wipefs -a {device})" in result.stdout.str()
    assert fake_fio.job_rws() == ["read"]  # no prefill, no write job: reads as found
    assert all("--readonly" in c["argv"] for c in fake_fio.calls() if c["job"])


def test_blank_confirmed_loop_device_is_still_written(
    pytester: pytest.Pytester, fake_fio: FakeFio, tmp_path: Path
) -> None:
    image = make_image(tmp_path / "disk.img", 64 * 1024 * 1024)
    with own_loop(image) as device:
        result = _run(pytester, fake_fio, device, confirm=str(image))
    result.assert_outcomes(passed=2)
    assert fake_fio.job_rws() == ["write", "read", "write"]  # prefill, the read, the write


def test_loop_device_made_read_only_mid_session_gets_no_more_writes(
    pytester: pytest.Pytester, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = make_image(tmp_path / "disk.img", 64 * 1024 * 1024)
    with own_loop(image) as device:
        monkeypatch.setenv("CHANGE_CMDS", f"blockdev --setro {device}")
        result = _run(pytester, fake_fio, device, confirm=str(image), suite=SUITE_CHANGE)
    result.assert_outcomes(passed=3, failed=1)  # test_4 is an error: refused before fio
    out = result.stdout.str()
    assert f"SafetyRefusal: write to {device} refused: {device} is read-only" in out
    # the prefill before the first read, the read, the write; test_4's randwrite never started
    assert fake_fio.job_rws() == ["write", "read", "write"]


def test_drive_swapped_behind_the_same_loop_path_is_never_written(
    pytester: pytest.Pytester, fake_fio: FakeFio, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Same /dev/loopN, another image (another serial) between the opening and the write job.
    image = make_image(tmp_path / "disk.img", 64 * 1024 * 1024)
    other = make_image(tmp_path / "other.img", 64 * 1024 * 1024)
    with own_loop(image) as device:
        monkeypatch.setenv(
            "CHANGE_CMDS",
            f"losetup -d {device};losetup --direct-io=on {device} {other}",
        )
        result = _run(pytester, fake_fio, device, confirm=str(image), suite=SUITE_CHANGE)
        assert _loop_backing(device) == str(other), "the swap did not happen as planned"
    result.assert_outcomes(passed=3, failed=1)
    out = result.stdout.str()
    assert f"DeviceError: {device} now has serial {other}, was {image} at start: " \
        "refusing to continue" in out
    # the prefill before the first read, the read, the write; nothing ran after the swap
    assert fake_fio.job_rws() == ["write", "read", "write"]
