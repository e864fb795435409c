"""``pytest_ssdqual.drive`` on real block devices: loop devices over files this test creates.

Needs root and ``losetup`` (util-linux); skipped with the reason otherwise. Nothing here writes
to a device it did not create: the loop devices sit on image files under ``tmp_path`` and are
detached (after unmounting and ``swapoff``) in ``finally`` blocks. The disk holding ``/`` is only
inspected (sysfs, mountinfo, and no open at all), never opened for writing.

What is proven on the real kernel (not on a fake tree): the refusal for an unconfirmed loop device
names its serial (the backing file, from ``identity.identify``); confirming that serial allows
writes; a mounted, a swap and an exclusively opened device are refused, and refusing leaves the
filesystem intact; the root filesystem's disk is a system disk; a partition is rejected as a
``--drive`` value and a partitioned disk is refused.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import struct
import subprocess
import time
import uuid
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.drive import signatures
from pytest_ssdqual.drive.blockdev import inspect_block_device
from pytest_ssdqual.drive.identity import DriveIdentity
from pytest_ssdqual.drive.safety import write_refusal_reasons
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.errors import ConfigError, SafetyRefusal

MIB = 1024 * 1024

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root to set up loop devices"),
    pytest.mark.skipif(
        shutil.which("losetup") is None, reason="losetup (util-linux) is not installed"
    ),
]


def run(*argv: str) -> str:
    """Run a tool; fail the test with its output when it fails."""
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(argv)} exited {proc.returncode}: {proc.stderr.strip()}")
    return proc.stdout


def need(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")


def wait_for(check: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


@contextlib.contextmanager
def attached_loop(image: Path, *, partscan: bool = False) -> Iterator[str]:
    """``losetup -f --show --direct-io=on [-P] IMAGE``; detached on exit."""
    argv = ["losetup", "-f", "--show", "--direct-io=on"] + (["-P"] if partscan else [])
    device = run(*argv, str(image)).strip()
    assert device.startswith("/dev/loop"), device
    try:
        yield device
    finally:
        subprocess.run(["losetup", "-d", device], check=False)


@contextlib.contextmanager
def mounted(device: str, mount_point: Path) -> Iterator[Path]:
    mount_point.mkdir(exist_ok=True)
    run("mount", device, str(mount_point))
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], check=False)


def make_image(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def open_target(device: str, *confirmed: str) -> DriveTarget:
    return DriveTarget.open(
        parse_drive_option(device), confirmed_serials=confirmed, file_size_bytes=MIB
    )


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A blank 32 MiB loop device and its backing file."""
    image = make_image(tmp_path / "disk.img", 32 * MIB)
    with attached_loop(image) as device:
        yield device, image


def test_loop_not_confirmed_then_confirmed(loop: tuple[str, Path]) -> None:
    device, image = loop
    spec = parse_drive_option(device)
    assert (spec.kind, spec.path) == ("block", device)

    target = open_target(device)
    name = os.path.basename(device)
    assert target.id == name
    assert target.identity.kind == "loop"
    assert target.identity.serial == str(image)  # a loop device's serial is its backing file
    assert target.size_bytes == 32 * MIB
    assert target.fio_filename == device
    assert target.state is not None
    assert (target.state.partitions, target.state.holders, target.state.mounts) == ((), (), ())
    assert not target.state.is_system_disk and not target.state.read_only
    assert list(target.write_refusals) == [
        f"/dev/{name} (loop device over {image}) is not confirmed for destruction: a loop "
        "device is confirmed by the absolute path of its backing file, not by its /dev name "
        f"(loop numbers are reused): --confirm-destroy={image} (losetup -l lists each loop "
        "device with its backing file)"
    ]
    with pytest.raises(SafetyRefusal):
        target.assert_write_allowed()

    confirmed = open_target(device, str(image))
    assert confirmed.write_refusals == ()
    confirmed.assert_write_allowed()
    confirmed.recheck_identity()

    wrong = open_target(device, "/tmp/some-other.img")
    assert wrong.write_refusals[0].startswith(
        f"--confirm-destroy values /tmp/some-other.img do not confirm /dev/{name}, the loop "
        f"device over {image}: ")


