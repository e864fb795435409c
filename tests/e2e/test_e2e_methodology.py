"""End to end: the dirty-state methodology suites with the real fio on real block devices.

* a ``smoke`` run of the three suites on a plain loop device passes with plausible figures;
* in the same session, SNIA steady state on two more loop devices in one blkio cgroup: write
  IOPS capped at a constant (steady from round 5) and a cap that drifts down (never steady);
* emulated drives (``--drive=emu:MODEL``, models written here): the SLC cache size within 10 %
  of the model's, the post-cache bandwidth within 10 % of its cap, a recovery ratio and
  time to recover that follow the model's idle schedule, and a model whose cap is never lifted
  failing a ``recovery_ratio`` limit.

They need root and fio (CI has both); otherwise they skip.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_ssdqual.catalog.workloads import PROFILES

from ..conftest import (
    EMU_PROFILE,
    REPO,
    detach_loop_device,
    emulated_models,
    flat_verdicts,
    limits_yaml,
    make_loop_device,
    need_root,
    ram_folder,
    unwrapped,
)

pytestmark = pytest.mark.e2e

BLKIO = Path("/sys/fs/cgroup/blkio")
SUITES = {name: str(REPO / "suites" / f"test_{name}.py")
          for name in ("sustained_write", "steady_state", "consistency")}


def _need_fio() -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")


def _need_blkio() -> None:
    if not (BLKIO / "blkio.throttle.write_iops_device").exists():
        pytest.skip("cgroup-v1 blkio throttling is not available here")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--ssd-profile=smoke", "-p", "no:cacheprovider", "-rs", *args, timeout=300)


def _results(alluredir: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(drive serial, workload id) -> status, metrics, states and the rounds table, read back
    from the Allure results."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for path in alluredir.glob("*-result.json"):
        res = json.loads(path.read_text())
        labels = {lab["name"]: lab["value"] for lab in res["labels"]}
        serial = labels["parentSuite"].rsplit("S/N ", 1)[1].rstrip(")")
        entry: dict[str, Any] = {"status": res["status"]}
        for att in res.get("attachments", []):
            if att["name"] not in ("metrics", "drive state of each metric", "rounds",
                                   "per-second log"):
                continue  # charts and the rest
            text = (alluredir / att["source"]).read_text()
            if att["name"] == "metrics":
                entry["metrics"] = json.loads(text)
            elif att["name"] == "drive state of each metric":
                entry["states"] = json.loads(text)
            elif att["name"] == "rounds":
                entry["rounds"] = list(csv.DictReader(text.splitlines()))
            elif att["name"] == "per-second log":
                entry["per_second"] = list(csv.DictReader(text.splitlines()))
        out[(serial, labels["story"])] = entry
    return out


@pytest.fixture
def three_loop_devices(tmp_path: Path) -> Iterator[dict[str, tuple[str, str]]]:
    """plain, constant, drifting: name -> (device, serial) of 320 MiB direct-I/O loop devices
    over files in RAM (``ram_folder``: the three run at once, -n 3; on one host disk the plain
    device's writes set the throttled devices' pace, not their caps). Their serials are the
    files (``<name>.img``)."""
    need_root("losetup")
    devices: dict[str, tuple[str, str]] = {}
    with ram_folder(tmp_path, 3 * 320 * 1024 * 1024) as ram:
        try:
            for name in ("plain", "constant", "drifting"):
                image = ram / f"{name}.img"
                devices[name] = (make_loop_device(image, 320 * 1024 * 1024), str(image))
            yield devices
        finally:
            for dev, _serial in devices.values():
                detach_loop_device(dev)


def _rule(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


#: The throttled devices' QD32 latency is queueing-bound (~10 ms mean at 3,000 IOPS): their
#: own, more specific profile lifts the loop device's latency ceiling for them.
THROTTLED_PROFILE = """\
  - name: throttled loop devices ({which})
    match: {{controller: linux-loop, serial: "{serial}"}}
    source: "test limits: the blkio caps set the figures"
    limits:
      steady_state_rand_write_4k: {{iops: {{min: 100}}, lat_p99_us: {{max: 10000000}}}}
