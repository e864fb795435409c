"""4 KiB random write at SNIA PTS steady state.

Test flow (SNIA PTS Enterprise 1.1 / Client 2.0, IOPS and write-saturation tests): purge;
workload-independent preconditioning (2x the span, 128 KiB sequential); then rounds of the
stimulus -- 4 KiB random writes, QD32, ``round_runtime_s`` each -- until the tracking figure
(write IOPS per round) meets the steady-state rule over the last 5 rounds, or
``max_rounds`` rounds ran (``steady_state.evaluate``).

Reported (the measurement window: the first qualifying 5 rounds, else the last 5):
``write.iops`` / ``write.bw_mbps`` averaged over the window, ``write.lat_mean_us`` averaged,
the latency percentiles (p50 to p99.9999) and ``write.lat_tail_ios`` from the window rounds'
summed fio json+ histograms (``merged_tails``: percentiles of all the window's I/Os; without
bins in every round, the worst round's), the maximum the window's largest, plus
``steady_state_reached`` (1/0), ``steady_state_round``, ``rounds``, ``data_excursion_pct`` and
``slope_excursion_pct``.

Steady state not reached fails the test: ``steady_state_reached >= 1`` is an implicit
requirement (``STEADY_STATE_REQUIREMENT``), since the ``write.*`` figures are then no
steady-state figures. A threshold profile waives it by setting its own limit on
``steady_state_reached`` for this workload (``{max: 1}``).
"""

from __future__ import annotations

import statistics

from pytest_ssdqual.catalog.workloads import CATALOG, MIB
from pytest_ssdqual.methodology import precondition as wipc
from pytest_ssdqual.methodology.base import (
    FIO_OVERHEAD_S,
    STATE_NOT_STEADY,
    STATE_PRECONDITIONED,
    STATE_STEADY,
    MethodologyResult,
    MethodRun,
    Step,
)
from pytest_ssdqual.methodology.jobs import rand_write_4k_job
from pytest_ssdqual.methodology.merged_tails import merged_percentiles
from pytest_ssdqual.methodology.steady_state import SteadyStateTracker
from pytest_ssdqual.thresholds.verdict import Limit, Provenance

WORKLOAD_ID = "steady_state_rand_write_4k"

#: Implicit: the SNIA steady state must be reached; a profile's own limit on
#: ``steady_state_reached`` (``{max: 1}``) replaces it (``base.judge_result``).
STEADY_STATE_REQUIREMENT = Limit(
    WORKLOAD_ID, "steady_state_reached", 1.0, None, None,
    Provenance("pytest_ssdqual/methodology/steady.py", "implicit requirement",
               "SNIA PTS: figures are reported at steady state; without it the write.* figures "
               "are no steady-state figures (waive with steady_state_reached: {max: 1} in a "
               "threshold profile)"),
)

#: Figures averaged over the window; the other latency figures take the window's worst round.
_AVERAGED = ("iops", "bw_mbps", "lat_mean_us")
_WORST = ("lat_p50_us", "lat_p99_us", "lat_p99_9_us", "lat_p99_99_us", "lat_max_us")


def run(mr: MethodRun) -> MethodologyResult:
    """Run the steady-state test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio.
    """
    plan = mr.plan
    span = mr.span(1 * MIB)
    job = rand_write_4k_job("rand_write_4k", span, plan.round_runtime_s)
    round_s = plan.round_runtime_s + FIO_OVERHEAD_S
    mr.plan_steps([1.0, wipc.planned_s(mr, span) + FIO_OVERHEAD_S]
                  + [round_s] * plan.max_rounds)
    record = mr.purge()
    wipc.precondition(mr, span)
    tracker = SteadyStateTracker(max_rounds=plan.max_rounds)
    rounds: list[Step] = []
    while not tracker.done:
        n = len(rounds) + 1
        step = mr.fio(job, phase="steady state", round=n, rounds=plan.max_rounds,
                      state=STATE_PRECONDITIONED, report=False)
        rounds.append(step)
        tracker.add(step.figure("iops"))
        # this round plus those still possible (none once steady)
        mr.plan_steps([round_s] + ([] if tracker.done else [round_s] * (plan.max_rounds - n)))
        mr.report_step(step, plan.max_rounds)
    verdict = tracker.state
    window = rounds[verdict.window_first_round - 1:verdict.window_last_round]
    state = STATE_STEADY if verdict.reached else STATE_NOT_STEADY
    metrics: dict[str, float] = {}
    for name in _AVERAGED:
        values = [s.figure(name) for s in window]
        if all(v == v for v in values):
            metrics[f"write.{name}"] = statistics.fmean(values)
    for name in _WORST:
        values = [s.figure(name) for s in window if s.figure(name) == s.figure(name)]
        if values:
            metrics[f"write.{name}"] = max(values)
    # with json+ bins in every round: the percentiles of all the window's I/Os
    metrics.update({f"write.{k}": v for k, v in merged_percentiles(window, "write").items()})
    metrics["steady_state_reached"] = 1.0 if verdict.reached else 0.0
    metrics["rounds"] = float(verdict.rounds)
    if verdict.round is not None:
        metrics["steady_state_round"] = float(verdict.round)
    if verdict.data_excursion_pct is not None and verdict.slope_excursion_pct is not None:
        metrics["data_excursion_pct"] = verdict.data_excursion_pct
        metrics["slope_excursion_pct"] = verdict.slope_excursion_pct
    return MethodologyResult(
        workload=CATALOG[WORKLOAD_ID],
        metrics=metrics,
        states={name: state for name in metrics},
        notes=[record.describe(), "tracking figure: write IOPS per round; " + verdict.describe()],
        steps=list(mr.steps),
        purge=record,
        steady_state=verdict,
        requirements=[STEADY_STATE_REQUIREMENT],
    )
