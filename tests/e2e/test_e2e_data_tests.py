"""End to end: the burst, compressibility and integrity suites with the real
fio on real block devices.

* a ``smoke`` run of the three suites on a loop device whose writes a blkio cap paces (100 MB/s,
  5,000 IOPS: far below the host, so neither fio's CPU cost of random buffers nor the host
  disk's gain from zero-filled data sets the pace) passes with plausible figures: bursts as fast
  as continuous writes, zero / random below the suite's own evidence ratio (1.5) and no
  "compresses" note for the loop device, while /dev/zram0 (which compresses) reads > 2.5 with
  the note; in the same session the health and idle wake-up suites skip on both with their
  exact reasons (no SMART, no power states) without counting as skipped tests or INCOMPLETE;
* on emulated drives (``emu:``), the burst suite finds a drive whose SLC cache idle time
  empties faster in bursts than continuously, and a drive capped flat about as fast;
* the integrity suite fails with the first bad offset when the test corrupts the device between
  the write pass and the read-back, and fails when the read-back runs without verification
  (a copy of the suite beside a conftest.py that patches the integrity module in the pytest
  process that runs it).

They need root and fio (CI has both); otherwise they skip.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.data_tests import COMPRESSION_EVIDENCE_RATIO

from ..conftest import REPO, blkio_write_cap, emulated_models, unwrapped
from .test_e2e_methodology import MODEL_HEAD, _results
from .test_e2e_sweeps import _attachment

pytestmark = pytest.mark.e2e

SUITES = {name: str(REPO / "suites" / f"test_{name}.py")
          for name in ("burst", "compressibility", "integrity")}
HEALTH_SUITE = str(REPO / "suites" / "test_health.py")
IDLE_SUITE = str(REPO / "suites" / "test_idle_power.py")
MIB = 1024 * 1024
#: The smoke profile's span.
SPAN = 256 * MIB


def _need_fio() -> None:
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "--ssd-profile=smoke", "-p", "no:cacheprovider", "-rs", *args, timeout=400)


#: The loop device's write caps (blkio, ``--fio-cgroup``): far below what this VM's loop device
#: does uncapped (measured here: 128 KiB QD32 1,700 MB/s random buffers and 2,360 zero-filled;
#: 4 KiB QD32 36,000 and 64,000 IOPS: zero-filled data 1.4-1.8x faster without any compression
#: in the device, from the VM's own disk or fio's CPU time on a busy 2-core VM; CI once read
#: 1.62), so the caps, not the host, set the pace of both buffer kinds (capped, 1 s runs: 103
#: and 103 MB/s, 5,010 and 5,010 IOPS).
CAP_BYTES_S = 100_000_000
CAP_IOPS = 5000


def _run_dir(out: str) -> Path:
    """The stored run's folder, from the session header (``ssdqual: results: DIR; ...``)."""
    [header] = [line for line in out.splitlines() if line.startswith("ssdqual: results: ")]
    return Path(header.removeprefix("ssdqual: results: ").split(";")[0])


