"""The idle-power test's parts: the host's ASPM policy, switching APST through the kernel's PM
QoS latency tolerance (on a stand-in sysfs file), the plans, and the idle watts of a meter."""

from __future__ import annotations

import time
from pathlib import Path

from pytest_ssdqual.plugs.power_csv import PowerSamples
from pytest_ssdqual.qualify.idle_power import (
    IdlePlan,
    PmQosApst,
    aspm_policy,
    idle_plan,
    idle_watts,
)


def test_aspm_policy_is_the_bracketed_word(tmp_path: Path) -> None:
    policy = tmp_path / "policy"
    policy.write_text("default performance powersave [powersupersave]\n")
    assert aspm_policy(policy) == "powersupersave"
    assert aspm_policy(tmp_path / "absent") is None


def test_pm_qos_apst_writes_0_then_the_old_value(tmp_path: Path) -> None:
    knob = tmp_path / "pm_qos_latency_tolerance_us"
    knob.write_text("100000\n")
    apst = PmQosApst(knob)
    apst.disable()
    assert knob.read_text() == "0\n"
    apst.restore()
    assert knob.read_text() == "100000\n"


def test_plans_per_profile() -> None:
    assert idle_plan("smoke") == IdlePlan(3.0, 2.0)
    assert idle_plan("quick") == IdlePlan(10.0, 10.0)
    assert idle_plan("full") == IdlePlan(30.0, 60.0)


class _Meter:
    """Samples around now: ``watts`` before ``step_s`` ago, ``after`` since (an APST drop)."""

    source = "stand-in meter"

    def __init__(self, watts: float, after: float, step_s: float, every_s: float = 0.1) -> None:
        self.watts, self.after, self.step_s, self.every_s = watts, after, step_s, every_s

    def start(self) -> None:
        pass

    def stop(self) -> PowerSamples:
        now = time.time()
        times = [now - 10 + i * self.every_s for i in range(int(12 / self.every_s) + 1)]
        return PowerSamples(tuple(times), tuple(
            self.watts if t < now - self.step_s else self.after for t in times), self.source)


def test_idle_watts_average_the_measured_seconds_only() -> None:
    """1.8 W until 3 s before the end, then 0.0018 W: the last 2 s read 0.0018 W."""
    got = idle_watts(_Meter(1.8, 0.0018, step_s=3.0), IdlePlan(3.0, 2.0), sleep=lambda s: None)
    assert isinstance(got, float) and abs(got - 0.0018) < 1e-9


def test_idle_watts_with_too_few_samples_give_the_reason() -> None:
    got = idle_watts(_Meter(1.0, 1.0, step_s=0, every_s=1.5), IdlePlan(0.0, 2.0),
                     sleep=lambda s: None)
    assert isinstance(got, str) and "at least 2 are needed" in got
