"""End to end: the SNIA PTS WSAT and HIR suite (``suites/test_pts_wsat_hir.py``) in ``smoke``
with the real fio, in one session on two drives at once (-n 2):

* a 256 MiB RAM-backed loop device made here: both tests pass the loop profile's floors
  (thresholds/virtual.yaml) with plausible figures: WSAT writes twice the range or stops at 8 s,
  a loop device has no write cliff; HIR ratios near 1 (no garbage collection to recover);
* an emulated drive (model written here) that turns dirty after 16 MiB of writes (20,000 ->
  2,000 write IOPS) and recovers with idle time (a quarter of the way after 1.2 s of idle, half
  after 2.5 s, clean after 5 s): WSAT falls off its FOB figure within the first 0.05 GB and
  saturates at the dirty cap; HIR's bursts after the longer waits run faster than those after
  the shortest, and its baselines sit at the dirty cap.

They need root, fio and cgroup-v1 blkio (CI has them); otherwise they skip.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from ..conftest import (
    REPO,
    detach_loop_device,
    emulated_models,
    make_loop_device,
    need_root,
    ram_folder,
)

pytestmark = pytest.mark.e2e

SUITE = str(REPO / "suites" / "test_pts_wsat_hir.py")
FRESH_IOPS, DIRTY_IOPS = 20000, 2000
MODEL = f"""\
version: 1
source: "test: dirty after 16 MiB, recovers with idle time"
identity:
  model: SSDQUAL TEST HIR
  serial: EMU-TEST-HIR
  firmware: T1
  capacity_bytes: 256MiB
  controller: EMU-TEST
  nand: TEST-TLC
emulated_capacity_bytes: 256MiB
caps: {{write_iops: {FRESH_IOPS}}}
dirty: {{after_write_bytes: 16MiB, write_iops: {DIRTY_IOPS}}}
recovery:
  - {{idle_s: 1.2, lift_pct: 25}}
  - {{idle_s: 2.5, lift_pct: 50}}
  - {{idle_s: 5, lift_pct: 100}}
"""


def _results(alluredir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(drive serial, workload id) -> status, metrics, notes and attachment names."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for path in alluredir.glob("*-result.json"):
        res = json.loads(path.read_text())
        labels = {lab["name"]: lab["value"] for lab in res["labels"]}
        serial = labels["parentSuite"].rsplit("S/N ", 1)[1].rstrip(")")
        entry: dict[str, Any] = {"status": res["status"],
                                 "duration_s": (res["stop"] - res["start"]) / 1000,
                                 "attachments": [a["name"] for a in res.get("attachments", [])]}
        for att in res.get("attachments", []):
            text = (alluredir / att["source"]).read_text(errors="replace")
            if att["name"] == "metrics":
                entry["metrics"] = json.loads(text)
            elif att["name"] == "methodology notes":
                entry["notes"] = text
            elif att["name"] == "curves":
                entry["curves"] = json.loads(text)["curves"]
        out[(serial, labels["story"])] = entry
    return out


def test_wsat_and_hir_on_a_ram_loop_device_and_an_emulated_drive_that_recovers(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    models = emulated_models(tmp_path / "models", {"hir": MODEL})
    need_root("losetup")
    alluredir = tmp_path / "allure"
    with ram_folder(tmp_path, 256 * 2**20) as ram:
        image = ram / "pts.img"
        dev = make_loop_device(image, 256 * 2**20)
        try:
            start = time.monotonic()
            result = pytester.runpytest_subprocess(
                SUITE, f"--drive={dev}", "--drive=emu:hir", f"--emu-models={models}",
                f"--confirm-destroy={image}", f"--thresholds={REPO / 'thresholds'}",
                f"--alluredir={alluredir}", "--ssd-profile=smoke", "-p", "no:cacheprovider",
                "-n", "2", timeout=400)
            elapsed = time.monotonic() - start
        finally:
            detach_loop_device(dev)
    result.assert_outcomes(passed=4)
    runs = _results(alluredir)
    for (serial, workload), run in sorted(runs.items()):  # shown when an assertion fails
        print(f"--- {serial} {workload} ({run['duration_s']:.1f} s)",
              json.dumps(run["metrics"], indent=1), run["notes"], sep="\n")
    assert elapsed < 150, elapsed  # both drives at once; ~45 s each here

    # loop device: plausible figures, no cliff, nothing to recover
    wsat = runs[(str(image), "pts_wsat")]
    m = wsat["metrics"]
    assert m["iops_fob"] > 5000 and m["iops_steady"] > 5000
    assert 0.3 < m["steady_fob_ratio"] < 3
    # 2x the 256 MiB range, or less when the 8 s cap came first
    assert 0.05 < m["tgbw_gb"] <= 2 * 256 * 2**20 / 1e9 * 1.01
    assert m["written_multiple"] == pytest.approx(m["tgbw_gb"] * 1e9 / (256 * 2**20), rel=1e-6)
    assert {"chart: WSAT IOPS vs time", "chart: WSAT IOPS vs TGBW"} <= set(wsat["attachments"])
    hir = runs[(str(image), "pts_hir")]
    m = hir["metrics"]
    assert m["baseline_iops"] > 5000
    for wait in (5, 10, 15, 25, 50):
        assert m[f"w{wait}s_iops"] > 2000, wait
        # a 1 s return to baseline on a loaded host swings (measured 84,000-307,000 IOPS)
        assert 0.1 < m[f"w{wait}s_recovery_ratio"] < 10, (wait, m)
    assert "chart: HIR IOPS vs time" in hir["attachments"]
    assert "HIR measurement (mean burst IOPS per wait state):" in hir["notes"]

    # emulated drive: a write cliff within the first 16 MiB + one interval, saturated at the cap
    m = runs[("EMU-TEST-HIR", "pts_wsat")]["metrics"]
    # measured 2,000 (one run of three failed this at 15 % before its figures were printed)
    assert m["iops_steady"] == pytest.approx(DIRTY_IOPS, rel=0.25), m
    assert m["iops_fob"] > 2 * DIRTY_IOPS, m
    assert m["cliff_tgbw_gb"] < 0.05, m  # 16 MiB fresh + the rest of the first 1 s interval
    # recovery grows with the wait: the shortest (0.5 s + the host's start-up) is under the
    # model's 1 s minimum idle stretch; the longest cleans the drive
    hir = runs[("EMU-TEST-HIR", "pts_hir")]
    m = hir["metrics"]
    assert m["steady_state_reached"] == 1
    assert m["baseline_iops"] == pytest.approx(DIRTY_IOPS, rel=0.15)
    assert m["w50s_iops"] > 2 * m["w5s_iops"], m
    assert m["w25s_iops"] > 1.5 * m["w5s_iops"], m
    assert m["w50s_recovery_ratio"] > 2.5, m
    # the shortest wait does not clean the drive: 0.5 s plus the host's start-up of the next
    # burst, on a quiet host under the model's 1 s minimum idle stretch (ratio ~1); on a loaded
    # one the start-up alone can pass it (CI with the other tiers beside, 2026-12-06: 2.03 and
    # 2.11), still far from the longest wait's recovery, which the two checks above compare
    assert m["w5s_recovery_ratio"] < 3, m
    for wait in (5, 10, 15, 25, 50):
        assert m[f"w{wait}s_rebaseline_iops"] < 0.6 * FRESH_IOPS, (wait, m)
    segments = [c["name"] for c in hir["curves"]]
    assert segments[:3] == ["hir precondition", "hir w5s", "hir w5s baseline"]
