"""End to end with the real fio on real block devices: loop, zram, a file, a throttled loop.

These run the plain fio workload suites of ``suites/`` -- ``test_sequential.py`` and
``test_random.py`` only, not the methodology suites -- with the shipped ``thresholds/`` under the
``smoke`` profile, as ``./run.sh`` runs them (``-p no:cacheprovider -rs``). The other suites have
their own end-to-end files: ``test_e2e_methodology.py`` (dirty state), ``test_e2e_sweeps.py``,
``test_e2e_data_states.py``, ``test_e2e_data_tests.py`` (burst, compressibility, integrity,
health, idle wake-up). They need root and fio (CI has both); otherwise they skip.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import MIB, SCRATCH_FILE_BYTES
from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import REPO, blkio_write_cap, need_root, unwrapped
from .conftest import IMPOSSIBLE_PROFILE, SmokeRun

pytestmark = pytest.mark.e2e


def _need_fio() -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")


def _run_suites(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        str(REPO / "suites" / "test_sequential.py"), str(REPO / "suites" / "test_random.py"),
        "--ssd-profile=smoke", "-p", "no:cacheprovider", "-rs", *args,
        timeout=600,
    )


def _metrics(alluredir: Path) -> dict[str, dict[str, float]]:
    """workload id -> metrics, read back from the Allure ``metrics`` attachments."""
    out: dict[str, dict[str, float]] = {}
    for path in alluredir.glob("*-result.json"):
        result = json.loads(path.read_text())
        story = next(lab["value"] for lab in result["labels"] if lab["name"] == "story")
        for att in result.get("attachments", []):
            if att["name"] == "metrics":
                out[story] = json.loads((alluredir / att["source"]).read_text())
    return out


def _assert_plausible(metrics: dict[str, dict[str, float]]) -> None:
    """Every workload ran and produced sane, self-consistent figures."""
    assert set(metrics) == {
        "seq_read_128k_qd32", "seq_write_128k_qd32", "seq_read_128k_qd1", "rand_read_4k_qd1",
        "rand_read_4k_qd32", "rand_write_4k_qd1", "rand_write_4k_qd32", "rand_rw70_4k_qd32",
    }
    for workload, m in metrics.items():
        direction = "write" if "write" in workload else "read"
        # measured; how fast is the host's business (the shipped profiles' floors judge it)
        assert m[f"{direction}.iops"] > 0, (workload, m)
        # fio's percentiles are histogram bucket values (6 bits: within 1/64 of the truth), so
        # p99.99 may sit a bucket above the exact maximum.
        assert m[f"{direction}.lat_p50_us"] <= m[f"{direction}.lat_p99_us"] \
            <= m[f"{direction}.lat_p99_99_us"] <= m[f"{direction}.lat_max_us"] * (1 + 1 / 64), \
            (workload, m)
    # bandwidth = IOPS x block size (decimal MB/s)
    seq = metrics["seq_read_128k_qd32"]
    assert seq["read.bw_mbps"] == pytest.approx(seq["read.iops"] * 131072 / 1e6, rel=0.02)
    mixed = metrics["rand_rw70_4k_qd32"]
    assert mixed["total.iops"] == pytest.approx(mixed["read.iops"] + mixed["write.iops"])
    assert 0.6 < mixed["read.iops"] / mixed["total.iops"] < 0.8  # rwmixread=70


def test_loop_device_full_suite_passes_its_profile(loop_smoke_run: SmokeRun) -> None:
    """The shared smoke run on a loop device (``conftest.py``): every limit of the shipped
    loop profile passes on all eight workloads; the one failed test fails only the extra
    limit no loop device meets (which the report test needs)."""
    run = loop_smoke_run
    assert run.returncode == 1, run.stdout[-3000:]
    assert run.outcomes() == {"failed": 1, "passed": 7}, run.stdout[-3000:]
    assert "ssdqual verdicts" in run.stdout
    _assert_plausible(_metrics(run.alluredir))
    env = (run.alluredir / "environment.properties").read_text()
    assert "drive.controller=linux-loop" in env and "drive.model=Linux loop device" in env
    [stored] = [StoredRun.load(p) for p in ResultsStore(run.results).complete_runs()]
    records = stored.records_of(run.device)
    assert len(records) == 8
    for workload, record in records.items():
        shipped = [v for v in record["verdicts"]
                   if v["limit"] and v["profile"] != IMPOSSIBLE_PROFILE]
        assert any(v["file"].endswith("virtual.yaml") for v in shipped), workload
        assert [v["status"] for v in shipped] == ["pass"] * len(shipped), (workload, shipped)
        failed = [v["metric"] for v in record["verdicts"] if v["status"] != "pass" and v["limit"]]
        assert failed == (["read.iops"] if workload == "rand_read_4k_qd1" else []), workload


def test_zram_full_suite_passes_its_profile(
    pytester: pytest.Pytester, zram_device: str, tmp_path: Path
) -> None:
    _need_fio()
    alluredir = tmp_path / "allure"
    result = _run_suites(pytester, f"--drive={zram_device}", "--confirm-destroy=zram0",
                         f"--alluredir={alluredir}")
    result.assert_outcomes(passed=8)
    metrics = _metrics(alluredir)
    _assert_plausible(metrics)
    env = (alluredir / "environment.properties").read_text()
    assert "drive.controller=linux-zram" in env


def test_default_dry_run_writes_its_budget_whatever_the_disk(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    """No --drive: the plugin's 128 MiB scratch file, each write workload size based (4 MiB or
    3 s), so fio writes the same bytes on any disk: the prefill, three 4 MiB write workloads and
    the write share of the 70/30 mix's 4 MiB. Every workload measures plausible figures, and
    the scratch file is removed afterwards."""
    _need_fio()
    alluredir = tmp_path / "allure"
    result = _run_suites(pytester, f"--alluredir={alluredir}")
    result.assert_outcomes(passed=8)
    _assert_plausible(_metrics(alluredir))
    out = unwrapped(result.stdout.str())  # the write line wraps at 120 columns
    m = re.search(r"ssdqual: wrote [\d.]+ MB \(([\d,]+) bytes\) to (file:\S+) in 5 of 9 fio "
                  r"runs \(write budget: 4 MiB per fio run", out)
    assert m, out[-2000:]
    fixed = SCRATCH_FILE_BYTES + 3 * 4 * MIB
    assert fixed < int(m[1].replace(",", "")) < fixed + 4 * MIB  # ~30 % of the mix's 4 MiB
    assert not Path(m[2].removeprefix("file:")).exists()


@pytest.fixture
def write_throttle(loop_device: str) -> Iterator[tuple[str, Path]]:
    """A cgroup-v1 blkio folder capping writes to ``loop_device`` at 20 MiB/s."""
    with blkio_write_cap(loop_device, 20 * 1024 * 1024) as group:
        yield loop_device, group


def test_throttled_loop_device_fails_the_seq_write_limit_and_passes_without_the_cap(
    pytester: pytest.Pytester, write_throttle: tuple[str, Path], tmp_path: Path
) -> None:
    _need_fio()
    dev, group = write_throttle
    serial = str(tmp_path / "loop.img")
    common = (f"--drive={dev}", f"--confirm-destroy={serial}", "-k", "seq_write")
    throttled = _run_suites(pytester, *common, f"--fio-cgroup={group}")
    throttled.assert_outcomes(failed=1)
    out = unwrapped(throttled.stdout.str())
    assert "write.bw_mbps" in out and "< min" in out and "virtual.yaml" in out
    measured = float(out.split("write.bw_mbps ")[1].split()[0])
    assert 15 < measured < 25  # 20 MiB/s = 21 MB/s

    free = _run_suites(pytester, *common)
    free.assert_outcomes(passed=1)


def test_mounted_loop_device_filesystem_survives_a_real_run(
    pytester: pytest.Pytester, loop_device: str, tmp_path: Path
) -> None:
    _need_fio()
    need_root("mkfs.ext4", "mount")
    subprocess.run(["mkfs.ext4", "-q", loop_device], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", loop_device, str(mnt)], check=True)
    try:
        (mnt / "precious.txt").write_text("lab data\n")
        subprocess.run(["sync"], check=True)
        # one read (runs) and one write (refused) of the standard suites: what the mount changes
        result = _run_suites(pytester, f"--drive={loop_device}",
                             f"--confirm-destroy={tmp_path / 'loop.img'}",
                             "-k", "seq_read_128k_qd32 or seq_write_128k_qd32")
        result.assert_outcomes(passed=1, skipped=1)
        assert "is mounted at" in result.stdout.str()
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
    fsck = subprocess.run(["fsck.ext4", "-n", "-f", loop_device], capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    subprocess.run(["mount", "-o", "ro", loop_device, str(mnt)], check=True)
    try:
        assert (mnt / "precious.txt").read_text() == "lab data\n"
    finally:
        subprocess.run(["umount", str(mnt)], check=False)
