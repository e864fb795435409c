"""The idle-power test as a ``measure`` step of the flow: active idle and idle with APST,
measured by the drive's power meter, compared with the drive's NVMe power-state table.

Method (after AnandTech's SSD reviews, "Idle Power Measurement": *active idle* with the
drive's power saving off, *idle* with NVMe APST on and PCIe ASPM as the host sets it):

1. the power-state table and APST setting (``idle_wake.read_power_states``: nvme id-ctrl /
   get-feature, an emulated twin's model); no non-operational state -> skipped (not
   applicable), like the wake-up test;
2. APST off, the drive left without I/O for ``settle_s``, then the meter's average over the
   next ``measure_s``: ``active_idle_w``;
3. APST back as it was, the same again: ``idle_apst_w``; ``apst_saving_pct`` =
   ``100 x (1 - idle_apst_w / active_idle_w)``.

APST is switched through the kernel (``PmQosApst``): writing 0 to the controller's
``power/pm_qos_latency_tolerance_us`` makes Linux's nvme driver turn APST off
(``nvme_set_latency_tolerance`` -> ``nvme_configure_apst``, drivers/nvme/host/core.c: a 0 µs
latency tolerance allows no idle state), writing the old value back turns it on again; on an
emulated twin, its meter's APST-off flag (``emulate.power_model.apst_off_flag``). Without
either (no such file), only the idle as configured is measured (``idle_apst_w`` when APST is
on, else ``active_idle_w``) and the other figure is not measured, with the reason.

PCIe ASPM is host-wide (``/sys/module/pcie_aspm/parameters/policy``): read and named in the
notes (``powersupersave`` allows L1.2), never changed. The table's ``ps0_max_power_w`` and
``deepest_idle_max_power_w`` are stored with the figures; a note says how each figure compares
(active idle within PS0's maximum; idle with APST x the deepest idle state's maximum).

No power meter -> skipped with the reason (not applicable: the bench cannot measure power).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pytest_ssdqual.catalog.health import IDLE_POWER_WORKLOAD_ID
from pytest_ssdqual.catalog.workloads import get_workload
from pytest_ssdqual.errors import DeviceError
from pytest_ssdqual.methodology.base import MethodologyResult, judge_result
from pytest_ssdqual.plugs.energy import window_figures
from pytest_ssdqual.plugs.power_meter import PowerMeter
from pytest_ssdqual.qualify.flow import Measured, Skipped
from pytest_ssdqual.qualify.idle_wake import read_power_states
from pytest_ssdqual.qualify.power import DrivePower
from pytest_ssdqual.qualify.session import DriveContext, QualSession

if TYPE_CHECKING:
    from pytest_ssdqual.qualify.flow import Host

__all__ = ["IDLE_POWER", "IdlePlan", "PmQosApst", "aspm_policy", "idle_plan",
           "measure_idle_power"]

IDLE_POWER = get_workload(IDLE_POWER_WORKLOAD_ID)
ASPM_POLICY = Path("/sys/module/pcie_aspm/parameters/policy")


@dataclass(frozen=True)
class IdlePlan:
    """Seconds without I/O before measuring (``settle_s``: longer than the drive's APST idle
    timeout, Linux: 50 x ENLAT + EXLAT per state) and seconds measured (``measure_s``)."""

    settle_s: float
    measure_s: float


def idle_plan(profile: str) -> IdlePlan:
    """The plan of a run profile: smoke 3 + 2 s, quick 10 + 10 s, full 30 + 60 s."""
    return {"smoke": IdlePlan(3.0, 2.0), "quick": IdlePlan(10.0, 10.0)}.get(
        profile, IdlePlan(30.0, 60.0))


class ApstControl(Protocol):
    """Switches a drive's APST off and back as it was."""

    def disable(self) -> None: ...

    def restore(self) -> None: ...


class PmQosApst:
    """APST through the kernel's PM QoS latency tolerance of the NVMe controller (module
    docstring): ``disable`` writes 0, ``restore`` the value read before."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.before = path.read_text().strip()
        if not os.access(path, os.W_OK):  # not root: this host cannot switch APST
            raise PermissionError(f"{path} is not writable")

    def disable(self) -> None:
        self._write("0")

    def restore(self) -> None:
        self._write(self.before)

    def _write(self, value: str) -> None:
        try:
            self.path.write_text(value + "\n")
        except OSError as exc:
            raise DeviceError(f"cannot switch APST through {self.path}: {exc.strerror} (run as "
                              "root; the kernel's nvme driver exposes this file)") from None


class _FlagApst:
    """An emulated twin's APST: its meter's APST-off flag file."""

    def __init__(self, flag: Path) -> None:
        self.flag = flag

    def disable(self) -> None:
        self.flag.touch()

    def restore(self) -> None:
        self.flag.unlink(missing_ok=True)


def apst_control(ctx: DriveContext) -> ApstControl | None:
    """How to switch the drive's APST, or None when this host cannot."""
    drive = getattr(ctx.target, "drive", None)
    if ctx.identity.kind == "emu" and drive is not None:
        from pytest_ssdqual.emulate.power_model import apst_off_flag

        return _FlagApst(apst_off_flag(drive.workdir / "power.csv"))
    if ctx.target.spec.kind == "remote":  # /sys/block/NAME here is a local namesake
        return None
    name = os.path.basename(os.path.realpath(ctx.target.device))
    knob = Path(os.path.realpath(f"/sys/block/{name}/device")) / "power" / \
        "pm_qos_latency_tolerance_us"
    try:
        return PmQosApst(knob)
    except OSError:  # no such file (not Linux's nvme driver), or not readable
        return None