def test_smoke_on_a_loop_device_and_compressibility_on_zram(
    pytester: pytest.Pytester, loop_device: str, zram_device: str, tmp_path: Path
) -> None:
    """The three suites on a loop device capped at 100 MB/s and 5,000 write IOPS, the
    compressibility suite on /dev/zram0 (uncapped), and in the same session the health and idle
    wake-up suites on both, which skip as not applicable."""
    _need_fio()
    alluredir = tmp_path / "allure"
    serial = str(tmp_path / "loop.img")
    with blkio_write_cap(loop_device, CAP_BYTES_S, CAP_IOPS) as group:
        result = _run(pytester, *SUITES.values(), HEALTH_SUITE, IDLE_SUITE,
                      f"--drive={loop_device}", f"--drive={zram_device}",
                      f"--confirm-destroy={serial}", "--confirm-destroy=zram0",
                      f"--fio-cgroup={group}", f"--alluredir={alluredir}",
                      "-k", "not zram0 or compressibility or health or idle")
    result.assert_outcomes(passed=4, skipped=6)
    runs = _results(alluredir)
    notes = _attachment(alluredir, "methodology notes")
    out = unwrapped(result.stdout.str())

    # integrity: both passes written and read back whole, no bad block
    m = runs[(serial, "data_integrity")]["metrics"]
    assert m["written_bytes"] == m["verified_bytes"] == 2 * SPAN
    assert m["verify_mismatches"] == 0 and m["verified_share"] == 1
    assert "first_bad_offset_bytes" not in m
    rounds = runs[(serial, "data_integrity")]["rounds"]
    assert [r["phase"] for r in rounds] == ["write", "read back"] * 2

    # burst vs sustained: every figure, per second of burst; ratios are burst / continuous
    m = runs[(serial, "burst_vs_sustained")]["metrics"]
    for mode in ("burst", "continuous"):
        assert m[f"{mode}_rand_write_4k_qd32.write.iops"] > 1000, m
        assert m[f"{mode}_seq_write_128k_qd32.write.bw_mbps"] > 20, m
        for test in ("rand_write_4k_qd32", "seq_write_128k_qd32"):
            assert 0 < m[f"{mode}_{test}.write.lat_p99_us"] < 5e6, m
    assert m["burst_rand_write_4k_qd32.write.iops_ratio"] == pytest.approx(
        m["burst_rand_write_4k_qd32.write.iops"] / m["continuous_rand_write_4k_qd32.write.iops"])
    # no cache to refill while idle, and the caps (not the host's disk, which may gain from
    # idle) set the pace: bursts as fast as continuous writes within the throttle's slack after
    # idle (1.15-1.2 measured on an emulated drive capped flat the same way)
    for ratio in ("burst_seq_write_128k_qd32.write.bw_mbps_ratio",
                  "burst_rand_write_4k_qd32.write.iops_ratio"):
        assert 0.7 < m[ratio] < 1.4, (ratio, m)
    assert "3 x 200 ms of I/O every 1 s" in out

    # compressibility: the loop device's caps set both buffer kinds' pace, so zero-filled data
    # is no faster there; zram compresses (zero pages cost nothing: 4.4-16.4 measured)
    loop = runs[(serial, "compressibility")]["metrics"]
    zram = runs[("zram0", "compressibility")]["metrics"]
    seq, rnd = "seq_write_128k_qd32", "rand_write_4k_qd32"
    assert 0.5 * CAP_BYTES_S / 1e6 < loop[f"random_{seq}.write.bw_mbps"] < 1.3 * CAP_BYTES_S / 1e6
    assert 0.5 * CAP_IOPS < loop[f"random_{rnd}.write.iops"] < 1.3 * CAP_IOPS, loop
    assert loop[f"zero_{seq}.write.bw_mbps_ratio"] < COMPRESSION_EVIDENCE_RATIO, loop
    assert loop[f"zero_{rnd}.write.iops_ratio"] < COMPRESSION_EVIDENCE_RATIO, loop
    assert zram[f"zero_{seq}.write.bw_mbps_ratio"] > 2.5, zram
    assert zram[f"random_{seq}.write.bw_mbps"] > 20 and zram[f"zero_{rnd}.write.iops"] > 1000
    # each drive's own notes (its Allure result), not anywhere in the session's output
    compresses = "the target compresses or detects zero-filled data"
    assert compresses not in notes[(serial, "compressibility")], notes[(serial, "compressibility")]
    [zram_seq] = [line for line in notes[("zram0", "compressibility")].splitlines()
                  if line.startswith(f"{seq}: zero-filled data at ")]
    assert zram_seq.endswith(f"x the random-data bw_mbps: {compresses}"), zram_seq

    # health and idle wake-up: skipped with their exact reasons on both (no SMART, no power
    # states), as not applicable: no skipped write, not INCOMPLETE, not counted as skipped
    for drive, kind in ((loop_device, "loop"), (zram_device, "zram")):
        assert f"no drive health: {drive}: a {kind} device has no SMART / NVMe health log" in out
        assert (f"{drive} is a {kind} target (virtual): NVMe power states and APST exist only "
                "on an NVMe drive") in out
    assert [runs[(s, w)]["status"] for s in (serial, "zram0")
            for w in ("health", "idle_wake_read_4k_qd1")] == ["skipped"] * 4
    assert result.ret == pytest.ExitCode.OK and "INCOMPLETE" not in out
    run = json.loads((_run_dir(out) / "run.json").read_text())
    assert run["tests"] == {"skipped": 0, "deselected": 2, "failed": 0}, run["tests"]
    # each drive's qualification summary: PASS, the skips NOT APPLICABLE (were INCOMPLETE)
    summaries = [line for line in out.splitlines() if ".html (+ .md)" in line]
    assert len(summaries) == 2 and all(line.startswith("PASS ") for line in summaries), summaries
    for md in (alluredir / "summary").glob("*.md"):
        assert md.read_text().count("| NOT APPLICABLE | Skipped: ") == 3, md.read_text()


