"""The emulated drive's power model (model key ``power:``) and its meter's log: exact watts for
known byte counts, the APST idle state, bad model files, and the E12 twin's figures."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_ssdqual.emulate.blkio import THROTTLE_FILES
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.power_meter import EmulatedPowerMeter, MeteredThrottle
from pytest_ssdqual.emulate.power_model import PowerModel, apst_off_flag, power_w
from pytest_ssdqual.errors import ConfigError

ROOT = Path(__file__).parents[2]
E12 = ROOT / "emulated" / "phison-e12-960g.yaml"
MODEL = PowerModel(idle_w=2.0, read_w_per_mbps=0.002, write_w_per_mbps=0.003,
                   apst_idle_w=0.005, apst_after_s=1.0)


def test_power_is_idle_plus_watts_per_mbps() -> None:
    assert power_w(MODEL, read_mbps=1000, write_mbps=0, idle_for_s=0, apst=True) == 4.0
    assert power_w(MODEL, read_mbps=500, write_mbps=1000, idle_for_s=0, apst=True) == 6.0
    assert power_w(MODEL, read_mbps=0, write_mbps=0, idle_for_s=0.9, apst=True) == 2.0
    assert power_w(MODEL, read_mbps=0, write_mbps=0, idle_for_s=1.0, apst=True) == 0.005
    assert power_w(MODEL, read_mbps=0, write_mbps=0, idle_for_s=9.0, apst=False) == 2.0


def test_the_e12_twin_carries_its_power_table_bounds() -> None:
    model = load_model(E12)
    assert model.power == PowerModel(1.8, 0.002219, 0.002367, 0.0018, 2.5)
    assert model.nvme is not None and model.nvme.power_states[0].max_power_w == 8.9
    # at the rated 3,000 MB/s write the drive draws PS0's 8.9 W (the model's bound)
    assert power_w(model.power, read_mbps=0, write_mbps=3000, idle_for_s=0,
                   apst=True) == pytest.approx(8.9, abs=0.002)


def _model_file(tmp_path: Path, power: str) -> Path:
    text = E12.read_text().split("\npower:")[0] + "\n" + power
    path = tmp_path / "twin.yaml"
    path.write_text(text)
    return path


def test_apst_idle_without_its_time_is_refused(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "power: {idle_w: 1.0, apst_idle_w: 0.01}\n")
    with pytest.raises(ConfigError) as exc:
        load_model(path)
    assert exc.value.file == str(path) and "apst_idle_w and apst_after_s go together" in str(
        exc.value)


def test_apst_idle_above_active_idle_is_refused(tmp_path: Path) -> None:
    path = _model_file(tmp_path, "power:\n  idle_w: 1.0\n  apst_idle_w: 2.0\n  apst_after_s: 1\n")
    with pytest.raises(ConfigError) as exc:
        load_model(path)
    assert exc.value.key == "power.apst_idle_w" and exc.value.line is not None


def test_an_unknown_power_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="idle_watts"):
        load_model(_model_file(tmp_path, "power: {idle_w: 1.0, idle_watts: 2}\n"))


class _Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def _counters(folder: Path, read: int, write: int) -> None:
    (folder / "blkio.throttle.io_service_bytes").write_text(
        f"7:3 Read {read}\n7:3 Write {write}\n7:3 Total {read + write}\n")
    (folder / "blkio.throttle.io_serviced").write_text("7:3 Total 0\n")


@contextlib.contextmanager
def _metered_e12(folder: Path, clock: _Clock) -> Iterator[tuple[MeteredThrottle,
                                                               EmulatedPowerMeter]]:
    """The E12 twin's metered throttle over blank counters in ``folder`` (log ``power.csv``,
    time from ``clock``) and its meter, started."""
    for name in THROTTLE_FILES.values():
        (folder / name).write_text("")
    _counters(folder, 0, 0)
    log_path = folder / "power.csv"
    with log_path.open("a") as log:
        throttle = MeteredThrottle(folder, (7, 3), load_model(E12), log, log_path, clock)
        meter = EmulatedPowerMeter(log_path, "phison-e12-960g")
        meter.start()
        yield throttle, meter


def test_metered_throttle_logs_the_models_watts_at_the_drives_rate(tmp_path: Path) -> None:
    """The E12 twin (figures_scale 0.1) writing 30 MB in 0.1 s (300 MB/s, the drive's 3,000)
    draws 1.8 + 0.002367 x 3000 W; idle 2.5 s later, PS4's 1.8 mW; with APST off, 1.8 W."""
    clock = _Clock()
    with _metered_e12(tmp_path, clock) as (throttle, meter):
        log_path = tmp_path / "power.csv"
        throttle.counters()  # the baseline: no row
        clock.now += 0.1
        _counters(tmp_path, 0, 30_000_000)
        throttle.counters()
        clock.now += 2.5
        throttle.counters()  # 2.5 s without I/O: APST's idle state
        apst_off_flag(log_path).touch()
        clock.now += 1.0
        throttle.counters()
    rows = meter.rows()
    start = 1_800_000_000.0
    assert [r[0] for r in rows] == pytest.approx([start + 0.05, start + 1.35, start + 3.1])
    assert [r[1] for r in rows] == pytest.approx([1.8 + 0.002367 * 3000, 0.0018, 1.8])
    assert [r[3] for r in rows] == [30_000_000] * 3  # cumulative write bytes at each poll end


class _PreemptedClock(_Clock):
    """A clock a read can be preempted in: once ``stall`` is set, that many seconds pass
    between the next reading (before the counters) and the one after it."""

    def __init__(self) -> None:
        super().__init__()
        self.stall = 0.0
        self._armed = False

    def __call__(self) -> float:
        if self.stall and self._armed:  # the reading after the counters
            self.now += self.stall
            self.stall, self._armed = 0.0, False
        elif self.stall:  # the reading before them
            self._armed = True
        return self.now


def test_a_read_preempted_between_its_clock_readings_ends_no_interval(tmp_path: Path) -> None:
    """CI (2026-12-06): under load the E12 twin at its write cap drew 9.6 W, over the model's
    8.9 W: a clock read late by 10 ms cut the next 0.1 s interval short of the bytes it counted.
    Now a read whose clock readings are over ``MAX_READ_S`` apart ends no interval: the next
    read's row covers both, at the true rate."""
    clock = _PreemptedClock()
    with _metered_e12(tmp_path, clock) as (throttle, meter):
        clock.stall = 0.01
        throttle.counters()  # preempted: no baseline
        clock.now += 0.03
        throttle.counters()  # the baseline
        clock.now += 0.1
        _counters(tmp_path, 0, 30_000_000)  # 300 MB/s over 0.1 s (the drive's 3,000)
        clock.stall = 0.01  # read, then preempted before the clock: its time 10 ms late
        throttle.counters()
        clock.now += 0.09
        _counters(tmp_path, 0, 60_000_000)
        throttle.counters()
        clock.now += 0.6  # a read preempted MAX_GAP_S after the last row still ends one
        clock.stall = 0.01
        throttle.counters()
    rows = meter.rows()
    start = 1_800_000_000.0
    assert len(rows) == 2, rows
    # one row for 0.2 s at 300 MB/s: 1.8 + 0.002367 x 3000 W, never the 3,333 MB/s a 0.09 s
    # interval holding 0.1 s of bytes would give
    begin = start + 0.04  # the baseline: the first read made in time
    assert rows[0][0] == pytest.approx(begin + 0.1)
    assert rows[0][1] == pytest.approx(1.8 + 0.002367 * 3000)
    assert rows[1][0] == pytest.approx(begin + 0.2 + (0.6 + 0.005) / 2)
    assert rows[1][1] == pytest.approx(1.8)
