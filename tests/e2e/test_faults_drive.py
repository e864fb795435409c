"""Fault injection, the drive, with the real fio on loop devices and files.

Each fault gives a clear error naming the drive (and the byte offset when fio reports one), the
faulty drive's tests are broken (Allure), and the other drive of the same session carries on:

* I/O errors: a direct-I/O loop device whose backing file is cut to 16 MiB under it. The loop
  driver answers reads past the end of its backing file with EIO (``lo_complete_rq``: a short
  read of 0 bytes ends the request with ``BLK_STS_IOERR``), so fio's job error is 5 and its
  stderr names the offset. (No device-mapper here, so no ``dm-flakey``; this is the kernel's
  own EIO, not a simulated one.)
* a full filesystem: an existing sparse file larger than its small tmpfs (the write fails with
  ENOSPC at the offset where the space ran out), and a file the plugin would have to create
  larger than the free space (refused when it is sized, before any fio);
* the drive disappearing mid-run: the loop device detached (``losetup -d``) and the file target
  deleted while fio runs on them. The kernel keeps an open loop device until its last close
  and an unlinked file until fio closes it, so the running workload completes; the next
  workload finds the drive gone and is broken with the reason;
* a read-only device written anyway: fio's own open fails (EROFS), should the plugin's refusal
  ever be bypassed.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, MIB, RunProfile
from pytest_ssdqual.errors import FioJobError
from pytest_ssdqual.fio.check import check_run
from pytest_ssdqual.fio.job import render_job
from pytest_ssdqual.fio.runner import FioRunner

from ..conftest import small_tmpfs
from ..plugin.test_misuse import own_loop
from .test_interrupt import fio_pids, wait_for

pytestmark = pytest.mark.e2e

SUITE = """
import pytest

def test_1_read(qualify):
    qualify("seq_read_128k_qd32")

@pytest.mark.destructive
def test_2_write(qualify):
    qualify("seq_write_128k_qd32")
"""

THRESHOLDS = """
version: 1
profiles:
  - name: floors
    match: {}
    source: "test limits"
    limits:
      seq_read_128k_qd32: {bw_mbps: {min: 1}}
      seq_write_128k_qd32: {bw_mbps: {min: 1}}
"""


def _need_fio() -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")


def _allure(alluredir: Path) -> dict[str, dict[str, Any]]:
    """``test_name[--drive value]`` -> Allure result (titles are dynamic, so the key is built
    from the full name and the ``ssd_drive`` parameter)."""
    out = {}
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        value = next(p["value"] for p in result["parameters"] if p["name"] == "ssd_drive")
        spec = re.search(r"raw='([^']*)'", value)  # a DriveSpec repr when setup failed
        drive = spec.group(1) if spec else value.strip("'")
        out[f"{result['fullName'].rsplit('#', 1)[-1]}[{drive}]"] = result
    return out


def _message(result: dict[str, Any]) -> str:
    return str((result.get("statusDetails") or {}).get("message", ""))


def test_io_errors_and_full_filesystems_break_their_drive_and_the_others_go_on(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    _need_fio()
    image = tmp_path / "failing.img"
    with open(image, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, 320 * MIB)
    with own_loop(image) as loop, small_tmpfs(tmp_path / "small", "32M") as small:
        os.truncate(image, 16 * MIB)  # reads past 16 MiB now fail with EIO
        sparse = small / "sparse.img"
        sparse.touch()
        os.truncate(sparse, 64 * MIB)  # an existing file larger than its filesystem
        good = tmp_path / "good.img"
        pytester.makepyfile(test_suite=SUITE)
        (pytester.path / "limits.yaml").write_text(THRESHOLDS)
        alluredir = tmp_path / "allure"
        result = pytester.runpytest_subprocess(
            f"--drive={loop}", f"--drive={sparse}", f"--drive=file:{small / 'created.img'}",
            f"--drive=file:{good}", f"--confirm-destroy={sparse}",  # an existing file: confirmed
            "--scratch-size=64M", "--thresholds=limits.yaml",
            "--ssd-profile=smoke", f"--alluredir={alluredir}", "-p", "no:cacheprovider", "-rA",
            timeout=300,
        )
    results = _allure(alluredir)
    statuses = {test: r["status"] for test, r in results.items()}
    created = f"file:{small / 'created.img'}"
    assert statuses == {
        f"test_1_read[{loop}]": "broken",       # EIO past 16 MiB
        f"test_2_write[{loop}]": "skipped",     # not confirmed: never written
        f"test_1_read[{sparse}]": "broken",   # ENOSPC in the prefill written before reads
        f"test_2_write[{sparse}]": "broken",  # ENOSPC at 32 MiB
        f"test_1_read[{created}]": "broken",  # cannot be created at 64 MiB on 32 MiB
        f"test_2_write[{created}]": "broken",
        f"test_1_read[file:{good}]": "passed",
        f"test_2_write[file:{good}]": "passed",
    }, statuses

    eio = _message(results[f"test_1_read[{loop}]"])
    assert f"{loop} seq_read_128k_qd32: " in eio
    assert "job 'seq_read_128k_qd32' failed with error 5 (Input/output error)" in eio
    m = re.search(rf"first I/O error read at offset (\d+) \(131072 bytes\) on {loop}: "
                  r"Input/output error", eio)
    assert m, eio
    assert 16 * MIB <= int(m.group(1)) < 320 * MIB

    enospc = _message(results[f"test_2_write[{sparse}]"])
    assert f"{sparse} seq_write_128k_qd32: " in enospc
    assert "failed with error 28 (No space left on device)" in enospc
    m = re.search(rf"first I/O error write at offset (\d+) \(131072 bytes\) on {sparse}: "
                  r"No space left on device", enospc)
    assert m, enospc
    assert 16 * MIB <= int(m.group(1)) <= 32 * MIB

    refused = _message(results[f"test_1_read[{created}]"])
    assert f"cannot size file target {small / 'created.img'} to 67108864 bytes: " \
        "No space left on device" in refused
    assert not (small / "created.img").exists()
    assert result.ret == pytest.ExitCode.TESTS_FAILED


DISAPPEAR_SUITE = """
def test_1_read(qualify):
    qualify("seq_read_128k_qd32")

