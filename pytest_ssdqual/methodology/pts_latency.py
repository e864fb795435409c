"""The SNIA PTS latency test: average, maximum and five-nines response time of random I/O at
QD1 at steady state.

Test flow (SNIA PTS Enterprise 1.1 / Client 2.0 and PTS 2.0.x, "Latency test"; SNIA SSSI's test
page: a round is "a single sweep through the 9 element Block Size x R/W mix matrix"): purge; SEQ
128 KiB preconditioning of 2x the active range; rounds, each a pass over R/W 100/0, 65/35, 0/100
x block sizes 8, 4, 0.5 KiB, ``point_runtime_s`` each (PTS: 1 minute), TC1 x QD1, inside the
active range; steady state is tracked on the RND 4 KiB 0/100 average latency per round (the
write ``lat_mean_us`` of that point), at most ``max_rounds`` rounds. ``smoke``: 4 KiB at 100/0
and 0/100, 0.5 s, 5 rounds.

Reported per point over the measurement window's rounds, both directions of a mix together:
``lat_mean_us`` (the mean of all the window's I/Os: each round's per-direction mean weighted by
its I/O count), ``lat_max_us`` (the largest), ``lat_p99_999_us`` from the window's fio json+
``clat_ns`` bins summed across rounds and directions (``fio.histogram.LatencyHistogram.merge``;
left out with the reason when the window has fewer than ``histogram.min_ios_for("99.999")`` =
1,000,000 I/Os, or a round has no bins) and ``lat_tail_ios`` (the I/Os it rests on). Latency is
fio's completion latency (``clat``), as every latency of this plugin.
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_ssdqual.catalog import pts
from pytest_ssdqual.fio.histogram import LatencyHistogram, too_few_ios
from pytest_ssdqual.methodology import pts_tables as tables
from pytest_ssdqual.methodology.base import (
    MethodologyResult,
    MethodRun,
    Step,
)
from pytest_ssdqual.methodology.pts_common import (
    Point,
    finish,
    matrix_points,
    start,
    steady_metrics,
    steady_state_of,
)

WORKLOAD_ID = pts.LATENCY_ID
TRACKED_POINT = pts.point_name(pts.TRACKED_WRITE_PCT, pts.TRACKED_BS)
#: The tracked figure: RND 4 KiB 0/100 average latency.
TRACKED = f"{TRACKED_POINT}.lat_mean_us"
FIVE_NINES = "99.999"


def job_list(schedule: pts.PtsSchedule) -> list[Point]:
    """The points of one round in the PTS order (``pts_common.matrix_points``, TC1 x QD1).

    Raises:
        ValueError: the schedule lacks the tracked point (RND 4 KiB 0/100).
    """
    return matrix_points(schedule, pts.LATENCY_QD, "latency")


def tracked_latency(step: Step) -> float:
    """The write mean latency of a step (µs; NaN without writes)."""
    d = step.job_run.result.directions.get("write")
    return float("nan") if d is None or d.lat_mean_us is None else d.lat_mean_us


def window_latency(steps: Sequence[Step]) -> tuple[dict[str, float], dict[str, str]]:
    """The latency figures of one point over its window ``steps`` (every direction together):
    ``lat_mean_us``, ``lat_max_us``, ``lat_p99_999_us``, ``lat_tail_ios`` (bare names), and
    bare name -> why a figure is left out (too few I/Os, no json+ bins)."""
    parts = [d for s in steps for d in s.job_run.result.directions.values() if d.total_ios]
    figures: dict[str, float] = {}
    why: dict[str, str] = {}
    weighted = [(d.lat_mean_us, d.total_ios) for d in parts if d.lat_mean_us is not None]
    ios = sum(n for _, n in weighted)
    if ios:
        figures["lat_mean_us"] = sum(m * n for m, n in weighted) / ios
    maxima = [d.lat_max_us for d in parts if d.lat_max_us is not None]
    if maxima:
        figures["lat_max_us"] = max(maxima)
    hists = [d.histogram for d in parts if d.histogram is not None]
    if not parts or len(hists) != len(parts):
        why["lat_p99_999_us"] = "not measured: a round of the window has no fio json+ bins"
        return figures, why
    hist = LatencyHistogram.merge(hists)
    figures["lat_tail_ios"] = float(hist.total)
    short = too_few_ios(FIVE_NINES, hist.total)
    value = hist.percentile_ns(FIVE_NINES)
    if short is not None or value is None:
        why["lat_p99_999_us"] = (short or "not measured").replace(
            "the run had", f"the {len(steps)} window rounds had")
    else:
        figures["lat_p99_999_us"] = value / 1000
    return figures, why


def run(mr: MethodRun) -> MethodologyResult:
    """Run the PTS latency test on ``mr``'s drive.

    Raises:
        SafetyRefusal, DeviceError, FioError: from the purge or fio. ConfigError: an active
            range holding no whole MiB of the span.
    """
    st = start(mr, WORKLOAD_ID, job_list)
    rounds = st.rounds(mr, {TRACKED: lambda r: tracked_latency(r[TRACKED_POINT])})
    verdict = rounds.verdicts[TRACKED]
    window = rounds.window(TRACKED)
    metrics: dict[str, float] = {}
    unreached: dict[str, str] = {}
    rows: list[list[object]] = []
    for p in st.points:
        figures, why = window_latency([r[p.name] for r in window])
        metrics.update({f"{p.name}.{k}": v for k, v in figures.items()})
        unreached.update({f"{p.name}.{k}": v for k, v in why.items()})
        rows.append([p.name, pts.mix_text(p.write_pct), p.write_pct, p.bs_bytes,
                     *(tables.fmt(figures.get(f)) for f in pts.LATENCY_FIGURES),
                     f"{verdict.window_first_round}-{verdict.window_last_round}"])
    metrics.update(steady_metrics(verdict))
    state = steady_state_of(verdict.reached)
    report = {
        tables.SETUP: tables.setup_text(
            title=f"{mr.test_id}: SNIA PTS latency test", purge=st.record.describe(),
            active=st.active.text, offset_bytes=st.offset_bytes, length_bytes=st.length_bytes,
            precondition=st.wipc.job.title, schedule=st.schedule_text(pts.LATENCY_QD),
            rounds=rounds, tracked={TRACKED: "RND 4 KiB 0/100 average latency (µs) per round"}),
        tables.ROUNDS: tables.rounds_csv(rounds),
        tables.STEADY: tables.steady_csv(rounds, {TRACKED: "us"}),
        tables.WINDOW: tables.to_csv(("point", "rw_mix", "write_pct", "bs_bytes",
                                      *pts.LATENCY_FIGURES, "window_rounds"), rows),
    }
    return finish(mr, WORKLOAD_ID, st.record, metrics=metrics,
                  states=dict.fromkeys(metrics, state), tables=report, unreached=unreached,
                  notes=[f"tracking figure: {TRACKED} (RND 4 KiB 0/100 average latency) per "
                         "round; " + verdict.describe(),
                         *(f"{m}: {w}" for m, w in unreached.items()),
                         st.area_note])
