"""Burst vs sustained: the same write workloads in short bursts at a 20 % duty cycle (the drive
idle between bursts, as a client's I/O comes) and continuously; the ratios show how much a
drive gains from idle time (SLC cache flushed, garbage collection caught up) or loses on wake.

Test flow, for each test of ``data_tests_catalog.BURST_TESTS`` (4 KiB random write QD32:
IOPS and p99 latency; 128 KiB sequential write QD32: bandwidth and p99 latency):

1. **burst**: time based, ``runtime`` seconds of cycles of ``cycle`` seconds: I/O for 20 % of
   each cycle, then idle for 80 % (fio ``thinktime_iotime`` = the burst, ``thinktime`` = the
   idle, ``thinktime_blocks`` set out of reach so only time ends a burst; fio >= 3.28).
2. **continuous**: the same workload for ``runtime`` seconds without idle.

``runtime`` is the profile's (``smoke``: 3 s, ``quick``: 30 s, ``full``: 300 s), rounded to
whole cycles; ``cycle`` is ``runtime / 6`` within 0.5-10 s (``smoke``: 0.5 s = 100 ms bursts,
``quick``: 5 s = 1 s bursts, ``full``: 10 s = 2 s bursts, 30 of them). The span is the
profile's.

Metrics (workload ``burst_vs_sustained``; names per ``data_tests_catalog``):
``burst_rand_write_4k_qd32.write.iops`` (I/Os per second *of burst*: fio's I/Os over the
measured time x the duty cycle), ``continuous_rand_write_4k_qd32.write.iops``,
``burst_rand_write_4k_qd32.write.iops_ratio`` (burst / continuous), ``..._lat_p99_us`` and its
ratio (fio's completion-latency percentile, measured only on I/Os, so idle does not dilute it),
and the same for ``seq_write_128k_qd32`` with ``bw_mbps``. A burst figure counts the whole
burst time as busy: an I/O still in flight at a burst's end completes in the idle after it.

Sources: fio HOWTO, "I/O rate": ``thinktime`` ("stall the job for the specified period of time
after an I/O has completed before issuing the next"), ``thinktime_blocks``,
``thinktime_iotime`` ("the thinktime stall is repeated after IOs are executed for
thinktime_iotime").
"""

from __future__ import annotations

from ..data_states import metric_name, ratio_name, ratios
from ..data_tests_catalog import (
    BURST_DUTY_PCT,
    BURST_TESTS,
    BURST_WORKLOAD_ID,
    MODE_BURST,
    MODE_CONTINUOUS,
)
from ..errors import FioError
from ..fio.runner import parse_fio_version
from ..workloads import CATALOG
from .base import FIO_OVERHEAD_S, STATE_AS_FOUND, MethodologyResult, MethodRun
from .job_options import catalog_job

WORKLOAD_ID = BURST_WORKLOAD_ID
#: Oldest fio with ``thinktime_iotime``.
MIN_FIO_VERSION = (3, 28)
#: Cycle length bounds, seconds, and the number of cycles aimed at in a run.
MIN_CYCLE_S, MAX_CYCLE_S, CYCLES = 0.5, 10.0, 6
#: ``thinktime_blocks`` out of reach: only ``thinktime_iotime`` ends a burst.
_NEVER_BLOCKS = 1_000_000_000


def cycle_plan(runtime_s: float) -> tuple[float, float, float]:
    """``(cycle_s, burst_s, runtime_s)``: the cycle (``runtime / 6`` within 0.5-10 s, whole
    milliseconds), its busy part (``BURST_DUTY_PCT`` %), and ``runtime_s`` rounded to whole
    cycles (at least one)."""
    cycle_ms = round(min(MAX_CYCLE_S, max(MIN_CYCLE_S, runtime_s / CYCLES)) * 1000)
    burst_ms = round(cycle_ms * BURST_DUTY_PCT / 100)
    n = max(1, round(runtime_s * 1000 / cycle_ms))
    return cycle_ms / 1000, burst_ms / 1000, n * cycle_ms / 1000


def burst_options(cycle_s: float, burst_s: float) -> tuple[str, ...]:
    """fio options for bursts of ``burst_s`` seconds, then idle to the end of each cycle."""
    idle_ms = round((cycle_s - burst_s) * 1000)
    return (f"thinktime={idle_ms}ms", f"thinktime_iotime={round(burst_s * 1000)}ms",
            f"thinktime_blocks={_NEVER_BLOCKS}")


def run(mr: MethodRun) -> MethodologyResult:
    """Run the burst vs sustained test on ``mr``'s drive.

    Raises:
        FioError: fio older than 3.28 (no ``thinktime_iotime``), or as ``MethodRun.fio``.
        SafetyRefusal, DeviceError: as ``MethodRun.fio``.
    """
    version = mr.session.runner.version()
    if parse_fio_version(version) < MIN_FIO_VERSION:
        raise FioError(f"{version} has no thinktime_iotime, which the burst test needs: "
                       f"install fio {'.'.join(map(str, MIN_FIO_VERSION))} or newer")
    cycle_s, burst_s, runtime_s = cycle_plan(mr.session.options.profile.runtime_s)
    duty = burst_s / cycle_s
    mr.plan_steps([runtime_s + FIO_OVERHEAD_S] * (2 * len(BURST_TESTS)))
    metrics: dict[str, float] = {}
    for test in BURST_TESTS:
        span = mr.span(CATALOG[test.workload_id].bs_bytes)
        for mode, options in ((MODE_BURST, burst_options(cycle_s, burst_s)),
                              (MODE_CONTINUOUS, ())):
            suffix = (f", {burst_s * 1000:.0f} ms bursts every {cycle_s:g} s" if options
                      else ", continuous")
            job = catalog_job(test.workload_id, f"{mode}_{test.workload_id}", span,
                              title_suffix=suffix, runtime_s=runtime_s, options=options)
            step = mr.fio(job, phase=mode, state=STATE_AS_FOUND)
            for figure in test.figures:
                value = step.figure(figure)
                if options and figure in ("iops", "bw_mbps"):
                    value /= duty  # per second of burst, not of wall time
                if value == value:  # NaN: fio gave no such figure
                    metrics[metric_name(mode, test, figure)] = value
    burst_ratios = ratios(metrics, (MODE_CONTINUOUS, MODE_BURST), BURST_TESTS)
    metrics.update(burst_ratios)
    notes = [f"bursts: {burst_s * 1000:.0f} ms of I/O every {cycle_s:g} s "
             f"({BURST_DUTY_PCT} % duty cycle) for {runtime_s:g} s; continuous: {runtime_s:g} s"]
    for test in BURST_TESTS:
        parts = [f"{f} {burst_ratios[ratio_name(MODE_BURST, test, f)]:.2f}x"
                 for f in test.figures if ratio_name(MODE_BURST, test, f) in burst_ratios]
        notes.append(f"{test.workload_id} burst / continuous: {', '.join(parts) or 'n/a'}")
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID],
        metrics=metrics,
        states={name: STATE_AS_FOUND for name in metrics},
        notes=notes,
        steps=list(mr.steps),
    )
