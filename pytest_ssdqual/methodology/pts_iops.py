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
from pytest_ssdqual.methodology.base import MethodologyResult, MethodRun
from pytest_ssdqual.methodology.pts_common import (
    Point,
    Rounds,
    finish,
    matrix_points,
    start,
    steady_metrics,
    steady_state_of,
    total_iops,
)

WORKLOAD_ID = pts.IOPS_ID
#: The tracked figure: RND 4 KiB 0/100 IOPS.
TRACKED = f"{pts.point_name(pts.TRACKED_WRITE_PCT, pts.TRACKED_BS)}.iops"
MATRIX = "pts-iops-matrix.csv"


def job_list(schedule: pts.PtsSchedule) -> list[Point]:
    """The points of one round in the PTS order (``pts_common.matrix_points``, TC1 x QD32).

    Raises:
        ValueError: the schedule lacks the tracked point (RND 4 KiB 0/100).
    """
    return matrix_points(schedule, pts.IOPS_QD, "IOPS")


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
    st = start(mr, WORKLOAD_ID, job_list)
    tracked_name = pts.point_name(pts.TRACKED_WRITE_PCT, pts.TRACKED_BS)
    rounds = st.rounds(mr, {TRACKED: lambda r: total_iops(r[tracked_name])})
    verdict = rounds.verdicts[TRACKED]
    metrics = {**window_iops(rounds, st.points), **steady_metrics(verdict)}
    state = steady_state_of(verdict.reached)
    figures = {k: v for k, v in metrics.items() if k.endswith(".iops")}
    report = {
        tables.SETUP: tables.setup_text(
            title=f"{mr.test_id}: SNIA PTS IOPS test", purge=st.record.describe(),
            active=st.active.text, offset_bytes=st.offset_bytes, length_bytes=st.length_bytes,
            precondition=st.wipc.job.title, schedule=st.schedule_text(pts.IOPS_QD),
            rounds=rounds, tracked={TRACKED: "RND 4 KiB 0/100 IOPS per round"}),
        tables.ROUNDS: tables.rounds_csv(rounds),
        tables.STEADY: tables.steady_csv(rounds, {TRACKED: "IOPS"}),
        **window_tables(figures, st.schedule, rounds),
    }
    return finish(mr, WORKLOAD_ID, st.record, metrics=metrics,
                  states=dict.fromkeys(metrics, state), tables=report,
                  notes=[f"tracking figure: {TRACKED} (RND 4 KiB 0/100 IOPS) per round; "
                         + verdict.describe(), st.area_note])
