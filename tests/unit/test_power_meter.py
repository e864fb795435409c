"""The power meter plug: energy of a window (exact answers), too few samples, the csv format
and its quirks, the cmd: meter through a recording stand-in (tests/fakemeter.py), quarchpy's
refusal, and the power figures of a real fio 3.33 output."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

from pytest_ssdqual.catalog.workloads import get_workload
from pytest_ssdqual.errors import ConfigError, DeviceError
from pytest_ssdqual.fio.parse import parse_fio_file
from pytest_ssdqual.plugs.energy import window_figures
from pytest_ssdqual.plugs.power_csv import PowerSamples, parse_power_rows
from pytest_ssdqual.plugs.power_meter import CmdMeter, CsvMeter, QuarchMeter, open_power_meter
from pytest_ssdqual.plugs.spec import parse_plug_spec
from pytest_ssdqual.qualify.power import power_metrics

FAKEMETER = str(Path(__file__).parents[1] / "fakemeter.py")
DATA = Path(__file__).parents[1] / "data" / "fio"


def samples(times: list[float], watts: list[float]) -> PowerSamples:
    return PowerSamples(tuple(times), tuple(watts), "meter")


def test_energy_is_the_trapezoid_with_interpolated_ends() -> None:
    got = window_figures(samples([0, 1, 2, 3, 4], [2, 4, 4, 4, 2]), 0.5, 3.5)
    assert not isinstance(got, str)
    # ends interpolated to 3 W: 0.5 s x 3.5 W + 4 + 4 + 0.5 s x 3.5 W
    assert got.energy_j == pytest.approx(11.5)
    assert got.power_avg_w == pytest.approx(11.5 / 3)
    assert got.power_peak_w == 4  # an interpolated end is never the peak
    assert got.samples == 3


def test_energy_of_uneven_samples_and_a_window_on_sample_times() -> None:
    got = window_figures(samples([10.0, 10.5, 12.0, 13.0], [1.0, 3.0, 3.0, 0.0]), 10.0, 13.0)
    assert not isinstance(got, str)
    assert got.energy_j == pytest.approx(0.5 * 2 + 1.5 * 3 + 1 * 1.5)  # 7.0 J
    assert got.power_avg_w == pytest.approx(7.0 / 3)
    assert got.power_peak_w == 3.0


@pytest.mark.parametrize(("start", "end", "why"), [
    (0.5, 1.5, "gave 1 power sample(s) in the run's 1.00 s, at least 2 are needed"),
    (-1.0, 2.0, "samples start 1.00 s after the run started"),
    (1.0, 5.0, "samples end 1.00 s before the run ended"),
    (2.0, 2.0, "the run's window is empty"),
])
def test_too_few_samples_give_the_reason(start: float, end: float, why: str) -> None:
    got = window_figures(samples([0, 1, 2, 3, 4], [1, 1, 1, 1, 1]), start, end)
    assert isinstance(got, str) and why in got


def test_no_samples_give_the_reason() -> None:
    assert window_figures(samples([], []), 0, 1) == "meter gave no power samples"


def test_csv_quirks_header_blank_comment_extra_column_out_of_order() -> None:
    rows = parse_power_rows(["time_s,power_w\n", "\n", "# logger restarted\n",
                             "100.2,4.5,12V\n", "100.0,3.5\n", "  100.1 , 4.0 \n"],
                            where="meter.csv")
    assert rows == [(100.0, 3.5), (100.1, 4.0), (100.2, 4.5)]


def test_a_row_that_is_not_numbers_names_the_file_and_line() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_power_rows(["time_s,power_w", "100.0,3.5", "", "12:00:01,4.5 W"],
                         where="/var/log/meter.csv")
    assert exc.value.file == "/var/log/meter.csv" and exc.value.line == 4
    assert "'12:00:01,4.5 W' is not two numbers" in str(exc.value)


def test_a_second_header_and_a_negative_power_are_refused() -> None:
    with pytest.raises(ConfigError) as exc:
        parse_power_rows(["time_s,power_w", "1,2", "time_s,power_w"], where="m.csv")
    assert exc.value.line == 3
    with pytest.raises(ConfigError, match="finite number >= 0 W"):
        parse_power_rows(["1,-2"], where="m.csv")


def test_csv_meter_reads_the_rows_appended_between_start_and_stop(tmp_path: Path) -> None:
    path = tmp_path / "meter.csv"
    path.write_text("time_s,power_w\n1.0,9.9\n")
    meter = CsvMeter(path, grace_s=0.0)
    meter.start()
    with path.open("a") as fh:
        fh.write("2.0,3.0\n2.1,3.5\n2.2,4")  # the last row unfinished: not read yet
    got = meter.stop()
    assert got.times_s == (2.0, 2.1) and got.power_w == (3.0, 3.5)
    assert got.source == f"csv:{path}"
    with path.open("a") as fh:
        fh.write(".0\nbad\n")
    with pytest.raises(ConfigError) as exc:
        meter.stop()
    assert (exc.value.file, exc.value.line) == (str(path), 6)


def test_csv_meter_without_its_file(tmp_path: Path) -> None:
    meter = CsvMeter(tmp_path / "none.csv", grace_s=0.0)
    meter.start()
    with pytest.raises(ConfigError, match="does not exist"):
        meter.stop()


def _cmd_meter(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str = "") -> CmdMeter:
    monkeypatch.setenv("FAKEMETER_LOG", str(tmp_path / "meter.log"))
    monkeypatch.setenv("FAKEMETER_W", "6.25")
    monkeypatch.setenv("FAKEMETER_BACKFILL_S", "1")
    monkeypatch.setenv("FAKEMETER_MODE", mode)
    spec = parse_plug_spec(f"cmd:{sys.executable} {FAKEMETER} --port {{device}} --sn {{serial}}",
                           "power_meter", where="--power-meter")
    meter = open_power_meter(spec, serial="S123", device="/dev/loop7")
    assert isinstance(meter, CmdMeter)
    return meter


def test_cmd_meter_runs_the_command_and_reads_its_samples(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    meter = _cmd_meter(tmp_path, monkeypatch)
    meter.start()
    time.sleep(0.5)
    got = meter.stop()
    log = [json.loads(line) for line in (tmp_path / "meter.log").read_text().splitlines()]
    assert [e["event"] for e in log] == ["start", "stop"]
    assert log[0]["argv"] == ["--port", "/dev/loop7", "--sn", "S123"]
    assert set(got.power_w) == {6.25}
    assert list(got.times_s) == sorted(got.times_s)
    assert got.times_s[0] < log[0]["time_s"] - 0.8 and got.times_s[-1] >= log[1]["time_s"] - 0.2
    assert len(got.times_s) >= 12  # 1 s of backfill at 10 per second, then live samples


def test_cmd_meter_that_fails_breaks_the_test(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    meter = _cmd_meter(tmp_path, monkeypatch, mode="fail")
    meter.start()
    time.sleep(0.3)
    with pytest.raises(DeviceError, match="ended with status 3 while measuring: fakemeter: "
                       "no meter on /dev/ttyUSB9"):
        meter.stop()


def test_cmd_meter_that_fails_after_a_short_workload_still_breaks_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Stopped at once (a workload shorter than the meter's start-up; found in CI: a 20 ms fio
    stand-in run on a loaded host), its failure is still seen, not cut off by the stop."""
    meter = _cmd_meter(tmp_path, monkeypatch, mode="fail")
    meter.start()
    with pytest.raises(DeviceError, match="ended with status 3 while measuring"):
        meter.stop()


