"""Temperature through a test: the sampler and the figures, with exact answers."""

from __future__ import annotations

import json
import time
from itertools import pairwise

import pytest

from pytest_ssdqual.drive.temperature_trace import (
    BandwidthSecond,
    TemperatureSample,
    TemperatureSampler,
    nvme_temperature_reader,
    temperature_figures,
)


def S(t: float, c: float) -> TemperatureSample:
    return TemperatureSample(t, c)


def secs(bw: list[float], start: float = 0.0, run: str = "r") -> list[BandwidthSecond]:
    """Second i of a log ends at start + i + 1."""
    return [BandwidthSecond(start + i + 1, v, run, i) for i, v in enumerate(bw)]


def test_max_and_time_above_wctemp_from_a_step_function() -> None:
    samples = [S(100, 60), S(102, 70), S(104, 72.5), S(106, 69), S(108, 71), S(110, 65)]
    got = temperature_figures(list(reversed(samples)), warning_c=70)
    # at/above 70 °C: [102,104) [104,106) [108,110) -> 6 s; the last sample holds no time
    assert got.figures == {"temperature.max_c": 72.5, "temperature.above_wctemp_s": 6.0}
    assert set(got.unmeasured) == {"temperature.throttle_events", "temperature.throttled_s"}
    assert "no per-second bandwidth log" in got.unmeasured["temperature.throttled_s"]
    none = temperature_figures(samples)
    assert none.figures == {"temperature.max_c": 72.5}
    assert "WCTEMP" in none.unmeasured["temperature.above_wctemp_s"]
    assert temperature_figures([]).figures == {}


def test_throttle_events_are_drops_while_at_the_throttle_point() -> None:
    # log seconds end at 1..10; samples: cool until t=3, hot 3..6, cool 6..8, hot from 8
    samples = [S(0, 50), S(3, 75), S(6, 60), S(8, 71)]
    bw = [500, 500, 500, 200, 240, 260, 500, 100, 150, 500]
    got = temperature_figures(samples, warning_c=70, seconds=secs(bw))
    # temperature at each second's end: 1-2 50 °C, 3-5 75 °C, 6-7 60 °C, 8-10 71 °C; cool
    # seconds (1, 2, 6, 7: 500, 500, 260, 500) have the median 500, floor 250; hot seconds
    # below it: 4 (200), 5 (240), 8 (100), 9 (150): two runs of consecutive seconds
    assert got.figures["temperature.throttle_events"] == 2.0
    assert got.figures["temperature.throttled_s"] == 4.0
    assert [s.end_s for s in got.throttled] == [4, 5, 8, 9]
    # the same drop while cool is no throttling; a lower throttle point counts it
    cool = temperature_figures([S(0, 50)], warning_c=70, seconds=secs([500, 100, 500]))
    assert cool.figures["temperature.throttle_events"] == 0.0
    low = temperature_figures([S(0, 50)], warning_c=70, throttle_c=50,
                              seconds=secs([500, 100, 500]))
    assert low.figures["temperature.throttled_s"] == 1.0
    # 49 % of the cool median is a drop, 51 % is not
    edge = temperature_figures([S(0, 50), S(2, 80)], warning_c=70,
                               seconds=secs([100, 100, 49, 51]))
    assert [s.bw_mbps for s in edge.throttled] == [49]


def test_throttle_runs_are_judged_apart_and_before_the_first_sample_is_never_hot() -> None:
    samples = [S(10, 80)]
    # run a: seconds end 9 (no sample yet) and 10..12; run b: its own median
    seconds = [*secs([100, 100, 40, 100], start=8, run="a"),
               *secs([20, 20, 8], start=20, run="b")]
    got = temperature_figures(samples, warning_c=70, seconds=seconds)
    # run a: no cool second -> median of all (100): 40 < 50 throttled; second ending 9 has
    # no sample. run b: median 20, 8 < 10 -> throttled; consecutive across runs: 2 events
    assert [(s.run, s.bw_mbps) for s in got.throttled] == [("a", 40), ("b", 8)]
    assert got.figures["temperature.throttle_events"] == 2.0


def test_sampler_samples_at_the_interval_and_keeps_reader_errors() -> None:
    values = iter([40, None, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50])

    def read() -> float | None:
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
    assert abs(sampler.samples[0].t_s - time.time()) < 60  # the epoch clock of fio's stamps
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
