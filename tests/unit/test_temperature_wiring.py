"""The temperature of a test: per-second bandwidth logs placed on the epoch clock from fio's
own output, the samples around a run (file kept, figures and reasons), not applicable without
a sensor, the interval option, and the temperature line on the bandwidth chart."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import CATALOG, PROFILES
from pytest_ssdqual.drive.temperature_source import TemperatureSource
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.plugin.option_types import temperature_interval
from pytest_ssdqual.qualify.temperature import (
    DriveTemperature,
    bandwidth_seconds,
    sampled,
    split_reasons,
)
from pytest_ssdqual.report.temperature_chart import temperature_secondary
from pytest_ssdqual.results.gated_metrics import has_direction

REPO = Path(__file__).resolve().parents[2]
#: Real fio 3.33 output (tests/data/fio/README.md): 2,001 ms measured runtime.
FIO_JSON = REPO / "tests/data/fio/fio-3.33_local_randread_4k_qd1_2s_json_plus.json"


def _run_folder(folder: Path, end_ms: int, lines: str) -> Path:
    folder.mkdir(parents=True)
    doc = json.loads(FIO_JSON.read_text())
    doc["timestamp_ms"] = end_ms
    (folder / "w.json").write_text(json.dumps(doc))
    (folder / "log_bw.1.log").write_text(lines)
    return folder


def test_bandwidth_seconds_are_placed_at_end_minus_runtime(tmp_path: Path) -> None:
    # read 1000 KiB/s and write 2000 KiB/s in second 1, write only in second 2
    _run_folder(tmp_path / "a", 100_000_000, "1000, 1000, 0, 0, 0\n1000, 2000, 1, 0, 0\n"
                "2000, 3000, 1, 0, 0\n")
    _run_folder(tmp_path / "b" / "01-step", 200_000_000, "1000, 500, 1, 0, 0\n")
    (tmp_path / "c").mkdir()  # a folder with a log but no fio output: left out
    (tmp_path / "c" / "log_bw.1.log").write_text("1000, 500, 1, 0, 0\n")
    got = bandwidth_seconds(tmp_path)
    start_a, start_b = (100_000_000 - 2001) / 1000, (200_000_000 - 2001) / 1000
    assert [(s.end_s, round(s.bw_mbps, 3), s.index) for s in got] == [
        (start_a + 1, 3.072, 0), (start_a + 2, 3.072, 1), (start_b + 1, 0.512, 0)]
    assert len({s.run for s in got}) == 2


def test_sampled_keeps_the_samples_and_judges_them(tmp_path: Path) -> None:
    readings = iter([50.0, 61.0, 64.0, 58.0] + [58.0] * 100)
    source = TemperatureSource(lambda: next(readings), "test sensor", 60.0, "test WCTEMP")
    result, trun = sampled(DriveTemperature(source, "", 0.05), tmp_path,
                           lambda: time.sleep(0.3) or 7)
    assert result == 7
    temps = [s.temperature_c for s in trun.samples]
    assert temps[:4] == [50.0, 61.0, 64.0, 58.0] and len(temps) >= 5
    assert trun.result.figures["temperature.max_c"] == 64.0
    above = trun.samples[3].t_s - trun.samples[1].t_s  # 61 and 64 °C held until 58 °C
    assert trun.result.figures["temperature.above_wctemp_s"] == pytest.approx(above)
    # no bandwidth log in the folder: throttling is not applicable, with the reason
    na, failing = split_reasons(trun)
    assert failing == {} and set(na) == {"temperature.throttle_events", "temperature.throttled_s"}
    rows = (tmp_path / "temperature.csv").read_text().splitlines()
    assert rows[0] == "time_s,t_s,temperature_c,warning_c"
    assert rows[1].split(",")[1:] == ["0.000", "50", "60"]
    axis, (t_s, values), refs = temperature_secondary("\n".join(rows))  # type: ignore[misc]
    assert values[:4] == (50.0, 61.0, 64.0, 58.0) and t_s[0] == 0.0
    assert refs == {"WCTEMP 60 °C": 60.0} and axis == "drive temperature (°C)"
    assert temperature_secondary("time_s,t_s,temperature_c,warning_c\n") is None


def test_no_source_and_a_source_without_samples(tmp_path: Path) -> None:
    none = DriveTemperature(None, "not applicable: /dev/loop0: a loop device has no "
                            "temperature sensor", 1.0)
    result, trun = sampled(none, tmp_path, lambda: 3)
    assert result == 3 and trun.samples == () and trun.result.figures == {}
    na, failing = split_reasons(trun)
    assert failing == {} and na["temperature.max_c"].endswith("has no temperature sensor")
    assert not (tmp_path / "temperature.csv").exists()
    dead = TemperatureSource(lambda: None, "dead sensor")
    _, trun = sampled(DriveTemperature(dead, "", 0.05), tmp_path, lambda: None)
    na, failing = split_reasons(trun)
    assert na == {} and failing["temperature.max_c"] == "not measured: no temperature sample"


def test_interval_from_profile_and_ini_and_metric_names() -> None:
    smoke = PROFILES["smoke"]
    assert smoke.temperature_interval_s == 1.0 and PROFILES["full"].temperature_interval_s == 5
    assert temperature_interval(smoke, "") is smoke
    assert temperature_interval(smoke, "2.5").temperature_interval_s == 2.5
    assert temperature_interval(smoke, "0").temperature_interval_s == 0
    assert temperature_interval(smoke, "0.2").temperature_interval_s == 0.2
    for bad in ("-1", "hot", "nan", "0.001"):  # 0.001 s: tool runs back to back
        with pytest.raises(ConfigError, match="ssdqual_temperature_interval_s"):
            temperature_interval(smoke, bad)
    assert CATALOG["sustained_write"].canonical_metric("temperature.max_c") == "temperature.max_c"
    assert CATALOG["health"].canonical_metric("temperature.max_c") is None
    assert not has_direction("temperature.throttle_events")  # judged by limits, never gated



#: matplotlib's "darkorange": the temperature line and its WCTEMP.
ORANGE = (1.0, 140 / 255, 0.0)


def _orange_pixels(png: bytes) -> int:
    import io

    import numpy as np
    from matplotlib.image import imread

    pixels = imread(io.BytesIO(png))[:, :, :3]
    return int(np.sum(np.all(np.abs(pixels - np.array(ORANGE)) < 0.08, axis=2)))


def test_the_temperature_is_drawn_on_the_bandwidth_panels_second_axis(tmp_path: Path) -> None:
    from pytest_ssdqual.report.plots import Panel, over_time_chart
    from pytest_ssdqual.report.temperature_chart import with_temperature_chart

    panels = [Panel("bandwidth (MB/s)", {"write": ((1, 2, 3, 4), (300.0, 300.0, 75.0, 75.0))}),
              Panel("IOPS", {"write": ((1, 2, 3, 4), (2300.0, 2300.0, 570.0, 570.0))})]
    plain = over_time_chart(panels, title="t")
    charts = {"over time": plain}
    assert not with_temperature_chart(charts, "over time", panels, tmp_path / "none.csv",
                                      title="t")
    csv = tmp_path / "temperature.csv"
    csv.write_text("time_s,t_s,temperature_c,warning_c\n1.0,0.5,50,60\n2.0,1.5,66,60\n"
                   "3.0,2.5,70.5,60\n4.0,3.5,68,60\n")
    assert with_temperature_chart(charts, "over time", panels, csv, title="t")
    assert _orange_pixels(plain) == 0 and _orange_pixels(charts["over time"]) > 300


def test_one_throttling_run_of_three_is_not_outvoted_under_repeat():
    from pytest_ssdqual.results.repeats import aggregate_repeats

    runs = [{"temperature.throttle_events": v, "temperature.above_wctemp_s": s,
             "temperature.throttled_s": t, "temperature.max_c": c}
            for v, s, t, c in ((0, 0, 0, 55), (2, 4.5, 3, 68.6), (0, 0, 0, 56))]
    metrics, _spread = aggregate_repeats(runs)
    assert metrics == {"temperature.throttle_events": 2, "temperature.above_wctemp_s": 4.5,
                       "temperature.throttled_s": 3, "temperature.max_c": 68.6}


def _nvme_stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The recording ``nvme`` / ``smartctl`` stand-in (``tests/fakenvme.py``) first on PATH,
    answering as an NVMe drive at 311 K (38 °C) with WCTEMP 353 K; returns its call log."""
    import os
    import shutil

    answers = tmp_path / "answers"
    answers.mkdir()
    (answers / "smart-log.json").write_text(json.dumps({"temperature": 311}))
    (answers / "id-ctrl.json").write_text(json.dumps({"wctemp": 353}))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for program in ("nvme", "smartctl"):
        shutil.copy(REPO / "tests" / "fakenvme.py", bin_dir / program)
        (bin_dir / program).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKENVME_DIR", str(answers))
    return answers / "calls.jsonl"


