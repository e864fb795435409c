"""Temperature through a plugin run with the fio stand-in: a scratch file has no sensor, so a
limit on a temperature figure is reported as not applicable with the reason (the test passes,
the record and a rejudge say why); ini ``ssdqual_temperature_interval_s = 0`` turns sampling
off with its own reason; a bad interval is a usage error naming the option."""

from __future__ import annotations

import json

import pytest

from pytest_ssdqual.report.rejudge import rejudge_run
from pytest_ssdqual.results.store import ResultsStore, StoredRun
from pytest_ssdqual.thresholds.loader import ThresholdSet

from ..conftest import READ_WRITE_SUITE, FakeFio, limits_yaml, qual_args, write_suite


def _setup(pytester: pytest.Pytester):
    return write_suite(pytester.path, READ_WRITE_SUITE, limits_yaml({
        "seq_write_128k_qd32": {"temperature.max_c": {"max": 60},
                                "temperature.throttle_events": {"max": 0}}}))


def _verdicts(pytester: pytest.Pytester) -> dict[str, dict]:
    [path] = [p for p in (pytester.path / "results").rglob("record.json")
              if json.loads(p.read_text())["workload"] == "seq_write_128k_qd32"]
    record = json.loads(path.read_text())
    assert not any(m.startswith("temperature.") for m in record["metrics"])
    return {v["metric"]: v for v in record["verdicts"] if v["metric"].startswith("temp")}


def test_a_file_target_has_no_sensor_not_applicable_with_the_reason(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    th = _setup(pytester)
    result = pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path,
                                           f"--results-dir={pytester.path / 'results'}"))
    result.assert_outcomes(passed=2)
    verdicts = _verdicts(pytester)
    assert {m: v["status"] for m, v in verdicts.items()} == {
        "temperature.max_c": "not_in_profile", "temperature.throttle_events": "not_in_profile"}
    assert "a scratch file has no temperature sensor" in verdicts["temperature.max_c"]["reason"]
    # rejudged: still not applicable, not a missing figure
    results = pytester.path / "results"
    [run] = [StoredRun.load(p) for p in ResultsStore(results).complete_runs()]
    again = {r.workload: r for r in rejudge_run(run, ThresholdSet.load([th]))}
    assert {v.metric: v.status for v in again["seq_write_128k_qd32"].verdicts
            if v.metric.startswith("temperature.")} == {
        "temperature.max_c": "not_in_profile", "temperature.throttle_events": "not_in_profile"}


def test_interval_zero_turns_sampling_off_and_a_bad_one_is_a_usage_error(
    pytester: pytest.Pytester, fake_fio: FakeFio
) -> None:
    th = _setup(pytester)
    args = qual_args(pytester.path, th, fake_fio.path,
                     f"--results-dir={pytester.path / 'results'}")
    result = pytester.runpytest(*args, "-o", "ssdqual_temperature_interval_s=0")
    result.assert_outcomes(passed=2)
    assert "not sampled (ssdqual_temperature_interval_s = 0)" in \
        _verdicts(pytester)["temperature.max_c"]["reason"]
    bad = pytester.runpytest(*args, "-o", "ssdqual_temperature_interval_s=warm")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*ssdqual_temperature_interval_s = 'warm' is not a number of "
                              "seconds*"])