def test_2_read(qualify):
    qualify("rand_read_4k_qd32")
"""


def test_drive_gone_mid_run_breaks_the_next_workload_and_the_other_drive_goes_on(
    tmp_path: Path,
) -> None:
    _need_fio()
    image = tmp_path / "loop.img"
    with open(image, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, 320 * MIB)
    target = tmp_path / "target.img"
    (tmp_path / "test_suite.py").write_text(DISAPPEAR_SUITE)
    (tmp_path / "limits.yaml").write_text(THRESHOLDS)
    basetemp, alluredir = tmp_path / "basetemp", tmp_path / "allure"
    with own_loop(image) as loop:
        name = os.path.basename(loop)
        done: dict[str, float] = {}

        def saboteur() -> None:
            wait_for(lambda: bool(fio_pids(str(basetemp / f"test_1_read_{name}"))), 60)
            time.sleep(1.0)
            subprocess.run(["losetup", "-d", loop], check=True)
            done["detached"] = time.monotonic()
            # the read's own fio, not the session's prefill of the file (which runs first)
            wait_for(lambda: bool(fio_pids(
                str(basetemp / "test_1_read_file_target_img_0" / "seq_read_128k_qd32"))), 60)
            time.sleep(1.0)
            target.unlink()
            done["deleted"] = time.monotonic()

        thread = threading.Thread(target=saboteur, daemon=True)
        thread.start()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "test_suite.py", "-p", "no:cacheprovider",
             f"--drive={loop}", f"--drive=file:{target}", "--thresholds=limits.yaml",
             "--ssd-profile=smoke", f"--basetemp={basetemp}", f"--alluredir={alluredir}",
             "-rA"],
            cwd=tmp_path, capture_output=True, text=True, timeout=300,
        )
        thread.join(timeout=5)
    assert set(done) == {"detached", "deleted"}, proc.stdout
    results = _allure(alluredir)
    statuses = {test: r["status"] for test, r in results.items()}
    assert statuses == {
        f"test_1_read[{loop}]": "passed",       # the kernel keeps the device until fio closes it
        f"test_2_read[{loop}]": "broken",
        f"test_1_read[file:{target}]": "passed",  # fio holds the unlinked file open
        f"test_2_read[file:{target}]": "broken",
    }, proc.stdout
    gone = _message(results[f"test_2_read[{loop}]"])
    # the freed /dev/loopN is blank, unless another user attached a file to it meanwhile
    assert (f"{loop} has no backing file: the loop device is not set up" in gone
            or f"{loop} now has serial " in gone), gone
    deleted = _message(results[f"test_2_read[file:{target}]"])
    assert f"{target} is gone (No such file or directory) since it was opened" in deleted, deleted
    assert proc.returncode == pytest.ExitCode.TESTS_FAILED


def test_read_only_device_written_anyway_is_an_fio_error_naming_it(tmp_path: Path) -> None:
    _need_fio()
    image = tmp_path / "ro.img"
    with open(image, "wb") as fh:
        os.posix_fallocate(fh.fileno(), 0, 32 * MIB)
    profile = RunProfile("tiny", 0, 1, 16 * MIB, 16 * MIB)
    with own_loop(image, "--read-only") as loop:
        plan = render_job(CATALOG["seq_write_128k_qd32"], profile, filename=loop,
                          capacity_bytes=32 * MIB, ioengine="psync")
        run = FioRunner().run(plan.text, workdir=tmp_path / "w", name="w", timeout_s=60,
                              readonly=False)  # the plugin's refusal bypassed on purpose
    with pytest.raises(FioJobError) as info:
        check_run(run, expected_runtime_s=1)
    # Linux 6.x opens a read-only loop device for writing and fails each write with EPERM;
    # other kernels refuse the open with EROFS. Either way the job's errno says it.
    assert info.value.errno in (errno.EPERM, errno.EROFS)
    assert f"failed with error {info.value.errno} ({os.strerror(info.value.errno)})" in str(
        info.value
    )
    if info.value.errno == errno.EPERM:
        assert info.value.file == loop and info.value.offset == 0
        assert f"first I/O error write at offset 0 (131072 bytes) on {loop}: Operation not " \
            "permitted" in str(info.value)
    assert loop in (info.value.raw_output or "")
