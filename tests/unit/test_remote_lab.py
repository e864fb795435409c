"""The remote-drive test lab (``tests/remote_lab.py``) leaves nothing behind: an image whose
loop device cannot be attached is removed at once (issue 19, F11: it stayed in /dev/shm), and
an attached one is detached and removed by ``stop()``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..remote_lab import RemoteLab


def _images(lab: RemoteLab, n: int) -> set[Path]:
    shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else lab.folder
    return set(shm.glob(f"ssdqual-remote-{n}-*.img"))


def test_an_image_that_cannot_be_attached_is_removed(tmp_path: Path) -> None:
    n = 9000 + os.getpid() % 1000  # this test's own image names
    lab = RemoteLab(tmp_path)
    lab.losetup = "false"  # coreutils' false: losetup failing (no free loop device, no root)
    with pytest.raises(subprocess.CalledProcessError):
        lab.attach_image(n, 1024 * 1024)
    assert _images(lab, n) == set() and lab.attached == []
    lab.losetup = "losetup"
    with pytest.raises(OSError, match="Invalid argument"):  # posix_fallocate of 0 bytes
        lab.attach_image(n, 0)
    assert _images(lab, n) == set() and lab.attached == []
    assert lab.stop() == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (losetup)")
def test_an_attached_image_is_detached_and_removed_by_stop(tmp_path: Path) -> None:
    n = 9000 + os.getpid() % 1000
    lab = RemoteLab(tmp_path)
    try:
        dev, image = lab.attach_image(n, 1024 * 1024)
        backing = Path(f"/sys/block/{Path(dev).name}/loop/backing_file")
        assert backing.read_text().strip() == str(image)
        assert image.stat().st_size == 1024 * 1024
    finally:
        assert lab.stop() == []
    assert not backing.exists() and not image.exists()
