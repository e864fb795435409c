"""End to end: power and energy on the Phison E12 twin (``emu:phison-e12-960g``), real fio.

1. The arithmetic: a 128 KiB sequential write and a 4 KiB random read, each metered by the
   twin's own meter; the energy from its samples (``plugs.energy``: trapezoid over fio's
   measured window) matches the model's energy computed from the controller's own blkio
   counters over the same window (``idle_w x seconds + W per MB/s x MB moved / figures_scale``)
   within 2 %, and W, J and MB/s/W or IOPS/W are consistent with fio's own figures.
2. The pipeline: a pytest session with ``--power-meter=emu`` stores ``power_avg_w``,
   ``energy_j`` and ``write.bw_mbps_per_w`` in the record and judges them by limits -- one
   passing, one failing with the measured watts.

Needs root, cgroup-v1 blkio and fio; otherwise it skips with the reason.
"""

from __future__ import annotations

import bisect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import PROFILES, get_workload
from pytest_ssdqual.drive.spec import parse_drive_option
from pytest_ssdqual.emulate.host import host_problems
from pytest_ssdqual.emulate.resolve import model_folders, resolve_spec
from pytest_ssdqual.plugs.power_meter import open_power_meter
from pytest_ssdqual.plugs.spec import PlugSpec
from pytest_ssdqual.qualify.power import metered
from pytest_ssdqual.qualify.session import QualSession, SessionOptions
from pytest_ssdqual.report.rejudge import rejudge_run
from pytest_ssdqual.results.store import ResultsStore, StoredRun
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import REPO, limits_yaml

pytestmark = pytest.mark.e2e


def _needs_emulation() -> None:
    problems = host_problems()
    if problems:
        pytest.skip("; ".join(problems))
    if shutil.which("fio") is None:
        pytest.skip("fio not installed (./test.sh installs it)")


def _smoke_run(tmp_path: Path, *args: str) -> tuple[int, str]:
    """A smoke pytest session on the emulated drives of ``args`` (judged by
    ``tmp_path/limits.yaml``, stored in ``tmp_path/results``), its image in RAM; returns its
    exit status and output."""
    emu_dir = Path(tempfile.mkdtemp(prefix="ssdqual-test-", dir="/dev/shm"))
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", *args, f"--rootdir={REPO}", "-p", "no:cacheprovider",
             "-o", "addopts=", "--ssd-profile=smoke", f"--thresholds={tmp_path / 'limits.yaml'}",
             f"--results-dir={tmp_path / 'results'}", "-rA"],
            capture_output=True, text=True, cwd=tmp_path, timeout=300,
            env={**os.environ, "SSDQUAL_EMU_DIR": str(emu_dir)})
    finally:
        shutil.rmtree(emu_dir, ignore_errors=True)
    return proc.returncode, proc.stdout + proc.stderr


def _at(times: list[float], values: list[float], t: float) -> float:
    """``values`` (cumulative counters at ``times``) interpolated linearly at ``t``."""
    i = bisect.bisect_left(times, t)
    if i == 0 or times[i] == t:
        return values[i]
    return values[i - 1] + (values[i] - values[i - 1]) * (t - times[i - 1]) / (
        times[i] - times[i - 1])