"""


def test_loop_devices_smoke_run_and_steady_state_on_constant_and_drifting_devices(
    pytester: pytest.Pytester, three_loop_devices: dict[str, tuple[str, str]], tmp_path: Path
) -> None:
    """One ``smoke`` session, three loop devices at once (-n 3), one blkio cgroup:

    * plain (no cap): every methodology suite passes its profile with plausible figures;
    * constant (write IOPS capped at 3,000): SNIA steady state reached from round 5 on;
    * drifting (write IOPS cap falling 7 % per second from 20,000): never steady.
    """
    _need_fio()
    _need_blkio()
    plain, constant, drifting = (three_loop_devices[k][0] for k in ("plain", "constant",
                                                                     "drifting"))
    serial = {name: image for name, (_dev, image) in three_loop_devices.items()}
    group = BLKIO / f"ssdqual-test-{uuid.uuid4().hex[:8]}"
    group.mkdir()
    iops_file = group / "blkio.throttle.write_iops_device"
    stop = threading.Event()

    def drift() -> None:
        start = time.monotonic()
        while not stop.wait(0.25):
            # No floor within the run (a flat floor would look steady): 7 % a second reaches
            # 20 IOPS only after ~95 s, so rounds that start late on a loaded machine still
            # see the cap fall (at 12 % a second the floor came at ~50 s, and a CI run whose
            # rounds started late measured a slope excursion of 9 %, under the 10 % asserted).
            cap = max(20, int(20000 * 0.93 ** (time.monotonic() - start)))
            iops_file.write_text(f"{_rule(drifting)} {cap}")

    iops_file.write_text(f"{_rule(constant)} 3000")
    iops_file.write_text(f"{_rule(drifting)} 20000")
    extra = tmp_path / "throttled.yaml"
    extra.write_text("version: 1\nprofiles:\n" + "".join(
        THROTTLED_PROFILE.format(which=name, serial=serial[name])
        for name in ("constant", "drifting")))
    alluredir = tmp_path / "allure"
    throttled = " or ".join(f"[{Path(dev).name}]" for dev in (constant, drifting))
    thread = threading.Thread(target=drift, daemon=True)
    thread.start()
    try:
        result = _run(
            pytester, *SUITES.values(), *(f"--drive={d}" for d in (plain, constant, drifting)),
            *(f"--confirm-destroy={s}" for s in serial.values()), f"--fio-cgroup={group}",
            f"--thresholds={REPO / 'thresholds'}", f"--thresholds={extra}",
            f"--alluredir={alluredir}", "-n", "3",
            "-k", f"not ((sustained_write or recovery_after_idle) and ({throttled}))",
        )
    finally:
        stop.set()
        thread.join()
        for dev in (constant, drifting):
            iops_file.write_text(f"{_rule(dev)} 0")
        subprocess.run(["rmdir", str(group)], check=False)
    result.assert_outcomes(passed=5)
    out = flat_verdicts(result.stdout.str())
    assert "sustained_bw_mbps @ FOB" in out and "recovery_ratio @ after 4 s idle" in out
    runs = _results(alluredir)
    assert len(runs) == 5

    # plain loop device: plausible figures from every suite
    sustained = runs[(serial["plain"], "sustained_write")]
    m = sustained["metrics"]
    assert m["burst_bw_mbps"] > 50 and m["sustained_bw_mbps"] > 50 and m["write.bw_mbps"] > 50
    assert set(sustained["states"].values()) == {"FOB"}
    # (a second may have a latency line but no bandwidth line: fio drops a last partial one)
    seconds = [float(r["bw_mbps"]) for r in sustained["per_second"]
               if r["phase"] == "sustained write" and r["bw_mbps"]]
    assert len(seconds) >= 2 and all(bw > 0 for bw in seconds)

    steady = runs[(serial["plain"], "steady_state_rand_write_4k")]
    m = steady["metrics"]
    assert 5 <= m["rounds"] <= PROFILES["smoke"].methodology.max_rounds and m["write.iops"] > 2000
    assert m["steady_state_reached"] in (0, 1)
    if m["steady_state_reached"]:
        assert m["steady_state_round"] == m["rounds"]
    assert m["write.lat_p50_us"] <= m["write.lat_p99_us"] <= m["write.lat_max_us"] * 1.02
    phases = [r["phase"] for r in steady["rounds"]]
    assert phases == ["precondition"] + ["steady state"] * int(m["rounds"])

    consistency = runs[(serial["plain"], "recovery_after_idle")]
    m = consistency["metrics"]
    for phase in ("fresh", "degraded", "steady", "recovered"):
        assert m[f"{phase}_iops"] > 1000, phase
        assert 0 < m[f"{phase}_lat_mean_us"] < m[f"{phase}_lat_p99_us"] * 1.02, phase
    assert m["recovery_ratio"] == pytest.approx(m["recovered_iops"] / m["fresh_iops"])
    assert consistency["states"]["fresh_iops"] == "FOB"
    assert consistency["states"]["recovered_iops"] == "after 4 s idle"
    recovery = [r for r in consistency["rounds"] if r["phase"] == "recovery"]
    assert [r["idle_before_s"] for r in recovery] == ["2", "4"]

    # constant device: steady at the cap, from round 5 (the first full window) -- a round or two
    # later when a 1-second smoke round starts slow (measured: 2,231 IOPS in round 1 and 2,648
    # in round 3 under a 3,000 IOPS cap, steady at round 6)
    m = runs[(serial["constant"], "steady_state_rand_write_4k")]["metrics"]
    assert m["steady_state_reached"] == 1 and 5 <= m["steady_state_round"] <= 8, m
    assert m["write.iops"] == pytest.approx(3000, rel=0.15)
    assert m["data_excursion_pct"] <= 20 and m["slope_excursion_pct"] <= 10

    # drifting device: never steady within the profile's rounds (14)
    drift_run = runs[(serial["drifting"], "steady_state_rand_write_4k")]
    m = drift_run["metrics"]
    max_rounds = PROFILES["smoke"].methodology.max_rounds
    assert m["steady_state_reached"] == 0 and m["rounds"] == max_rounds, drift_run["rounds"]
    assert "steady_state_round" not in m
    assert m["slope_excursion_pct"] > 10
    assert drift_run["states"]["write.iops"].startswith("not steady")


# --- emulated drives ---------------------------------------------------------------------------

MODEL_HEAD = """\
version: 1
source: "{source}"
identity:
  model: SSDQUAL TEST {name}
  serial: EMU-TEST-{name}
  firmware: T1
  capacity_bytes: {capacity}
  controller: EMU-TEST
  nand: TEST-TLC
