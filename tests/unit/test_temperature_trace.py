"""Temperature through a run: the sampler and the figures, with exact answers."""

from __future__ import annotations

import json
import time
from itertools import pairwise

import pytest

from pytest_ssdqual.drive.temperature_trace import (
    TemperatureSample,
    TemperatureSampler,
    nvme_temperature_reader,
    temperature_figures,
)


def S(t: float, c: int) -> TemperatureSample:
    return TemperatureSample(t, c)


def test_figures_max_time_above_wctemp_and_throttled_seconds() -> None:
    samples = [S(0, 60), S(2, 70), S(4, 72), S(6, 69), S(8, 71), S(10, 65)]
    bw = [1000, 1000, 1000, 990, 400, 420, 1000, 1000, 500, 1000]
    got = temperature_figures(samples, warning_c=70, bw_mbps_per_s=bw)
    # above 70 °C: [2,4) [4,6) [8,10) -> 6 s; median bw 1000, floor 800: seconds 4, 5 (last
    # sample 72 °C at t=4) and 8 (71 °C at t=8) dropped while hot
    assert got == {"temp_max_c": 72.0, "temp_samples": 6.0, "time_above_wctemp_s": 6.0,
                   "throttled_s": 3.0}
    # a drop while cool is not throttling; a lower throttle point counts it
    cool = temperature_figures([S(0, 50)], warning_c=70, bw_mbps_per_s=[1000, 100, 1000])
    assert cool["throttled_s"] == 0.0
    assert temperature_figures([S(0, 50)], throttle_c=50,
                               bw_mbps_per_s=[1000, 100, 1000])["throttled_s"] == 1.0
    assert temperature_figures([]) == {}


def test_sampler_samples_at_the_interval_and_keeps_reader_errors() -> None:
    values = iter([40, None, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50])

    def read() -> int | None:
        value = next(values, 50)
        if value == 42:
            raise OSError("nvme timed out")
        return value

    with TemperatureSampler(read, 0.05) as sampler:
        deadline = time.monotonic() + 30  # a loaded machine may delay the thread
        while len(sampler.samples) < 4 and time.monotonic() < deadline:
            time.sleep(0.01)
    temps = [s.temperature_c for s in sampler.samples]
    # entry 40; then every 0.05 s: None (left out), 41, an error (kept), 43, ...; exit one more
    assert temps[:4] == [40, 41, 43, 44] and sampler.errors == ["nvme timed out"]
    periodic = sampler.samples[:-1]
    assert all(b.t_s - a.t_s >= 0.045 for a, b in pairwise(periodic))
    with pytest.raises(ValueError, match="above 0 s"):
        TemperatureSampler(read, 0)


def test_nvme_reader_converts_kelvin_and_records_the_command() -> None:
    argv: list[list[str]] = []

    def run(a: list[str]) -> tuple[int, str]:
        argv.append(a)
        return 0, json.dumps({"temperature": 324 if len(argv) == 1 else 0})

    read = nvme_temperature_reader("/dev/nvme0n1", run)
    assert read() == 51 and read() is None  # 0 K: no sensor
    assert argv == [["nvme", "smart-log", "-o", "json", "/dev/nvme0n1"]] * 2