def test_mounted_loop_is_refused_and_left_intact(loop: tuple[str, Path], tmp_path: Path) -> None:
    need("mkfs.ext4", "mount", "umount", "e2fsck")
    device, image = loop
    run("mkfs.ext4", "-q", "-F", device)
    target = open_target(device, str(image))
    # not mounted yet, but not blank: the unmounted ext4 on it refuses writes (wipefs)
    assert [r.split(": ")[0] for r in target.write_refusals] == [f"{device} is not blank"]
    assert "finds ext4 (UUID " in target.write_refusals[0]

    canary = os.urandom(64 * 1024)
    with mounted(device, tmp_path / "mnt") as mnt:
        (mnt / "canary.bin").write_bytes(canary)
        os.sync()
        with pytest.raises(SafetyRefusal) as info:
            target.assert_write_allowed()  # re-read before the write: now mounted
        assert info.value.reasons == [
            f"{device} is mounted at {mnt}: unmount it first (umount {mnt})"
        ]
        fresh = open_target(device, str(image))
        assert fresh.state is not None and fresh.state.mounts == (str(mnt),)
        assert list(fresh.write_refusals) == info.value.reasons

    # Refusing wrote nothing: the filesystem is clean, mounts again, the file is intact.
    run("e2fsck", "-f", "-n", device)
    with mounted(device, tmp_path / "mnt") as mnt:
        assert (mnt / "canary.bin").read_bytes() == canary
    with pytest.raises(SafetyRefusal, match="is not blank: wipefs --no-act --json finds ext4"):
        target.assert_write_allowed()  # unmounted again: its file system still refuses writes


def test_swap_on_loop_is_refused(loop: tuple[str, Path]) -> None:
    need("mkswap", "swapon", "swapoff")
    device, image = loop
    run("mkswap", device)
    run("swapon", "--priority", "-2", device)  # lowest priority: nothing should land here
    try:
        target = open_target(device, str(image))
        assert target.state is not None and target.state.mounts == ("[swap]",)
        assert target.write_refusals == (
            f"{device} is in use as swap: turn it off first (swapoff, see /proc/swaps)",
        )
    finally:
        run("swapoff", device)


def test_exclusively_opened_loop_is_refused(loop: tuple[str, Path]) -> None:
    """Busy without a visible mount (as when mounted in another namespace): EBUSY refuses."""
    device, image = loop
    target = open_target(device, str(image))
    target.assert_write_allowed()
    fd = os.open(device, os.O_RDONLY | os.O_EXCL)
    try:
        with pytest.raises(SafetyRefusal) as info:
            target.assert_write_allowed()
        [reason] = info.value.reasons
        assert reason.startswith(f"{device} is busy: the kernel refuses to open it exclusively")
    finally:
        os.close(fd)
    target.assert_write_allowed()


def root_disk() -> str:
    """Kernel name of the whole disk holding ``/``, from ``st_dev`` and ``/sys/dev/block``."""
    dev = os.stat("/").st_dev
    major, minor = os.major(dev), os.minor(dev)
    if major == 0:
        pytest.skip(f"/ is on an anonymous device {major}:{minor} (btrfs, overlay, tmpfs)")
    node = Path(os.path.realpath(f"/sys/dev/block/{major}:{minor}"))
    if not (node / "dev").exists():
        pytest.skip(f"/sys/dev/block/{major}:{minor} does not name a block device")
    return node.parent.name if (node / "partition").exists() else node.name


def test_root_disk_is_a_system_disk_read_only_inspection() -> None:
    name = root_disk()
    device = f"/dev/{name}"
    if not os.path.exists(device):
        pytest.skip(f"{device} has no device node here")
    assert parse_drive_option(device).kind == "block"

    state = inspect_block_device(device)
    assert state.name == name
    assert state.is_system_disk
    assert "/" in state.mounts or state.holders or state.partitions
    reasons = write_refusal_reasons(state, serial="ROOT-SERIAL", confirmed_serials=["ROOT-SERIAL"])
    assert reasons[0].startswith(f"{device} holds the root filesystem (/)")

    def identity(path: str, *, kind: str, sysfs: Path = Path("/sys")) -> DriveIdentity:
        return DriveIdentity("root disk", "ROOT-SERIAL", "1", 0, 512, 512, "unknown", False)

    target = DriveTarget.open(
        parse_drive_option(device),
        confirmed_serials=["ROOT-SERIAL"],  # even confirmed: never
        file_size_bytes=MIB,
        identity_fn=identity,
    )
    assert "holds the root filesystem" in target.write_refusals[0]
    with pytest.raises(SafetyRefusal):
        target.assert_write_allowed()


