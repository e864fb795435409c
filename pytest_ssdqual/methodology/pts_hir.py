"""SNIA PTS Host Idle Recovery (HIR): how much of its speed a write-saturated drive gets back
from idle time of 5, 10, 15, 25 and 50 s between 5 s write bursts.

Test flow (schedules per run profile: ``catalog.pts_wsat_hir.HIR_PLANS``), every job RND 4 KiB
writes at T4Q32 on the active range (``pts_wsat.stimulus_job``):

1. purge;
2. preconditioning to steady state: rounds of ``round_s`` seconds until the SNIA PTS rule holds
   over the last 5 rounds' IOPS (``steady_state.SteadyStateTracker``) or ``max_rounds``
   rounds ran; the window's mean is the baseline;
3. for each wait state (PTS: 5, 10, 15, 25, 50 s): ``cycles`` x (the wait, the drive left
   idle, then a ``burst_s`` burst: one fio run each, whose IOPS is fio's own figure for it),
   then the return to baseline: one continuous run of ``baseline_cycles`` x ``burst_s``
   seconds whose per-second IOPS log is cut into ``burst_s`` stretches.

The PTS lists each cycle as the burst then the wait; here the wait comes first so that every
burst follows a wait (the same waits and bursts, shifted by one: the PTS's first burst follows
the baseline directly and its last wait precedes the return to baseline). The wait the drive
sees is the one asked plus the host's time between two fio runs (its start-up, the drive's
safety re-check: measured in the notes as the observed cycle).

Figures (``pts_hir_analysis``): ``baseline_iops``, ``steady_state_reached`` and per wait state
``w5s_iops``, ``w5s_recovery_ratio``, ``w5s_rebaseline_iops``. Plots: IOPS per burst, round and
baseline stretch against time, one line per segment. ``purged`` = 0 when no purge method could
run (the test then fails).

Source: SNIA PTS Enterprise 1.1, section 11 "Host Idle Recovery Test".
"""

from __future__ import annotations

from pytest_ssdqual.catalog.pts_wsat_hir import BS_BYTES, HIR_ID, PTS_WAITS_S, hir_plan, wait_name
from pytest_ssdqual.fio.series import Series
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    STATE_NOT_STEADY,
    STATE_PRECONDITIONED,
    MethodologyResult,
    MethodRun,
    Step,
    purge_state,
    purged_result,
)
from pytest_ssdqual.methodology.pts_hir_analysis import (
    PRECONDITION,
    HirPoint,
    baseline_segment,
    hir_report,
    stretches,
)
from pytest_ssdqual.methodology.pts_range import ActiveRange
from pytest_ssdqual.methodology.pts_wsat import setup_line, stimulus_job
from pytest_ssdqual.methodology.steady_state import SteadyStateTracker

WORKLOAD_ID = HIR_ID
_SOURCE_FILE = "pytest_ssdqual/methodology/pts_hir.py"


def state_of(pts_wait_s: float, wait_s: float) -> str:
    """``HIR wait state 5 s (run 0.25 s)``: the drive state of a wait state's figures."""
    run = "" if wait_s == pts_wait_s else f" (run {wait_s:g} s)"
    return f"HIR wait state {pts_wait_s:g} s{run}"


