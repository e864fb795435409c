"""Queue-depth scaling: 4 KiB random read and write and 128 KiB sequential
read and write, each at QD 1, 2, 4, 8, 16 and 32 (one thread), as reviewers chart it (e.g.
AnandTech's "QD1-4 average" random-read figure and its QD-scaling curves).

Flow: write the span once (prefill, see ``sweep``), then the read patterns, then the write
patterns, each point one time-based fio run over the profile's span (smoke: 256 MiB, 1 s per
point, 24 points, ~35 s in all; quick: 16 GiB, 2 + 10 s per point; full: the whole drive,
12 + 60 s per point).

Metrics (workload ``qd_scaling``), for each pattern ``p`` of ``rand_read_4k``,
``seq_read_128k``, ``rand_write_4k``, ``seq_write_128k`` and its direction ``d``:

* ``<p>_qd<N>.<d>.iops``, ``.bw_mbps``, ``.lat_mean_us``, ``.lat_p99_us``: the point at QD N;
* ``<p>_qd1_4_avg.<d>.iops`` and ``.bw_mbps``: the mean of QD 1, 2 and 4;
* ``<p>.saturation_qd``: the smallest QD whose IOPS reach 90 % of the sweep's maximum (where
  adding commands stops paying);
* ``<p>.scaling_ratio``: the sweep's maximum IOPS / the QD1 IOPS.

Curves: per pattern, IOPS, bandwidth and p99 latency by QD.
"""

from __future__ import annotations

import statistics

from pytest_ssdqual.catalog.sweeps import (
    LOW_QDS,
    QD_PATTERNS,
    QUEUE_DEPTHS,
    SATURATION_SHARE,
    Pattern,
)
from pytest_ssdqual.catalog.workloads import CATALOG, KIB
from pytest_ssdqual.methodology import sweep
from pytest_ssdqual.methodology.base import MethodologyResult, MethodRun, Step
from pytest_ssdqual.methodology.curves import Curve
from pytest_ssdqual.methodology.params import FioParams

WORKLOAD_ID = "qd_scaling"


def run(mr: MethodRun) -> MethodologyResult:
    """Run the QD-scaling sweep on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from fio.
    """
    timing = sweep.point_timing(mr)
    span = mr.span(128 * KIB)
    mr.plan_steps([sweep.prefill_planned_s(mr, span)]
                  + [timing.planned_s] * (len(QD_PATTERNS) * len(QUEUE_DEPTHS)))
    sweep.prefill(mr, span)
    metrics: dict[str, float] = {}
    curves: list[Curve] = []
    notes: list[str] = []
    for pattern in QD_PATTERNS:
        steps: list[tuple[int, Step]] = []
        for qd in QUEUE_DEPTHS:
            job = FioParams(pattern.rw, pattern.bs_bytes, qd).job(
                span, runtime_s=timing.runtime_s, ramp_time_s=timing.ramp_time_s)
            steps.append((qd, mr.fio(job, phase=pattern.name, state=sweep.STATE_PREFILLED,
                                     label=f"{pattern.name} QD{qd}")))
        figures, pattern_curves, note = _pattern(pattern, steps)
        metrics.update(figures)
        curves += pattern_curves
        notes.append(note)
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID], metrics=metrics,
        states=sweep.with_state(metrics, sweep.STATE_PREFILLED), notes=notes, steps=list(mr.steps),
        curves=curves,
    )


def _pattern(pattern: Pattern, steps: list[tuple[int, Step]]
             ) -> tuple[dict[str, float], list[Curve], str]:
    """One pattern's point figures, QD1-4 average, saturation QD and scaling ratio, curves
    and a report line."""
    d = pattern.direction
    metrics: dict[str, float] = {}
    for qd, step in steps:
        metrics.update(sweep.point_figures(step, f"{pattern.name}_qd{qd}",
                                     [f"{d}.{f}" for f in ("iops", "bw_mbps", "lat_mean_us",
                                                            "lat_p99_us")]))
    series = {f: [(qd, step.figure(f)) for qd, step in steps]
              for f in ("iops", "bw_mbps", "lat_p99_us")}
    for f in ("iops", "bw_mbps"):
        low = [y for qd, y in series[f] if qd in LOW_QDS and y == y]
        if len(low) == len(LOW_QDS):
            metrics[f"{pattern.name}_qd1_4_avg.{d}.{f}"] = statistics.fmean(low)
    saturation = sweep.saturation_x(series["iops"], SATURATION_SHARE)
    if saturation == saturation:
        metrics[f"{pattern.name}.saturation_qd"] = saturation
    qd1 = dict(series["iops"]).get(1, float("nan"))
    top = max((y for _, y in series["iops"] if y == y), default=float("nan"))
    if qd1 == qd1 and qd1 > 0 and top == top:
        metrics[f"{pattern.name}.scaling_ratio"] = top / qd1
    curves = [sweep.curve(pattern.name, "qd", "", f"{d}.{f}", series[f]) for f in series]
    note = (f"{pattern.name}: " + ", ".join(f"QD{qd} {y:,.0f}" for qd, y in series["iops"])
            + f" IOPS; saturates at QD{saturation:g} ({SATURATION_SHARE:.0%} of the maximum)")
    return metrics, curves, note