def write_mbr(image: Path, partitions: list[tuple[int, int]]) -> None:
    """An MS-DOS partition table (type 0x83 entries of ``(first_lba, sectors)``) at LBA 0."""
    mbr = bytearray(512)
    for i, (first, count) in enumerate(partitions):
        entry = struct.pack("<B3sB3sII", 0, b"\0\0\0", 0x83, b"\0\0\0", first, count)
        mbr[446 + 16 * i : 462 + 16 * i] = entry
    mbr[510:512] = b"\x55\xaa"
    with open(image, "r+b") as f:
        f.write(mbr)


def write_gpt(image: Path) -> None:
    """A GUID partition table (UEFI 2.10, section 5.3) with one Linux partition from LBA 2048:
    the protective MBR at LBA 0, the header at LBA 1, 128 entries at LBA 2, and the backup
    entries and header at the end, with their CRC32s -- what ``sfdisk``/``parted`` write, into
    the image file itself, so no kernel rescan ever sees it."""
    sectors = image.stat().st_size // 512
    entries = bytearray(128 * 128)
    linux_fs = uuid.UUID("0FC63DAF-8483-4772-8E79-3D69D8477DE4").bytes_le
    entries[:128] = struct.pack("<16s16sQQQ72s", linux_fs, uuid.uuid4().bytes_le, 2048,
                                sectors - 34, 0, "data".encode("utf-16-le").ljust(72, b"\0"))
    entries_crc = zlib.crc32(entries)
    disk_guid = uuid.uuid4().bytes_le

    def header(lba: int, other: int, entries_lba: int) -> bytes:
        fields = struct.pack("<8sIIIIQQQQ16sQIII", b"EFI PART", 0x10000, 92, 0, 0, lba, other,
                             34, sectors - 34, disk_guid, entries_lba, 128, 128, entries_crc)
        crc = struct.pack("<I", zlib.crc32(fields))
        return (fields[:16] + crc + fields[20:]).ljust(512, b"\0")

    mbr = bytearray(512)
    mbr[446:462] = struct.pack("<B3sB3sII", 0, b"\0\x02\0", 0xEE, b"\xff\xff\xff", 1,
                               min(sectors - 1, 0xFFFFFFFF))
    mbr[510:512] = b"\x55\xaa"
    with open(image, "r+b") as f:
        f.write(mbr + header(1, sectors - 1, 2) + entries)
        f.seek((sectors - 33) * 512)
        f.write(entries + header(sectors - 1, 1, sectors - 33))


def _unregistered(device: str) -> None:
    """The kernel registered no partition of ``device`` (attached without ``-P``)."""
    name = os.path.basename(device)
    assert not [p for p in os.listdir(f"/sys/block/{name}") if p.startswith(name)]
    assert inspect_block_device(device).partitions == ()


def _with_signature(kind: str, image: Path) -> str:
    """Write a ``kind`` signature into ``image`` (before it is attached); what wipefs says."""
    if kind == "gpt":
        write_gpt(image)
        size = image.stat().st_size
        return f"gpt at offset 0x200, gpt at offset {size - 512:#x}, PMBR at offset 0x1fe"
    if kind == "ext4":
        need("mkfs.ext4")
        run("mkfs.ext4", "-q", "-F", "-U", "5a1d0a6e-0000-4000-8000-000000000001", str(image))
        return "ext4 (UUID 5a1d0a6e-0000-4000-8000-000000000001) at offset 0x438"
    need("mkswap")
    run("mkswap", "-U", "5a1d0a6e-0000-4000-8000-000000000002", str(image))
    return "swap (UUID 5a1d0a6e-0000-4000-8000-000000000002) at offset 0xff6"


@pytest.mark.parametrize("kind", ["gpt", "ext4", "swap"])
def test_a_signature_the_kernel_has_not_registered_refuses_writes(
    tmp_path: Path, kind: str
) -> None:
    need("wipefs")
    image = make_image(tmp_path / "disk.img", 64 * MIB)
    found = _with_signature(kind, image)
    with attached_loop(image) as device:
        _unregistered(device)
        target = open_target(device, str(image))  # confirmed by its serial
        assert list(target.write_refusals) == [
            f"{device} is not blank: wipefs --no-act --json finds {found} on the device "
            "itself (a partition table or file system the kernel has not registered: no "
            "partitions in sysfs): this tool only writes to blank drives; wipe the signatures "
            f"(wipefs -a {device}) if the data on the drive is really meant for destruction"
        ]
        with pytest.raises(SafetyRefusal, match="is not blank: wipefs"):
            target.assert_write_allowed()
        # the signature was only read: the image still holds it
        assert signatures.probe_signatures(device) is not None
        assert signatures.probe_signatures(device).signatures  # type: ignore[union-attr]


