"""End to end: a file target on a file system over a 4Kn device (the found case B35).

A 320 MiB image in RAM on a loop device with 4096-byte logical sectors, ext4 (``-b 4096``)
mounted on a folder of this test: 512-byte direct I/O to a written file there fails with
EINVAL. The file target's identity must give the file system's direct-I/O unit (4096), and
the transfer-size sweep must skip 512 B-2 KiB, name them, and pass with the real fio.
Needs root, losetup, mkfs.ext4 and fio; skips otherwise. Unmounted, detached and deleted at
the end.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.drive.identity import identify
from pytest_ssdqual.methodology.transfer_size import sizes_for

from ..conftest import REPO, detach_loop_device, need_root, ram_folder
from .test_e2e_methodology import _need_fio, _results

pytestmark = pytest.mark.e2e


@pytest.fixture
def ext4_on_4kn(tmp_path: Path) -> Iterator[Path]:
    """A mounted ext4 (4096-byte blocks) on a 4096-byte-sector loop device over a 320 MiB
    image in RAM; yields the mount point (a folder of this test)."""
    need_root("losetup", "mkfs.ext4", "mount", "umount")
    mnt = tmp_path / "mnt4k"
    mnt.mkdir()
    with ram_folder(tmp_path, 320 * 1024 * 1024) as ram:
        image = ram / "b35-4kn.img"
        with open(image, "wb") as fh:
            fh.truncate(320 * 1024 * 1024)
        dev = subprocess.run(["losetup", "-f", "--show", "--sector-size", "4096", str(image)],
                             check=True, capture_output=True, text=True).stdout.strip()
        mounted = False
        try:
            subprocess.run(["mkfs.ext4", "-q", "-F", "-b", "4096", dev], check=True,
                           capture_output=True)
            subprocess.run(["mount", dev, str(mnt)], check=True, capture_output=True)
            mounted = True
            yield mnt
        finally:
            if mounted:
                subprocess.run(["umount", str(mnt)], check=False, capture_output=True)
            detach_loop_device(dev)
            image.unlink(missing_ok=True)


def test_file_on_4kn_fs_gets_4096_and_the_sweep_skips_small_sizes(
    pytester: pytest.Pytester, ext4_on_4kn: Path, tmp_path: Path
) -> None:
    _need_fio()
    probe = ext4_on_4kn / "probe.img"
    subprocess.run(["fallocate", "-l", "16M", str(probe)], check=True)
    ident = identify(str(probe), kind="file")
    assert ident.logical_sector_bytes == 4096
    assert ident.physical_sector_bytes >= 4096
    assert ident.sources[1] in ("statx STATX_DIOALIGN: 4096-byte direct I/O",
                                f"direct I/O in 4096-byte units: logical block size of device "
                                f"{ident.sources[1].rsplit(' ', 1)[1]}")
    measured, skipped = sizes_for(ident.logical_sector_bytes)
    assert skipped == [512, 1024, 2048] and measured[0] == 4096

    alluredir = tmp_path / "allure"
    result = pytester.runpytest_subprocess(
        str(REPO / "suites" / "test_transfer_size.py"), f"--drive=file:{ext4_on_4kn}/tt.img",
        "--scratch-size=64M", "--ssd-profile=smoke", "-p", "no:cacheprovider", "-rA",
        f"--alluredir={alluredir}", f"--thresholds={REPO / 'thresholds'}", timeout=400)
    result.assert_outcomes(passed=1)
    assert not (ext4_on_4kn / "tt.img").exists()  # the plugin removed the file it made
    ((_serial, _workload), entry), = [(k, v) for k, v in _results(alluredir).items()
                                      if k[1] == "transfer_size_sweep"]
    m = entry["metrics"]
    for d in ("read", "write"):
        assert not any(f"seq_{d}_{s}.{d}.bw_mbps" in m for s in ("512", "1k", "2k"))
        assert m[f"seq_{d}_4k.{d}.bw_mbps"] > 0 and m[f"seq_{d}_8m.{d}.bw_mbps"] > 0
        points = [k for k in m if k.startswith(f"seq_{d}_") and k.endswith("bw_mbps")
                  and not k.startswith(f"seq_{d}_peak")]
        assert len(points) == 12
        assert m[f"seq_{d}_peak.{d}.bw_mbps"] == max(m[k] for k in points)  # the ATTO peak
    notes = [(alluredir / a["source"]).read_text()
             for p in alluredir.glob("*-result.json")
             for a in json.loads(p.read_text()).get("attachments", [])
             if a["name"] == "methodology notes"]
    assert any("skipped 512, 1k, 2k B transfers: below the file system's 4096-byte "
               "direct-I/O unit" in n for n in notes), notes