def test_cmd_meter_that_prints_nothing_breaks_the_test(tmp_path: Path) -> None:
    meter = CmdMeter(["sleep", "30"], source="cmd:sleep 30")
    meter.start()
    started = time.monotonic()
    with pytest.raises(DeviceError, match=r"printed no reading while measuring \(none within "
                       r"2 s of the workload's end\)"):
        meter.stop()
    assert 1.9 < time.monotonic() - started < 10


def test_cmd_meter_printing_garbage_names_the_line(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    meter = _cmd_meter(tmp_path, monkeypatch, mode="garbage")
    meter.start()
    time.sleep(0.3)
    with pytest.raises(ConfigError) as exc:
        meter.stop()
    assert exc.value.line == 12  # header + 10 backfilled rows, then the bad one
    assert exc.value.file is not None and exc.value.file.startswith("the output of cmd:")


def test_cmd_meter_placeholders_are_only_serial_and_device() -> None:
    spec = parse_plug_spec("cmd:meter --out {file}", "power_meter", where="inventory.yaml:7")
    with pytest.raises(ConfigError) as exc:
        open_power_meter(spec, serial="S", device="/dev/x")
    assert exc.value.key == "inventory.yaml:7" and "{device}, {serial}" in str(exc.value)


def test_quarch_without_quarchpy_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "quarchpy.device", None)  # import -> ImportError
    with pytest.raises(ConfigError) as exc:
        QuarchMeter("USB::QTL1999-02-001", where="--power-meter")
    assert "pip install quarchpy" in str(exc.value) and exc.value.key == "--power-meter"


def test_emu_meter_on_a_real_drive_is_refused() -> None:
    spec = parse_plug_spec("emu", "power_meter", where="--power-meter")
    with pytest.raises(ConfigError, match="not emulated"):
        open_power_meter(spec, serial="S", device="/dev/sdb")


def test_power_figures_of_a_real_fio_run() -> None:
    """fio 3.33's 2 s QD1 random read (timestamp_ms 1796479325139, runtime 2001 ms): a meter
    at a constant 5 W around it gives 5 W, 10.005 J and IOPS / 5 W."""
    result = parse_fio_file(DATA / "fio-3.33_local_randread_4k_qd1_2s_json_plus.json")
    assert result.end_ms == 1796479325139
    end = result.end_ms / 1000
    times = [end - 5 + i * 0.1 for i in range(80)]
    figures, reasons = power_metrics(get_workload("rand_read_4k_qd1"), result, result.metrics(),
                                     samples(times, [5.0] * 80))
    runtime_s = result.runtime_ms / 1000
    assert reasons == {}
    assert figures["power_avg_w"] == pytest.approx(5.0)
    assert figures["power_peak_w"] == 5.0
    assert figures["energy_j"] == pytest.approx(5.0 * runtime_s)
    assert figures["read.iops_per_w"] == pytest.approx(result.metrics()["read.iops"] / 5.0)
    assert set(figures) == {"power_avg_w", "power_peak_w", "energy_j", "read.iops_per_w"}


def test_power_figures_not_measured_name_the_reason() -> None:
    result = parse_fio_file(DATA / "fio-3.33_local_randread_4k_qd1_2s_json_plus.json")
    assert result.end_ms is not None
    end = result.end_ms / 1000
    figures, reasons = power_metrics(get_workload("rand_read_4k_qd1"), result, result.metrics(),
                                     samples([end - 3, end + 1], [5.0, 5.0]))
    assert figures == {}
    assert set(reasons) == {"power_avg_w", "power_peak_w", "energy_j", "read.iops_per_w"}
    assert reasons["energy_j"] == ("not measured: meter gave 0 power sample(s) in the run's "
                                   "2.00 s, at least 2 are needed")
