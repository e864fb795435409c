"""End to end: the Phison E12 twin (``emu:phison-e12-960g``, figures_scale 0.1)
on real fio, in one session, smoke profile: the sustained-write suite finds its SLC-cache cliff
-- a burst at ~300 MB/s (the drive's 3,000 x 0.1) falling past the 1,408 MiB cache to about a third
(110 MB/s: "about twice as fast as any SATA SSD", 1,100 x 0.1) -- and passes the E12 profile's
limits scaled by 0.1, each scaled verdict saying so; the idle-power suite runs on the twin (it
skipped on every emulated drive before) with the review's power-state table, APST and WCTEMP /
CCTEMP, and its table facts are judged unscaled. ``ssdqual rejudge`` of the stored run scales
the same way (the record's drive facts carry the factor).

Needs root, cgroup-v1 blkio and fio (CI has all three); otherwise it skips with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from pytest_ssdqual.emulate.host import host_problems
from pytest_ssdqual.results.store import ResultsStore, StoredRun

from ..conftest import REPO

pytestmark = pytest.mark.e2e

NOTE = "limit scaled x0.1 for the emulated twin (figures_scale)"


def test_e12_twin_sustained_write_cliff_and_idle_power_pass_the_scaled_profile(
    tmp_path: Path,
) -> None:
    problems = host_problems()
    if problems:
        pytest.skip("; ".join(problems))
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")
    emu_dir = Path(tempfile.mkdtemp(prefix="ssdqual-test-", dir="/dev/shm"))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", str(REPO / "suites" / "test_sustained_write.py"),
             str(REPO / "suites" / "test_idle_power.py"), f"--rootdir={REPO}",
             "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-o", "addopts=",
             "--ssd-profile=smoke", "--drive=emu:phison-e12-960g",
             f"--results-dir={tmp_path / 'results'}", "-rA"],
            capture_output=True, text=True, cwd=tmp_path, timeout=300,
            env={**os.environ, "SSDQUAL_EMU_DIR": str(emu_dir)},
        )
        assert list(emu_dir.iterdir()) == []  # the drive was torn down
    finally:
        shutil.rmtree(emu_dir, ignore_errors=True)
    out = proc.stdout + proc.stderr
    print("\n".join(line for line in out.splitlines() if line.startswith(("emu:", "[ssdqual"))))
    assert proc.returncode == 0, out
    assert "2 passed" in out, out
    [run] = [StoredRun.load(p) for p in ResultsStore(tmp_path / "results").complete_runs()]
    records = {r["workload"]: r for r in run.records}
    assert set(records) == {"sustained_write", "idle_wake_read_4k_qd1"}
    assert all(r["status"] == "passed" for r in records.values())
    assert records["sustained_write"]["facts"]["figures_scale"] == 0.1

    # the cliff: burst ~300 MB/s, post-cache ~1/3 of it, at the 1,408 MiB cache
    sw = records["sustained_write"]["metrics"]
    assert sw["burst_bw_mbps"] == pytest.approx(300, rel=0.1)
    assert 0.3 <= sw["sustained_bw_mbps"] / sw["burst_bw_mbps"] <= 0.45, sw
    assert sw["sustained_bw_mbps"] == pytest.approx(110, rel=0.1)
    assert sw["slc_cache_bytes"] == pytest.approx(1408 * 2**20, rel=0.15)
    verdicts = {v["metric"]: v for v in records["sustained_write"]["verdicts"]}
    for metric, scaled_min in (("burst_bw_mbps", 270), ("sustained_bw_mbps", 90)):
        v = verdicts[metric]
        assert (v["status"], v["min"]) == ("pass", scaled_min), v
        assert NOTE in v["source"] and v["file"].endswith("phison-e12.yaml"), v
    assert ">= 270 (scaled x0.1)" in out and ">= 90 (scaled x0.1)" in out

    # idle power ran on the twin, with the review's table (p. 8), judged unscaled
    iw = records["idle_wake_read_4k_qd1"]
    assert iw["metrics"]["power_states"] == 5 and iw["metrics"]["non_operational_states"] == 2
    assert iw["metrics"]["max_idle_exit_latency_us"] == 25000
    assert iw["metrics"]["max_transition_latency_us"] == 50000
    assert iw["metrics"]["warning_temperature_c"] == 70
    assert iw["metrics"]["critical_temperature_c"] == 90
    assert iw["metrics"]["apst_enabled"] == 1
    assert iw["metrics"]["busy.lat_p50_us"] > 0
    iv = {v["metric"]: v for v in iw["verdicts"] if v["status"] != "not_judged"}
    for metric in ("max_idle_exit_latency_us", "max_transition_latency_us",
                   "warning_temperature_c", "critical_temperature_c", "power_states",
                   "wake_penalty_us"):
        assert iv[metric]["status"] == "pass" and "scaled" not in iv[metric]["source"], metric
    assert iv["wake_penalty_us"]["max"] == 25000

    # re-judged from the store (the record's facts carry the factor): scaled the same way
    from pytest_ssdqual.cli.main import main

    assert main(["rejudge", "--thresholds", str(REPO / "thresholds"),
                 "--results-dir", str(tmp_path / "results"), run.path.name]) == 0
