"""Consistency and recovery after idle (after PCMark 8's storage consistency test and SNIA PTS
host idle recovery).

Test flow, each *performance test* being 4 KiB random writes at QD32 for ``perf_runtime_s``:

1. purge; performance test -> **fresh** (FOB).
2. workload-independent preconditioning (``precondition_multiple`` x the span, sequential).
3. degradation: ``degrade_rounds`` rounds of random writes of random sizes (4 KiB-1 MiB,
   QD32) for ``degrade_first_s`` seconds, ``degrade_step_s`` more each round, each followed by
   the performance test -> **degraded** (the last round).
4. steady state: ``steady_rounds`` rounds of ``steady_write_s`` seconds of the same random
   writes, each followed by the performance test -> **steady** (averaged over the rounds; the
   SNIA PTS rule is applied to them: ``steady_state_reached``).
5. recovery: ``recovery_rounds`` rounds of ``idle_s`` seconds idle, each followed by the
   performance test -> **recovered** (the last round), ``recovery_ratio`` and
   ``time_to_recover_s`` (``recovery.recovery_metrics``).

Metrics (workload ``recovery_after_idle``): ``{fresh,degraded,steady,recovered}_iops``,
``..._lat_mean_us``, ``..._lat_p99_us`` (``steady_lat_p99_us``: the p99 of all the steady
rounds' I/Os, their json+ bins summed), ``recovery_ratio``, ``time_to_recover_s`` (the first idle
time after which every later round stays >= 90 % of fresh; absent when none: "never recovered",
said in the notes, and a limit on it FAILs with that reason -- ``MethodologyResult.unreached``),
``steady_state_reached``. A performance test whose bandwidth log shows stalls (windows with no
completed write, ``fio.logs``) gets a note with their number and the longest. ``purged`` = 0
when no purge method could run (the fresh figures are then "as found (purge failed: ...)" and
the test fails: ``purged`` must be >= 1).
"""

from __future__ import annotations

import statistics

from pytest_ssdqual.catalog.workloads import MIB
from pytest_ssdqual.methodology import precondition as wipc
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    STATE_DEGRADED,
    STATE_STEADY,
    MethodologyResult,
    MethodRun,
    Step,
    purge_state,
    purged_result,
    state_after_idle,
)
from pytest_ssdqual.methodology.jobs import rand_write_4k_job, random_size_write_job
from pytest_ssdqual.methodology.merged_tails import merged_percentiles
from pytest_ssdqual.methodology.purge import PurgeRecord
from pytest_ssdqual.methodology.recovery import recovery_metrics
from pytest_ssdqual.methodology.steady_state import evaluate

WORKLOAD_ID = "recovery_after_idle"
#: Where the implicit requirements come from (their provenance).
_SOURCE_FILE = "pytest_ssdqual/methodology/consistency.py"


def run(mr: MethodRun) -> MethodologyResult:
    """Run the consistency and recovery test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio.
    """
    plan = mr.plan
    span = mr.span(1 * MIB)
    perf = rand_write_4k_job("perf_test", span, plan.perf_runtime_s)
    perf_s = plan.perf_runtime_s + FIO_OVERHEAD_S
    degrade_s = [plan.degrade_first_s + i * plan.degrade_step_s
                 for i in range(plan.degrade_rounds)]
    # One planned duration per reported step: purge, each fio job, idle + performance test.
    mr.plan_steps(
        [1.0, perf_s, wipc.planned_s(mr, span) + FIO_OVERHEAD_S]
        + [x for d in degrade_s for x in (d + FIO_OVERHEAD_S, perf_s)]
        + [plan.steady_write_s + FIO_OVERHEAD_S, perf_s] * plan.steady_rounds
        + [plan.idle_s + perf_s] * plan.recovery_rounds
    )

    record = mr.purge()
    # a failed purge: "as found (purge failed: ...)", and purged = 0 fails the test
    fresh = mr.fio(perf, phase="fresh", state=purge_state(record))
    wipc.precondition(mr, span)

    degraded: list[Step] = []
    for i, seconds in enumerate(degrade_s, start=1):
        writes = random_size_write_job("random_writes", span, seconds)
        mr.fio(writes, phase="degradation writes", round=i, rounds=len(degrade_s),
               state=STATE_DEGRADED, label=f"degradation round {i}")
        degraded.append(mr.fio(perf, phase="degradation", round=i, rounds=len(degrade_s),
                               state=STATE_DEGRADED))
    steady: list[Step] = []
    for i in range(1, plan.steady_rounds + 1):
        writes = random_size_write_job("random_writes", span, plan.steady_write_s)
        mr.fio(writes, phase="steady-state writes", round=i, rounds=plan.steady_rounds,
               state=STATE_STEADY, label=f"steady-state round {i}")
        steady.append(mr.fio(perf, phase="steady state", round=i, rounds=plan.steady_rounds,
                             state=STATE_STEADY))
    recovered: list[Step] = []
    idle_total = 0.0
    for i in range(1, plan.recovery_rounds + 1):
        mr.idle(plan.idle_s, phase=f"recovery round {i}")
        idle_total += plan.idle_s
        recovered.append(mr.fio(perf, phase="recovery", round=i, rounds=plan.recovery_rounds,
                                state=state_after_idle(idle_total), idle_before_s=idle_total))
    return _result(mr, record, fresh, degraded, steady, recovered)