def test_e12_twin_energy_matches_its_model_within_2_pct(tmp_path: Path) -> None:
    _needs_emulation()
    limits = tmp_path / "limits.yaml"
    limits.write_text("version: 1\nprofiles: []\n")
    spec = resolve_spec(parse_drive_option("emu:phison-e12-960g"), model_folders(REPO, []))
    options = SessionOptions(specs=(spec,), confirmed_serials=(), profile=PROFILES["smoke"],
                             thresholds=ThresholdSet.load([limits]))
    (tmp_path / "scratch").mkdir()
    session = QualSession.create(options, tmp_path / "scratch")
    try:
        ctx = session.drive(spec)
        drive = ctx.target.drive  # type: ignore[attr-defined]
        model = drive.model
        meter = open_power_meter(PlugSpec("power_meter", "emu"), serial=ctx.identity.serial,
                                 device=ctx.target.device, emulated=drive)
        assert meter is not None
        for wid, base, efficiency in (("seq_write_128k_qd32", "write.bw_mbps",
                                       "write.bw_mbps_per_w"),
                                      ("rand_read_4k_qd32", "read.iops", "read.iops_per_w")):
            workload = get_workload(wid)
            started = time.monotonic()
            outcome = metered(meter, workload, lambda w=workload: session.run_workload(  # type: ignore[misc]
                ctx, w, tmp_path / w.id))
            took = time.monotonic() - started
            m = outcome.metrics
            result = outcome.result
            assert result.end_ms is not None
            end = result.end_ms / 1000
            start = end - result.runtime_ms / 1000
            rows = [[float(f) for f in line.split(",")]
                    for line in (drive.workdir / "power.csv").read_text().splitlines()
                    if line and not line.startswith("time_s")]
            ends = [r[4] for r in rows]
            moved = {k: _at(ends, [r[col] for r in rows], end) - _at(ends, [r[col] for r in rows],
                                                                       start)
                     for k, col in (("read", 2), ("write", 3))}
            power = model.power
            scale = model.figures_scale.factor
            expected_j = (power.idle_w * (end - start)
                          + power.read_w_per_mbps * moved["read"] / 1e6 / scale
                          + power.write_w_per_mbps * moved["write"] / 1e6 / scale)
            print(f"{wid}: measured {m['energy_j']:.3f} J, model {expected_j:.3f} J "
                  f"({(m['energy_j'] / expected_j - 1) * 100:+.2f} %), {m['power_avg_w']:.3f} W "
                  f"avg, {m['power_peak_w']:.3f} W peak, {m[efficiency]:.2f} {efficiency}, "
                  f"window {end - start:.2f} s, fio+meter {took:.1f} s")
            assert m["energy_j"] == pytest.approx(expected_j, rel=0.02)
            assert m["power_avg_w"] == pytest.approx(m["energy_j"] / (end - start))
            assert m[efficiency] == pytest.approx(m[base] / m["power_avg_w"])
            # the peak: one 0.1 s sample; blkio dispatches the capped writes in bursts, and
            # under load a sample measured up to 5.5 % over the model's 8.9 W (CI, 2026-12-06)
            assert power.idle_w < m["power_avg_w"] <= m["power_peak_w"] <= 8.9 * 1.10
            assert outcome.result.extra_unmeasured == {}
    finally:
        session.close()


SUITE = """
import pytest

@pytest.mark.destructive
def test_write(qualify):
    qualify("seq_write_128k_qd32")
"""


