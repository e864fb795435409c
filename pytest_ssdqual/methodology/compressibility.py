"""Compressible vs incompressible data: the same write workloads with random buffers and with
zero-filled buffers; the zero / random ratio shows whether the target compresses (or detects
zeros), as SandForce-style controllers did.

Test flow, for each test of ``catalog.data_tests.COMPRESS_TESTS`` (128 KiB sequential write
QD32: bandwidth; 4 KiB random write QD32: IOPS): ``ROUNDS`` (3) rounds, each one run with
**random** buffers followed by one with **zero** buffers (``zero_buffers=1``,
``refill_buffers=0``, ``scramble_buffers=0``: all-zero data). Each run is time based,
``max(1, runtime / 3)`` seconds of the profile's ``runtime`` (``smoke``: 1 s; ``quick``: 10 s;
``full``: 100 s), on the profile's span.

Random buffers are fio's random initial fill with ``scramble_buffers=1`` (a few bytes of every
512 changed on each submit: no two blocks alike) and ``refill_buffers=0``. Unlike the other jobs
of this package they are not refilled on every submit: generating new random data costs fio
CPU time (the null engine on the 2-core development VM: ~1.1 GB/s with ``refill_buffers`` vs
~24 GB/s scrambled, 128 KiB QD32), which would make zero-filled writes look faster on any
target faster than that, compression or not. The scrambled data is still incompressible: zram
stored 92.7 MB of it in 92.7 MB (``mm_stat``).

Metrics (workload ``compressibility``; names per ``catalog.data_tests``):
``random_seq_write_128k_qd32.write.bw_mbps``, ``zero_seq_write_128k_qd32.write.bw_mbps``,
``zero_seq_write_128k_qd32.write.bw_mbps_ratio`` (zero / random), and the same with
``rand_write_4k_qd32`` and ``iops``. Each figure is the I/O of all its rounds over their
summed runtime; each ratio is the **median of the rounds' ratios** (each round's zero run over
its random run, taken back to back), so one round disturbed by a shared machine does not make
the ratio. A ratio >= 1.5 is noted as a sign of compression, < 1.2 as none.

Sources: fio HOWTO, "Buffers and memory": ``zero_buffers`` ("initialize buffers with all
zeros"), ``refill_buffers`` ("refill the I/O buffer on every submit"), ``scramble_buffers``.
"""

from __future__ import annotations

import statistics

from pytest_ssdqual.catalog.data_states import PerfTest, metric_name, ratio_name
from pytest_ssdqual.catalog.data_tests import (
    COMPRESS_TESTS,
    COMPRESS_WORKLOAD_ID,
    COMPRESSION_EVIDENCE_RATIO,
    MODE_RANDOM,
    MODE_ZERO,
    NO_COMPRESSION_BELOW,
)
from pytest_ssdqual.catalog.workloads import CATALOG
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    STATE_AS_FOUND,
    MethodologyResult,
    MethodRun,
    Step,
)
from pytest_ssdqual.methodology.job_options import catalog_job

WORKLOAD_ID = COMPRESS_WORKLOAD_ID
#: Random and zero runs per test (alternating).
ROUNDS = 3
#: fio options of each buffer kind (job section, overriding ``[global]``'s ``refill_buffers``).
BUFFER_OPTIONS: dict[str, tuple[str, ...]] = {
    MODE_RANDOM: ("refill_buffers=0", "scramble_buffers=1"),
    MODE_ZERO: ("refill_buffers=0", "scramble_buffers=0", "zero_buffers=1"),
}


def run(mr: MethodRun) -> MethodologyResult:
    """Run the compressibility test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: as ``MethodRun.fio``.
    """
    runtime_s = max(1.0, mr.session.options.profile.runtime_s / ROUNDS)
    mr.plan_steps([runtime_s + FIO_OVERHEAD_S] * (len(COMPRESS_TESTS) * ROUNDS * 2))
    metrics: dict[str, float] = {}
    ratios: dict[str, float] = {}
    for test in COMPRESS_TESTS:
        w = CATALOG[test.workload_id]
        span = mr.span(w.bs_bytes)
        steps: dict[str, list[Step]] = {MODE_RANDOM: [], MODE_ZERO: []}
        for i in range(1, ROUNDS + 1):
            for mode in (MODE_RANDOM, MODE_ZERO):
                job = catalog_job(test.workload_id, f"{mode}_{test.workload_id}", span,
                                  title_suffix=f", {mode} buffers", runtime_s=runtime_s,
                                  options=BUFFER_OPTIONS[mode])
                steps[mode].append(mr.fio(job, phase=f"{mode} buffers", state=STATE_AS_FOUND,
                                          round=i, rounds=ROUNDS))
        for figure in test.figures:
            for mode, runs in steps.items():
                metrics[metric_name(mode, test, figure)] = pooled(runs, test.direction, figure)
            ratio = median_ratio(steps[MODE_RANDOM], steps[MODE_ZERO], figure)
            if ratio is not None:
                ratios[ratio_name(MODE_ZERO, test, figure)] = ratio
    metrics.update(ratios)
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID],
        metrics=metrics,
        states={name: STATE_AS_FOUND for name in metrics},
        notes=[describe(test, f, ratios.get(ratio_name(MODE_ZERO, test, f)))
               for test in COMPRESS_TESTS for f in test.figures],
        steps=list(mr.steps),
    )


def median_ratio(references: list[Step], others: list[Step], figure: str) -> float | None:
    """The median over rounds of ``others[i]``'s ``figure`` / ``references[i]``'s (pairs run
    back to back); ``None`` when no pair has both figures and a reference > 0."""
    values = [o.figure(figure) / r.figure(figure)
              for r, o in zip(references, others, strict=True)
              if r.figure(figure) > 0 and o.figure(figure) == o.figure(figure)]
    return statistics.median(values) if values else None


def pooled(steps: list[Step], direction: str, figure: str) -> float:
    """``iops`` or ``bw_mbps`` of several runs as one: their I/Os or bytes over their summed
    measured time (fio ``total_ios``, ``io_bytes``, ``runtime``); NaN when none did I/O.

    Raises:
        ValueError: another figure (latency percentiles cannot be pooled from summaries).
    """
    if figure not in ("iops", "bw_mbps"):
        raise ValueError(f"cannot pool {figure!r} over runs; use iops or bw_mbps")
    done = [s.job_run.result for s in steps if direction in s.job_run.result.directions]
    seconds = sum(r.runtime_ms for r in done) / 1000
    if not done or seconds <= 0:
        return float("nan")
    if figure == "iops":
        return sum(r.directions[direction].total_ios for r in done) / seconds
    return sum(r.directions[direction].io_bytes for r in done) / seconds / 1e6


def describe(test: PerfTest, figure: str, ratio: float | None) -> str:
    """One report line: the zero / random ratio of ``test``'s ``figure`` and what it
    suggests (``COMPRESSION_EVIDENCE_RATIO``, ``NO_COMPRESSION_BELOW``)."""
    name = test.workload_id
    if ratio is None:
        return f"{name}: zero / random {figure} not measured"
    if ratio >= COMPRESSION_EVIDENCE_RATIO:
        verdict = "the target compresses or detects zero-filled data"
    elif ratio < NO_COMPRESSION_BELOW:
        verdict = "no sign of compression"
    else:
        verdict = "inconclusive"
    return f"{name}: zero-filled data at {ratio:.2f}x the random-data {figure}: {verdict}"
