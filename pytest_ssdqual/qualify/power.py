"""Power figures of a fio workload run: the drive's power meter sampled around the run, the
figures of its measured window added to the run's metrics.

Metrics (``catalog.workloads.POWER_METRICS`` / ``EFFICIENCY_METRICS``), judged by limits like any
figure and stored with the run::

    power_avg_w     average power over the measured runtime, W (energy / runtime)
    power_peak_w    the largest sample in it, W
    energy_j        trapezoidal integral of the samples over it, J (``plugs.energy``)
    read.bw_mbps_per_w, write.bw_mbps_per_w (sequential), read.iops_per_w, write.iops_per_w
    (random); ``total.`` too for a mix: the direction's bw_mbps / iops over power_avg_w

The window is fio's measured runtime: ``[end - runtime, end]`` with ``end`` fio's
``timestamp_ms`` (when it wrote the results) and ``runtime`` the longest measured runtime of the
run (``WorkloadResult.runtime_ms``; ramp time excluded, as the bandwidth is), so MB/s/W divides
the bandwidth by the power of the same seconds. A prefill fio does before the first read
workload is outside the window.

Not measured, with the reason (kept as the run's ``extra_unmeasured``: a limit on the figure
then fails saying why, in the run and in ``ssdqual rejudge``; without a limit nothing is judged
and the test's details say why): too few samples in the window (``plugs.energy``), no fio
timestamp, no meter for a drive whose limits ask for a power figure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from pytest_ssdqual.catalog.workloads import POWER_METRICS, Workload
from pytest_ssdqual.fio.result import WorkloadResult
from pytest_ssdqual.plugs.energy import window_figures
from pytest_ssdqual.plugs.power_csv import PowerSamples
from pytest_ssdqual.plugs.power_meter import PowerMeter
from pytest_ssdqual.qualify.session import WorkloadOutcome

__all__ = ["DrivePower", "metered", "power_metric_names", "power_metrics", "power_note",
           "without_meter"]


@dataclass(frozen=True)
class DrivePower:
    """A drive's power meter for this session, or why it has none.

    Attributes:
        meter: the meter (``plugs.power_meter``), or None.
        reason: why there is none (``plugs.select.missing_plug_reason``); ``""`` with a meter.
    """

    meter: PowerMeter | None
    reason: str = ""


def power_metric_names(workload: Workload) -> list[str]:
    """The power metrics ``workload`` gets with a meter (``Workload.metric_names``' share)."""
    return [m for m in workload.metric_names()
            if m in POWER_METRICS or m.endswith(("_per_w",))]


def power_metrics(workload: Workload, result: WorkloadResult, metrics: dict[str, float],
                  samples: PowerSamples) -> tuple[dict[str, float], dict[str, str]]:
    """The power figures of one run and the reasons of those it has none of.

    Args:
        workload: the workload run. result: its parsed fio output (window: ``end_ms``,
            ``runtime_ms``). metrics: its fio metrics (``read.bw_mbps``, ...).
        samples: the meter's ``PowerSamples`` since before the run.

    Returns:
        ``(figures, reasons)``: metric -> value; metric -> ``not measured: ...``.
    """
    names = power_metric_names(workload)
    if result.end_ms is None:
        return {}, {m: "not measured: fio gave no timestamp_ms to place the run in time"
                    for m in names}
    end_s = result.end_ms / 1000.0
    figures = window_figures(samples, end_s - result.runtime_ms / 1000.0, end_s)
    if isinstance(figures, str):
        return {}, {m: f"not measured: {figures}" for m in names}
    out = {"power_avg_w": figures.power_avg_w, "power_peak_w": figures.power_peak_w,
           "energy_j": figures.energy_j}
    reasons: dict[str, str] = {}
    base = "bw_mbps" if workload.efficiency_metric == "bw_mbps_per_w" else "iops"
    for name in names:
        if "." not in name:
            continue
        direction = name.split(".")[0]
        value = metrics.get(f"{direction}.{base}")
        if value is None or figures.power_avg_w <= 0:
            reasons[name] = (f"not measured: no {direction}.{base}" if value is None
                             else "not measured: the average power was 0 W")
        else:
            out[name] = value / figures.power_avg_w
    return out, reasons


def metered(meter: PowerMeter, workload: Workload,
            run: Callable[[], WorkloadOutcome]) -> WorkloadOutcome:
    """Run ``run`` (one fio run of ``workload``) with ``meter`` sampling around it; its
    outcome with the power figures added to ``metrics`` and the reasons of those missing in
    ``result.extra_unmeasured``.

    Raises:
        whatever ``run`` raises (the meter is stopped first, its own errors then ignored);
        DeviceError / ConfigError from the meter when the run succeeded.
    """
    meter.start()
    try:
        outcome = run()
    except BaseException:
        try:
            meter.stop()
        except Exception:  # the run's error is the one to report
            pass
        raise
    samples = meter.stop()
    figures, reasons = power_metrics(workload, outcome.result, outcome.metrics, samples)
    return dataclasses.replace(
        outcome, metrics={**outcome.metrics, **figures},
        result=dataclasses.replace(outcome.result, extra_unmeasured={
            **outcome.result.extra_unmeasured, **reasons}))


def without_meter(outcome: WorkloadOutcome, reason: str, limited: set[str]
                  ) -> WorkloadOutcome:
    """``outcome`` with ``not measured: <reason>`` for the power metrics in ``limited`` (those
    the drive's limits ask for): a limit on power without a meter fails saying why."""
    names = [m for m in power_metric_names(outcome.workload) if m in limited]
    if not names:
        return outcome
    return dataclasses.replace(outcome, result=dataclasses.replace(
        outcome.result, extra_unmeasured={**outcome.result.extra_unmeasured,
                                          **{m: f"not measured: {reason}" for m in names}}))


def power_note(outcome: WorkloadOutcome) -> str | None:
    """One line on the power figures (or why there are none) for the test's details."""
    m = outcome.metrics
    if "energy_j" in m:
        return (f"power: {m['power_avg_w']:.3g} W average, {m['power_peak_w']:.3g} W peak, "
                f"{m['energy_j']:.4g} J over {outcome.result.runtime_ms / 1000:.3g} s")
    why = outcome.result.extra_unmeasured.get("energy_j")
    return f"power: {why}" if why else None
