"""Burst vs sustained: the same write workloads in short bursts at a 20 % duty cycle (the drive
idle between bursts, as a client's I/O comes) and continuously; the ratios show how much a
drive gains from idle time (SLC cache flushed, garbage collection caught up) or loses on wake.

Test flow, for each test of ``catalog.data_tests.BURST_TESTS`` (4 KiB random write QD32:
IOPS and p99 latency; 128 KiB sequential write QD32: bandwidth and p99 latency):

1. **burst**: one fio run of ``n`` bursts, each its own job section (``[<name>_<k>]``, its own
   reporting group: ``new_group``) that starts ``k x cycle`` seconds after fio starts
   (``startdelay``) and issues I/O for ``burst`` = 20 % of a cycle (``runtime``, time based):
   the drive is idle for the rest of each cycle.
2. **continuous**: the same workload for ``n x cycle`` seconds without idle.

``n x cycle`` is the profile's ``runtime`` (``smoke``: 3 s, ``quick``: 30 s, ``full``: 300 s)
rounded to whole cycles; ``cycle`` is ``runtime / 6`` within 1-10 s (``smoke``: 3 cycles of 1 s
= 200 ms bursts and 800 ms idle, ``quick``: 6 of 5 s = 1 s bursts, ``full``: 30 of 10 s = 2 s
bursts). The span is the profile's. The idle is never under 800 ms: shorter gaps are hardly
idle to a drive's firmware (the emulated drives count idle from 0.5 s).

Metrics (workload ``burst_vs_sustained``; names per ``catalog.data_tests``):
``burst_rand_write_4k_qd32.write.iops``, ``continuous_rand_write_4k_qd32.write.iops``,
``burst_rand_write_4k_qd32.write.iops_ratio`` (burst / continuous), ``..._lat_p99_us`` and its
ratio, and the same for ``seq_write_128k_qd32`` with ``bw_mbps``. A burst figure is the I/Os
(bytes) of all bursts over the sum of their fio ``runtime``: a burst's runtime lasts until its
last I/O completed, so the I/Os still in flight when it stops issuing count with the time they
took (dividing the run's figure by the duty cycle would not: on a loop device capped flat at
100 MiB/s by a blkio throttle that read 1.8x the continuous figure; this reads 1.15-1.2x, the
throttle's own slack after idle, and 2.4-2.5x on an emulated drive whose SLC cache idle time
empties). The burst p99 latency is the worst burst's (fio percentiles
are never averaged).

Sources: fio HOWTO, "Job file format" (job sections), "Time related parameters"
(``startdelay``, ``runtime``, ``time_based``), "Measurements and reporting" (``new_group``,
``group_reporting``); fio's JSON ``runtime`` per job and direction.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_ssdqual.catalog.data_states import metric_name, ratio_name, ratios
from pytest_ssdqual.catalog.data_tests import (
    BURST_DUTY_PCT,
    BURST_TESTS,
    BURST_WORKLOAD_ID,
    MODE_BURST,
    MODE_CONTINUOUS,
)
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.extract import extract_json_document
from pytest_ssdqual.fio.job import fio_time
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    STATE_AS_FOUND,
    MethodologyResult,
    MethodRun,
    Step,
)
from pytest_ssdqual.methodology.jobs import MethodJob

WORKLOAD_ID = BURST_WORKLOAD_ID
#: Cycle length bounds, seconds, and the number of cycles aimed at in a run.
MIN_CYCLE_S, MAX_CYCLE_S, CYCLES = 1.0, 10.0, 6


def cycle_plan(runtime_s: float) -> tuple[float, float, float]:
    """``(cycle_s, burst_s, runtime_s)``: the cycle (``runtime / 6`` within 1-10 s, whole
    milliseconds), its busy part (``BURST_DUTY_PCT`` %), and ``runtime_s`` rounded to whole
    cycles (at least one)."""
    cycle_ms = round(min(MAX_CYCLE_S, max(MIN_CYCLE_S, runtime_s / CYCLES)) * 1000)
    burst_ms = round(cycle_ms * BURST_DUTY_PCT / 100)
    n = max(1, round(runtime_s * 1000 / cycle_ms))
    return cycle_ms / 1000, burst_ms / 1000, n * cycle_ms / 1000


@dataclass(frozen=True)
class BurstJob(MethodJob):
    """``bursts`` job sections of the same I/O pattern, each ``runtime_s`` long (time based),
    the k-th (0-based) starting ``k x cycle_s`` after fio starts, each its own reporting group.

    Attributes:
        cycle_s: seconds from one burst's start to the next. bursts: how many.
    """

    cycle_s: float = 1.0
    bursts: int = 1

    def section(self, k: int) -> str:
        """The job name of burst ``k`` (0-based): ``<name>_<k + 1>``."""
        return f"{self.name}_{k + 1}"

    @property
    def writers(self) -> int:
        """Every burst section's threads transfer ``io_bytes`` each (size based)."""
        return self.bursts * self.numjobs

    def planned_s(self, bw_mbps: float) -> float:
        """Seconds from fio's start to the last burst's end."""
        assert self.runtime_s is not None
        return (self.bursts - 1) * self.cycle_s + self.runtime_s

    def render(self, *, filename: str, ioengine: str) -> str:
        """``MethodJob.render``'s text with its job section repeated once per burst, each with
        its ``startdelay`` and ``new_group``."""
        head, sep, body = super().render(filename=filename, ioengine=ioengine).partition(
            f"\n[{self.name}]\n")
        assert sep, "MethodJob.render names its section after the job"
        return head + "".join(
            f"\n[{self.section(k)}]\n{body}startdelay={fio_time(k * self.cycle_s)}\nnew_group=1\n"
            for k in range(self.bursts))