def _phase_metrics(prefix: str, steps: list[Step]) -> dict[str, float]:
    """``<prefix>_iops`` and ``<prefix>_lat_mean_us`` averaged over ``steps``,
    ``<prefix>_lat_p99_us`` the p99 of all their I/Os from their summed json+ histograms
    (``merged_tails``), else the worst of them (NaN figures left out)."""
    out: dict[str, float] = {}
    for name, combine in (("iops", statistics.fmean), ("lat_mean_us", statistics.fmean),
                          ("lat_p99_us", max)):
        values = [s.figure(name) for s in steps if s.figure(name) == s.figure(name)]
        if values:
            out[f"{prefix}_{name}"] = float(combine(values))
    merged = merged_percentiles(steps, steps[0].direction) if steps else {}
    if "lat_p99_us" in merged:
        out[f"{prefix}_lat_p99_us"] = merged["lat_p99_us"]
    return out


def _result(
    mr: MethodRun,
    record: PurgeRecord,
    fresh: Step,
    degraded: list[Step],
    steady: list[Step],
    recovered: list[Step],
) -> MethodologyResult:
    metrics: dict[str, float] = {}
    states: dict[str, str] = {}
    phases = (
        ("fresh", [fresh]),
        ("degraded", degraded[-1:]),
        ("steady", steady),
        ("recovered", recovered[-1:]),
    )
    for prefix, steps in phases:
        figures = _phase_metrics(prefix, steps)
        metrics.update(figures)
        for name in figures:
            states[name] = steps[-1].state
    notes = [record.describe()]
    unreached: dict[str, str] = {}
    if len(steady) >= 2:
        verdict = evaluate([s.figure("iops") for s in steady],
                           window_rounds=min(len(steady), 5))
        metrics["steady_state_reached"] = 1.0 if verdict.reached else 0.0
        states["steady_state_reached"] = STATE_STEADY
        notes.append("steady-state rounds (performance-test IOPS): " + verdict.describe())
    fresh_iops = fresh.figure("iops")
    if recovered and fresh_iops == fresh_iops and fresh_iops > 0:
        report = recovery_metrics(
            fresh_iops,
            [(s.idle_before_s or 0.0, s.figure("iops")) for s in recovered],
            before_idle=steady[-1].figure("iops") if steady else None,
        )
        for name, value in report.metrics().items():
            metrics[name] = value
            states[name] = recovered[-1].state
        notes.append(report.describe())
        unreached.update(report.unreached())  # never recovered: a limit on it fails, saying so
    for step in (fresh, *degraded, *steady, *recovered):  # the performance tests
        if step.bw is not None and step.bw.gaps is not None and step.bw.gaps.stalls:
            label = step.phase if step.round is None else f"{step.phase} round {step.round}"
            notes.append(f"{label} performance test, write-bandwidth log: "
                         + step.bw.gaps.describe())
    return purged_result(WORKLOAD_ID, _SOURCE_FILE, record, mr.steps, metrics, states, notes,
                         purge_figure_state=fresh.state, unreached=unreached)
