"""End to end: the drive's temperature during a sustained write, on two emulated drives in one
session, real fio.

``emulated/demo-hot.yaml`` heats towards 85 °C under a 300 MB/s write and throttles its writes
to 75 MB/s at 70 °C (WCTEMP 60 °C); a cool copy of it (0.03 °C per MB/s: 54 °C at most) never
reaches WCTEMP. The smoke ``sustained_write`` (7 s) samples each drive's temperature every
0.5 s during the write: the hot drive fails ``temperature.max_c <= 65`` and
``temperature.throttle_events <= 0`` with the throttle seen in its per-second log, the cool one
passes both and ``temperature.above_wctemp_s <= 0``. The samples are stored with the run.

Needs root, cgroup-v1 blkio and fio; otherwise it skips with the reason. About 25 s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from ..conftest import REPO, emulated_models

pytestmark = pytest.mark.e2e

SUITE = """
import pytest

@pytest.mark.destructive
def test_sustained(run_methodology):
    run_methodology("sustained_write")
"""

LIMITS = """version: 1
profiles:
  - name: thermal demo
    match: {controller: EMU-DEMO}
    source: "test limits"
    limits:
      sustained_write:
        temperature.max_c: {max: 65}
        temperature.throttle_events: {max: 0}
        temperature.above_wctemp_s: {max: 0}
"""


def _records(results: Path) -> dict[str, dict]:
    """``--drive`` text -> the stored sustained_write record (and its folder)."""
    out = {}
    for path in results.rglob("record.json"):
        record = json.loads(path.read_text())
        out[record["drive"]] = {**record, "_folder": str(path.parent)}
    return out


def test_a_hot_drive_fails_its_temperature_limits_and_a_cool_one_passes(tmp_path: Path) -> None:
    hot = (REPO / "emulated" / "demo-hot.yaml").read_text()
    cool = (hot.replace("c_per_mbps: 0.133", "c_per_mbps: 0.03")
            .replace("EMU-DEMO-HOT-0001", "EMU-DEMO-COOL-0001")
            .replace("EMU DEMO HOT", "EMU DEMO COOL"))
    models = emulated_models(tmp_path / "models", {"demo-hot": hot, "demo-cool": cool})
    (tmp_path / "test_thermal.py").write_text(SUITE)
    (tmp_path / "limits.yaml").write_text(LIMITS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nssdqual_temperature_interval_s = 0.5\n")
    emu_dir = Path(tempfile.mkdtemp(prefix="ssdqual-test-", dir="/dev/shm"))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "test_thermal.py", "--drive=emu:demo-hot",
             "--drive=emu:demo-cool", f"--emu-models={models}", "-p", "no:cacheprovider",
             "--ssd-profile=smoke", f"--thresholds={tmp_path / 'limits.yaml'}",
             f"--results-dir={tmp_path / 'results'}", "-rA"],
            capture_output=True, text=True, cwd=tmp_path, timeout=120,
            env={**os.environ, "SSDQUAL_EMU_DIR": str(emu_dir)})
    finally:
        shutil.rmtree(emu_dir, ignore_errors=True)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    records = _records(tmp_path / "results")
    h, c = records["emu:demo-hot"], records["emu:demo-cool"]
    assert (h["status"], c["status"]) == ("failed", "passed"), out
    hm, cm = h["metrics"], c["metrics"]
    # the hot drive: heated past WCTEMP (60) to its throttle point (70), throttled in its log
    assert 65 < hm["temperature.max_c"] < 73, out
    assert hm["temperature.throttle_events"] >= 1 and hm["temperature.throttled_s"] >= 1, out
    assert hm["temperature.above_wctemp_s"] >= 1.5, out
    failed = {v["metric"] for v in h["verdicts"] if v["status"] == "fail"}
    assert {"temperature.max_c", "temperature.throttle_events",
            "temperature.above_wctemp_s"} <= failed, out
    # the cool one: 45 + 0.03 x 300 = 54 °C at most, never at WCTEMP, never throttled
    assert 45 <= cm["temperature.max_c"] < 56, out
    assert (cm["temperature.above_wctemp_s"], cm["temperature.throttle_events"]) == (0, 0)
    # the samples were taken during the write, every 0.5 s, and are stored with the run
    [csv] = list(Path(h["_folder"]).rglob("*temperature.csv"))
    rows = [line.split(",") for line in csv.read_text().splitlines()[1:]]
    temps = [float(r[2]) for r in rows]
    assert len(rows) >= 12 and temps[0] < 55 and max(temps) == hm["temperature.max_c"], out
    assert {r[3] for r in rows} == {"60"}  # WCTEMP as the model reports it
    assert "temperature.max_c" in out and "throttle event(s)" in out
