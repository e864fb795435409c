"""Average and peak power and energy of a time window, from a meter's samples.

Energy is the trapezoidal integral of power over the window (the trapezoidal rule on
non-uniformly spaced samples, as numpy's ``trapezoid``), with the power at the window's two ends
interpolated linearly between the samples around them; average power = energy / window
length; peak = the largest sample inside the window (interpolated end values are not
measurements and never the peak).

Too few samples: a window is measured only when samples bracket it (one at or before its start,
one at or after its end) and at least ``MIN_SAMPLES_IN_WINDOW`` lie inside it; otherwise
:func:`window_figures` returns the reason instead (the figures are then not measured: a limit
on them fails with that reason, docs/plugs.md).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from pytest_ssdqual.plugs.power_csv import PowerSamples

__all__ = ["MIN_SAMPLES_IN_WINDOW", "WindowFigures", "window_figures"]

#: Samples a window must hold (besides the two that bracket it) to be measured.
MIN_SAMPLES_IN_WINDOW = 2


@dataclass(frozen=True)
class WindowFigures:
    """Power over one window.

    Attributes:
        start_s, end_s: the window, seconds since the epoch.
        energy_j: joules (trapezoidal integral).
        power_avg_w: energy / (end_s - start_s), watts.
        power_peak_w: the largest sample inside the window, watts.
        samples: samples inside the window.
    """

    start_s: float
    end_s: float
    energy_j: float
    power_avg_w: float
    power_peak_w: float
    samples: int


def _at(times: tuple[float, ...], power: tuple[float, ...], t: float) -> float:
    """Power at ``t`` interpolated linearly between the samples around it (``t`` bracketed)."""
    i = bisect.bisect_left(times, t)
    if times[i] == t:
        return power[i]
    t0, t1, p0, p1 = times[i - 1], times[i], power[i - 1], power[i]
    return p0 + (p1 - p0) * (t - t0) / (t1 - t0)


def window_figures(samples: PowerSamples, start_s: float, end_s: float
                   ) -> WindowFigures | str:
    """Energy, average and peak power of ``samples`` over ``[start_s, end_s]``.

    Args:
        samples: increasing times (seconds since the epoch) and watts.
        start_s, end_s: the window, seconds since the epoch; ``end_s > start_s``.

    Returns:
        the figures, or why there are none (a sentence: no samples, samples that do not
        bracket the window, fewer than ``MIN_SAMPLES_IN_WINDOW`` inside it, an empty window).
    """
    times, power = samples.times_s, samples.power_w
    length = end_s - start_s
    if length <= 0:
        return f"the run's window is empty ({length:.3f} s)"
    if not times:
        return f"{samples.source} gave no power samples"
    if times[0] > start_s:
        return (f"{samples.source}'s samples start {times[0] - start_s:.2f} s after the run "
                "started (none at or before its start)")
    if times[-1] < end_s:
        return (f"{samples.source}'s samples end {end_s - times[-1]:.2f} s before the run "
                "ended (none at or after its end)")
    lo = bisect.bisect_right(times, start_s)
    hi = bisect.bisect_left(times, end_s)
    inside = hi - lo
    if inside < MIN_SAMPLES_IN_WINDOW:
        return (f"{samples.source} gave {inside} power sample(s) in the run's {length:.2f} s, "
                f"at least {MIN_SAMPLES_IN_WINDOW} are needed")
    pts_t = [start_s, *times[lo:hi], end_s]
    pts_p = [_at(times, power, start_s), *power[lo:hi], _at(times, power, end_s)]
    energy = sum((pts_t[i + 1] - pts_t[i]) * (pts_p[i + 1] + pts_p[i]) / 2
                 for i in range(len(pts_t) - 1))
    return WindowFigures(start_s, end_s, energy, energy / length, max(power[lo:hi]), inside)