def test_a_real_drives_temperature_source_is_probed_once_a_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from pytest_ssdqual.drive.probes import DriveProbes
    from pytest_ssdqual.qualify.temperature import drive_temperature

    calls = _nvme_stand_in(tmp_path, monkeypatch)
    ctx = SimpleNamespace(  # what drive_temperature reads of a DriveContext
        target=SimpleNamespace(spec=SimpleNamespace(kind="block"), fio_filename="/dev/nvme9n1"),
        identity=SimpleNamespace(kind="disk", transport="NVMe", smartctl_device_type=""),
        probes=DriveProbes())

    def argvs() -> list[list[str]]:
        return [json.loads(line)["argv"][1:3] for line in calls.read_text().splitlines()]

    first = drive_temperature(ctx, 1.0)  # type: ignore[arg-type]
    assert first.source is not None and first.source.warning_c == 80
    assert argvs() == [["smart-log", "-o"], ["id-ctrl", "-o"]]  # the probe
    for _test in range(3):  # the drive's next tests: the same source, no probe
        again = drive_temperature(ctx, 1.0)  # type: ignore[arg-type]
        assert again.source is first.source
    assert len(argvs()) == 2
    assert first.source.read() == 38.0  # a sample still reads the drive
    assert argvs()[-1] == ["smart-log", "-o"] and len(argvs()) == 3
    ctx.probes.forget()  # a firmware update: probed again
    assert drive_temperature(ctx, 1.0).source is not first.source  # type: ignore[arg-type]
    assert len(argvs()) == 5