CORRUPT_CONFTEST = '''
import os
from pytest_ssdqual.methodology import integrity

_read_back = integrity._read_back
_done = []


def corrupt_then_read_back(mr, job):
    """Before the first read-back: 8 bytes of garbage at {offset} (inside the 128 KiB block
    that starts at {block}), through the device, flushed."""
    if not _done:
        _done.append(1)
        fd = os.open(mr.ctx.target.fio_filename, os.O_WRONLY)
        try:
            os.pwrite(fd, b"garbage!", {offset})
            os.fsync(fd)
        finally:
            os.close(fd)
    return _read_back(mr, job)


integrity._read_back = corrupt_then_read_back
'''

NO_VERIFY_CONFTEST = '''
import dataclasses
from pytest_ssdqual.methodology import integrity

_verify_job = integrity.verify_job


def read_back_without_checking(workload_id, span_bytes):
    job = _verify_job(workload_id, span_bytes)
    return dataclasses.replace(job, options=("continue_on_error=verify",))


integrity.verify_job = read_back_without_checking
'''


def test_corruption_between_write_and_read_back_fails_with_the_first_bad_offset(
    pytester: pytest.Pytester, loop_device: str, tmp_path: Path
) -> None:
    _need_fio()
    block = 3 * MIB
    pytester.makeconftest(CORRUPT_CONFTEST.format(offset=block + 4096 + 7, block=block))
    suite = pytester.makepyfile(test_integrity=Path(SUITES["integrity"]).read_text())
    result = _run(pytester, str(suite), f"--drive={loop_device}",
                  f"--confirm-destroy={tmp_path / 'loop.img'}")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = unwrapped(result.stdout.str())
    assert "verify_mismatches 1 > max 0" in out, out
    assert f"FIRST BAD BLOCK at byte offset {block}" in out, out
    assert f"offset {block} (131072 bytes) on {loop_device}: crc32c: verify failed" in out


def test_a_read_back_without_verification_never_passes(
    pytester: pytest.Pytester, loop_device: str, tmp_path: Path
) -> None:
    _need_fio()
    pytester.makeconftest(NO_VERIFY_CONFTEST)
    suite = pytester.makepyfile(test_integrity=Path(SUITES["integrity"]).read_text())
    result = _run(pytester, str(suite), f"--drive={loop_device}",
                  f"--confirm-destroy={tmp_path / 'loop.img'}")
    result.assert_outcomes(failed=1)
    out = unwrapped(result.stdout.str())
    assert "verified_share 0" in out, out
    assert "NOT VERIFIED (fio ran it with verify=unset)" in out, out


#: Emulated drives for the burst suite: one capped flat at 100 MB/s, one with a 128 MiB SLC
#: cache written at 400 MB/s (100 MB/s once full) that idle time empties at 400 MB/s. (The
#: emulator counts idle from 0.5 s on: the smoke profile's 800 ms idle between bursts is enough.)
BURST_MODELS = {
    "flat": MODEL_HEAD.format(source="test: flat cap", name="FLAT", capacity="256MiB")
    + "caps: {write_bw_mbps: 100, write_iops: 40000}\n",
    "cached": MODEL_HEAD.format(source="test: SLC cache", name="CACHED", capacity="256MiB")
    + "caps: {write_bw_mbps: 400, write_iops: 40000}\n"
    "slc_cache: {size_bytes: 128MiB, write_bw_mbps: 100, idle_flush_mbps: 400}\n",
}


def test_burst_suite_tells_a_cache_refilled_by_idle_from_a_flat_drive(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    models = emulated_models(tmp_path / "models", BURST_MODELS)
    alluredir = tmp_path / "allure"
    result = _run(pytester, SUITES["burst"], f"--emu-models={models}", "--drive=emu:flat",
                  "--drive=emu:cached", f"--alluredir={alluredir}", "-n", "2")
    result.assert_outcomes(passed=2)
    runs = _results(alluredir)
    ratio = "burst_seq_write_128k_qd32.write.bw_mbps_ratio"
    flat = runs[("EMU-TEST-FLAT", "burst_vs_sustained")]["metrics"]
    cached = runs[("EMU-TEST-CACHED", "burst_vs_sustained")]["metrics"]
    # measured: flat 1.15-1.2 (the blkio throttle's slack after idle), cached 2.4-2.5
    assert flat[ratio] < 1.5, flat
    assert cached[ratio] > 1.8, cached
    assert flat["continuous_seq_write_128k_qd32.write.bw_mbps"] == pytest.approx(100, rel=0.15)
