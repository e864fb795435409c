"""Idle power states and wake-up latency: ``power_states`` on the real
nvme-cli id-ctrl output in ``../shared/cases/real/nvme/`` and on recorded fio runs with
``thinktime`` (``tests/data/idle_wake/``, made on a loop device; see its README)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_ssdqual.drive.power_states import (
    BUSY,
    apst_enabled,
    idle_plan,
    points,
    power_state_table,
    render_idle_job,
    wake_metrics,
)
from pytest_ssdqual.fio.parse import parse_fio_file
from pytest_ssdqual.qualify import idle_wake as idle_wake_module

DATA = Path(__file__).resolve().parents[1] / "data" / "idle_wake"
PM983 = "nvme/nvme-cli-1.x_id-ctrl_samsung_pm983_MZ1LB960HAJQ-000FB.json"


def recorded() -> dict[str, object]:
    return {p: parse_fio_file(DATA / f"{p}.json")
            for p in (BUSY, "idle_1ms", "idle_10ms", "idle_100ms")}


def test_recorded_wake_up_latencies() -> None:
    metrics, notes = wake_metrics(recorded(), [1, 10, 100])  # type: ignore[arg-type]
    assert notes == []
    # medians fio computed (µs): busy 32.64, after 1/10/100 ms of idle 121.344/162.816/195.584
    assert metrics["busy.lat_p50_us"] == pytest.approx(32.64)
    assert metrics["idle_1ms.lat_p50_us"] == pytest.approx(121.344)
    assert metrics["idle_10ms.lat_p50_us"] == pytest.approx(162.816)
    assert metrics["idle_100ms.lat_p50_us"] == pytest.approx(195.584)
    assert metrics["wake_penalty_us"] == pytest.approx(195.584 - 32.64)
    assert metrics["wake_ratio"] == pytest.approx(195.584 / 32.64)
    # one slow I/O among 20 moves the mean and p99 of the 10 ms gap, not the median it is
    # judged on
    assert metrics["idle_10ms.lat_mean_us"] > metrics["idle_100ms.lat_mean_us"]
    assert metrics["idle_10ms.lat_p99_us"] > 5000


def test_recorded_runs_are_the_plan_fio_ran() -> None:
    results = recorded()
    plan = idle_plan("smoke")
    for point, gap_ms, ios in points(plan):
        read = results[point].directions["read"]  # type: ignore[attr-defined]
        assert read.total_ios == ios, point
        job = (DATA / f"{point}.fio").read_text()
        assert job == render_idle_job(point, gap_ms, ios, filename="/dev/loop1",
                                      ioengine="libaio", span_bytes=64 * 2**20)
    # fio idled: 20 I/Os after 100 ms each take at least 2 s of run time
    assert results["idle_100ms"].runtime_ms >= 20 * 100  # type: ignore[attr-defined]
    assert results[BUSY].runtime_ms < 1000  # type: ignore[attr-defined]


def test_a_missing_idle_point_is_a_note_not_a_zero() -> None:
    results = recorded()
    del results["idle_100ms"]
    metrics, notes = wake_metrics(results, [1, 10, 100])  # type: ignore[arg-type]
    assert notes == ["idle_100ms: no read result"]
    assert "idle_100ms.lat_p50_us" not in metrics
    assert metrics["wake_penalty_us"] == pytest.approx(162.816 - 32.64)


def test_pm983_has_one_active_state_and_no_idle_state(real_cases: Path) -> None:
    table = power_state_table(json.loads((real_cases / PM983).read_text()))
    assert len(table.states) == 1 and table.idle_states == ()
    assert table.states[0].max_power_w == pytest.approx(8.0)  # max_power 800 x 0.01 W
    assert table.apst_supported is False
    # WCTEMP / CCTEMP in Kelvin in id-ctrl (353 / 365 K in this document): degrees C here
    assert table.metrics() == {"power_states": 1, "non_operational_states": 0,
                               "max_idle_exit_latency_us": 0, "max_transition_latency_us": 0,
                               "warning_temperature_c": 80, "critical_temperature_c": 92}


def test_client_drive_table_with_non_operational_states(real_cases: Path) -> None:
    # the real PM983 document with a client drive's 5 states (nvme-cli 2.x keys for PS3/PS4):
    # PS3/PS4 non-operational, entry + exit 2000 + 2000 and 2000 + 22000 µs
    doc = json.loads((real_cases / PM983).read_text())
    base = doc["psds"][0]
    doc["npss"], doc["apsta"] = 4, 1
    doc["psds"] = [
        dict(base, max_power=800), dict(base, max_power=600), dict(base, max_power=450),
        {"max_power": 400, "max_power_scale": 1, "non-operational_state": 1,
         "entry_lat": 2000, "exit_lat": 2000},
        dict(base, max_power=50, flags=3, entry_lat=2000, exit_lat=22000),
    ]
    table = power_state_table(doc)
    assert [s.id for s in table.idle_states] == [3, 4]
    assert table.states[3].max_power_w == pytest.approx(0.04)  # 400 x 0.0001 W
    assert table.states[4].max_power_w == pytest.approx(0.005)
    assert table.apst_supported is True
    # named for what they hold: the largest exit latency alone (PS4's 22,000 us) and the
    # largest round trip into and out of one state (PS4: 2,000 + 22,000)
    assert table.metrics()["max_idle_exit_latency_us"] == 22000
    assert table.metrics()["max_transition_latency_us"] == 24000
    assert "max_exit_latency_us" not in table.metrics()


def test_not_id_ctrl_output_names_the_key() -> None:
    with pytest.raises(ValueError, match="no 'psds' list"):
        power_state_table({"critical_warning": 0})
    with pytest.raises(ValueError, match=r"psds\[0\] has no 'max_power'"):
        power_state_table({"psds": [{"flags": 0}]})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("get-feature:0x0c (Autonomous Power State Transition), Current value:0x00000001\n",
         True),
        ("get-feature:0xc (Autonomous Power State Transition), Current value:00000000\n", False),
        ("get-feature:0xc (Autonomous Power State Transition), Current value:00000001\n", True),
        ("NVMe status: Invalid Field in Command(0x2)\n", None),
    ],
)
def test_apst_enable_bit(text: str, expected: bool | None) -> None:
    assert apst_enabled(text) is expected


def test_a_hung_nvme_get_feature_is_a_clear_skip_reason(
    real_cases: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: ``subprocess.TimeoutExpired`` from a hung ``nvme get-feature`` was not caught
    and the idle wake-up test broke with a traceback."""
    doc = json.loads((real_cases / PM983).read_text())
    doc["npss"], doc["apsta"] = 1, 1  # PS1 non-operational, as in the client table above
    doc["psds"] = [doc["psds"][0], dict(doc["psds"][0], flags=3, entry_lat=2000,
                                          exit_lat=22000)]

    def run(argv: list[str]) -> tuple[int, str]:
        if argv[1] == "id-ctrl":
            return 0, json.dumps(doc)
        raise subprocess.TimeoutExpired(argv, 30)

    monkeypatch.setattr(idle_wake_module, "default_run", run)
    spec = SimpleNamespace(raw="/dev/nvme0n1", kind="block")
    ctx = SimpleNamespace(identity=SimpleNamespace(kind="block", transport="NVMe"),
                          target=SimpleNamespace(spec=spec, device="/dev/nvme0n1"))
    with pytest.raises(idle_wake_module.NoPowerStates) as caught:
        idle_wake_module.read_power_states(ctx)  # type: ignore[arg-type]
    assert str(caught.value) == (
        "/dev/nvme0n1: `nvme get-feature -f 0x0c /dev/nvme0n1` (APST setting) gave no answer "
        "within 30 s: nvme-cli or the drive's admin queue hangs; check the drive (dmesg, "
        "`nvme list`) before measuring its wake-up latency")
    assert caught.value.applicable  # a skip that counts against the run: not measured