def burst_figures(job: BurstJob, output: str, *, direction: str, source: str
                  ) -> dict[str, float]:
    """``iops`` and ``bw_mbps`` over the bursts of ``job``: the I/Os and bytes of every burst's
    ``direction`` over the sum of their runtimes (fio JSON ``total_ios``, ``io_bytes``,
    ``runtime`` in ms per job).

    Raises:
        FioOutputError: no JSON document, a burst missing from it, or no runtime at all; the
            message names ``source`` and the job.
    """
    _before, doc, _after = extract_json_document(output, source=source)
    jobs = doc.get("jobs", doc.get("client_stats")) or []  # client_stats: fio --client
    by_name = {j.get("jobname"): j for j in jobs if isinstance(j, dict)}
    ios = moved = ms = 0.0
    for k in range(job.bursts):
        entry = by_name.get(job.section(k))
        if entry is None:
            raise FioOutputError(f"{source}: no job {job.section(k)!r} in fio's JSON document")
        stats = entry.get(direction) or {}
        try:
            ios += float(stats.get("total_ios", 0))
            moved += float(stats.get("io_bytes", 0))
            ms += float(stats.get("runtime", 0))
        except (TypeError, ValueError):
            raise FioOutputError(f"{source}: job {job.section(k)!r}: {direction}.total_ios, "
                                 "io_bytes or runtime is not a number") from None
    if ms <= 0:
        raise FioOutputError(f"{source}: the bursts of {job.name} report no {direction} runtime")
    return {"iops": ios / (ms / 1000), "bw_mbps": moved / (ms / 1000) / 1e6}


def run(mr: MethodRun) -> MethodologyResult:
    """Run the burst vs sustained test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: as ``MethodRun.fio``; FioOutputError: a burst's
            figures missing from fio's output.
    """
    cycle_s, burst_s, runtime_s = cycle_plan(mr.session.options.profile.runtime_s)
    bursts = round(runtime_s / cycle_s)
    mr.plan_steps([runtime_s + FIO_OVERHEAD_S] * (2 * len(BURST_TESTS)))
    metrics: dict[str, float] = {}
    for test in BURST_TESTS:
        w = CATALOG[test.workload_id]
        span = mr.span(w.bs_bytes)
        burst = BurstJob(f"{MODE_BURST}_{test.workload_id}",
                         f"{w.title}, {burst_s * 1000:.0f} ms bursts every {cycle_s:g} s", w.rw,
                         w.bs_bytes, w.iodepth, span, runtime_s=burst_s, cycle_s=cycle_s,
                         bursts=bursts)
        continuous = MethodJob(f"{MODE_CONTINUOUS}_{test.workload_id}", f"{w.title}, continuous",
                               w.rw, w.bs_bytes, w.iodepth, span, runtime_s=runtime_s)
        for mode, job in ((MODE_BURST, burst), (MODE_CONTINUOUS, continuous)):
            step = mr.fio(job, phase=mode, state=STATE_AS_FOUND, report=False)
            figures = _figures(step, burst if job is burst else None, test.direction)
            if figures:  # fio's merged figures are sums of the bursts' rates: say ours
                mr.report(mode, figure=f"{test.direction} {figures['iops']:,.0f} IOPS, "
                          f"{figures['bw_mbps']:,.1f} MB/s during bursts")
            else:
                mr.report_step(step)
            for figure in test.figures:
                value = figures.get(figure, step.figure(figure))
                if value == value:  # NaN: fio gave no such figure
                    metrics[metric_name(mode, test, figure)] = value
    burst_ratios = ratios(metrics, (MODE_CONTINUOUS, MODE_BURST), BURST_TESTS)
    metrics.update(burst_ratios)
    notes = [f"bursts: {bursts} x {burst_s * 1000:.0f} ms of I/O every {cycle_s:g} s "
             f"({BURST_DUTY_PCT} % duty cycle); continuous: {runtime_s:g} s"]
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


def _figures(step: Step, burst: BurstJob | None, direction: str) -> dict[str, float]:
    """The burst run's own ``iops``/``bw_mbps`` (:func:`burst_figures`); ``{}`` for a
    continuous run (fio's figures stand)."""
    if burst is None:
        return {}
    run = step.job_run.run
    return burst_figures(burst, run.raw_output, direction=direction,
                         source=str(run.output_path))
