"""``drive.whole_drive``: a firmware update or a power cut on /dev/nvme0n1 also reaches the
controller's other namespaces; each must pass the write checks (a fake /sys tree)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_ssdqual.drive import whole_drive
from pytest_ssdqual.drive.blockdev import BlockDeviceState


def _sysfs(tmp_path: Path, *names: str) -> Path:
    for name in names:
        (tmp_path / "block" / name).mkdir(parents=True)
    return tmp_path


def test_the_other_namespaces_are_those_of_the_same_controller(tmp_path: Path) -> None:
    sysfs = _sysfs(tmp_path, "nvme0n1", "nvme0n2", "nvme0n12", "nvme1n1", "sda", "nvme0c0n1")
    assert whole_drive.other_namespaces("nvme0n1", sysfs=sysfs) == ["nvme0n12", "nvme0n2"]
    assert whole_drive.other_namespaces("nvme1n1", sysfs=sysfs) == []
    assert whole_drive.other_namespaces("sda", sysfs=sysfs) == []
    assert whole_drive.other_namespaces("loop3", sysfs=sysfs) == []


def test_a_mounted_sibling_namespace_refuses_the_action(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # --drive=/dev/nvme0n1 confirmed, but nvme0n2 of the same controller is mounted: the
    # firmware update or power cut would reach it
    sysfs = _sysfs(tmp_path, "nvme0n1", "nvme0n2")
    def state(mounts: tuple[str, ...]) -> BlockDeviceState:
        return BlockDeviceState(name="nvme0n2", major=259, minor=1, partitions=(), holders=(),
                                mounts=mounts, is_system_disk=False, read_only=False)

    states = {"/dev/nvme0n2": state(("/srv/data",))}
    monkeypatch.setattr(whole_drive, "inspect_block_device", lambda path, sysfs: states[path])
    reasons = whole_drive.whole_drive_refusals("/dev/nvme0n1", serial="S1", confirmed=("S1",),
                                               action="a power cut", sysfs=sysfs)
    assert reasons == ["a power cut reaches every namespace of nvme0, /dev/nvme0n2 too: "
                       "/dev/nvme0n2 is mounted at /srv/data: unmount it first "
                       "(umount /srv/data)"]
    states["/dev/nvme0n2"] = state(())
    assert whole_drive.whole_drive_refusals("/dev/nvme0n1", serial="S1", confirmed=("S1",),
                                            action="a power cut", sysfs=sysfs) == []