def test_power_figures_are_stored_and_judged_by_limits(tmp_path: Path) -> None:
    _needs_emulation()
    (tmp_path / "test_power_suite.py").write_text(SUITE)
    (tmp_path / "limits.yaml").write_text(limits_yaml(
        {"seq_write_128k_qd32": {"energy_j": {"max": 100}, "power_avg_w": {"max": 5.0}}},
        name="E12 power", match="{controller: PS5012-E12}", source="test power limits"))
    returncode, out = _smoke_run(tmp_path, str(tmp_path / "test_power_suite.py"),
                                 "--drive=emu:phison-e12-960g", "--power-meter=emu")
    assert returncode == 1, out
    assert re.search(r"power_avg_w [\d.]+ > max 5 \(margin -\d", out), out
    # over the workload's measured window: smoke's 3 s, as fio timed it (3.01 s on a busy host)
    window = re.search(r"  power: [\d.]+ W average, [\d.]+ W peak, [\d.]+ J over ([\d.]+) s", out)
    assert window and 2.9 <= float(window[1]) <= 3.2, out
    [run] = [StoredRun.load(p) for p in ResultsStore(tmp_path / "results").complete_runs()]
    [record] = run.records
    metrics = record["metrics"]
    assert {"power_avg_w", "power_peak_w", "energy_j", "write.bw_mbps_per_w"} <= set(metrics)
    verdicts = {v["metric"]: v for v in record["verdicts"]}
    assert verdicts["power_avg_w"]["status"] == "fail"
    assert verdicts["power_avg_w"]["measured"] == pytest.approx(metrics["power_avg_w"])
    assert 5.0 < metrics["power_avg_w"] <= 8.9 * 1.05
    assert verdicts["energy_j"]["status"] == "pass"
    assert verdicts["write.bw_mbps_per_w"]["status"] == "not_judged"
    assert metrics["write.bw_mbps_per_w"] == pytest.approx(
        metrics["write.bw_mbps"] / metrics["power_avg_w"])
    print(json.dumps({k: round(v, 3) for k, v in metrics.items()
                      if k in ("power_avg_w", "power_peak_w", "energy_j", "write.bw_mbps",
                               "write.bw_mbps_per_w")}))
    # rejudged like any figure: a new limit on MB/s/W (the real drive's 3,000 MB/s at <= 8.9 W
    # is >= 337 MB/s/W; the twin's x0.1, as every rate limit) and a tighter energy ceiling
    later = tmp_path / "later.yaml"
    later.write_text(limits_yaml(
        {"seq_write_128k_qd32": {"bw_mbps_per_w": {"min": 300}, "energy_j": {"max": 20}}},
        name="E12 power", match="{controller: PS5012-E12}", source="later power limits"))
    [again] = rejudge_run(run, ThresholdSet.load([later]))
    judged = {v.metric: v for v in again.verdicts}
    assert judged["write.bw_mbps_per_w"].status == "pass"
    assert judged["write.bw_mbps_per_w"].limit is not None
    assert judged["write.bw_mbps_per_w"].limit.min == pytest.approx(30)  # scaled x0.1
    assert judged["energy_j"].status == "fail"
    assert judged["energy_j"].measured == pytest.approx(metrics["energy_j"])


def test_idle_power_on_the_e12_twin_and_a_twin_without_a_power_model(tmp_path: Path) -> None:
    """Active idle = the model's 1.8 W (APST off), idle with APST = PS4's 1.8 mW once the
    twin has been idle past its 2.5 s APST timeout, both judged by limits and compared with the
    table; the same twin without a ``power:`` block skips with the reason."""
    _needs_emulation()
    e12 = (REPO / "emulated" / "phison-e12-960g.yaml").read_text()
    models = tmp_path / "models"
    models.mkdir()
    (models / "e12-no-power.yaml").write_text(e12.split("\npower:")[0].replace(
        "serial: EMU-PHISON-E12-960G", "serial: EMU-E12-NO-POWER") + "\n")
    (tmp_path / "limits.yaml").write_text(limits_yaml(
        {"idle_power": {"active_idle_w": {"max": 2.0}, "idle_apst_w": {"max": 0.005}}},
        name="E12 idle power", match="{controller: PS5012-E12}", source="test power limits"))
    returncode, out = _smoke_run(tmp_path, str(REPO / "suites" / "test_power.py"),
                                 "--drive=emu:phison-e12-960g", "--drive=emu:e12-no-power",
                                 f"--emu-models={models}")
    assert returncode == 0, out
    assert "1 passed, 1 skipped" in out, out
    assert "has no power: block" in out, out
    [run] = [StoredRun.load(p) for p in ResultsStore(tmp_path / "results").complete_runs()]
    [record] = [r for r in run.records if r["workload"] == "idle_power"]
    m = record["metrics"]
    print(json.dumps({k: round(v, 5) for k, v in m.items()}))
    assert m["active_idle_w"] == pytest.approx(1.8, rel=0.01)
    assert m["idle_apst_w"] == pytest.approx(0.0018, rel=0.01)
    assert m["apst_saving_pct"] == pytest.approx(99.9, abs=0.05)
    assert (m["ps0_max_power_w"], m["deepest_idle_max_power_w"]) == (8.9, 0.0018)
    verdicts = {v["metric"]: v["status"] for v in record["verdicts"]}
    assert verdicts["active_idle_w"] == verdicts["idle_apst_w"] == "pass"