def run(mr: MethodRun, active_range: ActiveRange | None = None) -> MethodologyResult:
    """Run the HIR on ``mr``'s drive within ``active_range`` (default: ``0:100``).

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio.
    """
    active_range = active_range or ActiveRange()
    plan = hir_plan(mr.session.options.profile.name)
    offset, length = active_range.area(mr.span(BS_BYTES), BS_BYTES)
    rounds_job = stimulus_job("hir_precondition", "preconditioning round", offset, length,
                              runtime_s=plan.round_s)
    burst_job = stimulus_job("hir_burst", f"{plan.burst_s:g} s burst", offset, length,
                             runtime_s=plan.burst_s)
    rebase_s = plan.baseline_cycles * plan.burst_s
    rebase_job = stimulus_job("hir_baseline", f"return to baseline, {rebase_s:g} s", offset,
                              length, runtime_s=rebase_s)
    gap = FIO_OVERHEAD_S
    mr.plan_steps([1.0] + [plan.round_s + gap] * plan.max_rounds + [
        x for w in plan.waits_s for x in [w + plan.burst_s + gap] * plan.cycles + [rebase_s + gap]])
    record = mr.purge()
    points: list[HirPoint] = []
    tracker = SteadyStateTracker(max_rounds=plan.max_rounds)
    n = 0
    while not tracker.done:
        n += 1
        step = mr.fio(rounds_job, phase="precondition", round=n, rounds=plan.max_rounds,
                      state=STATE_PRECONDITIONED)
        tracker.add(step.figure("iops"))
        points.append(HirPoint(step.start_s + plan.round_s, PRECONDITION, step.figure("iops")))
    verdict = tracker.state
    cycles_s: list[str] = []
    for pts_wait, wait in zip(PTS_WAITS_S, plan.waits_s, strict=True):
        name, state = wait_name(pts_wait), state_of(pts_wait, wait)
        starts = []
        for c in range(1, plan.cycles + 1):
            mr.idle(wait, phase=f"{name} cycle {c}")
            step = mr.fio(burst_job, phase=f"{name} bursts", round=c, rounds=plan.cycles,
                          state=state, idle_before_s=wait)
            starts.append(step.start_s)
            points.append(HirPoint(step.start_s + plan.burst_s, name, step.figure("iops")))
        if len(starts) > 1:
            cycles_s.append(f"{name}: {(starts[-1] - starts[0]) / (len(starts) - 1):.2f} s "
                            f"(asked {wait + plan.burst_s:g} s)")
        base = mr.fio(rebase_job, phase=f"{name} return to baseline", state=state)
        points += _baseline_points(base, plan.burst_s, baseline_segment(pts_wait))
    report = hir_report(points, plan.waits_s)
    metrics = report.metrics()
    metrics["steady_state_reached"] = 1.0 if verdict.reached else 0.0
    pre_state = STATE_PRECONDITIONED if verdict.reached else STATE_NOT_STEADY
    states = {"baseline_iops": pre_state, "steady_state_reached": pre_state}
    for ws in report.states:
        states.update({m: state_of(ws.pts_wait_s, ws.wait_s) for m in metrics
                       if m.startswith(wait_name(ws.pts_wait_s) + "_")})
    notes = [
        "PTS test set-up: " + record.describe(),
        "PTS test set-up: preconditioning with the stimulus (RND 4 KiB writes) in "
        f"{plan.round_s:g} s rounds: " + verdict.describe(),
        "PTS test set-up: " + setup_line(mr, active_range, offset, length),
        f"PTS schedule: {plan.cycles} cycles per wait state of a wait then a "
        f"{plan.burst_s:g} s burst, waits {', '.join(f'{w:g}' for w in plan.waits_s)} s (the "
        f"PTS's 5, 10, 15, 25, 50 s), each followed by {rebase_s:g} s of continuous writes",
        *([f"observed cycle (wait + burst + the host's start-up of fio): {'; '.join(cycles_s)}"]
          if cycles_s else []),
        "HIR measurement (mean burst IOPS per wait state):", *report.table(),
    ]
    return purged_result(WORKLOAD_ID, _SOURCE_FILE, record, mr.steps, metrics, states, notes,
                         purge_figure_state=purge_state(record), curves=report.curves())


def _baseline_points(step: Step, chunk_s: float, segment: str) -> list[HirPoint]:
    """The return to baseline as ``chunk_s`` stretches from its IOPS log, or, when fio logged
    no window (a run within one log window), one point of fio's own figure."""
    series: Series | None = step.iops
    if series is not None and len(series):
        points = stretches(series, chunk_s, start_s=step.start_s, segment=segment)
        if points:
            return points
    ran_s = step.job_run.result.runtime_ms / 1000
    return [HirPoint(step.start_s + ran_s, segment, step.figure("iops"))]