emulated_capacity_bytes: {capacity}
"""

#: SLC cache of N = 300 MiB written at 100 MB/s, then a 25 MB/s cap.
SLC_MIB, BURST_MBPS, POST_CACHE_MBPS = 300, 100, 25
#: 4,000 write IOPS fresh, 1,000 once 64 MiB were written; idle lifts the cap half way after
#: 1.2 s and fully after 3.2 s. The smoke profile idles 2 s before each recovery test, so the
#: model is half way after the first (2 s) and whole after the second (4 s): each step sits
#: 0.8 s below the suite's idle time, as the controller counts idle from its first poll without
#: writes to its last (100 ms apart; later on a loaded host). Steps at exactly 2 and 4 s made
#: the outcome depend on that count: CI measured 1,706 and 2,519 IOPS (the 100 % step missed).
#: The gaps between the steady-state rounds' fio runs (under 1 s: RECOVERY_IDLE_MIN_S) do not
#: count, so the steady rounds stay at the dirty cap however loaded the host.
FRESH_IOPS, DIRTY_IOPS = 4000, 1000

MODELS = {
    "slc": MODEL_HEAD.format(source="test: SLC cache", name="SLC", capacity="256MiB")
    + f"caps: {{write_bw_mbps: {BURST_MBPS}}}\n"
    f"slc_cache: {{size_bytes: {SLC_MIB}MiB, write_bw_mbps: {POST_CACHE_MBPS}, "
    "idle_flush_mbps: 0}\n",
    "rec": MODEL_HEAD.format(source="test: recovers after idle", name="REC", capacity="128MiB")
    + f"caps: {{write_iops: {FRESH_IOPS}}}\n"
    f"dirty: {{after_write_bytes: 64MiB, write_iops: {DIRTY_IOPS}}}\n"
    "recovery:\n  - {idle_s: 1.2, lift_pct: 50}\n  - {idle_s: 3.2, lift_pct: 100}\n",
    "stuck": MODEL_HEAD.format(source="test: never recovers", name="STUCK", capacity="128MiB")
    + f"caps: {{write_iops: {FRESH_IOPS}}}\n"
    f"dirty: {{after_write_bytes: 64MiB, write_iops: {DIRTY_IOPS}}}\n",
}

EMU_LIMITS = limits_yaml({
    "sustained_write": {"sustained_bw_mbps": {"min": 20}},
    "recovery_after_idle": {"recovery_ratio": {"min": 0.8}, "time_to_recover_s": {"max": 60}},
}, **EMU_PROFILE)


def test_emulated_drives_slc_cache_sustained_bandwidth_and_recovery(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    models = emulated_models(tmp_path / "models", MODELS)
    limits = tmp_path / "limits.yaml"
    limits.write_text(EMU_LIMITS)
    alluredir = tmp_path / "allure"
    result = _run(
        pytester, SUITES["sustained_write"], SUITES["consistency"], f"--emu-models={models}",
        "--drive=emu:slc", "--drive=emu:rec", "--drive=emu:stuck", f"--thresholds={limits}",
        f"--alluredir={alluredir}", "-n", "3",  # throttled, mostly idle: 3 fit on 2 cores
        "-k", "(sustained and emu-slc) or (recovery and (emu-rec or emu-stuck))",
    )
    result.assert_outcomes(passed=2, failed=1)
    out = unwrapped(result.stdout.str())
    runs = _results(alluredir)

    # SLC cache: size within 10 % of N, post-cache bandwidth within 10 % of the cap
    slc = runs[("EMU-TEST-SLC", "sustained_write")]
    assert slc["status"] == "passed"
    m = slc["metrics"]
    assert m["slc_cache_bytes"] == pytest.approx(SLC_MIB * 2**20, rel=0.10)
    assert m["sustained_bw_mbps"] == pytest.approx(POST_CACHE_MBPS, rel=0.10)
    assert m["burst_bw_mbps"] == pytest.approx(BURST_MBPS, rel=0.10)

    # recovery follows the schedule: half way after 2 s idle, fully from 4 s on
    rec = runs[("EMU-TEST-REC", "recovery_after_idle")]
    assert rec["status"] == "passed"
    m = rec["metrics"]
    assert m["fresh_iops"] == pytest.approx(FRESH_IOPS, rel=0.10)
    assert m["degraded_iops"] == pytest.approx(DIRTY_IOPS, rel=0.10)
    assert m["steady_iops"] == pytest.approx(DIRTY_IOPS, rel=0.10)
    assert m["steady_state_reached"] == 1
    recovery = [float(r["iops"]) for r in rec["rounds"] if r["phase"] == "recovery"]
    half_way = DIRTY_IOPS + (FRESH_IOPS - DIRTY_IOPS) * 0.5
    assert recovery[0] == pytest.approx(half_way, rel=0.15)
    assert recovery[1] == pytest.approx(FRESH_IOPS, rel=0.10)
    assert m["recovery_ratio"] == pytest.approx(1.0, abs=0.1)
    assert m["time_to_recover_s"] == 4

    # never lifted: stays at the dirty cap and fails the recovery_ratio limit
    stuck = runs[("EMU-TEST-STUCK", "recovery_after_idle")]
    assert stuck["status"] == "failed"
    m = stuck["metrics"]
    assert m["recovery_ratio"] == pytest.approx(DIRTY_IOPS / FRESH_IOPS, rel=0.15)
    assert "time_to_recover_s" not in m
    assert "recovery_ratio 0.2" in out and "< min 0.8" in out
    assert "never back to 90% of fresh within 4 s idle" in out
    # never recovered: the limit on time_to_recover_s fails, saying why (not "not measured")
    assert ("time_to_recover_s never recovered: no idle time up to 4 s kept it at >= 90% of "
            "fresh") in out
    assert "fails the limit time_to_recover_s <= 60" in out
