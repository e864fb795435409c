"""Runs the end-to-end tests share: one session's results read by several tests.

``loop_smoke_run``: the plain workload suites (``suites/test_sequential.py`` and
``suites/test_random.py``, ``smoke``) once on a 320 MiB RAM-backed loop device, with the shipped
``thresholds/`` and one extra limit no loop device meets (``IMPOSSIBLE``: 100,000,000 QD1 read
IOPS), so the run has seven passed tests and one failed. ``test_e2e.py`` checks its figures and
that the loop device passes every limit of its shipped profile; ``test_report_e2e.py`` builds and
opens its HTML report. The run happens once per ``./test.sh`` tier, in whichever xdist worker
asks first, under a file lock the others wait on (pytest-xdist's "making session-scoped fixtures
execute only once"); its loop device is detached when the run ends: the tests read only its
stdout, Allure results and stored records.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from ..conftest import REPO, detach_loop_device, make_loop_device, need_root, ram_folder

#: A limit no loop device meets, so the shared run has a failed test next to the passed ones.
IMPOSSIBLE = """
version: 1
profiles:
  - name: e2e impossible limit
    match: {controller: linux-loop, serial: "%(serial)s"}
    source: "e2e test: a limit the loop device must violate"
    limits:
      rand_read_4k_qd1: {iops: {min: 100000000}}
"""
IMPOSSIBLE_PROFILE = "e2e impossible limit"


@dataclass(frozen=True)
class SmokeRun:
    """A finished pytest session: its exit code and output, the loop device it ran on (detached
    since) and its serial (the image file, removed since), its Allure and results folders."""

    returncode: int
    stdout: str
    device: str
    serial: str
    alluredir: Path
    results: Path

    def outcomes(self) -> dict[str, int]:
        """The final summary line's counts (``{"failed": 1, "passed": 7}``), warnings left
        out."""
        counts = pytest.RunResult.parse_summary_nouns(self.stdout.splitlines())
        return {k: v for k, v in counts.items() if k not in ("warnings", "warning")}


def _shared_root(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The folder every xdist worker of this session sees (the workers' base temp's parent)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


def _run_once(folder: Path) -> None:
    """Run the suites on a new loop device and write ``folder/run.json``."""
    need_root("losetup")
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    with ram_folder(folder, 320 * 1024 * 1024) as ram:
        image = ram / "loop.img"
        # uncapped: this run is the one that checks the shipped loop profile's latency ceilings
        # (at a blkio cap, QD32 reads queue a throttle slice: p99 ~90 ms)
        device = make_loop_device(image, 320 * 1024 * 1024, caps=None)
        try:
            extra = folder / "impossible.yaml"
            extra.write_text(IMPOSSIBLE % {"serial": image})
            proc = subprocess.run(
                [sys.executable, "-m", "pytest", str(REPO / "suites" / "test_sequential.py"),
                 str(REPO / "suites" / "test_random.py"), f"--drive={device}",
                 f"--confirm-destroy={image}", "--ssd-profile=smoke",
                 f"--thresholds={REPO / 'thresholds'}", f"--thresholds={extra}",
                 f"--alluredir={folder / 'allure'}", f"--results-dir={folder / 'results'}",
                 "-p", "no:cacheprovider", "-rs"],
                cwd=folder, capture_output=True, text=True, timeout=600)
        finally:
            detach_loop_device(device)
    (folder / "run.json").write_text(json.dumps(
        {"returncode": proc.returncode, "stdout": proc.stdout + proc.stderr, "device": device,
         "serial": str(image)}))


@pytest.fixture(scope="session")
def loop_smoke_run(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> SmokeRun:
    """The shared ``smoke`` run of the plain suites on a loop device (module docstring)."""
    folder = _shared_root(tmp_path_factory, worker_id) / "loop-smoke-run"
    with open(f"{folder}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "run.json").exists():
            folder.mkdir(exist_ok=True)
            _run_once(folder)
    data = json.loads((folder / "run.json").read_text())
    return SmokeRun(data["returncode"], data["stdout"], data["device"], data["serial"],
                    folder / "allure", folder / "results")
