"""The emulated drive's thermal model: exact temperatures, the throttle with its hysteresis,
the caps it puts in force, the model file's checks and the published state."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from pytest_ssdqual.emulate.model import Caps
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.emulate.state import IoCounters, ThrottleController
from pytest_ssdqual.emulate.thermal import (
    ThermalModel,
    ThermalState,
    emulated_temperature_source,
    publish,
    read_published,
)
from pytest_ssdqual.errors import ConfigErrors

REPO = Path(__file__).resolve().parents[2]
MODEL = ThermalModel(45, 0.1, 4, 70, 62, Caps(write_bw_mbps=75), read_share=0.5)


def test_first_order_heating_reading_share_and_cooling() -> None:
    state = ThermalState(MODEL)
    state.step(2.0, 0, 600 * 10**6)  # 300 MB/s written for 2 s: towards 75 °C
    assert state.temperature_c == pytest.approx(75 - 30 * math.exp(-0.5))
    state = ThermalState(MODEL)
    state.step(4.0, 800 * 10**6, 0)  # 200 MB/s read = 100 MB/s written: towards 55 °C
    assert state.temperature_c == pytest.approx(55 - 10 * math.exp(-1))
    state.step(1e6, 0, 0)  # idle long enough: back to ambient
    assert state.temperature_c == pytest.approx(45)
    state.step(0, 0, 10**9)  # no time: nothing happens
    assert state.temperature_c == pytest.approx(45)


def test_throttle_holds_from_throttle_c_until_below_resume_c() -> None:
    state = ThermalState(MODEL)
    state.temperature_c = 69.9
    assert state.caps() == Caps()
    state.step(0.1, 0, 40 * 10**6)  # 400 MB/s -> above 70
    assert state.throttled and state.caps() == Caps(write_bw_mbps=75)
    state.temperature_c = 63.0
    state.step(0.001, 0, 0)
    assert state.throttled  # 63 °C: still above resume_c 62
    state.temperature_c = 62.0
    state.step(0.001, 0, 0)
    assert not state.throttled


def test_controller_tightens_its_caps_when_hot() -> None:
    model = load_model(REPO / "emulated" / "demo-hot.yaml")
    ctl = ThrottleController(model, 256 * 2**20)
    ctl.step(0.0, IoCounters())
    written = 0
    t = 0.0
    while not ctl.thermal.throttled and t < 30:  # type: ignore[union-attr]
        t += 0.1
        written += 30 * 10**6  # 300 MB/s
        caps = ctl.step(t, IoCounters(write_bytes=written, ios=int(t * 10)))
    # 45 + 0.133 * 300 = 84.9 °C steady; 70 °C after 4 ln(39.9 / 14.9) = 3.94 s
    assert t == pytest.approx(4 * math.log(39.9 / 14.9), abs=0.11)
    assert caps.write_bw_mbps == 75 and caps.read_bw_mbps == 500


def test_model_file_thermal_checks(tmp_path: Path) -> None:
    text = (REPO / "emulated" / "demo-hot.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("resume_c: 62", "resume_c: 71")
                   .replace("temperature: {warning_c: 60, critical_c: 80}\n", ""))
    with pytest.raises(ConfigErrors) as info:
        load_model(bad)
    got = {(e.key, e.message) for e in info.value.errors}
    assert ("thermal", "thermal: without temperature: (the drive's WCTEMP / CCTEMP)") in got
    assert ("thermal.resume_c", "resume_c 71 is not below throttle_c 70") in got
    bad.write_text(text.replace("throttle_caps: {write_bw_mbps: 75}", "throttle_caps: {}"))
    with pytest.raises(ConfigErrors, match="thermal throttling sets no cap"):
        load_model(bad)
    bad.write_text(text.replace("ambient_c: 45", "ambient_cc: 45"))
    with pytest.raises(ConfigErrors, match="ambient_cc"):
        load_model(bad)


def test_published_state_is_the_emulated_source(tmp_path: Path) -> None:
    model = load_model(REPO / "emulated" / "demo-hot.yaml")

    class Drive:
        workdir = tmp_path

    drive = Drive()
    drive.model = model  # type: ignore[attr-defined]
    source = emulated_temperature_source(drive)
    assert not isinstance(source, str)
    assert source.read() is None  # nothing published yet
    state = ThermalState(model.thermal)  # type: ignore[arg-type]
    state.temperature_c = 66.25
    publish(tmp_path / "temperature.json", state, 1000.0)
    assert source.read() == 66.25 and (source.warning_c, source.critical_c) == (60, 80)
    # a restarted controller starts from it, cooled for the time it was down
    again = ThermalState(model.thermal)  # type: ignore[arg-type]
    again.resume(read_published(tmp_path / "temperature.json"), 1004.0)
    assert again.temperature_c == pytest.approx(45 + 21.25 * math.exp(-1))
    plain = load_model(REPO / "emulated" / "demo-slc-cache.yaml")
    drive.model = plain  # type: ignore[attr-defined]
    assert "no thermal: block" in str(emulated_temperature_source(drive))
