"""``--power-meter`` through pytester, with the fio stand-in and the recording meter stand-in
(``tests/fakemeter.py``): the power figures of each workload (exact: a constant 6.25 W), judged
and stored; the meter started and stopped once per workload; a bad spec is a usage error; a
limit on power without a meter fails with the reason; a meter that fails breaks the test."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_ssdqual.results.run_folder import StoredRun
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import READ_WRITE_SUITE, FakeFio, limits_yaml, qual_args, write_suite

FAKEMETER = Path(__file__).parents[1] / "fakemeter.py"
FLOOR = {"seq_read_128k_qd32": {"bw_mbps": {"min": 1}}}
METER = f"--power-meter=cmd:{sys.executable} {FAKEMETER} --sn {{serial}}"


def _run(pytester: pytest.Pytester, fake_fio: FakeFio, limits: dict, *extra: str
         ) -> pytest.RunResult:
    th = write_suite(pytester.path, READ_WRITE_SUITE, limits_yaml(limits))
    return pytester.runpytest(*qual_args(pytester.path, th, fake_fio.path, *extra,
                                         f"--results-dir={pytester.path / 'results'}"))


def test_each_workload_gets_its_power_figures_judged_and_stored(
        pytester: pytest.Pytester, fake_fio: FakeFio, monkeypatch: pytest.MonkeyPatch) -> None:
    log = pytester.path / "meter.log"
    monkeypatch.setenv("FAKEMETER_LOG", str(log))
    monkeypatch.setenv("FAKEMETER_W", "6.25")
    result = _run(pytester, fake_fio, {"seq_write_128k_qd32": {"power_avg_w": {"max": 6.0}},
                                       "seq_read_128k_qd32": {"bw_mbps_per_w": {"min": 50}}},
                  METER)
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "power_avg_w 6.25 > max 6" in out, out
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "stop"] * 2
    assert all(e["argv"][0] == "--sn" for e in events)
    [run] = [StoredRun.load(p) for p in ResultsStore(pytester.path / "results").complete_runs()]
    records = {r["workload"]: r for r in run.records}
    read = records["seq_read_128k_qd32"]["metrics"]
    write = records["seq_write_128k_qd32"]["metrics"]
    for m in (read, write):  # smoke: 3 s measured (the stand-in reports the asked runtime)
        assert m["power_avg_w"] == pytest.approx(6.25)
        assert m["power_peak_w"] == 6.25
        assert m["energy_j"] == pytest.approx(6.25 * 3.0)
    assert read["read.bw_mbps_per_w"] == pytest.approx(read["read.bw_mbps"] / 6.25)  # 500 / 6.25
    assert write["write.bw_mbps_per_w"] == pytest.approx(80.0)
    verdicts = {v["metric"]: v["status"] for v in records["seq_read_128k_qd32"]["verdicts"]}
    assert verdicts["read.bw_mbps_per_w"] == "pass" and verdicts["energy_j"] == "not_judged"


def test_a_bad_spec_is_a_usage_error(pytester: pytest.Pytester, fake_fio: FakeFio) -> None:
    result = _run(pytester, fake_fio, FLOOR, "--power-meter=nvme")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "'nvme' is not a power meter plug" in result.stderr.str()


def test_a_power_limit_without_a_meter_fails_saying_why(pytester: pytest.Pytester,
                                                        fake_fio: FakeFio) -> None:
    result = _run(pytester, fake_fio, {"seq_write_128k_qd32": {"energy_j": {"max": 100}}})
    result.assert_outcomes(passed=1, failed=1)
    out = " ".join(result.stdout.str().split())  # unwrapped
    assert "energy_j not measured: no power meter for Scratch file" in out, out
    assert ("give --power-meter=SPEC or a plugs: power_meter: entry in the lab inventory: fails "
            "the limit energy_j <= 100") in out, out


def test_a_meter_that_fails_breaks_the_test(pytester: pytest.Pytester, fake_fio: FakeFio,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKEMETER_MODE", "fail")
    result = _run(pytester, fake_fio, FLOOR, METER)
    result.assert_outcomes(errors=0, failed=2)
    assert "ended with status 3 while measuring" in result.stdout.str()
