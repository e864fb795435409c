"""What the sweep tests share (QD scaling, mixed sweeps, transfer sizes, client presets): the
per-point timing of each run profile, the prefill, reading a point's figures and building
curves.

Every point is one fio run. Its measured time is the profile's performance-test time
(``MethodologyPlan.perf_runtime_s``: smoke 1 s, quick 10 s, full 60 s), after a ramp of a fifth
of it capped at the profile's ``ramp_time_s`` (smoke: none, quick 2 s, full 12 s). The drive is
not purged: it is taken as found, and the span is written once (sequential 128 KiB, QD32) so
reads hit written media rather than unwritten blocks a drive answers without touching NAND.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pytest_ssdqual.methodology.base import FIO_OVERHEAD_S, MethodRun, Step
from pytest_ssdqual.methodology.curves import Curve
from pytest_ssdqual.methodology.jobs import precondition_job

#: The state of every sweep figure: not purged, span written once before the first point.
STATE_PREFILLED = "as found, span prefilled (not purged)"
#: Units of the figures, for curves.
UNITS: dict[str, str] = {
    "iops": "IOPS", "bw_mbps": "MB/s", "lat_mean_us": "us", "lat_p99_us": "us",
}


@dataclass(frozen=True)
class PointTiming:
    """Seconds of one sweep point: ``runtime_s`` measured after ``ramp_s``."""

    runtime_s: float
    ramp_s: float

    @property
    def planned_s(self) -> float:
        """Wall seconds of one time-based point, fio's start-up included."""
        return self.ramp_s + self.runtime_s + FIO_OVERHEAD_S

    @property
    def ramp_time_s(self) -> float | None:
        """fio ``ramp_time`` (``None``: no ramp)."""
        return self.ramp_s or None


def point_timing(mr: MethodRun) -> PointTiming:
    """The profile's point timing (see the module docstring)."""
    runtime = mr.plan.perf_runtime_s
    ramp = 0.0 if runtime <= 2 else min(mr.session.options.profile.ramp_time_s, runtime / 5)
    return PointTiming(runtime, ramp)


def prefill_planned_s(mr: MethodRun, span_bytes: int) -> float:
    """Planned seconds of :func:`prefill` at the last measured write bandwidth."""
    return precondition_job(span_bytes, 1, name="prefill").planned_s(mr.write_bw_mbps) \
        + FIO_OVERHEAD_S


def prefill(mr: MethodRun, span_bytes: int) -> Step:
    """Write ``span_bytes`` once, sequential 128 KiB at QD32, before the first read point.

    Raises:
        SafetyRefusal, DeviceError, FioError: as ``QualSession.run_job``.
    """
    return mr.fio(precondition_job(span_bytes, 1, name="prefill"), phase="prefill",
                  state=STATE_PREFILLED)


def point_figures(step: Step, point: str, names: Iterable[str]) -> dict[str, float]:
    """``{'<point>.<name>': value}`` for each canonical ``name`` (``read.iops``) fio measured
    in ``step`` (a direction without I/O gives no figure)."""
    out: dict[str, float] = {}
    for name in names:
        value = step.metrics.get(name)
        if value is not None and value == value:
            out[f"{point}.{name}"] = float(value)
    return out


def curve(name: str, x_name: str, x_unit: str, y_name: str,
          points: Sequence[tuple[float, float]]) -> Curve:
    """A ``Curve`` of ``y_name`` (``read.iops``; its unit from the figure's name)."""
    return Curve(name, x_name, x_unit, y_name, UNITS.get(y_name.rpartition(".")[2], ""),
                 tuple((float(x), float(y)) for x, y in points))


def saturation_x(points: Sequence[tuple[float, float]], share: float) -> float:
    """The smallest ``x`` whose ``y`` reaches ``share`` of the largest ``y`` (NaN when no
    point has a positive figure). E.g. IOPS by QD ``[(1, 10k), (2, 19k), (4, 30k), (8, 31k)]``
    and ``share`` 0.9 give QD 4 (30k >= 0.9 x 31k)."""
    valid = [(x, y) for x, y in points if y == y and y > 0]
    if not valid:
        return float("nan")
    top = max(y for _, y in valid)
    return min(x for x, y in valid if y >= share * top)


def with_state(metrics: Mapping[str, float], state: str) -> dict[str, str]:
    """Every metric taken in ``state``."""
    return {name: state for name in metrics}
