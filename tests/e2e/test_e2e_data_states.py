"""End to end: the data-state suites with the real fio on a loop device,
``smoke`` profile (256 MiB span).

* drive with data: every figure and ratio measured with plausible values, the fill-state
  curves stored, the states named -- and the loop device's backing file shows what was written:
  the fill (0-192 MiB = 75 % of the span), the test file at the end (231-256 MiB), nothing in
  between, nothing past the span;
* sequential after random: the clean and fragmented figures and their ratios, the whole span
  written;
* an emulated drive whose writes fall to a quarter once 128 MiB were written: every state with
  data shows write ratios of ~0.25 (reads ~1) and fails a ``worst_ratio >= 0.6`` limit.

They need root and fio (CI has both), the emulated drive also cgroup-v1 blkio; otherwise they
skip.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, MIB
from pytest_ssdqual.methodology.curves import curves_from_json

from ..conftest import EMU_PROFILE, REPO, emulated_models, limits_yaml, unwrapped
from .test_e2e_methodology import MODEL_HEAD, _need_fio, _results, _run

pytestmark = pytest.mark.e2e

SUITES = {name: str(REPO / "suites" / f"test_{name}.py")
          for name in ("drive_with_data", "seq_after_random")}
SPAN = 256 * MIB  # the smoke profile's span


def _written_mib(image: Path) -> list[int]:
    """The MiB blocks of ``image`` holding anything but zeros (the purge punched holes)."""
    data = image.read_bytes()
    return [i // MIB for i in range(0, len(data), MIB) if any(data[i:i + MIB])]


def _stored_curves(results_dir: Path, workload_id: str) -> list:
    paths = list(results_dir.glob(f"*/*/{workload_id}/rep1/curves.json"))
    assert len(paths) == 1, paths
    return curves_from_json(paths[0].read_text(), source=str(paths[0]))


def test_data_state_suites_on_a_loop_device(
    pytester: pytest.Pytester, loop_device: str, tmp_path: Path
) -> None:
    _need_fio()
    image = tmp_path / "loop.img"  # the loop_device fixture's backing file (its serial)
    alluredir, results = tmp_path / "allure", tmp_path / "results"
    common = (f"--drive={loop_device}", f"--confirm-destroy={image}",
              f"--thresholds={REPO / 'thresholds'}", f"--alluredir={alluredir}",
              f"--results-dir={results}")

    # -- drive with data ------------------------------------------------------------------
    run = _run(pytester, SUITES["drive_with_data"], *common)
    run.assert_outcomes(passed=1)
    written = _written_mib(image)
    # fills 0-192 MiB (the dirty state's test file, 0-25 MiB, inside it), test file 231-256 MiB
    assert written == list(range(0, 192)) + list(range(231, 256)), (written[:3], written[-3:])
    entry = next(v for (_s, w), v in _results(alluredir).items() if w == "drive_with_data")
    m, states = entry["metrics"], entry["states"]
    assert set(m) == set(CATALOG["drive_with_data"].metric_names())
    for state in ("empty", "full25", "full50", "full75", "dirty"):
        # plausible, not fast: 1-second tests on a loaded 2-core VM (virtual.yaml's header)
        assert m[f"{state}_seq_read_128k_qd32.read.bw_mbps"] > 20, state
        assert m[f"{state}_seq_write_128k_qd32.write.bw_mbps"] > 20, state
        assert m[f"{state}_rand_read_4k_qd32.read.iops"] > 300, state
        assert m[f"{state}_rand_write_4k_qd32.write.iops"] > 300, state
        assert 0 < m[f"{state}_rand_read_4k_qd32.read.lat_p99_us"] < 1e6, state
    for state in ("full25", "full50", "full75", "dirty"):
        for figure in ("rand_write_4k_qd32.write.iops", "seq_read_128k_qd32.read.bw_mbps",
                       "rand_read_4k_qd32.read.lat_p99_us"):
            assert m[f"{state}_{figure}_ratio"] == pytest.approx(
                m[f"{state}_{figure}"] / m[f"empty_{figure}"], rel=1e-6)
    perf_ratios = [v for k, v in m.items() if k.endswith(("iops_ratio", "bw_mbps_ratio"))]
    assert len(perf_ratios) == 4 * 4 and m["worst_ratio"] == min(perf_ratios)
    assert states["empty_rand_read_4k_qd32.read.iops"] == "FOB"
    assert states["full75_seq_write_128k_qd32.write.bw_mbps"] == "75 % full"
    assert states["dirty_rand_write_4k_qd32.write.iops"] == (
        "empty but dirty (75 % written, not trimmed)")
    phases = [r["phase"] for r in entry["rounds"]]
    assert phases == (["test file"] + ["empty"] * 4 + ["fill to 25 %"] + ["full25"] * 4
                      + ["fill to 50 %"] + ["full50"] * 4 + ["fill to 75 %"] + ["full75"] * 4
                      + ["test file (dirty)"] + ["dirty"] * 4)
    curves = {(c.name, c.y_name): c for c in _stored_curves(results, "drive_with_data")}
    rw = curves[("rand_write_4k_qd32", "write.iops")]
    assert [x for x, _y in rw.points] == [0, 25, 50, 75]
    assert rw.y_at(75) == pytest.approx(m["full75_rand_write_4k_qd32.write.iops"])
    assert curves[("seq_read_128k_qd32.dirty", "read.bw_mbps")].points == (
        (0, pytest.approx(m["dirty_seq_read_128k_qd32.read.bw_mbps"])),)

    # -- sequential after random ----------------------------------------------------------
    run = _run(pytester, SUITES["seq_after_random"], *common)
    run.assert_outcomes(passed=1)
    assert _written_mib(image) == list(range(0, SPAN // MIB))  # the whole span, nothing past
    entry = next(v for (_s, w), v in _results(alluredir).items() if w == "seq_after_random")
    m = entry["metrics"]
    assert set(m) == set(CATALOG["seq_after_random"].metric_names())
    for key in ("clean_seq_write_128k_qd32.write.bw_mbps", "clean_seq_read_128k_qd32.read.bw_mbps",
                "fragmented_seq_read_128k_qd32.read.bw_mbps",
                "fragmented_seq_write_128k_qd32.write.bw_mbps"):
        assert m[key] > 20, key
    assert m["fragmented_seq_read_128k_qd32.read.bw_mbps_ratio"] == pytest.approx(
        m["fragmented_seq_read_128k_qd32.read.bw_mbps"]
        / m["clean_seq_read_128k_qd32.read.bw_mbps"], rel=1e-6)
    assert m["worst_ratio"] == min(m["fragmented_seq_read_128k_qd32.read.bw_mbps_ratio"],
                                   m["fragmented_seq_write_128k_qd32.write.bw_mbps_ratio"])
    assert m["fragmenting_rand_write_4k_qd32.write.iops"] > 300
    assert entry["states"]["fragmented_seq_read_128k_qd32.read.bw_mbps"] == (
        "after random writes (fragmented)")
    assert [r["phase"] for r in entry["rounds"]] == [
        "clean", "clean", "fragmenting", "fragmented", "fragmented"]
    # the random phase wrote a span's worth of 4 KiB blocks (or stopped at the 7 s cap)
    frag = next(results.glob("*/*/seq_after_random/rep1/03-fragmenting__fragmenting.json"))
    job = json.loads(frag.read_text())["jobs"][0]
    assert job["write"]["io_bytes"] == SPAN or job["write"]["runtime"] >= 6500


# --- an emulated drive whose writes slow down as data is written -------------------------------

#: Reads capped (so they are steady), writes at 40 MB/s until 128 MiB were written since the
#: purge, then 10 MB/s. The test file and the empty state's writes stay below 128 MiB (~25 + 40
#: + 40 MB); the 25 % fill crosses it: every later state writes at a quarter of empty's speed.
FILLS_MODEL = MODEL_HEAD.format(source="test: slows down as it fills", name="FILLS",
                                capacity="256MiB") + (
    "caps: {read_bw_mbps: 200, read_iops: 5000, write_bw_mbps: 40}\n"
    "dirty: {after_write_bytes: 128MiB, write_bw_mbps: 10}\n")
FILLS_LIMITS = limits_yaml({"drive_with_data": {"worst_ratio": {"min": 0.6}}}, **EMU_PROFILE)


def test_drive_with_data_catches_an_emulated_drive_that_slows_down_as_it_fills(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    models = emulated_models(tmp_path / "models", {"fills": FILLS_MODEL})
    limits = tmp_path / "limits.yaml"
    limits.write_text(FILLS_LIMITS)
    alluredir = tmp_path / "allure"
    run = _run(pytester, SUITES["drive_with_data"], f"--emu-models={models}",
               "--drive=emu:fills", f"--thresholds={limits}", f"--alluredir={alluredir}")
    run.assert_outcomes(failed=1)
    m = _results(alluredir)[("EMU-TEST-FILLS", "drive_with_data")]["metrics"]
    # writes: a quarter of empty's speed in every state with data (10 / 40 MB/s)
    for state in ("full25", "full50", "full75", "dirty"):
        for figure in ("rand_write_4k_qd32.write.iops", "seq_write_128k_qd32.write.bw_mbps"):
            assert 0.1 < m[f"{state}_{figure}_ratio"] < 0.5, (state, figure, m)
        # reads are capped the same in every state
        for figure in ("rand_read_4k_qd32.read.iops", "seq_read_128k_qd32.read.bw_mbps"):
            assert 0.7 < m[f"{state}_{figure}_ratio"] < 1.4, (state, figure, m)
    # at the 40 MB/s cap (a loaded host may fall a little short of it: hence ratios < 0.5)
    assert 0.6 * 40e6 / 4096 < m["empty_rand_write_4k_qd32.write.iops"] < 1.25 * 40e6 / 4096
    assert m["full75_seq_write_128k_qd32.write.bw_mbps"] == pytest.approx(10, rel=0.25)
    assert m["worst_ratio"] < 0.5
    out = unwrapped(run.stdout.str())  # the failure message wraps at 120 columns
    assert "worst_ratio 0." in out and "< min 0.6" in out