def aspm_policy(path: Path = ASPM_POLICY) -> str | None:
    """The host's PCIe ASPM policy (the bracketed word of ``path``), None when not exposed."""
    try:
        words = path.read_text().split()
    except OSError:
        return None
    chosen = [w.strip("[]") for w in words if w.startswith("[")]
    return chosen[0] if chosen else None


def idle_watts(meter: PowerMeter, plan: IdlePlan,
               sleep: Callable[[float], None] = time.sleep) -> float | str:
    """Average watts over ``plan.measure_s`` after ``plan.settle_s`` without I/O, or why not."""
    meter.start()
    sleep(plan.settle_s + plan.measure_s)
    end = time.time()
    figures = window_figures(meter.stop(), end - plan.measure_s, end)
    return figures if isinstance(figures, str) else figures.power_avg_w


def measure_idle_power(host: Host, session: QualSession, ctx: DriveContext, power: DrivePower,
                       sleep: Callable[[float], None] = time.sleep) -> Measured:
    """Measure active idle and idle with APST and judge them once (module docstring).

    Raises:
        Skipped: no power-state table / idle state (``idle_wake.NoPowerStates``) or no meter.
        DeviceError, ConfigError: from the meter.
    """
    table, apst = read_power_states(ctx)
    if power.meter is None:
        raise Skipped(power.reason, applicable=False)
    meter = power.meter
    plan = idle_plan(session.options.profile.name)
    control = apst_control(ctx)
    aspm = aspm_policy()
    figures: dict[str, float | str] = {}
    if control is None:
        why = ("not measured: this host cannot switch the drive's APST (no "
               "power/pm_qos_latency_tolerance_us for its controller)")
        measured = "idle_apst_w" if apst else "active_idle_w"
        figures = {measured: idle_watts(meter, plan, sleep),
                   ("active_idle_w" if apst else "idle_apst_w"): why}
    else:
        try:
            control.disable()
            with host.phase("active idle (APST off)"):
                figures["active_idle_w"] = idle_watts(meter, plan, sleep)
        finally:
            control.restore()
        with host.phase("idle with APST"):
            figures["idle_apst_w"] = idle_watts(meter, plan, sleep) if apst else (
                "not measured: APST is not enabled on the drive")
    metrics = {k: v for k, v in figures.items() if isinstance(v, float)}
    unreached = {k: (v if v.startswith("not measured") else f"not measured: {v}")
                 for k, v in figures.items() if isinstance(v, str)}
    if "active_idle_w" in metrics and "idle_apst_w" in metrics and metrics["active_idle_w"] > 0:
        metrics["apst_saving_pct"] = 100 * (1 - metrics["idle_apst_w"] / metrics["active_idle_w"])
    ps0 = table.states[0].max_power_w
    deepest = min(table.idle_states, key=lambda ps: ps.max_power_w)
    metrics["ps0_max_power_w"] = ps0
    metrics["deepest_idle_max_power_w"] = deepest.max_power_w
    notes = [f"PCIe ASPM policy: {aspm} (host-wide, not changed)" if aspm else
             "PCIe ASPM: not exposed by this host (/sys/module/pcie_aspm)"]
    if "active_idle_w" in metrics:
        a = metrics["active_idle_w"]
        notes.append(f"active idle {a:.4g} W {'within' if a <= ps0 else 'ABOVE'} PS0's "
                     f"maximum {ps0:g} W")
    if "idle_apst_w" in metrics:
        i = metrics["idle_apst_w"]
        notes.append(f"idle with APST {i:.4g} W = {i / deepest.max_power_w:.3g} x PS"
                     f"{deepest.id}'s maximum {deepest.max_power_w:g} W (the deepest idle "
                     "state)")
    notes += [f"{k}: {why}" for k, why in unreached.items()]
    states = dict.fromkeys(metrics, "idle")
    outcome = judge_result(MethodologyResult(IDLE_POWER, metrics, states, notes, [],
                                             unreached=unreached),
                           ctx.limits, strict=session.options.strict)
    return Measured(outcome, states=states, report="verdicts",
                    details=[f"  note: {n}" for n in notes])
