"""``EmulatedTarget.recheck_identity``: the loop device must still have the session's image."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_ssdqual.emulate.target import EmulatedTarget
from pytest_ssdqual.errors import DeviceError, SafetyRefusal


def _target(loop: str, image: Path) -> EmulatedTarget:
    """An EmulatedTarget without building a drive: only what recheck_identity looks at."""
    target = EmulatedTarget.__new__(EmulatedTarget)
    target.spec = SimpleNamespace(raw="emu:fake", kind="emu", path="fake")  # type: ignore[assignment]
    target.fio_filename = loop
    target.drive = SimpleNamespace(image_path=image)  # type: ignore[assignment]
    target.write_refusals = ()
    target._sticky = ()
    return target


def test_a_loop_device_without_backing_file_is_refused(tmp_path: Path) -> None:
    target = _target("/dev/loop-ssdqual-none", tmp_path / "image.img")
    with pytest.raises(DeviceError, match="/dev/loop-ssdqual-none has no backing file any more"):
        target.recheck_identity()
    assert "refusing to continue" in target.write_refusals[0]


def _backing_file(loop: str) -> str:
    """The file behind ``loop`` (sysfs), or "" when there is none."""
    try:
        return Path(f"/sys/block/{Path(loop).name}/loop/backing_file").read_text().strip()
    except OSError:
        return ""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"), reason="needs root")
def test_the_loop_device_must_still_back_the_image(tmp_path: Path) -> None:
    image, other = tmp_path / "image.img", tmp_path / "other.img"
    for f in (image, other):
        f.write_bytes(b"\0" * (1 << 20))
    loop = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True,
                          text=True, check=True).stdout.strip()
    try:
        target = _target(loop, image)
        target.recheck_identity()  # same image: fine
        assert target.write_refusals == ()
        mismatch = _target(loop, other)
        with pytest.raises(DeviceError, match=f"{loop} now has {image} behind it, was the "
                                              f"emulated drive's image {other} at start"):
            mismatch.recheck_identity()
        with pytest.raises(SafetyRefusal):
            mismatch.assert_write_allowed()
    finally:
        subprocess.run(["losetup", "-d", loop], check=False)
    # losetup -d of a device something still has open (udev's probe of the change, slow on a
    # loaded host: CI, 2026-12-06) only marks it to clear on the last close: wait for that
    deadline = time.monotonic() + 30
    while _backing_file(loop) == str(image) and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(DeviceError, match=f"{loop} (has no backing file|now has)"):
        target.recheck_identity()