def test_blank_loop_is_still_accepted_and_probed_without_writing(tmp_path: Path) -> None:
    image = make_image(tmp_path / "disk.img", 64 * MIB)
    with attached_loop(image) as device:
        probe = signatures.probe_signatures(device)
        assert probe == signatures.SignatureProbe(device, (), "wipefs --no-act --json")
        target = open_target(device, str(image))
        assert target.write_refusals == ()
        target.assert_write_allowed()
    assert image.read_bytes() == bytes(64 * MIB)


def test_blkid_answers_when_wipefs_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    need("blkid")
    real = signatures._which
    monkeypatch.setattr(signatures, "_which", lambda name: None if name == "wipefs" else
                        real(name))
    image = make_image(tmp_path / "disk.img", 64 * MIB)
    write_gpt(image)
    with attached_loop(image) as device:
        target = open_target(device, str(image))
        assert len(target.write_refusals) == 1
        assert target.write_refusals[0].startswith(
            f"{device} is not blank: blkid -p finds gpt on the device itself")


def test_no_probe_tool_refuses_writes_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(signatures, "_which", lambda name: None)
    image = make_image(tmp_path / "disk.img", 64 * MIB)
    with attached_loop(image) as device:
        target = open_target(device, str(image))  # blank and confirmed: only the probe fails
        assert list(target.write_refusals) == [
            f"{device} could not be checked for partition tables and file-system signatures "
            "(wipefs is not installed; blkid is not installed): a drive that was not checked "
            "is not known to be blank; install util-linux (apt-get install util-linux: "
            f"wipefs, blkid) or find out why the probe fails (wipefs --no-act {device})"
        ]


def test_partitioned_loop(tmp_path: Path) -> None:
    image = make_image(tmp_path / "parted.img", 64 * MIB)
    write_mbr(image, [(2048, 32768), (2048 + 32768, 32768)])
    with attached_loop(image, partscan=True) as device:
        name = os.path.basename(device)
        part1, part2 = f"{name}p1", f"{name}p2"
        sys_disk = Path("/sys/block") / name

        def parts_present() -> bool:
            return (sys_disk / part2 / "partition").exists()

        if not wait_for(parts_present, 1.0):
            # Kernel built without the MS-DOS parser (CONFIG_MSDOS_PARTITION off, as on this
            # project's VMs): partx reads the table in user space and adds them with BLKPG.
            need("partx")
            run("partx", "--add", device)
        assert wait_for(parts_present), "partitions did not appear"
        assert wait_for(lambda: os.path.exists(f"/dev/{part1}")), f"no /dev/{part1} node"

        with pytest.raises(ConfigError) as info:
            parse_drive_option(f"/dev/{part1}")
        assert info.value.key == "--drive"
        assert f"is partition {part1} of {name}: give the whole disk" in str(info.value)

        target = open_target(device, str(image))
        assert target.state is not None and target.state.partitions == (part1, part2)
        assert list(target.write_refusals) == [
            f"{device} has partitions {part1}, {part2}: this tool only writes to blank drives; "
            f"wipe the partition table (wipefs -a {device}) if the drive is really meant for "
            "destruction"
        ]


def test_tool_outputs_read_as_signatures_or_as_a_failure() -> None:
    # an old util-linux prints nothing for a blank device; blkid -p: 2 = nothing, 8 = several
    assert signatures._wipefs(0, "") == ()
    assert signatures._wipefs(1, "") == "exit status 1"
    assert signatures._wipefs(0, "garbage") == "output is not wipefs's JSON"
    assert signatures._blkid(2, "") == ()
    # review: blkid exits 2 also when it cannot open the device; that is no blank drive
    assert signatures._blkid(2, "", "blkid: error: /dev/loop0: Permission denied\n") == \
        "exit status 2"
    assert signatures._wipefs(0, "[" * 100_000) == "output is not wipefs's JSON"  # no Recursion
    assert signatures._blkid(8, "") == (
        signatures.Signature("several signatures (blkid: ambivalent result)"),)
    assert signatures._blkid(0, "DEVNAME=/dev/sdb\nPTUUID=ab\nPTTYPE=dos\n") == (
        signatures.Signature("dos"),)
    assert signatures.probe_signatures("/nonexistent/sdz") is None  # not a device: no probe
