"""The SNIA PTS IOPS test: random I/O over the R/W mix x block size matrix at steady state.

Test flow (SNIA PTS Enterprise 1.1 / Client 2.0 and PTS 2.0.x, "IOPS test"): purge; SEQ 128 KiB
preconditioning of 2x the active range (``pts_common.precondition``); then rounds, each a pass
over every mix x block size -- for each R/W mix (100/0, 95/5, 65/35, 50/50, 35/65, 5/95, 0/100),
each block size from 1024 KiB down to 0.5 KiB -- ``point_runtime_s`` each (PTS: 1 minute), TC1 x
QD32; steady state is tracked on RND 4 KiB 0/100 IOPS (``rand_write_4k.iops`` per round); at most
``max_rounds`` rounds (PTS: 25). The run profile's schedule (``catalog.pts.SCHEDULES``) sets the
points, their time and the round cap (``smoke``: 3 mixes of 4 KiB, 0.5 s, 5 rounds).

Reported: ``<point>.iops`` (read + write IOPS) averaged over the measurement window (the 5 rounds
the verdict names), the steady-state figures, and the PTS tables (``pts_tables``): set-up,
rounds, steady-state window, the window's IOPS per point (``pts-window.csv``) and as the PTS's
mix x block-size matrix (``pts-iops-matrix.csv``).
"""

from __future__ import annotations

import statistics

from pytest_ssdqual.catalog import pts
from pytest_ssdqual.methodology import pts_tables as tables
from pytest_ssdqual.methodology.base import (
    STATE_NOT_STEADY,
    STATE_STEADY,
    MethodologyResult,
    MethodRun,
)
from pytest_ssdqual.methodology.pts_common import (
    Point,
    Rounds,
    active_area,
    finish,
    planned,
    precondition,
    run_rounds,
    steady_metrics,
    total_iops,
)

WORKLOAD_ID = pts.IOPS_ID
#: The tracked figure: RND 4 KiB 0/100 IOPS.
TRACKED = f"{pts.point_name(pts.TRACKED_WRITE_PCT, pts.TRACKED_BS)}.iops"
MATRIX = "pts-iops-matrix.csv"


def job_list(schedule: pts.PtsSchedule) -> list[Point]:
    """The points of one round in the PTS order: each R/W mix (100/0 first), each block size
    from the largest down.

    Raises:
        ValueError: the schedule lacks the tracked point (RND 4 KiB 0/100).
    """
    if pts.TRACKED_WRITE_PCT not in schedule.write_pcts or pts.TRACKED_BS not in \
            schedule.bs_bytes:
        raise ValueError("a PTS IOPS schedule must run RND 4 KiB 0/100 (its tracked figure)")
    return [Point(w, bs, pts.IOPS_QD) for w in schedule.write_pcts
            for bs in sorted(schedule.bs_bytes, reverse=True)]


def window_iops(rounds: Rounds, points: list[Point]) -> dict[str, float]:
    """``<point>.iops`` -> mean read + write IOPS over the measurement window's rounds."""
    window = rounds.window(TRACKED)
    return {f"{p.name}.iops": statistics.fmean(total_iops(r[p.name]) for r in window)
            for p in points}


def window_tables(figures: dict[str, float], schedule: pts.PtsSchedule, rounds: Rounds
                  ) -> dict[str, str]:
    """``pts-window.csv`` (one row per point: ``point, rw_mix, write_pct, bs_bytes, iops,
    window_rounds``) and ``pts-iops-matrix.csv`` (the PTS layout: a row per R/W mix, a
    column per block size, mean IOPS)."""
    v = rounds.verdicts[TRACKED]
    span = f"{v.window_first_round}-{v.window_last_round}"
    long_rows, matrix = [], []
    for w in schedule.write_pcts:
        row: list[object] = [pts.mix_text(w)]
        for bs in schedule.bs_bytes:
            iops = figures[f"{pts.point_name(w, bs)}.iops"]
            long_rows.append([pts.point_name(w, bs), pts.mix_text(w), w, bs, tables.fmt(iops),
                              span])
            row.append(f"{iops:.0f}")
        matrix.append(row)
    return {
        tables.WINDOW: tables.to_csv(("point", "rw_mix", "write_pct", "bs_bytes", "iops",
                                      "window_rounds"), long_rows),
        MATRIX: tables.to_csv(("rw_mix", *(f"{pts.size_text(b)}" for b in schedule.bs_bytes)),
                              matrix),
    }


def run(mr: MethodRun) -> MethodologyResult:
    """Run the PTS IOPS test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio. ConfigError: an active
            range holding no whole MiB of the span.
    """
    schedule = pts.schedule(WORKLOAD_ID, mr.session.options.profile.name)
    points = job_list(schedule)
    active, offset, length = active_area(mr)
    mr.plan_steps(planned(mr, length, len(points), schedule.point_runtime_s,
                          schedule.max_rounds))
    record = mr.purge()
    wipc = precondition(mr, offset, length)
    tracked_name = pts.point_name(pts.TRACKED_WRITE_PCT, pts.TRACKED_BS)
    rounds = run_rounds(mr, points, offset_bytes=offset, length_bytes=length,
                        runtime_s=schedule.point_runtime_s, max_rounds=schedule.max_rounds,
                        tracked={TRACKED: lambda r: total_iops(r[tracked_name])})
    verdict = rounds.verdicts[TRACKED]
    metrics = {**window_iops(rounds, points), **steady_metrics(verdict)}
    state = STATE_STEADY if verdict.reached else STATE_NOT_STEADY
    figures = {k: v for k, v in metrics.items() if k.endswith(".iops")}
    report = {
        tables.SETUP: tables.setup_text(
            title=f"{mr.test_id}: SNIA PTS IOPS test", purge=record.describe(),
            active=active.text, offset_bytes=offset, length_bytes=length,
            precondition=wipc.job.title, schedule=(
                f"{len(points)} points per round (R/W mixes "
                f"{', '.join(pts.mix_text(w) for w in schedule.write_pcts)} x block sizes "
                f"{', '.join(pts.size_text(b) for b in schedule.bs_bytes)}), random, TC1 x "
                f"QD{pts.IOPS_QD}, {schedule.point_runtime_s:g} s each, at most "
                f"{schedule.max_rounds} rounds"),
            rounds=rounds, tracked={TRACKED: "RND 4 KiB 0/100 IOPS per round"}),
        tables.ROUNDS: tables.rounds_csv(rounds),
        tables.STEADY: tables.steady_csv(rounds, {TRACKED: "IOPS"}),
        **window_tables(figures, schedule, rounds),
    }
    return finish(mr, WORKLOAD_ID, record, metrics=metrics,
                  states=dict.fromkeys(metrics, state), tables=report,
                  notes=[f"tracking figure: {TRACKED} (RND 4 KiB 0/100 IOPS) per round; "
                         + verdict.describe(), f"active range {active.text}: {length:,} bytes "
                         f"at offset {offset:,}"])
