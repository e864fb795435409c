"""The SNIA PTS throughput test: sequential 100 % read and 100 % write at steady state, per
block size.

Test flow (SNIA PTS Enterprise 1.1 / Client 2.0 and PTS 2.0.x, "Throughput test"; SNIA SSSI's
test page: "a Round ... is a single block size at 100% Read and 100% Write, each performed for 1
minute"): for each block size (1024 KiB, then 128 KiB; PTS-C asks for 1024 KiB only): purge; SEQ
128 KiB preconditioning of 2x the active range; rounds of SEQ read then SEQ write of that block
size, ``point_runtime_s`` each, TC1 x QD32, inside the active range; steady state is tracked on
each of the two (read MB/s and write MB/s per round) and the rounds go on until both are steady
or ``max_rounds`` ran. ``smoke`` runs 1024 KiB only, 0.5 s points, 5 rounds.

Reported per point (``seq_read_1m``, ``seq_write_128k``): ``bw_mbps`` averaged over its own
measurement window, its ``steady_state_reached``, ``steady_state_round``, ``data_excursion_pct``
and ``slope_excursion_pct``; ``seq_1m.rounds`` per block size; ``steady_state_reached`` 1 when
every point reached it; the PTS tables (``pts_tables``, ``pts-window.csv``: ``point, bs_bytes,
direction, bw_mbps, window_rounds``).
"""

from __future__ import annotations

import statistics

from pytest_ssdqual.catalog import pts
from pytest_ssdqual.methodology import pts_tables as tables
from pytest_ssdqual.methodology.base import MethodologyResult, MethodRun
from pytest_ssdqual.methodology.pts_common import (
    Point,
    Rounds,
    active_area,
    area_note,
    finish,
    planned,
    purge_and_precondition,
    run_rounds,
    steady_metrics,
    steady_state_of,
    total_bw_mbps,
)
from pytest_ssdqual.methodology.purge import PurgeRecord

WORKLOAD_ID = pts.THROUGHPUT_ID


def job_list(bs_bytes: int) -> list[Point]:
    """One round of the block size: SEQ 100 % read, then SEQ 100 % write (TC1 x QD32)."""
    return [Point(w, bs_bytes, pts.THROUGHPUT_QD, sequential=True) for w in (0, 100)]


def tracked_of(points: list[Point]) -> dict[str, str]:
    """Tracked figure name (``seq_read_1m.bw_mbps``) -> the point it is read from."""
    return {f"{p.name}.bw_mbps": p.name for p in points}


def window_rows(by_bs: dict[int, Rounds]) -> tuple[dict[str, float], dict[str, str], list]:
    """Metrics, their states and the ``pts-window.csv`` rows of every block size's rounds."""
    metrics: dict[str, float] = {}
    states: dict[str, str] = {}
    rows: list[list[object]] = []
    for bs, rounds in by_bs.items():
        metrics[f"seq_{pts.size_text(bs)}.rounds"] = float(len(rounds.steps))
        states[f"seq_{pts.size_text(bs)}.rounds"] = \
            steady_state_of(rounds.reached)
        for figure, point in tracked_of(job_list(bs)).items():
            v = rounds.verdicts[figure]
            mean = statistics.fmean(total_bw_mbps(r[point]) for r in rounds.window(figure))
            these = {figure: mean, **steady_metrics(v, f"{point}.", rounds=False)}
            metrics.update(these)
            states.update(dict.fromkeys(these, steady_state_of(v.reached)))
            rows.append([point, bs, "read" if "_read_" in point else "write",
                         tables.fmt(mean), f"{v.window_first_round}-{v.window_last_round}"])
    return metrics, states, rows


def run(mr: MethodRun) -> MethodologyResult:
    """Run the PTS throughput test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from a purge or fio. ConfigError: an active
            range holding no whole MiB of the span.
    """
    schedule = pts.schedule(WORKLOAD_ID, mr.session.options.profile.name)
    active, offset, length = active_area(mr)
    per_bs = planned(mr, length, 2, schedule.point_runtime_s, schedule.max_rounds)
    mr.plan_steps(per_bs * len(schedule.bs_bytes))
    records: list[PurgeRecord] = []
    by_bs: dict[int, Rounds] = {}
    setups: list[str] = []
    notes: list[str] = []
    for bs in schedule.bs_bytes:
        record, wipc = purge_and_precondition(mr, offset, length)
        records.append(record)
        points = job_list(bs)
        tracked = {f: (lambda r, p=p: total_bw_mbps(r[p])) for f, p in tracked_of(points).items()}
        rounds = by_bs[bs] = run_rounds(
            mr, points, offset_bytes=offset, length_bytes=length,
            runtime_s=schedule.point_runtime_s, max_rounds=schedule.max_rounds, tracked=tracked)
        setups.append(tables.setup_text(
            title=f"{mr.test_id}: SNIA PTS throughput test, {pts.size_text(bs)} block size",
            purge=records[-1].describe(), active=active.text, offset_bytes=offset,
            length_bytes=length, precondition=wipc.job.title,
            schedule=(f"SEQ {bs // 1024} KiB 100 % read then 100 % write per round, TC1 x "
                      f"QD{pts.THROUGHPUT_QD}, {schedule.point_runtime_s:g} s each, at most "
                      f"{schedule.max_rounds} rounds"),
            rounds=rounds, tracked={f: f"{p} MB/s per round" for f, p in
                                    tracked_of(points).items()}))
        notes += [f"{f}: " + v.describe() for f, v in rounds.verdicts.items()]
    metrics, states, rows = window_rows(by_bs)
    reached = all(r.reached for r in by_bs.values())
    metrics["steady_state_reached"] = 1.0 if reached else 0.0
    states["steady_state_reached"] = steady_state_of(reached)
    merged = Rounds(values={k: v for r in by_bs.values() for k, v in r.values.items()},
                    verdicts={k: v for r in by_bs.values() for k, v in r.verdicts.items()})
    report = {
        tables.SETUP: "\n".join(setups),
        tables.ROUNDS: tables.rounds_csv(merged),
        tables.STEADY: tables.steady_csv(merged, dict.fromkeys(merged.verdicts, "MB/s")),
        tables.WINDOW: tables.to_csv(("point", "bs_bytes", "direction", "bw_mbps",
                                      "window_rounds"), rows),
    }
    record = next((r for r in records if not r.fob), records[-1])
    return finish(mr, WORKLOAD_ID, record, metrics=metrics, states=states, tables=report,
                  notes=[*notes, area_note(active, offset, length)])