def test_a_source_that_reads_nothing_is_probed_again_and_no_reading_is_not_kept(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A drive back from a power cycle may not answer for a moment: a source that reads
    ``None`` is dropped (the next test probes again), and "no reading" is not kept for a
    drive (only a kind without a sensor is)."""
    from types import SimpleNamespace

    from pytest_ssdqual.drive.probes import DriveProbes
    from pytest_ssdqual.qualify.temperature import drive_temperature

    calls = _nvme_stand_in(tmp_path, monkeypatch)
    ctx = SimpleNamespace(
        target=SimpleNamespace(spec=SimpleNamespace(kind="block"), fio_filename="/dev/nvme9n1"),
        identity=SimpleNamespace(kind="disk", transport="NVMe", smartctl_device_type=""),
        probes=DriveProbes())
    first = drive_temperature(ctx, 1.0)  # type: ignore[arg-type]
    assert first.source is not None and ctx.probes.temperature is first.source
    smart = tmp_path / "answers" / "smart-log.json"
    smart.rename(tmp_path / "answers" / "smart-log.json.off")  # the drive stops answering
    assert first.source.read() is None
    assert ctx.probes.temperature is None
    gone = drive_temperature(ctx, 1.0)  # type: ignore[arg-type]
    assert gone.source is None and gone.reason == (
        "not applicable: /dev/nvme9n1: no temperature reading (no sysfs hwmon, nvme-cli or "
        "smartctl gave one)")
    assert ctx.probes.temperature is None  # not kept: asked again at the next test
    (tmp_path / "answers" / "smart-log.json.off").rename(smart)  # back
    probes = len(calls.read_text().splitlines())
    back = drive_temperature(ctx, 1.0)  # type: ignore[arg-type]
    assert back.source is not None and back.source.read() == 38.0
    assert len(calls.read_text().splitlines()) == probes + 3  # smart-log, id-ctrl, the read
    loop = SimpleNamespace(
        target=SimpleNamespace(spec=SimpleNamespace(kind="block"), fio_filename="/dev/loop9"),
        identity=SimpleNamespace(kind="loop", transport="", smartctl_device_type=""),
        probes=DriveProbes())
    assert drive_temperature(loop, 1.0).source is None  # type: ignore[arg-type]
    assert loop.probes.temperature == "/dev/loop9: a loop device has no temperature sensor"
